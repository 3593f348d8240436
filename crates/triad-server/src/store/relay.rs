//! The agents' relay's tables: `agent_games`, which engine match plays each agents' game,
//! and `agent_messages`, every address's inbox.
//!
//! A game is keyed by its two addresses, sorted, so that either side finds it;
//! a message is stored once under its dedupe key, and message ids commit in id order on
//! every backend (with PostgreSQL, under an advisory lock held to the commit).

use sqlx::Row;
use triad_engine::{Address, MatchId};
use triad_protocol::{App, GameId};

use super::{Store, StoreError, to_i64, to_u64};

/// The channel on which a node announces an agents' message it stored, as
/// `<node> <recipient> <id>`: the other nodes deliver it to their own subscribers.
pub const APPS_CHANNEL: &str = "triad_apps";

/// The key of the PostgreSQL advisory lock that orders agents' messages across nodes.
const APPS_LOCK: i64 = 0x7472_6961_6401;

/// An agents' game: the engine match that plays it.
#[derive(Clone, Debug)]
pub struct AgentGame {
    /// The engine match.
    pub match_id: MatchId,
    /// The app the game is played in.
    pub app: App,
    /// The game's id, if the proposal named one.
    pub game_id: Option<GameId>,
    /// Who proposed it.
    pub proposer: Address,
}

/// A message to store in `recipient`'s inbox.
#[derive(Debug)]
pub struct NewAgentMessage<'a> {
    /// The recipient.
    pub recipient: Address,
    /// The sender.
    pub sender: Address,
    /// The app.
    pub app: App,
    /// The action's id (`propose`, `accept`, `move`, `result`).
    pub action: &'a str,
    /// The payload, canonical JSON.
    pub payload: &'a str,
    /// The sender's signature, JSON, if it signed.
    pub signed: Option<&'a str>,
    /// The engine match that referees the game.
    pub match_id: MatchId,
    /// The message is stored once under this key.
    pub dedupe_key: &'a str,
    /// When it was stored (ms since the epoch).
    pub created_ms: u64,
}

/// A stored message, as its row has it.
#[derive(Debug)]
pub struct AgentMessageRow {
    /// The message's number: the inbox cursor.
    pub id: u64,
    /// The sender's address.
    pub sender: String,
    /// The app's id.
    pub app_id: String,
    /// The action's id.
    pub action: String,
    /// The payload, canonical JSON.
    pub payload: String,
    /// The sender's signature, JSON, if it signed.
    pub signed: Option<String>,
    /// The engine match that referees the game.
    pub match_id: Option<u64>,
    /// When it was stored (ms since the epoch).
    pub created_ms: u64,
}

/// The two addresses of a game, sorted: the same key whoever sends.
fn pair(a: Address, b: Address) -> String {
    let (low, high) = if a <= b { (a, b) } else { (b, a) };
    format!("{low} {high}")
}

/// An `agent_games` row (`match_id, app_id, game_id, proposer`).
fn game_of_row(row: &sqlx::any::AnyRow) -> Result<AgentGame, StoreError> {
    let corrupt = |what: &str| StoreError::Corrupt(format!("agent_games row: {what}"));
    let match_id: i64 = row.try_get(0).map_err(|_| corrupt("match_id"))?;
    let app: String = row.try_get(1).map_err(|_| corrupt("app_id"))?;
    let game_id: Option<String> = row.try_get(2).map_err(|_| corrupt("game_id"))?;
    let proposer: String = row.try_get(3).map_err(|_| corrupt("proposer"))?;
    Ok(AgentGame {
        match_id: MatchId(to_u64(match_id)),
        app: App::from_id(&app).map_err(|_| corrupt("app_id"))?,
        game_id: game_id
            .map(|g| GameId::new(&g))
            .transpose()
            .map_err(|_| corrupt("game_id"))?,
        proposer: proposer.parse().map_err(|_| corrupt("proposer"))?,
    })
}

impl Store {
    /// The agents' game of `a` and `b` with this gameId, or, without one, their latest.
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn agent_game(
        &self,
        a: Address,
        b: Address,
        game_id: Option<&GameId>,
    ) -> Result<Option<AgentGame>, StoreError> {
        let row = match game_id {
            Some(id) => {
                sqlx::query(
                    "SELECT match_id, app_id, game_id, proposer FROM agent_games \
                     WHERE pair = $1 AND game_id = $2",
                )
                .bind(pair(a, b))
                .bind(id.as_str())
                .fetch_optional(self.pool())
                .await?
            }
            None => {
                sqlx::query(
                    "SELECT match_id, app_id, game_id, proposer FROM agent_games \
                     WHERE pair = $1 ORDER BY match_id DESC LIMIT 1",
                )
                .bind(pair(a, b))
                .fetch_optional(self.pool())
                .await?
            }
        };
        row.as_ref().map(game_of_row).transpose()
    }

    /// The agents' game a match plays, if the relay recorded one.
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn agent_game_of_match(&self, id: MatchId) -> Result<Option<AgentGame>, StoreError> {
        let row = sqlx::query(
            "SELECT match_id, app_id, game_id, proposer FROM agent_games WHERE match_id = $1",
        )
        .bind(to_i64(id.0))
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(game_of_row).transpose()
    }

    /// Records that `game` (proposed by its `proposer` to `to`) is played by its match;
    /// `false` when its gameId is already another game's of the pair (two proposals with
    /// the same id crossed). Recording the same match again is `true`.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn insert_agent_game(
        &self,
        game: &AgentGame,
        to: Address,
        created_ms: u64,
    ) -> Result<bool, StoreError> {
        let inserted = sqlx::query(
            "INSERT INTO agent_games (match_id, app_id, game_id, pair, proposer, created_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
        )
        .bind(to_i64(game.match_id.0))
        .bind(game.app.id())
        .bind(game.game_id.as_ref().map(GameId::as_str))
        .bind(pair(game.proposer, to))
        .bind(game.proposer.to_string())
        .bind(to_i64(created_ms))
        .execute(self.pool())
        .await?
        .rows_affected();
        if inserted == 1 {
            return Ok(true);
        }
        // Nothing inserted: the match was recorded already (a resend), or the id is taken.
        let recorded = sqlx::query("SELECT 1 FROM agent_games WHERE match_id = $1")
            .bind(to_i64(game.match_id.0))
            .fetch_optional(self.pool())
            .await?;
        Ok(recorded.is_some())
    }

    /// Stores a message once (by its dedupe key): `(id, false)` for a new one, `(id, true)`
    /// for one stored before. Ids commit in order; with a shared database a new message is
    /// announced on [`APPS_CHANNEL`] in the same transaction, as sent by `node`. The caller
    /// keeps this node's own stores and deliveries in order.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn insert_agent_message(
        &self,
        message: &NewAgentMessage<'_>,
        node: &str,
    ) -> Result<(u64, bool), StoreError> {
        let mut tx = self.pool().begin().await?;
        if self.is_shared() {
            // Across nodes too, ids commit in order: one writer of messages at a time.
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(APPS_LOCK)
                .execute(&mut *tx)
                .await?;
        }
        let inserted = sqlx::query(
            "INSERT INTO agent_messages \
             (recipient, sender, app_id, action, payload, signed, match_id, dedupe_key, created_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id",
        )
        .bind(message.recipient.to_string())
        .bind(message.sender.to_string())
        .bind(message.app.id())
        .bind(message.action)
        .bind(message.payload)
        .bind(message.signed)
        .bind(to_i64(message.match_id.0))
        .bind(message.dedupe_key)
        .bind(to_i64(message.created_ms))
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(row) = inserted {
            let id = to_u64(row.try_get::<i64, _>(0)?);
            if self.is_shared() {
                sqlx::query("SELECT pg_notify($1, $2)")
                    .bind(APPS_CHANNEL)
                    .bind(format!("{node} {} {id}", message.recipient))
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            return Ok((id, false));
        }
        tx.rollback().await?;
        let row = sqlx::query("SELECT id FROM agent_messages WHERE dedupe_key = $1")
            .bind(message.dedupe_key)
            .fetch_one(self.pool())
            .await?;
        Ok((to_u64(row.try_get::<i64, _>(0)?), true))
    }

    /// The messages of `recipient`'s inbox after `after`, oldest first, at most `limit`.
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn agent_inbox(
        &self,
        recipient: Address,
        after: u64,
        limit: u32,
    ) -> Result<Vec<AgentMessageRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, sender, app_id, action, payload, signed, match_id, created_ms \
             FROM agent_messages WHERE recipient = $1 AND id > $2 ORDER BY id LIMIT CAST($3 AS BIGINT)",
        )
        .bind(recipient.to_string())
        .bind(to_i64(after))
        .bind(i64::from(limit))
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|row| {
                Ok(AgentMessageRow {
                    id: to_u64(row.try_get(0)?),
                    sender: row.try_get(1)?,
                    app_id: row.try_get(2)?,
                    action: row.try_get(3)?,
                    payload: row.try_get(4)?,
                    signed: row.try_get(5)?,
                    match_id: row.try_get::<Option<i64>, _>(6)?.map(to_u64),
                    created_ms: to_u64(row.try_get(7)?),
                })
            })
            .collect()
    }
}

/// A signed message of an agents' game, for its match's transcript.
#[derive(Debug)]
pub struct SignedMessage {
    /// The sender's address.
    pub sender: String,
    /// The recipient's address.
    pub recipient: String,
    /// The app's id.
    pub app_id: String,
    /// The action's id.
    pub action: String,
    /// The payload, canonical JSON: what the signature covers.
    pub payload: String,
    /// The sender's signature, JSON (`{"publicKey", "signature"}`).
    pub signed: String,
}

impl Store {
    /// The signed messages that the players `players` sent each other in the agents' game
    /// refereed by match `id`, in the order they were stored. Read through the inbox index
    /// of the two players, so the cost is their messages', not the whole table's.
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn signed_messages_of_match(
        &self,
        id: MatchId,
        players: [Address; 2],
    ) -> Result<Vec<SignedMessage>, StoreError> {
        let rows = sqlx::query(
            "SELECT sender, recipient, app_id, action, payload, signed FROM agent_messages \
             WHERE recipient IN ($1, $2) AND match_id = $3 AND signed IS NOT NULL ORDER BY id",
        )
        .bind(players[0].to_string())
        .bind(players[1].to_string())
        .bind(to_i64(id.0))
        .fetch_all(self.pool())
        .await?;
        rows.into_iter()
            .map(|row| {
                Ok(SignedMessage {
                    sender: row.try_get(0)?,
                    recipient: row.try_get(1)?,
                    app_id: row.try_get(2)?,
                    action: row.try_get(3)?,
                    payload: row.try_get(4)?,
                    signed: row.try_get(5)?,
                })
            })
            .collect()
    }
}
