//! Behind a proxy, sessions, and the exact answers users hit: who a client is behind a
//! trusted proxy (and only then), the agent card's URL, what a logout or an expiry ends,
//! the purge of expired sessions, the WebSocket's first-message login, the API's caching
//! headers, and the status codes, messages and clock boundaries of the SOS contract's timeouts.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Api, Player, Server, TTT_TOP_ROW, WAIT, Ws, kind, new_key, nth};

/// A plain HTTP client, for headers the harness's `Api` does not set or read.
fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(WAIT)
        .build()
        .expect("an HTTP client")
}

/// `GET /api/leaderboard` (public, cheap) with `X-Forwarded-For: forwarded`: the status.
async fn leaderboard_as(api: &Api, forwarded: &str) -> u16 {
    http()
        .get(format!("{}/api/leaderboard", api.base))
        .header("x-forwarded-for", forwarded)
        .send()
        .await
        .expect("an answer")
        .status()
        .as_u16()
}

/// Behind a trusted proxy (here the test itself, on 127.0.0.1), each forwarded client has
/// its own per-IP limit, keyed by the right-most address the proxy appended: what the
/// client wrote to the left of it changes nothing.
#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_rate_limit() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        "",
        &[
            "--trusted-proxies",
            "127.0.0.1,::1",
            "--rate-per-ip",
            "1",
            "--rate-burst",
            "2",
        ],
    )
    .await;
    let api = &server.api;
    // Client 1 uses its burst of 2, forging a new left-most entry each time.
    assert_eq!(leaderboard_as(api, "198.51.100.1, 203.0.113.1").await, 200);
    assert_eq!(leaderboard_as(api, "198.51.100.2, 203.0.113.1").await, 200);
    assert_eq!(
        leaderboard_as(api, "198.51.100.3, 203.0.113.1").await,
        429,
        "client 1 is over its limit whatever it puts left of the proxy's entry"
    );
    // Client 2, behind the same proxy, has its own.
    assert_eq!(leaderboard_as(api, "203.0.113.2").await, 200);
    assert_eq!(leaderboard_as(api, "203.0.113.2").await, 200);
    assert_eq!(leaderboard_as(api, "203.0.113.2").await, 429);
}

/// A peer that is not a trusted proxy has its `X-Forwarded-For` ignored: forging a new
/// address on every request does not escape its limit.
#[tokio::test]
async fn an_untrusted_peers_forwarded_for_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        "",
        &[
            "--trusted-proxies",
            "10.0.0.0/8",
            "--rate-per-ip",
            "1",
            "--rate-burst",
            "2",
        ],
    )
    .await;
    let api = &server.api;
    assert_eq!(leaderboard_as(api, "203.0.113.1").await, 200);
    assert_eq!(leaderboard_as(api, "203.0.113.2").await, 200);
    assert_eq!(
        leaderboard_as(api, "203.0.113.3").await,
        429,
        "a forged X-Forwarded-For from an untrusted peer must not buy a fresh limit"
    );
}

/// The agent card's URL is the configured public URL, or the address served: never the
/// request's `Host` (nor `X-Forwarded-Proto`).
#[tokio::test]
async fn the_agent_card_names_the_public_url_not_the_host_header() {
    let card = |api: &Api| {
        let url = format!("{}/.well-known/agent-card.json", api.base);
        async move {
            let text = http()
                .get(url)
                .header("host", "evil.example")
                .header("x-forwarded-proto", "https")
                .send()
                .await
                .expect("an answer")
                .text()
                .await
                .expect("a body");
            serde_json::from_str::<Value>(&text).expect("JSON")
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let public = Server::start(dir.path(), "", &["--public-url", "https://triad.example/"]).await;
    let c = card(&public.api).await;
    assert_eq!(c["url"], "https://triad.example/a2a", "{c}");
    assert_eq!(c["provider"]["url"], "https://triad.example", "{c}");

    let dir = tempfile::tempdir().unwrap();
    let plain = Server::start(dir.path(), "", &[]).await;
    let c = card(&plain.api).await;
    assert_eq!(
        c["url"].as_str(),
        Some(format!("{}/a2a", plain.api.base).as_str()),
        "without --public-url, the address served: {c}"
    );
}

/// A logout closes every socket its token opened (4001), whether the token came in the
/// first message or the URL, so the owner's inbox (money events) stops; the token cannot
/// log a socket in again, and a subscription sent after the logout gets nothing.
#[tokio::test]
async fn a_logout_closes_the_sockets_it_opened_and_nothing_resubscribes() {
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let server = Server::start(dir.path(), &owner_key.address_string(), &[]).await;
    let api = &server.api;
    let owner = api.login(&owner_key).await;
    let alice = api.login(&new_key()).await;
    let mut first = Ws::connect(api, &alice.token).await;
    first.subscribe("inbox", 0).await;
    let mut by_url = Ws::connect_with_url_token(api, &alice.token).await;
    by_url.subscribe("inbox", 0).await;
    // Money reaches the inbox while the session lives.
    api.deposit(&owner, &alice, 5).await.ok();
    assert_eq!(
        kind(&first.until_kind("transferred").await.0),
        "transferred"
    );
    assert_eq!(
        kind(&by_url.until_kind("transferred").await.0),
        "transferred"
    );

    let out = api
        .post("/api/auth/logout", Some(&alice.token), &json!({}))
        .await;
    assert_eq!(out.status, 204, "{}", out.body);
    // A resubscription from 0 right after the logout.
    first
        .send(json!({ "type": "subscribe", "topic": "inbox", "since": 0 }))
        .await;
    api.deposit(&owner, &alice, 7).await.ok();
    for ws in [&mut first, &mut by_url] {
        assert_eq!(closed_without_inbox(ws).await, 4001);
    }
    // The token logs no socket in again.
    let mut again = Ws::connect_anonymous(api).await;
    again
        .send(json!({ "type": "auth", "token": alice.token }))
        .await;
    let refused = again.next_json().await;
    assert_eq!(refused["code"], 202, "{refused}");
}

/// Reads a socket to its close frame, asserting that only errors of an ended session come
/// before it (no event, no `subscribed`); returns the close code.
async fn closed_without_inbox(ws: &mut Ws) -> u16 {
    loop {
        match ws.recv().await {
            Some(tokio_tungstenite::tungstenite::Message::Close(frame)) => {
                return frame.map_or(1005, |f| u16::from(f.code));
            }
            Some(tokio_tungstenite::tungstenite::Message::Text(text)) => {
                let frame: Value = serde_json::from_str(&text).expect("JSON");
                assert_eq!(frame["type"], "error", "after the logout: {frame}");
                assert!(
                    frame["code"] == 202 || frame["code"] == 203,
                    "after the logout: {frame}"
                );
            }
            Some(other) => panic!("after the logout: {other:?}"),
            None => panic!("the socket ended without a close frame"),
        }
    }
}

/// A session that expires closes its socket (within the 5 s sweep), and expired sessions
/// do not pile up: they are purged from the database.
#[tokio::test]
async fn expired_sessions_close_their_sockets_and_are_purged() {
    const TTL_MS: u64 = 600_000;
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let server = Server::start(
        dir.path(),
        &owner_key.address_string(),
        &["--session-ttl-ms", &TTL_MS.to_string()],
    )
    .await;
    let api = &server.api;
    let players = api.players(200).await;
    let mut ws = Ws::connect(api, &players[0].token).await;
    ws.subscribe("inbox", 0).await;
    let db = server.db();
    assert!(expired_sessions(&db, u64::MAX).await >= 200);

    let now = api.advance(TTL_MS).await;
    let started = Instant::now();
    assert_eq!(
        ws.expect_close().await,
        4001,
        "the expired session's socket"
    );
    assert!(started.elapsed() < Duration::from_secs(7));
    // Every session older than the jump has expired; none is left in the database.
    api.poll("the purge of expired sessions", || async {
        (expired_sessions(&db, now).await == 0).then_some(())
    })
    .await;
    let expired = api.get("/api/me", Some(&players[1].token)).await;
    assert!(
        expired.status == 401,
        "an expired token is refused: {}",
        expired.body
    );
}

/// How many sessions in the database at `db` have expired by `now_ms`.
async fn expired_sessions(db: &std::path::Path, now_ms: u64) -> i64 {
    use sqlx::Row as _;
    let url = format!("sqlite://{}?mode=ro", db.display());
    let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url)
        .await
        .expect("the database opens");
    let row = sqlx::query("SELECT COUNT(*) FROM sessions WHERE expires_ms <= ?")
        .bind(i64::try_from(now_ms).unwrap_or(i64::MAX))
        .fetch_one(&mut conn)
        .await
        .expect("the sessions table");
    row.get(0)
}

/// A socket logs in with its first message (no token in the URL, where proxies log it)
/// and then follows its inbox; a socket that says nothing is closed at the deadline.
#[tokio::test]
async fn the_first_message_logs_a_socket_in_and_a_silent_one_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let server = Server::start(dir.path(), &owner_key.address_string(), &[]).await;
    let api = &server.api;
    let owner = api.login(&owner_key).await;
    let alice = api.login(&new_key()).await;
    let mut silent = Ws::connect_anonymous(api).await;
    let opened = Instant::now();
    // `Ws::connect` sends `auth` first and waits for `authed`.
    let mut ws = Ws::connect(api, &alice.token).await;
    ws.subscribe("inbox", 0).await;
    api.deposit(&owner, &alice, 5).await.ok();
    let (event, _) = ws.until_kind("transferred").await;
    assert!(event.to_string().contains(&alice.address), "{event}");

    assert_eq!(silent.expect_close().await, 4002);
    let after = opened.elapsed();
    assert!(
        after >= Duration::from_secs(9) && after < Duration::from_secs(15),
        "closed after {after:?}"
    );
}

/// Every API answer, success or error, says `Cache-Control: no-store` and
/// `X-Content-Type-Options: nosniff`; the web app's files get `nosniff` and keep their own
/// caching.
#[tokio::test]
async fn api_answers_are_never_cached_nor_sniffed() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "", &[]).await;
    let base = &server.api.base;
    for (path, status) in [
        ("/api/leaderboard", 200),
        ("/api/me", 401),
        ("/api/no-such-thing", 404),
        ("/healthz", 200),
    ] {
        let r = http().get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(r.status().as_u16(), status, "{path}");
        let h = r.headers();
        assert_eq!(
            h.get("cache-control").map(|v| v.to_str().unwrap()),
            Some("no-store"),
            "{path}"
        );
        assert_eq!(
            h.get("x-content-type-options").map(|v| v.to_str().unwrap()),
            Some("nosniff"),
            "{path}"
        );
    }
    let page = http().get(format!("{base}/")).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert_eq!(
        page.headers()
            .get("x-content-type-options")
            .map(|v| v.to_str().unwrap()),
        Some("nosniff")
    );
    assert_ne!(
        page.headers()
            .get("cache-control")
            .map(|v| v.to_str().unwrap()),
        Some("no-store"),
        "the web app's files keep their own caching"
    );
}

/// Leaving the queue creates nothing: 200, not 201.
#[tokio::test]
async fn leaving_the_queue_answers_200() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "", &[]).await;
    let api = &server.api;
    let alice = api.login(&new_key()).await;
    api.queue(&alice, "tic-tac-toe", 0).await.ok();
    let left = api.delete("/api/queue", Some(&alice.token)).await;
    assert_eq!(left.status, 200, "{}", left.body);
    assert_eq!(left.body["match"]["outcome"]["reason"], "cancelled");
}

/// Before the first move, the player who must make it is told so; the other is told the
/// opponent still has time.
#[tokio::test]
async fn each_side_of_a_first_move_gets_its_own_message() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "", &[]).await;
    let api = &server.api;
    let (alice, bob) = (api.login(&new_key()).await, api.login(&new_key()).await);
    // Alice moves first.
    let id = api.challenge_accepted(&alice, &bob, "tic-tac-toe", 0).await;
    let mover = api.claim(&alice, id).await;
    mover.expect_error(409, 110);
    let text = mover.body["message"].as_str().unwrap();
    assert!(text.contains("the first move is yours"), "{text}");
    assert!(!text.contains("opponent still has time"), "{text}");
    let waiter = api.claim(&bob, id).await;
    waiter.expect_error(409, 110);
    let text = waiter.body["message"].as_str().unwrap();
    assert!(text.contains("your opponent still has time"), "{text}");
}

/// The SOS contract: "more than 1 minute". A claim at exactly 60,000 ms is refused, at 60,001
/// taken; a move at exactly 60,000 ms is still in time.
#[tokio::test]
async fn ur2slow_is_more_than_a_minute_to_the_millisecond() {
    let dir = tempfile::tempdir().unwrap();
    let owner = new_key();
    let server = Server::start(dir.path(), &owner.address_string(), &[]).await;
    let api = &server.api;
    let (alice, bob) = (api.login(&new_key()).await, api.login(&new_key()).await);
    let id = api.queue_pair(&alice, &bob, "tic-tac-toe", 0).await;
    api.play(&alice, id, nth(&TTT_TOP_ROW, 1)).await;
    api.advance(60_000).await;
    let exactly = api.claim(&alice, id).await;
    exactly.expect_error(409, 110);
    assert_eq!(exactly.retry_after, Some(1));
    api.advance(1).await;
    let claimed = api.claim(&alice, id).await;
    assert_eq!(claimed.status, 201, "{}", claimed.body);
    assert_eq!(claimed.body["match"]["outcome"]["reason"], "timeout");

    // The other side of the boundary: a move at exactly 60,000 ms counts.
    let id = api.queue_pair(&alice, &bob, "tic-tac-toe", 0).await;
    api.play(&alice, id, nth(&TTT_TOP_ROW, 1)).await;
    api.advance(60_000).await;
    api.play(&bob, id, nth(&TTT_TOP_ROW, 2)).await;
}

/// The dev clock is the owner's, bounded to 30 days forward a call; without an owner
/// nobody moves it.
#[tokio::test]
async fn the_dev_clock_is_the_owners_and_bounded() {
    const THIRTY_DAYS_MS: u64 = 30 * 24 * 60 * 60 * 1000;
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let server = Server::start(dir.path(), &owner_key.address_string(), &[]).await;
    let api = &server.api;
    let owner = api.login(&owner_key).await;
    let alice = api.login(&new_key()).await;
    let clock = |who: Option<&Player>, body: Value| {
        let token = who.map(|p| p.token.clone());
        async move { api.post("/api/dev/clock", token.as_deref(), &body).await }
    };
    clock(None, json!({ "advance_ms": 1_000 }))
        .await
        .expect_error(401, 201);
    clock(Some(&alice), json!({ "advance_ms": 1_000 }))
        .await
        .expect_error(403, 115);
    clock(Some(&owner), json!({ "advance_ms": THIRTY_DAYS_MS + 1 }))
        .await
        .expect_error(400, 215);
    clock(Some(&owner), json!({ "advance_ms": -1 }))
        .await
        .expect_error(400, 200);
    let before = clock(Some(&owner), json!({ "advance_ms": 0 })).await.ok()["now_ms"]
        .as_u64()
        .unwrap();
    let after = clock(Some(&owner), json!({ "advance_ms": THIRTY_DAYS_MS }))
        .await
        .ok()["now_ms"]
        .as_u64()
        .unwrap();
    assert_eq!(after - before, THIRTY_DAYS_MS);

    let dir = tempfile::tempdir().unwrap();
    let ownerless = Server::start(dir.path(), "", &[]).await;
    let bob = ownerless.api.login(&new_key()).await;
    ownerless
        .api
        .post(
            "/api/dev/clock",
            Some(&bob.token),
            &json!({ "advance_ms": 1_000 }),
        )
        .await
        .expect_error(403, 115);
}
