//! A topic's stored events after a cursor: the catch-up of a WebSocket subscription. An
//! inbox's rows are partly stored (queueing, money) and partly derived from
//! `match_players` (a match's own events), so the same set is read back as was published.

use rusqlite::types::Value;
use sqlx::Row;
use triad_engine::EventKind;

use super::{Store, StoreError, to_i64, to_u64};

/// A stored realtime event: its sequence number and JSON body.
#[derive(Clone, Debug)]
pub struct StoredEvent {
    /// The event's sequence number.
    pub seq: u64,
    /// The event as JSON.
    pub body: String,
}

/// A topic's events after `$2`, oldest first, at most `$3`: a subscription's catch-up.
const TOPIC_EVENTS: &str = "SELECT e.seq, e.body FROM event_topics t JOIN events e ON e.seq = t.seq \
     WHERE t.topic = $1 AND t.seq > $2 ORDER BY t.seq LIMIT CAST($3 AS BIGINT)";
/// As [`TOPIC_EVENTS`] for the topic of the match `$1` ([`match_topic`]): every event of
/// the match and no other, which is what `events.match_id` says, so no topic row is stored
/// for it (schema 8) and the index `events_by_match` serves the read.
const MATCH_EVENTS: &str = "SELECT seq, body FROM events WHERE match_id = $1 AND seq > $2 \
     ORDER BY seq LIMIT CAST($3 AS BIGINT)";
/// The names ([`kind_name`](super::kind_name)) of the kinds [`inbox_is_derived`] is true of, as an SQL list.
macro_rules! derived_kinds {
    () => {
        "('challenge_issued', 'challenge_accepted', 'challenge_declined', \
         'challenge_expired', 'match_aborted', 'rematch_offered', 'game_started', \
         'game_ended')"
    };
}

/// As [`TOPIC_EVENTS`] for the inbox `$1` of the address `$4`, after `$2` and up to `$3`,
/// at most `$5` (each `$n` first appears in order: SQLite numbers them by appearance;
/// `$3` is a window, [`InboxWindows`]): its stored rows (queueing, money) and, derived,
/// the events of every match it is a player of whose kind [`inbox_is_derived`]
/// (`derived_kinds!`), among the matches that could still have events after `$2` (from the
/// `match_floor` of the event at `$2` or before it; 0, every match, for events stored before
/// schema 5). Those are not stored per address: an address's inbox rows would land on its
/// own page of `event_topics`, a random page per player per commit, while `match_players`
/// is written once per match. `UNION` drops the duplicates of databases that stored both.
const INBOX_EVENTS: &str = concat!(
    "SELECT e.seq, e.body FROM ( \
     SELECT t.seq FROM event_topics t WHERE t.topic = $1 AND t.seq > $2 AND t.seq <= $3 \
     UNION \
     SELECT k.seq FROM match_players p \
     JOIN events k ON k.match_id = p.match_id AND k.seq > $2 AND k.seq <= $3 AND k.kind IN ",
    derived_kinds!(),
    " WHERE p.address = $4 AND p.match_id >= COALESCE((SELECT f.match_floor FROM events f \
     WHERE f.seq <= $2 ORDER BY f.seq DESC LIMIT 1), 0) \
     ) s JOIN events e ON e.seq = s.seq ORDER BY s.seq LIMIT CAST($5 AS BIGINT)"
);
/// The topic of everything about the match `id` (`hub::topics`): derived from the log's
/// `match_id`, never stored ([`MATCH_EVENTS`]).
#[must_use]
pub fn match_topic(id: u64) -> String {
    format!("match:{id}")
}

/// The last event's seq (0 for an empty log).
const HEAD_SEQ: &str = "SELECT COALESCE(MAX(seq), 0) FROM events";

/// The windows of the log an inbox's catch-up reads, after its cursor: the first spans 16
/// events per row asked for (an inbox holds a small share of all events), each next one
/// twice the last, up to the log's head; the catch-up stops at the first window that fills
/// the page, or at the head.
#[derive(Debug)]
struct InboxWindows {
    since: u64,
    width: u64,
    head: u64,
    limit: usize,
    upto: u64,
}

impl InboxWindows {
    fn new(since: u64, limit: u32, head: u64) -> InboxWindows {
        InboxWindows {
            since,
            width: u64::from(limit.max(1)) * 16,
            head,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            upto: since,
        }
    }

    /// The next window's last seq.
    fn upto(&mut self) -> u64 {
        self.upto = self.since.saturating_add(self.width).min(self.head);
        self.width = self.width.saturating_mul(2);
        self.upto
    }

    /// Whether the window just read, which gave `rows`, ends the catch-up.
    fn done(&self, rows: usize) -> bool {
        rows >= self.limit || self.upto >= self.head
    }
}

fn stored_event(row: &rusqlite::Row<'_>) -> Result<StoredEvent, rusqlite::Error> {
    Ok(StoredEvent {
        seq: to_u64(row.get(0)?),
        body: row.get(1)?,
    })
}

fn stored_event_any(row: &sqlx::any::AnyRow) -> Result<StoredEvent, StoreError> {
    Ok(StoredEvent {
        seq: to_u64(row.try_get(0)?),
        body: row.try_get(1)?,
    })
}

/// [`Store::events_after`]'s one statement: the events after `$1` (at most `$2`), each with
/// its match (whose topic, [`match_topic`], is derived), its stored topics and, for the
/// kinds above, the inboxes derived from its match's players, each list joined by newlines
/// (no topic holds one). Each list is a subquery on its own index (`event_topics_by_seq`,
/// `match_players_by_match`) for each event of the page, so a read costs the page, not the
/// tables: joined instead, PostgreSQL hashed the whole of `match_players` at every read.
pub(super) const EVENTS_AFTER: &str = concat!(
    "SELECT e.seq, e.body, e.match_id, \
       (SELECT string_agg(t.topic, '\n') FROM event_topics t WHERE t.seq = e.seq), \
       CASE WHEN e.kind IN ",
    derived_kinds!(),
    " THEN (SELECT string_agg('inbox:' || p.address, '\n') FROM match_players p \
         WHERE p.match_id = e.match_id) END \
     FROM events e WHERE e.seq > $1 ORDER BY e.seq LIMIT CAST($2 AS BIGINT)"
);

/// Whether an event of this kind reaches the inboxes of everyone its match concerns
/// ([`Match::concerned`](triad_engine::Match::concerned), the `match_players` rows) and only them, so that the store derives
/// those inbox rows instead of writing them. `hub::topics` publishes such an event to
/// exactly that set. The kinds are listed again, by name, in `derived_kinds!` (the api test
/// `every_inbox_read_back_from_the_store_is_what_its_subscribers_were_sent` holds them to
/// it).
#[must_use]
pub fn inbox_is_derived(kind: &EventKind) -> bool {
    match kind {
        EventKind::ChallengeIssued { .. }
        | EventKind::ChallengeAccepted { .. }
        | EventKind::ChallengeDeclined { .. }
        | EventKind::ChallengeExpired { .. }
        | EventKind::MatchAborted { .. }
        | EventKind::RematchOffered { .. }
        | EventKind::GameStarted { .. }
        | EventKind::GameEnded { .. } => true,
        EventKind::Queued { .. }
        | EventKind::Moved { .. }
        | EventKind::Transferred { .. }
        | EventKind::PuzzleAttempted { .. }
        | EventKind::TournamentCreated { .. }
        | EventKind::TournamentJoined { .. }
        | EventKind::TournamentLeft { .. }
        | EventKind::TournamentPaused { .. }
        | EventKind::TournamentStarted { .. }
        | EventKind::TournamentRound { .. }
        | EventKind::TournamentFinished { .. }
        | EventKind::TournamentCancelled { .. }
        | EventKind::ClocksResumed { .. }
        | EventKind::Forgotten { .. } => false,
    }
}

impl Store {
    /// The last event's seq (0 for an empty log).
    ///
    /// # Errors
    /// On a database failure.
    pub async fn head_seq(&self) -> Result<u64, StoreError> {
        let head: i64 = sqlx::query_scalar(HEAD_SEQ).fetch_one(&self.pool).await?;
        Ok(to_u64(head))
    }

    /// Events published on `topic` after `since`, oldest first, at most `limit`.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn topic_events(
        &self,
        topic: &str,
        since: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        // An inbox's own rows and those derived from its matches (see [`INBOX_EVENTS`]).
        if let Some(address) = topic.strip_prefix("inbox:") {
            return self.inbox_events(topic, address, since, limit).await;
        }
        // A match's events by its id, every other topic's by its rows.
        let by_match = topic
            .strip_prefix("match:")
            .and_then(|id| id.parse::<u64>().ok());
        let sql = if by_match.is_some() {
            MATCH_EVENTS
        } else {
            TOPIC_EVENTS
        };
        if let Some(reader) = &self.reader {
            let key = match by_match {
                Some(id) => Value::Integer(to_i64(id)),
                None => Value::Text(topic.to_owned()),
            };
            return reader
                .call(move |conn| {
                    let mut statement = conn.prepare_cached(sql)?;
                    let rows = statement.query_map(
                        rusqlite::params![key, to_i64(since), i64::from(limit)],
                        stored_event,
                    )?;
                    Ok(rows.collect::<Result<Vec<_>, _>>()?)
                })
                .await;
        }
        let query = sqlx::query(sql);
        let query = match by_match {
            Some(id) => query.bind(to_i64(id)),
            None => query.bind(topic),
        };
        let rows = query
            .bind(to_i64(since))
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(stored_event_any).collect()
    }

    /// [`Store::topic_events`] for the inbox `topic` of `address`, read in windows of the
    /// log after `since` ([`InboxWindows`]): the derived half of [`INBOX_EVENTS`] reads
    /// every match event of the window before it sorts, so an unbounded query would read
    /// the whole rest of a long history for each page.
    async fn inbox_events(
        &self,
        topic: &str,
        address: &str,
        since: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        if let Some(reader) = &self.reader {
            let (topic, address) = (topic.to_owned(), address.to_owned());
            return reader
                .call(move |conn| {
                    let head: i64 = conn
                        .prepare_cached(HEAD_SEQ)?
                        .query_row([], |row| row.get(0))?;
                    let mut statement = conn.prepare_cached(INBOX_EVENTS)?;
                    let mut windows = InboxWindows::new(since, limit, to_u64(head));
                    loop {
                        let upto = windows.upto();
                        let rows = statement
                            .query_map(
                                rusqlite::params![
                                    topic,
                                    to_i64(since),
                                    to_i64(upto),
                                    address,
                                    i64::from(limit)
                                ],
                                stored_event,
                            )?
                            .collect::<Result<Vec<_>, _>>()?;
                        if windows.done(rows.len()) {
                            return Ok(rows);
                        }
                    }
                })
                .await;
        }
        let mut windows = InboxWindows::new(since, limit, self.head_seq().await?);
        loop {
            let rows = sqlx::query(INBOX_EVENTS)
                .bind(topic)
                .bind(to_i64(since))
                .bind(to_i64(windows.upto()))
                .bind(address)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?;
            if windows.done(rows.len()) {
                return rows.iter().map(stored_event_any).collect();
            }
        }
    }
}
