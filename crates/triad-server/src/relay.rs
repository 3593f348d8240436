//! The agents' relay and referee: application messages between addresses, in the A2A
//! tic-tac-toe protocol that Triad's agents speak ([`triad_protocol`]).
//!
//! Every address has an inbox. An agent sends `{to, appId, action, payload}` (optionally
//! signed, [`triad_protocol::envelope`]); the relay decodes it strictly, checks it by the
//! protocol's rules against the game's engine match, has the engine referee it, stores it
//! and delivers it to the recipient's inbox (long-poll and the WebSocket topic `apps`).
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
//! A message the rules refuse is refused to its sender with the reason ([`RelayError`],
//! which the API answers with a stable code) and never delivered. A resend of a message
//! already relayed is answered with `duplicate: true` and delivered once. A send is
//! acknowledged only after the engine's events and the message are both durable; if the
//! two commits are cut apart by a crash, the sender's retry completes the send (the engine
//! recognises its own move, proposal or acceptance, and the message is stored once).
//!
//! The relay runs no SQL of its own: its tables are the store's ([`crate::store::relay`]).

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use serde::Serialize;
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

use crate::{
    core::{Core, CoreError},
    hub::Hub,
    store::{
        Store, StoreError,
        relay::{AgentGame, NewAgentMessage},
    },
};

/// Why the relay refused a message, or could not relay it.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// The engine refused the command the message maps to.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The message breaks the protocol's rules.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// The core could not run the command (storage, shutdown, fault).
    #[error(transparent)]
    Core(#[from] CoreError),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// There is no game with that agent (and gameId) for this message.
    #[error("{0}")]
    NoGame(String),
    /// The gameId already names another game of the two agents.
    #[error("{0}")]
    GameIdTaken(String),
    /// An abort of a game that is over: the engine's `game_over`, saying how it ended.
    #[error("{0}")]
    GameOver(String),
}

/// The agents' relay: it has the engine referee each message, stores it through the
/// store, and wakes the waiters of its recipient's inbox, on this node.
pub struct Relay {
    core: Core,
    store: Store,
    hub: Hub,
    waiters: Mutex<HashMap<Address, watch::Sender<u64>>>,
    /// Held while a message is stored and published, so that messages are committed and
    /// published in `id` order: a reader that has seen an id has seen every smaller one
    /// (with PostgreSQL, ids from a sequence could otherwise commit out of order), and a
    /// WebSocket, which skips ids it has passed, never skips one that comes late.
    writer: tokio::sync::Mutex<()>,
    /// This node's name in the `triad_apps` notifications, so it skips its own.
    node: std::sync::OnceLock<String>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay").finish_non_exhaustive()
    }
}

impl Relay {
    /// The relay over this engine, database and fan-out.
    #[must_use]
    pub fn new(core: Core, store: Store, hub: Hub) -> Relay {
        Relay {
            core,
            store,
            hub,
            waiters: Mutex::default(),
            writer: tokio::sync::Mutex::default(),
            node: std::sync::OnceLock::default(),
        }
    }

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

/// A message in an inbox, as the API and the WebSocket show it (the protocol's field names).
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
    /// The payload, in the protocol's shape and field order.
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

/// A send: `{to, appId, action, payload}`, and an optional signature.
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

fn no_game(to: Address, app: App, game_id: Option<&GameId>) -> RelayError {
    let which = game_id.map_or_else(String::new, |id| format!(" with gameId {id}"));
    RelayError::NoGame(format!(
        "you have no {app} game{which} with {to}; propose one first"
    ))
}

fn game_id_text(id: Option<&GameId>) -> String {
    id.map_or_else(|| "none".to_owned(), ToString::to_string)
}

fn game_id_taken(to: Address, game_id: Option<&GameId>) -> RelayError {
    RelayError::GameIdTaken(format!(
        "you and {to} already have a game with gameId {}; choose a new gameId",
        game_id_text(game_id)
    ))
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

/// The position after the first `plies` moves of a match.
fn position_after(m: &Match, plies: usize) -> AnyGame {
    m.moves
        .iter()
        .take(plies)
        .fold(AnyGame::new(m.game()), |g, mv| g.play_unchecked(*mv))
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

/// The key under which a message is stored once: its match, action, `seq` and sender.
fn dedupe_key(match_id: MatchId, message: &Message, from: Address) -> String {
    match message.seq() {
        Some(seq) => format!("{match_id}:{}:{seq}:{from}", message.action()),
        None => format!("{match_id}:{}:{from}", message.action()),
    }
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

impl Relay {
    /// The latest game of the pair, or the one with this gameId.
    async fn find_game(
        &self,
        me: Address,
        to: Address,
        game_id: Option<&GameId>,
    ) -> Result<Option<AgentGame>, RelayError> {
        Ok(self.store.agent_game(me, to, game_id).await?)
    }

    /// The agents' game a match plays, if the relay recorded one.
    async fn recorded_game(&self, id: MatchId) -> Result<Option<AgentGame>, RelayError> {
        Ok(self.store.agent_game_of_match(id).await?)
    }

    /// Records which match plays the pair's game; `false` when the gameId is already another
    /// game's (two proposals with the same id crossed).
    async fn insert_game(
        &self,
        match_id: MatchId,
        app: App,
        game_id: Option<&GameId>,
        me: Address,
        to: Address,
    ) -> Result<bool, RelayError> {
        let game = AgentGame {
            match_id,
            app,
            game_id: game_id.cloned(),
            proposer: me,
        };
        let now = self.core.clock().now_ms();
        Ok(self.store.insert_agent_game(&game, to, now).await?)
    }

    /// A match as it is now: from the engine while it holds it, else from the database.
    async fn match_of(&self, id: MatchId) -> Result<Match, RelayError> {
        if let Some(m) = self.core.read().await.match_(id) {
            return Ok(m.clone());
        }
        self.store
            .match_(id)
            .await?
            .ok_or(RelayError::Engine(EngineError::UnknownMatch))
    }

    /// The game this message belongs to: the pair's game with its gameId, or their latest.
    async fn game_for(
        &self,
        me: Address,
        to: Address,
        app: App,
        game_id: Option<&GameId>,
    ) -> Result<AgentGame, RelayError> {
        let game = self
            .find_game(me, to, game_id)
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
        &self,
        me: Address,
        out: Outgoing,
        key: Option<IdempotencyKey>,
    ) -> Result<Sent, RelayError> {
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
            Message::Propose(p) => self.propose(me, to, app, p, key).await?,
            Message::Accept(a) => self.accept(me, to, app, a, seen, key).await?,
            Message::Move(m) => self.play(me, to, app, m, key).await?,
            Message::Result(r) => self.declare(me, to, app, r, key).await?,
        };
        let (id, duplicate) = self
            .store_message(me, to, app, &message, signed.as_ref(), match_id)
            .await?;
        Ok(Sent {
            id,
            duplicate,
            match_id,
        })
    }

    /// The proposal an `Idempotency-Key` made, for a resend under that key: this message must
    /// be that proposal (the same pair, app, role and gameId), or it is refused (119) as a
    /// reuse of the key. The answer is the key's own match even after the game was called off.
    async fn resent_proposal(
        &self,
        me: Address,
        to: Address,
        app: App,
        p: &triad_protocol::Propose,
        id: MatchId,
    ) -> Result<MatchId, RelayError> {
        let m = self.match_of(id).await?;
        let recorded = self.recorded_game(id).await?;
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
        &self,
        me: Address,
        to: Address,
        app: App,
        p: &triad_protocol::Propose,
        key: Option<IdempotencyKey>,
    ) -> Result<MatchId, RelayError> {
        // A resend of a proposal still waiting is the same proposal.
        if let Some(game) = self.find_game(me, to, p.game_id.as_ref()).await? {
            let m = self.match_of(game.match_id).await?;
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
        let match_id = match self.core.execute(me, command, key).await {
            Ok(receipt) => match receipt.duplicate {
                // A resend under the same Idempotency-Key: the proposal that key made, if this
                // is that proposal; never whatever match the proposer has now.
                Some(Duplicate::Command {
                    match_id: Some(id), ..
                }) => self.resent_proposal(me, to, app, p, id).await?,
                Some(_) => return Err(EngineError::IdempotencyKeyReused.into()),
                None => receipt
                    .events
                    .iter()
                    .find_map(triad_engine::Event::match_id)
                    .ok_or_else(|| no_game(to, app, p.game_id.as_ref()))?,
            },
            // A proposal the engine took before a crash cut it from its message: take it up.
            Err(CoreError::Engine(EngineError::AlreadyInMatch { match_id })) => {
                let m = self.match_of(match_id).await?;
                let orphan = m.phase == Phase::Waiting
                    && is_proposal(&m, me, to, app, p.role)
                    && self
                        .find_game(me, to, None)
                        .await?
                        .is_none_or(|g| g.match_id != match_id);
                if !orphan {
                    return Err(EngineError::AlreadyInMatch { match_id }.into());
                }
                match_id
            }
            Err(e) => return Err(e.into()),
        };
        if !self
            .insert_game(match_id, app, p.game_id.as_ref(), me, to)
            .await?
        {
            // The other side proposed a game with the same id at the same moment and won the
            // race: this proposal is withdrawn (it is free, so at once).
            let _ = self
                .core
                .execute(me, Command::Cancel { match_id }, None)
                .await;
            return Err(game_id_taken(to, p.game_id.as_ref()));
        }
        Ok(match_id)
    }

    async fn accept(
        &self,
        me: Address,
        to: Address,
        app: App,
        a: &triad_protocol::Accept,
        seen: Option<MatchId>,
        key: Option<IdempotencyKey>,
    ) -> Result<MatchId, RelayError> {
        let game = self.game_for(me, to, app, a.game_id.as_ref()).await?;
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
        let m = self.match_of(game.match_id).await?;
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
        self.core
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

    async fn play(
        &self,
        me: Address,
        to: Address,
        app: App,
        mv: &triad_protocol::Move,
        key: Option<IdempotencyKey>,
    ) -> Result<MatchId, RelayError> {
        let game = self.game_for(me, to, app, mv.game_id.as_ref()).await?;
        let m = self.match_of(game.match_id).await?;
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
        self.core
            .execute(
                me,
                Command::Move {
                    match_id: game.match_id,
                    seq: mv.seq,
                    cell: mv.position.index(),
                    mark: mv.mark,
                    signed: None,
                },
                key,
            )
            .await?;
        Ok(game.match_id)
    }

    async fn declare(
        &self,
        me: Address,
        to: Address,
        app: App,
        r: &GameResult,
        key: Option<IdempotencyKey>,
    ) -> Result<MatchId, RelayError> {
        let game = self.game_for(me, to, app, r.game_id.as_ref()).await?;
        let id = game.match_id;
        let m = self.match_of(id).await?;
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
                        return Err(RelayError::GameOver(format!(
                            "the game is over ({}); there is nothing to abort",
                            recorded(app, &m)
                        )));
                    }
                };
                self.core.execute(me, command, key).await?;
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

    /// Stores a message (once) and delivers it: `(id, duplicate)`.
    async fn store_message(
        &self,
        from: Address,
        to: Address,
        app: App,
        message: &Message,
        signed: Option<&Signed>,
        match_id: MatchId,
    ) -> Result<(u64, bool), RelayError> {
        let key = dedupe_key(match_id, message, from);
        let payload = message.payload_json(app);
        let signed_json = signed.map(|s| serde_json::to_string(s).unwrap_or_default());
        let _in_order = self.writer.lock().await;
        let now = self.core.clock().now_ms();
        let row = NewAgentMessage {
            recipient: to,
            sender: from,
            app,
            action: message.action().id(),
            payload: &payload,
            signed: signed_json.as_deref(),
            match_id,
            dedupe_key: &key,
            created_ms: now,
        };
        let (id, duplicate) = self
            .store
            .insert_agent_message(&row, self.node_id())
            .await?;
        if !duplicate {
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
            self.publish(to, &item);
            metrics::counter!("triad_agent_messages_total", "action" => message.action().id())
                .increment(1);
        }
        Ok((id, duplicate))
    }

    /// Delivers a stored message to this node's subscribers of the recipient's inbox.
    pub(crate) fn publish(&self, to: Address, item: &InboxMessage) {
        let topic = topic(to);
        self.hub.publish_frame(&topic, item.id, frame(&topic, item));
        self.notify(to, item.id);
    }

    /// The messages of `recipient`'s inbox after `after`, oldest first, at most `limit`.
    ///
    /// # Errors
    /// On a database failure or a corrupt row.
    pub async fn inbox(
        &self,
        recipient: Address,
        after: u64,
        limit: u32,
    ) -> Result<Vec<InboxMessage>, RelayError> {
        let rows = self.store.agent_inbox(recipient, after, limit).await?;
        rows.into_iter()
            .map(|row| {
                // Stored in canonical form by the relay itself, so it decodes.
                let (app, message) = App::from_id(&row.app_id)
                    .and_then(|app| {
                        Ok((app, Message::decode_json(app, &row.action, &row.payload)?))
                    })
                    .map_err(|e| StoreError::Corrupt(format!("agent message {}: {e}", row.id)))?;
                Ok(InboxMessage {
                    id: row.id,
                    from: row.sender,
                    to: recipient.to_string(),
                    app_id: row.app_id,
                    action: row.action,
                    payload: Payload(app, message),
                    signed: row.signed.and_then(|s| serde_json::from_str(&s).ok()),
                    match_id: row.match_id,
                    sent_at_ms: row.created_ms,
                })
            })
            .collect()
    }

    /// The catch-up frames of an `apps:` topic after `since`: `(id, frame)`.
    ///
    /// # Errors
    /// As [`Relay::inbox`].
    pub async fn frames(
        &self,
        owner: Address,
        since: u64,
        limit: u32,
    ) -> Result<Vec<(u64, String)>, RelayError> {
        let topic = topic(owner);
        Ok(self
            .inbox(owner, since, limit)
            .await?
            .iter()
            .map(|item| (item.id, frame(&topic, item)))
            .collect())
    }

    /// Long-polls `recipient`'s inbox: the messages after `after`, waiting up to `wait` for the
    /// first to arrive.
    ///
    /// # Errors
    /// As [`Relay::inbox`].
    pub async fn poll(
        &self,
        recipient: Address,
        after: u64,
        limit: u32,
        wait: Duration,
    ) -> Result<Vec<InboxMessage>, RelayError> {
        let deadline = Instant::now() + wait;
        let mut changes = self.watch(recipient);
        loop {
            changes.mark_unchanged();
            let page = self.inbox(recipient, after, limit).await?;
            let left = deadline.saturating_duration_since(Instant::now());
            if !page.is_empty() || left.is_zero() || self.hub.is_closing() {
                return Ok(page);
            }
            match tokio::time::timeout(left, changes.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return self.inbox(recipient, after, limit).await,
            }
        }
    }
}
