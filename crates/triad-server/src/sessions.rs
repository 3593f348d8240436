//! Login challenges and sessions: the service below `POST /api/auth/…` and every request
//! or WebSocket that carries a token.
//!
//! A pending challenge takes no room on the server: its id carries the message's fields
//! and a MAC over them (keyed BLAKE2b-256, with a key drawn once per database and kept in
//! its settings, [`CHALLENGE_KEY_SETTING`], so every node sharing a PostgreSQL database
//! checks every node's challenges). Only a challenge that was used is stored, to refuse its
//! replay on any node. So no number of challenges asked for, from any number of addresses,
//! can keep anyone else from logging in.
//!
//! Tokens are 256 random bits; the database keeps only their BLAKE2b-256 hash
//! ([`token_hash`]).
//!
//! **Shared or local is decided here, once** ([`Sessions::new`]). Sessions are cached in
//! memory, bounded. On a database that one node owns (SQLite) the cache is the truth once
//! it holds a session, since only this node logs out. On one that several nodes share
//! (PostgreSQL) another node's logout reaches this node as a `triad_sessions` notification
//! (`cluster`), which drops the session here; so the cache answers only while this node's
//! listener is known to hear them (it proved it within [`HEARD_FOR`]), and is emptied when
//! the listener's connection drops. A lookup's answer is cached only if no logout was heard
//! while it asked the database. The sweep checks this node's sockets against the database
//! every 5 s, whatever the cache says.

use std::{collections::HashMap, sync::Arc, sync::Mutex, time::Duration};

use blake2::{
    Blake2bMac,
    digest::{KeyInit, Mac, consts::U32},
};
use rand::{TryRng, rngs::SysRng};
use tokio::time::Instant;
use triad_engine::Address;
use triad_identity::{AuthError, LoginMessage, Scheme};

use crate::{
    core::Clock,
    hub::Hub,
    store::{Store, StoreError},
};

/// How long a login challenge stays valid.
const CHALLENGE_TTL_MS: u64 = 5 * 60 * 1000;

/// The name of the challenge key in the database's settings.
pub const CHALLENGE_KEY_SETTING: &str = "login_challenge_key";

/// The most sessions cached at once. The database holds every session, so emptying the
/// cache only costs lookups; without a bound it would grow with every login.
const MAX_CACHED_SESSIONS: usize = 100_000;

/// How often each node ends the sockets of expired sessions (and, with several nodes,
/// of sessions logged out elsewhere whose announcement it missed): the longest a socket
/// outlives its session.
pub const SESSION_SWEEP: std::time::Duration = std::time::Duration::from_secs(5);

/// The most expired sessions (and, apart, expired login challenges) one purge deletes.
pub const PURGE_BATCH: u32 = 1_000;

/// The random bytes of a challenge's nonce.
const NONCE_BYTES: usize = 16;
/// The version byte that starts a challenge id.
const ID_VERSION: u8 = 1;
/// A challenge id's fixed fields: version, nonce, issue and expiry times, address.
const ID_FIXED: usize = 1 + NONCE_BYTES + 8 + 8 + 32;
/// The longest domain a challenge id carries (a DNS name is at most 253 bytes, a port 6).
const MAX_DOMAIN: usize = 260;

/// Why a login or a token was refused.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The token is unknown, forged or revoked.
    #[error("this token is not valid; log in again")]
    InvalidToken,
    /// The token has expired.
    #[error("this token has expired; log in again")]
    TokenExpired,
    /// The login challenge is unknown, expired or already used.
    #[error("this login challenge is unknown, expired or already used; ask for a new one")]
    UnknownChallenge,
    /// The challenge was issued for another public key.
    #[error("this challenge was issued for another public key")]
    OtherKey,
    /// The key, the scheme, the signature or the challenge's time window is wrong.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// The system has no randomness.
    #[error("no randomness available; try again")]
    NoRandomness,
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A login challenge issued.
#[derive(Debug)]
pub struct Challenge {
    /// Sent back with the signature; it carries the challenge.
    pub id: String,
    /// The exact text to sign (its UTF-8 bytes).
    pub message: String,
    /// When it lapses (ms since the epoch).
    pub expires_ms: u64,
}

/// A signed challenge, as a login sends it.
#[derive(Debug)]
pub struct LoginAttempt<'a> {
    /// The challenge's id.
    pub challenge_id: &'a str,
    /// The public key the challenge was issued for, hex.
    pub public_key: &'a str,
    /// The signature of the challenge's message.
    pub signature: &'a str,
    /// The signature's scheme by name; `None` is Ed25519.
    pub scheme: Option<&'a str>,
    /// The agent says it is a bot: the account is marked one, for good (a later login
    /// without it leaves the mark: `profiles`).
    pub bot: bool,
}

/// A session opened by a login.
#[derive(Debug)]
pub struct Session {
    /// The bearer token (only its hash is kept).
    pub token: String,
    /// The logged-in address.
    pub address: Address,
    /// When the token lapses (ms since the epoch).
    pub expires_ms: u64,
}

/// A token as the server keeps it (sessions are stored and cached by it): the hex of its
/// BLAKE2b-256 hash.
#[must_use]
pub fn token_hash(token: &str) -> String {
    hex::encode(triad_identity::hash256(token.as_bytes()))
}

fn random_bytes<const N: usize>() -> Result<[u8; N], SessionError> {
    let mut bytes = [0u8; N];
    SysRng
        .try_fill_bytes(&mut bytes)
        .map_err(|_| SessionError::NoRandomness)?;
    Ok(bytes)
}

fn random_hex<const N: usize>() -> Result<String, SessionError> {
    random_bytes::<N>().map(hex::encode)
}

/// The key of the login challenges' MACs: a challenge id is its message's fields and their
/// MAC, so a pending challenge is kept nowhere.
struct ChallengeKey([u8; 32]);

impl ChallengeKey {
    /// The key from 64 hex digits.
    fn from_hex(hex_key: &str) -> Result<ChallengeKey, String> {
        let mut key = [0u8; 32];
        hex::decode_to_slice(hex_key, &mut key)
            .map_err(|_| "the stored login challenge key is not 64 hex digits".to_owned())?;
        Ok(ChallengeKey(key))
    }

    /// The MAC that makes `fields` (a challenge id without its MAC) this server's.
    fn mac(&self) -> Blake2bMac<U32> {
        let mut mac = <Blake2bMac<U32> as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("a 32-byte key is a valid BLAKE2b key"));
        mac.update(b"triad login challenge\0");
        mac
    }

    /// The id of a challenge: its message's fields and their MAC, in hex. It is all the
    /// server needs to check a login.
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
}

/// How long after the listener last proved alive a node on a shared database still trusts
/// its session cache ([`Sessions::heard`]). The listener proves it every second at least
/// (a notification, or a ping when none comes: `cluster`), so only a listener that stopped
/// answering lets it lapse.
pub const HEARD_FOR: Duration = Duration::from_secs(2);

/// Sessions in memory, by token hash: `(address, expires_ms)`. Bounded
/// ([`MAX_CACHED_SESSIONS`]); the database holds them all.
///
/// On a shared database another node's logout reaches this cache only as a
/// `triad_sessions` notification, so the cache answers only while this node's listener is
/// known to hear them (`trusted_until`), and a lookup's answer is kept only if no logout
/// was heard while the database was asked (`generation`): a row read just before another
/// node deleted it cannot outlive the deletion's notification.
struct SessionCache {
    state: Mutex<CacheState>,
    /// Whether other nodes share the database (then the cache needs its listener).
    shared: bool,
}

struct CacheState {
    sessions: HashMap<String, (Address, u64)>,
    /// Counts the removals: a lookup keeps its answer only if none happened meanwhile.
    generation: u64,
    /// Until when the listener is known to hear logouts (shared databases only).
    trusted_until: Option<Instant>,
}

/// A cache lookup: the session, or the generation to store the database's answer under.
enum Cached {
    Hit((Address, u64)),
    Miss(u64),
}

impl SessionCache {
    fn new(shared: bool) -> SessionCache {
        SessionCache {
            state: Mutex::new(CacheState {
                sessions: HashMap::new(),
                generation: 0,
                trusted_until: None,
            }),
            shared,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn trusted(&self, state: &CacheState, now: Instant) -> bool {
        !self.shared || state.trusted_until.is_some_and(|until| now < until)
    }

    fn get(&self, hash: &str, now: Instant) -> Cached {
        let state = self.lock();
        match state.sessions.get(hash) {
            Some(found) if self.trusted(&state, now) => Cached::Hit(*found),
            _ => Cached::Miss(state.generation),
        }
    }

    /// Caches a session read under `generation` (a login's own: the current one), unless a
    /// removal came since; first drops the expired ones once the cache is full, and
    /// everything if that is not enough.
    fn insert(&self, token_hash: String, session: (Address, u64), generation: u64, now_ms: u64) {
        let mut state = self.lock();
        if state.generation != generation {
            return;
        }
        let sessions = &mut state.sessions;
        if sessions.len() >= MAX_CACHED_SESSIONS {
            sessions.retain(|_, (_, expires)| *expires > now_ms);
            if sessions.len() >= MAX_CACHED_SESSIONS {
                sessions.clear();
            }
        }
        sessions.insert(token_hash, session);
    }

    fn generation(&self) -> u64 {
        self.lock().generation
    }

    fn remove(&self, hash: &str) {
        let mut state = self.lock();
        state.generation += 1;
        state.sessions.remove(hash);
    }

    /// The listener heard (or proved it would hear) every logout up to now.
    fn heard(&self, until: Instant) {
        let mut state = self.lock();
        state.trusted_until = Some(state.trusted_until.map_or(until, |t| t.max(until)));
    }

    /// The listener may have missed logouts: everything cached is dropped, and nothing
    /// is trusted until it hears again.
    fn deaf(&self) {
        let mut state = self.lock();
        state.generation += 1;
        state.sessions.clear();
        state.trusted_until = None;
    }

    /// Drops the sessions that expired by `now_ms`.
    fn forget_expired(&self, now_ms: u64) {
        self.lock()
            .sessions
            .retain(|_, (_, expires)| *expires > now_ms);
    }
}

/// Login challenges and sessions, over the database, with this node's sockets.
pub struct Sessions {
    store: Store,
    hub: Hub,
    clock: Arc<Clock>,
    key: ChallengeKey,
    /// This node's cache of sessions (on a shared database, trusted only while its listener
    /// hears the other nodes' logouts).
    cache: SessionCache,
    /// How long a session lasts.
    ttl_ms: u64,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Sessions")
            .field("shared", &self.cache.shared)
            .finish_non_exhaustive()
    }
}

impl Sessions {
    /// The sessions of `store`, with the challenges' MAC key (64 hex digits, from the
    /// database's settings: [`CHALLENGE_KEY_SETTING`]) and sessions of `ttl_ms`. Whether
    /// sessions are shared is decided here: when other nodes share the database, the cache
    /// answers only while [`heard`](Sessions::heard) says the listener hears their logouts.
    ///
    /// # Errors
    /// When the key is not 32 bytes in hex.
    pub fn new(
        store: Store,
        hub: Hub,
        clock: Arc<Clock>,
        challenge_key_hex: &str,
        ttl_ms: u64,
    ) -> Result<Sessions, String> {
        let cache = SessionCache::new(store.is_shared());
        Ok(Sessions {
            key: ChallengeKey::from_hex(challenge_key_hex)?,
            store,
            hub,
            clock,
            cache,
            ttl_ms,
        })
    }

    /// A fresh challenge key, in hex, for a new database.
    ///
    /// # Errors
    /// When the system has no randomness.
    pub fn new_key() -> Result<String, String> {
        random_hex::<32>().map_err(|e| e.to_string())
    }

    /// A login challenge for `public_key` (hex), naming `domain`.
    ///
    /// # Errors
    /// A bad public key or domain; no randomness.
    pub fn challenge(&self, domain: &str, public_key: &str) -> Result<Challenge, SessionError> {
        let key = triad_identity::parse_public_key(public_key)?;
        let address = triad_identity::address_of(&key);
        let now = self.clock.now_ms();
        let expires = now + CHALLENGE_TTL_MS;
        let nonce = random_bytes::<NONCE_BYTES>()?;
        let message = LoginMessage::new(domain, address, hex::encode(nonce), now, expires)?;
        Ok(Challenge {
            id: self.key.challenge_id(&message, &nonce),
            message: message.render(),
            expires_ms: expires,
        })
    }

    /// Logs in with a signed challenge: checks it, uses it up (on whichever node: the
    /// first login that verifies stores it) and opens a session.
    ///
    /// # Errors
    /// An unknown, expired or used challenge, another key's, a bad signature or scheme; a
    /// database failure.
    pub async fn login(&self, attempt: &LoginAttempt<'_>) -> Result<Session, SessionError> {
        let scheme: Scheme = match attempt.scheme {
            None => Scheme::default(),
            Some(name) => name.parse()?,
        };
        let message = self
            .key
            .challenge_message(attempt.challenge_id)
            .ok_or(SessionError::UnknownChallenge)?;
        let public_key = attempt.public_key.to_ascii_lowercase();
        let key = triad_identity::parse_public_key(&public_key).ok();
        if key.is_none_or(|key| triad_identity::address_of(&key) != message.address()) {
            return Err(SessionError::OtherKey);
        }
        let now = self.clock.now_ms();
        // The challenge was issued by this server, perhaps by another node whose clock runs a
        // little ahead: it cannot be "not yet valid" here. Its expiry still counts.
        let checked_at = now.max(message.issued_at_ms());
        message.verify(scheme, &public_key, attempt.signature, checked_at)?;
        let text = message.render();
        if !self
            .store
            .use_login_challenge(message.nonce(), &public_key, &text, message.expires_at_ms())
            .await?
        {
            return Err(SessionError::UnknownChallenge);
        }
        let address = Address::from_bytes(message.address());
        if attempt.bot {
            self.store.mark_bot(address).await?;
        }
        let token = random_hex::<32>()?;
        let expires = now.saturating_add(self.ttl_ms);
        let hash = token_hash(&token);
        let generation = self.cache.generation();
        self.store
            .save_session(&hash, address, &public_key, now, expires)
            .await?;
        self.cache.insert(hash, (address, expires), generation, now);
        Ok(Session {
            token,
            address,
            expires_ms: expires,
        })
    }

    /// The address of a token, with the token's hash and the session's expiry: a
    /// WebSocket keeps them, to check the session again and to be closed when it ends.
    ///
    /// # Errors
    /// A malformed, unknown, revoked or expired token; a database failure.
    pub async fn authenticate(&self, token: &str) -> Result<(Address, String, u64), SessionError> {
        if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SessionError::InvalidToken);
        }
        let hash = token_hash(token);
        let (address, expires) = self.session(&hash).await?;
        Ok((address, hash, expires))
    }

    /// The address and expiry of a live session, by its token's hash.
    ///
    /// # Errors
    /// An unknown, revoked or expired session; a database failure.
    pub async fn session(&self, hash: &str) -> Result<(Address, u64), SessionError> {
        let now = self.clock.now_ms();
        let (address, expires) = match self.cache.get(hash, Instant::now()) {
            Cached::Hit(found) => found,
            Cached::Miss(generation) => {
                let found = self
                    .store
                    .session(hash)
                    .await?
                    .ok_or(SessionError::InvalidToken)?;
                self.cache.insert(hash.to_owned(), found, generation, now);
                found
            }
        };
        if now >= expires {
            return Err(SessionError::TokenExpired);
        }
        Ok((address, expires))
    }

    /// Ends a session (by its token's hash): every socket it opened or authenticated is
    /// closed, on this node at once and on the others as soon as they hear of it.
    ///
    /// # Errors
    /// On a database failure.
    pub async fn logout(&self, hash: &str) -> Result<(), SessionError> {
        self.cache.remove(hash);
        self.store.delete_session(hash).await?;
        self.cache.remove(hash);
        self.hub.end_session(hash);
        Ok(())
    }

    /// Another node logged a session out (its `triad_sessions` notification): it is
    /// forgotten here and its sockets on this node are closed.
    pub fn logged_out_elsewhere(&self, hash: &str) {
        self.cache.remove(hash);
        self.hub.end_session(hash);
    }

    /// This node's listener heard the other nodes (a notification, or a ping answered) at
    /// `at`: the session cache is trusted until [`HEARD_FOR`] later.
    pub fn heard(&self, at: Instant) {
        self.cache.heard(at + HEARD_FOR);
    }

    /// This node's listener lost its connection, and so perhaps logouts: the session cache
    /// is emptied, and not trusted until the listener hears again.
    pub fn deaf(&self) {
        self.cache.deaf();
    }

    /// One sweep: closes the sockets of sessions that expired (by the server's clock) or,
    /// with a shared database, no longer exist; deletes a bounded batch ([`PURGE_BATCH`])
    /// of expired sessions and login challenges; and drops expired cached sessions.
    pub async fn sweep(&self) {
        let now = self.clock.now_ms();
        self.hub.end_expired(now);
        if self.cache.shared {
            let open = self.hub.sessions();
            if !open.is_empty() {
                match self.store.live_sessions(&open, now).await {
                    Ok(live) => {
                        self.hub.end_sessions(|hash, _| !live.contains(hash));
                    }
                    Err(error) => tracing::warn!(%error, "could not check the sockets' sessions"),
                }
            }
        }
        match self.store.purge_expired(now, PURGE_BATCH).await {
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
        self.cache.forget_expired(now);
    }

    /// [`sweep`](Sessions::sweep) every [`SESSION_SWEEP`], until the server stops.
    pub async fn sweep_every(self: Arc<Self>) {
        let mut every = tokio::time::interval(SESSION_SWEEP);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            if self.hub.is_closing() {
                return;
            }
            self.sweep().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_id_carries_its_message_and_only_this_key_makes_one() {
        let auth = ChallengeKey::from_hex(&"11".repeat(32)).unwrap();
        let nonce = [7u8; NONCE_BYTES];
        let message =
            LoginMessage::new("triad.test:80", [9; 32], hex::encode(nonce), 1_000, 301_000)
                .unwrap();
        let id = auth.challenge_id(&message, &nonce);
        assert_eq!(auth.challenge_message(&id), Some(message.clone()));
        // Another server's key, or any changed byte, and it is nobody's challenge.
        let other = ChallengeKey::from_hex(&"22".repeat(32)).unwrap();
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
        let cache = SessionCache::new(false);
        let someone = Address::from_bytes([7; 32]);
        let len = || cache.lock().sessions.len();
        // Full of sessions that expired at 1,000, but for one still valid.
        cache.insert("live".into(), (someone, 5_000), 0, 0);
        for i in 1..MAX_CACHED_SESSIONS {
            cache.insert(format!("old{i}"), (someone, 1_000), 0, 0);
        }
        assert_eq!(len(), MAX_CACHED_SESSIONS);
        cache.insert("new".into(), (someone, 9_000), 0, 2_000);
        assert_eq!(
            len(),
            2,
            "only the unexpired session and the new one remain"
        );
        // Full of valid sessions: it is emptied, the database still has them all.
        for i in 2..MAX_CACHED_SESSIONS {
            cache.insert(format!("valid{i}"), (someone, 9_000), 0, 2_000);
        }
        assert_eq!(len(), MAX_CACHED_SESSIONS);
        cache.insert("one more".into(), (someone, 9_000), 0, 2_000);
        assert_eq!(len(), 1);
    }

    fn hit(cached: &Cached) -> bool {
        matches!(cached, Cached::Hit(_))
    }

    #[test]
    fn a_shared_cache_answers_only_while_its_listener_is_heard() {
        let cache = SessionCache::new(true);
        let someone = Address::from_bytes([7; 32]);
        let start = Instant::now();
        cache.insert("a".into(), (someone, 9_000), 0, 0);
        assert!(
            !hit(&cache.get("a", start)),
            "never heard: the database answers"
        );
        cache.heard(start + HEARD_FOR);
        assert!(hit(&cache.get("a", start)));
        assert!(hit(
            &cache.get("a", start + HEARD_FOR - Duration::from_millis(1))
        ));
        assert!(
            !hit(&cache.get("a", start + HEARD_FOR)),
            "heard too long ago"
        );
        // A later proof extends it, an earlier one does not shorten it.
        cache.heard(start + HEARD_FOR * 2);
        cache.heard(start + HEARD_FOR);
        assert!(hit(&cache.get("a", start + HEARD_FOR)));
        // The listener lost its connection: nothing is kept, nothing trusted.
        cache.deaf();
        assert!(cache.lock().sessions.is_empty());
        cache.insert("a".into(), (someone, 9_000), cache.generation(), 0);
        assert!(!hit(&cache.get("a", start)));
        // A SQLite node's cache needs no listener.
        let local = SessionCache::new(false);
        local.insert("a".into(), (someone, 9_000), 0, 0);
        assert!(hit(&local.get("a", start)));
    }

    #[test]
    fn a_lookup_overtaken_by_a_logout_is_not_cached() {
        let cache = SessionCache::new(true);
        let someone = Address::from_bytes([7; 32]);
        let now = Instant::now();
        cache.heard(now + HEARD_FOR);
        // A request asks the database (the cache missed) ...
        let Cached::Miss(generation) = cache.get("t", now) else {
            panic!("nothing cached yet")
        };
        // ... another node's logout of that session is heard meanwhile ...
        cache.remove("t");
        // ... and the row the database had read before the delete is not cached.
        cache.insert("t".into(), (someone, 9_000), generation, 0);
        assert!(!hit(&cache.get("t", now)));
        // Asked afresh, after the logout, an answer is kept.
        let Cached::Miss(generation) = cache.get("u", now) else {
            panic!("nothing cached yet")
        };
        cache.insert("u".into(), (someone, 9_000), generation, 0);
        assert!(hit(&cache.get("u", now)));
    }
}
