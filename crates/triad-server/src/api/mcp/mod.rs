//! The Model Context Protocol server at `/mcp`, on rmcp (the official Rust SDK), over
//! streamable HTTP: the tools a player uses, the rules and each match as resources (a match
//! can be subscribed to), and a prompt that teaches a model to play.
//!
//! - Login: the same bearer token as the rest of the API (`triad login`,
//!   `POST /api/auth/login`), checked by the same sessions service as [`super::Authed`],
//!   with the same per-address rate limit, on every HTTP request. Without a token, or with
//!   a bad one, the answer is 401 with the API's error body (and `WWW-Authenticate:
//!   Bearer`), before rmcp sees the request.
//! - Protocol versions: every one rmcp knows. Up to 2025-11-25 a client opens a session
//!   with `initialize` (rmcp's session manager keeps it; `Mcp-Session-Id`), and follows a
//!   match with `resources/subscribe`; from 2026-07-28 each request stands alone and a
//!   client follows matches with `subscriptions/listen`.
//! - Bounds: a session belongs to the login that opened it (another login's request
//!   naming it is answered 404, as an unknown session); one IP address may hold
//!   `--max-mcp-sessions-per-ip` sessions and open streams at once (429 `too_many_open`
//!   past it), and a session idle for `--mcp-session-idle-ms` is closed. A session follows
//!   at most [`server::MAX_SUBSCRIPTIONS`] matches, and `wait_for_turn` counts as a
//!   long-poll.
//!
//! The tools call the REST handlers themselves (`games.rs`, `ledger.rs`, `analysis.rs`),
//! so that a tool does exactly what its endpoint does, and a refusal is the endpoint's
//! error: a tool error (`isError`) carrying the stable `code`, `error` and `message`.

pub mod server;
pub mod text;
pub mod tools;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Router,
    body::Body,
    extract::{Request, State},
    http::{HeaderValue, Method, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use futures_util::StreamExt as _;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
    session::local::{LocalSessionManager, SessionConfig},
};
use tokio_util::sync::CancellationToken;
use triad_engine::Address;

use super::{
    ApiState, ClientIp,
    error::{Api, ApiError},
};
use crate::bounds::{Share, Shares};

/// The header that names a legacy (before 2026-07-28) MCP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The logged-in address of an MCP request, put in the request's extensions by [`admit`];
/// rmcp hands the request's parts to the tools.
#[derive(Copy, Clone, Debug)]
pub struct Caller(pub Address);

/// What stands in front of rmcp: the API's state, the MCP sessions open and who opened
/// them, and the per-IP shares of sessions and streams.
struct Gate {
    state: ApiState,
    shares: Arc<Shares>,
    manager: Arc<LocalSessionManager>,
    sessions: Mutex<HashMap<String, Held>>,
}

/// A session's owner and its share.
struct Held {
    owner: Address,
    _share: Share,
}

impl Gate {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Gives back the shares of sessions rmcp has closed (idle, or ended by the server).
    async fn sweep(&self) {
        let open: std::collections::HashSet<String> = {
            let live = self.manager.sessions.read().await;
            live.keys().map(|id| id.to_string()).collect()
        };
        self.sessions().retain(|id, _| open.contains(id));
    }

    /// A share for a new session or stream of `client`: sessions rmcp closed since are
    /// given back first when the client is at its bound.
    async fn take(&self, client: std::net::IpAddr) -> Result<Share, ApiError> {
        if let Ok(share) = self.shares.take(client) {
            return Ok(share);
        }
        self.sweep().await;
        self.shares
            .take(client)
            .map_err(|why| self.shares.refusal(why).into())
    }
}

/// The `/mcp` route: rmcp's streamable HTTP service behind [`admit`].
pub fn routes(state: &ApiState) -> Router<ApiState> {
    let settings = &state.settings;
    let mut session_config = SessionConfig::default();
    session_config.keep_alive = Some(Duration::from_millis(settings.mcp_session_idle_ms));
    let mut manager = LocalSessionManager::default();
    manager.session_config = session_config;
    let manager = Arc::new(manager);
    // Closed on shutdown, so that no session or stream holds the server open.
    let stop = CancellationToken::new();
    let registration = state.hub.register(1);
    let shutdown = registration.shutdown.clone();
    state.hub.unregister(registration.id);
    let stopping = stop.clone();
    tokio::spawn(async move {
        shutdown.notified().await;
        stopping.cancel();
    });
    let config = StreamableHttpServerConfig::default()
        // Every request carries a login token, which a page that rebinds a name to this
        // server does not have; and the server is reached by names this list cannot know
        // (its public URL, a proxy's).
        .disable_allowed_hosts()
        .with_max_request_body_bytes(settings.max_body_bytes)
        .with_cancellation_token(stop);
    let handler_state = state.clone();
    let service = StreamableHttpService::new(
        move || Ok(server::Triad::new(handler_state.clone())),
        manager.clone(),
        config,
    );
    let gate = Arc::new(Gate {
        state: state.clone(),
        shares: Shares::new(
            "MCP sessions and streams",
            settings.max_mcp_sessions_per_ip,
            settings.max_in_flight_requests,
        ),
        manager,
        sessions: Mutex::default(),
    });
    Router::new()
        .route_service("/mcp", service)
        .layer(middleware::from_fn_with_state(gate, admit))
}

/// A 401 in the API's error shape, with `WWW-Authenticate: Bearer` (RFC 6750), which MCP
/// clients read as "log in again".
fn unauthorized(error: ApiError) -> Response {
    let mut response = error.into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// Logs the request in, keeps each session to its owner and bounds what one IP address
/// holds open, then hands the request to rmcp.
async fn admit(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
    // Named by the per-IP rate limit, outside this layer.
    let client = request
        .extensions()
        .get::<ClientIp>()
        .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |c| c.0);
    let Some(token) = super::bearer(request.headers()) else {
        return unauthorized(ApiError::new(Api::Unauthorized));
    };
    let me = match gate.state.authenticate(token).await {
        Ok(me) => me,
        Err(e) if e.status == axum::http::StatusCode::UNAUTHORIZED => return unauthorized(e),
        Err(e) => return e.into_response(),
    };
    if let Err(e) = gate.state.check_address_rate(me) {
        return e.into_response();
    }
    // Whoever uses the MCP server is an agent: its account is marked a bot (`profiles`).
    if let Err(e) = gate.state.profiles.mark_bot(me).await {
        return ApiError::from(e).into_response();
    }
    request.extensions_mut().insert(Caller(me));
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let method = request.method().clone();
    match session {
        Some(id) => {
            let owner = gate.sessions().get(&id).map(|held| held.owner);
            if owner.is_some_and(|owner| owner != me) {
                return ApiError::with_message(
                    Api::NotFound,
                    "this MCP session was opened by another login; open your own with initialize",
                )
                .into_response();
            }
            let response = next.run(request).await;
            if method == Method::DELETE && response.status().is_success() {
                gate.sessions().remove(&id);
            }
            response
        }
        None if method == Method::POST => {
            let share = match gate.take(client).await {
                Ok(share) => share,
                Err(e) => return e.into_response(),
            };
            let response = next.run(request).await;
            let opened = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            match opened {
                // A new session (`initialize`): the share is held while it is open.
                Some(id) => {
                    gate.sessions().insert(
                        id,
                        Held {
                            owner: me,
                            _share: share,
                        },
                    );
                    response
                }
                // A request of its own (2026-07-28): the share is held while its answer
                // streams (a `subscriptions/listen` streams until the client leaves).
                None => {
                    let (parts, body) = response.into_parts();
                    let stream = body.into_data_stream().map(move |chunk| {
                        let _held = &share;
                        chunk
                    });
                    Response::from_parts(parts, Body::from_stream(stream))
                }
            }
        }
        None => next.run(request).await,
    }
}
