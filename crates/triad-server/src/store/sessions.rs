//! Sessions (a login's token, by its hash) and used login challenges, shared by every node
//! of the database, and their purge once expired.

use std::collections::HashSet;

use sqlx::{Row, pool::PoolConnection};
use triad_engine::Address;

use super::{SESSIONS_CHANNEL, Store, StoreError, close_after_failed_write, to_i64, to_u64};

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

impl Store {
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
}
