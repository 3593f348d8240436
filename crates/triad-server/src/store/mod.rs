//! Durable storage: the event log and its projections, on SQLite or PostgreSQL through one
//! SQL text (sqlx's `Any` driver with `$1` placeholders).
//!
//! The event log is the source of truth. A batch of commands is committed as one
//! transaction (group commit): its events, the topics they were published on, the latest
//! state of every match they touched, and each player's ledger entries. On start the engine
//! is rebuilt by replaying the log.
//!
//! The statements live by table family:
//! - [`log`]: what a commit writes (the events, their topics, match rows, ledger rows);
//! - [`replay`]: the log read back (the engine rebuilt at start, other nodes' events);
//! - [`topics`]: a subscription's catch-up, with the inboxes derived from `match_players`;
//! - [`projections`]: the read models of matches and the ledger;
//! - [`sessions`]: sessions and used login challenges;
//! - [`profiles`]: players' display names and bot marks;
//! - [`heartbeat`]: when the service was last known to be alive;
//! - [`migrations`]: the schema versions;
//! - [`lock`]: the cluster lock's own connection, and the batches written under it;
//! - [`follow`]: the connection a node follows the log on outside the lock;
//! - [`announce`]: a batch's announcements to the other nodes, which carry its events;
//! - this module: opening and closing the database, fixed settings and the health checks.
//!
//! On an SQLite file two threads of their own do the hot work: [`writer`] commits the
//! batches and [`reader`] reads the subscriptions' catch-ups.
//!
//! A bound `LIMIT` is always written `LIMIT CAST($n AS BIGINT)`, never `LIMIT $n`: SQLite
//! (3.51, bundled) reads a bare bound limit while it prepares the statement
//! (`sqlite3ExprIsInteger`), so every new binding expires the cached statement and the next
//! step compiles it again. Behind the cast the limit is an expression evaluated when the
//! statement runs, and the prepared statement stays valid; PostgreSQL takes either form.

use std::str::FromStr;

use sqlx::{
    AnyPool, Row,
    any::{AnyConnectOptions, AnyPoolOptions},
    pool::PoolConnection,
};

mod announce;
mod follow;
mod heartbeat;
mod lock;
mod log;
mod migrations;
mod profiles;
mod projections;
mod reader;
pub mod relay;
mod replay;
mod sessions;
mod topics;
mod writer;

pub use announce::Announcement;
pub use follow::FollowConnection;
pub use heartbeat::Heartbeat;
pub use lock::LockConnection;
pub use log::{Commit, Encoded, kind_name};
pub use migrations::SCHEMA_VERSION;
pub use profiles::{NameWrite, Profile};
pub use projections::LedgerEntry;
pub use topics::{StoredEvent, inbox_is_derived, match_topic};

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
    /// The schema could not be brought up to date, or the database server is too old.
    #[error("{0}")]
    Schema(String),
    /// A stored row could not be read back.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// The store was closed (the server is shutting down), or its commit thread could not
    /// be started.
    #[error("the database is closed: {0}")]
    Closed(&'static str),
    /// The database did not answer a statement in time (it stopped answering, or a
    /// network between stopped carrying its packets); the connection was closed.
    #[error("the database did not answer {what} within {} s", .within.as_secs())]
    NoAnswer {
        /// The statement, in words.
        what: &'static str,
        /// How long it was waited for.
        within: std::time::Duration,
    },
}

/// `statement`, or [`StoreError::NoAnswer`] once `patience` has passed without its answer
/// (it is then dropped halfway: its connection must not be used again).
pub(crate) async fn within<T>(
    patience: std::time::Duration,
    what: &'static str,
    statement: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(patience, statement)
        .await
        .unwrap_or(Err(StoreError::NoAnswer {
            what,
            within: patience,
        }))
}

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

/// The PostgreSQL channel on which a node announces each batch it commits: its events, in
/// one notification or several in a row, each with its last sequence number
/// ([`Announcement`]).
pub const EVENTS_CHANNEL: &str = "triad_events";

/// What every PostgreSQL session of a node sets first: no JIT compilation. Every statement
/// here reads or writes a page of rows by index; on a table without fresh statistics the
/// planner can price one high enough to compile it, which took 150 ms where running it took
/// 0.2 (a catch-up of 16 events, PostgreSQL 15).
pub(crate) const POSTGRES_SESSION: &str = "SET jit = off";

/// What a connection of a node's own sets besides [`POSTGRES_SESSION`]: each statement reads
/// its own snapshot, whatever the database's default (the head after the cluster lock and
/// every read of the log rely on it).
const OWN_SESSION: &str =
    "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED";

/// The oldest PostgreSQL major version Triad runs on (14: `idle_session_timeout`).
pub const OLDEST_POSTGRES: u32 = 14;

/// Whether Triad runs on the PostgreSQL of this `server_version_num` (`150004` is 15.4).
fn runs_on(server_version_num: &str) -> bool {
    server_version_num
        .parse::<u32>()
        .is_ok_and(|number| number >= OLDEST_POSTGRES * 10_000)
}

/// The channel on which a node announces a logout to the others (the payload is the
/// session's token hash), so that they close the sockets it opened at once.
pub const SESSIONS_CHANNEL: &str = "triad_sessions";

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
                    } else {
                        sqlx::raw_sql(POSTGRES_SESSION).execute(&mut *conn).await?;
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
        if backend == Backend::Postgres {
            store.check_postgres_version().await?;
        }
        store.migrate().await?;
        // After the migrations, so that the commit thread finds the tables.
        if let Some(path) = file {
            store.writer = Some(std::sync::Arc::new(writer::Writer::start(path.clone())?));
            store.reader = Some(std::sync::Arc::new(reader::Reader::start(path)?));
        }
        Ok(store)
    }

    /// Refuses a PostgreSQL older than [`OLDEST_POSTGRES`]: the cluster lock bounds its
    /// holder's silence with `idle_session_timeout` ([`LockConnection::SILENCE`]), which
    /// older servers do not know, so every batch would fail.
    async fn check_postgres_version(&self) -> Result<(), StoreError> {
        let version: String = sqlx::query_scalar("SHOW server_version_num")
            .fetch_one(&self.pool)
            .await?;
        if runs_on(&version) {
            return Ok(());
        }
        Err(StoreError::Schema(format!(
            "PostgreSQL {version} (server_version_num) is too old: Triad needs PostgreSQL \
             {OLDEST_POSTGRES} or later"
        )))
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

    /// A PostgreSQL connection of this node's own, outside the pool, set up in one round
    /// trip (one simple query: [`OWN_SESSION`], [`POSTGRES_SESSION`], and `name` as its
    /// `application_name`, after the operator's own when the URL or `PGAPPNAME` set one,
    /// which is how an operator tells it apart in `pg_stat_activity`). Its owner keeps it:
    /// nothing pings it, so a failure on it is the owner's to handle.
    ///
    /// # Errors
    /// When the server cannot be reached or refuses the session.
    pub(crate) async fn own_connection(
        &self,
        name: &'static str,
    ) -> Result<sqlx::AnyConnection, StoreError> {
        use sqlx::Connection as _;
        debug_assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == ' '));
        let mut conn = sqlx::AnyConnection::connect(&self.url).await?;
        let setup = format!(
            "{OWN_SESSION}; {POSTGRES_SESSION}; SELECT set_config('application_name', \
             concat_ws(' ', NULLIF(current_setting('application_name'), ''), '{name}'), false)"
        );
        sqlx::raw_sql(sqlx::AssertSqlSafe(setup))
            .execute(&mut conn)
            .await?;
        Ok(conn)
    }

    /// The connection in `slot`, a connection of this node's own named `name`
    /// ([`own_connection`](Store::own_connection)), made first when `slot` holds none.
    ///
    /// # Errors
    /// When no connection could be made.
    pub(crate) async fn connected<'c>(
        &self,
        slot: &'c mut Option<sqlx::AnyConnection>,
        name: &'static str,
    ) -> Result<&'c mut sqlx::AnyConnection, StoreError> {
        match slot {
            Some(conn) => Ok(conn),
            empty => Ok(empty.insert(self.own_connection(name).await?)),
        }
    }

    /// The connection pool, for modules that keep tables of their own (the agents' relay).
    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
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

#[cfg(test)]
mod tests {
    use super::runs_on;

    /// `server_version_num` is the major version times 10,000 and the minor (10 and
    /// later); Triad runs on 14 and later.
    #[test]
    fn triad_runs_on_postgresql_14_and_later() {
        for (version, runs) in [
            ("130016", false),
            ("139999", false),
            ("140000", true),
            ("150004", true),
            ("180001", true),
            ("", false),
            ("15.4", false),
        ] {
            assert_eq!(runs_on(version), runs, "{version}");
        }
    }
}
