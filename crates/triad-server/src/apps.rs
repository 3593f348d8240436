//! The agents' relay and referee: seed 4's app messages between addresses.
//!
//! Every address has an inbox. An agent sends `{to, appId, action, payload}` (optionally
//! signed, [`triad_protocol::envelope`]); the relay decodes it strictly, checks it as seed
//! 4's rules say against the game's engine match, has the engine referee it, stores it and
//! delivers it to the recipient's inbox (long-poll and the WebSocket topic `apps`).
//!
//! **An agents' game is an engine match**, so the engine stays the one source of truth and
//! the hall of fame and the ratings come from its events, as for every other match:
//!
//! | message | engine command |
//! |---|---|
//! | `propose {role}` | `Challenge {opponent: to, stake: 0, first: challenger if role is X/first, else opponent}` |
//! | `accept {role}` | `AcceptChallenge` (the role must be the one the proposal left) |
//! | `move {seq, position, mark, …}` | `Move {seq, cell: position, mark}`, after [`triad_protocol::check_move`] against the match's board |
//! | `result` win/draw | none: the match already ended with the move; the declaration must agree ([`triad_protocol::check_result`]) |
//! | `result` abort | `Abort` while the game is on; `Cancel` (proposer) or `DeclineChallenge` before it is accepted |
//!
//! A message the rules refuse is refused to its sender with the reason (an API error with a
//! stable code) and never delivered. A resend of a message already relayed is answered with
//! `duplicate: true` and delivered once. A send is acknowledged only after the engine's events
//! and the message are both durable; if the two commits are cut apart by a crash, the
//! sender's retry completes the send (the engine recognises its own move, proposal or
//! acceptance, and the message is stored once).

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use serde::Serialize;
use sqlx::Row;
use tokio::sync::watch;
use triad_engine::{
    Address, Command, Duplicate, EndReason, EngineError, IdempotencyKey, Match, MatchId, Phase,
    StartChoice, Terms,
};
use triad_protocol::{
    App, GameId, GameResult, Message, Outcome, Payload, ProtocolError, Signed, check_move, envelope,
};
use triad_rules::{AnyGame, Player};
use utoipa::ToSchema;

use crate::api::{
    AppState,
    error::{Api, ApiError},
};

/// Waiters for new messages, per address (long-poll), and the order of delivery.
#[derive(Debug, Default)]
pub struct Relay {
    waiters: Mutex<HashMap<Address, watch::Sender<u64>>>,
    /// Held while a message is stored and published, so that messages are committed and
    /// published in `id` order: a reader that has seen an id has seen every smaller one
    /// (with PostgreSQL, ids from a sequence could otherwise commit out of order), and a
    /// WebSocket, which skips ids it has passed, never skips one that comes late.
    writer: tokio::sync::Mutex<()>,
    /// This node's name in the `triad_apps` notifications, so it skips its own.
    node: std::sync::OnceLock<String>,
}

impl Relay {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Address, watch::Sender<u64>>> {
        self.waiters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// This node's random name (several nodes may share a PostgreSQL database).
    pub fn node_id(&self) -> &str {
        self.node.get_or_init(|| {
            let mut bytes = [0u8; 8];
            let _ = rand::TryRng::try_fill_bytes(&mut rand::rngs::SysRng, &mut bytes);
            hex::encode(bytes)
        })
    }

    /// A receiver that changes when `address` gets a message. Subscribe before reading the
    /// inbox, so that a message stored in between is not missed.
    pub fn watch(&self, address: Address) -> watch::Receiver<u64> {
        self.lock()
            .entry(address)
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    /// Wakes the waiters of `address`; forgets addresses nobody waits on.
    fn notify(&self, address: Address, id: u64) {
        let mut waiters = self.lock();
        if let Some(sender) = waiters.get(&address) {
            sender.send_replace(id);
        }
        waiters.retain(|_, s| s.receiver_count() > 0);
    }
}

/// A message in an inbox, as the API and the WebSocket show it (seed 4's field names).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InboxMessage {
    /// The message's number: the inbox cursor (`after`).
    pub id: u64,
    /// The sender's address.
    pub from: String,
    /// The recipient's address.
    pub to: String,
    /// `tic-tac-toe` or `sos`.
    pub app_id: String,
    /// `propose`, `accept`, `move` or `result`.
    pub action: String,
    /// The payload, in the seed's shape and field order.
    #[schema(value_type = Object)]
    pub payload: Payload,
    /// The sender's signature, when it signed the message.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub signed: Option<Signed>,
    /// The engine match that referees the game.
    pub match_id: Option<u64>,
    /// When the relay stored it (ms since the epoch).
    pub sent_at_ms: u64,
}

/// What a send did.
#[derive(Debug)]
pub struct Sent {
    /// The message's number in the recipient's inbox.
    pub id: u64,
    /// Whether the message had already been relayed (this was a resend).
    pub duplicate: bool,
    /// The game's engine match.
    pub match_id: MatchId,
}

/// A send: the seed's `{to, appId, action, payload}`, and an optional signature.
#[derive(Clone, Debug)]
pub struct Outgoing {
    /// The recipient.
    pub to: Address,
    /// The app.
    pub app: App,
    /// The decoded message.
    pub message: Message,
    /// The sender's signature of it.
    pub signed: Option<Signed>,
    /// For an acceptance: the match of the proposal the sender saw and accepts, if it says.
    pub seen: Option<MatchId>,
}

/// An agents' game: the engine match that plays it.
#[derive(Clone, Debug)]
struct AgentGame {
    match_id: MatchId,
    app: App,
    game_id: Option<GameId>,
    proposer: Address,
}

/// The key of the PostgreSQL advisory lock that orders agents' messages across nodes.
const APPS_LOCK: i64 = 0x7472_6961_6401;

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// The two addresses of a game, sorted: the same key whoever sends.
fn pair(a: Address, b: Address) -> String {
    let (low, high) = if a <= b { (a, b) } else { (b, a) };
    format!("{low} {high}")
}

fn no_game(to: Address, app: App, game_id: Option<&GameId>) -> ApiError {
    let which = game_id.map_or_else(String::new, |id| format!(" with gameId {id}"));
    ApiError::with_message(
        Api::NoGame,
        format!("you have no {app} game{which} with {to}; propose one first"),
    )
}

fn game_id_text(id: Option<&GameId>) -> String {
    id.map_or_else(|| "none".to_owned(), ToString::to_string)
}

/// The latest game of the pair, or the one with this gameId.
async fn find_game(
    state: &AppState,
    me: Address,
    to: Address,
    game_id: Option<&GameId>,
) -> Result<Option<AgentGame>, ApiError> {
    let pool = state.store.pool();
    let row = match game_id {
        Some(id) => {
            sqlx::query(
                "SELECT match_id, app_id, game_id, proposer FROM agent_games \
                 WHERE pair = $1 AND game_id = $2",
            )
            .bind(pair(me, to))
            .bind(id.as_str())
            .fetch_optional(pool)
            .await
        }
        None => {
            sqlx::query(
                "SELECT match_id, app_id, game_id, proposer FROM agent_games \
                 WHERE pair = $1 ORDER BY match_id DESC LIMIT 1",
            )
            .bind(pair(me, to))
            .fetch_optional(pool)
            .await
        }
    }
    .map_err(|e| ApiError::from(crate::store::StoreError::from(e)))?;
    row.as_ref().map(game_of_row).transpose()
}

/// The agents' game a match plays, if the relay recorded one.
async fn recorded_game(state: &AppState, id: MatchId) -> Result<Option<AgentGame>, ApiError> {
    let row = sqlx::query(
        "SELECT match_id, app_id, game_id, proposer FROM agent_games WHERE match_id = $1",
    )
    .bind(to_i64(id.0))
    .fetch_optional(state.store.pool())
    .await
    .map_err(storage)?;
    row.as_ref().map(game_of_row).transpose()
}

/// An `agent_games` row (`match_id, app_id, game_id, proposer`).
fn game_of_row(row: &sqlx::any::AnyRow) -> Result<AgentGame, ApiError> {
    let corrupt = |what: &str| {
        ApiError::from(crate::store::StoreError::Corrupt(format!(
            "agent_games row: {what}"
        )))
    };
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

/// Records which match plays the pair's game; `false` when the gameId is already another
/// game's (two proposals with the same id crossed).
async fn insert_game(
    state: &AppState,
    match_id: MatchId,
    app: App,
    game_id: Option<&GameId>,
    me: Address,
    to: Address,
) -> Result<bool, ApiError> {
    let pool = state.store.pool();
    let inserted = sqlx::query(
        "INSERT INTO agent_games (match_id, app_id, game_id, pair, proposer, created_ms) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
    )
    .bind(to_i64(match_id.0))
    .bind(app.id())
    .bind(game_id.map(GameId::as_str))
    .bind(pair(me, to))
    .bind(me.to_string())
    .bind(to_i64(state.core.clock().now_ms()))
    .execute(pool)
    .await
    .map_err(storage)?
    .rows_affected();
    if inserted == 1 {
        return Ok(true);
    }
    // Nothing inserted: the match was recorded already (a resend), or the id is taken.
    let recorded = sqlx::query("SELECT 1 FROM agent_games WHERE match_id = $1")
        .bind(to_i64(match_id.0))
        .fetch_optional(pool)
        .await
        .map_err(storage)?;
    Ok(recorded.is_some())
}

fn game_id_taken(to: Address, game_id: Option<&GameId>) -> ApiError {
    ApiError::with_message(
        Api::GameIdTaken,
        format!(
            "you and {to} already have a game with gameId {}; choose a new gameId",
            game_id_text(game_id)
        ),
    )
}

/// A match as it is now: from the engine while it holds it, else from the database.
async fn match_of(state: &AppState, id: MatchId) -> Result<Match, ApiError> {
    if let Some(m) = state.core.read().await.match_(id) {
        return Ok(m.clone());
    }
    state
        .store
        .match_(id)
        .await?
        .ok_or_else(|| ApiError::from(EngineError::UnknownMatch))
}

/// The game this message belongs to: the pair's game with its gameId, or their latest.
async fn game_for(
    state: &AppState,
    me: Address,
    to: Address,
    app: App,
    game_id: Option<&GameId>,
) -> Result<AgentGame, ApiError> {
    let game = find_game(state, me, to, game_id)
        .await?
        .ok_or_else(|| no_game(to, app, game_id))?;
    if game.game_id.as_ref() != game_id {
        return Err(ProtocolError::GameIdMismatch {
            expected: game_id_text(game.game_id.as_ref()),
            got: game_id_text(game_id),
        }
        .into());
    }
    if game.app != app {
        return Err(no_game(to, app, game_id));
    }
    Ok(game)
}

/// Relays one message from `me`: checks it, has the engine referee it, stores it and
/// delivers it.
///
/// # Errors
/// The protocol's, the rules' or the engine's refusal, with its stable code; or a storage
/// failure (then retry: the send is idempotent).
pub async fn send(
    state: &AppState,
    me: Address,
    out: Outgoing,
    key: Option<IdempotencyKey>,
) -> Result<Sent, ApiError> {
    let Outgoing {
        to,
        app,
        message,
        signed,
        seen,
    } = out;
    if to.is_zero() {
        return Err(EngineError::ZeroAddress.into());
    }
    if to == me {
        return Err(EngineError::SelfPlay.into());
    }
    if let Some(signed) = &signed {
        envelope::verify(signed, me.as_bytes(), to.as_bytes(), app, &message)?;
    }
    let match_id = match &message {
        Message::Propose(p) => propose(state, me, to, app, p, key).await?,
        Message::Accept(a) => accept(state, me, to, app, a, seen, key).await?,
        Message::Move(m) => play(state, me, to, app, m, key).await?,
        Message::Result(r) => declare(state, me, to, app, r, key).await?,
    };
    let (id, duplicate) =
        store_message(state, me, to, app, &message, signed.as_ref(), match_id).await?;
    Ok(Sent {
        id,
        duplicate,
        match_id,
    })
}

fn first_of(role: Player) -> StartChoice {
    match role {
        Player::First => StartChoice::Challenger,
        Player::Second => StartChoice::Opponent,
    }
}

/// The proposer's role in a challenge.
fn proposer_role(m: &Match) -> Option<Player> {
    m.challenge.map(|c| match c.first {
        StartChoice::Challenger => Player::First,
        // Agents' games never use `Random`; a challenge made through the REST API with it
        // is taken by the seat the proposer got.
        StartChoice::Opponent => Player::Second,
        StartChoice::Random => m.player_of(c.challenger).unwrap_or(Player::First),
    })
}

/// Whether `m` is a proposal of `app` from `me` to `to` with `role`: a free challenge
/// between them, of that game, in which the proposer moves as `role` says (never at
/// random). Only such a match is ever an agents' game: the relay proposes nothing else,
/// and takes up or answers with nothing else.
fn is_proposal(m: &Match, me: Address, to: Address, app: App, role: Player) -> bool {
    proposal_differs(m, me, to, app, role).is_none()
}

/// The first term in which `m` is not a proposal of `app` from `me` to `to` with `role`
/// ([`is_proposal`]), by name: one of [`free_game_terms`], or "opponent".
fn proposal_differs(
    m: &Match,
    me: Address,
    to: Address,
    app: App,
    role: Player,
) -> Option<&'static str> {
    let challenge = m.challenge;
    free_game_terms(app, me, role)
        .differs_from(
            m.stake,
            m.game(),
            challenge.map_or(Address::ZERO, |c| c.challenger),
            challenge.map_or(StartChoice::Random, |c| c.first),
        )
        .or_else(|| {
            challenge
                .is_none_or(|c| c.opponent != to)
                .then_some("opponent")
        })
}

/// The terms of an agents' game of `app` proposed by `proposer` as `role`: free, that
/// game, that proposer, the first move as the role says. An acceptance through the relay
/// states exactly these, so the engine refuses it for any other match.
fn free_game_terms(app: App, proposer: Address, role: Player) -> Terms {
    Terms {
        stake: Some(0),
        game: Some(app.game()),
        challenger: Some(proposer),
        first: Some(first_of(role)),
    }
}

/// The proposal an `Idempotency-Key` made, for a resend under that key: this message must
/// be that proposal (the same pair, app, role and gameId), or it is refused (119) as a
/// reuse of the key. The answer is the key's own match even after the game was called off.
async fn resent_proposal(
    state: &AppState,
    me: Address,
    to: Address,
    app: App,
    p: &triad_protocol::Propose,
    id: MatchId,
) -> Result<MatchId, ApiError> {
    let m = match_of(state, id).await?;
    let recorded = recorded_game(state, id).await?;
    let same = is_proposal(&m, me, to, app, p.role)
        && recorded
            .as_ref()
            .is_none_or(|g| g.proposer == me && g.app == app && g.game_id == p.game_id);
    if !same {
        return Err(EngineError::IdempotencyKeyReused.into());
    }
    Ok(id)
}

async fn propose(
    state: &AppState,
    me: Address,
    to: Address,
    app: App,
    p: &triad_protocol::Propose,
    key: Option<IdempotencyKey>,
) -> Result<MatchId, ApiError> {
    // A resend of a proposal still waiting is the same proposal.
    if let Some(game) = find_game(state, me, to, p.game_id.as_ref()).await? {
        let m = match_of(state, game.match_id).await?;
        let same = game.proposer == me
            && game.app == app
            && game.game_id == p.game_id
            && proposer_role(&m) == Some(p.role);
        if same && m.phase == Phase::Waiting {
            return Ok(game.match_id);
        }
        if p.game_id.is_some() {
            return Err(game_id_taken(to, p.game_id.as_ref()));
        }
    }
    let command = Command::Challenge {
        opponent: to,
        game: app.game(),
        stake: 0,
        first: first_of(p.role),
    };
    let match_id = match state.core.execute(me, command, key).await {
        Ok(receipt) => match receipt.duplicate {
            // A resend under the same Idempotency-Key: the proposal that key made, if this
            // is that proposal; never whatever match the proposer has now.
            Some(Duplicate::Command {
                match_id: Some(id), ..
            }) => resent_proposal(state, me, to, app, p, id).await?,
            Some(_) => return Err(EngineError::IdempotencyKeyReused.into()),
            None => receipt
                .events
                .iter()
                .find_map(triad_engine::Event::match_id)
                .ok_or_else(|| no_game(to, app, p.game_id.as_ref()))?,
        },
        // A proposal the engine took before a crash cut it from its message: take it up.
        Err(crate::core::CoreError::Engine(EngineError::AlreadyInMatch { match_id })) => {
            let m = match_of(state, match_id).await?;
            let orphan = m.phase == Phase::Waiting
                && is_proposal(&m, me, to, app, p.role)
                && find_game(state, me, to, None)
                    .await?
                    .is_none_or(|g| g.match_id != match_id);
            if !orphan {
                return Err(EngineError::AlreadyInMatch { match_id }.into());
            }
            match_id
        }
        Err(e) => return Err(e.into()),
    };
    if !insert_game(state, match_id, app, p.game_id.as_ref(), me, to).await? {
        // The other side proposed a game with the same id at the same moment and won the
        // race: this proposal is withdrawn (it is free, so at once).
        let _ = state
            .core
            .execute(me, Command::Cancel { match_id }, None)
            .await;
        return Err(game_id_taken(to, p.game_id.as_ref()));
    }
    Ok(match_id)
}

async fn accept(
    state: &AppState,
    me: Address,
    to: Address,
    app: App,
    a: &triad_protocol::Accept,
    seen: Option<MatchId>,
    key: Option<IdempotencyKey>,
) -> Result<MatchId, ApiError> {
    let game = game_for(state, me, to, app, a.game_id.as_ref()).await?;
    // The proposal the accepter saw, when it says which: that one or nothing.
    if seen.is_some_and(|id| id != game.match_id) {
        return Err(EngineError::TermsDiffer { what: "match" }.into());
    }
    if game.proposer != to {
        return Err(ProtocolError::OutOfTurn {
            problem: "only the player the game was proposed to accepts it",
        }
        .into());
    }
    let m = match_of(state, game.match_id).await?;
    let expected = proposer_role(&m).map_or(Player::Second, Player::other);
    if a.role != expected {
        return Err(ProtocolError::RoleConflict {
            expected: app.role_name(expected),
            got: app.role_name(a.role),
        }
        .into());
    }
    // Only ever a free game of this app that `to` proposed to me, whatever match the pair
    // and gameId led to: the relay's acceptance commits nobody to a stake. The engine
    // checks the same terms again when it executes the acceptance.
    if let Some(what) = proposal_differs(&m, to, me, app, expected.other()) {
        return Err(EngineError::TermsDiffer { what }.into());
    }
    let terms = free_game_terms(app, to, expected.other());
    if m.seats.is_some() && m.player_of(me).is_some() {
        // Accepted already: a resend.
        return Ok(game.match_id);
    }
    state
        .core
        .execute(
            me,
            Command::AcceptChallenge {
                match_id: game.match_id,
                terms: Some(terms),
            },
            key,
        )
        .await?;
    Ok(game.match_id)
}

/// The position after the first `plies` moves of a match.
fn position_after(m: &Match, plies: usize) -> AnyGame {
    m.moves
        .iter()
        .take(plies)
        .fold(AnyGame::new(m.game()), |g, mv| g.play_unchecked(*mv))
}

async fn play(
    state: &AppState,
    me: Address,
    to: Address,
    app: App,
    mv: &triad_protocol::Move,
    key: Option<IdempotencyKey>,
) -> Result<MatchId, ApiError> {
    let game = game_for(state, me, to, app, mv.game_id.as_ref()).await?;
    let m = match_of(state, game.match_id).await?;
    let Some(player) = m.player_of(me) else {
        return Err(if m.phase == Phase::Waiting {
            ProtocolError::OutOfTurn {
                problem: "a move before the proposal was accepted",
            }
            .into()
        } else {
            EngineError::NotAPlayer.into()
        });
    };
    let plies = usize::from(m.seq());
    let seq = usize::from(mv.seq);
    // A resend of a move already made: the same move, board and all.
    if (1..=plies).contains(&seq) {
        let earlier = m.moves[seq - 1];
        let same = earlier.cell == mv.position
            && earlier.mark == mv.mark
            && Player::to_move_after(u32::from(mv.seq) - 1) == player;
        if same {
            check_move(app, &position_after(&m, seq - 1), player, mv)?;
            return Ok(game.match_id);
        }
    }
    check_move(app, &m.position, player, mv)?;
    state
        .core
        .execute(
            me,
            Command::Move {
                match_id: game.match_id,
                seq: mv.seq,
                cell: mv.position.index(),
                mark: mv.mark,
            },
            key,
        )
        .await?;
    Ok(game.match_id)
}

/// The match's ending in the protocol's words.
fn recorded(app: App, m: &Match) -> String {
    match m.result {
        None => "in play".to_owned(),
        Some(r) => match (r.reason, r.winner) {
            (EndReason::Win, Some(w)) => format!("win by {}", app.role_name(w)),
            (EndReason::Draw, _) => "draw".to_owned(),
            (reason, Some(w)) => format!("win by {} ({})", app.role_name(w), reason.name()),
            (reason, None) => format!("abort ({})", reason.name()),
        },
    }
}

async fn declare(
    state: &AppState,
    me: Address,
    to: Address,
    app: App,
    r: &GameResult,
    key: Option<IdempotencyKey>,
) -> Result<MatchId, ApiError> {
    let game = game_for(state, me, to, app, r.game_id.as_ref()).await?;
    let id = game.match_id;
    let m = match_of(state, id).await?;
    if !m.involves(me) && m.challenge.is_none_or(|c| c.opponent != me) {
        return Err(EngineError::NotAPlayer.into());
    }
    let ended = m.result.map(|r| r.reason);
    match r.outcome {
        Outcome::Abort => {
            let command = match m.phase {
                Phase::Waiting if game.proposer == me => Command::Cancel { match_id: id },
                Phase::Waiting => Command::DeclineChallenge { match_id: id },
                Phase::Ready | Phase::InProgress => Command::Abort { match_id: id },
                // Called off already (by the other side, or by the clock): nothing to end.
                Phase::Finished if ended.is_some_and(|e| !e.was_played()) => return Ok(id),
                Phase::Finished => {
                    let mut e = ApiError::from(EngineError::Move(triad_rules::MoveError::GameOver));
                    e.body.message = format!(
                        "the game is over ({}); there is nothing to abort",
                        recorded(app, &m)
                    );
                    return Err(e);
                }
            };
            state.core.execute(me, command, key).await?;
        }
        Outcome::Win | Outcome::Draw => {
            let agrees = match (r.outcome, m.result) {
                (Outcome::Draw, Some(result)) => result.reason == EndReason::Draw,
                (Outcome::Win, Some(result)) => {
                    result.reason.was_played()
                        && result.winner.is_some()
                        && result.winner == r.winner
                }
                _ => false,
            };
            if !agrees {
                return Err(ProtocolError::ResultMismatch {
                    declared: r.describe(app),
                    actual: recorded(app, &m),
                }
                .into());
            }
        }
    }
    Ok(id)
}

/// The key under which a message is stored once: its match, action, `seq` and sender.
fn dedupe_key(match_id: MatchId, message: &Message, from: Address) -> String {
    match message.seq() {
        Some(seq) => format!("{match_id}:{}:{seq}:{from}", message.action()),
        None => format!("{match_id}:{}:{from}", message.action()),
    }
}

fn storage(e: sqlx::Error) -> ApiError {
    ApiError::from(crate::store::StoreError::from(e))
}

/// Stores a message (once) and delivers it: `(id, duplicate)`.
async fn store_message(
    state: &AppState,
    from: Address,
    to: Address,
    app: App,
    message: &Message,
    signed: Option<&Signed>,
    match_id: MatchId,
) -> Result<(u64, bool), ApiError> {
    let key = dedupe_key(match_id, message, from);
    let payload = message.payload_json(app);
    let signed_json = signed.map(|s| serde_json::to_string(s).unwrap_or_default());
    let _in_order = state.apps.writer.lock().await;
    let now = state.core.clock().now_ms();
    let mut tx = state.store.pool().begin().await.map_err(storage)?;
    if state.store.is_shared() {
        // Across nodes too, ids commit in order: one writer of messages at a time.
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(APPS_LOCK)
            .execute(&mut *tx)
            .await
            .map_err(storage)?;
    }
    let inserted = sqlx::query(
        "INSERT INTO agent_messages \
         (recipient, sender, app_id, action, payload, signed, match_id, dedupe_key, created_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id",
    )
    .bind(to.to_string())
    .bind(from.to_string())
    .bind(app.id())
    .bind(message.action().id())
    .bind(&payload)
    .bind(signed_json)
    .bind(to_i64(match_id.0))
    .bind(&key)
    .bind(to_i64(now))
    .fetch_optional(&mut *tx)
    .await
    .map_err(storage)?;
    if let Some(row) = inserted {
        let id = to_u64(row.try_get::<i64, _>(0).map_err(storage)?);
        if state.store.is_shared() {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(crate::cluster::APPS_CHANNEL)
                .bind(format!("{} {to} {id}", state.apps.node_id()))
                .execute(&mut *tx)
                .await
                .map_err(storage)?;
        }
        tx.commit().await.map_err(storage)?;
        let item = InboxMessage {
            id,
            from: from.to_string(),
            to: to.to_string(),
            app_id: app.id().to_owned(),
            action: message.action().id().to_owned(),
            payload: Payload(app, message.clone()),
            signed: signed.cloned(),
            match_id: Some(match_id.0),
            sent_at_ms: now,
        };
        publish(state, to, &item);
        metrics::counter!("triad_agent_messages_total", "action" => message.action().id())
            .increment(1);
        return Ok((id, false));
    }
    tx.rollback().await.map_err(storage)?;
    let row = sqlx::query("SELECT id FROM agent_messages WHERE dedupe_key = $1")
        .bind(&key)
        .fetch_one(state.store.pool())
        .await
        .map_err(storage)?;
    Ok((to_u64(row.try_get::<i64, _>(0).map_err(storage)?), true))
}

/// The WebSocket topic of an address's agents' inbox.
#[must_use]
pub fn topic(address: Address) -> String {
    format!("apps:{address}")
}

/// The address whose inbox a topic is, if it is an `apps:` topic.
#[must_use]
pub fn topic_owner(topic: &str) -> Option<Address> {
    topic.strip_prefix("apps:")?.parse().ok()
}

/// A WebSocket frame carrying a message.
fn frame(topic: &str, item: &InboxMessage) -> String {
    serde_json::json!({"type": "app_message", "topic": topic, "seq": item.id, "message": item})
        .to_string()
}

/// Delivers a stored message to this node's subscribers of the recipient's inbox.
pub(crate) fn publish(state: &AppState, to: Address, item: &InboxMessage) {
    let topic = topic(to);
    state
        .hub
        .publish_frame(&topic, item.id, frame(&topic, item));
    state.apps.notify(to, item.id);
}

/// The messages of `recipient`'s inbox after `after`, oldest first, at most `limit`.
///
/// # Errors
/// On a database failure or a corrupt row.
pub async fn inbox(
    state: &AppState,
    recipient: Address,
    after: u64,
    limit: u32,
) -> Result<Vec<InboxMessage>, ApiError> {
    let rows = sqlx::query(
        "SELECT id, sender, app_id, action, payload, signed, match_id, created_ms \
         FROM agent_messages WHERE recipient = $1 AND id > $2 ORDER BY id LIMIT CAST($3 AS BIGINT)",
    )
    .bind(recipient.to_string())
    .bind(to_i64(after))
    .bind(i64::from(limit))
    .fetch_all(state.store.pool())
    .await
    .map_err(storage)?;
    rows.into_iter()
        .map(|row| {
            let app_id: String = row.try_get(2).map_err(storage)?;
            let action: String = row.try_get(3).map_err(storage)?;
            let payload: String = row.try_get(4).map_err(storage)?;
            let signed: Option<String> = row.try_get(5).map_err(storage)?;
            let id = to_u64(row.try_get(0).map_err(storage)?);
            // Stored in canonical form by the relay itself, so it decodes.
            let message = App::from_id(&app_id)
                .and_then(|app| Ok((app, Message::decode_json(app, &action, &payload)?)))
                .map_err(|e| {
                    ApiError::from(crate::store::StoreError::Corrupt(format!(
                        "agent message {id}: {e}"
                    )))
                })?;
            Ok(InboxMessage {
                id,
                from: row.try_get(1).map_err(storage)?,
                to: recipient.to_string(),
                app_id,
                action,
                payload: Payload(message.0, message.1),
                signed: signed.and_then(|s| serde_json::from_str(&s).ok()),
                match_id: row
                    .try_get::<Option<i64>, _>(6)
                    .map_err(storage)?
                    .map(to_u64),
                sent_at_ms: to_u64(row.try_get(7).map_err(storage)?),
            })
        })
        .collect()
}

/// The catch-up frames of an `apps:` topic after `since`: `(id, frame)`.
///
/// # Errors
/// As [`inbox`].
pub async fn frames(
    state: &AppState,
    owner: Address,
    since: u64,
    limit: u32,
) -> Result<Vec<(u64, String)>, ApiError> {
    let topic = topic(owner);
    Ok(inbox(state, owner, since, limit)
        .await?
        .iter()
        .map(|item| (item.id, frame(&topic, item)))
        .collect())
}

/// Long-polls `recipient`'s inbox: the messages after `after`, waiting up to `wait` for the
/// first to arrive.
///
/// # Errors
/// As [`inbox`].
pub async fn poll(
    state: &AppState,
    recipient: Address,
    after: u64,
    limit: u32,
    wait: Duration,
) -> Result<Vec<InboxMessage>, ApiError> {
    let deadline = Instant::now() + wait;
    let mut changes = state.apps.watch(recipient);
    loop {
        changes.mark_unchanged();
        let page = inbox(state, recipient, after, limit).await?;
        let left = deadline.saturating_duration_since(Instant::now());
        if !page.is_empty() || left.is_zero() || state.hub.is_closing() {
            return Ok(page);
        }
        match tokio::time::timeout(left, changes.changed()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => return inbox(state, recipient, after, limit).await,
        }
    }
}
