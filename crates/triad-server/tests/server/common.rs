//! The shared harness of the server's tests: a server on a fresh SQLite file in a temporary
//! directory (or, with `TRIAD_TEST_BACKEND=postgres`, a fresh PostgreSQL database of its
//! own on the server `TRIAD_TEST_POSTGRES` names) with the dev clock on, driven in-process through the router with `oneshot`;
//! logged-in users from deterministic keys; JSON requests and error-shape checks.

#![allow(dead_code, unreachable_pub)]

use std::{
    net::SocketAddr,
    sync::atomic::{AtomicU8, Ordering},
};

use axum::{
    Router,
    body::Body,
    extract::ConnectInfo,
    http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, header},
};
use serde_json::{Value, json};
use tower::ServiceExt as _;
use triad_engine::Address;
use triad_identity::{SigningKey, address_of, public_key_hex, sign_ed25519};
use triad_server::{Running, ServeArgs};

/// The domain the test servers name in login messages.
pub const DOMAIN: &str = "triad.test";

/// The seed of the owner's key; users get seeds 1, 2, 3, …
pub const OWNER_SEED: u8 = 0xEE;

/// A deterministic key.
#[must_use]
pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// The engine address of a key.
#[must_use]
pub fn address(key: &SigningKey) -> Address {
    Address::from_bytes(address_of(&key.verifying_key()))
}

/// A logged-in user.
#[derive(Debug, Clone)]
pub struct User {
    pub key: SigningKey,
    pub token: String,
    pub address: String,
}

impl User {
    #[must_use]
    pub fn token(&self) -> &str {
        &self.token
    }

    #[must_use]
    pub fn public_key(&self) -> String {
        public_key_hex(&self.key.verifying_key())
    }
}

/// A response, with its body parsed as JSON (`Value::Null` when it is not JSON).
#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
    pub body: Value,
}

impl Resp {
    /// The `Retry-After` header, in seconds.
    #[must_use]
    pub fn retry_after(&self) -> Option<u64> {
        self.headers
            .get(header::RETRY_AFTER)?
            .to_str()
            .ok()?
            .parse()
            .ok()
    }

    /// Asserts the status, and returns the body.
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Value {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.text
        );
        &self.body
    }

    /// Asserts an API error: the status, and a body of exactly
    /// `{"code": <number>, "error": "<snake_case>", "message": "<non-empty>"}` with this
    /// code and name.
    #[track_caller]
    pub fn expect_error(&self, status: u16, code: u64, error: &str) -> &Value {
        assert_error_shape(&self.body, &self.text);
        assert_eq!(
            (
                self.status.as_u16(),
                self.body["code"].as_u64(),
                self.body["error"].as_str()
            ),
            (status, Some(code), Some(error)),
            "unexpected error; body: {}",
            self.text
        );
        &self.body
    }
}

/// Asserts a body is exactly `{code: number, error: snake_case string, message: non-empty
/// string}`.
#[track_caller]
pub fn assert_error_shape(body: &Value, text: &str) {
    let object = body
        .as_object()
        .unwrap_or_else(|| panic!("an error body must be a JSON object, got {text:?}"));
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["code", "error", "message"], "error body: {text}");
    assert!(body["code"].is_u64(), "code must be a number: {text}");
    let name = body["error"].as_str().expect("error is a string");
    assert!(
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
        "error must be snake_case: {text}"
    );
    let message = body["message"].as_str().expect("message is a string");
    assert!(
        !message.trim().is_empty(),
        "message must say something: {text}"
    );
}

/// A request being built.
#[derive(Debug)]
pub struct Call<'a> {
    server: &'a Server,
    request: axum::http::request::Builder,
    body: Body,
}

impl Call<'_> {
    /// Adds `Authorization: Bearer <token>`.
    #[must_use]
    pub fn token(mut self, token: &str) -> Self {
        self.request = self
            .request
            .header(header::AUTHORIZATION, format!("Bearer {token}"));
        self
    }

    /// Acts as `user`.
    #[must_use]
    pub fn auth(self, user: &User) -> Self {
        self.token(&user.token)
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.request = self.request.header(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
        self
    }

    /// Sets a JSON body.
    #[must_use]
    pub fn json(self, value: &Value) -> Self {
        self.raw(&value.to_string())
    }

    /// Sets a body, declared as JSON, with any text.
    #[must_use]
    pub fn raw(mut self, text: &str) -> Self {
        self.request = self
            .request
            .header(header::CONTENT_TYPE, "application/json");
        self.body = Body::from(text.to_owned());
        self
    }

    /// Pretends the request came from `ip`.
    #[must_use]
    pub fn client_ip(mut self, ip: [u8; 4]) -> Self {
        self.request = self
            .request
            .extension(ConnectInfo(SocketAddr::from((ip, 40_000))));
        self
    }

    /// Sends it through the router.
    pub async fn send(self) -> Resp {
        let request = self.request.body(self.body).unwrap();
        let response = self.server.app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Resp {
            status,
            headers,
            text,
            body,
        }
    }
}

/// A server on a fresh SQLite file.
#[derive(Debug)]
pub struct Server {
    pub app: Router,
    pub running: Option<Running>,
    pub dir: tempfile::TempDir,
    pub owner: User,
    next_seed: AtomicU8,
}

/// Whether the tests run on PostgreSQL (`TRIAD_TEST_BACKEND=postgres`) rather than SQLite.
#[must_use]
pub fn on_postgres() -> bool {
    match std::env::var("TRIAD_TEST_BACKEND").as_deref() {
        Ok("postgres") => true,
        Ok("sqlite") | Err(_) => false,
        Ok(other) => panic!("TRIAD_TEST_BACKEND={other:?}: use sqlite or postgres"),
    }
}

/// The PostgreSQL server the tests use, as a URL without a database name. Fails loudly
/// when it is not set: these tests never skip.
#[must_use]
pub fn postgres_base() -> String {
    std::env::var("TRIAD_TEST_POSTGRES")
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| v.trim_end_matches('/').to_owned())
        .unwrap_or_else(|| {
            panic!(
                "TRIAD_TEST_POSTGRES is not set: these tests need a PostgreSQL server. Run them with                  `cargo xtask test` or `cargo xtask pg -- cargo test …`, which start one (or use the                  one at 127.0.0.1:5432) and set it"
            )
        })
}

/// A fresh, empty PostgreSQL database of its own: its URL. Named with
/// `TRIAD_TEST_DB_PREFIX` (so that `cargo xtask` drops what a run created).
pub async fn fresh_postgres_database() -> String {
    use sqlx::Connection as _;
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let base = postgres_base();
    let prefix = std::env::var("TRIAD_TEST_DB_PREFIX").unwrap_or_else(|_| "triad_t".into());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let name = format!(
        "{prefix}_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    );
    let mut admin = sqlx::PgConnection::connect(&format!("{base}/postgres"))
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the PostgreSQL server at {base}: {e}"));
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap();
    format!("{base}/{name}")
}

/// The database of a test directory: `t.db` in it, or on PostgreSQL the database whose URL
/// is kept in its `postgres-url` file (made on first use, so a restart finds it again).
#[must_use]
pub fn database_of(dir: &std::path::Path) -> String {
    if !on_postgres() {
        return dir.join("t.db").display().to_string();
    }
    let file = dir.join("postgres-url");
    if let Ok(url) = std::fs::read_to_string(&file) {
        return url;
    }
    // Made on a thread of its own: this may be called inside the test's runtime.
    let url = std::thread::spawn(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(fresh_postgres_database())
    })
    .join()
    .expect("a fresh PostgreSQL database");
    std::fs::write(&file, &url).unwrap();
    url
}

/// The settings every test server starts from: a database in `dir`, the dev clock, the
/// owner's key, and rate limits too high to matter (all requests come from one IP).
#[must_use]
pub fn base_args(dir: &std::path::Path) -> ServeArgs {
    ServeArgs {
        database: Some(database_of(dir)),
        dev_clock: Some(true),
        owner: Some(address(&key(OWNER_SEED))),
        domain: Some(DOMAIN.to_owned()),
        seed: Some(7),
        rate_per_ip: Some(1_000_000),
        rate_per_address: Some(1_000_000),
        rate_burst: Some(1_000_000),
        ..ServeArgs::default()
    }
}

impl Server {
    /// A server with the base settings.
    pub async fn start() -> Server {
        Server::start_with(|_| {}).await
    }

    /// A server with the base settings, changed by `change`.
    pub async fn start_with(change: impl FnOnce(&mut ServeArgs)) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let mut args = base_args(dir.path());
        change(&mut args);
        Server::start_in(dir, args).await
    }

    /// A server over an existing directory (to reopen its database).
    pub async fn start_in(dir: tempfile::TempDir, args: ServeArgs) -> Server {
        let running = triad_server::start(args.resolve().unwrap())
            .await
            .expect("the server starts");
        let app = triad_server::api::router(running.state.clone());
        let mut server = Server {
            app,
            running: Some(running),
            dir,
            owner: User {
                key: key(OWNER_SEED),
                token: String::new(),
                address: String::new(),
            },
            next_seed: AtomicU8::new(1),
        };
        server.owner = server.login(&key(OWNER_SEED)).await;
        server
    }

    /// Stops the server and flushes the database; returns the directory holding it.
    pub async fn stop(self) -> tempfile::TempDir {
        let Server {
            app, running, dir, ..
        } = self;
        // The core stops once the last handle to it (the router holds one) is gone.
        drop(app);
        if let Some(running) = running {
            running.stop().await;
        }
        dir
    }

    /// The running server's state.
    #[must_use]
    pub fn state(&self) -> &triad_server::api::ApiState {
        &self.running.as_ref().expect("running").state
    }

    /// Starts building a request.
    #[must_use]
    pub fn call(&self, method: Method, path: &str) -> Call<'_> {
        Call {
            server: self,
            request: Request::builder().method(method).uri(path),
            body: Body::empty(),
        }
    }

    #[must_use]
    pub fn get(&self, path: &str) -> Call<'_> {
        self.call(Method::GET, path)
    }

    #[must_use]
    pub fn post(&self, path: &str) -> Call<'_> {
        self.call(Method::POST, path)
    }

    #[must_use]
    pub fn delete(&self, path: &str) -> Call<'_> {
        self.call(Method::DELETE, path)
    }

    /// Asks for a login challenge for `key`; returns the 200 body.
    pub async fn challenge(&self, key: &SigningKey) -> Value {
        let r = self
            .post("/api/auth/challenge")
            .json(&json!({ "public_key": public_key_hex(&key.verifying_key()) }))
            .send()
            .await;
        r.expect(200).clone()
    }

    /// Logs `key` in with a plain Ed25519 signature.
    pub async fn login(&self, key: &SigningKey) -> User {
        self.login_with(key, false).await
    }

    /// Logs `key` in as an agent does: the account is marked a bot.
    pub async fn login_bot(&self, key: &SigningKey) -> User {
        self.login_with(key, true).await
    }

    async fn login_with(&self, key: &SigningKey, bot: bool) -> User {
        let challenge = self.challenge(key).await;
        let message = challenge["message"].as_str().unwrap();
        let r = self
            .post("/api/auth/login")
            .json(&json!({
                "challenge_id": challenge["challenge_id"],
                "public_key": public_key_hex(&key.verifying_key()),
                "signature": sign_ed25519(key, message.as_bytes()),
                "bot": bot,
            }))
            .send()
            .await;
        let body = r.expect(200);
        User {
            key: key.clone(),
            token: body["token"].as_str().unwrap().to_owned(),
            address: body["address"].as_str().unwrap().to_owned(),
        }
    }

    /// A new user with the next deterministic key, logged in.
    pub async fn user(&self) -> User {
        let seed = self.next_seed.fetch_add(1, Ordering::Relaxed);
        assert!(seed < OWNER_SEED, "too many users");
        self.login(&key(seed)).await
    }

    /// The owner deposits `amount` to `to`.
    pub async fn deposit(&self, to: &User, amount: u64) {
        self.post("/api/ledger/deposit")
            .auth(&self.owner)
            .json(&json!({ "to": to.address, "amount": amount }))
            .send()
            .await
            .expect(201);
    }

    /// Moves the dev clock forward, as the owner (the only one who may), logged in afresh:
    /// a jump may have outlived the owner's first session. Returns the new time.
    pub async fn advance(&self, ms: u64) -> u64 {
        let owner = self.login(&self.owner.key).await;
        let r = self
            .post("/api/dev/clock")
            .auth(&owner)
            .json(&json!({ "advance_ms": ms }))
            .send()
            .await;
        r.expect(200)["now_ms"].as_u64().unwrap()
    }

    /// The dev clock's time.
    pub async fn now(&self) -> u64 {
        self.advance(0).await
    }

    /// `user`'s spendable balance.
    pub async fn balance(&self, user: &User) -> u64 {
        let r = self.get("/api/me").auth(user).send().await;
        r.expect(200)["balance"].as_str().unwrap().parse().unwrap()
    }

    /// A match's view.
    pub async fn match_(&self, id: u64) -> Value {
        self.get(&format!("/api/matches/{id}"))
            .send()
            .await
            .expect(200)
            .clone()
    }

    /// `challenger` challenges `opponent`, who accepts; returns the match id. The
    /// challenger moves first (X).
    pub async fn challenge_accepted(&self, challenger: &User, opponent: &User, stake: u64) -> u64 {
        let r = self
            .post("/api/challenges")
            .auth(challenger)
            .json(&json!({
                "opponent": opponent.address, "game": "tic-tac-toe", "stake": stake,
            }))
            .send()
            .await;
        let id = r.expect(201)["match"]["id"].as_u64().unwrap();
        self.post(&format!("/api/challenges/{id}/accept"))
            .auth(opponent)
            .send()
            .await
            .expect(201);
        id
    }

    /// `user` places `mark` in `cell` as move `seq` of match `id`.
    pub async fn play(&self, user: &User, id: u64, seq: u8, cell: u8, mark: &str) -> Resp {
        self.post(&format!("/api/matches/{id}/moves"))
            .auth(user)
            .json(&json!({ "seq": seq, "cell": cell, "mark": mark }))
            .send()
            .await
    }

    /// Plays a tic-tac-toe match to X's win on the top row: X (first) at 0, 1, 2 and O at
    /// 3, 4. Returns the last move's response.
    pub async fn x_wins(&self, x: &User, o: &User, id: u64) -> Resp {
        for (seq, who, cell, mark) in [
            (1, x, 0, "X"),
            (2, o, 3, "O"),
            (3, x, 1, "X"),
            (4, o, 4, "O"),
        ] {
            self.play(who, id, seq, cell, mark).await.expect(201);
        }
        self.play(x, id, 5, 2, "X").await
    }
}

/// Waits (a bounded number of short yields) until `check` holds; for effects of the
/// server's background tasks, such as the deadline ticker.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}
