//! The event log as a commit writes it: each event with the topics it was published on
//! and its ledger rows, and the latest row of every match the batch changed, all in one
//! transaction. The rows are built once ([`Rows`]) for each path: the SQLite commit
//! thread ([`writer`](super::writer)), one statement per row; PostgreSQL, one statement for
//! the whole batch ([`WRITE_BATCH`]); an in-memory SQLite, a sqlx transaction.

use triad_engine::{Account, Event, EventKind, Match, MatchId, Phase, Tournament};

use super::{
    EVENTS_CHANNEL, Store, StoreError, close_after_failed_write, to_i64,
    topics::{inbox_is_derived, match_topic},
};

/// An event on its way to the log and the subscribers: its topics, and its JSON, encoded
/// once for the stored row and every subscriber's frame.
#[derive(Clone, Debug)]
pub struct Encoded<'a> {
    /// The event.
    pub event: &'a Event,
    /// The topics it is published on (`hub::topics`).
    pub topics: Vec<String>,
    /// The event as JSON: the row's `body`, and the `event` of its WebSocket frames.
    pub json: String,
}

impl<'a> Encoded<'a> {
    /// Encodes `event`, published on `topics`.
    ///
    /// # Errors
    /// If the event cannot be encoded as JSON (it always can: its maps have string keys).
    pub fn new(event: &'a Event, topics: Vec<String>) -> Result<Encoded<'a>, StoreError> {
        let json = serde_json::to_string(event)
            .map_err(|e| StoreError::Corrupt(format!("event {}: {e}", event.seq)))?;
        Ok(Encoded {
            event,
            topics,
            json,
        })
    }
}

/// What one commit writes.
#[derive(Debug, Default)]
pub struct Commit<'a> {
    /// The events, in order, with the topics each was published on.
    pub events: Vec<Encoded<'a>>,
    /// The matches the events touch other than by a move, as they now are: a finished
    /// one's row is written (`matches` keeps finished matches only), and a batch that
    /// creates or seats one writes who it concerns (see the core's `batch::rows`).
    pub matches: Vec<Match>,
    /// The tournaments the batch ended (finished or cancelled), as they now are: their
    /// rows of the archive `tournaments` (nothing changes a tournament after its end).
    pub tournaments: Vec<Tournament>,
    /// [`Engine::oldest_match_id`](triad_engine::Engine::oldest_match_id) before the
    /// batch: no event after any of these concerns a smaller match id. Stored with each
    /// event (`events.match_floor`), it bounds an inbox's catch-up to the matches that can
    /// still have events (`INBOX_EVENTS`, in [`topics`](super::topics)).
    pub match_floor: u64,
}

/// One commit's rows, built once from a [`Commit`] and owned, so that they can cross to the
/// SQLite commit thread ([`writer`](super::writer)); PostgreSQL writes the same rows as JSON
/// arrays ([`Rows::json`]).
#[derive(Debug)]
pub(super) struct Rows {
    pub(super) events: Vec<EventRow>,
    /// The finished matches' rows: `matches` is the archive of finished matches (a live one
    /// is the engine's, which holds every live match; see [`Rows::of`]).
    pub(super) matches: Vec<MatchRow>,
    /// `(address, match id)`: everyone a match concerns, when this batch may have changed
    /// who that is (`match_players`, from which the inboxes are derived).
    pub(super) players: Vec<(String, i64)>,
    /// The ended tournaments' rows (the archive `tournaments`).
    pub(super) tournaments: Vec<TournamentRow>,
}

#[derive(Debug)]
pub(super) struct EventRow {
    pub(super) seq: i64,
    pub(super) at_ms: i64,
    pub(super) match_id: Option<i64>,
    pub(super) kind: &'static str,
    pub(super) body: String,
    pub(super) match_floor: i64,
    pub(super) topics: Vec<String>,
    pub(super) ledger: Vec<LedgerRow>,
}

#[derive(Debug)]
pub(super) struct LedgerRow {
    pub(super) address: String,
    pub(super) amount: String,
    pub(super) reason: String,
    pub(super) match_id: Option<i64>,
}

#[derive(Debug)]
pub(super) struct TournamentRow {
    pub(super) id: i64,
    pub(super) phase: &'static str,
    pub(super) ended_ms: i64,
    pub(super) body: String,
}

#[derive(Debug)]
pub(super) struct MatchRow {
    pub(super) id: i64,
    pub(super) game: &'static str,
    pub(super) stake: String,
    pub(super) origin: &'static str,
    pub(super) phase: &'static str,
    pub(super) reason: Option<&'static str>,
    pub(super) created_ms: i64,
    pub(super) updated_ms: i64,
    pub(super) body: String,
}

impl Rows {
    pub(super) fn of(commit: &Commit<'_>) -> Result<Rows, StoreError> {
        let corrupt = |e: serde_json::Error| StoreError::Corrupt(e.to_string());
        let mut events = Vec::with_capacity(commit.events.len());
        for Encoded {
            event,
            topics,
            json,
        } in &commit.events
        {
            let mut ledger = Vec::new();
            if let EventKind::Transferred { match_id, transfer } = &event.kind {
                for (account, sign) in [(transfer.from, "-"), (transfer.to, "")] {
                    if let Account::Player(address) = account {
                        ledger.push(LedgerRow {
                            address: address.to_string(),
                            amount: format!("{sign}{}", transfer.amount),
                            reason: serde_plain(&transfer.reason),
                            match_id: match_id.map(|m| to_i64(m.0)),
                        });
                    }
                }
            }
            // A match's own event is in the inbox of everyone the match concerns; those
            // rows are not stored but derived from `match_players` (`INBOX_EVENTS`).
            // `hub::topics` gave it exactly those inboxes (`Match::concerned`, from the same
            // engine as `commit.matches`), so all its inbox topics go. Only for a match the
            // engine no longer holds (then not in `commit.matches`) were they taken from
            // the event itself, and are stored.
            let derived = inbox_is_derived(&event.kind)
                && event
                    .match_id()
                    .is_some_and(|id| commit.matches.iter().any(|m| m.id == id));
            // Its match's topic is its `match_id` (`MATCH_EVENTS`): not stored either.
            let own_match = event.match_id().map(|id| match_topic(id.0));
            let topics = topics
                .iter()
                .filter(|t| !(derived && t.starts_with("inbox:")))
                .filter(|t| own_match.as_ref() != Some(*t))
                .cloned()
                .collect();
            events.push(EventRow {
                seq: to_i64(event.seq),
                at_ms: to_i64(event.at_ms),
                match_id: event.match_id().map(|m| to_i64(m.0)),
                kind: kind_name(&event.kind),
                body: json.clone(),
                match_floor: to_i64(commit.match_floor),
                topics,
                ledger,
            });
        }
        // Who a match concerns changes only with these events (the engine sets a match's
        // host, seats and challenge nowhere else), so the other batches (a move, the end, a
        // payout) skip `match_players`: two statements per touched match, per batch.
        let seated: Vec<MatchId> = commit
            .events
            .iter()
            .map(|e| e.event)
            .filter(|e| {
                matches!(
                    e.kind,
                    EventKind::ChallengeIssued { .. }
                        | EventKind::Queued { .. }
                        | EventKind::GameStarted { .. }
                )
            })
            .filter_map(Event::match_id)
            .collect();
        let mut matches = Vec::new();
        let mut players = Vec::new();
        for m in &commit.matches {
            if seated.contains(&m.id) {
                let id = to_i64(m.id.0);
                players.extend(m.concerned().iter().map(|a| (a.to_string(), id)));
            }
            // A live match's row would be rewritten at each change of phase (created,
            // accepted, first move) only to be read as stale: every read asks the engine
            // first, which holds every live match (the listings take live ones from it,
            // `ApiState::list_matches`). So a match's row is written when it finishes (its
            // result, and any later change: a rematch offered), the one state that outlives
            // the engine's memory: a third of PostgreSQL's work under the cluster lock.
            if m.phase != Phase::Finished {
                continue;
            }
            matches.push(MatchRow {
                id: to_i64(m.id.0),
                game: m.game().name(),
                stake: m.stake.to_string(),
                origin: origin_name(m),
                phase: m.phase.name(),
                reason: m.result.map(|r| r.reason.name()),
                created_ms: to_i64(m.created_ms),
                updated_ms: to_i64(m.result.map_or(m.last_activity_ms, |r| r.ended_ms)),
                body: serde_json::to_string(m).map_err(corrupt)?,
            });
        }
        let tournaments = commit
            .tournaments
            .iter()
            .map(|t| {
                Ok(TournamentRow {
                    id: to_i64(t.id.0),
                    phase: t.phase.name(),
                    ended_ms: to_i64(t.ended_ms.unwrap_or(t.last_change_ms)),
                    body: serde_json::to_string(t).map_err(corrupt)?,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(Rows {
            events,
            matches,
            players,
            tournaments,
        })
    }
}

// One SQL text per row kind, for both backends: SQLite reads `$1` as a parameter bound by
// position, as PostgreSQL does.
pub(super) const INSERT_EVENT: &str = "INSERT INTO events (seq, at_ms, match_id, kind, body, match_floor) \
     VALUES ($1, $2, $3, $4, $5, $6)";
pub(super) const INSERT_TOPIC: &str = "INSERT INTO event_topics (topic, seq) VALUES ($1, $2)";
pub(super) const INSERT_LEDGER: &str = "INSERT INTO ledger_entries (address, seq, amount, reason, match_id) \
     VALUES ($1, $2, $3, $4, $5)";
pub(super) const UPSERT_MATCH: &str = "INSERT INTO matches (id, game, stake, origin, phase, reason, created_ms, updated_ms, body) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
     ON CONFLICT (id) DO UPDATE SET phase = excluded.phase, reason = excluded.reason, \
     updated_ms = excluded.updated_ms, body = excluded.body";
pub(super) const INSERT_PLAYER: &str =
    "INSERT INTO match_players (address, match_id) VALUES ($1, $2) ON CONFLICT DO NOTHING";
pub(super) const UPSERT_TOURNAMENT: &str = "INSERT INTO tournaments (id, phase, ended_ms, body) \
     VALUES ($1, $2, $3, $4) \
     ON CONFLICT (id) DO UPDATE SET phase = excluded.phase, ended_ms = excluded.ended_ms, \
     body = excluded.body";

/// A batch's rows on PostgreSQL, in one statement: each table's rows arrive as one JSON
/// array (`$1` to `$6`, see [`Rows::json`]), and `pg_notify($7, …)` announces the batch,
/// once for each payload of the JSON array `$8`, in its order (delivered at commit, in the
/// order sent; [`announce`](super::announce)). Against one statement per row (a move's
/// batch of 50 commands made ~150 round trips under the cluster lock), this is one round
/// trip whatever the batch's size. The `Any` driver binds no arrays; a JSON text does as
/// well.
const WRITE_BATCH: &str = "WITH \
     e AS (INSERT INTO events (seq, at_ms, match_id, kind, body, match_floor) \
       SELECT seq, at_ms, match_id, kind, body, match_floor FROM json_to_recordset($1::json) \
       AS r(seq BIGINT, at_ms BIGINT, match_id BIGINT, kind TEXT, body TEXT, match_floor BIGINT)), \
     t AS (INSERT INTO event_topics (topic, seq) \
       SELECT topic, seq FROM json_to_recordset($2::json) AS r(topic TEXT, seq BIGINT)), \
     l AS (INSERT INTO ledger_entries (address, seq, amount, reason, match_id) \
       SELECT address, seq, amount, reason, match_id FROM json_to_recordset($3::json) \
       AS r(address TEXT, seq BIGINT, amount TEXT, reason TEXT, match_id BIGINT)), \
     m AS (INSERT INTO matches (id, game, stake, origin, phase, reason, created_ms, updated_ms, body) \
       SELECT id, game, stake, origin, phase, reason, created_ms, updated_ms, body \
       FROM json_to_recordset($4::json) AS r(id BIGINT, game TEXT, stake TEXT, origin TEXT, \
         phase TEXT, reason TEXT, created_ms BIGINT, updated_ms BIGINT, body TEXT) \
       ON CONFLICT (id) DO UPDATE SET phase = excluded.phase, reason = excluded.reason, \
       updated_ms = excluded.updated_ms, body = excluded.body), \
     p AS (INSERT INTO match_players (address, match_id) \
       SELECT address, match_id FROM json_to_recordset($5::json) AS r(address TEXT, match_id BIGINT) \
       ON CONFLICT DO NOTHING), \
     n AS (INSERT INTO tournaments (id, phase, ended_ms, body) \
       SELECT id, phase, ended_ms, body FROM json_to_recordset($6::json) \
       AS r(id BIGINT, phase TEXT, ended_ms BIGINT, body TEXT) \
       ON CONFLICT (id) DO UPDATE SET phase = excluded.phase, ended_ms = excluded.ended_ms, \
       body = excluded.body) \
     SELECT pg_notify($7, payload) FROM json_array_elements_text($8::json) AS a(payload)";

/// The JSON arrays [`WRITE_BATCH`] reads: events, topics, ledger entries, matches, players,
/// tournaments.
struct JsonRows {
    events: String,
    topics: String,
    ledger: String,
    matches: String,
    players: String,
    tournaments: String,
}

impl Rows {
    /// The rows as [`WRITE_BATCH`]'s six JSON arrays, each object's keys its columns.
    fn json(&self) -> Result<JsonRows, StoreError> {
        #[derive(serde::Serialize)]
        struct Event<'a> {
            seq: i64,
            at_ms: i64,
            match_id: Option<i64>,
            kind: &'a str,
            body: &'a str,
            match_floor: i64,
        }
        #[derive(serde::Serialize)]
        struct Topic<'a> {
            topic: &'a str,
            seq: i64,
        }
        #[derive(serde::Serialize)]
        struct Ledger<'a> {
            address: &'a str,
            seq: i64,
            amount: &'a str,
            reason: &'a str,
            match_id: Option<i64>,
        }
        #[derive(serde::Serialize)]
        struct Match<'a> {
            id: i64,
            game: &'a str,
            stake: &'a str,
            origin: &'a str,
            phase: &'a str,
            reason: Option<&'a str>,
            created_ms: i64,
            updated_ms: i64,
            body: &'a str,
        }
        #[derive(serde::Serialize)]
        struct Player<'a> {
            address: &'a str,
            match_id: i64,
        }
        #[derive(serde::Serialize)]
        struct Tournament<'a> {
            id: i64,
            phase: &'a str,
            ended_ms: i64,
            body: &'a str,
        }
        let events = self.events.iter().map(|e| Event {
            seq: e.seq,
            at_ms: e.at_ms,
            match_id: e.match_id,
            kind: e.kind,
            body: &e.body,
            match_floor: e.match_floor,
        });
        let topics = self.events.iter().flat_map(|e| {
            e.topics.iter().map(|t| Topic {
                topic: t,
                seq: e.seq,
            })
        });
        let ledger = self.events.iter().flat_map(|e| {
            e.ledger.iter().map(|l| Ledger {
                address: &l.address,
                seq: e.seq,
                amount: &l.amount,
                reason: &l.reason,
                match_id: l.match_id,
            })
        });
        let matches = self.matches.iter().map(|m| Match {
            id: m.id,
            game: m.game,
            stake: &m.stake,
            origin: m.origin,
            phase: m.phase,
            reason: m.reason,
            created_ms: m.created_ms,
            updated_ms: m.updated_ms,
            body: &m.body,
        });
        let players = self.players.iter().map(|(address, match_id)| Player {
            address,
            match_id: *match_id,
        });
        let tournaments = self.tournaments.iter().map(|t| Tournament {
            id: t.id,
            phase: t.phase,
            ended_ms: t.ended_ms,
            body: &t.body,
        });
        Ok(JsonRows {
            events: json_array(events)?,
            topics: json_array(topics)?,
            ledger: json_array(ledger)?,
            matches: json_array(matches)?,
            players: json_array(players)?,
            tournaments: json_array(tournaments)?,
        })
    }
}

/// The items as one JSON array.
fn json_array<T: serde::Serialize>(items: impl Iterator<Item = T>) -> Result<String, StoreError> {
    let items: Vec<T> = items.collect();
    serde_json::to_string(&items).map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl Store {
    /// Commits one batch in one transaction.
    ///
    /// # Errors
    /// On a database failure; then nothing of the batch is stored.
    pub async fn commit(&self, commit: &Commit<'_>) -> Result<(), StoreError> {
        let rows = Rows::of(commit)?;
        if let Some(writer) = &self.writer {
            return writer.write(rows).await;
        }
        let mut conn = self.pool.acquire().await?;
        let result = async {
            use sqlx::Connection as _;
            let mut tx = (*conn).begin().await?;
            Self::write(&mut tx, &rows).await?;
            tx.commit().await?;
            Ok(())
        }
        .await;
        if result.is_err() {
            close_after_failed_write(&mut conn);
        }
        result
    }

    /// Writes one batch on `conn` (PostgreSQL, whose session holds the cluster lock) as one
    /// statement ([`WRITE_BATCH`]) in its own transaction, and announces it to the other
    /// nodes (`announcements`, in order: [`announce`](super::announce)); they are
    /// delivered at its commit, which the answer follows.
    pub(super) async fn write_batch(
        conn: &mut sqlx::AnyConnection,
        rows: &Rows,
        announcements: &[String],
    ) -> Result<(), StoreError> {
        let rows = rows.json()?;
        let announcements = serde_json::to_string(announcements)
            .map_err(|e| StoreError::Corrupt(format!("a batch's announcements: {e}")))?;
        sqlx::query(WRITE_BATCH)
            .bind(rows.events)
            .bind(rows.topics)
            .bind(rows.ledger)
            .bind(rows.matches)
            .bind(rows.players)
            .bind(rows.tournaments)
            .bind(EVENTS_CHANNEL)
            .bind(announcements)
            .execute(conn)
            .await?;
        Ok(())
    }

    async fn write(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        rows: &Rows,
    ) -> Result<(), StoreError> {
        for e in &rows.events {
            sqlx::query(INSERT_EVENT)
                .bind(e.seq)
                .bind(e.at_ms)
                .bind(e.match_id)
                .bind(e.kind)
                .bind(e.body.as_str())
                .bind(e.match_floor)
                .execute(&mut **tx)
                .await?;
            for topic in &e.topics {
                sqlx::query(INSERT_TOPIC)
                    .bind(topic.as_str())
                    .bind(e.seq)
                    .execute(&mut **tx)
                    .await?;
            }
            for l in &e.ledger {
                sqlx::query(INSERT_LEDGER)
                    .bind(l.address.as_str())
                    .bind(e.seq)
                    .bind(l.amount.as_str())
                    .bind(l.reason.as_str())
                    .bind(l.match_id)
                    .execute(&mut **tx)
                    .await?;
            }
        }
        for m in &rows.matches {
            sqlx::query(UPSERT_MATCH)
                .bind(m.id)
                .bind(m.game)
                .bind(m.stake.as_str())
                .bind(m.origin)
                .bind(m.phase)
                .bind(m.reason)
                .bind(m.created_ms)
                .bind(m.updated_ms)
                .bind(m.body.as_str())
                .execute(&mut **tx)
                .await?;
        }
        for (address, match_id) in &rows.players {
            sqlx::query(INSERT_PLAYER)
                .bind(address.as_str())
                .bind(*match_id)
                .execute(&mut **tx)
                .await?;
        }
        for t in &rows.tournaments {
            sqlx::query(UPSERT_TOURNAMENT)
                .bind(t.id)
                .bind(t.phase)
                .bind(t.ended_ms)
                .bind(t.body.as_str())
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }
}

fn serde_plain<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn origin_name(m: &Match) -> &'static str {
    match m.origin {
        triad_engine::Origin::Queue => "queue",
        triad_engine::Origin::Challenge => "challenge",
        triad_engine::Origin::Computer => "computer",
        triad_engine::Origin::Rematch { .. } => "rematch",
        triad_engine::Origin::Tournament { .. } => "tournament",
    }
}

/// The stable snake_case name of an event kind.
#[must_use]
pub fn kind_name(kind: &EventKind) -> &'static str {
    kind.name()
}
