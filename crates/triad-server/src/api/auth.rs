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
//! A pending challenge takes no room on the server: its id carries the message's fields
//! and a MAC over them (keyed BLAKE2b-256, with a key drawn once per database and kept in
//! its settings, so every node sharing a PostgreSQL database checks every node's
//! challenges). Only a challenge that was used is stored (`login_challenges`, until it
//! expires), to refuse its replay on any node. So no number of challenges asked for, from
//! any number of addresses, can keep anyone else from logging in.
//!
//! Tokens are 256 random bits; the database keeps only their BLAKE2b-256 hash.

use std::{collections::HashMap, sync::Mutex};

use axum::{
    Json,
    extract::State,
    http::{HeaderMap, StatusCode},
};
use blake2::{
    Blake2bMac,
    digest::{KeyInit, Mac, consts::U32},
};
use rand::{TryRng, rngs::SysRng};
use serde::{Deserialize, Serialize};
use triad_engine::Address;
use triad_identity::{AuthError, LoginMessage, Scheme};
use utoipa::ToSchema;

use super::{
    ApiJson, ApiState, Authed, ClientIp,
    error::{Api, ApiError, ErrorBody},
    views::{MatchView, PlayerView},
};

/// How long a login challenge stays valid.
const CHALLENGE_TTL_MS: u64 = 5 * 60 * 1000;

/// The key of the login challenges' MACs, and a cache of sessions.
pub struct AuthState {
    challenge_key: [u8; 32],
    sessions: Mutex<HashMap<String, (Address, u64)>>,
}

impl std::fmt::Debug for AuthState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("AuthState").finish_non_exhaustive()
    }
}

/// The name of the challenge key in the database's settings.
pub const CHALLENGE_KEY_SETTING: &str = "login_challenge_key";

/// The most sessions cached at once. The database holds every session, so emptying the
/// cache only costs lookups; without a bound it would grow with every login.
const MAX_CACHED_SESSIONS: usize = 100_000;

impl AuthState {
    /// The login state with the challenges' MAC key (64 hex digits, from the database's
    /// settings: [`CHALLENGE_KEY_SETTING`]).
    ///
    /// # Errors
    /// When the key is not 32 bytes in hex.
    pub fn new(challenge_key_hex: &str) -> Result<AuthState, String> {
        let mut challenge_key = [0u8; 32];
        hex::decode_to_slice(challenge_key_hex, &mut challenge_key)
            .map_err(|_| "the stored login challenge key is not 64 hex digits".to_owned())?;
        Ok(AuthState {
            challenge_key,
            sessions: Mutex::default(),
        })
    }

    /// A fresh challenge key, in hex, for a new database.
    ///
    /// # Errors
    /// When the system has no randomness.
    pub fn new_key() -> Result<String, String> {
        random_hex::<32>().map_err(|e| e.body.message)
    }

    /// The MAC that makes `fields` (a challenge id without its MAC) this server's.
    fn mac(&self) -> Blake2bMac<U32> {
        let mut mac = <Blake2bMac<U32> as KeyInit>::new_from_slice(&self.challenge_key)
            .unwrap_or_else(|_| unreachable!("a 32-byte key is a valid BLAKE2b key"));
        mac.update(b"triad login challenge\0");
        mac
    }

    /// The id of a challenge: its message's fields and their MAC, in hex. It is all the
    /// server needs to check a login, so a pending challenge is kept nowhere.
    fn challenge_id(&self, message: &LoginMessage, nonce: &[u8; NONCE_BYTES]) -> String {
        let mut fields = Vec::with_capacity(ID_FIXED + message.domain().len() + 32);
        fields.push(ID_VERSION);
        fields.extend_from_slice(nonce);
        fields.extend_from_slice(&message.issued_at_ms().to_be_bytes());
        fields.extend_from_slice(&message.expires_at_ms().to_be_bytes());
        fields.extend_from_slice(&message.address());
        fields.extend_from_slice(message.domain().as_bytes());
        let mut mac = self.mac();
        mac.update(&fields);
        fields.extend_from_slice(&mac.finalize().into_bytes());
        hex::encode(fields)
    }

    /// The message of a challenge id this server issued (its MAC verifies), else `None`.
    fn challenge_message(&self, id: &str) -> Option<LoginMessage> {
        if id.len() > 2 * (ID_FIXED + MAX_DOMAIN + 32) || id.len() < 2 * (ID_FIXED + 32) {
            return None;
        }
        let bytes = hex::decode(id).ok()?;
        let (fields, tag) = bytes.split_at(bytes.len() - 32);
        let mut mac = self.mac();
        mac.update(fields);
        mac.verify_slice(tag).ok()?;
        if fields[0] != ID_VERSION {
            return None;
        }
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&fields[at..at + 8]);
            u64::from_be_bytes(b)
        };
        let nonce = &fields[1..1 + NONCE_BYTES];
        let issued = u64_at(1 + NONCE_BYTES);
        let expires = u64_at(9 + NONCE_BYTES);
        let mut address = [0u8; 32];
        address.copy_from_slice(&fields[17 + NONCE_BYTES..ID_FIXED]);
        let domain = std::str::from_utf8(&fields[ID_FIXED..]).ok()?;
        LoginMessage::new(domain, address, hex::encode(nonce), issued, expires).ok()
    }

    /// Drops the cached sessions that expired by `now_ms` (a pending challenge is kept
    /// nowhere: its id carries it).
    fn forget_expired(&self, now_ms: u64) {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|_, (_, expires)| *expires > now_ms);
    }

    /// Caches a session (`(address, expires_ms)`), first dropping the expired ones once the
    /// cache is full, and everything if that is not enough.
    fn cache_session(&self, token_hash: String, session: (Address, u64), now_ms: u64) {
        let mut sessions = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if sessions.len() >= MAX_CACHED_SESSIONS {
            sessions.retain(|_, (_, expires)| *expires > now_ms);
            if sessions.len() >= MAX_CACHED_SESSIONS {
                sessions.clear();
            }
        }
        sessions.insert(token_hash, session);
    }
}

/// The random bytes of a challenge's nonce.
const NONCE_BYTES: usize = 16;
/// The version byte that starts a challenge id.
const ID_VERSION: u8 = 1;
/// A challenge id's fixed fields: version, nonce, issue and expiry times, address.
const ID_FIXED: usize = 1 + NONCE_BYTES + 8 + 8 + 32;
/// The longest domain a challenge id carries (a DNS name is at most 253 bytes, a port 6).
const MAX_DOMAIN: usize = 260;

fn random_bytes<const N: usize>() -> Result<[u8; N], ApiError> {
    let mut bytes = [0u8; N];
    SysRng.try_fill_bytes(&mut bytes).map_err(|_| {
        ApiError::with_message(
            Api::StorageUnavailable,
            "no randomness available; try again",
        )
    })?;
    Ok(bytes)
}

fn random_hex<const N: usize>() -> Result<String, ApiError> {
    random_bytes::<N>().map(hex::encode)
}

/// A token as the server keeps it (sessions are stored and cached by it): the hex of its
/// BLAKE2b-256 hash.
pub(crate) fn token_hash(token: &str) -> String {
    hex::encode(triad_identity::hash256(token.as_bytes()))
}

fn timestamp(ms: u64) -> String {
    triad_identity::format_timestamp(ms).unwrap_or_default()
}

fn auth_error(e: &AuthError) -> ApiError {
    match e {
        // Only a bad `public_key` is an invalid key; a signature of the wrong length is a
        // bad signature, like any other malformed one.
        AuthError::InvalidHex {
            field: "public_key",
            ..
        }
        | AuthError::InvalidPublicKey
        | AuthError::WeakPublicKey => ApiError::with_message(Api::InvalidPublicKey, e.to_string()),
        AuthError::UnknownScheme { .. } => {
            ApiError::with_message(Api::UnknownScheme, e.to_string())
        }
        AuthError::ChallengeExpired { .. } | AuthError::ChallengeNotYetValid { .. } => {
            ApiError::with_message(Api::UnknownChallenge, e.to_string())
        }
        _ => ApiError::with_message(Api::BadSignature, e.to_string()),
    }
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
    let key = triad_identity::parse_public_key(&req.public_key).map_err(|e| auth_error(&e))?;
    let address = triad_identity::address_of(&key);
    let now = state.core.clock().now_ms();
    let expires = now + CHALLENGE_TTL_MS;
    let nonce = random_bytes::<NONCE_BYTES>()?;
    let domain = state.domain();
    let message = LoginMessage::new(&domain, address, hex::encode(nonce), now, expires)
        .map_err(|e| auth_error(&e))?;
    let challenge_id = state.auth.challenge_id(&message, &nonce);
    let text = message.render();
    Ok(Json(ChallengeResponse {
        challenge_id,
        message: text,
        expires_at: timestamp(expires),
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
    let scheme: Scheme = match &req.scheme {
        None => Scheme::default(),
        Some(name) => name.parse().map_err(|e| auth_error(&e))?,
    };
    let message = state
        .auth
        .challenge_message(&req.challenge_id)
        .ok_or_else(|| ApiError::new(Api::UnknownChallenge))?;
    let public_key = req.public_key.to_ascii_lowercase();
    let key = triad_identity::parse_public_key(&public_key).ok();
    if key.is_none_or(|key| triad_identity::address_of(&key) != message.address()) {
        return Err(ApiError::with_message(
            Api::BadSignature,
            "this challenge was issued for another public key",
        ));
    }
    let now = state.core.clock().now_ms();
    // The challenge was issued by this server, perhaps by another node whose clock runs a
    // little ahead: it cannot be "not yet valid" here. Its expiry still counts.
    let checked_at = now.max(message.issued_at_ms());
    message
        .verify(scheme, &public_key, &req.signature, checked_at)
        .map_err(|e| auth_error(&e))?;
    // Used once, on whichever node: the first login that verifies stores it.
    let text = message.render();
    if !state
        .store
        .use_login_challenge(message.nonce(), &public_key, &text, message.expires_at_ms())
        .await?
    {
        return Err(ApiError::new(Api::UnknownChallenge));
    }
    let address = Address::from_bytes(message.address());
    let token = random_hex::<32>()?;
    let expires = now.saturating_add(state.settings.session_ttl_ms);
    let hash = token_hash(&token);
    state
        .store
        .save_session(&hash, address, &public_key, now, expires)
        .await?;
    if !state.store.is_shared() {
        state.auth.cache_session(hash, (address, expires), now);
    }
    // One line per login, within the client's log budget (logins are cheap to repeat).
    if state.limits.log_lines.allow(client) {
        tracing::info!(%address, "logged in");
    }
    Ok(Json(LoginResponse {
        token,
        address: address.to_string(),
        expires_at: timestamp(expires),
    }))
}

/// The address of a token.
pub(crate) async fn authenticate(state: &ApiState, token: &str) -> Result<Address, ApiError> {
    authenticate_token(state, token)
        .await
        .map(|(address, _, _)| address)
}

/// [`authenticate`], with the token's hash and the session's expiry: a WebSocket keeps
/// them, to check the session again and to be closed when it ends.
pub(crate) async fn authenticate_token(
    state: &ApiState,
    token: &str,
) -> Result<(Address, String, u64), ApiError> {
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::new(Api::InvalidToken));
    }
    let hash = token_hash(token);
    let (address, expires) = session(state, &hash).await?;
    Ok((address, hash, expires))
}

/// [`authenticate`] for a token already hashed ([`token_hash`]): a WebSocket keeps its
/// session's hash and checks it again at every move and subscription.
pub(crate) async fn authenticate_hash(state: &ApiState, hash: &str) -> Result<Address, ApiError> {
    session(state, hash).await.map(|(address, _)| address)
}

/// The address and expiry of a live session, by its token's hash.
pub(crate) async fn session(state: &ApiState, hash: &str) -> Result<(Address, u64), ApiError> {
    let now = state.core.clock().now_ms();
    // With several nodes on one database, a logout on one must end the session on all:
    // no cache then, the database answers every time.
    let shared = state.store.is_shared();
    let cached = if shared {
        None
    } else {
        state
            .auth
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(hash)
            .copied()
    };
    let (address, expires) = match cached {
        Some(found) => found,
        None => {
            let found = state
                .store
                .session(hash)
                .await?
                .ok_or_else(|| ApiError::new(Api::InvalidToken))?;
            if !shared {
                state.auth.cache_session(hash.to_owned(), found, now);
            }
            found
        }
    };
    if now >= expires {
        return Err(ApiError::new(Api::TokenExpired));
    }
    Ok((address, expires))
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
    let hash = token_hash(token);
    state.store.delete_session(&hash).await?;
    state
        .auth
        .sessions
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .remove(&hash);
    state.hub.end_session(&hash);
    Ok(StatusCode::NO_CONTENT)
}

/// How often each node ends the sockets of expired sessions (and, with several nodes,
/// of sessions logged out elsewhere whose announcement it missed): the longest a socket
/// outlives its session.
pub const SESSION_SWEEP: std::time::Duration = std::time::Duration::from_secs(5);

/// The most expired sessions (and, apart, expired login challenges) one purge deletes.
pub const PURGE_BATCH: u32 = 1_000;

/// Every [`SESSION_SWEEP`], until the server stops: closes the sockets of sessions that
/// expired (by the server's clock) or, with a shared database, no longer exist, and
/// deletes a bounded batch ([`PURGE_BATCH`]) of expired sessions and login challenges,
/// and drops this node's expired pending challenges and cached sessions.
pub async fn sweep_sessions(state: ApiState) {
    let mut every = tokio::time::interval(SESSION_SWEEP);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        if state.hub.is_closing() {
            return;
        }
        let now = state.core.clock().now_ms();
        state.hub.end_expired(now);
        if state.store.is_shared() {
            let open = state.hub.sessions();
            if !open.is_empty() {
                match state.store.live_sessions(&open, now).await {
                    Ok(live) => {
                        state.hub.end_sessions(|hash, _| !live.contains(hash));
                    }
                    Err(error) => tracing::warn!(%error, "could not check the sockets' sessions"),
                }
            }
        }
        match state.store.purge_expired(now, PURGE_BATCH).await {
            Ok((0, 0)) => {}
            Ok((sessions, challenges)) => {
                tracing::debug!(
                    sessions,
                    challenges,
                    "purged expired sessions and challenges"
                );
            }
            Err(error) => tracing::warn!(%error, "could not purge expired sessions"),
        }
        state.auth.forget_expired(now);
    }
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
    let engine = state.core.read().await;
    let active = engine.active_match(me);
    Ok(Json(MeView {
        address: me.to_string(),
        balance: engine.balance(me).to_string(),
        owner: me == engine.config().owner,
        active_match: active
            .and_then(|id| engine.match_(id))
            .map(|m| MatchView::new(m, engine.config())),
        stats: PlayerView::new(me, engine.stats(me), active.map(|m| m.0)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_id_carries_its_message_and_only_this_key_makes_one() {
        let auth = AuthState::new(&"11".repeat(32)).unwrap();
        let nonce = [7u8; NONCE_BYTES];
        let message =
            LoginMessage::new("triad.test:80", [9; 32], hex::encode(nonce), 1_000, 301_000)
                .unwrap();
        let id = auth.challenge_id(&message, &nonce);
        assert_eq!(auth.challenge_message(&id), Some(message.clone()));
        // Another server's key, or any changed byte, and it is nobody's challenge.
        let other = AuthState::new(&"22".repeat(32)).unwrap();
        assert_eq!(other.challenge_message(&id), None);
        let mut bytes = hex::decode(&id).unwrap();
        for at in [0, 5, 20, 30, 60, bytes.len() - 1] {
            bytes[at] ^= 1;
            assert_eq!(
                auth.challenge_message(&hex::encode(&bytes)),
                None,
                "byte {at}"
            );
            bytes[at] ^= 1;
        }
        for junk in [
            "",
            "00",
            &"00".repeat(16),
            &"zz".repeat(200),
            &"00".repeat(4000),
        ] {
            assert_eq!(auth.challenge_message(junk), None);
        }
    }

    #[test]
    fn the_session_cache_is_bounded_and_drops_the_expired_first() {
        let auth = AuthState::new(&"11".repeat(32)).unwrap();
        let someone = Address::from_bytes([7; 32]);
        let len = || auth.sessions.lock().unwrap().len();
        // Full of sessions that expired at 1,000, but for one still valid.
        auth.cache_session("live".into(), (someone, 5_000), 0);
        for i in 1..MAX_CACHED_SESSIONS {
            auth.cache_session(format!("old{i}"), (someone, 1_000), 0);
        }
        assert_eq!(len(), MAX_CACHED_SESSIONS);
        auth.cache_session("new".into(), (someone, 9_000), 2_000);
        assert_eq!(
            len(),
            2,
            "only the unexpired session and the new one remain"
        );
        // Full of valid sessions: it is emptied, the database still has them all.
        for i in 2..MAX_CACHED_SESSIONS {
            auth.cache_session(format!("valid{i}"), (someone, 9_000), 2_000);
        }
        assert_eq!(len(), MAX_CACHED_SESSIONS);
        auth.cache_session("one more".into(), (someone, 9_000), 2_000);
        assert_eq!(len(), 1);
    }
}
