//! The HTTP API: state, extractors, the router and its middleware.

pub mod a2a;
pub mod analysis;
pub mod auth;
pub mod client_ip;
pub mod error;
pub mod games;
pub mod ledger;
pub mod mcp;
pub mod notation;
pub mod object;
pub mod profiles;
pub mod puzzles;
pub mod relay;
pub mod review;
pub mod system;
pub mod tournaments;
pub mod transcript;
pub mod views;
pub mod ws;

pub use client_ip::ClientIp;

use std::{
    net::IpAddr,
    num::NonZeroU32,
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{
    Router,
    extract::{DefaultBodyLimit, FromRequest, FromRequestParts, MatchedPath, Request, State},
    http::{HeaderMap, header, request::Parts},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use governor::{
    DefaultKeyedRateLimiter, Quota, RateLimiter,
    clock::{Clock as _, DefaultClock},
};
use metrics_exporter_prometheus::PrometheusHandle;
use serde::de::DeserializeOwned;
use tokio::sync::Semaphore;
use tower::ServiceBuilder;
use tower_http::{
    request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer},
    trace::TraceLayer,
};
use triad_engine::{Address, Match, MatchId, Phase};
use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};

use self::{
    error::{Api, ApiError},
    views::MatchView,
};
use crate::{config::Settings, core::Core, hub::Hub, store::Store};

/// Everything a handler may need, behind one `Arc`: axum clones the state for every
/// extractor of every request, and a clone is then one reference count, not one per field
/// (the field-by-field clone and drop were ~5% of the server's CPU under load).
#[derive(Clone, Debug)]
pub struct ApiState(Arc<Shared>);

impl ApiState {
    /// Wraps the shared parts.
    #[must_use]
    pub fn new(shared: Shared) -> ApiState {
        ApiState(Arc::new(shared))
    }
}

impl std::ops::Deref for ApiState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What [`ApiState`] shares.
pub struct Shared {
    /// The engine and its writer.
    pub core: Core,
    /// The database.
    pub store: Store,
    /// Realtime subscribers.
    pub hub: Hub,
    /// The settings in force.
    pub settings: Arc<Settings>,
    /// Login challenges and sessions.
    pub sessions: Arc<crate::sessions::Sessions>,
    /// Players' display names and bot marks.
    pub profiles: Arc<crate::profiles::Profiles>,
    /// Rate limiters.
    pub limits: Arc<Limits>,
    /// The Prometheus exporter.
    pub metrics: PrometheusHandle,
    /// Open WebSockets, shared out per IP address.
    pub websockets: Arc<crate::bounds::Shares>,
    /// Waiting long-polls of the agents' inbox, shared out per IP address.
    pub long_polls: Arc<crate::bounds::Shares>,
    /// Open A2A streams (`SendStreamingMessage`, `SubscribeToTask`), shared out per IP
    /// address.
    pub a2a_streams: Arc<crate::bounds::Shares>,
    /// The OpenAPI document.
    pub openapi: Arc<utoipa::openapi::OpenApi>,
    /// The agents' relay.
    pub relay: Arc<crate::relay::Relay>,
    /// The key that signs the matches' transcripts ([`crate::transcript`]).
    pub transcript_key: Arc<triad_identity::SigningKey>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Per-IP and per-address rate limiters, the per-IP budgets of replayed events and of log
/// lines, and the one clock they and every WebSocket's limiter read (a clock made afresh
/// checks the CPU's counter support again).
#[derive(Debug)]
pub struct Limits {
    per_ip: DefaultKeyedRateLimiter<IpAddr>,
    per_address: DefaultKeyedRateLimiter<Address>,
    /// Events replayed from the log to one IP's WebSocket catch-ups.
    replay: DefaultKeyedRateLimiter<IpAddr>,
    /// Request log lines per IP.
    pub log_lines: crate::bounds::LogBudget,
    clock: DefaultClock,
}

impl Limits {
    /// Limiters for the settings.
    #[must_use]
    pub fn new(settings: &Settings) -> Limits {
        let burst = NonZeroU32::new(settings.rate_burst).unwrap_or(NonZeroU32::MIN);
        let quota = |rate: u32| {
            Quota::per_second(NonZeroU32::new(rate).unwrap_or(NonZeroU32::MIN)).allow_burst(burst)
        };
        let clock = DefaultClock::default();
        let replay = NonZeroU32::new(settings.replay_events_per_ip).unwrap_or(NonZeroU32::MIN);
        // Twice the rate in a burst, and at least two pages: one page must always fit.
        let replay_burst = replay
            .saturating_mul(NonZeroU32::new(2).unwrap_or(NonZeroU32::MIN))
            .max(NonZeroU32::new(2 * ws::CATCH_UP_PAGE).unwrap_or(NonZeroU32::MIN));
        Limits {
            per_ip: RateLimiter::dashmap_with_clock(quota(settings.rate_per_ip), clock.clone()),
            per_address: RateLimiter::dashmap_with_clock(
                quota(settings.rate_per_address),
                clock.clone(),
            ),
            replay: RateLimiter::dashmap_with_clock(
                Quota::per_second(replay).allow_burst(replay_burst),
                clock.clone(),
            ),
            log_lines: crate::bounds::LogBudget::new(settings.log_lines_per_ip, clock.clone()),
            clock,
        }
    }

    /// Forgets idle keys, so the limiters' memory stays bounded.
    pub fn shrink(&self) {
        self.per_ip.retain_recent();
        self.per_address.retain_recent();
        self.replay.retain_recent();
    }

    /// Counts `events` replayed to `client` against its budget.
    ///
    /// # Errors
    /// `rate_limited`, saying how long to wait, when the client is over it.
    pub fn check_replay(&self, client: IpAddr, events: u32) -> Result<(), ApiError> {
        let Some(n) = NonZeroU32::new(events) else {
            return Ok(());
        };
        match self.replay.check_key_n(&client, n) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(not_until)) => Err(ApiError::with_message(
                Api::RateLimited,
                "this IP address has had as many events replayed as it may for now; subscribe again after retry_after_s",
            )
            .retry_after(not_until.wait_time_from(self.clock.now()).as_secs_f64().ceil() as u64)),
            // More than the burst at once: never asked for (a page fits in the burst).
            Err(_) => Err(ApiError::new(Api::RateLimited).retry_after(1)),
        }
    }
}

fn rate_limited(wait: Duration) -> ApiError {
    ApiError::new(Api::RateLimited).retry_after(wait.as_secs_f64().ceil() as u64)
}

impl ApiState {
    /// The address a login token belongs to.
    ///
    /// # Errors
    /// When the token is unknown, forged, revoked or expired.
    pub async fn authenticate(&self, token: &str) -> Result<Address, ApiError> {
        let (address, _, _) = self.sessions.authenticate(token).await?;
        Ok(address)
    }

    /// Counts one request against `address`'s rate limit.
    ///
    /// # Errors
    /// `rate_limited`, saying how long to wait, when the address is over its limit.
    pub fn check_address_rate(&self, address: Address) -> Result<(), ApiError> {
        self.limits
            .per_address
            .check_key(&address)
            .map_err(|not_until| rate_limited(not_until.wait_time_from(self.limits.clock.now())))
    }

    /// A match's view: from the engine while it holds the match, else from the database.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn match_view(&self, id: MatchId) -> Result<Option<MatchView>, ApiError> {
        let config = {
            let engine = self.core.read().await;
            if let Some(m) = engine.match_(id) {
                return Ok(Some(MatchView::new(m, engine.config())));
            }
            engine.config().clone()
        };
        Ok(self
            .store
            .match_(id)
            .await?
            .map(|m| MatchView::new(&m, &config)))
    }

    /// Matches newest first, with ids below `before`, optionally of one player (those the
    /// match concerns: its players and a challenge's opponent) and in one status (a phase's
    /// name, or `active` for any but finished): the live ones from the engine, which holds
    /// every one, the finished ones from the archive (`Store::list_finished_matches`).
    ///
    /// The engine is read first. A match that finishes after that read is committed to the
    /// archive before the engine shows it finished, so the archive's read finds it: no
    /// match falls between the two reads, and one found in both is taken as archived.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn list_matches(
        &self,
        player: Option<Address>,
        status: Option<&str>,
        before: Option<u64>,
        limit: u32,
    ) -> Result<Vec<MatchView>, ApiError> {
        let below = MatchId(before.unwrap_or(u64::MAX));
        let wanted = |phase: Phase| match status {
            None => true,
            Some("active") => phase != Phase::Finished,
            Some(name) => phase.name() == name,
        };
        let page = limit as usize;
        let (mut matches, config) = {
            let engine = self.core.read().await;
            let live: Vec<Match> = match player {
                Some(address) => engine
                    .live_matches_concerning(address)
                    .filter(|m| m.id < below && wanted(m.phase))
                    .take(page)
                    .cloned()
                    .collect(),
                None => engine
                    .live_matches_before(below)
                    .filter(|m| wanted(m.phase))
                    .take(page)
                    .cloned()
                    .collect(),
            };
            (live, engine.config().clone())
        };
        if wanted(Phase::Finished) {
            let archived = self
                .store
                .list_finished_matches(player, before, limit)
                .await?;
            matches.retain(|live| !archived.iter().any(|m| m.id == live.id));
            matches.extend(archived);
            matches.sort_unstable_by_key(|m| std::cmp::Reverse(m.id));
            matches.truncate(page);
        }
        Ok(matches.iter().map(|m| MatchView::new(m, &config)).collect())
    }

    /// A match as the engine holds it, or as last stored once it left memory.
    ///
    /// # Errors
    /// When the database cannot be read.
    pub async fn match_record(&self, id: MatchId) -> Result<Option<triad_engine::Match>, ApiError> {
        if let Some(m) = self.core.read().await.match_(id) {
            return Ok(Some(m.clone()));
        }
        Ok(self.store.match_(id).await?)
    }
}

/// The bearer token of a request, if any.
#[must_use]
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// The logged-in address of a request (and its per-address rate limit).
#[derive(Copy, Clone, Debug)]
pub struct Authed(pub Address);

impl FromRequestParts<ApiState> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &ApiState,
    ) -> Result<Self, Self::Rejection> {
        let token = bearer(&parts.headers).ok_or_else(|| ApiError::new(Api::Unauthorized))?;
        let address = state.authenticate(token).await?;
        state.check_address_rate(address)?;
        Ok(Authed(address))
    }
}

/// A JSON body, which must be an object ([`object::Object`]: `[1]` is not a withdrawal of
/// 1), whose errors come back in the API's error shape (`bad_request`, 200).
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<object::Object<T>>::from_request(req, state).await {
            Ok(axum::Json(object::Object(v))) => Ok(ApiJson(v)),
            Err(rejection) => {
                if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                    Err(ApiError::new(Api::PayloadTooLarge))
                } else {
                    Err(ApiError::with_message(
                        Api::BadRequest,
                        rejection.body_text(),
                    ))
                }
            }
        }
    }
}

/// The OpenAPI document's frame; the paths come from the handlers.
#[derive(OpenApi)]
#[openapi(
    info(title = "Triad", description = "Tic-tac-toe and SOS for people, agents and staked matches. \
        Every error is {code, error, message}; log in with /api/auth/challenge and /api/auth/login."),
    modifiers(&BearerAuth),
    tags(
        (name = "auth", description = "Ed25519 challenge-response login"),
        (name = "challenges", description = "Direct challenges, with consent"),
        (name = "queue", description = "The open queue: join, wait, leave"),
        (name = "matches", description = "Playing, the computer, history"),
        (name = "players", description = "Stats, ratings, the hall of fame"),
        (name = "puzzles", description = "The solver's puzzles: win in N, save the draw, the daily puzzle, rated attempts"),
        (name = "ledger", description = "Balances, deposits, withdrawals, the reserve"),
        (name = "realtime", description = "The WebSocket"),
        (name = "system", description = "Health, metrics, this document"),
        (name = "review", description = "Game review with the solver, board pictures"),
        (name = "agents", description = "Agent-to-agent app messages (the A2A tic-tac-toe protocol), relayed and refereed; A2A for the computer"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The API's routes and their OpenAPI document (as generated; [`openapi`] is the one served).
pub fn routes() -> (Router<ApiState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(auth::challenge))
        .routes(routes!(auth::login))
        .routes(routes!(auth::logout))
        .routes(routes!(auth::me))
        .routes(routes!(profiles::set_name))
        .routes(routes!(games::create_challenge, games::list_challenges))
        .routes(routes!(games::accept_challenge))
        .routes(routes!(games::decline_challenge))
        .routes(routes!(games::withdraw_challenge))
        .routes(routes!(games::join_queue, games::leave_queue))
        .routes(routes!(games::play_computer))
        .routes(routes!(games::list_matches))
        .routes(routes!(games::get_match))
        .routes(routes!(games::game_state))
        .routes(routes!(games::make_move))
        .routes(routes!(games::forfeit))
        .routes(routes!(games::claim_timeout))
        .routes(routes!(games::rematch))
        .routes(routes!(games::match_events))
        .routes(routes!(notation::match_notation))
        .routes(routes!(games::get_player))
        .routes(routes!(games::leaderboard))
        .routes(routes!(analysis::analyze))
        .routes(routes!(review::review_match))
        .routes(routes!(review::review_moves))
        .routes(routes!(review::review_record))
        .routes(routes!(review::board_image))
        .routes(routes!(puzzles::daily))
        .routes(routes!(puzzles::list))
        .routes(routes!(puzzles::get))
        .routes(routes!(puzzles::attempt))
        .routes(routes!(tournaments::list, tournaments::create))
        .routes(routes!(tournaments::get))
        .routes(routes!(tournaments::join))
        .routes(routes!(tournaments::leave))
        .routes(routes!(tournaments::pause))
        .routes(routes!(tournaments::cancel))
        .routes(routes!(ledger::my_ledger))
        .routes(routes!(ledger::deposit))
        .routes(routes!(ledger::withdraw))
        .routes(routes!(ledger::reserve))
        .routes(routes!(ledger::collect))
        .routes(routes!(ws::upgrade))
        .routes(routes!(system::healthz))
        .routes(routes!(system::metrics))
        .routes(routes!(system::openapi_json))
        .routes(routes!(system::dev_clock))
        .routes(routes!(relay::send_message))
        .routes(routes!(relay::inbox))
        .routes(routes!(relay::manifest))
        .routes(routes!(a2a::agent_card))
        .routes(routes!(a2a::rpc))
        .routes(routes!(transcript::transcript))
        .routes(routes!(transcript::transcript_key))
        .split_for_parts()
}

/// The OpenAPI document the server serves: [`routes`]'s, with `Prefer: return=minimal` on
/// every command. Built once per process (the pass goes through JSON: ~20 M instructions).
pub fn openapi() -> utoipa::openapi::OpenApi {
    static DOC: std::sync::OnceLock<utoipa::openapi::OpenApi> = std::sync::OnceLock::new();
    DOC.get_or_init(|| prefer_minimal(routes().1)).clone()
}

/// Documents `Prefer: return=minimal` (RFC 7240) on every command, that is every operation
/// whose success answer is a `CommandResult`: the request header, the answer's
/// `oneOf` `CommandResult` or `CommandAck`, and its `Preference-Applied` header.
fn prefer_minimal(openapi: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    use serde_json::{Value, json};
    use utoipa::{PartialSchema as _, ToSchema as _};
    let Ok(mut doc) = serde_json::to_value(&openapi) else {
        return openapi;
    };
    let full = json!({"$ref": "#/components/schemas/CommandResult"});
    let prefer = json!({
        "name": "Prefer",
        "in": "header",
        "required": false,
        "description": "`return=minimal` (RFC 7240): answer with a CommandAck (the match id and \
            the new events' sequence numbers, which the WebSocket delivers in full) instead of \
            the match view and the events.",
        "schema": {"type": "string", "enum": ["return=minimal", "return=representation"]},
    });
    let applied = json!({
        "description": "`return=minimal` when the answer is a CommandAck.",
        "schema": {"type": "string", "enum": ["return=minimal"]},
    });
    let mut documented = false;
    if let Some(paths) = doc["paths"].as_object_mut() {
        for operation in paths
            .values_mut()
            .filter_map(Value::as_object_mut)
            .flat_map(|item| item.values_mut())
        {
            let Some(responses) = operation
                .get_mut("responses")
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            let mut command = false;
            for response in responses.values_mut() {
                // Read with a pointer: indexing a missing key would insert it.
                let Some(schema) = response.pointer_mut("/content/application~1json/schema") else {
                    continue;
                };
                if *schema == full {
                    *schema = json!({"oneOf": [full, {"$ref": "#/components/schemas/CommandAck"}]});
                    if let Some(response) = response.as_object_mut() {
                        let headers = response.entry("headers").or_insert_with(|| json!({}));
                        headers["Preference-Applied"] = applied.clone();
                    }
                    command = true;
                }
            }
            if command {
                match operation["parameters"].as_array_mut() {
                    Some(parameters) => parameters.push(prefer.clone()),
                    None => operation["parameters"] = json!([prefer]),
                }
                documented = true;
            }
        }
    }
    if documented {
        doc["components"]["schemas"][games::CommandAck::name().as_ref()] =
            serde_json::to_value(games::CommandAck::schema()).unwrap_or_default();
    }
    serde_json::from_value(doc).unwrap_or(openapi)
}

/// Numbers each request, for the logs.
#[derive(Clone, Debug, Default)]
struct Counter(Arc<std::sync::atomic::AtomicU64>);

impl MakeRequestId for Counter {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        axum::http::HeaderValue::from_str(&format!("{n:x}"))
            .ok()
            .map(RequestId::new)
    }
}

/// A request slower than this is logged at WARN, whatever its status.
const SLOW_REQUEST: Duration = Duration::from_secs(1);

/// The most bytes of a client-chosen value (the path, the method) a log line carries.
const MAX_LOGGED: usize = 200;

/// The whole application: routes, state and middleware. Tests drive it with `oneshot`.
///
/// From the outside in: the per-IP rate limit (a refused request is counted in one
/// series and neither logged nor measured further, so a flood costs little), the request
/// id and the tracing span, [`observe`] (metrics with bounded labels, and the request log
/// line within the client's log budget), the body limits, the in-flight limit (not for
/// `/healthz`) and the request timeout.
pub fn router(state: ApiState) -> Router {
    let (router, _) = routes();
    // The MCP server: not a REST resource, so not in the OpenAPI document.
    let router = router.merge(mcp::routes(&state));
    // The review pages with their link previews: pages of the web app, not in the document.
    let router = router
        .route("/review/{id}", axum::routing::get(review::review_page))
        .route("/review", axum::routing::get(review::moves_page));
    let timeout = Duration::from_millis(state.settings.request_timeout_ms);
    // One semaphore for the whole server: `Router::layer` builds a layer per route, so a
    // plain concurrency limit would count each route on its own.
    let in_flight = Arc::new(Semaphore::new(state.settings.max_in_flight_requests));
    router
        // The web app's files and pages; `/api/…` paths no route matched are `not_found`.
        .fallback(web_app)
        .layer(
            ServiceBuilder::new()
                // Outermost, so that every answer has them: the limiter's, the timeout's.
                .layer(middleware::from_fn(security_headers))
                .layer(middleware::from_fn_with_state(state.clone(), limit_ip))
                .layer(SetRequestIdLayer::x_request_id(Counter::default()))
                .layer(TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
                    let id = req
                        .headers()
                        .get("x-request-id")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("-")
                        .to_owned();
                    let method = crate::bounds::truncated(req.method().as_str(), MAX_LOGGED);
                    let path = crate::bounds::truncated(req.uri().path(), MAX_LOGGED);
                    tracing::info_span!("request", request_id = %id, method = %method, path = %path)
                })
                // [`observe`] logs the answer, within the client's budget.
                .on_response(())
                .on_failure(()))
                .layer(PropagateRequestIdLayer::x_request_id())
                .layer(middleware::from_fn_with_state(state.clone(), observe))
                .layer(middleware::from_fn_with_state(state.clone(), declared_length))
                .layer(middleware::from_fn(json_errors))
                .layer(middleware::from_fn_with_state(in_flight, limit_in_flight))
                .layer(axum::error_handling::HandleErrorLayer::new(|e: tower::BoxError| async move {
                    if e.is::<tower::timeout::error::Elapsed>() {
                        ApiError::new(Api::Timeout)
                    } else {
                        ApiError::new(Api::TooManyConnections).retry_after(1)
                    }
                }))
                .timeout(timeout),
        )
        .layer(DefaultBodyLimit::max(state.settings.max_body_bytes))
        .with_state(state)
}

/// The router's fallback: the web app's files and pages ([`crate::web`]), or, when it
/// has none, the reason in the API's error shape.
async fn web_app(
    method: axum::http::Method,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Result<Response, crate::web::NotServed> {
    crate::web::serve(&method, &uri, &headers)
}

/// Whether a path is the API's (answers about one player, at one moment) rather than the
/// web app's files: `/api/…`, the agents' `/a2a` and card, `/mcp`, `/healthz` and `/metrics`.
fn is_api_path(path: &str) -> bool {
    path == "/api"
        || path.starts_with("/api/")
        || path == "/a2a"
        || path == "/mcp"
        || path.starts_with("/.well-known/")
        || path == "/healthz"
        || path == "/metrics"
}

/// `X-Content-Type-Options: nosniff` on every answer (a browser never reads JSON or a
/// player's text as a script or a page), and `Cache-Control: no-store` on the API's,
/// errors included, so no browser or proxy cache keeps a balance, a token or an inbox.
/// The web app's files keep their own `Cache-Control` (`web.rs`).
async fn security_headers(request: Request, next: Next) -> Response {
    let api = is_api_path(request.uri().path());
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        axum::http::HeaderValue::from_static("nosniff"),
    );
    if api {
        headers.insert(
            header::CACHE_CONTROL,
            axum::http::HeaderValue::from_static("no-store"),
        );
    }
    response
}

/// Gives axum's own refusals the API's error shape: a path or query parameter that does not
/// parse and a WebSocket upgrade without its headers come as plain text, a method the path
/// does not take (405) with an empty body. The status (and an `Allow` header) are kept.
/// The web app's own "not found" page (HTML, for a browser's navigation; `web.rs`) is
/// left as it is.
async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let kind = response.headers().get(header::CONTENT_TYPE);
    let is_json = kind.is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let is_page = kind.is_some_and(|v| v.as_bytes().starts_with(b"text/html"));
    if !response.status().is_client_error() || is_json || is_page {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let mut error = match parts.status {
        axum::http::StatusCode::METHOD_NOT_ALLOWED => ApiError::new(Api::MethodNotAllowed),
        axum::http::StatusCode::NOT_FOUND => ApiError::new(Api::NotFound),
        _ if text.is_empty() => ApiError::new(Api::BadRequest),
        _ => ApiError::with_message(
            Api::BadRequest,
            format!("{text}; check the request against the API document at /api/openapi.json"),
        ),
    };
    error.status = parts.status;
    let mut response = error.into_response();
    if let Some(allow) = parts.headers.get(header::ALLOW) {
        response.headers_mut().insert(header::ALLOW, allow.clone());
    }
    response
}

/// Refuses at once a body whose declared length is over the limit, rather than reading it
/// up to the limit (or waiting, until the request times out, for bytes that never come).
async fn declared_length(State(state): State<ApiState>, request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let limit = u64::try_from(state.settings.max_body_bytes).unwrap_or(u64::MAX);
    // `/a2a` refuses it itself, as a JSON-RPC error.
    if declared.is_some_and(|n| n > limit) && request.uri().path() != "/a2a" {
        return ApiError::with_message(
            Api::PayloadTooLarge,
            format!("the request body is too large: at most {limit} bytes"),
        )
        .into_response();
    }
    next.run(request).await
}

/// The per-IP rate limit, first of all: the client is named here ([`ClientIp`]: behind a
/// trusted proxy, the forwarded address), kept in the request's extensions for every later
/// check, and a refused request costs one counter.
async fn limit_ip(State(state): State<ApiState>, mut request: Request, next: Next) -> Response {
    let client = ClientIp::of(
        request.extensions(),
        request.headers(),
        &state.settings.trusted_proxies,
    );
    if let Err(not_until) = state.limits.per_ip.check_key(&client.0) {
        metrics::counter!("triad_http_rate_limited_total").increment(1);
        return rate_limited(not_until.wait_time_from(state.limits.clock.now())).into_response();
    }
    request.extensions_mut().insert(client);
    next.run(request).await
}

/// Requests handled at once, refused past `--max-in-flight-requests` (`too_many_connections`,
/// 503). `/healthz` is never refused, so that it still answers when the server is full.
async fn limit_in_flight(
    State(permits): State<Arc<Semaphore>>,
    request: Request,
    next: Next,
) -> Response {
    if request.uri().path() == "/healthz" {
        return next.run(request).await;
    }
    let Ok(_permit) = permits.try_acquire() else {
        return ApiError::new(Api::TooManyConnections)
            .retry_after(1)
            .into_response();
    };
    next.run(request).await
}

/// The method as a metrics label: one of the standard methods, else `other` (a client
/// may send any token as a method; each would be a new series).
fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method as M;
    match *method {
        M::GET => "GET",
        M::HEAD => "HEAD",
        M::POST => "POST",
        M::PUT => "PUT",
        M::DELETE => "DELETE",
        M::PATCH => "PATCH",
        M::OPTIONS => "OPTIONS",
        M::CONNECT => "CONNECT",
        M::TRACE => "TRACE",
        _ => "other",
    }
}

/// Metrics and the request log line of a request that passed the rate limit.
///
/// Every label comes from a closed set: the route is the matched route's template (or
/// `unmatched`, whatever the path), the method one of the standard ones or `other`, the
/// status the one the server chose. The log line (in the request's span: request id,
/// method, path, each cut to [`MAX_LOGGED`] bytes) is DEBUG for a request that succeeded,
/// INFO for a client or server error, WARN for one slower than [`SLOW_REQUEST`]; the INFO
/// and WARN lines count against the client's log budget (`--log-lines-per-ip`), and those
/// past it are summed up once a minute. An INFO line for every request cost ~4% of the
/// server's CPU under load (`triad bench`, 100 concurrent games).
async fn observe(State(state): State<ApiState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = method_label(request.method());
    let client = ClientIp::of(
        request.extensions(),
        request.headers(),
        &state.settings.trusted_proxies,
    );
    let started = Instant::now();
    let response = next.run(request).await;
    let latency = started.elapsed();
    let status = response.status().as_u16();
    metrics::counter!("triad_http_requests_total", "route" => route.clone(), "method" => method, "status" => status.to_string()).increment(1);
    metrics::histogram!("triad_http_request_seconds", "route" => route)
        .record(latency.as_secs_f64());
    let latency_ms = latency.as_secs_f64() * 1000.0;
    if latency < SLOW_REQUEST && status < 400 {
        tracing::debug!(status, latency_ms, "finished processing request");
    } else if state.limits.log_lines.allow(client.0) {
        if latency >= SLOW_REQUEST {
            tracing::warn!(status, latency_ms, "slow request");
        } else if status >= 500 {
            tracing::warn!(status, latency_ms, "finished processing request");
        } else {
            tracing::info!(status, latency_ms, "finished processing request");
        }
    }
    response
}
