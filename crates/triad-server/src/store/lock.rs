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

use sqlx::Row as _;

use triad_engine::Event;

use super::{Commit, Store, StoreError, log::Rows, to_u64};

/// Takes the lock, waiting for it, then reads the log's head, in one round trip: two
/// statements in one simple query (which binds nothing, so the key is written out:
/// 0x7472696164, "triad" in ASCII, which every version of Triad takes; session- and
/// transaction-level advisory locks on one key exclude each other, so a rolling upgrade
/// from a node that took it per transaction stays serialised). Each
/// statement reads its own snapshot (the session is READ COMMITTED), so the head is read
/// after the lock is granted and sees every batch committed before it.
pub(super) const LOCK_AND_HEAD: &str = "SELECT pg_advisory_lock(500135715172); \
     SELECT COALESCE(MAX(seq), 0) FROM events";

/// Lets go of the lock.
const UNLOCK: &str = "SELECT pg_advisory_unlock(500135715172)";

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

    async fn connection(&mut self, store: &Store) -> Result<&mut sqlx::AnyConnection, StoreError> {
        if self.conn.is_none() {
            self.conn = Some(store.own_connection(NAME).await?);
        }
        self.conn
            .as_mut()
            .ok_or(StoreError::Closed("the cluster lock's connection is gone"))
    }

    /// Takes the lock (waiting for the node that holds it) and reads the log's head: when
    /// that is the last event this node wrote or applied, nobody committed since.
    ///
    /// # Errors
    /// On a database failure (the connection is closed: nothing is held).
    pub async fn lock(&mut self, store: &Store) -> Result<u64, StoreError> {
        debug_assert!(!self.held, "the cluster lock is taken once");
        // A connection kept from an earlier stint may have died with its server meanwhile:
        // nothing is held, so one fresh connection is tried before the batch is refused.
        let reused = self.conn.is_some();
        match self.try_lock(store).await {
            Err(StoreError::Corrupt(text)) => Err(StoreError::Corrupt(text)),
            Err(_) if reused => self.try_lock(store).await,
            outcome => outcome,
        }
    }

    async fn try_lock(&mut self, store: &Store) -> Result<u64, StoreError> {
        let conn = match self.connection(store).await {
            Ok(conn) => conn,
            Err(error) => return self.fail(error),
        };
        let rows = match sqlx::raw_sql(LOCK_AND_HEAD).fetch_all(conn).await {
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
    /// On a database failure (the connection is closed, which lets go of it as well).
    pub async fn unlock(&mut self) -> Result<(), StoreError> {
        if !self.held {
            return Ok(());
        }
        let Some(conn) = self.conn.as_mut() else {
            self.held = false;
            return Ok(());
        };
        match sqlx::query(UNLOCK).execute(conn).await {
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
    /// On a database failure or an event that does not decode (either way the connection
    /// is closed, and the lock let go).
    pub async fn events_after(
        &mut self,
        after: u64,
        limit: u32,
    ) -> Result<Vec<(Event, Vec<String>)>, StoreError> {
        let Some(conn) = self.conn.as_mut().filter(|_| self.held) else {
            return Err(StoreError::Closed("the cluster lock is not held"));
        };
        match Store::events_after(conn, after, limit).await {
            Ok(events) => Ok(events),
            Err(error) => self.fail(error),
        }
    }

    /// Under the lock: writes and commits one batch in one round trip, one statement in
    /// its own transaction ([`WRITE_BATCH`](super::log)), and announces it to the other
    /// nodes with its events ([`announce`](super::announce); delivered at its commit).
    ///
    /// # Errors
    /// On a database failure; the connection is closed, the lock let go, and whether the
    /// batch was committed is for the log to say (the engine is rebuilt from it).
    pub async fn commit(&mut self, commit: &Commit<'_>) -> Result<(), StoreError> {
        let rows = Rows::of(commit)?;
        let Some(conn) = self.conn.as_mut().filter(|_| self.held) else {
            return Err(StoreError::Closed("the cluster lock is not held"));
        };
        let announcements = super::announce::announcements(&commit.events);
        match Store::write_batch(conn, &rows, &announcements).await {
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
    use super::{LOCK_AND_HEAD, UNLOCK};

    /// The key every version of Triad has locked: nodes of two versions (a rolling
    /// upgrade) must take the same lock.
    #[test]
    fn the_lock_statements_take_and_release_the_cluster_lock() {
        let key = i64::from_be_bytes(*b"\0\0\0triad");
        assert_eq!(key, 0x0074_7269_6164);
        let call = format!("SELECT pg_advisory_lock({key}); ");
        assert!(LOCK_AND_HEAD.starts_with(&call), "{LOCK_AND_HEAD}");
        assert_eq!(UNLOCK, format!("SELECT pg_advisory_unlock({key})"));
    }
}
