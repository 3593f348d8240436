//! A2A (the Agent2Agent protocol, version 0.3) for Triad's built-in computer player, so an
//! outside A2A agent can play it over plain HTTP, as the agents' protocol carries app actions:
//!
//! - `GET /.well-known/agent-card.json`: the agent card (skills `tic-tac-toe` and `sos`,
//!   JSON-RPC at `/a2a`, bearer login);
//! - `POST /a2a`: JSON-RPC 2.0 `message/send`. The message's data part is the protocol's
//!   `{appId, action, payload}`; the answer is an agent message whose data parts are the
//!   computer's actions (its `accept`, its moves, and the `result` when the game ends). The
//!   `contextId` is `triad-match-<id>`; the message's `metadata.level` picks the computer's
//!   strength (`perfect`, the default, `casual` or `random`).
//!
//! The game is an engine match against the computer, refereed like every other: each move
//! is checked with [`triad_protocol::check_move`] against the engine's board, and a declared
//! result must be the one the engine recorded. Errors are JSON-RPC errors: -32700 (not JSON),
//! -32600 (not a request), -32601 (another method), -32005 (no data part), -32602 (the
//! game refused it: `data` holds Triad's `{code, error, message}`), -32000 (not logged in,
//! with HTTP 401).

use axum::{
    Json,
    body::Bytes,
    extract::State,
    http::header,
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};
use triad_engine::{Address, Command, EngineError, Level, Match, MatchId, Seat};
use triad_protocol::{
    App, Ending, GameId, GameResult, Message, Outcome, ProtocolError, check_move,
};
use triad_rules::{AnyGame, Player};

use super::{ApiState, Authed, error::ApiError};

/// The A2A protocol version this endpoint speaks.
pub const A2A_VERSION: &str = "0.3.0";

/// The server's public base URL (`--public-url`, else `http://` and the address it listens
/// on), without a trailing `/`. Never from the request: a forged `Host` or
/// `X-Forwarded-Proto` would make the card send agents (and their tokens) elsewhere.
fn base_url(state: &ApiState) -> String {
    if state.settings.public_url.is_empty() {
        format!("http://{}", state.settings.addr)
    } else {
        state.settings.public_url.trim_end_matches('/').to_owned()
    }
}

fn skill(app: App) -> Value {
    let example = |action: &str, payload: Value| {
        json!({"appId": app.id(), "action": action, "payload": payload}).to_string()
    };
    let (role, opening) = match app {
        App::TicTacToe => (
            "X",
            json!({"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}),
        ),
        App::Sos => (
            "first",
            json!({"seq":1,"replyTo":0,"position":4,"mark":"S","board":["","","","","S","","","",""]}),
        ),
    };
    let manifest = app.manifest();
    json!({
        "id": app.id(),
        "name": manifest.name,
        "description": format!(
            "{}. Send app actions as a data part {{appId, action, payload}}: propose \
             (claiming a role), then your moves; the computer answers with its accept, its moves \
             and the result. Triad's engine referees every move. metadata.level: perfect \
             (default), casual or random.",
            manifest.description
        ),
        "tags": ["game", app.id(), "seed-4", "refereed"],
        "examples": [example("propose", json!({"seq":0,"role":role})), example("move", opening)],
        "inputModes": ["application/json"],
        "outputModes": ["application/json"],
    })
}

/// The agent card of Triad's computer player.
#[utoipa::path(get, path = "/.well-known/agent-card.json", tag = "agents",
    responses((status = 200, body = Object, description = "An A2A agent card")))]
pub async fn agent_card(State(state): State<ApiState>) -> Json<Value> {
    let base = base_url(&state);
    Json(json!({
        "protocolVersion": A2A_VERSION,
        "name": "Triad computer",
        "description": "Triad's built-in computer player for tic-tac-toe and SOS, over the A2A \
            agent-to-agent app protocol. It never loses at perfect strength; every game is \
            refereed by Triad's engine.",
        "url": format!("{base}/a2a"),
        "preferredTransport": "JSONRPC",
        "version": env!("CARGO_PKG_VERSION"),
        "provider": {"organization": "Triad", "url": base},
        "documentationUrl": format!("{base}/api/openapi.json"),
        "capabilities": {"streaming": false, "pushNotifications": false, "stateTransitionHistory": false},
        "securitySchemes": {
            "bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "A Triad login token: POST /api/auth/challenge {public_key} with your \
                    Ed25519 key, sign the message, POST /api/auth/login."
            }
        },
        "security": [{"bearer": []}],
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": App::ALL.iter().map(|&a| skill(a)).collect::<Vec<_>>(),
        "supportsAuthenticatedExtendedCard": false,
    }))
}

fn rpc_error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Response {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    Json(json!({"jsonrpc": "2.0", "id": id, "error": error})).into_response()
}

/// A game refusal as a JSON-RPC error, with Triad's error body as its data.
fn refused(id: &Value, e: ApiError) -> Response {
    let data = json!({"code": e.body.code, "error": e.body.error, "message": e.body.message});
    rpc_error(id, -32602, &e.body.message, Some(data))
}

fn part(app: App, message: &Message) -> Value {
    json!({"kind": "data", "data": message.data(app)})
}

/// The position after the first `plies` moves.
fn position_after(m: &Match, plies: usize) -> AnyGame {
    m.moves
        .iter()
        .take(plies)
        .fold(AnyGame::new(m.game()), |g, mv| g.play_unchecked(*mv))
}

/// Move `seq` of a match as a protocol message.
fn move_message(m: &Match, seq: usize, game_id: Option<&GameId>) -> Message {
    let mv = m.moves[seq - 1];
    Message::Move(triad_protocol::Move {
        seq: u8::try_from(seq).unwrap_or(9),
        reply_to: u8::try_from(seq - 1).unwrap_or(8),
        position: mv.cell,
        mark: mv.mark,
        board: triad_protocol::board_of(&position_after(m, seq)),
        game_id: game_id.cloned(),
    })
}

/// The result the engine recorded, in the protocol's words; `None` while the game is on.
fn recorded_result(m: &Match, game_id: Option<&GameId>) -> Option<GameResult> {
    let r = m.result?;
    Some(match (r.reason, r.winner) {
        (triad_engine::EndReason::Draw, _) => GameResult::draw(game_id.cloned()),
        (_, Some(w)) => Ending::Win { winner: w }.to_result(game_id.cloned()),
        (reason, None) => GameResult::abort(reason.name(), game_id.cloned()),
    })
}

/// The computer's moves from `from_seq` on, and the result once the match is over.
fn answer(app: App, m: &Match, from_seq: usize, game_id: Option<&GameId>) -> Vec<Value> {
    let mut parts: Vec<Value> = (from_seq.max(1)..=m.moves.len())
        .map(|s| part(app, &move_message(m, s, game_id)))
        .collect();
    if let Some(result) = recorded_result(m, game_id) {
        parts.push(part(app, &Message::Result(result)));
    }
    parts
}

fn context_id(id: MatchId) -> String {
    format!("triad-match-{}", id.0)
}

/// The human's seat in a computer match.
fn human_seat(m: &Match, me: Address) -> Option<Player> {
    let seats = m.seats?;
    let computer = seats.iter().any(|s| matches!(s, Seat::Computer(_)));
    m.player_of(me).filter(|_| computer)
}

/// The computer match a message is about: the `contextId`'s, else my active one, else my
/// latest.
async fn computer_match(
    state: &ApiState,
    me: Address,
    context: Option<&str>,
) -> Result<Match, ApiError> {
    let no_game = || {
        ApiError::with_message(
            super::error::Api::NoGame,
            "no game against the computer here; send propose first (or the contextId of your game)",
        )
    };
    let id = match context {
        Some(c) => Some(
            c.strip_prefix("triad-match-")
                .and_then(|n| n.parse().ok())
                .map(MatchId)
                .ok_or_else(no_game)?,
        ),
        None => state.core.read().await.active_match(me),
    };
    let m = match id {
        Some(id) => match state.core.read().await.match_(id) {
            Some(m) => Some(m.clone()),
            None => state.store.match_(id).await?,
        },
        None => state
            .store
            .list_matches(Some(me), None, None, 1)
            .await?
            .into_iter()
            .next(),
    };
    m.filter(|m| human_seat(m, me).is_some())
        .ok_or_else(no_game)
}

/// What one data part asked for, played against the computer: the answer's parts and the
/// match.
async fn play(
    state: &ApiState,
    me: Address,
    app: App,
    message: &Message,
    context: Option<&str>,
    level: Level,
) -> Result<(Vec<Value>, MatchId), ApiError> {
    let game_id = message.game_id();
    match message {
        Message::Propose(p) => {
            let receipt = state
                .core
                .execute(
                    me,
                    Command::PlayComputer {
                        game: app.game(),
                        level,
                        side: p.role,
                    },
                    None,
                )
                .await?;
            let id = receipt
                .events
                .iter()
                .find_map(triad_engine::Event::match_id)
                .ok_or(EngineError::UnknownMatch)?;
            let m = computer_match(state, me, Some(&context_id(id))).await?;
            let accept = Message::Accept(triad_protocol::Accept {
                role: p.role.other(),
                game_id: game_id.cloned(),
            });
            let mut parts = vec![part(app, &accept)];
            parts.extend(answer(app, &m, 1, game_id));
            Ok((parts, id))
        }
        Message::Accept(_) => Err(ProtocolError::OutOfTurn {
            problem: "the computer does not propose games; send propose",
        }
        .into()),
        Message::Move(mv) => {
            let m = computer_match(state, me, context).await?;
            if m.game() != app.game() {
                return Err(ProtocolError::OutOfTurn {
                    problem: "this game is of the other app",
                }
                .into());
            }
            let player = human_seat(&m, me).ok_or(EngineError::NotAPlayer)?;
            let seq = usize::from(mv.seq);
            // A resend of a move already made: the same answer again.
            if (1..=m.moves.len()).contains(&seq)
                && m.moves[seq - 1].cell == mv.position
                && m.moves[seq - 1].mark == mv.mark
            {
                check_move(app, &position_after(&m, seq - 1), player, mv)?;
                return Ok((answer(app, &m, seq + 1, game_id), m.id));
            }
            check_move(app, &m.position, player, mv)?;
            state
                .core
                .execute(
                    me,
                    Command::Move {
                        match_id: m.id,
                        seq: mv.seq,
                        cell: mv.position.index(),
                        mark: mv.mark,
                    },
                    None,
                )
                .await?;
            let m = computer_match(state, me, Some(&context_id(m.id))).await?;
            Ok((answer(app, &m, seq + 1, game_id), m.id))
        }
        Message::Result(r) => {
            let m = computer_match(state, me, context).await?;
            // A declaration names its app: it never ends the other app's game.
            if m.game() != app.game() {
                return Err(ProtocolError::OutOfTurn {
                    problem: "this game is of the other app",
                }
                .into());
            }
            match (r.outcome, recorded_result(&m, game_id)) {
                (Outcome::Abort, None) => {
                    state
                        .core
                        .execute(me, Command::Abort { match_id: m.id }, None)
                        .await?;
                    Ok((vec![part(app, message)], m.id))
                }
                (Outcome::Abort, Some(recorded)) => {
                    let mut e = ApiError::from(EngineError::Move(triad_rules::MoveError::GameOver));
                    e.body.message = format!(
                        "the game is over ({}); there is nothing to abort",
                        recorded.describe(app)
                    );
                    Err(e)
                }
                // The declaration must be the engine's record; the answer confirms it.
                (_, Some(recorded))
                    if (recorded.outcome, recorded.winner) == (r.outcome, r.winner) =>
                {
                    Ok((vec![part(app, &Message::Result(recorded))], m.id))
                }
                (_, recorded) => Err(ProtocolError::ResultMismatch {
                    declared: r.describe(app),
                    actual: recorded.map_or_else(|| "in play".to_owned(), |g| g.describe(app)),
                }
                .into()),
            }
        }
    }
}

/// A2A JSON-RPC: `message/send` with a data part `{appId, action, payload}`.
#[utoipa::path(post, path = "/a2a", tag = "agents", request_body(content = Object, description = "A JSON-RPC 2.0 message/send request"),
    responses((status = 200, body = Object, description = "A JSON-RPC 2.0 response: an agent message, or an error")),
    security(("bearer" = [])))]
pub async fn rpc(
    State(state): State<ApiState>,
    authed: Result<Authed, ApiError>,
    body: Bytes,
) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return rpc_error(
            &Value::Null,
            -32700,
            "parse error: the body is not JSON",
            None,
        );
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let valid_id = matches!(id, Value::Null | Value::String(_) | Value::Number(_));
    if request.get("jsonrpc") != Some(&json!("2.0")) || !valid_id {
        return rpc_error(
            &id,
            -32600,
            "invalid request: send a JSON-RPC 2.0 request",
            None,
        );
    }
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return rpc_error(&id, -32600, "invalid request: no method", None);
    };
    if method != "message/send" {
        return rpc_error(
            &id,
            -32601,
            &format!("method not found: {method}; this agent takes message/send"),
            None,
        );
    }
    let me = match authed {
        Ok(Authed(me)) => me,
        Err(e) => {
            let data =
                json!({"code": e.body.code, "error": e.body.error, "message": e.body.message});
            let mut response = rpc_error(&id, -32000, &e.body.message, Some(data));
            *response.status_mut() = e.status;
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return response;
        }
    };
    let message = &request["params"]["message"];
    let parts = message["parts"].as_array();
    if !message.is_object() || message["role"] != "user" || parts.is_none() {
        return rpc_error(
            &id,
            -32602,
            "invalid params: params.message must be a user message with parts",
            None,
        );
    }
    let Some(data) = parts
        .into_iter()
        .flatten()
        .find(|p| p["kind"] == "data")
        .map(|p| &p["data"])
    else {
        return rpc_error(
            &id,
            -32005,
            "content type not supported: send a data part {appId, action, payload}",
            None,
        );
    };
    let (app, decoded) = match triad_protocol::decode_data(data) {
        Ok(decoded) => decoded,
        Err(e) => return refused(&id, e.into()),
    };
    let level = match message["metadata"]["level"].as_str() {
        None | Some("perfect") => Level::Perfect,
        Some("casual") => Level::Casual,
        Some("random") => Level::Random,
        Some(other) => {
            return rpc_error(
                &id,
                -32602,
                &format!("invalid params: metadata.level {other:?}; use perfect, casual or random"),
                None,
            );
        }
    };
    let context = message["contextId"].as_str();
    match play(&state, me, app, &decoded, context, level).await {
        Ok((parts, match_id)) => {
            let seq = state.core.read().await.next_seq();
            Json(json!({
                "jsonrpc": "2.0",
                "id": id,
                "result": {
                    "kind": "message",
                    "role": "agent",
                    "messageId": format!("triad-{}-{seq}", match_id.0),
                    "contextId": context_id(match_id),
                    "parts": parts,
                }
            }))
            .into_response()
        }
        Err(e) => refused(&id, e),
    }
}
