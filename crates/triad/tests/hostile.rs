//! Hostile players: the attack matrix against the real `triad serve` binary over real
//! sockets (RELIABILITY.md, "Hostile players"). Each attack must be refused with its exact
//! HTTP status and stable error code, and a refused attack must change nothing.
//!
//! Each test collects its rows and checks them all at once, so a failure names every
//! attack that got through (or got the wrong answer), not just the first.
//!
//! The races (double spending) run `HOSTILE_ROUNDS` rounds (default 10; `TRIAD_SOAK=1`
//! makes it 200).

mod support;

use std::fmt::Write as _;

use reqwest::Method;
use serde_json::{Value, json};
use support::{Api, E, Mv, Player, Resp, Server, TTT_TOP_ROW, amount, new_key, nth};
use triad_identity::KeyFile;
use triad_protocol::{App, Message, envelope};

const DAY_MS: u64 = 86_400_000;
/// The default time to move.
const MOVE_TIMEOUT_MS: u64 = 60_000;
/// The default wait before a staked queue wait may be cancelled.
const QUEUE_WAIT_MS: u64 = 120_000;

/// One attack: its name, the expected `(status, code)`, what it got, and the body.
type Row = (String, (u16, u64), (u16, Option<u64>), String);

/// The attack matrix of one test.
#[derive(Default)]
struct Matrix {
    rows: Vec<Row>,
}

impl Matrix {
    /// Records an attack and what it got.
    fn row(&mut self, attack: &str, status: u16, code: u64, r: &Resp) {
        self.rows.push((
            attack.to_owned(),
            (status, code),
            (r.status, r.body["code"].as_u64()),
            r.body.to_string(),
        ));
    }

    /// Fails, listing every attack whose answer was not the expected one.
    #[track_caller]
    fn check(self) {
        let mut wrong = String::new();
        for (attack, (status, code), (got_status, got_code), body) in &self.rows {
            let ok = *got_status == *status && *got_code == Some(*code);
            println!(
                "{} {attack}: expected {status}/{code}, got {got_status}/{}",
                if ok { "refused" } else { "WRONG  " },
                got_code.map_or_else(|| "-".to_owned(), |c| c.to_string()),
            );
            if !ok {
                let _ = writeln!(
                    wrong,
                    "{attack}: expected {status}/{code}, got {got_status} {body}"
                );
            }
        }
        assert!(
            wrong.is_empty(),
            "attacks not refused as expected:\n{wrong}"
        );
    }
}

async fn server(dir: &std::path::Path) -> (Server, Player, KeyFile) {
    let owner_key = new_key();
    let server = Server::start(dir, &owner_key.address_string(), &[]).await;
    let owner = server.api.login(&owner_key).await;
    (server, owner, owner_key)
}

/// A logged-in player with `money` deposited.
async fn funded(api: &Api, owner: &Player, money: u64) -> (Player, KeyFile) {
    let key = new_key();
    let p = api.login(&key).await;
    if money > 0 {
        api.deposit(owner, &p, money).await.ok();
    }
    (p, key)
}

/// Everything a refused attack must leave as it was: the matches named, every balance, and
/// the owner's view of the money.
async fn snapshot(api: &Api, owner: &Player, players: &[&Player], matches: &[u64]) -> Vec<Value> {
    let mut out = Vec::new();
    for id in matches {
        let mut m = api.match_(*id).await;
        // The deadline's "remaining" moves with the clock; the rest must not.
        if let Some(d) = m.get_mut("deadline") {
            *d = Value::Null;
        }
        out.push(m);
    }
    for p in players {
        out.push(json!(api.balance(p).await));
    }
    out.push(
        api.get("/api/ledger/reserve", Some(&owner.token))
            .await
            .ok(),
    );
    out
}

async fn send(api: &Api, method: Method, path: &str, token: Option<&str>, body: &Value) -> Resp {
    api.try_send(method, path, token, Some(body))
        .await
        .unwrap_or_else(|e| panic!("{path}: no response: {e}"))
}

#[tokio::test]
async fn moving_for_the_opponent_twice_or_after_the_end_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner, _) = server(dir.path()).await;
    let api = &server.api;
    let (alice, _) = funded(api, &owner, 10 * E).await;
    let (bob, _) = funded(api, &owner, 10 * E).await;
    let (carol, _) = funded(api, &owner, 0).await;
    // One active match per player: `done` is played to its end first.
    let done = api.challenge_accepted(&alice, &bob, "tic-tac-toe", E).await;
    for n in 1..=5 {
        let who = if n % 2 == 1 { &alice } else { &bob };
        api.play(who, done, nth(&TTT_TOP_ROW, n)).await;
    }
    let live = api.challenge_accepted(&alice, &bob, "tic-tac-toe", E).await;
    api.play(&alice, live, nth(&TTT_TOP_ROW, 1)).await;
    let before = snapshot(api, &owner, &[&alice, &bob, &carol], &[live, done]).await;
    let mut m = Matrix::default();
    let mv = |seq, cell, mark| Mv { seq, cell, mark };
    // Bob is to move in `live`.
    m.row(
        "Alice moves for Bob (Bob's mark)",
        409,
        2,
        &api.try_move(&alice, live, mv(2, 3, "O")).await,
    );
    m.row(
        "Alice moves twice (her own mark)",
        409,
        2,
        &api.try_move(&alice, live, mv(2, 3, "X")).await,
    );
    m.row(
        "Alice moves twice, skipping a seq",
        409,
        114,
        &api.try_move(&alice, live, mv(3, 3, "X")).await,
    );
    m.row(
        "Bob moves with Alice's mark",
        422,
        5,
        &api.try_move(&bob, live, mv(2, 3, "X")).await,
    );
    m.row(
        "Carol (no player) moves",
        403,
        101,
        &api.try_move(&carol, live, mv(2, 3, "O")).await,
    );
    m.row(
        "the owner (no player) moves",
        403,
        101,
        &api.try_move(&owner, live, mv(2, 3, "O")).await,
    );
    // `done` ended with Alice's top row on move 5.
    m.row(
        "the loser moves after the end",
        409,
        0,
        &api.try_move(&bob, done, mv(6, 5, "O")).await,
    );
    m.row(
        "the winner moves after the end",
        409,
        0,
        &api.try_move(&alice, done, mv(6, 5, "X")).await,
    );
    m.row(
        "the loser forfeits after the end",
        409,
        0,
        &api.post(
            &format!("/api/matches/{done}/forfeit"),
            Some(&bob.token),
            &json!({}),
        )
        .await,
    );
    m.row(
        "a move in a match that does not exist",
        404,
        100,
        &api.try_move(&alice, 999_999, mv(1, 0, "X")).await,
    );
    m.check();
    let after = snapshot(api, &owner, &[&alice, &bob, &carol], &[live, done]).await;
    assert_eq!(after, before, "a refused attack changed something");
}

#[tokio::test]
async fn replayed_logins_and_moves_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner, _) = server(dir.path()).await;
    let api = &server.api;
    let (alice, alice_key) = funded(api, &owner, 10 * E).await;
    let (bob, _) = funded(api, &owner, 10 * E).await;
    let mut m = Matrix::default();

    // A login captured on the wire: its challenge was used once, so a replay is refused.
    let public_key = alice_key.public_key_hex();
    let challenge = api.login_challenge(&public_key).await;
    let message = challenge["message"].as_str().unwrap();
    let login = json!({
        "challenge_id": challenge["challenge_id"],
        "public_key": public_key,
        "signature": triad_identity::sign_ed25519(alice_key.signing_key(), message.as_bytes()),
    });
    api.post("/api/auth/login", None, &login).await.ok();
    m.row(
        "a captured login replayed",
        401,
        204,
        &api.post("/api/auth/login", None, &login).await,
    );
    // The captured signature on a fresh challenge: the nonce differs, so it does not verify.
    let fresh = api.login_challenge(&public_key).await;
    let mut replayed = login.clone();
    replayed["challenge_id"] = fresh["challenge_id"].clone();
    m.row(
        "a captured signature on a fresh challenge",
        401,
        205,
        &api.post("/api/auth/login", None, &replayed).await,
    );
    // Mallory answers Alice's challenge with her own key and signature.
    let mallory_key = new_key();
    let alice_challenge = api.login_challenge(&public_key).await;
    let text = alice_challenge["message"].as_str().unwrap();
    m.row(
        "Alice's challenge answered with another key",
        401,
        205,
        &api.post(
            "/api/auth/login",
            None,
            &json!({
                "challenge_id": alice_challenge["challenge_id"],
                "public_key": mallory_key.public_key_hex(),
                "signature": triad_identity::sign_ed25519(mallory_key.signing_key(), text.as_bytes()),
            }),
        )
        .await,
    );

    // A move captured on the wire, replayed once the game has moved on.
    let id = api.challenge_accepted(&alice, &bob, "tic-tac-toe", E).await;
    let first = nth(&TTT_TOP_ROW, 1);
    api.play(&alice, id, first).await;
    api.play(&bob, id, nth(&TTT_TOP_ROW, 2)).await;
    let before = snapshot(api, &owner, &[&alice, &bob], &[id]).await;
    // Replayed by Alice herself it is a retry of a move already made: answered as the
    // duplicate it is, and nothing changes.
    let again = api.try_move(&alice, id, first).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["duplicate"], true, "{}", again.body);
    assert_eq!(
        snapshot(api, &owner, &[&alice, &bob], &[id]).await,
        before,
        "a replayed move changed something"
    );
    m.row(
        "Alice's first move replayed with Bob's token",
        409,
        113,
        &api.try_move(&bob, id, first).await,
    );
    // With its Idempotency-Key, a replay is answered as the duplicate it is: nothing new.
    let path = format!("/api/matches/{id}/moves");
    let third = nth(&TTT_TOP_ROW, 3);
    let body = json!({ "seq": third.seq, "cell": third.cell, "mark": third.mark });
    let keyed = |token: &str| {
        let url = format!("{}{path}", api.base);
        let body = body.clone();
        let token = token.to_owned();
        async move {
            reqwest::Client::new()
                .post(url)
                .bearer_auth(token)
                .header("idempotency-key", "alice-move-3")
                .json(&body)
                .send()
                .await
                .unwrap()
        }
    };
    assert_eq!(keyed(&alice.token).await.status().as_u16(), 201);
    let before_dup = snapshot(api, &owner, &[&alice, &bob], &[id]).await;
    let dup = keyed(&alice.token).await;
    assert_eq!(dup.status().as_u16(), 200, "a keyed replay is a duplicate");
    let dup: Value = dup.json().await.unwrap();
    assert_eq!(dup["duplicate"], true, "{dup}");
    assert_eq!(
        snapshot(api, &owner, &[&alice, &bob], &[id]).await,
        before_dup,
        "a duplicate changed something"
    );
    assert_ne!(before, before_dup);
    m.check();
}

#[tokio::test]
async fn forged_expired_revoked_and_borrowed_tokens_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner, _) = server(dir.path()).await;
    let api = &server.api;
    let (stale, _) = funded(api, &owner, 0).await;
    let (gone, _) = funded(api, &owner, 0).await;
    api.post("/api/auth/logout", Some(&gone.token), &json!({}))
        .await;
    // A day later `stale`'s token has expired; everyone below logs in afterwards.
    api.advance(DAY_MS + 1).await;
    let alice = api.login(&new_key()).await;
    let bob_key = new_key();
    let bob = api.login(&bob_key).await;
    let mut m = Matrix::default();
    let forged = "ab".repeat(32);
    for (label, token, status, code) in [
        ("a forged token", forged.as_str(), 401, 202),
        ("a token of the wrong shape", "not-a-token", 401, 202),
        ("an expired token", stale.token.as_str(), 401, 203),
        ("a logged-out token", gone.token.as_str(), 401, 202),
    ] {
        m.row(
            &format!("{label} on GET /api/me"),
            status,
            code,
            &api.get("/api/me", Some(token)).await,
        );
        m.row(
            &format!("{label} joining the queue"),
            status,
            code,
            &api.post("/api/queue", Some(token), &json!({ "game": "sos" }))
                .await,
        );
        m.row(
            &format!("{label} on the agents' relay"),
            status,
            code,
            &api.post(
                "/api/apps/messages",
                Some(token),
                &json!({ "to": bob.address, "appId": "tic-tac-toe", "action": "propose",
                         "payload": {"seq": 0, "role": "X"} }),
            )
            .await,
        );
    }
    // Alice's token with a message signed by Bob's key: the envelope names the key, and the
    // key is not the token's.
    let app = App::TicTacToe;
    let propose = Message::decode(app, "propose", &json!({"seq":0,"role":"X"})).unwrap();
    let carol = api.login(&new_key()).await;
    let to = triad_identity::parse_address(&carol.address).unwrap();
    let by_bob = envelope::sign(bob_key.signing_key(), &to, app, &propose);
    m.row(
        "Alice's token with Bob's signed envelope",
        403,
        230,
        &api.post(
            "/api/apps/messages",
            Some(&alice.token),
            &json!({ "to": carol.address, "appId": "tic-tac-toe", "action": "propose",
                     "payload": propose.payload(app), "signed": by_bob }),
        )
        .await,
    );
    // A WebSocket upgrade with a forged token.
    let ws = reqwest::Client::new()
        .get(format!("{}/api/ws?token={forged}", api.base))
        .header("connection", "upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .send()
        .await
        .unwrap();
    let status = ws.status().as_u16();
    let body: Value = ws.json().await.unwrap_or(Value::Null);
    m.row(
        "a WebSocket opened with a forged token",
        401,
        202,
        &Resp {
            status,
            retry_after: None,
            body,
        },
    );
    m.check();
}

#[tokio::test]
async fn nobody_claims_cancels_or_forfeits_for_someone_else_nor_collects_the_reserve() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner, _) = server(dir.path()).await;
    let api = &server.api;
    let (alice, _) = funded(api, &owner, 10 * E).await;
    let (bob, _) = funded(api, &owner, 10 * E).await;
    let (carol, _) = funded(api, &owner, 10 * E).await;
    let (dave, _) = funded(api, &owner, 10 * E).await;
    // A finished game leaves something in the reserve.
    let done = api.challenge_accepted(&alice, &bob, "tic-tac-toe", E).await;
    for n in 1..=5 {
        let who = if n % 2 == 1 { &alice } else { &bob };
        api.play(who, done, nth(&TTT_TOP_ROW, n)).await;
    }
    // Alice moved last in `live` and its deadline has passed: only she may claim.
    let live = api.challenge_accepted(&alice, &bob, "tic-tac-toe", E).await;
    api.play(&alice, live, nth(&TTT_TOP_ROW, 1)).await;
    // Carol waits in the queue with a stake; Dave's challenge to Bob is open.
    let waiting = api.queue(&carol, "sos", E).await.ok()["match"]["id"]
        .as_u64()
        .unwrap();
    let open = api
        .post(
            "/api/challenges",
            Some(&dave.token),
            &json!({ "opponent": bob.address, "game": "sos", "stake": E }),
        )
        .await
        .ok()["match"]["id"]
        .as_u64()
        .unwrap();
    // Past the move deadline (60 s), not past the challenge's (10 min).
    api.advance(MOVE_TIMEOUT_MS + 1_000).await;
    let everyone = [&alice, &bob, &carol, &dave];
    let before = snapshot(api, &owner, &everyone, &[done, live, waiting, open]).await;
    let mut m = Matrix::default();
    let post = |who: &Player, path: String| {
        let token = who.token.clone();
        async move { api.post(&path, Some(&token), &json!({})).await }
    };
    m.row(
        "Carol claims Alice's timeout",
        403,
        101,
        &post(&carol, format!("/api/matches/{live}/claim-timeout")).await,
    );
    m.row(
        "Bob (to move) claims the timeout against himself",
        403,
        111,
        &post(&bob, format!("/api/matches/{live}/claim-timeout")).await,
    );
    m.row(
        "the owner claims a player's timeout",
        403,
        101,
        &post(&owner, format!("/api/matches/{live}/claim-timeout")).await,
    );
    m.row(
        "Carol forfeits Alice and Bob's game",
        403,
        101,
        &post(&carol, format!("/api/matches/{live}/forfeit")).await,
    );
    m.row(
        "Dave cancels Carol's wait in the queue",
        404,
        210,
        &api.delete("/api/queue", Some(&dave.token)).await,
    );
    m.row(
        "Alice withdraws Dave's challenge",
        403,
        101,
        &post(&alice, format!("/api/challenges/{open}/withdraw")).await,
    );
    m.row(
        "Bob (challenged) withdraws Dave's challenge",
        403,
        108,
        &post(&bob, format!("/api/challenges/{open}/withdraw")).await,
    );
    m.row(
        "Alice accepts Dave's challenge to Bob",
        403,
        108,
        &post(&alice, format!("/api/challenges/{open}/accept")).await,
    );
    m.row(
        "Alice declines Dave's challenge to Bob",
        403,
        108,
        &post(&alice, format!("/api/challenges/{open}/decline")).await,
    );
    m.row(
        "Alice accepts Carol's queue wait as a challenge",
        403,
        108,
        &post(&alice, format!("/api/challenges/{waiting}/accept")).await,
    );
    for who in [&alice, &carol] {
        m.row(
            "a player collects the reserve",
            403,
            115,
            &post(who, "/api/ledger/collect".into()).await,
        );
        m.row(
            "a player reads the reserve",
            403,
            115,
            &api.get("/api/ledger/reserve", Some(&who.token)).await,
        );
        m.row(
            "a player deposits to herself",
            403,
            115,
            &api.post(
                "/api/ledger/deposit",
                Some(&who.token),
                &json!({ "to": who.address, "amount": 1_000 * E }),
            )
            .await,
        );
    }
    m.row(
        "a player withdraws more than her balance",
        409,
        105,
        &api.post(
            "/api/ledger/withdraw",
            Some(&dave.token),
            &json!({ "amount": 100 * E }),
        )
        .await,
    );
    m.check();
    let after = snapshot(api, &owner, &everyone, &[done, live, waiting, open]).await;
    assert_eq!(after, before, "a refused attack changed something");
    // The rightful ones still may.
    api.claim(&alice, live).await.ok();
    api.advance(QUEUE_WAIT_MS).await;
    api.delete("/api/queue", Some(&carol.token)).await.ok();
    post(&dave, format!("/api/challenges/{open}/withdraw"))
        .await
        .ok();
    post(&owner, "/api/ledger/collect".into()).await.ok();
}

#[tokio::test]
async fn an_agent_cannot_speak_for_another_address() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _owner, _) = server(dir.path()).await;
    let api = &server.api;
    let alice_key = new_key();
    let alice = api.login(&alice_key).await;
    let bob_key = new_key();
    let bob = api.login(&bob_key).await;
    let mallory_key = new_key();
    let mallory = api.login(&mallory_key).await;
    let app = App::TicTacToe;
    let addr = |p: &Player| triad_identity::parse_address(&p.address).unwrap();
    let message = |action: &str, payload: Value| Message::decode(app, action, &payload).unwrap();
    let body = |to: &Player, m: &Message, signed: Option<triad_protocol::Signed>| {
        let mut b = json!({ "to": to.address, "appId": app.id(), "action": m.action().id(),
                            "payload": m.payload(app) });
        if let Some(s) = signed {
            b["signed"] = serde_json::to_value(s).unwrap();
        }
        b
    };
    let relay = |who: &Player, b: Value| {
        let token = who.token.clone();
        async move { api.post("/api/apps/messages", Some(&token), &b).await }
    };
    // Alice and Bob start a game: Alice proposes as X, Bob accepts as O, Alice moves.
    let propose = message("propose", json!({"seq":0,"role":"X","gameId":"g1"}));
    let signed = envelope::sign(alice_key.signing_key(), &addr(&bob), app, &propose);
    relay(&alice, body(&bob, &propose, Some(signed.clone())))
        .await
        .ok();
    let accept = message("accept", json!({"seq":0,"role":"O","gameId":"g1"}));
    relay(&bob, body(&alice, &accept, None)).await.ok();
    let board = |cells: [&str; 9]| json!(cells);
    let first = message(
        "move",
        json!({"seq":1,"replyTo":0,"position":4,"mark":"X","gameId":"g1",
               "board": board(["","","","","X","","","",""])}),
    );
    let first_signed = envelope::sign(alice_key.signing_key(), &addr(&bob), app, &first);
    relay(&alice, body(&bob, &first, Some(first_signed.clone())))
        .await
        .ok();
    let inbox_before = api.get("/api/apps/inbox", Some(&bob.token)).await.ok();

    let mut m = Matrix::default();
    let mut spoof = body(&bob, &propose, None);
    spoof["from"] = json!(alice.address);
    m.row(
        "Mallory names Alice as the sender",
        400,
        200,
        &relay(&mallory, spoof).await,
    );
    m.row(
        "Mallory relays Alice's signed proposal as her own",
        403,
        230,
        &relay(&mallory, body(&bob, &propose, Some(signed.clone()))).await,
    );
    let forged = envelope::sign(mallory_key.signing_key(), &addr(&bob), app, &first);
    m.row(
        "Alice sends her move under an envelope signed by Mallory",
        403,
        230,
        &relay(&alice, body(&bob, &first, Some(forged))).await,
    );
    let reply = message(
        "move",
        json!({"seq":2,"replyTo":1,"position":0,"mark":"O","gameId":"g1",
               "board": board(["O","","","","X","","","",""])}),
    );
    m.row(
        "Mallory makes Bob's move in Alice and Bob's game",
        404,
        232,
        &relay(&mallory, body(&alice, &reply, None)).await,
    );
    m.row(
        "Alice makes Bob's move (his mark, her token)",
        409,
        2,
        &relay(&alice, body(&bob, &reply, None)).await,
    );
    let retargeted = envelope::sign(alice_key.signing_key(), &addr(&bob), app, &first);
    m.row(
        "Alice's signed move replayed to Mallory",
        403,
        230,
        &relay(&alice, body(&mallory, &first, Some(retargeted))).await,
    );
    // A2A: the computer's agent endpoint acts for the token's address only.
    let rpc = json!({"jsonrpc":"2.0","id":1,"method":"message/send","params":{}});
    for (label, token, code) in [
        ("A2A without a token", None, 201),
        ("A2A with a forged token", Some("cd".repeat(32)), 202),
    ] {
        let r = api.post("/a2a", token.as_deref(), &rpc).await;
        // A JSON-RPC error: Triad's error is its `data`.
        let body = r.body["error"]["data"].clone();
        m.row(
            label,
            401,
            code,
            &Resp {
                status: r.status,
                retry_after: None,
                body,
            },
        );
    }
    m.check();
    let inbox_after = api.get("/api/apps/inbox", Some(&bob.token)).await.ok();
    assert_eq!(inbox_after, inbox_before, "a refused message reached Bob");
}

/// `HOSTILE_ROUNDS`, or 200 under `TRIAD_SOAK=1`, else 10.
fn rounds() -> usize {
    if let Some(n) = std::env::var("HOSTILE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    if std::env::var("TRIAD_SOAK").is_ok_and(|v| v == "1") {
        200
    } else {
        10
    }
}

/// What is held in escrow: a waiting match holds its host's stake, a started one both.
async fn escrow(api: &Api, matches: &[u64]) -> u64 {
    let mut held = 0;
    for id in matches {
        let m = api.match_(*id).await;
        let stake = amount(&m["stake"]);
        held += match m["phase"].as_str() {
            Some("waiting") => stake,
            Some("ready" | "in_progress") => 2 * stake,
            _ => 0,
        };
    }
    held
}

/// Deposited minus withdrawn is everything held: balances, the reserve and the escrows.
async fn assert_conserved(api: &Api, owner: &Player, players: &[Player], matches: &[u64]) {
    let (reserve, deposited, withdrawn) = api.reserve(owner).await;
    let mut held = api.balance(owner).await;
    for p in players {
        held += api.balance(p).await;
    }
    let escrow = escrow(api, matches).await;
    assert_eq!(
        deposited - withdrawn,
        held + reserve + escrow,
        "money appeared or vanished: deposited {deposited}, withdrawn {withdrawn}, balances {held}, reserve {reserve}, escrow {escrow}"
    );
}

/// Successes among concurrent responses; every refusal must be one of `refusals`.
#[track_caller]
fn successes(what: &str, responses: &[Resp], refusals: &[u64]) -> usize {
    let mut ok = 0;
    for r in responses {
        if (200..300).contains(&r.status) {
            ok += 1;
        } else {
            let code = r.body["code"].as_u64().unwrap_or(u64::MAX);
            assert!(
                refusals.contains(&code),
                "{what}: unexpected refusal {} {}",
                r.status,
                r.body
            );
        }
    }
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_joins_claims_and_withdrawals_never_spend_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner, _) = server(dir.path()).await;
    let api = server.api.clone();
    let mut players: Vec<Player> = Vec::new();
    let mut matches: Vec<u64> = Vec::new();
    let stake = E;
    let tries = 6;
    for round in 0..rounds() {
        // Two players with exactly one stake each fire joins (tic-tac-toe and SOS) and
        // withdrawals of everything at once: at most one of them can be paid for.
        let (a, _) = funded(&api, &owner, stake).await;
        let (b, _) = funded(&api, &owner, stake).await;
        let mut calls = Vec::new();
        for p in [&a, &b] {
            for i in 0..tries {
                let api = api.clone();
                let token = p.token.clone();
                calls.push(tokio::spawn(async move {
                    match i % 3 {
                        0 => {
                            send(
                                &api,
                                Method::POST,
                                "/api/queue",
                                Some(&token),
                                &json!({ "game": "tic-tac-toe", "stake": stake }),
                            )
                            .await
                        }
                        1 => {
                            send(
                                &api,
                                Method::POST,
                                "/api/queue",
                                Some(&token),
                                &json!({ "game": "sos", "stake": stake }),
                            )
                            .await
                        }
                        _ => {
                            send(
                                &api,
                                Method::POST,
                                "/api/ledger/withdraw",
                                Some(&token),
                                &json!({ "amount": stake }),
                            )
                            .await
                        }
                    }
                }));
            }
        }
        let mut responses = Vec::new();
        for c in calls {
            responses.push(c.await.unwrap());
        }
        for r in &responses {
            if let Some(id) = r.body["match"]["id"].as_u64() {
                matches.push(id);
            }
        }
        let (ra, rb) = responses.split_at(tries);
        // 102 already in a match, 105 insufficient balance.
        for (who, rs) in [("a", ra), ("b", rb)] {
            let ok = successes(
                &format!("round {round}: {who}'s joins and withdrawals"),
                rs,
                &[102, 105],
            );
            assert!(ok <= 1, "round {round}: {who} spent one stake {ok} times");
        }
        players.push(a.clone());
        players.push(b.clone());
        matches.sort_unstable();
        matches.dedup();
        assert_conserved(&api, &owner, &players, &matches).await;

        // A match past its deadline: the last mover claims it many times at once, and
        // the other forfeits at the same moment: exactly one of them settles it.
        let (c, _) = funded(&api, &owner, stake).await;
        let (d, _) = funded(&api, &owner, stake).await;
        let id = api.challenge_accepted(&c, &d, "tic-tac-toe", stake).await;
        matches.push(id);
        api.play(&c, id, nth(&TTT_TOP_ROW, 1)).await;
        api.advance(MOVE_TIMEOUT_MS + 1_000).await;
        let mut calls = Vec::new();
        for i in 0..tries {
            let api = api.clone();
            let (c, d) = (c.token.clone(), d.token.clone());
            calls.push(tokio::spawn(async move {
                if i == 0 {
                    send(
                        &api,
                        Method::POST,
                        &format!("/api/matches/{id}/forfeit"),
                        Some(&d),
                        &json!({}),
                    )
                    .await
                } else {
                    send(
                        &api,
                        Method::POST,
                        &format!("/api/matches/{id}/claim-timeout"),
                        Some(&c),
                        &json!({}),
                    )
                    .await
                }
            }));
        }
        let mut responses = Vec::new();
        for call in calls {
            responses.push(call.await.unwrap());
        }
        // 0 game over: it was settled by the one that won the race.
        let ok = successes(&format!("round {round}: claims"), &responses, &[0]);
        assert_eq!(ok, 1, "round {round}: the match was settled {ok} times");
        players.push(c);
        players.push(d);

        // The owner collects the reserve many times at once: it is paid once.
        let mut calls = Vec::new();
        for _ in 0..tries {
            let api = api.clone();
            let token = owner.token.clone();
            calls.push(tokio::spawn(async move {
                send(
                    &api,
                    Method::POST,
                    "/api/ledger/collect",
                    Some(&token),
                    &json!({}),
                )
                .await
            }));
        }
        let mut responses = Vec::new();
        for call in calls {
            responses.push(call.await.unwrap());
        }
        let ok = successes(&format!("round {round}: collects"), &responses, &[121]);
        assert_eq!(ok, 1, "round {round}: the reserve was collected {ok} times");
        assert_conserved(&api, &owner, &players, &matches).await;
    }
    println!(
        "{} rounds, {} players, {} matches: balances, reserve and escrow sum to deposits minus withdrawals",
        rounds(),
        players.len(),
        matches.len()
    );
}
