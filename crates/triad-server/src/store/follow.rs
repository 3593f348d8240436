//! The connection a node follows the log on outside the cluster lock (PostgreSQL): the
//! reads that bring its engine up to what other nodes committed before an API read
//! (`Core::catch_up`, which makes one read at a time and shares it among its callers).
//!
//! It is a connection of the node's own, not the pool's, because a pooled statement waits
//! for two round trips and holds its connection for three: sqlx pings a connection when it
//! is taken (`test_before_acquire`, so that one cut while idle is not handed out) and again
//! when it goes back. Here a read is its one statement. What the pings were for is done
//! by trying once more: a read that fails on a connection kept from an earlier read (the
//! server restarted, the network cut it) is sent again on a fresh one, which a read of the
//! log, changing nothing, can be.
//!
//! A try is bounded ([`FollowConnection::PATIENCE`], the connection's setup included): the
//! readers wait behind the one read under way, and a database that stops answering (a
//! network that drops packets rather than the connection) must not hold them for as long
//! as TCP takes to give up. Past it they read the node's state as it is.

use triad_engine::Event;

use super::{Store, StoreError};

/// The connection's name in `pg_stat_activity`.
const NAME: &str = "triad follow";

/// A node's connection for reading the log outside the cluster lock; connected at its
/// first read.
#[derive(Default)]
pub struct FollowConnection {
    conn: Option<sqlx::AnyConnection>,
}

impl std::fmt::Debug for FollowConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FollowConnection")
            .field("connected", &self.conn.is_some())
            .finish()
    }
}

impl FollowConnection {
    /// The longest one try waits for the database: its connection, when it makes one, and
    /// its read. A read of the log's tail takes milliseconds; one read lasts at most twice
    /// this (a kept connection, then a fresh one).
    pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

    /// Not connected yet: the first read connects.
    #[must_use]
    pub fn new() -> FollowConnection {
        FollowConnection::default()
    }

    /// The events after `after`, at most `limit`, with their topics ([`Store::events_after`]:
    /// one statement, one snapshot). A read that fails on a connection kept from before, or
    /// is not answered within [`PATIENCE`](FollowConnection::PATIENCE), is sent once more
    /// on a fresh one; an event that does not decode is not read again.
    ///
    /// # Errors
    /// On a database failure or no answer in time (the connection is closed, and the next
    /// read connects afresh), or an event that does not decode.
    pub async fn events_after(
        &mut self,
        store: &Store,
        after: u64,
        limit: u32,
    ) -> Result<Vec<(Event, Vec<String>)>, StoreError> {
        let reused = self.conn.is_some();
        match self.try_events_after(store, after, limit).await {
            Err(StoreError::Corrupt(text)) => Err(StoreError::Corrupt(text)),
            Err(error) if reused => {
                tracing::debug!(%error, "the log's connection failed; reading on a fresh one");
                self.try_events_after(store, after, limit).await
            }
            outcome => outcome,
        }
    }

    async fn try_events_after(
        &mut self,
        store: &Store,
        after: u64,
        limit: u32,
    ) -> Result<Vec<(Event, Vec<String>)>, StoreError> {
        let conn = &mut self.conn;
        let read = super::within(Self::PATIENCE, "a read of the log", async {
            Store::events_after(store.connected(conn, NAME).await?, after, limit).await
        })
        .await;
        // A read cut short leaves its connection halfway through the exchange.
        if read.is_err() {
            self.conn = None;
        }
        read
    }
}
