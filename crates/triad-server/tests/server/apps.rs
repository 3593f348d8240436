//! The agents' relay and referee (the A2A tic-tac-toe protocol's app messages), and A2A for
//! the computer: the protocol's example game message for message, every refusal with its stable
//! code, resends, signatures, the long-poll inbox, games recorded through the engine, and fault
//! injection against the relay.

use std::time::Duration;

use rand::{RngExt, SeedableRng, seq::SliceRandom};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use triad_protocol::{App, Ending, Game, Message, ProtocolError, Side, Step, envelope};
use triad_server::api::error::{Api, ApiError};

use crate::common::{Resp, Server, User};

/// The A2A tic-tac-toe protocol's example game (see `testdata/README.md`).
const SPEC: &str = include_str!("../../../../testdata/a2a-tic-tac-toe.md");

async fn send(
    server: &Server,
    from: &User,
    to: &User,
    app: &str,
    action: &str,
    payload: &Value,
) -> Resp {
    server
        .post("/api/apps/messages")
        .auth(from)
        .json(&json!({ "to": to.address, "appId": app, "action": action, "payload": payload }))
        .send()
        .await
}

/// `from` proposes a game of `app` to `to`, taking `role`; the match it made.
async fn propose(server: &Server, from: &User, to: &User, app: &str, role: &str) -> u64 {
    send(
        server,
        from,
        to,
        app,
        "propose",
        &json!({"seq":0,"role":role}),
    )
    .await
    .expect(201)["matchId"]
        .as_u64()
        .unwrap()
}

/// Sends a protocol message; the response.
async fn relay(server: &Server, from: &User, to: &User, app: App, message: &Message) -> Resp {
    send(
        server,
        from,
        to,
        app.id(),
        message.action().id(),
        &message.payload(app),
    )
    .await
}

async fn inbox(server: &Server, user: &User, after: u64) -> Vec<Value> {
    let r = server
        .get(&format!("/api/apps/inbox?after={after}"))
        .auth(user)
        .send()
        .await;
    r.expect(200)["messages"].as_array().unwrap().clone()
}

async fn stats(server: &Server, user: &User) -> (u64, u64, u64) {
    let r = server
        .get(&format!("/api/players/{}", user.address))
        .send()
        .await;
    let s = r.expect(200);
    (
        s["wins"].as_u64().unwrap(),
        s["games"].as_u64().unwrap(),
        s["draws"].as_u64().unwrap(),
    )
}

/// The protocol's example game: `(sender, action, payload)` for each `reef apps send`.
fn spec_example() -> Vec<(String, String, String)> {
    let text = SPEC;
    let example = &text[text.find("## Example Game").unwrap()..];
    example
        .lines()
        .filter_map(|line| {
            let at = line.find("reef apps send ")?;
            let from = line[..at].split('→').next()?.trim().to_owned();
            let words: Vec<&str> = line[at..].split_whitespace().collect();
            let start = line.find("--payload '")? + "--payload '".len();
            let end = line[start..].find('\'')? + start;
            Some((from, words[5].to_owned(), line[start..end].to_owned()))
        })
        .collect()
}

/// `["","X",…]` → `-X…`.
fn board_text(board: &Value) -> String {
    board
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().chars().next().unwrap_or('-'))
        .collect()
}

#[tokio::test]
async fn the_protocols_example_game_is_relayed_message_for_message_and_recorded() {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    let script = spec_example();
    assert_eq!(script.len(), 8);
    let mut cursors = [0u64, 0u64];
    let mut match_id = 0;
    for (who, action, payload) in &script {
        let (from, to, reader) = if who == "Alice" {
            (&alice, &bob, 1)
        } else {
            (&bob, &alice, 0)
        };
        let text = payload;
        let payload: Value = serde_json::from_str(payload).unwrap();
        let r = send(&server, from, to, "tic-tac-toe", action, &payload).await;
        let body = r.expect(201).clone();
        assert_eq!(body["duplicate"], false);
        match_id = body["matchId"].as_u64().unwrap();
        // Delivered to the other player exactly as sent, in order.
        let reader_user = if reader == 0 { &alice } else { &bob };
        let delivered = inbox(&server, reader_user, cursors[reader]).await;
        assert_eq!(delivered.len(), 1, "{action}: {delivered:?}");
        let m = &delivered[0];
        assert_eq!(
            (m["from"].as_str(), m["to"].as_str()),
            (Some(from.address.as_str()), Some(to.address.as_str()))
        );
        assert_eq!(
            (m["appId"].as_str(), m["action"].as_str()),
            (Some("tic-tac-toe"), Some(action.as_str()))
        );
        assert_eq!(m["payload"], payload);
        assert_eq!(m["matchId"].as_u64(), Some(match_id));
        // Byte for byte, in the specification's field order.
        let raw = server
            .get(&format!("/api/apps/inbox?after={}", cursors[reader]))
            .auth(reader_user)
            .send()
            .await;
        assert!(
            raw.text.contains(&format!("\"payload\":{text}")),
            "{}",
            raw.text
        );
        cursors[reader] = m["id"].as_u64().unwrap();
        // The referee's board is the move's board after every move.
        if action == "move" {
            assert_eq!(
                body["match"]["board"].as_str().unwrap(),
                board_text(&payload["board"])
            );
        }
    }
    let view = server.match_(match_id).await;
    assert_eq!(view["origin"], "challenge");
    assert_eq!(view["stake"], "0");
    assert_eq!(view["outcome"]["reason"], "win");
    assert_eq!(view["outcome"]["winner_address"], alice.address.as_str());
    assert_eq!(view["outcome"]["cells"], json!([0, 4, 8]));
    // The hall of fame and the ratings, from the engine's events.
    assert_eq!(stats(&server, &alice).await, (1, 1, 0));
    assert_eq!(stats(&server, &bob).await, (0, 1, 0));
    let board = server.get("/api/leaderboard?by=wins").send().await;
    assert_eq!(
        board.expect(200)["players"][0]["address"],
        alice.address.as_str()
    );
}

#[tokio::test]
async fn every_protocol_error_is_an_api_error_with_the_same_code_and_name() {
    for e in ProtocolError::all() {
        let api = ApiError::from(e.clone());
        assert_eq!(
            (api.body.code, api.body.error),
            (e.code(), e.name()),
            "{e:?}"
        );
        assert_eq!(api.body.message, e.to_string());
    }
    let codes: Vec<u16> = Api::ALL.iter().map(|a| a.describe().0).collect();
    for code in 220..=233 {
        assert!(codes.contains(&code), "API code {code} is defined");
    }
}

#[tokio::test]
async fn what_the_rules_refuse_is_refused_to_the_sender_with_the_reason_and_never_delivered() {
    let server = Server::start().await;
    let (alice, bob, carol) = (
        server.user().await,
        server.user().await,
        server.user().await,
    );
    let ttt = "tic-tac-toe";
    // Malformed messages.
    send(
        &server,
        &alice,
        &bob,
        "chess",
        "propose",
        &json!({"seq":0,"role":"X"}),
    )
    .await
    .expect_error(422, 220, "unknown_app");
    send(&server, &alice, &bob, ttt, "resign", &json!({}))
        .await
        .expect_error(422, 221, "unknown_action");
    let r = send(
        &server,
        &alice,
        &bob,
        ttt,
        "propose",
        &json!({"seq":0,"role":"Z"}),
    )
    .await;
    r.expect_error(422, 222, "invalid_payload");
    assert!(r.body["message"].as_str().unwrap().contains("role"));
    send(
        &server,
        &alice,
        &alice,
        ttt,
        "propose",
        &json!({"seq":0,"role":"X"}),
    )
    .await
    .expect_error(422, 104, "self_play");
    server
        .post("/api/apps/messages")
        .auth(&alice)
        .json(&json!({"to": "0x12", "appId": ttt, "action": "propose", "payload": {"seq":0,"role":"X"}}))
        .send()
        .await
        .expect_error(400, 211, "invalid_address");
    // No game yet.
    send(
        &server,
        &alice,
        &bob,
        ttt,
        "move",
        &json!({"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}),
    )
    .await
    .expect_error(404, 232, "no_game");
    send(
        &server,
        &bob,
        &alice,
        ttt,
        "accept",
        &json!({"seq":0,"role":"O"}),
    )
    .await
    .expect_error(404, 232, "no_game");

    send(
        &server,
        &alice,
        &bob,
        ttt,
        "propose",
        &json!({"seq":0,"role":"X"}),
    )
    .await
    .expect(201);
    // Before the acceptance: no move; the acceptance takes the remaining role; only Bob accepts.
    send(
        &server,
        &alice,
        &bob,
        ttt,
        "move",
        &json!({"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}),
    )
    .await
    .expect_error(409, 224, "out_of_turn");
    send(
        &server,
        &bob,
        &alice,
        ttt,
        "accept",
        &json!({"seq":0,"role":"X"}),
    )
    .await
    .expect_error(409, 228, "role_conflict");
    send(
        &server,
        &alice,
        &bob,
        ttt,
        "accept",
        &json!({"seq":0,"role":"O"}),
    )
    .await
    .expect_error(409, 224, "out_of_turn");
    send(
        &server,
        &carol,
        &alice,
        ttt,
        "accept",
        &json!({"seq":0,"role":"O"}),
    )
    .await
    .expect_error(404, 232, "no_game");
    send(
        &server,
        &bob,
        &alice,
        ttt,
        "accept",
        &json!({"seq":0,"role":"O"}),
    )
    .await
    .expect(201);

    // Moves the referee refuses, each with its reason.
    let x_move = |board: Value, seq: u8, reply: u8, position: u8, mark: &str| json!({"seq": seq, "replyTo": reply, "position": position, "mark": mark, "board": board});
    let centre = json!(["", "", "", "", "X", "", "", "", ""]);
    for (from, payload, status, code, name) in [
        (
            &bob,
            x_move(json!(["", "", "", "", "O", "", "", "", ""]), 1, 0, 4, "O"),
            409,
            2,
            "not_your_turn",
        ),
        (
            &alice,
            x_move(json!(["", "", "", "", "O", "", "", "", ""]), 1, 0, 4, "O"),
            422,
            5,
            "not_your_mark",
        ),
        (
            &alice,
            x_move(centre.clone(), 2, 1, 4, "X"),
            409,
            225,
            "seq_mismatch",
        ),
        (
            &alice,
            x_move(json!(["X", "", "", "", "X", "", "", "", ""]), 1, 0, 4, "X"),
            409,
            223,
            "state_conflict",
        ),
        (
            &alice,
            x_move(centre.clone(), 1, 3, 4, "X"),
            409,
            226,
            "reply_to_mismatch",
        ),
        (
            &alice,
            x_move(centre.clone(), 1, 0, 9, "X"),
            422,
            1,
            "invalid_position",
        ),
        (
            &alice,
            x_move(centre.clone(), 1, 0, 4, "S"),
            422,
            4,
            "mark_not_in_game",
        ),
    ] {
        let to = if from.address == alice.address {
            &bob
        } else {
            &alice
        };
        let r = send(&server, from, to, ttt, "move", &payload).await;
        r.expect_error(status, code, name);
    }
    // A declaration the board contradicts.
    send(
        &server,
        &alice,
        &bob,
        ttt,
        "result",
        &json!({"outcome":"win","winner":"X"}),
    )
    .await
    .expect_error(409, 227, "result_mismatch");
    // The right move goes through; then the cell is taken.
    send(
        &server,
        &alice,
        &bob,
        ttt,
        "move",
        &x_move(centre.clone(), 1, 0, 4, "X"),
    )
    .await
    .expect(201);
    send(
        &server,
        &bob,
        &alice,
        ttt,
        "move",
        &x_move(json!(["", "", "", "", "O", "", "", "", ""]), 2, 1, 4, "O"),
    )
    .await
    .expect_error(409, 3, "cell_occupied");
    // Nothing refused was delivered: Bob has the proposal and the move, Alice the acceptance.
    let to_bob: Vec<String> = inbox(&server, &bob, 0)
        .await
        .iter()
        .map(|m| m["action"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(to_bob, ["propose", "move"]);
    let to_alice: Vec<String> = inbox(&server, &alice, 0)
        .await
        .iter()
        .map(|m| m["action"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(to_alice, ["accept"]);
    assert!(inbox(&server, &carol, 0).await.is_empty());
}

#[tokio::test]
async fn a_resend_is_answered_as_a_duplicate_and_delivered_once() {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    let ttt = "tic-tac-toe";
    let propose = json!({"seq":0,"role":"X","gameId":"g1"});
    let first = send(&server, &alice, &bob, ttt, "propose", &propose)
        .await
        .expect(201)
        .clone();
    let again = send(&server, &alice, &bob, ttt, "propose", &propose)
        .await
        .expect(200)
        .clone();
    assert_eq!(again["duplicate"], true);
    assert_eq!(again["id"], first["id"]);
    // Bob cannot propose another game under the same id.
    send(
        &server,
        &bob,
        &alice,
        ttt,
        "propose",
        &json!({"seq":0,"role":"O","gameId":"g1"}),
    )
    .await
    .expect_error(409, 233, "game_id_taken");
    send(
        &server,
        &bob,
        &alice,
        ttt,
        "accept",
        &json!({"seq":0,"role":"O","gameId":"g1"}),
    )
    .await
    .expect(201);
    send(
        &server,
        &bob,
        &alice,
        ttt,
        "accept",
        &json!({"seq":0,"role":"O","gameId":"g1"}),
    )
    .await
    .expect(200);
    let mv = json!({"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""],"gameId":"g1"});
    send(&server, &alice, &bob, ttt, "move", &mv)
        .await
        .expect(201);
    let r = send(&server, &alice, &bob, ttt, "move", &mv).await;
    assert_eq!(r.expect(200)["duplicate"], true);
    // A "resend" whose board differs is not the same message: refused, not delivered.
    let mut tampered = mv.clone();
    tampered["board"][0] = json!("X");
    send(&server, &alice, &bob, ttt, "move", &tampered)
        .await
        .expect_error(409, 223, "state_conflict");
    let delivered = inbox(&server, &bob, 0).await;
    assert_eq!(delivered.len(), 2, "{delivered:?}");
    // The gameId names this game: another game of the two needs another id, and a message
    // of this game must carry it.
    send(&server, &bob, &alice, ttt, "move", &json!({"seq":2,"replyTo":1,"position":0,"mark":"O","board":["O","","","","X","","","",""]}))
        .await
        .expect_error(409, 229, "game_id_mismatch");
    send(&server, &bob, &alice, ttt, "move", &json!({"seq":2,"replyTo":1,"position":0,"mark":"O","board":["O","","","","X","","","",""],"gameId":"g2"}))
        .await
        .expect_error(404, 232, "no_game");
}

#[tokio::test]
async fn the_same_two_agents_play_several_games_and_an_old_game_id_is_taken() {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    let app = App::TicTacToe;
    for (n, id) in ["a", "b", "c"].iter().enumerate() {
        let game_id = triad_protocol::GameId::new(id).unwrap();
        let (x, o) = if n % 2 == 0 {
            (&alice, &bob)
        } else {
            (&bob, &alice)
        };
        let (mut gx, propose) = Game::propose(app, triad_rules::Player::First, Some(game_id));
        relay(&server, x, o, app, &propose).await.expect(201);
        let Message::Propose(p) = &propose else {
            unreachable!()
        };
        let (mut go, accept) = Game::accept(app, p);
        relay(&server, o, x, app, &accept).await.expect(201);
        gx.receive(&accept).unwrap();
        // X: 4, 8, 1, 6, 5; O: 0, 2, 7, 3: a draw.
        for (i, cell) in [4, 0, 8, 2, 1, 7, 6, 3, 5].into_iter().enumerate() {
            let (mover, other, from, to) = if i % 2 == 0 {
                (&mut gx, &mut go, x, o)
            } else {
                (&mut go, &mut gx, o, x)
            };
            let mark = if i % 2 == 0 {
                triad_rules::Mark::X
            } else {
                triad_rules::Mark::O
            };
            for m in mover.play(cell, mark).unwrap() {
                relay(&server, from, to, app, &m).await.expect(201);
                other.receive(&m).unwrap();
            }
        }
        assert_eq!(gx.ending(), Some(&Ending::Draw));
        assert!(go.is_settled());
    }
    assert_eq!(stats(&server, &alice).await, (0, 3, 3));
    // Game "a" is over: its id cannot start another game.
    send(
        &server,
        &alice,
        &bob,
        "tic-tac-toe",
        "propose",
        &json!({"seq":0,"role":"X","gameId":"a"}),
    )
    .await
    .expect_error(409, 233, "game_id_taken");
}

#[tokio::test]
async fn signed_envelopes_are_checked_and_delivered() {
    let server = Server::start().await;
    let (alice, bob, mallory) = (
        server.user().await,
        server.user().await,
        server.user().await,
    );
    let app = App::TicTacToe;
    let propose = Message::decode(app, "propose", &json!({"seq":0,"role":"X"})).unwrap();
    let address = |u: &User| triad_identity::parse_address(&u.address).unwrap();
    let body = |signed: triad_protocol::Signed| {
        json!({"to": bob.address, "appId": "tic-tac-toe", "action": "propose",
               "payload": propose.payload(app), "signed": signed})
    };
    // Signed by another key than the sender's: refused.
    let by_mallory = envelope::sign(&mallory.key, &address(&bob), app, &propose);
    let r = server
        .post("/api/apps/messages")
        .auth(&alice)
        .json(&body(by_mallory))
        .send()
        .await;
    r.expect_error(403, 230, "bad_envelope");
    // Signed for another recipient: refused.
    let for_mallory = envelope::sign(&alice.key, &address(&mallory), app, &propose);
    let r = server
        .post("/api/apps/messages")
        .auth(&alice)
        .json(&body(for_mallory))
        .send()
        .await;
    r.expect_error(403, 230, "bad_envelope");
    // Alice's own signature: relayed with the message, and Bob can check it himself.
    let signed = envelope::sign(&alice.key, &address(&bob), app, &propose);
    server
        .post("/api/apps/messages")
        .auth(&alice)
        .json(&body(signed.clone()))
        .send()
        .await
        .expect(201);
    let delivered = inbox(&server, &bob, 0).await;
    assert_eq!(delivered.len(), 1);
    let got: triad_protocol::Signed =
        serde_json::from_value(delivered[0]["signed"].clone()).unwrap();
    assert_eq!(got, signed);
    let decoded = Message::decode(app, "propose", &delivered[0]["payload"]).unwrap();
    envelope::verify(&got, &address(&alice), &address(&bob), app, &decoded).unwrap();
}

#[tokio::test]
async fn the_inbox_is_read_in_order_from_a_cursor_and_long_polls() {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    // Nothing yet: a long poll waits, then answers empty with the same cursor.
    let started = std::time::Instant::now();
    let r = server
        .get("/api/apps/inbox?after=0&wait_ms=300")
        .auth(&bob)
        .send()
        .await;
    assert!(started.elapsed() >= Duration::from_millis(250));
    assert_eq!(
        r.expect(200).clone(),
        json!({"messages": [], "nextAfter": 0})
    );
    // A waiting poll wakes when a message arrives.
    let poll = async {
        server
            .get("/api/apps/inbox?after=0&wait_ms=20000")
            .auth(&bob)
            .send()
            .await
    };
    let post = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        send(
            &server,
            &alice,
            &bob,
            "sos",
            "propose",
            &json!({"seq":0,"role":"first"}),
        )
        .await
    };
    let started = std::time::Instant::now();
    let (r, sent) = tokio::join!(poll, post);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "woken, not timed out"
    );
    let page = r.expect(200).clone();
    let id = sent.expect(201)["id"].as_u64().unwrap();
    assert_eq!(page["messages"][0]["id"].as_u64(), Some(id));
    assert_eq!(page["nextAfter"].as_u64(), Some(id));
    assert_eq!(
        page["messages"][0]["payload"],
        json!({"seq":0,"role":"first"})
    );
    // From the cursor: nothing more; from 0: the same message again (at least once).
    assert!(inbox(&server, &bob, id).await.is_empty());
    assert_eq!(inbox(&server, &bob, 0).await.len(), 1);
    // Other inboxes see nothing, and the inbox needs a login.
    assert!(inbox(&server, &alice, 0).await.is_empty());
    server
        .get("/api/apps/inbox")
        .send()
        .await
        .expect_error(401, 201, "unauthorized");
    server
        .get("/api/apps/inbox?limit=0")
        .auth(&bob)
        .send()
        .await
        .expect_error(400, 215, "invalid_parameter");
    // The manifest.
    let m = server.get("/api/apps/sos/manifest").send().await;
    assert_eq!(m.expect(200)["version"], "0.3.0");
    server
        .get("/api/apps/go/manifest")
        .send()
        .await
        .expect_error(422, 220, "unknown_app");
}

#[tokio::test]
async fn aborts_are_recorded_as_aborts_not_results() {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    let ttt = "tic-tac-toe";
    let abort = json!({"outcome":"abort","reason":"state-conflict"});
    // Declined before the acceptance.
    let id = propose(&server, &alice, &bob, ttt, "O").await;
    send(&server, &bob, &alice, ttt, "result", &abort)
        .await
        .expect(201);
    assert_eq!(server.match_(id).await["outcome"]["reason"], "declined");
    // Withdrawn by the proposer.
    let id = propose(&server, &alice, &bob, ttt, "O").await;
    send(&server, &alice, &bob, ttt, "result", &abort)
        .await
        .expect(201);
    assert_eq!(server.match_(id).await["outcome"]["reason"], "cancelled");
    // Aborted in play: no winner, no stats; a second abort is a resend.
    let id = propose(&server, &alice, &bob, ttt, "X").await;
    send(
        &server,
        &bob,
        &alice,
        ttt,
        "accept",
        &json!({"seq":0,"role":"O"}),
    )
    .await
    .expect(201);
    send(
        &server,
        &alice,
        &bob,
        ttt,
        "move",
        &json!({"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}),
    )
    .await
    .expect(201);
    send(&server, &bob, &alice, ttt, "result", &abort)
        .await
        .expect(201);
    let view = server.match_(id).await;
    assert_eq!(
        (
            view["outcome"]["reason"].as_str(),
            view["outcome"]["winner"].as_str()
        ),
        (Some("aborted"), None)
    );
    assert_eq!(
        send(&server, &bob, &alice, ttt, "result", &abort)
            .await
            .expect(200)["duplicate"],
        true
    );
    // Alice may abort too (a crossed abort): relayed, nothing more to end.
    send(&server, &alice, &bob, ttt, "result", &abort)
        .await
        .expect(201);
    assert_eq!(stats(&server, &alice).await, (0, 0, 0));
    assert_eq!(stats(&server, &bob).await, (0, 0, 0));
    // A finished game cannot be aborted to undo it.
    let id = propose(&server, &alice, &bob, ttt, "X").await;
    send(
        &server,
        &bob,
        &alice,
        ttt,
        "accept",
        &json!({"seq":0,"role":"O"}),
    )
    .await
    .expect(201);
    for (i, (cell, board)) in [
        (0, json!(["X", "", "", "", "", "", "", "", ""])),
        (3, json!(["X", "", "", "O", "", "", "", "", ""])),
        (1, json!(["X", "X", "", "O", "", "", "", "", ""])),
        (4, json!(["X", "X", "", "O", "O", "", "", "", ""])),
        (2, json!(["X", "X", "X", "O", "O", "", "", "", ""])),
    ]
    .into_iter()
    .enumerate()
    {
        let (from, to, mark) = if i % 2 == 0 {
            (&alice, &bob, "X")
        } else {
            (&bob, &alice, "O")
        };
        let seq = i + 1;
        send(
            &server,
            from,
            to,
            ttt,
            "move",
            &json!({"seq": seq, "replyTo": i, "position": cell, "mark": mark, "board": board}),
        )
        .await
        .expect(201);
    }
    send(&server, &bob, &alice, ttt, "result", &abort)
        .await
        .expect_error(409, 0, "game_over");
    send(
        &server,
        &bob,
        &alice,
        ttt,
        "result",
        &json!({"outcome":"win","winner":"O"}),
    )
    .await
    .expect_error(409, 227, "result_mismatch");
    send(
        &server,
        &alice,
        &bob,
        ttt,
        "result",
        &json!({"outcome":"win","winner":"X"}),
    )
    .await
    .expect(201);
    assert_eq!(server.match_(id).await["outcome"]["reason"], "win");
    assert_eq!(stats(&server, &alice).await, (1, 1, 0));
}

// ----- fault injection against the relay --------------------------------------------------

#[derive(Copy, Clone, Debug, Default)]
struct Faults {
    /// Every message is sent twice (the relay answers the resend as a duplicate) and every
    /// delivery is read twice.
    duplicate: bool,
    /// The messages read in one batch are handled in a random order.
    reorder: bool,
    /// Now and then a reader loses its place and reads again from an earlier message.
    redeliver: bool,
    /// One move's board is changed between the relay and its reader.
    tamper: bool,
}

struct Peer {
    user: User,
    game: Option<Game>,
    cursor: u64,
    /// The highest message id read so far.
    seen: u64,
    /// Where the current game's messages begin: re-reads never go back past it.
    game_start: u64,
}

/// One game between two in-process agents through the relay; returns the two endings and
/// the match id.
async fn relayed_game(
    server: &Server,
    sides: &mut [Peer; 2],
    app: App,
    number: u32,
    faults: Faults,
    rng: &mut ChaCha8Rng,
) -> ([Option<Ending>; 2], u64, Option<usize>) {
    let game_id = triad_protocol::GameId::new(&format!("r{number}")).unwrap();
    let role = if rng.random_bool(0.5) {
        triad_rules::Player::First
    } else {
        triad_rules::Player::Second
    };
    let (game, propose) = Game::propose(app, role, Some(game_id));
    sides[0].game = Some(game);
    sides[1].game = None;
    for side in sides.iter_mut() {
        side.cursor = side.seen;
        side.game_start = side.seen;
    }
    let mut match_id = 0;
    let mut outbox: Vec<(usize, Message)> = vec![(0, propose)];
    let mut tamper_at = faults
        .tamper
        .then(|| rng.random_range(1..=if app == App::TicTacToe { 4 } else { 2 }));
    let mut moves_delivered = 0;
    let mut victim = None;
    let mut seen_before = [sides[0].seen, sides[1].seen];
    for _round in 0..200 {
        // Send what each side produced.
        for (from, message) in outbox.drain(..) {
            let (sender, recipient) = (&sides[from].user, &sides[1 - from].user);
            let r = relay(server, sender, recipient, app, &message).await;
            let body = r.expect(201).clone();
            match_id = body["matchId"].as_u64().unwrap();
            if faults.duplicate {
                let again = relay(server, sender, recipient, app, &message).await;
                assert_eq!(again.expect(200)["duplicate"], true);
            }
        }
        if sides
            .iter()
            .all(|s| s.game.as_ref().is_some_and(|g| g.is_settled()))
        {
            break;
        }
        // Each side reads its inbox, with the faults, and answers.
        for me in 0..2 {
            let batch = inbox(server, &sides[me].user, sides[me].cursor).await;
            if let Some(last) = batch.last() {
                let id = last["id"].as_u64().unwrap();
                sides[me].cursor = id;
                sides[me].seen = sides[me].seen.max(id);
            }
            let fresh: Vec<bool> = batch
                .iter()
                .map(|m| m["id"].as_u64().unwrap() > seen_before[me])
                .collect();
            seen_before[me] = sides[me].seen;
            if faults.redeliver && rng.random_bool(0.3) {
                // Lost the place: the next read starts earlier, so these come again.
                let back = rng.random_range(sides[me].game_start..=sides[me].cursor);
                sides[me].cursor = back;
            }
            // Each delivery with whether it is its message's first.
            let mut batch: Vec<(Value, bool)> = batch.into_iter().zip(fresh).collect();
            if faults.duplicate {
                batch = batch
                    .into_iter()
                    .flat_map(|(m, first)| [(m.clone(), first), (m, false)])
                    .collect();
            }
            if faults.reorder {
                batch.shuffle(rng);
            }
            for (delivered, first) in batch {
                let mut message = Message::decode(
                    app,
                    delivered["action"].as_str().unwrap(),
                    &delivered["payload"],
                )
                .unwrap();
                if let (Message::Move(m), true) = (&mut message, first) {
                    moves_delivered += 1;
                    if tamper_at == Some(moves_delivered) {
                        tamper_at = None;
                        victim = Some(me);
                        let cell = (usize::from(m.position.index()) + 1) % 9;
                        m.board[cell] = if m.board[cell].is_some() {
                            None
                        } else {
                            Some(m.mark)
                        };
                    }
                }
                let side = &mut sides[me];
                match (&mut side.game, &message) {
                    (slot @ None, Message::Propose(p)) => {
                        let (game, accept) = Game::accept(app, p);
                        *slot = Some(game);
                        outbox.push((me, accept));
                    }
                    (None, _) => {}
                    (Some(game), message) => {
                        if let Ok(steps) = game.receive(message) {
                            for step in steps {
                                if let Step::Conflict { abort, .. } = step {
                                    outbox.push((me, abort));
                                }
                            }
                        }
                    }
                }
            }
            if let Some(game) = sides[me].game.as_mut()
                && game.my_turn()
            {
                let legal = game.position().legal_moves();
                let mv = legal[rng.random_range(0..legal.len())];
                for m in game.play(mv.cell.index(), mv.mark).unwrap() {
                    outbox.push((me, m));
                }
            }
        }
    }
    let endings = [0, 1].map(|i| sides[i].game.as_ref().and_then(|g| g.ending().cloned()));
    (endings, match_id, victim)
}

async fn relay_with_faults(faults: Faults, games: u32) {
    let server = Server::start().await;
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut sides = [
        Peer {
            user: server.user().await,
            game: None,
            cursor: 0,
            seen: 0,
            game_start: 0,
        },
        Peer {
            user: server.user().await,
            game: None,
            cursor: 0,
            seen: 0,
            game_start: 0,
        },
    ];
    let mut expected = [(0u64, 0u64, 0u64); 2];
    for number in 0..games {
        let app = if number % 2 == 0 {
            App::TicTacToe
        } else {
            App::Sos
        };
        let (endings, match_id, victim) =
            relayed_game(&server, &mut sides, app, number, faults, &mut rng).await;
        let view = server.match_(match_id).await;
        let context = format!("game {number} {faults:?}: {endings:?} {view}");
        if faults.tamper {
            let victim = victim.expect("a board was tampered with");
            let aborted = |by| Ending::Aborted {
                by,
                reason: Some("state-conflict".into()),
            };
            assert_eq!(endings[victim], Some(aborted(Side::Me)), "{context}");
            assert_eq!(
                endings[1 - victim],
                Some(aborted(Side::Opponent)),
                "{context}"
            );
            assert_eq!(view["outcome"]["reason"], "aborted", "{context}");
        } else {
            assert_eq!(endings[0], endings[1], "{context}");
            let ending = endings[0].clone().expect("the game ended");
            match ending {
                Ending::Win { winner } => {
                    assert_eq!(view["outcome"]["reason"], "win", "{context}");
                    let proposer_won = sides[0].game.as_ref().unwrap().me() == winner;
                    let w = if proposer_won { 0 } else { 1 };
                    assert_eq!(
                        view["outcome"]["winner_address"],
                        sides[w].user.address.as_str(),
                        "{context}"
                    );
                    expected[w].0 += 1;
                }
                Ending::Draw => {
                    assert_eq!(view["outcome"]["reason"], "draw", "{context}");
                    expected[0].2 += 1;
                    expected[1].2 += 1;
                }
                Ending::Aborted { .. } => panic!("no abort without a fault: {context}"),
            }
            expected[0].1 += 1;
            expected[1].1 += 1;
        }
    }
    // The hall of fame agrees with the games, each counted once.
    for (side, expected) in sides.iter().zip(expected) {
        assert_eq!(stats(&server, &side.user).await, expected);
    }
}

#[tokio::test]
async fn relay_with_every_message_duplicated() {
    relay_with_faults(
        Faults {
            duplicate: true,
            ..Faults::default()
        },
        6,
    )
    .await;
}

#[tokio::test]
async fn relay_with_deliveries_reordered_and_redelivered() {
    relay_with_faults(
        Faults {
            reorder: true,
            redeliver: true,
            ..Faults::default()
        },
        6,
    )
    .await;
}

#[tokio::test]
async fn relay_with_every_fault_at_once() {
    relay_with_faults(
        Faults {
            duplicate: true,
            reorder: true,
            redeliver: true,
            tamper: false,
        },
        6,
    )
    .await;
}

#[tokio::test]
async fn relay_with_a_board_tampered_with_in_delivery() {
    relay_with_faults(
        Faults {
            tamper: true,
            duplicate: true,
            ..Faults::default()
        },
        4,
    )
    .await;
}

// ----- A2A ------------------------------------------------------------------------------

async fn a2a(server: &Server, user: Option<&User>, body: &Value) -> Resp {
    let call = server.post("/a2a");
    let call = match user {
        Some(u) => call.auth(u),
        None => call,
    };
    call.json(body).send().await
}

fn message_send(data: Value, context: Option<&str>, level: Option<&str>) -> Value {
    let mut message = json!({
        "kind": "message", "role": "user", "messageId": "m-1",
        "parts": [{"kind": "text", "text": "my move"}, {"kind": "data", "data": data}],
    });
    if let Some(c) = context {
        message["contextId"] = json!(c);
    }
    if let Some(l) = level {
        message["metadata"] = json!({"level": l});
    }
    json!({"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {"message": message}})
}

/// The data parts of an A2A answer, as `(action, payload)`.
fn parts(answer: &Value) -> Vec<(String, Value)> {
    answer["result"]["parts"]
        .as_array()
        .unwrap_or_else(|| panic!("an agent message: {answer}"))
        .iter()
        .map(|p| {
            assert_eq!(p["kind"], "data");
            assert_eq!(p["data"]["appId"], "tic-tac-toe");
            (
                p["data"]["action"].as_str().unwrap().to_owned(),
                p["data"]["payload"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_agent_card_describes_the_computer() {
    let server =
        Server::start_with(|a| a.public_url = Some("http://triad.test:8080".to_owned())).await;
    // The card names the configured public URL, whatever the request's Host says.
    let r = server
        .get("/.well-known/agent-card.json")
        .header("host", "evil.example")
        .send()
        .await;
    let card = r.expect(200);
    assert_eq!(card["protocolVersion"], "0.3.0");
    assert_eq!(card["url"], "http://triad.test:8080/a2a");
    assert_eq!(card["preferredTransport"], "JSONRPC");
    for field in [
        "name",
        "description",
        "version",
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "securitySchemes",
        "security",
    ] {
        assert!(!card[field].is_null(), "the card has {field}");
    }
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["tic-tac-toe", "sos"]);
    // Every example in the card is a message the protocol decodes.
    for skill in card["skills"].as_array().unwrap() {
        for example in skill["examples"].as_array().unwrap() {
            let data: Value = serde_json::from_str(example.as_str().unwrap()).unwrap();
            triad_protocol::decode_data(&data).unwrap();
        }
    }
}

#[tokio::test]
async fn an_outside_agent_plays_the_computer_over_a2a() {
    let server = Server::start().await;
    let alice = server.user().await;
    // Alice proposes to play O: the computer accepts as X and opens.
    let answer = a2a(
        &server,
        Some(&alice),
        &message_send(
            json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"O"}}),
            None,
            None,
        ),
    )
    .await;
    let answer = answer.expect(200).clone();
    assert_eq!(answer["jsonrpc"], "2.0");
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["kind"], "message");
    assert_eq!(answer["result"]["role"], "agent");
    let context = answer["result"]["contextId"].as_str().unwrap().to_owned();
    assert!(context.starts_with("triad-match-"));
    let got = parts(&answer);
    assert_eq!(got[0], ("accept".to_owned(), json!({"seq":0,"role":"X"})));
    assert_eq!(got[1].0, "move");
    // Alice follows her own state machine, fed with the computer's messages.
    let app = App::TicTacToe;
    let (mut game, _) = Game::propose(app, triad_rules::Player::Second, None);
    let mut incoming: Vec<Message> = got
        .iter()
        .map(|(action, payload)| Message::decode(app, action, payload).unwrap())
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    loop {
        for m in &incoming {
            let steps = game.receive(m).unwrap();
            assert!(!matches!(steps[0], Step::Conflict { .. }), "{steps:?}");
        }
        if game.ending().is_some() {
            break;
        }
        let legal = game.position().legal_moves();
        let mv = legal[rng.random_range(0..legal.len())];
        let sent = game.play(mv.cell.index(), mv.mark).unwrap();
        let answer = a2a(
            &server,
            Some(&alice),
            &message_send(sent[0].data(app), Some(&context), None),
        )
        .await;
        let answer = answer.expect(200).clone();
        assert_eq!(answer["result"]["contextId"], context.as_str(), "{answer}");
        incoming = parts(&answer)
            .iter()
            .map(|(action, payload)| Message::decode(app, action, payload).unwrap())
            .collect();
        // A resend of the same move gets the same answer.
        let again = a2a(
            &server,
            Some(&alice),
            &message_send(sent[0].data(app), Some(&context), None),
        )
        .await;
        assert_eq!(parts(again.expect(200)), parts(&answer));
    }
    // The perfect computer never loses; the result is the referee's.
    let ending = game.ending().unwrap().clone();
    assert_ne!(
        ending,
        Ending::Win {
            winner: triad_rules::Player::Second
        }
    );
    let id: u64 = context.trim_start_matches("triad-match-").parse().unwrap();
    let view = server.match_(id).await;
    assert_eq!(view["origin"], "computer");
    assert!(matches!(
        view["outcome"]["reason"].as_str(),
        Some("win" | "draw")
    ));
    // Declaring the result: the right one is confirmed, a wrong one refused.
    let declared = ending.to_result(None);
    let answer = a2a(
        &server,
        Some(&alice),
        &message_send(
            Message::Result(declared.clone()).data(app),
            Some(&context),
            None,
        ),
    )
    .await;
    assert_eq!(
        parts(answer.expect(200)),
        [("result".to_owned(), Message::Result(declared).payload(app))]
    );
    let wrong =
        json!({"appId":"tic-tac-toe","action":"result","payload":{"outcome":"win","winner":"O"}});
    let answer = a2a(
        &server,
        Some(&alice),
        &message_send(wrong, Some(&context), None),
    )
    .await;
    let error = &answer.expect(200)["error"];
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["code"], 227);
    assert_eq!(error["data"]["error"], "result_mismatch");
}

#[tokio::test]
async fn a2a_errors_are_json_rpc_errors_with_triads_codes() {
    let server = Server::start().await;
    let alice = server.user().await;
    let propose = json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"X"}});
    // Not logged in.
    let r = a2a(&server, None, &message_send(propose.clone(), None, None)).await;
    assert_eq!(r.status.as_u16(), 401);
    assert_eq!(r.body["error"]["code"], -32000);
    assert_eq!(r.body["error"]["data"]["code"], 201);
    // Not JSON, not JSON-RPC, another method.
    let r = server
        .post("/a2a")
        .auth(&alice)
        .raw("{not json")
        .send()
        .await;
    assert_eq!(r.expect(200)["error"]["code"], -32700);
    let r = a2a(
        &server,
        Some(&alice),
        &json!({"id": 1, "method": "message/send"}),
    )
    .await;
    assert_eq!(r.expect(200)["error"]["code"], -32600);
    let r = a2a(
        &server,
        Some(&alice),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {}}),
    )
    .await;
    assert_eq!(r.expect(200)["error"]["code"], -32601);
    // No data part.
    let mut text_only = message_send(propose.clone(), None, None);
    text_only["params"]["message"]["parts"] = json!([{"kind": "text", "text": "let's play"}]);
    let r = a2a(&server, Some(&alice), &text_only).await;
    assert_eq!(r.expect(200)["error"]["code"], -32005);
    // A malformed payload, an unknown level, a move with no game.
    let bad = json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"Q"}});
    let r = a2a(&server, Some(&alice), &message_send(bad, None, None)).await;
    assert_eq!(r.expect(200)["error"]["data"]["code"], 222);
    let r = a2a(
        &server,
        Some(&alice),
        &message_send(propose.clone(), None, Some("genius")),
    )
    .await;
    assert_eq!(r.expect(200)["error"]["code"], -32602);
    let mv = json!({"appId":"tic-tac-toe","action":"move","payload":{"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}});
    let r = a2a(&server, Some(&alice), &message_send(mv.clone(), None, None)).await;
    assert_eq!(r.expect(200)["error"]["data"]["code"], 232);
    // A game at random strength; a tampered board is refused as a state conflict.
    let r = a2a(
        &server,
        Some(&alice),
        &message_send(propose, None, Some("random")),
    )
    .await;
    let context = r.expect(200)["result"]["contextId"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut tampered = mv.clone();
    tampered["payload"]["board"][0] = json!("X");
    let r = a2a(
        &server,
        Some(&alice),
        &message_send(tampered, Some(&context), None),
    )
    .await;
    assert_eq!(r.expect(200)["error"]["data"]["error"], "state_conflict");
    // The computer does not propose; an abort ends the game as aborted.
    let accept = json!({"appId":"tic-tac-toe","action":"accept","payload":{"seq":0,"role":"O"}});
    let r = a2a(
        &server,
        Some(&alice),
        &message_send(accept, Some(&context), None),
    )
    .await;
    assert_eq!(r.expect(200)["error"]["data"]["code"], 224);
    let abort = json!({"appId":"tic-tac-toe","action":"result","payload":{"outcome":"abort","reason":"bored"}});
    let r = a2a(
        &server,
        Some(&alice),
        &message_send(abort, Some(&context), None),
    )
    .await;
    assert_eq!(
        parts(r.expect(200))[0].1,
        json!({"outcome":"abort","reason":"bored"})
    );
    let id: u64 = context.trim_start_matches("triad-match-").parse().unwrap();
    assert_eq!(server.match_(id).await["outcome"]["reason"], "aborted");
}
