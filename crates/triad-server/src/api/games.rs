//! Challenges, the queue, the computer, matches, players and the leaderboard.

use axum::{
    Json,
    extract::{Path, Query, State},
    http::{HeaderMap, StatusCode},
    response::IntoResponse,
};
use serde::{Deserialize, Serialize};
use triad_engine::{
    Address, Command, EngineError, Level, MatchId, MoveSignature, Phase, Ranking, Receipt,
    StartChoice,
};
use triad_rules::{GameKind, Mark, Player};
use utoipa::{IntoParams, ToSchema};

use crate::core::CoreError;

use super::{
    ApiJson, ApiState, Authed,
    error::{Api, ApiError, ErrorBody},
    views::{MatchView, PlayerView},
};

/// An amount in minor units in a request: a decimal string in canonical form (digits only,
/// no sign, spaces, decimal point or leading zeros; up to 2^128-1), or a whole JSON number
/// (exact up to 2^64-1 here; a JavaScript client loses precision past 2^53, so send a
/// string). Anything else is refused as a bad request (200) whose message says the form:
/// one parser, [`triad_engine::parse_amount`], reads every amount.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ToSchema)]
#[schema(value_type = String, pattern = "^(0|[1-9][0-9]*)$", example = "1000000000000000000")]
pub struct Amount(pub u128);

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        triad_engine::amount::text::deserialize(d).map(Amount)
    }
}

/// What a command did.
#[derive(Debug, Serialize, ToSchema)]
pub struct CommandResult {
    /// The match the command concerns, as it now is.
    #[serde(rename = "match")]
    pub match_: Option<MatchView>,
    /// The events it caused (empty for a duplicate).
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<triad_engine::Event>,
    /// True when the command repeated one already applied, which changed nothing.
    pub duplicate: bool,
}

/// What a command did, in short: the answer to a command sent with
/// `Prefer: return=minimal` (RFC 7240), for a client that follows the match on the
/// WebSocket, where the same events arrive in full.
#[derive(Debug, Serialize, ToSchema)]
pub struct CommandAck {
    /// The match the command concerns, if any.
    pub match_id: Option<u64>,
    /// The sequence numbers of the events it caused, oldest first (empty for a duplicate):
    /// the WebSocket delivers each of them on the topics it concerns.
    pub event_seqs: Vec<u64>,
    /// True when the command repeated one already applied, which changed nothing.
    pub duplicate: bool,
}

/// A command's answer: [`CommandResult`], or [`CommandAck`] when the request carried
/// `Prefer: return=minimal`; that answer says `Preference-Applied: return=minimal`.
#[derive(Debug)]
pub enum CommandReply {
    /// The match view and the events.
    Full(StatusCode, Box<CommandResult>),
    /// The match id and the events' sequence numbers.
    Minimal(StatusCode, CommandAck),
}

impl CommandReply {
    /// The same answer with another status: a command that creates nothing (a DELETE)
    /// answers 200, not 201.
    #[must_use]
    pub fn with_status(self, status: StatusCode) -> CommandReply {
        match self {
            CommandReply::Full(_, body) => CommandReply::Full(status, body),
            CommandReply::Minimal(_, body) => CommandReply::Minimal(status, body),
        }
    }
}

impl IntoResponse for CommandReply {
    fn into_response(self) -> axum::response::Response {
        match self {
            CommandReply::Full(status, body) => (status, Json(*body)).into_response(),
            CommandReply::Minimal(status, body) => (
                status,
                [(
                    axum::http::HeaderName::from_static("preference-applied"),
                    axum::http::HeaderValue::from_static("return=minimal"),
                )],
                Json(body),
            )
                .into_response(),
        }
    }
}

/// True when the request's `Prefer` headers ask for `return=minimal` (RFC 7240: the
/// preferences are a comma-separated list, names and values case-insensitive, the value
/// possibly quoted, parameters after `;` ignored; of several `return` preferences the
/// first counts).
pub(crate) fn prefers_minimal(headers: &HeaderMap) -> bool {
    for value in headers.get_all("prefer") {
        let Ok(text) = value.to_str() else { continue };
        for preference in text.split(',') {
            let token = preference.split(';').next().unwrap_or_default();
            let (name, value) = token.split_once('=').unwrap_or((token, ""));
            if name.trim().eq_ignore_ascii_case("return") {
                return value
                    .trim()
                    .trim_matches('"')
                    .eq_ignore_ascii_case("minimal");
            }
        }
    }
    false
}

impl CommandAck {
    /// The short answer to a command that concerns `match_id`: over HTTP with
    /// `Prefer: return=minimal`, and on the WebSocket as a move's `ack`.
    #[must_use]
    pub fn new(receipt: &Receipt, match_id: Option<MatchId>) -> CommandAck {
        CommandAck {
            match_id: match_id.map(|id| id.0),
            event_seqs: receipt.events.iter().map(|e| e.seq).collect(),
            duplicate: receipt.duplicate.is_some(),
        }
    }
}

/// The match a command's answer concerns: `focus`, else the first event's, else, for a
/// resend, the original's (never another).
fn answered_match(receipt: &Receipt, focus: Option<MatchId>) -> Option<MatchId> {
    focus
        .or_else(|| {
            receipt
                .events
                .iter()
                .find_map(triad_engine::Event::match_id)
        })
        .or(match receipt.duplicate {
            Some(triad_engine::Duplicate::Move { match_id, .. }) => Some(match_id),
            Some(triad_engine::Duplicate::Command { match_id, .. }) => match_id,
            None => None,
        })
}

/// Runs `command` for `actor` and answers with its [`CommandAck`]: the WebSocket's moves.
///
/// # Errors
/// The engine's refusal, or a storage failure.
pub(crate) async fn execute_for_ack(
    state: &ApiState,
    actor: Address,
    command: Command,
    focus: Option<MatchId>,
) -> Result<CommandAck, ApiError> {
    let receipt = execute(state, actor, command, None).await?;
    Ok(CommandAck::new(&receipt, answered_match(&receipt, focus)))
}

/// Runs `command` for `actor`. The engine forgets a match some time after its end
/// ([`Config::finished_retention_ms`](triad_engine::Config::finished_retention_ms)); a
/// command naming one is then told, from the archive, what it was told while the match was
/// in memory ([`Match::refusal_once_forgotten`](triad_engine::Match::refusal_once_forgotten)),
/// not that no match has that id.
async fn execute(
    state: &ApiState,
    actor: Address,
    command: Command,
    key: Option<triad_engine::IdempotencyKey>,
) -> Result<Receipt, ApiError> {
    let named = command.match_id();
    let refusal = match state.core.execute(actor, command.clone(), key).await {
        Err(CoreError::Engine(EngineError::UnknownMatch)) => match named {
            Some(id) => state
                .store
                .match_(id)
                .await?
                .and_then(|m| m.refusal_once_forgotten(actor, &command)),
            None => None,
        },
        result => return Ok(result?),
    };
    Err(refusal.unwrap_or(EngineError::UnknownMatch).into())
}

/// The reply to a command: `Prefer: return=minimal` gets the short form, without reading
/// the match (`focus` or the first event's) at all.
async fn reply(
    state: &ApiState,
    headers: &HeaderMap,
    receipt: Receipt,
    focus: Option<MatchId>,
) -> Result<CommandReply, ApiError> {
    let id = answered_match(&receipt, focus);
    let status = if receipt.events.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    if prefers_minimal(headers) {
        return Ok(CommandReply::Minimal(status, CommandAck::new(&receipt, id)));
    }
    let match_ = match id {
        Some(id) => state.match_view(id).await?,
        None => None,
    };
    Ok(CommandReply::Full(
        status,
        Box::new(CommandResult {
            match_,
            duplicate: receipt.duplicate.is_some(),
            events: receipt.events,
        }),
    ))
}

pub(crate) fn idempotency_key(
    headers: &HeaderMap,
) -> Result<Option<triad_engine::IdempotencyKey>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .ok()
        .filter(|t| !t.is_empty() && t.len() <= 128)
        .ok_or_else(|| {
            ApiError::with_message(
                Api::BadRequest,
                "Idempotency-Key must be 1 to 128 visible characters",
            )
        })?;
    // The engine keys on 128 bits: the first 16 bytes of the key's BLAKE2b-256 hash.
    let digest = triad_identity::hash256(text.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Ok(Some(triad_engine::IdempotencyKey(u128::from_le_bytes(
        bytes,
    ))))
}

/// Runs a command and answers with the match it concerns (see [`reply`]).
pub(crate) async fn run(
    state: &ApiState,
    actor: Address,
    command: Command,
    headers: &HeaderMap,
    focus: Option<MatchId>,
) -> Result<CommandReply, ApiError> {
    let key = idempotency_key(headers)?;
    let receipt = execute(state, actor, command, key).await?;
    reply(state, headers, receipt, focus).await
}

fn parse_address(text: &str) -> Result<Address, ApiError> {
    text.parse().map_err(|_| ApiError::new(Api::InvalidAddress))
}

/// Challenge a player by address.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChallengeRequest {
    /// The opponent's address.
    pub opponent: String,
    /// tic-tac-toe or sos.
    #[schema(value_type = String, example = "tic-tac-toe")]
    pub game: GameKind,
    /// Each player's stake in minor units (0 for free play).
    #[serde(default)]
    pub stake: Amount,
    /// Who moves first: challenger (default), opponent or random.
    #[serde(default = "default_first")]
    #[schema(value_type = String, example = "challenger")]
    pub first: StartChoice,
}

fn default_first() -> StartChoice {
    StartChoice::Challenger
}

/// Challenge another player (also how agents' games start). The stake is escrowed; the opponent must accept.
#[utoipa::path(post, path = "/api/challenges", tag = "challenges", request_body = ChallengeRequest,
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn create_challenge(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    ApiJson(req): ApiJson<ChallengeRequest>,
) -> Result<impl IntoResponse, ApiError> {
    let command = Command::Challenge {
        opponent: parse_address(&req.opponent)?,
        game: req.game,
        stake: req.stake.0,
        first: req.first,
    };
    run(&state, me, command, &headers, None).await
}

/// Open challenges to and from me.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChallengeList {
    /// Challenges addressed to me.
    pub incoming: Vec<MatchView>,
    /// My open challenge, if any.
    pub outgoing: Vec<MatchView>,
}

/// List open challenges, incoming and outgoing.
#[utoipa::path(get, path = "/api/challenges", tag = "challenges",
    responses((status = 200, body = ChallengeList), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn list_challenges(
    State(state): State<ApiState>,
    Authed(me): Authed,
) -> Result<Json<ChallengeList>, ApiError> {
    let engine = state.core.read().await;
    let config = engine.config();
    let incoming = engine
        .incoming_challenges(me)
        .map(|m| MatchView::new(m, config))
        .collect();
    let outgoing = engine
        .outgoing_challenges(me)
        .map(|m| MatchView::new(m, config))
        .collect();
    Ok(Json(ChallengeList { incoming, outgoing }))
}

/// The terms of a challenge as the accepter saw them, each optional. The acceptance is
/// refused (409, code 128 `terms_differ`, nothing done) unless the challenge has every
/// term stated: what is accepted is what was shown.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptRequest {
    /// Each player's stake as shown, in minor units.
    #[schema(value_type = Option<String>, example = "1000000000000000000")]
    pub stake: Option<Amount>,
    /// The game as shown: tic-tac-toe or sos.
    #[schema(value_type = Option<String>, example = "tic-tac-toe")]
    pub game: Option<GameKind>,
    /// The challenger's address as shown.
    pub challenger: Option<String>,
    /// Who moves first as shown: challenger, opponent or random.
    #[schema(value_type = Option<String>, example = "challenger")]
    pub first: Option<StartChoice>,
}

impl AcceptRequest {
    /// The terms a body states: a JSON object (`{}` states none), or no body at all.
    fn terms(body: &[u8]) -> Result<Option<triad_engine::Terms>, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let bad = |e: &dyn std::fmt::Display| {
            ApiError::with_message(
                Api::BadRequest,
                format!(
                    "the body states the terms you accept, each optional: {{\"stake\", \"game\", \"challenger\", \"first\"}}; {e}"
                ),
            )
        };
        let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| bad(&e))?;
        if !value.is_object() {
            return Err(bad(&"it is not a JSON object"));
        }
        let req: AcceptRequest = serde_json::from_value(value).map_err(|e| bad(&e))?;
        let terms = triad_engine::Terms {
            stake: req.stake.map(|a| a.0),
            game: req.game,
            challenger: req.challenger.as_deref().map(parse_address).transpose()?,
            first: req.first,
        };
        Ok((!terms.is_empty()).then_some(terms))
    }
}

/// Accept a challenge addressed to me. The body, optional, states the terms I saw (the
/// stake, the game, the challenger, who starts); the acceptance is refused with 128
/// `terms_differ` unless the challenge has exactly those. Clients should send them all.
#[utoipa::path(post, path = "/api/challenges/{id}/accept", tag = "challenges", params(("id" = u64, Path, description = "The challenge's match id")),
    request_body(content = Option<AcceptRequest>, description = "The terms I saw; optional"),
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn accept_challenge(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
    body: axum::body::Bytes,
) -> Result<impl IntoResponse, ApiError> {
    let terms = AcceptRequest::terms(&body)?;
    run(
        &state,
        me,
        Command::AcceptChallenge {
            match_id: MatchId(id),
            terms,
        },
        &headers,
        Some(MatchId(id)),
    )
    .await
}

/// Decline a challenge addressed to me; the challenger is refunded.
#[utoipa::path(post, path = "/api/challenges/{id}/decline", tag = "challenges", params(("id" = u64, Path, description = "The challenge's match id")),
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn decline_challenge(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
) -> Result<impl IntoResponse, ApiError> {
    run(
        &state,
        me,
        Command::DeclineChallenge {
            match_id: MatchId(id),
        },
        &headers,
        Some(MatchId(id)),
    )
    .await
}

/// Withdraw my unanswered challenge (with a stake, only after the wait time).
#[utoipa::path(post, path = "/api/challenges/{id}/withdraw", tag = "challenges", params(("id" = u64, Path, description = "The challenge's match id")),
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn withdraw_challenge(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
) -> Result<impl IntoResponse, ApiError> {
    run(
        &state,
        me,
        Command::Cancel {
            match_id: MatchId(id),
        },
        &headers,
        Some(MatchId(id)),
    )
    .await
}

/// Join the open queue.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueRequest {
    /// tic-tac-toe or sos.
    #[schema(value_type = String, example = "sos")]
    pub game: GameKind,
    /// The stake in minor units (0 for free play).
    #[serde(default)]
    pub stake: Amount,
}

/// Join the queue (the `cryptosos` contract's `play()`): wait, or start against the earliest waiting player.
#[utoipa::path(post, path = "/api/queue", tag = "queue", request_body = QueueRequest,
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn join_queue(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    ApiJson(req): ApiJson<QueueRequest>,
) -> Result<impl IntoResponse, ApiError> {
    run(
        &state,
        me,
        Command::JoinQueue {
            game: req.game,
            stake: req.stake.0,
        },
        &headers,
        None,
    )
    .await
}

/// Leave the queue (the contract's `cancel()`). With a stake, only after the wait time; the error
/// says how long is left. A DELETE creates nothing: it answers 200.
#[utoipa::path(delete, path = "/api/queue", tag = "queue",
    responses((status = 200, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn leave_queue(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    let waiting = {
        let engine = state.core.read().await;
        engine
            .active_match(me)
            .and_then(|id| engine.match_(id))
            .filter(|m| m.phase == Phase::Waiting && m.origin == triad_engine::Origin::Queue)
            .map(|m| m.id)
    };
    let id = waiting
        .ok_or_else(|| ApiError::with_message(Api::NotFound, "you are not waiting in the queue"))?;
    let reply = run(
        &state,
        me,
        Command::Cancel { match_id: id },
        &headers,
        Some(id),
    )
    .await?;
    Ok(reply.with_status(StatusCode::OK))
}

/// Play the computer.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ComputerRequest {
    /// tic-tac-toe or sos.
    #[schema(value_type = String, example = "tic-tac-toe")]
    pub game: GameKind,
    /// perfect (default), casual or random.
    #[serde(default = "default_level")]
    #[schema(value_type = String, example = "perfect")]
    pub level: Level,
    /// My side: first (X, moves first; default) or second (O).
    #[serde(default = "default_side")]
    #[schema(value_type = String, example = "first")]
    pub side: Player,
}

fn default_level() -> Level {
    Level::Perfect
}

fn default_side() -> Player {
    Player::First
}

/// Start a match against the built-in solver. No stake.
#[utoipa::path(post, path = "/api/computer", tag = "matches", request_body = ComputerRequest,
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn play_computer(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    ApiJson(req): ApiJson<ComputerRequest>,
) -> Result<impl IntoResponse, ApiError> {
    run(
        &state,
        me,
        Command::PlayComputer {
            game: req.game,
            level: req.level,
            side: req.side,
        },
        &headers,
        None,
    )
    .await
}

/// A match's full state, each person's seat with their display name and bot mark.
#[utoipa::path(get, path = "/api/matches/{id}", tag = "matches", params(("id" = u64, Path, description = "Match id")),
    responses((status = 200, body = MatchView), (status = 404, body = ErrorBody), (status = "4XX", body = ErrorBody)))]
pub async fn get_match(
    State(state): State<ApiState>,
    Path(id): Path<u64>,
) -> Result<Json<MatchView>, ApiError> {
    let view = state
        .match_view(MatchId(id))
        .await?
        .ok_or_else(|| ApiError::from(triad_engine::EngineError::UnknownMatch))?;
    let profiles = state.profiles.of_each(&view.seated()).await?;
    Ok(Json(view.with_profiles(&profiles)))
}

/// A match's board as a string (the `cryptosos` contract's `getGameState()`).
#[derive(Debug, Serialize, ToSchema)]
pub struct GameStateView {
    /// 9 characters from {-, X, O} or {-, S, O}; the first is square 1 (cell 0).
    pub state: String,
}

/// The `cryptosos` contract's `getGameState()`: the board as a 9-character string.
#[utoipa::path(get, path = "/api/matches/{id}/state", tag = "matches", params(("id" = u64, Path, description = "Match id")),
    responses((status = 200, body = GameStateView), (status = 404, body = ErrorBody), (status = "4XX", body = ErrorBody)))]
pub async fn game_state(
    State(state): State<ApiState>,
    Path(id): Path<u64>,
) -> Result<Json<GameStateView>, ApiError> {
    let view = get_match(State(state), Path(id)).await?;
    Ok(Json(GameStateView {
        state: view.0.board,
    }))
}

/// A move.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveRequest {
    /// The number of marks on the board after this move (the match's `seq` + 1).
    pub seq: u8,
    /// Cell 0-8, row-major from the top-left.
    pub cell: u8,
    /// X or O in tic-tac-toe; S or O in SOS.
    #[schema(value_type = String, example = "X")]
    pub mark: Mark,
    /// Your own signature of the move, so that the match's transcript proves it was yours
    /// (optional; the web app and `triad` sign every move).
    #[serde(default)]
    pub signature: Option<MoveSignatureRequest>,
}

/// A player's Ed25519 signature of a move: of the text `triad-move/v1`, `server: <key_id of
/// /.well-known/triad-transcript-key>`, `match: <id>`, `seq: <seq>`, `cell: <cell>`,
/// `mark: <mark>`, `by: <your address>`, one per line (`docs/transcript.md`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveSignatureRequest {
    /// The Ed25519 public key, 64 hex digits: its Sui address must be yours.
    pub public_key: String,
    /// The signature, 128 hex digits.
    pub signature: String,
}

/// Checks a move's signature against the mover's address; the engine keeps it in the event.
fn move_signature(
    state: &ApiState,
    me: Address,
    match_id: u64,
    req: &MoveRequest,
) -> Result<Option<MoveSignature>, ApiError> {
    let Some(signed) = &req.signature else {
        return Ok(None);
    };
    let key = triad_identity::parse_public_key(&signed.public_key)?;
    if Address::from_bytes(triad_identity::address_of(&key)) != me {
        return Err(ApiError::with_message(
            Api::BadSignature,
            "the move's public key is not the key of your address; sign with the key you logged in with",
        ));
    }
    let text = triad_identity::move_message(
        &crate::transcript::key_id(&state.transcript_key.verifying_key()),
        match_id,
        req.seq,
        req.cell,
        req.mark.char(),
        &me.to_string(),
    );
    triad_identity::verify_ed25519(&signed.public_key, text.as_bytes(), &signed.signature)?;
    let mut signature = [0u8; 64];
    hex::decode_to_slice(&signed.signature, &mut signature).map_err(|_| {
        ApiError::with_message(Api::BadSignature, "the signature is not 128 hex digits")
    })?;
    Ok(Some(MoveSignature {
        public_key: key.to_bytes(),
        signature,
    }))
}

/// Place a mark. A repeat of a move already made (same seq and content) answers with the
/// match and `duplicate: true`, changing nothing.
#[utoipa::path(post, path = "/api/matches/{id}/moves", tag = "matches", params(("id" = u64, Path, description = "Match id")), request_body = MoveRequest,
    responses((status = 201, body = CommandResult), (status = 200, body = CommandResult, description = "a duplicate"), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn make_move(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
    ApiJson(req): ApiJson<MoveRequest>,
) -> Result<impl IntoResponse, ApiError> {
    let command = Command::Move {
        match_id: MatchId(id),
        seq: req.seq,
        cell: req.cell,
        mark: req.mark,
        signed: move_signature(&state, me, id, &req)?,
    };
    run(&state, me, command, &headers, Some(MatchId(id))).await
}

/// Give up: the opponent wins.
#[utoipa::path(post, path = "/api/matches/{id}/forfeit", tag = "matches", params(("id" = u64, Path, description = "Match id")),
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn forfeit(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
) -> Result<impl IntoResponse, ApiError> {
    run(
        &state,
        me,
        Command::Forfeit {
            match_id: MatchId(id),
        },
        &headers,
        Some(MatchId(id)),
    )
    .await
}

/// Claim the win when the opponent is too slow (the `cryptosos` contract's `ur2slow()`), or abort a match whose
/// first move never came.
#[utoipa::path(post, path = "/api/matches/{id}/claim-timeout", tag = "matches", params(("id" = u64, Path, description = "Match id")),
    responses((status = 201, body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn claim_timeout(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
) -> Result<impl IntoResponse, ApiError> {
    run(
        &state,
        me,
        Command::ClaimTimeout {
            match_id: MatchId(id),
        },
        &headers,
        Some(MatchId(id)),
    )
    .await
}

/// Offer a rematch, or accept the opponent's offer.
#[utoipa::path(post, path = "/api/matches/{id}/rematch", tag = "matches", params(("id" = u64, Path, description = "The ended match's id")),
    responses((status = 201, body = CommandResult), (status = 200, description = "A repeat of an earlier request", body = CommandResult), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn rematch(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
) -> Result<impl IntoResponse, ApiError> {
    let key = idempotency_key(&headers)?;
    let command = Command::Rematch {
        match_id: MatchId(id),
    };
    let receipt = execute(&state, me, command, key).await?;
    // Answer with the new match when one started, else the old one with the offer. A
    // repeat (same idempotency key) changed nothing: 200, as for every other command.
    let started = receipt.events.iter().find_map(|e| match e.kind {
        triad_engine::EventKind::GameStarted { match_id, .. } => Some(match_id),
        _ => None,
    });
    reply(
        &state,
        &headers,
        receipt,
        Some(started.unwrap_or(MatchId(id))),
    )
    .await
}

/// Paging through events.
#[derive(Debug, Deserialize, IntoParams)]
pub struct EventsQuery {
    /// Only events with a sequence number above this.
    #[serde(default)]
    pub since: u64,
    /// At most this many (1-1000, default 200).
    pub limit: Option<u32>,
}

/// A page of events.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventPage {
    /// The events, oldest first.
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<serde_json::Value>,
    /// Pass as `since` for the next page; null when this page is the last.
    pub next_since: Option<u64>,
}

pub(crate) fn limit(l: Option<u32>, default: u32, max: u32) -> Result<u32, ApiError> {
    match l {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(_) => Err(ApiError::with_message(
            Api::InvalidParameter,
            format!("limit must be from 1 to {max}"),
        )),
    }
}

/// A match's events, in order.
#[utoipa::path(get, path = "/api/matches/{id}/events", tag = "matches", params(("id" = u64, Path, description = "Match id"), EventsQuery),
    responses((status = 200, body = EventPage), (status = "4XX", body = ErrorBody)))]
pub async fn match_events(
    State(state): State<ApiState>,
    Path(id): Path<u64>,
    Query(q): Query<EventsQuery>,
) -> Result<Json<EventPage>, ApiError> {
    let limit = limit(q.limit, 200, 1000)?;
    let rows = state
        .store
        .topic_events(&crate::store::match_topic(id), q.since, limit)
        .await?;
    let next_since = (rows.len() == limit as usize).then(|| rows.last().map_or(q.since, |r| r.seq));
    let events = rows
        .into_iter()
        .filter_map(|r| serde_json::from_str(&r.body).ok())
        .collect();
    Ok(Json(EventPage { events, next_since }))
}

/// Listing matches.
#[derive(Debug, Deserialize, IntoParams)]
pub struct MatchesQuery {
    /// Only this player's matches.
    pub player: Option<String>,
    /// Only matches in this phase: waiting, ready, in_progress or finished; or active, any
    /// phase but finished.
    pub status: Option<String>,
    /// Only matches with ids below this (the previous page's `next_before`).
    pub before: Option<u64>,
    /// At most this many (1-100, default 20).
    pub limit: Option<u32>,
}

/// A page of matches.
#[derive(Debug, Serialize, ToSchema)]
pub struct MatchPage {
    /// Newest first.
    pub matches: Vec<MatchView>,
    /// Pass as `before` for the next page; null on the last page.
    pub next_before: Option<u64>,
}

/// List matches by player and status, newest first, paginated.
#[utoipa::path(get, path = "/api/matches", tag = "matches", params(MatchesQuery),
    responses((status = 200, body = MatchPage), (status = "4XX", body = ErrorBody)))]
pub async fn list_matches(
    State(state): State<ApiState>,
    Query(q): Query<MatchesQuery>,
) -> Result<Json<MatchPage>, ApiError> {
    let limit = limit(q.limit, 20, 100)?;
    let player = q.player.as_deref().map(parse_address).transpose()?;
    if let Some(s) = q.status.as_deref()
        && !["waiting", "ready", "in_progress", "finished", "active"].contains(&s)
    {
        return Err(ApiError::with_message(
            Api::InvalidParameter,
            "status is waiting, ready, in_progress, finished or active (any but finished)",
        ));
    }
    let matches = state
        .list_matches(player, q.status.as_deref(), q.before, limit)
        .await?;
    let next_before = (matches.len() == limit as usize)
        .then(|| matches.last().map(|m| m.id))
        .flatten();
    Ok(Json(MatchPage {
        matches,
        next_before,
    }))
}

/// A player's stats, rating and active match (the `tictactoe` contract's board by address).
#[utoipa::path(get, path = "/api/players/{address}", tag = "players", params(("address" = String, Path, description = "0x + 64 hex digits")),
    responses((status = 200, body = PlayerView), (status = "4XX", body = ErrorBody)))]
pub async fn get_player(
    State(state): State<ApiState>,
    Path(address): Path<String>,
) -> Result<Json<PlayerView>, ApiError> {
    let address = parse_address(&address)?;
    let profile = state.profiles.of(address).await?;
    let engine = state.core.read().await;
    Ok(Json(
        PlayerView::new(
            address,
            engine.stats(address),
            engine.active_match(address).map(|m| m.0),
        )
        .with_puzzles(engine.puzzle_record_of_player(address))
        .with_profile(profile),
    ))
}

/// The leaderboard's order.
#[derive(Debug, Deserialize, IntoParams)]
pub struct LeaderboardQuery {
    /// rating (default), wins (the hall of fame) or tournaments (tournament wins).
    pub by: Option<String>,
    /// At most this many (1-100, default 20).
    pub limit: Option<u32>,
}

/// The leaderboard.
#[derive(Debug, Serialize, ToSchema)]
pub struct Leaderboard {
    /// rating or wins.
    pub by: &'static str,
    /// Best first.
    pub players: Vec<PlayerView>,
}

/// The leaderboard, by rating or by wins.
#[utoipa::path(get, path = "/api/leaderboard", tag = "players", params(LeaderboardQuery),
    responses((status = 200, body = Leaderboard), (status = "4XX", body = ErrorBody)))]
pub async fn leaderboard(
    State(state): State<ApiState>,
    Query(q): Query<LeaderboardQuery>,
) -> Result<Json<Leaderboard>, ApiError> {
    let limit = limit(q.limit, 20, 100)?;
    let (ranking, by) = match q.by.as_deref() {
        None | Some("rating") => (Ranking::Rating, "rating"),
        Some("wins") => (Ranking::Wins, "wins"),
        Some("tournaments") => (Ranking::TournamentWins, "tournaments"),
        Some(_) => {
            return Err(ApiError::with_message(
                Api::InvalidParameter,
                "by is rating, wins or tournaments",
            ));
        }
    };
    let rows: Vec<_> = {
        let engine = state.core.read().await;
        engine
            .leaderboard(ranking, limit as usize)
            .into_iter()
            .map(|(a, s)| {
                (
                    a,
                    PlayerView::new(a, s, engine.active_match(a).map(|m| m.0)),
                )
            })
            .collect()
    };
    // The profiles after the engine's lock is let go: a database read holds no one up.
    let addresses: Vec<_> = rows.iter().map(|(a, _)| *a).collect();
    let mut profiles = state.profiles.of_each(&addresses).await?;
    let players = rows
        .into_iter()
        .map(|(a, view)| view.with_profile(profiles.remove(&a).unwrap_or_default()))
        .collect();
    Ok(Json(Leaderboard { by, players }))
}
