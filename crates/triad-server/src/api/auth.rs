//! Ed25519 challenge-response login, sessions, and `GET /api/me`.
//!
//! 1. `POST /api/auth/challenge {"public_key"}` returns a message naming the domain, the
//!    address, a random nonce and an expiry (at most 5 minutes ahead).
//! 2. The client signs the message's bytes: plain Ed25519 (`"scheme": "ed25519"`, the
//!    default, 128 hex digits) or a Sui wallet's `signPersonalMessage`
//!    (`"scheme": "sui-personal-message"`, base64).
//! 3. `POST /api/auth/login` returns a bearer token. A challenge is used once: the first
//!    login that verifies takes it, so a replay is refused.
//!
//! The challenges and sessions themselves, and where they are kept, are the sessions
//! service's ([`crate::sessions`]); these handlers translate.

use axum::{
    Json,
    extract::State,
    http::{HeaderMap, StatusCode},
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{
    ApiJson, ApiState, Authed, ClientIp,
    error::{ApiError, ErrorBody},
    views::{MatchView, PlayerView},
};
use crate::sessions::{LoginAttempt, token_hash};

fn timestamp(ms: u64) -> String {
    triad_identity::format_timestamp(ms).unwrap_or_default()
}

/// Ask for a login challenge.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChallengeRequest {
    /// The Ed25519 public key, 64 hex digits.
    pub public_key: String,
}

/// A login challenge.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChallengeResponse {
    /// Send it back with the signature.
    pub challenge_id: String,
    /// The exact text to sign (its UTF-8 bytes).
    pub message: String,
    /// When the challenge lapses (RFC 3339).
    pub expires_at: String,
}

/// Get a login challenge for a public key.
#[utoipa::path(post, path = "/api/auth/challenge", tag = "auth", request_body = ChallengeRequest,
    responses((status = 200, body = ChallengeResponse), (status = "4XX", body = ErrorBody)))]
pub async fn challenge(
    State(state): State<ApiState>,
    ApiJson(req): ApiJson<ChallengeRequest>,
) -> Result<Json<ChallengeResponse>, ApiError> {
    let challenge = state.sessions.challenge(&state.domain(), &req.public_key)?;
    Ok(Json(ChallengeResponse {
        challenge_id: challenge.id,
        message: challenge.message,
        expires_at: timestamp(challenge.expires_ms),
    }))
}

/// Log in with a signed challenge.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    /// From the challenge.
    pub challenge_id: String,
    /// The same public key the challenge was issued for.
    pub public_key: String,
    /// `ed25519`: 128 hex digits; `sui-personal-message`: the wallet's base64 signature.
    pub signature: String,
    /// `ed25519` (default) or `sui-personal-message`. Read as text, so that an unknown
    /// scheme is refused as `unknown_scheme` rather than as an unreadable body.
    #[serde(default)]
    #[schema(value_type = String, example = "ed25519")]
    pub scheme: Option<String>,
    /// `true` when an agent logs in: the account is marked a bot, for good (a later login
    /// without it does not take the mark away). Agents must say so; people leave it out.
    #[serde(default)]
    pub bot: bool,
}

/// A session.
#[derive(Debug, Serialize, ToSchema)]
pub struct LoginResponse {
    /// Send as `Authorization: Bearer <token>`.
    pub token: String,
    /// The logged-in address.
    pub address: String,
    /// When the token lapses (RFC 3339).
    pub expires_at: String,
}

/// Exchange a signed challenge for a token.
#[utoipa::path(post, path = "/api/auth/login", tag = "auth", request_body = LoginRequest,
    responses((status = 200, body = LoginResponse), (status = "4XX", body = ErrorBody)))]
pub async fn login(
    State(state): State<ApiState>,
    ClientIp(client): ClientIp,
    ApiJson(req): ApiJson<LoginRequest>,
) -> Result<Json<LoginResponse>, ApiError> {
    let session = state
        .sessions
        .login(&LoginAttempt {
            challenge_id: &req.challenge_id,
            public_key: &req.public_key,
            signature: &req.signature,
            scheme: req.scheme.as_deref(),
            bot: req.bot,
        })
        .await?;
    // One line per login, within the client's log budget (logins are cheap to repeat).
    if state.limits.log_lines.allow(client) {
        tracing::info!(address = %session.address, "logged in");
    }
    Ok(Json(LoginResponse {
        token: session.token,
        address: session.address.to_string(),
        expires_at: timestamp(session.expires_ms),
    }))
}

/// Revoke the token used for this request. Every WebSocket it opened or authenticated is
/// closed (code 4001), on this node at once and on the others as soon as they hear of it.
#[utoipa::path(post, path = "/api/auth/logout", tag = "auth",
    responses((status = 204, description = "Logged out"), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn logout(
    State(state): State<ApiState>,
    _authed: Authed,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    let token = super::bearer(&headers).unwrap_or_default();
    state.sessions.logout(&token_hash(token)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Who I am.
#[derive(Debug, Serialize, ToSchema)]
pub struct MeView {
    /// My address.
    pub address: String,
    /// My spendable balance in minor units, as a decimal string.
    pub balance: String,
    /// Whether I am the owner.
    pub owner: bool,
    /// My active match, if any.
    pub active_match: Option<MatchView>,
    /// My stats and rating.
    pub stats: PlayerView,
}

/// My address, balance, active match, stats and rating.
#[utoipa::path(get, path = "/api/me", tag = "auth",
    responses((status = 200, body = MeView), (status = "4XX", body = ErrorBody)), security(("bearer" = [])))]
pub async fn me(
    State(state): State<ApiState>,
    Authed(me): Authed,
) -> Result<Json<MeView>, ApiError> {
    let profile = state.profiles.of(me).await?;
    let engine = state.core.read().await;
    let active = engine.active_match(me);
    Ok(Json(MeView {
        address: me.to_string(),
        balance: engine.balance(me).to_string(),
        owner: me == engine.config().owner,
        active_match: active
            .and_then(|id| engine.match_(id))
            .map(|m| MatchView::new(m, engine.config())),
        stats: PlayerView::new(me, engine.stats(me), active.map(|m| m.0))
            .with_puzzles(engine.puzzle_record_of_player(me))
            .with_profile(profile),
    }))
}
