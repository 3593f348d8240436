//! A simple load driver for `triad serve`: `pairs` pairs of players, spread over the given
//! nodes (player `i` talks to node `i % n`, so each game crosses nodes when there are
//! several), play free tic-tac-toe games back to back for `seconds`, each move sent as soon
//! as the previous one was answered. Prints the moves acknowledged per second and the
//! latency of a move request (p50, p99).
//!
//! ```text
//! cargo run --release -p triad --example loadgen -- PAIRS SECONDS URL [URL …]
//! ```
//!
//! Run it against servers started with high rate limits (`--rate-per-ip`,
//! `--rate-per-address`, `--rate-burst`): all its requests come from one address.

use std::time::{Duration, Instant};

use rand::{rand_core::UnwrapErr, rngs::SysRng};
use serde_json::{Value, json};
use triad_identity::KeyFile;

/// X wins on move 7: no win before, so every game is 7 moves.
const GAME: [(u8, &str); 7] = [
    (0, "X"),
    (4, "O"),
    (8, "X"),
    (1, "O"),
    (7, "X"),
    (2, "O"),
    (6, "X"),
];

struct Client {
    http: reqwest::Client,
    base: String,
    token: String,
    address: String,
}

async fn post(http: &reqwest::Client, url: &str, token: &str, body: &Value) -> (u16, Value) {
    let mut request = http.post(url).json(body);
    if !token.is_empty() {
        request = request.bearer_auth(token);
    }
    match request.send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.json().await.unwrap_or(Value::Null))
        }
        Err(e) => (0, json!({ "error": e.to_string() })),
    }
}

async fn login(http: reqwest::Client, base: String) -> Client {
    let key = KeyFile::generate(&mut UnwrapErr(SysRng));
    let public_key = key.public_key_hex();
    let (_, challenge) = post(
        &http,
        &format!("{base}/api/auth/challenge"),
        "",
        &json!({ "public_key": public_key }),
    )
    .await;
    let message = challenge["message"].as_str().unwrap_or_default();
    let signature = triad_identity::sign_ed25519(key.signing_key(), message.as_bytes());
    let (status, body) = post(
        &http,
        &format!("{base}/api/auth/login"),
        "",
        &json!({"challenge_id": challenge["challenge_id"], "public_key": public_key, "signature": signature}),
    )
    .await;
    assert_eq!(status, 200, "login at {base}: {body}");
    Client {
        token: body["token"].as_str().unwrap_or_default().to_owned(),
        address: key.address_string(),
        http,
        base,
    }
}

/// Plays games between `a` (X) and `b` until `until`; returns each move's latency.
async fn play(a: Client, b: Client, until: Instant) -> Vec<Duration> {
    let mut latencies = Vec::new();
    while Instant::now() < until {
        let (status, issued) = post(
            &a.http,
            &format!("{}/api/challenges", a.base),
            &a.token,
            &json!({"opponent": b.address, "game": "tic-tac-toe", "stake": 0, "first": "challenger"}),
        )
        .await;
        assert_eq!(status, 201, "challenge: {issued}");
        let id = issued["match"]["id"].as_u64().unwrap_or_default();
        let (status, accepted) = post(
            &b.http,
            &format!("{}/api/challenges/{id}/accept", b.base),
            &b.token,
            &json!({}),
        )
        .await;
        assert_eq!(status, 201, "accept: {accepted}");
        for (i, (cell, mark)) in GAME.iter().enumerate() {
            let who = if i % 2 == 0 { &a } else { &b };
            let started = Instant::now();
            let (status, body) = post(
                &who.http,
                &format!("{}/api/matches/{id}/moves", who.base),
                &who.token,
                &json!({"seq": i + 1, "cell": cell, "mark": mark}),
            )
            .await;
            assert_eq!(status, 201, "move: {body}");
            latencies.push(started.elapsed());
        }
    }
    latencies
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: loadgen PAIRS SECONDS URL [URL …]";
    let pairs: usize = args.first().and_then(|a| a.parse().ok()).expect(usage);
    let seconds: u64 = args.get(1).and_then(|a| a.parse().ok()).expect(usage);
    let nodes: Vec<String> = args[2..]
        .iter()
        .map(|u| u.trim_end_matches('/').to_owned())
        .collect();
    assert!(!nodes.is_empty(), "{usage}");
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(4 * pairs)
        .build()
        .expect("an HTTP client");
    let mut clients = Vec::new();
    for i in 0..2 * pairs {
        clients.push(login(http.clone(), nodes[i % nodes.len()].clone()).await);
    }
    let until = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    let mut clients = clients.into_iter();
    while let (Some(a), Some(b)) = (clients.next(), clients.next()) {
        tasks.push(tokio::spawn(play(a, b, until)));
    }
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.expect("a player task"));
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1;
        latencies[i].as_secs_f64() * 1e3
    };
    println!(
        "{} nodes, {pairs} pairs, {elapsed:.1} s: {} moves, {:.0} moves/s; move latency p50 {:.1} ms, p99 {:.1} ms",
        nodes.len(),
        latencies.len(),
        latencies.len() as f64 / elapsed,
        at(0.50),
        at(0.99)
    );
}
