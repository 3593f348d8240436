//! A2A (the Agent2Agent protocol), versions 1.0 and 0.3, for Triad's built-in computer
//! player: an outside A2A agent plays it with the A2A tic-tac-toe protocol's app actions.
//!
//! # Endpoints
//!
//! - `GET /.well-known/agent-card.json`: the agent card ([`card`]): `supportedInterfaces`
//!   lists JSON-RPC at `<public URL>/a2a` for protocol versions `1.0` and `0.3`; it keeps the
//!   0.3 fields (`protocolVersion` `0.3.0`, `url`, `preferredTransport`) for 0.3 clients;
//!   `capabilities.streaming` is true; skills `tic-tac-toe` and `sos`; bearer login. Every
//!   URL in it comes from the configured public URL, never from the request.
//! - `POST /a2a`: JSON-RPC 2.0 ([`jsonrpc`]: notifications, batches, errors), with
//!   `Authorization: Bearer <Triad login token>`. The method names the version: 1.0's are
//!   `SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`, `SubscribeToTask`;
//!   0.3's are `message/send` and `message/stream`. An `A2A-Version` header other than 1.0
//!   or 0.3 (major.minor; none is fine) is refused with -32009. A body over
//!   `--max-body-bytes` is a JSON-RPC error -32600 (HTTP 200, id null).
//!
//! # The game
//!
//! A message's data part is an app action `{"appId", "action", "payload"}` (appId
//! `tic-tac-toe` or `sos`): `propose` (claiming a role) starts a game against the computer,
//! then `move`s, and `result` to declare the end (it must be the engine's) or to abort. The
//! computer answers with app actions: its `accept`, its moves, and the `result` when the
//! game ends. `message.metadata.level` picks the computer's strength for a `propose`:
//! `perfect` (the default), `casual` or `random`. Whole numbers may come as doubles
//! (`"seq": 0.0`), as the SDKs' `google.protobuf.Value` sends them.
//!
//! A game has the `contextId` `triad-match-<match id>` and (1.0) the task id
//! `triad-task-<match id>`; a message names its game by either (when it gives both, they
//! must name the same game), else it is about my game in play.
//!
//! # 1.0 (protobuf JSON, as the official SDKs send and read it)
//!
//! Request: `params.message` = `{"messageId", "role": "ROLE_USER", "parts": [{"data":
//! {appId, action, payload}}, …], "contextId"?, "taskId"?, "metadata"?: {"level"}}` (the
//! level may also come as `params.metadata.level`); the first data part is read, text parts
//! are ignored. `params.configuration` is ignored: every answer is complete when it comes.
//!
//! - `SendMessage` → `{"task": Task}`.
//! - `SendStreamingMessage` → `text/event-stream`; each event's data is a JSON-RPC response
//!   whose result is a `StreamResponse`: first `{"task": Task}` in `TASK_STATE_WORKING`
//!   with the message in its `history`, then `{"statusUpdate": {"taskId", "contextId",
//!   "status"}}` with the state the game came to and the computer's answer; then the stream
//!   ends. A refusal comes as a plain JSON-RPC error instead of a stream.
//! - `GetTask {"id"}` → Task, its status message holding the computer's moves since mine
//!   (and the result once it is over). `historyLength` is ignored: a task keeps no message
//!   history; its `record` artifact holds the whole game.
//! - `CancelTask {"id"}` → Task in `TASK_STATE_CANCELED`: the game is called off (aborted,
//!   as the protocol's `result {"outcome":"abort"}`): nobody wins, it counts in no stats.
//!   A game over already: -32002.
//! - `SubscribeToTask {"id"}` → `text/event-stream`: first `{"task": Task}` as it is, then a
//!   `{"statusUpdate": …}` each time the match changes (my move: `TASK_STATE_WORKING`; the
//!   computer's: `TASK_STATE_INPUT_REQUIRED` with its move; the end: `TASK_STATE_COMPLETED`
//!   or `TASK_STATE_CANCELED` with the result), until the game is over (or the login the
//!   subscription came with ends: then it just stops). A game over already: -32004. At most `--max-a2a-streams-per-ip` streams at once per IP address.
//!
//! Task = `{"id", "contextId", "status": {"state", "message"?}, "artifacts": [record],
//! "metadata": {"appId", "matchId"}}`. The state follows the match:
//! `TASK_STATE_INPUT_REQUIRED` (my move), `TASK_STATE_WORKING` (the computer's),
//! `TASK_STATE_COMPLETED` (won, drawn, forfeited or timed out), `TASK_STATE_CANCELED`
//! (called off). The status message is `{"messageId", "contextId", "taskId", "role":
//! "ROLE_AGENT", "parts": [{"data": {appId, action, payload}, "mediaType":
//! "application/json"}, …]}`: the computer's app actions of this turn. The artifact
//! `record` (`artifactId` `triad-task-<id>-record`) holds every move so far and the result,
//! as app actions in the same parts.
//!
//! # 0.3
//!
//! `message/send` with `params.message` = `{"kind": "message", "role": "user", "parts":
//! [{"kind": "data", "data": {appId, action, payload}}, …], "contextId"?, "metadata"?}` →
//! an agent message `{"kind": "message", "role": "agent", "messageId", "contextId",
//! "parts": [{"kind": "data", "data": …}, …]}`: the computer's app actions.
//! `message/stream` takes the same params and answers `text/event-stream` with one event,
//! that same agent message (a refusal: a plain JSON-RPC error). 0.3's task methods
//! (`tasks/get`, `tasks/cancel`, `tasks/resubscribe`) are not offered: -32601.
//!
//! # Errors
//!
//! A refusal of the game (an illegal move, a tampered board, a wrong result, no game) is
//! -32602 carrying Triad's stable code ([`crate::api::error`]) and a message that says what
//! to do; nothing changes on the server. In 1.0 `error.data` is `[{"@type":
//! "type.googleapis.com/google.rpc.ErrorInfo", "reason": "STATE_CONFLICT", "domain":
//! "triad", "metadata": {"code": "223", "error": "state_conflict", "message"}}]` (the SDKs
//! hand `metadata` to the caller); in 0.3 it is `{"code": 223, "error", "message"}`. Not
//! logged in: -32000 with HTTP 401 and `WWW-Authenticate: Bearer`, its `data` Triad's
//! `{code, error, message}` in either version. See [`jsonrpc`] for the rest.

pub mod card;
pub mod game;
pub mod jsonrpc;
pub mod task;
pub mod v03;
pub mod v1;

use std::{convert::Infallible, net::IpAddr};

use axum::{
    Json,
    body::Body,
    extract::State,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
};
use futures_util::{StreamExt as _, stream};
use serde_json::Value;
use tokio::sync::mpsc;
use triad_engine::{Address, MatchId};

use self::jsonrpc::{
    INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, PUSH_NOT_SUPPORTED, RpcError,
    UNAUTHENTICATED, UNSUPPORTED_OPERATION, VERSION_NOT_SUPPORTED, Version,
};
use super::{ApiState, Authed, ClientIp, error::ApiError};
use crate::bounds::Share;

/// The agent card of Triad's computer player.
#[utoipa::path(get, path = "/.well-known/agent-card.json", tag = "agents",
    responses((status = 200, body = Object, description = "An A2A agent card (1.0, with the 0.3 fields)")))]
pub async fn agent_card(State(state): State<ApiState>) -> Json<Value> {
    Json(card::card(&state))
}

/// What a method is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Method {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    CancelTask,
    SubscribeToTask,
    MessageSend03,
    MessageStream03,
}

impl Method {
    fn version(self) -> Version {
        if matches!(self, Method::MessageSend03 | Method::MessageStream03) {
            Version::V03
        } else {
            Version::V1
        }
    }

    fn streams(self) -> bool {
        matches!(
            self,
            Method::SendStreamingMessage | Method::SubscribeToTask | Method::MessageStream03
        )
    }
}

/// The method a name calls, or why none.
fn method(name: &str) -> Result<Method, (RpcError, Version)> {
    let unsupported =
        |code, what: &str| Err((RpcError::new(code, format!("{name}: {what}")), Version::V1));
    match name {
        "SendMessage" => Ok(Method::SendMessage),
        "SendStreamingMessage" => Ok(Method::SendStreamingMessage),
        "GetTask" => Ok(Method::GetTask),
        "CancelTask" => Ok(Method::CancelTask),
        "SubscribeToTask" => Ok(Method::SubscribeToTask),
        "message/send" => Ok(Method::MessageSend03),
        "message/stream" => Ok(Method::MessageStream03),
        "ListTasks" => unsupported(
            UNSUPPORTED_OPERATION,
            "not supported; GetTask reads a game's task by its id (triad-task-<match id>)",
        ),
        "GetExtendedAgentCard" => unsupported(
            jsonrpc::EXTENDED_CARD_NOT_CONFIGURED,
            "this agent has no extended card; the public card at /.well-known/agent-card.json is all",
        ),
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => unsupported(
            PUSH_NOT_SUPPORTED,
            "push notifications are not supported; SubscribeToTask streams a game's updates",
        ),
        _ => Err((
            RpcError::new(
                METHOD_NOT_FOUND,
                format!(
                    "method not found: {name}; this agent takes SendMessage, SendStreamingMessage, GetTask, CancelTask and SubscribeToTask (A2A 1.0), and message/send and message/stream (A2A 0.3)"
                ),
            ),
            Version::V03,
        )),
    }
}

/// Whether an `A2A-Version` header names a version spoken here (1.0 or 0.3, any patch);
/// no header is fine.
fn version_ok(headers: &HeaderMap) -> Result<(), RpcError> {
    let Some(v) = headers.get("a2a-version") else {
        return Ok(());
    };
    let text = v.to_str().unwrap_or_default().trim();
    let major_minor: Vec<&str> = text.split('.').take(2).collect();
    if matches!(major_minor.as_slice(), ["1", "0"] | ["0", "3"]) {
        Ok(())
    } else {
        Err(RpcError::new(
            VERSION_NOT_SUPPORTED,
            format!("A2A-Version {text:?} is not supported: this agent speaks 1.0 and 0.3"),
        ))
    }
}

/// The login, or the error every request of the body gets.
fn login(authed: &Result<Authed, ApiError>) -> Result<Address, RpcError> {
    match authed {
        Ok(Authed(me)) => Ok(*me),
        Err(e) => Err(RpcError::triad(UNAUTHENTICATED, e)),
    }
}

/// What a request came to.
enum Outcome {
    /// A JSON-RPC result.
    Result(Value),
    /// The events of `SendStreamingMessage` or `message/stream`, and the stream slot they
    /// hold.
    Events(Vec<Value>, Share),
    /// `SubscribeToTask`'s game to follow, for whom, and the stream slot it holds.
    Follow(MatchId, Address, Share),
}

/// A stream slot of the client, or the refusal (Triad's `too_many_open` or
/// `too_many_connections`).
fn take_stream(state: &ApiState, client: IpAddr) -> Result<Share, RpcError> {
    state.a2a_streams.take(client).map_err(|why| {
        let e = ApiError::from(state.a2a_streams.refusal(why));
        RpcError::triad(jsonrpc::TOO_MANY_STREAMS, &e)
    })
}

/// Carries out one checked request.
async fn call(
    state: &ApiState,
    client: IpAddr,
    checks: &Result<Address, RpcError>,
    request: &jsonrpc::Request,
    in_batch: bool,
) -> Result<Outcome, (RpcError, Version)> {
    let m = method(&request.method)?;
    let v = m.version();
    let at = |e: RpcError| (e, v);
    let me = checks.clone().map_err(at)?;
    if m.streams() && in_batch {
        return Err(at(RpcError::new(
            UNSUPPORTED_OPERATION,
            format!(
                "{} streams its answer: send it on its own, not in a batch",
                request.method
            ),
        )));
    }
    let params = &request.params;
    Ok(match m {
        Method::SendMessage => {
            Outcome::Result(v1::send_message(state, me, params).await.map_err(at)?)
        }
        Method::GetTask => Outcome::Result(v1::get_task(state, me, params).await.map_err(at)?),
        Method::CancelTask => {
            Outcome::Result(v1::cancel_task(state, me, params).await.map_err(at)?)
        }
        Method::MessageSend03 => {
            Outcome::Result(v03::message_send(state, me, params).await.map_err(at)?)
        }
        Method::SendStreamingMessage => {
            let share = take_stream(state, client).map_err(at)?;
            let events = v1::send_streaming_message(state, me, params)
                .await
                .map_err(at)?;
            Outcome::Events(events, share)
        }
        Method::MessageStream03 => {
            let share = take_stream(state, client).map_err(at)?;
            let answer = v03::message_send(state, me, params).await.map_err(at)?;
            Outcome::Events(vec![answer], share)
        }
        Method::SubscribeToTask => {
            let share = take_stream(state, client).map_err(at)?;
            let id = v1::subscribe_check(state, me, params).await.map_err(at)?;
            Outcome::Follow(id, me, share)
        }
    })
}

/// One SSE event: the JSON-RPC response carrying `result`.
fn event(id: &Value, result: Value) -> Event {
    Event::default().data(jsonrpc::reply(id, Ok(result)).to_string())
}

/// The HTTP answer to a request's outcome: a JSON reply, or an SSE stream. `token` is the
/// login the request came with: a subscription ends with it.
fn respond(state: &ApiState, token: Option<&str>, id: Value, outcome: Outcome) -> Response {
    match outcome {
        Outcome::Result(result) => json_reply(jsonrpc::reply(&id, Ok(result))),
        Outcome::Events(events, share) => {
            let events = stream::iter(events).map(move |e| {
                // The slot is held until the stream is done.
                let _held = &share;
                Ok::<_, Infallible>(event(&id, e))
            });
            Sse::new(events).into_response()
        }
        Outcome::Follow(game, me, share) => {
            let (tx, rx) = mpsc::channel(16);
            let state = state.clone();
            let token = token.unwrap_or_default().to_owned();
            tokio::spawn(async move {
                let _held = share;
                v1::follow(state, &token, me, game, tx, move |r| event(&id, r)).await;
            });
            let events = stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|e| (Ok::<_, Infallible>(e), rx))
            });
            Sse::new(events)
                .keep_alive(KeepAlive::default())
                .into_response()
        }
    }
}

/// A JSON reply with HTTP 200.
fn json_reply(body: Value) -> Response {
    Json(body).into_response()
}

/// A2A JSON-RPC: 1.0's `SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`,
/// `SubscribeToTask` and 0.3's `message/send` and `message/stream`, one request or a
/// batch.
#[utoipa::path(post, path = "/a2a", tag = "agents", request_body(content = inline(jsonrpc::RpcBody), description = "A JSON-RPC 2.0 request object, or a batch (an array of them): A2A 1.0 SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask; A2A 0.3 message/send, message/stream"),
    responses((status = 200, description = "A JSON-RPC 2.0 response object (a task, an agent message, or an error), an array of them for a batch; for the streaming methods, an SSE stream of them",
            content((inline(jsonrpc::RpcBody) = "application/json"), (String = "text/event-stream"))),
        (status = 204, description = "Notifications only: no reply")),
    security(("bearer" = [])))]
pub async fn rpc(
    State(state): State<ApiState>,
    ClientIp(client): ClientIp,
    headers: HeaderMap,
    authed: Result<Authed, ApiError>,
    body: Body,
) -> Response {
    let limit = state.settings.max_body_bytes;
    let too_large = || {
        json_reply(jsonrpc::reply(
            &Value::Null,
            Err((
                RpcError::new(
                    INVALID_REQUEST,
                    format!(
                        "invalid request: the body is over {limit} bytes; send a smaller request (or a smaller batch)"
                    ),
                ),
                Version::V1,
            )),
        ))
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > u64::try_from(limit).unwrap_or(u64::MAX)) {
        return too_large();
    }
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return too_large();
    };
    let Ok(body) = serde_json::from_slice::<Value>(&bytes) else {
        return json_reply(jsonrpc::reply(
            &Value::Null,
            Err((
                RpcError::new(PARSE_ERROR, "parse error: the body is not JSON"),
                Version::V03,
            )),
        ));
    };
    let mut checks = version_ok(&headers).and_then(|()| login(&authed));
    // Whoever speaks A2A is an agent: its account is marked a bot (`profiles`).
    if let Ok(me) = checks
        && let Err(e) = state.profiles.mark_bot(me).await
    {
        checks = Err(RpcError::triad(INTERNAL_ERROR, &e.into()));
    }
    match body {
        Value::Array(items) => {
            if items.is_empty() {
                return json_reply(jsonrpc::reply(
                    &Value::Null,
                    Err((
                        RpcError::new(
                            INVALID_REQUEST,
                            "invalid request: an empty batch; send one request or an array of them",
                        ),
                        Version::V1,
                    )),
                ));
            }
            let mut replies = Vec::new();
            for item in items {
                match jsonrpc::request(item) {
                    Err((id, e)) => replies.push(jsonrpc::reply(&id, Err((e, Version::V03)))),
                    Ok(request) => {
                        let outcome = call(&state, client, &checks, &request, true).await;
                        if request.id.is_some() {
                            let outcome = outcome.map(|o| match o {
                                Outcome::Result(r) => r,
                                // Refused in a batch before they start.
                                Outcome::Events(..) | Outcome::Follow(..) => Value::Null,
                            });
                            replies.push(jsonrpc::reply(&request.reply_id(), outcome));
                        }
                    }
                }
            }
            if replies.is_empty() {
                StatusCode::NO_CONTENT.into_response()
            } else {
                json_reply(Value::Array(replies))
            }
        }
        single => {
            let request = match jsonrpc::request(single) {
                Ok(request) => request,
                Err((id, e)) => return json_reply(jsonrpc::reply(&id, Err((e, Version::V03)))),
            };
            let id = request.reply_id();
            if request.id.is_none() {
                // A notification: carried out, never answered (a stream nobody would hear
                // is not started).
                if method(&request.method).is_ok_and(|m| !m.streams()) {
                    let _ = call(&state, client, &checks, &request, false).await;
                }
                return StatusCode::NO_CONTENT.into_response();
            }
            match call(&state, client, &checks, &request, false).await {
                Ok(outcome) => respond(&state, super::bearer(&headers), id, outcome),
                Err((e, v)) => {
                    let unauthenticated = e.code == UNAUTHENTICATED;
                    // An HTTP 401 carries Triad's error body as its `data`, whatever the
                    // version, as every refusal of the API with an HTTP error does.
                    let v = if unauthenticated { Version::V03 } else { v };
                    let mut response = json_reply(jsonrpc::reply(&id, Err((e, v))));
                    if unauthenticated {
                        *response.status_mut() = StatusCode::UNAUTHORIZED;
                        response
                            .headers_mut()
                            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                    }
                    response
                }
            }
        }
    }
}
