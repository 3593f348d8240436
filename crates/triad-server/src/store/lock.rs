//! The cluster lock's own connection (PostgreSQL): the session-level advisory lock that
//! serialises every command batch of a cluster, and the batches written under it.
//!
//! A node takes the lock on a connection of its own, outside the pool, and keeps it for
//! as long as commands keep waiting, up to a stint ([`LockConnection::STINT`]); it lets
//! go when it is idle or the stint is up, and then queues behind the other nodes.
//! While it holds the lock no other node writes, so each batch is one statement in its own
//! implicit transaction: every row, the `pg_notify`, and the commit in one round trip.
//!
//! The lock never outlives its connection: PostgreSQL drops a session's advisory locks
//! with the session, and this connection is never handed to anyone else. Any failure on
//! it closes it (then the lock is gone, and with it whatever this node assumed about the
//! log's head), and the next batch connects afresh.
//!
//! Nor does it outlive its holder's silence. A node that froze with the lock (a stopped
//! process, a paused machine, a network that stopped carrying its packets) keeps its
//! connection open, and would hold up every other node until TCP gave up. So PostgreSQL
//! ends the holder's session once it has been idle for [`LockConnection::SILENCE`], and
//! each statement here gives up after [`LockConnection::PATIENCE`] without an answer.

use sqlx::Row as _;

use triad_engine::Event;

use super::{Commit, Store, StoreError, log::Rows, to_u64};

/// Takes the lock, waiting for it, then reads the log's head, in one round trip: three
/// statements in one simple query (which binds nothing, so the key is written out:
/// 0x7472696164, "triad" in ASCII, which every version of Triad takes; session- and
/// transaction-level advisory locks on one key exclude each other, so a rolling upgrade
/// from a node that took it per transaction stays serialised). Each
/// statement reads its own snapshot (the session is READ COMMITTED), so the head is read
/// after the lock is granted and sees every batch committed before it. Between them, the
/// session's idle time is bounded while it holds the lock ([`LockConnection::SILENCE`], in
/// milliseconds): set by the server as soon as the lock is granted, so it holds even when
/// the node is gone before the answer reaches it.
pub(super) const LOCK_AND_HEAD: &str = "SELECT pg_advisory_lock(500135715172); \
     SET idle_session_timeout = 5000; \
     SELECT COALESCE(MAX(seq), 0) FROM events";

/// Lets go of the lock, and gives the session back the idle time the server's settings
/// give it: between stints the node may be idle for as long as it likes.
const UNLOCK: &str = "SELECT pg_advisory_unlock(500135715172); RESET idle_session_timeout";

/// The connection's name in `pg_stat_activity`.
const NAME: &str = "triad lock";

/// A node's connection for the cluster lock, holding it or not.
pub struct LockConnection {
    conn: Option<sqlx::AnyConnection>,
    held: bool,
}

impl std::fmt::Debug for LockConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockConnection")
            .field("connected", &self.conn.is_some())
            .field("held", &self.held)
            .finish()
    }
}

impl LockConnection {
    /// The longest a node keeps the lock while its commands keep coming: past it, it lets
    /// go after the batch and queues behind the other nodes (PostgreSQL grants a lock's
    /// waiters in order). Bounds what one busy node adds to the others' latency.
    pub const STINT: std::time::Duration = std::time::Duration::from_millis(20);

    /// The lock's key, 0x7472696164: "triad" in ASCII, which every version of Triad takes
    /// (written out in the statements, which bind nothing).
    pub const KEY: i64 = 0x0074_7269_6164;

    /// How long the node holding the lock may leave its session idle before PostgreSQL
    /// ends it, and the lock with it (`idle_session_timeout`, PostgreSQL 14 or later). A
    /// holder's statements come milliseconds apart, a stint's batches one after another,
    /// so only a holder that froze is silent this long; the other nodes wait for it this
    /// long, no longer. Its next statement finds the session ended, and the node rebuilds
    /// its engine from the log, which another node may have written to meanwhile.
    pub const SILENCE: std::time::Duration = std::time::Duration::from_secs(5);

    /// The longest a statement here waits for its answer, a fresh connection's setup
    /// included. The lock's wait is the others' stints, or a frozen holder's
    /// [`SILENCE`](LockConnection::SILENCE); a batch's write takes milliseconds. Past it
    /// the connection is closed and the batch refused: a database that stops answering
    /// holds a node's commands this long, not until TCP gives up. It is shorter than a
    /// request's own limit (`--request-timeout-ms`, 10 s by default), so that a client is
    /// told the database is unavailable, and when to try again, not that it took too long.
    pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(8);

    /// Not connected yet: the first [`lock`](LockConnection::lock) connects.
    #[must_use]
    pub fn new() -> LockConnection {
        LockConnection {
            conn: None,
            held: false,
        }
    }

    /// Closes the connection, which lets go of the lock: after a failure under it, when
    /// what this node assumed about the log can no longer be trusted.
    pub fn close(&mut self) {
        self.conn = None;
        self.held = false;
    }

    /// Whether this node holds the lock.
    #[must_use]
    pub fn is_held(&self) -> bool {
        self.held
    }

    /// Closes the connection, and with it the lock, after a failure.
    fn fail<T>(&mut self, error: impl Into<StoreError>) -> Result<T, StoreError> {
        self.conn = None;
        self.held = false;
        Err(error.into())
    }

    /// Takes the lock (waiting for the node that holds it) and reads the log's head: when
    /// that is the last event this node wrote or applied, nobody committed since.
    ///
    /// # Errors
    /// On a database failure, or no answer within [`PATIENCE`](LockConnection::PATIENCE)
    /// (the connection is closed: nothing is held).
    pub async fn lock(&mut self, store: &Store) -> Result<u64, StoreError> {
        debug_assert!(!self.held, "the cluster lock is taken once");
        // A connection kept from an earlier stint may have died with its server meanwhile
        // (or been ended while idle): nothing is held, so one fresh connection is tried
        // before the batch is refused. Not after no answer: that try would wait as long.
        let reused = self.conn.is_some();
        match self.try_lock(store).await {
            Err(error @ (StoreError::Corrupt(_) | StoreError::NoAnswer { .. })) => Err(error),
            Err(_) if reused => self.try_lock(store).await,
            outcome => outcome,
        }
    }

    async fn try_lock(&mut self, store: &Store) -> Result<u64, StoreError> {
        let conn = &mut self.conn;
        let asked = super::within(Self::PATIENCE, "a request for the cluster lock", async {
            let conn = store.connected(conn, NAME).await?;
            Ok(sqlx::raw_sql(LOCK_AND_HEAD).fetch_all(conn).await?)
        })
        .await;
        let rows = match asked {
            Ok(rows) => rows,
            Err(error) => return self.fail(error),
        };
        self.held = true;
        match rows.as_slice() {
            [_lock, head] => match head.try_get(0) {
                Ok(head) => Ok(to_u64(head)),
                Err(error) => self.fail(error),
            },
            _ => {
                let found = rows.len();
                self.fail(StoreError::Corrupt(format!(
                    "the cluster lock answered {found} rows, not 2"
                )))
            }
        }
    }

    /// Lets go of the lock.
    ///
    /// # Errors
    /// On a database failure or no answer in time (the connection is closed, which lets go
    /// of it as well).
    pub async fn unlock(&mut self) -> Result<(), StoreError> {
        if !self.held {
            return Ok(());
        }
        let Some(conn) = self.conn.as_mut() else {
            self.held = false;
            return Ok(());
        };
        let unlocked = super::within(Self::PATIENCE, "the cluster lock's release", async {
            Ok(sqlx::raw_sql(UNLOCK).execute(conn).await?)
        });
        match unlocked.await {
            Ok(_) => {
                self.held = false;
                Ok(())
            }
            Err(error) => self.fail(error),
        }
    }

    /// Under the lock: the events after `after`, at most `limit` (the other nodes').
    ///
    /// # Errors
    /// On a database failure, no answer in time, or an event that does not decode (the
    /// connection is closed, and the lock let go).
    pub async fn events_after(
        &mut self,
        after: u64,
        limit: u32,
    ) -> Result<Vec<(Event, Vec<String>)>, StoreError> {
        let Some(conn) = self.conn.as_mut().filter(|_| self.held) else {
            return Err(StoreError::Closed("the cluster lock is not held"));
        };
        let read = Store::events_after(conn, after, limit);
        match super::within(Self::PATIENCE, "a read of the log", read).await {
            Ok(events) => Ok(events),
            Err(error) => self.fail(error),
        }
    }

    /// Under the lock: writes and commits one batch in one round trip, one statement in
    /// its own transaction ([`WRITE_BATCH`](super::log)), and announces it to the other
    /// nodes with its events ([`announce`](super::announce); delivered at its commit).
    ///
    /// # Errors
    /// On a database failure or no answer in time; the connection is closed, the lock let
    /// go, and whether the batch was committed is for the log to say (the engine is rebuilt
    /// from it).
    pub async fn commit(&mut self, commit: &Commit<'_>) -> Result<(), StoreError> {
        let rows = Rows::of(commit)?;
        let Some(conn) = self.conn.as_mut().filter(|_| self.held) else {
            return Err(StoreError::Closed("the cluster lock is not held"));
        };
        let announcements = super::announce::announcements(&commit.events);
        let write = Store::write_batch(conn, &rows, &announcements);
        match super::within(Self::PATIENCE, "a batch's write", write).await {
            Ok(()) => Ok(()),
            Err(error) => self.fail(error),
        }
    }
}

impl Default for LockConnection {
    fn default() -> Self {
        LockConnection::new()
    }
}

#[cfg(test)]
mod tests {
    use super::{LOCK_AND_HEAD, LockConnection, UNLOCK};

    /// The key every version of Triad has locked: nodes of two versions (a rolling
    /// upgrade) must take the same lock.
    #[test]
    fn the_lock_statements_take_and_release_the_cluster_lock() {
        let key = i64::from_be_bytes(*b"\0\0\0triad");
        assert_eq!(key, LockConnection::KEY);
        let call = format!("SELECT pg_advisory_lock({key}); ");
        assert!(LOCK_AND_HEAD.starts_with(&call), "{LOCK_AND_HEAD}");
        assert!(
            UNLOCK.starts_with(&format!("SELECT pg_advisory_unlock({key}); ")),
            "{UNLOCK}"
        );
    }

    /// The holder's session is ended after the silence the node allows it, and given back
    /// the server's own idle time when it lets go.
    #[test]
    fn the_lock_bounds_its_holders_silence_until_it_is_let_go() {
        let silence = LockConnection::SILENCE.as_millis();
        let bound = format!("; SET idle_session_timeout = {silence}; ");
        assert!(LOCK_AND_HEAD.contains(&bound), "{LOCK_AND_HEAD}");
        assert!(UNLOCK.ends_with("; RESET idle_session_timeout"), "{UNLOCK}");
        let patience = LockConnection::PATIENCE;
        assert!(
            patience > LockConnection::SILENCE,
            "a frozen holder is waited out"
        );
        let settings = crate::config::ServeArgs::default().resolve().unwrap();
        let request = std::time::Duration::from_millis(settings.request_timeout_ms);
        assert!(
            patience < request,
            "a request is refused before it times out"
        );
    }
}
