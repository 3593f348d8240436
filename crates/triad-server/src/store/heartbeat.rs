//! The service's heartbeat (`heartbeat`, migration 7): one row, written by every node about
//! once a second, which a node that starts reads to tell an outage of the whole service
//! (the clocks are then given the time back: [`crate::core`]'s outage) from its own
//! restart. When to beat and what an outage is are the core's; this module only reads and
//! writes the row.

use sqlx::Row;

use super::{Store, StoreError, close_after_failed_write, to_i64, to_u64};

/// The heartbeat as stored.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Heartbeat {
    /// The latest time a node was known to be alive, by its own clock.
    pub alive_ms: u64,
    /// How many beats all nodes have written: it moves while any node lives, even one
    /// whose clock stands still (the dev clock) or lags.
    pub beats: u64,
}

impl Store {
    /// The heartbeat, if any node ever wrote one.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn heartbeat(&self) -> Result<Option<Heartbeat>, StoreError> {
        let row = sqlx::query("SELECT alive_ms, beats FROM heartbeat WHERE id = 1")
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| {
            Ok(Heartbeat {
                alive_ms: to_u64(r.try_get(0)?),
                beats: to_u64(r.try_get(1)?),
            })
        })
        .transpose()
    }

    /// Records that this node is alive at `now_ms`: one beat more, and the time unless a
    /// node already wrote a later one (clocks differ a little between nodes).
    ///
    /// # Errors
    /// On a database failure.
    pub async fn beat(&self, now_ms: u64) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await?;
        let result = sqlx::query(
            "INSERT INTO heartbeat (id, alive_ms, beats) VALUES (1, $1, 1) \
             ON CONFLICT (id) DO UPDATE SET \
             alive_ms = CASE WHEN heartbeat.alive_ms < excluded.alive_ms \
                        THEN excluded.alive_ms ELSE heartbeat.alive_ms END, \
             beats = heartbeat.beats + 1",
        )
        .bind(to_i64(now_ms))
        .execute(&mut *conn)
        .await;
        if result.is_err() {
            close_after_failed_write(&mut conn);
        }
        result?;
        Ok(())
    }
}
