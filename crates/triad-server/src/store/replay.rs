//! The log read back: the engine rebuilt from it at start (or after a failed commit), and
//! the events other nodes committed, which a node applies to follow the cluster.

use std::time::Instant;

use sqlx::Row;
use triad_engine::{Engine, Event};

use super::{
    Store, StoreError, to_i64, to_u64,
    topics::{EVENTS_AFTER, match_topic},
};

impl Store {
    /// The events after `after`, with the topics each was published on, oldest first, at
    /// most `limit`, read through `conn` in one statement ([`EVENTS_AFTER`]: one round
    /// trip, and one snapshot, under the cluster lock as outside it).
    ///
    /// # Errors
    /// On a database failure or a row that does not decode.
    pub async fn events_after(
        conn: &mut sqlx::AnyConnection,
        after: u64,
        limit: u32,
    ) -> Result<Vec<(Event, Vec<String>)>, StoreError> {
        let rows = sqlx::query(EVENTS_AFTER)
            .bind(to_i64(after))
            .bind(i64::from(limit))
            .fetch_all(&mut *conn)
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let seq: i64 = row.try_get(0)?;
            let body: String = row.try_get(1)?;
            let match_id: Option<i64> = row.try_get(2)?;
            let stored: Option<String> = row.try_get(3)?;
            let derived: Option<String> = row.try_get(4)?;
            let event: Event = serde_json::from_str(&body)
                .map_err(|e| StoreError::Corrupt(format!("event {seq}: {e}")))?;
            let mut topics: Vec<String> = [stored, derived]
                .iter()
                .flatten()
                .flat_map(|list| list.split('\n'))
                .map(str::to_owned)
                .chain(match_id.map(|id| match_topic(to_u64(id))))
                .collect();
            // A database may hold an inbox row that is also derived: each topic once.
            topics.sort_unstable();
            topics.dedup();
            out.push((event, topics));
        }
        Ok(out)
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
