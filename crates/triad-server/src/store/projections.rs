//! The read models the commits keep: the `matches` table (a match as last stored, and the
//! listings), the `tournaments` that ended, and each player's `ledger_entries`.

use sqlx::Row;
use triad_engine::{Address, Match, MatchId, Tournament, TournamentId};

use super::{Store, StoreError, to_i64, to_u64};

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

impl Store {
    /// A finished match as stored since it ended: `matches` is the archive of finished
    /// matches; a live one is the engine's only (a row of a match that is live, left by a
    /// version that stored those, is as stale as it is old: ask the engine first, as
    /// `ApiState::match_view` does).
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn match_(&self, id: MatchId) -> Result<Option<Match>, StoreError> {
        let row = sqlx::query("SELECT body FROM matches WHERE id = $1")
            .bind(to_i64(id.0))
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| body(&r, || format!("match {id}"))).transpose()
    }

    /// Finished matches, newest first, optionally of one player, with ids below `before`
    /// (for paging). The live ones are the engine's (`ApiState::list_matches`).
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn list_finished_matches(
        &self,
        player: Option<Address>,
        before: Option<u64>,
        limit: u32,
    ) -> Result<Vec<Match>, StoreError> {
        let rows = sqlx::query(
            "SELECT m.body FROM matches m \
             WHERE (CAST($1 AS TEXT) IS NULL OR m.id IN (SELECT match_id FROM match_players WHERE address = CAST($1 AS TEXT))) \
             AND m.phase = 'finished' AND m.id < $2 \
             ORDER BY m.id DESC LIMIT CAST($3 AS BIGINT)",
        )
        .bind(player.map(|a| a.to_string()))
        .bind(to_i64(before.unwrap_or(u64::MAX)))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| body(r, || "an archived row".into()))
            .collect()
    }

    /// A tournament that ended (finished or cancelled), as archived by the batch that ended
    /// it. One still in the engine's memory is the engine's: ask it first, as the
    /// tournaments' API does.
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn ended_tournament(
        &self,
        id: TournamentId,
    ) -> Result<Option<Tournament>, StoreError> {
        let row = sqlx::query("SELECT body FROM tournaments WHERE id = $1")
            .bind(to_i64(id.0))
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| body(&r, || format!("tournament {id}")))
            .transpose()
    }

    /// The tournaments that ended, newest first, at most `limit`.
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn ended_tournaments(&self, limit: u32) -> Result<Vec<Tournament>, StoreError> {
        let rows =
            sqlx::query("SELECT body FROM tournaments ORDER BY id DESC LIMIT CAST($1 AS BIGINT)")
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?;
        rows.iter()
            .map(|r| body(r, || "an archived row".into()))
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
}

/// A row's first column, `body`: an archived match or tournament as JSON (`what` names it
/// when it does not decode).
fn body<T: serde::de::DeserializeOwned>(
    row: &sqlx::any::AnyRow,
    what: impl FnOnce() -> String,
) -> Result<T, StoreError> {
    let body: String = row.try_get(0)?;
    serde_json::from_str(&body).map_err(|e| StoreError::Corrupt(format!("{}: {e}", what())))
}
