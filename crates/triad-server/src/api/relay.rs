//! The agents' relay over HTTP: send application actions (the A2A
//! tic-tac-toe protocol that Triad's agents speak) to another address, read your
//! inbox by long-poll, and read an app's manifest. The rules and the engine mapping are in
//! [`crate::relay`]; the WebSocket topic `apps` carries the same inbox live.

use std::time::Duration;

use axum::{
    Json,
    extract::{Path, Query, State},
    http::{HeaderMap, StatusCode},
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use triad_protocol::{App, Message, Signed};
use utoipa::{IntoParams, ToSchema};

use super::{
    ApiJson, ApiState, Authed, ClientIp,
    error::{Api, ApiError, ErrorBody},
    games::idempotency_key,
    views::MatchView,
};
use crate::relay::{InboxMessage, Outgoing};

/// An app action for another agent: `{to, appId, action, payload}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendRequest {
    /// The recipient's address.
    pub to: String,
    /// `tic-tac-toe` or `sos`.
    #[schema(example = "tic-tac-toe")]
    pub app_id: String,
    /// `propose`, `accept`, `move` or `result`.
    #[schema(example = "propose")]
    pub action: String,
    /// The payload in the protocol's shape, for example `{"seq":0,"role":"X"}`.
    #[schema(value_type = Object)]
    pub payload: Value,
    /// Optional: `{"publicKey", "signature"}`, the sender's Ed25519 signature of the message
    /// (see `triad_protocol::envelope`), delivered with it so the recipient can check it.
    #[schema(value_type = Option<Object>)]
    #[serde(default, deserialize_with = "super::object::optional")]
    pub signed: Option<Signed>,
    /// Optional, for an `accept`: the match of the proposal accepted (its inbox message's
    /// `matchId`). The acceptance is refused (409, code 128 `terms_differ`) if the pair's
    /// game is another match: it binds to exactly the proposal seen.
    pub match_id: Option<u64>,
}

/// What a send did.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendResponse {
    /// The message's number in the recipient's inbox.
    pub id: u64,
    /// True when this message had already been relayed; it is delivered once.
    pub duplicate: bool,
    /// The engine match that referees the game.
    pub match_id: u64,
    /// That match as it now is: board, turn, outcome.
    #[serde(rename = "match")]
    pub match_: Option<MatchView>,
}

/// Send an app action to another agent (`triad apps send`). The relay checks it
/// against the game by the protocol's rules (refusing it with the reason), has the engine
/// referee it, and delivers it to the recipient's inbox. A resend answers `duplicate: true`.
#[utoipa::path(post, path = "/api/apps/messages", tag = "agents", request_body = SendRequest,
    responses((status = 201, body = SendResponse), (status = 200, body = SendResponse, description = "a resend, delivered once"),
        (status = "4XX", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn send_message(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    ApiJson(req): ApiJson<SendRequest>,
) -> Result<(StatusCode, Json<SendResponse>), ApiError> {
    let to = req
        .to
        .parse()
        .map_err(|_| ApiError::new(Api::InvalidAddress))?;
    let app = App::from_id(&req.app_id)?;
    let message = Message::decode(app, &req.action, &req.payload)?;
    let key = idempotency_key(&headers)?;
    let out = Outgoing {
        to,
        app,
        message,
        signed: req.signed,
        seen: req.match_id.map(triad_engine::MatchId),
    };
    let sent = state.relay.send(me, out, key).await?;
    let match_ = state.match_view(sent.match_id).await?;
    let status = if sent.duplicate {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((
        status,
        Json(SendResponse {
            id: sent.id,
            duplicate: sent.duplicate,
            match_id: sent.match_id.0,
            match_,
        }),
    ))
}

/// Reading the inbox.
#[derive(Debug, Deserialize, IntoParams)]
pub struct InboxQuery {
    /// Only messages after this id (the last one you have read; 0 for all).
    #[serde(default)]
    pub after: u64,
    /// Wait up to this many milliseconds for a message when there is none (long-poll; at
    /// most 25,000 and below the server's request timeout; default 0).
    #[serde(default)]
    pub wait_ms: u64,
    /// At most this many (1-500, default 100).
    pub limit: Option<u32>,
}

/// A page of the inbox.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InboxPage {
    /// Oldest first.
    pub messages: Vec<InboxMessage>,
    /// Pass as `after` next time: the last message's id (or `after` when there was none).
    pub next_after: u64,
}

/// Read my agents' inbox, in order, from a cursor: every message after `after`, waiting
/// up to `wait_ms` for one. Nothing is lost across reconnects: keep the last id you read.
#[utoipa::path(get, path = "/api/apps/inbox", tag = "agents", params(InboxQuery),
    responses((status = 200, body = InboxPage),
        (status = 429, body = ErrorBody, description = "rate_limited (207), or too_many_open (219): this IP address has --max-long-polls-per-ip long-polls waiting; with Retry-After"),
        (status = "4XX", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn inbox(
    State(state): State<ApiState>,
    ClientIp(client): ClientIp,
    Authed(me): Authed,
    Query(q): Query<InboxQuery>,
) -> Result<Json<InboxPage>, ApiError> {
    let limit = match q.limit {
        None => 100,
        Some(n) if (1..=500).contains(&n) => n,
        Some(_) => {
            return Err(ApiError::with_message(
                Api::InvalidParameter,
                "limit must be from 1 to 500",
            ));
        }
    };
    let longest = state
        .settings
        .request_timeout_ms
        .saturating_sub(1_000)
        .min(25_000);
    let wait = Duration::from_millis(q.wait_ms.min(longest));
    // A waiting long-poll holds a connection and a request in flight: each IP address may
    // have `--max-long-polls-per-ip` waiting at once, refused early past that.
    let _waiting = if wait.is_zero() {
        None
    } else {
        Some(
            state
                .long_polls
                .take(client)
                .map_err(|why| state.long_polls.refusal(why))?,
        )
    };
    let messages = state.relay.poll(me, q.after, limit, wait).await?;
    let next_after = messages.last().map_or(q.after, |m| m.id);
    Ok(Json(InboxPage {
        messages,
        next_after,
    }))
}

/// An app's manifest as JSON (`appId`, `version` 0.3.0, the actions).
#[utoipa::path(get, path = "/api/apps/{app_id}/manifest", tag = "agents",
    params(("app_id" = String, Path, description = "tic-tac-toe or sos")),
    responses((status = 200, body = Object), (status = "4XX", body = ErrorBody)))]
pub async fn manifest(Path(app_id): Path<String>) -> Result<Json<Value>, ApiError> {
    let app = App::from_id(&app_id)?;
    Ok(Json(
        serde_json::to_value(app.manifest()).unwrap_or(Value::Null),
    ))
}
