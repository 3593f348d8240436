//! Health, metrics, the OpenAPI document, and the test-only clock.

use axum::{
    Json,
    extract::{FromRequest as _, Request, State},
    http::header,
    response::IntoResponse,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use triad_engine::EngineError;

use super::{
    ApiJson, ApiState,
    error::{Api, ApiError, ErrorBody},
};

/// Whether the server works.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok` (otherwise the answer is a 503 error).
    pub status: &'static str,
    /// Whether the database answers (always, in a 200).
    pub database: bool,
    /// Events in the log.
    pub events: u64,
    /// Matches not yet finished.
    pub live_matches: usize,
    /// Open WebSockets.
    pub websockets: usize,
}

/// How often, at most, `/healthz` makes sure the storage takes a write when nothing else
/// wrote: a probe write (one small commit) when no commit succeeded within this period.
const PROBE_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Why the server cannot take commands now, if it cannot: the core has stopped or is
/// rebuilding its state, the database does not answer or take a write, or its disk is full.
/// The storage is known good when a commit succeeded within [`PROBE_EVERY`]; otherwise (and
/// after a failure) a probe write finds out, so `/healthz` turns not ok on a failing disk
/// before any command fails, and ok again once it has recovered, with no command needed.
async fn not_ready(state: &ApiState) -> Option<ApiError> {
    use crate::core::StorageFault;
    if !state.core.is_running() {
        return Some(
            ApiError::with_message(
                Api::ShuttingDown,
                "the server cannot take commands: its core has stopped (the server's log says why); it is shutting down",
            )
            .retry_after(1),
        );
    }
    if state.core.is_rebuilding() {
        return Some(
            ApiError::with_message(
                Api::StorageUnavailable,
                "the server is rebuilding its state from the database after a storage failure; commands wait until it is done",
            )
            .retry_after(1),
        );
    }
    let full = |free: u64| {
        ApiError::with_message(
            Api::StorageFull,
            format!(
                "the server's disk is full ({free} bytes free); commands are refused until the operator frees space"
            ),
        )
        .retry_after(5)
    };
    let free = state.store.free_bytes();
    if let Some(free) = free.filter(|&f| f < crate::store::MIN_FREE_BYTES) {
        return Some(full(free));
    }
    if !state.store.ping().await {
        return Some(
            ApiError::with_message(
                Api::StorageUnavailable,
                "the database does not answer; commands are refused until it does",
            )
            .retry_after(1),
        );
    }
    let fault = state.core.storage_fault();
    if fault.is_none() && state.core.wrote_within(PROBE_EVERY) {
        return None;
    }
    match state.store.probe_write().await {
        Ok(()) => {
            state.core.report_storage(None);
            None
        }
        Err(e) if e.is_full() || matches!(fault, Some(StorageFault::Full(_))) => {
            state
                .core
                .report_storage(Some(StorageFault::Full(e.to_string())));
            Some(full(free.unwrap_or(0)))
        }
        Err(e) => {
            state
                .core
                .report_storage(Some(StorageFault::Failing(e.to_string())));
            Some(
                ApiError::with_message(
                    Api::StorageUnavailable,
                    format!("the database refuses writes ({e}); commands are refused until it takes them"),
                )
                .retry_after(1),
            )
        }
    }
}

/// Health check: 200 with the figures while the server can take commands; otherwise 503
/// with the error (`{code, error, message}`) that says why: 212 `shutting_down` (its core
/// has stopped), 209 `storage_unavailable` (the database fails), 218 `storage_full` (its
/// disk is full).
#[utoipa::path(get, path = "/healthz", tag = "system", responses((status = 200, body = Health), (status = 503, body = ErrorBody)))]
pub async fn healthz(State(state): State<ApiState>) -> axum::response::Response {
    if let Some(error) = not_ready(&state).await {
        return error.into_response();
    }
    let (events, live_matches) = {
        let engine = state.core.read().await;
        (engine.next_seq() - 1, engine.live_count())
    };
    let health = Health {
        status: "ok",
        database: true,
        events,
        live_matches,
        websockets: state.hub.connections(),
    };
    Json(health).into_response()
}

/// Prometheus metrics: requests and latencies by route, live matches, open sockets, commit
/// batch sizes and latencies.
#[utoipa::path(get, path = "/metrics", tag = "system", responses((status = 200, description = "Prometheus text format", content_type = "text/plain")))]
pub async fn metrics(State(state): State<ApiState>) -> impl IntoResponse {
    metrics::gauge!("triad_open_websockets").set(state.hub.connections() as f64);
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}

/// This API's OpenAPI 3.1 document.
#[utoipa::path(get, path = "/api/openapi.json", tag = "system", responses((status = 200, description = "The OpenAPI document", content_type = "application/json")))]
pub async fn openapi_json(State(state): State<ApiState>) -> impl IntoResponse {
    Json(state.openapi.as_ref().clone())
}

/// The longest jump one `POST /api/dev/clock` may make: 30 days.
pub const MAX_CLOCK_JUMP_MS: u64 = 30 * 24 * 60 * 60 * 1000;

/// Move the test clock.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockRequest {
    /// Milliseconds to move forward: 0 (to read the clock) to 2592000000 (30 days).
    pub advance_ms: u64,
}

/// The clock's time.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClockView {
    /// Milliseconds since the epoch.
    pub now_ms: u64,
}

/// Tests only (`--dev-clock`): the owner moves the server's clock forward, at most 30 days
/// a call. Answers 404 without `--dev-clock`; refused (115 `owner_only`) to anyone but the
/// owner, and to everyone when no owner is set; a longer jump is refused (215
/// `invalid_parameter`). Time only goes forward (the field is unsigned).
#[utoipa::path(post, path = "/api/dev/clock", tag = "system", request_body = ClockRequest,
    responses((status = 200, body = ClockView), (status = 404, body = ErrorBody), (status = "4XX", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn dev_clock(
    State(state): State<ApiState>,
    request: Request,
) -> Result<Json<ClockView>, ApiError> {
    if !state.settings.dev_clock {
        return Err(ApiError::new(Api::NotFound));
    }
    // Who first, then the body: an anonymous caller learns nothing more than 401.
    let token = super::bearer(request.headers()).ok_or_else(|| ApiError::new(Api::Unauthorized))?;
    let me = state.authenticate(token).await?;
    let ApiJson(req) = ApiJson::<ClockRequest>::from_request(request, &state).await?;
    let owner = state.core.read().await.config().owner;
    if owner.is_zero() || me != owner {
        let mut e = ApiError::from(EngineError::OwnerOnly);
        e.body.message = if owner.is_zero() {
            "only the owner may move the dev clock, and no owner is set (--owner)".to_owned()
        } else {
            "only the owner may move the dev clock; log in with the owner's key".to_owned()
        };
        return Err(e);
    }
    if req.advance_ms > MAX_CLOCK_JUMP_MS {
        return Err(ApiError::with_message(
            Api::InvalidParameter,
            format!("advance_ms is at most {MAX_CLOCK_JUMP_MS} (30 days) a call"),
        ));
    }
    if !state.core.clock().advance(req.advance_ms) {
        return Err(ApiError::new(Api::NotFound));
    }
    state.core.wake_ticker();
    Ok(Json(ClockView {
        now_ms: state.core.clock().now_ms(),
    }))
}
