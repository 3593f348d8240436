//! Durable storage: the event log and its projections, on SQLite or PostgreSQL through one
//! SQL text (sqlx's `Any` driver with `$1` placeholders).
//!
//! The event log is the source of truth. A batch of commands is committed as one
//! transaction (group commit): its events, the topics they were published on, the latest
//! state of every match they touched, and each player's ledger entries. On start the engine
//! is rebuilt by replaying the log.
//!
//! A bound `LIMIT` is always written `LIMIT CAST($n AS BIGINT)`, never `LIMIT $n`: SQLite
//! (3.51, bundled) reads a bare bound limit while it prepares the statement
//! (`sqlite3ExprIsInteger`), so every new binding expires the cached statement and the next
//! step compiles it again. Behind the cast the limit is an expression evaluated when the
//! statement runs, and the prepared statement stays valid; PostgreSQL takes either form.

use std::{borrow::Cow, collections::HashSet, str::FromStr, time::Instant};

use sqlx::{
    AnyPool, Row,
    any::{AnyConnectOptions, AnyPoolOptions},
    migrate::{Migrate, MigrateError, Migration, MigrationType, Migrator},
    pool::PoolConnection,
};
use triad_engine::{Account, Address, Engine, Event, EventKind, Match, MatchId};

mod reader;
pub mod relay;
mod writer;

/// Which database engine.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An SQLite file in WAL mode.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database said no.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// SQLite said no to the commit thread.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The schema could not be brought up to date.
    #[error("{0}")]
    Schema(String),
    /// A stored row could not be read back.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// The store was closed (the server is shutting down), or its commit thread could not
    /// be started.
    #[error("the database is closed: {0}")]
    Closed(&'static str),
}

/// The schema versions this binary knows: `(version, description, SQLite, PostgreSQL)`.
const MIGRATIONS: &[(i64, &str, &str, &str)] = &[
    (
        1,
        "events, projections, sessions",
        include_str!("../migrations/sqlite/0001_init.sql"),
        include_str!("../migrations/postgres/0001_init.sql"),
    ),
    (
        2,
        "the agents' relay: messages and games",
        include_str!("../migrations/sqlite/0002_agents.sql"),
        include_str!("../migrations/postgres/0002_agents.sql"),
    ),
    (
        3,
        "pending login challenges, shared by the nodes",
        include_str!("../migrations/sqlite/0003_login_challenges.sql"),
        include_str!("../migrations/postgres/0003_login_challenges.sql"),
    ),
    (
        4,
        "the log's tables keyed by rowid (SQLite); topics by seq (PostgreSQL)",
        include_str!("../migrations/sqlite/0004_rowid_keys.sql"),
        include_str!("../migrations/postgres/0004_rowid_keys.sql"),
    ),
    (
        5,
        "each event's oldest match that could still have events",
        include_str!("../migrations/sqlite/0005_match_floor.sql"),
        include_str!("../migrations/postgres/0005_match_floor.sql"),
    ),
];

impl StoreError {
    /// Whether the database refused for want of disk space (SQLite's `SQLITE_FULL`,
    /// PostgreSQL's `disk_full`, or `ENOSPC` from the operating system): the client should
    /// try again later, not at once.
    #[must_use]
    pub fn is_full(&self) -> bool {
        /// `ENOSPC` on Linux and the BSDs.
        const ENOSPC: i32 = 28;
        match self {
            StoreError::Database(sqlx::Error::Database(e)) => {
                let code = e.code();
                if e.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                    // SQLite reports extended codes; the primary code is the low byte.
                    code.and_then(|c| c.parse::<i32>().ok())
                        .is_some_and(|c| c & 0xff == 13)
                } else {
                    code.as_deref() == Some("53100")
                }
            }
            StoreError::Database(sqlx::Error::Io(e)) => e.raw_os_error() == Some(ENOSPC),
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => {
                e.code == rusqlite::ErrorCode::DiskFull
            }
            _ => false,
        }
    }
}

/// The latest schema version this binary writes.
pub const SCHEMA_VERSION: i64 = 5;

/// A stored realtime event: its sequence number and JSON body.
#[derive(Clone, Debug)]
pub struct StoredEvent {
    /// The event's sequence number.
    pub seq: u64,
    /// The event as JSON.
    pub body: String,
}

/// One row of a player's ledger.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct LedgerEntry {
    /// The event that moved the money.
    pub seq: u64,
    /// Signed amount in minor units, as a decimal string: credits positive, debits negative.
    pub amount: String,
    /// Why: deposit, withdrawal, stake, payout, refund, collect.
    pub reason: String,
    /// The match it concerns, if any.
    pub match_id: Option<u64>,
    /// When: the time of the event that moved the money, in ms since the Unix epoch.
    pub at_ms: u64,
}

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
    /// The matches whose row the events change, as they now are: those with an event
    /// other than a move after the first (such a move leaves the row as it was; see
    /// `core::run`).
    pub matches: Vec<Match>,
    /// [`Engine::oldest_match_id`](triad_engine::Engine::oldest_match_id) before the
    /// batch: no event after any of these concerns a smaller match id. Stored with each
    /// event (`events.match_floor`), it bounds an inbox's catch-up to the matches that can
    /// still have events ([`INBOX_EVENTS`]).
    pub match_floor: u64,
}

/// One commit's rows, built once from a [`Commit`] and owned, so that they can cross to the
/// SQLite commit thread ([`writer`]); PostgreSQL writes the same rows through sqlx.
#[derive(Debug)]
struct Rows {
    events: Vec<EventRow>,
    matches: Vec<MatchRow>,
}

#[derive(Debug)]
struct EventRow {
    seq: i64,
    at_ms: i64,
    match_id: Option<i64>,
    kind: &'static str,
    body: String,
    match_floor: i64,
    topics: Vec<String>,
    ledger: Vec<LedgerRow>,
}

#[derive(Debug)]
struct LedgerRow {
    address: String,
    amount: String,
    reason: String,
    match_id: Option<i64>,
}

#[derive(Debug)]
struct MatchRow {
    id: i64,
    game: &'static str,
    stake: String,
    origin: &'static str,
    phase: &'static str,
    reason: Option<&'static str>,
    created_ms: i64,
    updated_ms: i64,
    body: String,
    /// Everyone the match concerns (its players and a challenge's opponent), when this
    /// batch may have changed who that is; else empty, as the rows are already there.
    players: Vec<String>,
}

impl Rows {
    fn of(commit: &Commit<'_>) -> Result<Rows, StoreError> {
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
            // rows are not stored but derived from `match_players` ([`INBOX_EVENTS`]).
            // `hub::topics` gave it exactly those inboxes (`Match::concerned`, from the same
            // engine as `commit.matches`), so all its inbox topics go. Only for a match the
            // engine no longer holds (then not in `commit.matches`) were they taken from
            // the event itself, and are stored.
            let derived = inbox_is_derived(&event.kind)
                && event
                    .match_id()
                    .is_some_and(|id| commit.matches.iter().any(|m| m.id == id));
            let topics = topics
                .iter()
                .filter(|t| !(derived && t.starts_with("inbox:")))
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
        let mut matches = Vec::with_capacity(commit.matches.len());
        for m in &commit.matches {
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
                players: if seated.contains(&m.id) {
                    m.concerned().iter().map(ToString::to_string).collect()
                } else {
                    Vec::new()
                },
            });
        }
        Ok(Rows { events, matches })
    }
}

// One SQL text per row kind, for both backends: SQLite reads `$1` as a parameter bound by
// position, as PostgreSQL does.
const INSERT_EVENT: &str = "INSERT INTO events (seq, at_ms, match_id, kind, body, match_floor) \
     VALUES ($1, $2, $3, $4, $5, $6)";
const INSERT_TOPIC: &str = "INSERT INTO event_topics (topic, seq) VALUES ($1, $2)";
/// At most `$2` expired sessions, then used login challenges, expired by `$1`.
const PURGE_SESSIONS: &str = "DELETE FROM sessions WHERE token_hash IN (SELECT token_hash \
     FROM sessions WHERE expires_ms <= $1 LIMIT CAST($2 AS BIGINT))";
const PURGE_CHALLENGES: &str = "DELETE FROM login_challenges WHERE id IN (SELECT id FROM \
     login_challenges WHERE expires_ms <= $1 LIMIT CAST($2 AS BIGINT))";

/// Runs one of the purges ([`PURGE_SESSIONS`], [`PURGE_CHALLENGES`]): how many rows went.
async fn delete_expired(
    conn: &mut PoolConnection<sqlx::Any>,
    purge: &'static str,
    now_ms: u64,
    limit: u32,
) -> Result<u64, StoreError> {
    Ok(sqlx::query(purge)
        .bind(to_i64(now_ms))
        .bind(i64::from(limit))
        .execute(&mut **conn)
        .await?
        .rows_affected())
}

const INSERT_LEDGER: &str = "INSERT INTO ledger_entries (address, seq, amount, reason, match_id) \
     VALUES ($1, $2, $3, $4, $5)";
const UPSERT_MATCH: &str = "INSERT INTO matches (id, game, stake, origin, phase, reason, created_ms, updated_ms, body) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
     ON CONFLICT (id) DO UPDATE SET phase = excluded.phase, reason = excluded.reason, \
     updated_ms = excluded.updated_ms, body = excluded.body";
const INSERT_PLAYER: &str =
    "INSERT INTO match_players (address, match_id) VALUES ($1, $2) ON CONFLICT DO NOTHING";
/// A topic's events after `$2`, oldest first, at most `$3`: a subscription's catch-up.
const TOPIC_EVENTS: &str = "SELECT e.seq, e.body FROM event_topics t JOIN events e ON e.seq = t.seq \
     WHERE t.topic = $1 AND t.seq > $2 ORDER BY t.seq LIMIT CAST($3 AS BIGINT)";
/// The names ([`kind_name`]) of the kinds [`inbox_is_derived`] is true of, as an SQL list.
macro_rules! derived_kinds {
    () => {
        "('challenge_issued', 'challenge_accepted', 'challenge_declined', \
         'challenge_expired', 'match_aborted', 'rematch_offered', 'game_started', \
         'game_ended')"
    };
}

/// As [`TOPIC_EVENTS`] for the inbox `$1` of the address `$4`, after `$2` and up to `$3`,
/// at most `$5` (each `$n` first appears in order: SQLite numbers them by appearance;
/// `$3` is a window, [`InboxWindows`]): its stored rows (queueing,
/// money) and, derived, the events of every match it is a player of whose kind
/// [`inbox_is_derived`] (`derived_kinds!`), among the matches that could still have
/// events after `$2` (from the `match_floor` of the event at `$2` or before it; 0, every
/// match, for events stored before schema 5). Those are not stored per address: an address's
/// inbox rows landed on its own page of `event_topics`, a random page per player per
/// commit, while `match_players` is written once per match (BENCHMARKS.md, "derived
/// inboxes"). `UNION` drops the duplicates of databases that stored both.
const INBOX_EVENTS: &str = concat!(
    "SELECT e.seq, e.body FROM ( \
     SELECT t.seq FROM event_topics t WHERE t.topic = $1 AND t.seq > $2 AND t.seq <= $3 \
     UNION \
     SELECT t.seq FROM match_players p \
     JOIN event_topics t ON t.topic = 'match:' || p.match_id AND t.seq > $2 AND t.seq <= $3 \
     JOIN events k ON k.seq = t.seq AND k.kind IN ",
    derived_kinds!(),
    " WHERE p.address = $4 AND p.match_id >= COALESCE((SELECT f.match_floor FROM events f \
     WHERE f.seq <= $2 ORDER BY f.seq DESC LIMIT 1), 0) \
     ) s JOIN events e ON e.seq = s.seq ORDER BY s.seq LIMIT CAST($5 AS BIGINT)"
);
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

/// The same kinds, for [`Store::events_after`]: the derived inbox topics of a range of
/// events.
const DERIVED_TOPICS: &str = concat!(
    "SELECT e.seq, 'inbox:' || p.address FROM events e \
     JOIN match_players p ON p.match_id = e.match_id \
     WHERE e.seq > $1 AND e.seq <= $2 AND e.kind IN ",
    derived_kinds!()
);

/// Whether an event of this kind reaches the inboxes of everyone its match concerns
/// ([`Match::concerned`], the `match_players` rows) and only them, so that the store derives
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
        EventKind::Queued { .. } | EventKind::Moved { .. } | EventKind::Transferred { .. } => false,
    }
}

/// The database.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    url: std::sync::Arc<str>,
    /// On an SQLite file: the thread that commits batches (see [`writer`]).
    writer: Option<std::sync::Arc<writer::Writer>>,
    /// On an SQLite file: the thread that reads the subscriptions' catch-ups (see
    /// [`reader`]).
    reader: Option<std::sync::Arc<reader::Reader>>,
    /// On an SQLite file: its directory, whose filesystem's free space `/healthz` reports.
    dir: Option<std::sync::Arc<std::path::Path>>,
}

/// Below this much free space on the database's filesystem the disk counts as full:
/// `/healthz` says so (503, `storage_full`) before a commit fails for it. A batch of a
/// few thousand commands writes well under this.
pub const MIN_FREE_BYTES: u64 = 1 << 20;

/// The key of the PostgreSQL advisory lock that serialises every command batch of a
/// cluster (any constant works; this one spells "triad" in ASCII).
const CLUSTER_LOCK: i64 = 0x0074_7269_6164;

/// The PostgreSQL channel on which a node announces committed events (payload: the last
/// sequence number, a hint only).
pub const EVENTS_CHANNEL: &str = "triad_events";

/// The channel on which a node announces a logout to the others (the payload is the
/// session's token hash), so that they close the sockets it opened at once.
pub const SESSIONS_CHANNEL: &str = "triad_sessions";

/// A transaction that holds the cluster-wide command lock (PostgreSQL) until it ends.
pub type Tx = sqlx::Transaction<'static, sqlx::Any>;

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl Store {
    /// Opens (creating if needed) the database at `url`: a plain path or `sqlite://PATH`
    /// for SQLite, `postgres://…` for PostgreSQL. Brings the schema up to date, and refuses a
    /// database written by a newer Triad.
    ///
    /// # Errors
    /// When the database cannot be opened or migrated.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let mut file = None;
        let (backend, url) = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Backend::Postgres, url.to_owned())
        } else {
            let path = url
                .strip_prefix("sqlite://")
                .or_else(|| url.strip_prefix("sqlite:"))
                .unwrap_or(url);
            // An in-memory database is one per connection: it keeps committing through
            // the pool, since the commit thread's connection would see another database.
            if !path.starts_with(":memory:") && !path.contains('?') {
                file = Some(std::path::PathBuf::from(path));
            }
            (Backend::Sqlite, format!("sqlite://{path}?mode=rwc"))
        };
        let options = AnyConnectOptions::from_str(&url)?;
        let pool = AnyPoolOptions::new()
            .max_connections(if backend == Backend::Sqlite { 8 } else { 16 })
            // An SQLite connection is a file handle that does not go stale: pinging it at
            // every acquire cost a round trip to its worker thread per read. A PostgreSQL
            // connection can die with its server or the network, so it is still checked.
            .test_before_acquire(backend == Backend::Postgres)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        // WAL lets readers run beside the one writer; FULL makes every
                        // acknowledged commit survive a power cut, not only a crash.
                        sqlx::raw_sql(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                             PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;",
                        )
                        .execute(&mut *conn)
                        .await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        let mut store = Store {
            pool,
            backend,
            url: url.into(),
            writer: None,
            reader: None,
            dir: file.as_deref().map(|f| {
                let dir = f.parent().filter(|d| !d.as_os_str().is_empty());
                std::sync::Arc::from(dir.unwrap_or(std::path::Path::new(".")))
            }),
        };
        store.migrate().await?;
        // After the migrations, so that the commit thread finds the tables.
        if let Some(path) = file {
            store.writer = Some(std::sync::Arc::new(writer::Writer::start(path.clone())?));
            store.reader = Some(std::sync::Arc::new(reader::Reader::start(path)?));
        }
        Ok(store)
    }

    /// Which database engine this is.
    #[must_use]
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Whether several nodes may share this database (PostgreSQL): commands then take the
    /// cluster lock and every node follows the event log.
    #[must_use]
    pub fn is_shared(&self) -> bool {
        self.backend == Backend::Postgres
    }

    /// The database URL (for a PostgreSQL listener).
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Begins a transaction; on PostgreSQL it first takes the cluster-wide command lock,
    /// which it holds until it commits or rolls back (also if the connection dies).
    ///
    /// # Errors
    /// On a database failure.
    pub async fn begin_serialised(&self) -> Result<Tx, StoreError> {
        let mut tx = self.pool.begin().await?;
        if self.is_shared() {
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(CLUSTER_LOCK)
                .execute(&mut *tx)
                .await?;
        }
        Ok(tx)
    }

    /// The events after `after`, with the topics each was published on, oldest first, at
    /// most `limit`, read through `conn` (inside a transaction).
    ///
    /// # Errors
    /// On a database failure or a row that does not decode.
    pub async fn events_after(
        conn: &mut sqlx::AnyConnection,
        after: u64,
        limit: u32,
    ) -> Result<Vec<(Event, Vec<String>)>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, body FROM events WHERE seq > $1 ORDER BY seq LIMIT CAST($2 AS BIGINT)",
        )
        .bind(to_i64(after))
        .bind(i64::from(limit))
        .fetch_all(&mut *conn)
        .await?;
        let Some(last) = rows.last() else {
            return Ok(Vec::new());
        };
        let last: i64 = last.try_get(0)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let seq: i64 = row.try_get(0)?;
            let body: String = row.try_get(1)?;
            let event: Event = serde_json::from_str(&body)
                .map_err(|e| StoreError::Corrupt(format!("event {seq}: {e}")))?;
            out.push((event, Vec::new()));
        }
        let topics = sqlx::query(
            "SELECT seq, topic FROM event_topics WHERE seq > $1 AND seq <= $2 ORDER BY seq, topic",
        )
        .bind(to_i64(after))
        .bind(last)
        .fetch_all(&mut *conn)
        .await?;
        let derived = sqlx::query(DERIVED_TOPICS)
            .bind(to_i64(after))
            .bind(last)
            .fetch_all(&mut *conn)
            .await?;
        for row in topics.into_iter().chain(derived) {
            let seq = to_u64(row.try_get(0)?);
            let topic: String = row.try_get(1)?;
            if let Ok(i) = out.binary_search_by_key(&seq, |(e, _)| e.seq) {
                out[i].1.push(topic);
            }
        }
        // A database may hold an inbox row that is also derived: each topic once.
        for (_, topics) in &mut out {
            topics.sort_unstable();
            topics.dedup();
        }
        Ok(out)
    }

    /// The events after `after` (see [`Store::events_after`]), read outside any transaction.
    ///
    /// # Errors
    /// On a database failure or a row that does not decode.
    pub async fn new_events(
        &self,
        after: u64,
        limit: u32,
    ) -> Result<Vec<(Event, Vec<String>)>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        Self::events_after(&mut conn, after, limit).await
    }

    /// The connection pool, for modules that keep tables of their own (the agents' relay).
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let migrations = MIGRATIONS
            .iter()
            .map(|&(version, description, sqlite, postgres)| {
                let sql = match self.backend {
                    Backend::Sqlite => sqlite,
                    Backend::Postgres => postgres,
                };
                Migration::new(
                    version,
                    Cow::Borrowed(description),
                    MigrationType::Simple,
                    sqlx::SqlStr::from_static(sql),
                    false,
                )
            })
            .collect();
        let migrator = Migrator::with_migrations(migrations);
        let mut conn = self.pool.acquire().await?;
        // A database written by a newer Triad has migrations this binary does not know.
        conn.ensure_migrations_table("_sqlx_migrations")
            .await
            .map_err(schema_error)?;
        let applied = conn
            .list_applied_migrations("_sqlx_migrations")
            .await
            .map_err(schema_error)?;
        if let Some(newest) = applied.iter().map(|m| m.version).max()
            && newest > SCHEMA_VERSION
        {
            return Err(StoreError::Schema(format!(
                "this database was written by a newer version of Triad (schema version {newest}); \
                 this binary understands up to version {SCHEMA_VERSION}. Upgrade triad, or use another database."
            )));
        }
        drop(conn);
        migrator.run(&self.pool).await.map_err(schema_error)?;
        Ok(())
    }

    /// The value of a fixed setting, if stored.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        let row = sqlx::query("SELECT value FROM settings WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.get::<String, _>(0)))
    }

    /// Stores a fixed setting unless one is already stored; returns the value in force.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn setting_or_insert(&self, key: &str, value: &str) -> Result<String, StoreError> {
        sqlx::query(
            "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
        )
        .bind(key)
        .bind(value)
        .execute(&self.pool)
        .await?;
        Ok(self.setting(key).await?.unwrap_or_else(|| value.to_owned()))
    }

    /// Rebuilds the engine from the event log.
    ///
    /// # Errors
    /// When a row cannot be read, or the log is not one the engine could have written.
    pub async fn load_engine(&self, config: triad_engine::Config) -> Result<Engine, StoreError> {
        let started = Instant::now();
        let mut engine = Engine::new(config);
        let mut after: i64 = 0;
        let mut numeric_amounts: Vec<(i64, String)> = Vec::new();
        loop {
            let rows =
                sqlx::query("SELECT seq, body FROM events WHERE seq > $1 ORDER BY seq LIMIT 10000")
                    .bind(after)
                    .fetch_all(&self.pool)
                    .await?;
            if rows.is_empty() {
                break;
            }
            for row in rows {
                let seq: i64 = row.try_get(0)?;
                let body: String = row.try_get(1)?;
                let event: Event = serde_json::from_str(&body)
                    .map_err(|e| StoreError::Corrupt(format!("event {seq}: {e}")))?;
                if event.seq != to_u64(seq) || event.seq != engine.next_seq() {
                    return Err(StoreError::Corrupt(format!(
                        "event {seq} does not follow event {}",
                        engine.next_seq() - 1
                    )));
                }
                let applied =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.apply(&event)));
                if applied.is_err() {
                    return Err(StoreError::Corrupt(format!(
                        "event {seq} does not follow from the log before it"
                    )));
                }
                if has_numeric_amount(&body) {
                    let text = serde_json::to_string(&event)
                        .map_err(|e| StoreError::Corrupt(format!("event {seq}: {e}")))?;
                    numeric_amounts.push((seq, text));
                }
                after = seq;
            }
        }
        engine.audit().map_err(StoreError::Corrupt)?;
        self.rewrite_numeric_amounts(&numeric_amounts).await?;
        tracing::info!(
            events = engine.next_seq() - 1,
            live_matches = engine.live_count(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "rebuilt the engine from the event log"
        );
        Ok(engine)
    }

    /// Rewrites events a server wrote before amounts were strings with their amounts as
    /// strings, in one transaction: a stored event's text is what the API and the
    /// WebSocket serve, so an old log's `"amount": 1800000000000000000` would reach a
    /// JavaScript client as a number. Done once: a rewritten row has no numeric amount.
    async fn rewrite_numeric_amounts(&self, rows: &[(i64, String)]) -> Result<(), StoreError> {
        use sqlx::Connection as _;
        if rows.is_empty() {
            return Ok(());
        }
        let mut conn = self.pool.acquire().await?;
        let mut tx = (*conn).begin().await?;
        for (seq, body) in rows {
            sqlx::query("UPDATE events SET body = $1 WHERE seq = $2")
                .bind(body.as_str())
                .bind(*seq)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        tracing::info!(
            events = rows.len(),
            "rewrote the amounts of events from an older version as strings"
        );
        Ok(())
    }

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

    /// Commits one batch in `tx` (which holds the cluster lock) and, on PostgreSQL,
    /// announces it to the other nodes; the announcement is delivered at commit.
    ///
    /// # Errors
    /// On a database failure; then nothing of the batch is stored.
    pub async fn commit_in(&self, mut tx: Tx, commit: &Commit<'_>) -> Result<(), StoreError> {
        Self::write(&mut tx, &Rows::of(commit)?).await?;
        if let (true, Some(last)) = (self.is_shared(), commit.events.last()) {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(EVENTS_CHANNEL)
                .bind(last.event.seq.to_string())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
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
            for address in &m.players {
                sqlx::query(INSERT_PLAYER)
                    .bind(address.as_str())
                    .bind(m.id)
                    .execute(&mut **tx)
                    .await?;
            }
        }
        Ok(())
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
        if let Some(reader) = &self.reader {
            let topic = topic.to_owned();
            return reader
                .call(move |conn| {
                    let mut statement = conn.prepare_cached(TOPIC_EVENTS)?;
                    let rows = statement.query_map(
                        rusqlite::params![topic, to_i64(since), i64::from(limit)],
                        stored_event,
                    )?;
                    Ok(rows.collect::<Result<Vec<_>, _>>()?)
                })
                .await;
        }
        let rows = sqlx::query(TOPIC_EVENTS)
            .bind(topic)
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
        let head: i64 = sqlx::query_scalar(HEAD_SEQ).fetch_one(&self.pool).await?;
        let mut windows = InboxWindows::new(since, limit, to_u64(head));
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

    /// A match as last stored (a live one as of its first move or its last event other than
    /// a move: ask the engine first, as `ApiState::match_view` does).
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn match_(&self, id: MatchId) -> Result<Option<Match>, StoreError> {
        let row = sqlx::query("SELECT body FROM matches WHERE id = $1")
            .bind(to_i64(id.0))
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| {
            let body: String = r.try_get(0)?;
            serde_json::from_str(&body).map_err(|e| StoreError::Corrupt(format!("match {id}: {e}")))
        })
        .transpose()
    }

    /// Matches, newest first, optionally of one player and in one phase, with ids below
    /// `before` (for paging). A live match is as of its first move or its last event other
    /// than a move: the engine has its board (`api::games::list_matches` shows that one).
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn list_matches(
        &self,
        player: Option<Address>,
        phase: Option<&str>,
        before: Option<u64>,
        limit: u32,
    ) -> Result<Vec<Match>, StoreError> {
        let rows = sqlx::query(
            "SELECT m.body FROM matches m \
             WHERE (CAST($1 AS TEXT) IS NULL OR m.id IN (SELECT match_id FROM match_players WHERE address = CAST($1 AS TEXT))) \
             AND (CAST($2 AS TEXT) IS NULL OR m.phase = CAST($2 AS TEXT) \
                  OR (CAST($2 AS TEXT) = 'active' AND m.phase <> 'finished')) AND m.id < $3 \
             ORDER BY m.id DESC LIMIT CAST($4 AS BIGINT)",
        )
        .bind(player.map(|a| a.to_string()))
        .bind(phase)
        .bind(to_i64(before.unwrap_or(u64::MAX)))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                let body: String = r.try_get(0)?;
                serde_json::from_str(&body).map_err(|e| StoreError::Corrupt(e.to_string()))
            })
            .collect()
    }

    /// A player's ledger entries, newest first, with seq below `before`.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn ledger_entries(
        &self,
        address: Address,
        before: Option<u64>,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT l.seq, l.amount, l.reason, l.match_id, e.at_ms \
             FROM ledger_entries l JOIN events e ON e.seq = l.seq \
             WHERE l.address = $1 AND l.seq < $2 ORDER BY l.seq DESC LIMIT CAST($3 AS BIGINT)",
        )
        .bind(address.to_string())
        .bind(to_i64(before.unwrap_or(u64::MAX)))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|r| {
                Ok(LedgerEntry {
                    seq: to_u64(r.try_get(0)?),
                    amount: r.try_get(1)?,
                    reason: r.try_get(2)?,
                    match_id: r.try_get::<Option<i64>, _>(3)?.map(to_u64),
                    at_ms: to_u64(r.try_get(4)?),
                })
            })
            .collect()
    }

    /// Stores a session.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn save_session(
        &self,
        token_hash: &str,
        address: Address,
        public_key: &str,
        created_ms: u64,
        expires_ms: u64,
    ) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await?;
        let result = sqlx::query("INSERT INTO sessions (token_hash, address, public_key, created_ms, expires_ms) VALUES ($1, $2, $3, $4, $5)")
            .bind(token_hash)
            .bind(address.to_string())
            .bind(public_key)
            .bind(to_i64(created_ms))
            .bind(to_i64(expires_ms))
            .execute(&mut *conn)
            .await;
        if result.is_err() {
            close_after_failed_write(&mut conn);
        }
        result?;
        Ok(())
    }

    /// Marks a login challenge (named by its `nonce`) used, for every node: `false` when it
    /// already was. Rows live until the challenge expires (`expires_ms`), after which it
    /// cannot be used anyway; [`purge_expired`](Store::purge_expired), which the session
    /// sweep runs every few seconds, drops them in bounded batches. A pending challenge is not
    /// stored at all (its id is authenticated: `sessions`), so the table holds only
    /// challenges that logged someone in, no more than the sessions they made.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn use_login_challenge(
        &self,
        nonce: &str,
        public_key: &str,
        message: &str,
        expires_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut conn = self.pool.acquire().await?;
        let result = async {
            // The primary key is the claim: of two logins with one challenge, on two
            // nodes, one inserts it.
            let inserted = sqlx::query(
                "INSERT INTO login_challenges (id, public_key, message, expires_ms) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
            )
            .bind(nonce)
            .bind(public_key)
            .bind(message)
            .bind(to_i64(expires_ms))
            .execute(&mut *conn)
            .await?;
            Ok(inserted.rows_affected() == 1)
        }
        .await;
        if result.is_err() {
            close_after_failed_write(&mut conn);
        }
        result
    }

    /// The address and expiry of a session, if it exists.
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn session(&self, token_hash: &str) -> Result<Option<(Address, u64)>, StoreError> {
        let row = sqlx::query("SELECT address, expires_ms FROM sessions WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| {
            let address: String = r.try_get(0)?;
            let address = address
                .parse()
                .map_err(|_| StoreError::Corrupt(format!("session address {address}")))?;
            Ok((address, to_u64(r.try_get(1)?)))
        })
        .transpose()
    }

    /// Deletes a session (logout) and, when several nodes share the database, tells the
    /// others ([`SESSIONS_CHANNEL`]) so they close its sockets at once. Expired sessions
    /// are left to [`purge_expired`](Store::purge_expired).
    ///
    /// # Errors
    /// On a database failure.
    pub async fn delete_session(&self, token_hash: &str) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await?;
        let result = async {
            sqlx::query("DELETE FROM sessions WHERE token_hash = $1")
                .bind(token_hash)
                .execute(&mut *conn)
                .await?;
            if self.is_shared() {
                sqlx::query("SELECT pg_notify($1, $2)")
                    .bind(SESSIONS_CHANNEL)
                    .bind(token_hash)
                    .execute(&mut *conn)
                    .await?;
            }
            Ok::<(), StoreError>(())
        }
        .await;
        if result.is_err() {
            close_after_failed_write(&mut conn);
        }
        result
    }

    /// Deletes at most `limit` expired sessions and at most `limit` expired login
    /// challenges (expired: `expires_ms <= now_ms`, as a login checks them). Returns how
    /// many of each went; a full batch means more may be left for the next call.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn purge_expired(&self, now_ms: u64, limit: u32) -> Result<(u64, u64), StoreError> {
        let mut conn = self.pool.acquire().await?;
        let result = async {
            let sessions = delete_expired(&mut conn, PURGE_SESSIONS, now_ms, limit).await?;
            let challenges = delete_expired(&mut conn, PURGE_CHALLENGES, now_ms, limit).await?;
            Ok::<_, StoreError>((sessions, challenges))
        }
        .await;
        if result.is_err() {
            close_after_failed_write(&mut conn);
        }
        result
    }

    /// Of these sessions (token hashes), those that still exist and have not expired at
    /// `now_ms`: a node checks the sessions of its sockets against the database, which
    /// other nodes' logouts change.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn live_sessions(
        &self,
        token_hashes: &[std::sync::Arc<str>],
        now_ms: u64,
    ) -> Result<HashSet<String>, StoreError> {
        let mut live = HashSet::new();
        for chunk in token_hashes.chunks(500) {
            let placeholders: Vec<String> = (2..chunk.len() + 2).map(|n| format!("${n}")).collect();
            let sql = format!(
                "SELECT token_hash FROM sessions WHERE expires_ms > $1 AND token_hash IN ({})",
                placeholders.join(", ")
            );
            // Audited: the text is fixed but for the count of numbered placeholders; the
            // hashes are bound.
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(to_i64(now_ms));
            for hash in chunk {
                query = query.bind(&**hash);
            }
            for row in query.fetch_all(&self.pool).await? {
                live.insert(row.try_get::<String, _>(0)?);
            }
        }
        Ok(live)
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> bool {
        sqlx::query("SELECT 1").fetch_one(&self.pool).await.is_ok()
    }

    /// Whether the database takes a write: rewrites one stored setting in place, which
    /// changes nothing but goes through the journal and the disk as a commit does.
    ///
    /// # Errors
    /// The database's refusal (read-only, failing, full).
    pub async fn probe_write(&self) -> Result<(), StoreError> {
        sqlx::query("UPDATE settings SET value = value WHERE key = 'engine_seed'")
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The bytes free (for this process) on the filesystem of an SQLite file's directory;
    /// `None` for PostgreSQL, an in-memory database, or when the system does not say.
    #[must_use]
    pub fn free_bytes(&self) -> Option<u64> {
        #[cfg(unix)]
        {
            let stat = rustix::fs::statvfs(self.dir.as_deref()?).ok()?;
            Some(stat.f_bavail.saturating_mul(stat.f_frsize))
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    /// Flushes and closes: on SQLite, checkpoints the WAL into the main file.
    pub async fn close(&self) {
        if let Some(writer) = &self.writer {
            writer.close().await;
        }
        if let Some(reader) = &self.reader {
            reader.close().await;
        }
        if self.backend == Backend::Sqlite {
            let _ = sqlx::raw_sql("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&self.pool)
                .await;
        }
        self.pool.close().await;
    }
}

/// A connection whose write failed is closed instead of going back to the pool: SQLite can
/// leave it holding the database's write lock (after `SQLITE_FULL`, say), which would stall
/// every later writer until that connection happened to be used again (RELIABILITY.md,
/// full disk).
fn close_after_failed_write(conn: &mut PoolConnection<sqlx::Any>) {
    conn.close_on_drop();
}

fn schema_error(e: MigrateError) -> StoreError {
    StoreError::Schema(match e {
        MigrateError::VersionMissing(v) => format!(
            "this database has schema migration {v}, which this binary does not know: it was written by a newer \
             version of Triad. Upgrade triad, or use another database."
        ),
        other => format!("could not bring the database schema up to date: {other}"),
    })
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
    }
}

/// The stable snake_case name of an event kind.
#[must_use]
pub fn kind_name(kind: &EventKind) -> &'static str {
    match kind {
        EventKind::ChallengeIssued { .. } => "challenge_issued",
        EventKind::ChallengeAccepted { .. } => "challenge_accepted",
        EventKind::ChallengeDeclined { .. } => "challenge_declined",
        EventKind::ChallengeExpired { .. } => "challenge_expired",
        EventKind::Queued { .. } => "queued",
        EventKind::GameStarted { .. } => "game_started",
        EventKind::Moved { .. } => "moved",
        EventKind::MatchAborted { .. } => "match_aborted",
        EventKind::GameEnded { .. } => "game_ended",
        EventKind::RematchOffered { .. } => "rematch_offered",
        EventKind::Transferred { .. } => "transferred",
    }
}

/// Whether an event's stored text holds an amount as a JSON number (`"amount":5` or
/// `"stake":5`), as servers wrote them before amounts were strings.
fn has_numeric_amount(body: &str) -> bool {
    ["\"amount\":", "\"stake\":"].iter().any(|key| {
        body.match_indices(key).any(|(at, _)| {
            body.as_bytes()
                .get(at + key.len())
                .is_some_and(u8::is_ascii_digit)
        })
    })
}
