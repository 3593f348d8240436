//! Arbitrary bytes as API request bodies: each is deserialized as every request body type
//! the API takes, then sent through the router in-process (a real server on a real SQLite
//! file, logged in as its owner) to one of the endpoints that read a body or a path the
//! client chooses. Nothing panics; no answer is a 5xx; every refusal has the API's error
//! shape `{code, error, message}` (a JSON-RPC error, for `/a2a`).
//!
//! Input: byte 0 picks the endpoint, byte 1 a match id, byte 2 whether to send the token;
//! the rest is the body (or the board of `/api/analysis/{game}/{board}`).
//! `cargo fuzz run api_bodies` (from crates/triad-server/fuzz).
#![no_main]

use std::sync::OnceLock;

use axum::{
    Router,
    body::Body,
    http::{Method, Request, header},
};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tower::ServiceExt as _;
use triad_identity::{SigningKey, address_of, public_key_hex, sign_ed25519};
use triad_server::{
    ServeArgs,
    api::{auth, games, ledger, relay, system},
};

struct World {
    runtime: tokio::runtime::Runtime,
    app: Router,
    token: String,
    _dir: tempfile::TempDir,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let key = SigningKey::from_bytes(&[3; 32]);
        let owner = triad_engine_address(&key);
        let args = ServeArgs {
            database: Some(dir.path().join("fuzz.db").display().to_string()),
            owner: Some(owner.parse().expect("an address")),
            domain: Some("triad.fuzz".to_owned()),
            seed: Some(1),
            dev_clock: Some(true),
            rate_per_ip: Some(1_000_000),
            rate_per_address: Some(1_000_000),
            rate_burst: Some(1_000_000),
            ..ServeArgs::default()
        };
        let (app, token) = runtime.block_on(async {
            let running = triad_server::start(args.resolve().expect("settings"))
                .await
                .expect("the server starts");
            let app = triad_server::api::router(running.state.clone());
            // Kept running for the whole process.
            std::mem::forget(running);
            let pk = public_key_hex(&key.verifying_key());
            let challenge = call(&app, Method::POST, "/api/auth/challenge", None,
                format!(r#"{{"public_key":"{pk}"}}"#).into_bytes()).await.1;
            let message = challenge["message"].as_str().expect("a message");
            let signature = sign_ed25519(&key, message.as_bytes());
            let body = serde_json::json!({"challenge_id": challenge["challenge_id"],
                "public_key": pk, "signature": signature});
            let login = call(&app, Method::POST, "/api/auth/login", None,
                body.to_string().into_bytes()).await.1;
            let token = login["token"].as_str().expect("a token").to_owned();
            // Some money, so stakes and withdrawals get past the balance check.
            let deposit = serde_json::json!({"to": owner, "amount": 1_000_000_000u64});
            call(&app, Method::POST, "/api/ledger/deposit", Some(&token),
                deposit.to_string().into_bytes()).await;
            (app, token)
        });
        World { runtime, app, token, _dir: dir }
    })
}

fn triad_engine_address(key: &SigningKey) -> String {
    triad_identity::format_address(&address_of(&key.verifying_key()))
}

async fn call(
    app: &Router,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Vec<u8>,
) -> (u16, Value, String) {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let request = request.body(Body::from(body)).expect("a request");
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status().as_u16();
    let stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let mut body = response.into_body();
    let bytes = if stream {
        // An SSE answer (`/a2a`'s SubscribeToTask) stays open while its game is on: its
        // first frame only.
        use axum::body::HttpBody as _;
        let frame = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await;
        frame
            .and_then(Result::ok)
            .and_then(|f| f.into_data().ok())
            .unwrap_or_default()
    } else {
        axum::body::to_bytes(body, usize::MAX)
            .await
            .expect("a body")
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null), text)
}

/// Every request body type the API takes: deserializing never panics.
fn deserialize_all(body: &[u8]) {
    let _ = serde_json::from_slice::<auth::ChallengeRequest>(body);
    let _ = serde_json::from_slice::<auth::LoginRequest>(body);
    let _ = serde_json::from_slice::<games::ChallengeRequest>(body);
    let _ = serde_json::from_slice::<games::QueueRequest>(body);
    let _ = serde_json::from_slice::<games::ComputerRequest>(body);
    let _ = serde_json::from_slice::<games::MoveRequest>(body);
    let _ = serde_json::from_slice::<ledger::DepositRequest>(body);
    let _ = serde_json::from_slice::<ledger::WithdrawRequest>(body);
    let _ = serde_json::from_slice::<system::ClockRequest>(body);
    let _ = serde_json::from_slice::<relay::SendRequest>(body);
}

const ENDPOINTS: &[(&str, &str)] = &[
    ("POST", "/api/auth/challenge"),
    ("POST", "/api/auth/login"),
    ("POST", "/api/challenges"),
    ("POST", "/api/queue"),
    ("POST", "/api/computer"),
    ("POST", "/api/matches/{id}/moves"),
    ("POST", "/api/ledger/deposit"),
    ("POST", "/api/ledger/withdraw"),
    ("POST", "/api/apps/messages"),
    ("POST", "/a2a"),
    ("GET", "/api/analysis/tic-tac-toe/{body}"),
    ("GET", "/api/analysis/sos/{body}"),
    ("GET", "/api/players/{body}"),
];

fuzz_target!(|data: &[u8]| {
    let (head, body) = data.split_at(data.len().min(3));
    let pick = head.first().copied().unwrap_or(0);
    let id = head.get(1).copied().unwrap_or(1);
    let with_token = head.get(2).is_none_or(|b| b & 1 == 0);
    deserialize_all(body);
    let (method, template) = ENDPOINTS[usize::from(pick) % ENDPOINTS.len()];
    let mut path = template.replace("{id}", &id.to_string());
    if path.contains("{body}") {
        // Path segments: percent-encode every byte, so any bytes make a valid URI.
        let encoded: String = body.iter().map(|b| format!("%{b:02X}")).collect();
        path = path.replace("{body}", &encoded);
    }
    let method: Method = method.parse().expect("a method");
    let w = world();
    let token = with_token.then_some(w.token.as_str());
    let (status, json, text) = w
        .runtime
        .block_on(call(&w.app, method, &path, token, body.to_vec()));
    assert!(status < 500, "{path}: {status} {text}");
    if status >= 400 {
        let error = if path == "/a2a" { &json["error"]["data"] } else { &json };
        assert!(
            error["code"].is_u64() && error["error"].is_string() && error["message"].is_string(),
            "{path}: {status} without the error shape: {text}"
        );
    }
});
