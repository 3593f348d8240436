//! The security matrix: who may do what, with which token, and the rate limits.

use axum::http::Method;
use serde_json::{Value, json};

use crate::common::{Resp, Server, User};

const DAY_MS: u64 = 86_400_000;

/// A server with a token that has expired, then fresh users:
/// - `finished`: Alice (X) beat Bob;
/// - `live`: Alice (X) against Bob, Alice has moved, Bob is to move;
/// - `open`: Dave's open challenge to Erin;
/// - Carol takes part in nothing.
///
/// `expired` and `revoked` are tokens of a user from before the clock moved a day.
struct World {
    server: Server,
    alice: User,
    bob: User,
    carol: User,
    erin: User,
    expired: String,
    revoked: String,
    finished: u64,
    live: u64,
    open: u64,
}

async fn world() -> World {
    let mut server = Server::start().await;
    // Two sessions of an early user: one logs out, the other outlives its day.
    let stale = server.user().await;
    let revoked = server.login(&stale.key).await.token;
    let r = server.post("/api/auth/logout").token(&revoked).send().await;
    assert_eq!(r.status.as_u16(), 204);
    server.advance(DAY_MS).await;
    // Everyone logs in after the clock moved, so only `stale` has expired.
    server.owner = server.login(&server.owner.key.clone()).await;
    let (alice, bob, carol) = (
        server.user().await,
        server.user().await,
        server.user().await,
    );
    let (dave, erin) = (server.user().await, server.user().await);
    for user in [&alice, &bob, &dave, &erin] {
        server.deposit(user, 1_000).await;
    }

    let finished = server.challenge_accepted(&alice, &bob, 100).await;
    server.x_wins(&alice, &bob, finished).await.expect(201);
    let live = server.challenge_accepted(&alice, &bob, 100).await;
    server.play(&alice, live, 1, 4, "X").await.expect(201);
    let r = server
        .post("/api/challenges")
        .auth(&dave)
        .json(&json!({ "opponent": erin.address, "game": "sos", "stake": 100 }))
        .send()
        .await;
    let open = r.expect(201)["match"]["id"].as_u64().unwrap();
    World {
        server,
        alice,
        bob,
        carol,
        erin,
        expired: stale.token,
        revoked,
        finished,
        live,
        open,
    }
}

impl World {
    async fn post(&self, who: &User, path: &str) -> Resp {
        self.server.post(path).auth(who).send().await
    }

    async fn state(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for id in [self.finished, self.live, self.open] {
            out.push(self.server.match_(id).await);
        }
        for user in [&self.alice, &self.bob, &self.carol, &self.erin] {
            out.push(
                self.server
                    .get("/api/me")
                    .auth(user)
                    .send()
                    .await
                    .expect(200)
                    .clone(),
            );
        }
        out.push(
            self.server
                .get("/api/ledger/reserve")
                .auth(&self.server.owner)
                .send()
                .await
                .expect(200)
                .clone(),
        );
        out
    }
}

#[tokio::test]
async fn only_the_two_players_may_move_forfeit_claim_or_rematch() {
    let w = world().await;
    let before = w.state().await;
    let (live, finished) = (w.live, w.finished);
    // Carol's token is valid, but she does not play these matches.
    w.server
        .play(&w.carol, live, 2, 0, "O")
        .await
        .expect_error(403, 101, "not_a_player");
    for action in ["forfeit", "claim-timeout"] {
        w.post(&w.carol, &format!("/api/matches/{live}/{action}"))
            .await
            .expect_error(403, 101, "not_a_player");
    }
    w.post(&w.carol, &format!("/api/matches/{finished}/rematch"))
        .await
        .expect_error(403, 101, "not_a_player");
    // The owner is no player either.
    w.post(&w.server.owner, &format!("/api/matches/{live}/forfeit"))
        .await
        .expect_error(403, 101, "not_a_player");
    assert_eq!(
        w.state().await,
        before,
        "a refused command changed something"
    );
}

#[tokio::test]
async fn only_the_player_to_move_may_move_and_only_with_their_mark() {
    let w = world().await;
    let before = w.state().await;
    let live = w.live;
    // Bob is to move: Alice may not, whatever the seq.
    w.server
        .play(&w.alice, live, 2, 0, "X")
        .await
        .expect_error(409, 2, "not_your_turn");
    w.server
        .play(&w.alice, live, 2, 0, "O")
        .await
        .expect_error(409, 2, "not_your_turn");
    // Bob with Alice's mark, or a mark of another game.
    w.server
        .play(&w.bob, live, 2, 0, "X")
        .await
        .expect_error(422, 5, "not_your_mark");
    w.server
        .play(&w.bob, live, 2, 0, "S")
        .await
        .expect_error(422, 4, "mark_not_in_game");
    // The rules' codes 0-3 keep their numbers.
    w.server
        .play(&w.bob, live, 2, 4, "O")
        .await
        .expect_error(409, 3, "cell_occupied");
    w.server
        .play(&w.bob, live, 2, 9, "O")
        .await
        .expect_error(422, 1, "invalid_position");
    w.server
        .play(&w.bob, w.finished, 6, 8, "O")
        .await
        .expect_error(409, 0, "game_over");
    // Alice moved last: she cannot claim before the deadline; Bob never can.
    w.post(&w.bob, &format!("/api/matches/{live}/claim-timeout"))
        .await
        .expect_error(403, 111, "not_last_mover");
    assert_eq!(
        w.state().await,
        before,
        "a refused command changed something"
    );
}

#[tokio::test]
async fn only_the_challenged_player_answers_and_only_the_challenger_withdraws() {
    let w = world().await;
    let before = w.state().await;
    let open = w.open;
    for action in ["accept", "decline"] {
        w.post(&w.carol, &format!("/api/challenges/{open}/{action}"))
            .await
            .expect_error(403, 108, "not_your_challenge");
    }
    w.post(&w.erin, &format!("/api/challenges/{open}/withdraw"))
        .await
        .expect_error(403, 108, "not_your_challenge");
    w.post(&w.carol, &format!("/api/challenges/{open}/withdraw"))
        .await
        .expect_error(403, 101, "not_a_player");
    // A started match is no challenge to answer.
    w.post(&w.bob, &format!("/api/challenges/{}/accept", w.live))
        .await
        .expect_error(409, 107, "not_waiting");
    assert_eq!(
        w.state().await,
        before,
        "a refused command changed something"
    );
}

#[tokio::test]
async fn only_the_owner_may_deposit_view_or_collect_the_reserve() {
    let w = world().await;
    let before = w.state().await;
    for who in [&w.alice, &w.carol] {
        w.server
            .post("/api/ledger/deposit")
            .auth(who)
            .json(&json!({ "to": who.address, "amount": 1_000_000 }))
            .send()
            .await
            .expect_error(403, 115, "owner_only");
        w.post(who, "/api/ledger/collect")
            .await
            .expect_error(403, 115, "owner_only");
        w.server
            .get("/api/ledger/reserve")
            .auth(who)
            .send()
            .await
            .expect_error(403, 115, "owner_only");
    }
    assert_eq!(
        w.state().await,
        before,
        "a refused command changed something"
    );
    // The owner may.
    w.post(&w.server.owner, "/api/ledger/collect")
        .await
        .expect(201);
}

/// Every endpoint that needs a login, with a valid body, so only the token is wrong.
fn protected(w: &World) -> Vec<(Method, String, Option<Value>)> {
    let (live, finished, open) = (w.live, w.finished, w.open);
    let post = |path: String, body: Option<Value>| (Method::POST, path, body);
    vec![
        post("/api/auth/logout".into(), None),
        (Method::GET, "/api/me".into(), None),
        post(
            "/api/challenges".into(),
            Some(json!({ "opponent": w.carol.address, "game": "sos" })),
        ),
        (Method::GET, "/api/challenges".into(), None),
        post(format!("/api/challenges/{open}/accept"), None),
        post(format!("/api/challenges/{open}/decline"), None),
        post(format!("/api/challenges/{open}/withdraw"), None),
        post("/api/queue".into(), Some(json!({ "game": "sos" }))),
        (Method::DELETE, "/api/queue".into(), None),
        post("/api/computer".into(), Some(json!({ "game": "sos" }))),
        post(
            format!("/api/matches/{live}/moves"),
            Some(json!({ "seq": 2, "cell": 0, "mark": "O" })),
        ),
        post(format!("/api/matches/{live}/forfeit"), None),
        post(format!("/api/matches/{live}/claim-timeout"), None),
        post(format!("/api/matches/{finished}/rematch"), None),
        (Method::GET, "/api/ledger".into(), None),
        post(
            "/api/ledger/deposit".into(),
            Some(json!({ "to": w.carol.address, "amount": 5 })),
        ),
        post("/api/ledger/withdraw".into(), Some(json!({ "amount": 5 }))),
        (Method::GET, "/api/ledger/reserve".into(), None),
        post("/api/ledger/collect".into(), None),
    ]
}

#[tokio::test]
async fn every_protected_endpoint_refuses_missing_malformed_forged_revoked_and_expired_tokens() {
    let w = world().await;
    let before = w.state().await;
    let forged = hex::encode(triad_identity::hash256(b"a token nobody was given"));
    let bad_tokens: [(&str, Option<&str>, u64, &str); 7] = [
        ("missing", None, 201, "unauthorized"),
        ("malformed: short", Some("abc"), 202, "invalid_token"),
        (
            "malformed: not hex",
            Some(&"zz".repeat(32)),
            202,
            "invalid_token",
        ),
        (
            "malformed: too long",
            Some(&"ab".repeat(33)),
            202,
            "invalid_token",
        ),
        ("forged", Some(&forged), 202, "invalid_token"),
        ("revoked", Some(&w.revoked), 202, "invalid_token"),
        ("expired", Some(&w.expired), 203, "token_expired"),
    ];
    let endpoints = protected(&w);
    assert_eq!(endpoints.len(), 19);
    for (method, path, body) in &endpoints {
        for (label, token, code, name) in &bad_tokens {
            let mut call = w.server.call(method.clone(), path);
            if let Some(token) = token {
                call = call.token(token);
            }
            if let Some(body) = body {
                call = call.json(body);
            }
            let r = call.send().await;
            assert_eq!(
                (
                    r.status.as_u16(),
                    r.body["code"].as_u64(),
                    r.body["error"].as_str()
                ),
                (401, Some(*code), Some(*name)),
                "{method} {path} with a {label} token: {}",
                r.text
            );
            crate::common::assert_error_shape(&r.body, &r.text);
        }
    }
    assert_eq!(
        w.state().await,
        before,
        "a refused request changed something"
    );
    // The forged token really is unknown, and the valid ones still work.
    w.server
        .get("/api/me")
        .auth(&w.carol)
        .send()
        .await
        .expect(200);
}

#[tokio::test]
async fn the_per_address_rate_limit_answers_429_with_retry_after() {
    // One request a second with a burst of three, per address; the per-IP limit is
    // effectively off (its burst of three refills every microsecond).
    let server = Server::start_with(|a| {
        a.rate_per_ip = Some(1_000_000);
        a.rate_per_address = Some(1);
        a.rate_burst = Some(3);
    })
    .await;
    let (alice, bob) = (server.user().await, server.user().await);
    for _ in 0..3 {
        server.get("/api/me").auth(&alice).send().await.expect(200);
    }
    // The fourth is refused unless a second has passed since the first; allow for a very
    // slow machine by trying a few more times (each try is far under a second).
    let mut refused = None;
    for _ in 0..10 {
        let r = server.get("/api/me").auth(&alice).send().await;
        if r.status.as_u16() == 429 {
            refused = Some(r);
            break;
        }
    }
    let r = refused.expect("the per-address limit refuses a burst");
    r.expect_error(429, 207, "rate_limited");
    let wait = r.retry_after().expect("a Retry-After header");
    assert!((1..=3).contains(&wait), "Retry-After: {wait}");
    // Another address from the same IP is not limited, nor are public routes.
    server.get("/api/me").auth(&bob).send().await.expect(200);
    server.get("/healthz").send().await.expect(200);
}

#[tokio::test]
async fn the_per_ip_rate_limit_answers_429_with_retry_after() {
    let server = Server::start_with(|a| {
        a.rate_per_ip = Some(1);
        a.rate_per_address = Some(1_000_000);
        a.rate_burst = Some(3);
    })
    .await;
    let ip = [10, 0, 0, 1];
    for _ in 0..3 {
        server
            .get("/healthz")
            .client_ip(ip)
            .send()
            .await
            .expect(200);
    }
    let mut refused = None;
    for _ in 0..10 {
        let r = server.get("/healthz").client_ip(ip).send().await;
        if r.status.as_u16() == 429 {
            refused = Some(r);
            break;
        }
    }
    let r = refused.expect("the per-IP limit refuses a burst");
    r.expect_error(429, 207, "rate_limited");
    let wait = r.retry_after().expect("a Retry-After header");
    assert!((1..=3).contains(&wait), "Retry-After: {wait}");
    // Unknown routes count too, and get the same answer.
    server
        .get("/nowhere")
        .client_ip(ip)
        .send()
        .await
        .expect_error(429, 207, "rate_limited");
    // Another IP has its own budget.
    server
        .get("/healthz")
        .client_ip([10, 0, 0, 2])
        .send()
        .await
        .expect(200);
}
