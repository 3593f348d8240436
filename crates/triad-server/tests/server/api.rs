//! Every capability endpoint: challenges, the queue, the computer, matches, players, the
//! leaderboard, the ledger and idempotency keys.

use serde_json::{Value, json};
use triad_engine::{Engine, MatchId};

use crate::common::{Server, User, eventually};

const WAIT_CANCEL_MS: u64 = 120_000;
const MOVE_TIMEOUT_MS: u64 = 60_000;
const CHALLENGE_TTL_MS: u64 = 600_000;

async fn funded_pair(server: &Server, amount: u64) -> (User, User) {
    let (alice, bob) = (server.user().await, server.user().await);
    if amount > 0 {
        server.deposit(&alice, amount).await;
        server.deposit(&bob, amount).await;
    }
    (alice, bob)
}

/// A topic's stored events after `since` (at most `limit`), as `(seq, kind)`: what a
/// subscription's catch-up sends. Each body's `seq` is its row's.
async fn stored(server: &Server, topic: &str, since: u64, limit: u32) -> Vec<(u64, String)> {
    server
        .state()
        .store
        .topic_events(topic, since, limit)
        .await
        .unwrap()
        .into_iter()
        .map(|e| {
            let body: Value = serde_json::from_str(&e.body).unwrap();
            assert_eq!(body["seq"], e.seq, "{body}");
            (e.seq, body["kind"]["type"].as_str().unwrap().to_owned())
        })
        .collect()
}

async fn challenges_of(server: &Server, user: &User) -> (Vec<u64>, Vec<u64>) {
    let r = server.get("/api/challenges").auth(user).send().await;
    let body = r.expect(200);
    let ids = |list: &Value| -> Vec<u64> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_u64().unwrap())
            .collect()
    };
    (ids(&body["incoming"]), ids(&body["outgoing"]))
}

fn event_types(body: &Value) -> Vec<&str> {
    body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"]["type"].as_str().unwrap())
        .collect()
}

// ----- challenges ----------------------------------------------------------------------

#[tokio::test]
async fn a_challenge_escrows_the_stake_is_listed_both_ways_and_starts_when_accepted() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let carol = server.user().await;

    let r = server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": bob.address, "game": "tic-tac-toe", "stake": 100 }))
        .send()
        .await;
    let body = r.expect(201);
    assert_eq!(body["duplicate"], false);
    assert_eq!(
        event_types(body),
        ["challenge_issued", "transferred"],
        "{body}"
    );
    let m = &body["match"];
    let id = m["id"].as_u64().unwrap();
    assert_eq!(m["phase"], "waiting");
    assert_eq!(m["origin"], "challenge");
    assert_eq!(m["stake"], "100");
    assert_eq!(m["challenge"]["challenger"], alice.address.as_str());
    assert_eq!(m["challenge"]["opponent"], bob.address.as_str());
    assert_eq!(m["challenge"]["first"], "challenger");
    assert_eq!(m["deadline"]["kind"], "challenge_expires");
    assert_eq!(server.balance(&alice).await, 900);

    assert_eq!(challenges_of(&server, &alice).await, (vec![], vec![id]));
    assert_eq!(challenges_of(&server, &bob).await, (vec![id], vec![]));
    assert_eq!(challenges_of(&server, &carol).await, (vec![], vec![]));

    let r = server
        .post(&format!("/api/challenges/{id}/accept"))
        .auth(&bob)
        .send()
        .await;
    let m = &r.expect(201)["match"];
    assert_eq!(m["id"], id);
    assert_eq!(m["phase"], "ready");
    assert_eq!(m["players"][0]["address"], alice.address.as_str());
    assert_eq!(m["players"][1]["address"], bob.address.as_str());
    assert_eq!(server.balance(&bob).await, 900);
    assert_eq!(challenges_of(&server, &alice).await, (vec![], vec![]));
    assert_eq!(challenges_of(&server, &bob).await, (vec![], vec![]));
}

#[tokio::test]
async fn the_challenged_player_may_move_first_and_pick_sos() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 0).await;
    let r = server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": bob.address, "game": "sos", "first": "opponent" }))
        .send()
        .await;
    let id = r.expect(201)["match"]["id"].as_u64().unwrap();
    let r = server
        .post(&format!("/api/challenges/{id}/accept"))
        .auth(&bob)
        .send()
        .await;
    let m = &r.expect(201)["match"];
    assert_eq!(m["game"], "sos");
    assert_eq!(m["stake"], "0");
    assert_eq!(m["players"][0]["address"], bob.address.as_str());
    assert_eq!(m["players"][0]["marks"], json!(["S", "O"]));
    assert_eq!(m["turn_address"], bob.address.as_str());
}

#[tokio::test]
async fn declining_a_challenge_ends_it_and_refunds_the_challenger() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let r = server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": bob.address, "game": "tic-tac-toe", "stake": 250 }))
        .send()
        .await;
    let id = r.expect(201)["match"]["id"].as_u64().unwrap();
    let r = server
        .post(&format!("/api/challenges/{id}/decline"))
        .auth(&bob)
        .send()
        .await;
    let m = &r.expect(201)["match"];
    assert_eq!(m["phase"], "finished");
    assert_eq!(m["outcome"]["reason"], "declined");
    assert_eq!(m["outcome"]["winner"], Value::Null);
    assert_eq!(server.balance(&alice).await, 1_000);
    assert_eq!(challenges_of(&server, &bob).await, (vec![], vec![]));
}

#[tokio::test]
async fn a_free_challenge_can_be_withdrawn_at_once() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 0).await;
    let r = server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": bob.address, "game": "tic-tac-toe" }))
        .send()
        .await;
    let id = r.expect(201)["match"]["id"].as_u64().unwrap();
    let r = server
        .post(&format!("/api/challenges/{id}/withdraw"))
        .auth(&alice)
        .send()
        .await;
    assert_eq!(r.expect(201)["match"]["outcome"]["reason"], "cancelled");
    server
        .post(&format!("/api/challenges/{id}/accept"))
        .auth(&bob)
        .send()
        .await
        .expect_error(409, 107, "not_waiting");
}

#[tokio::test]
async fn a_staked_challenge_can_be_withdrawn_only_after_the_wait() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let r = server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": bob.address, "game": "tic-tac-toe", "stake": 100 }))
        .send()
        .await;
    let id = r.expect(201)["match"]["id"].as_u64().unwrap();
    let path = format!("/api/challenges/{id}/withdraw");
    let r = server.post(&path).auth(&alice).send().await;
    r.expect_error(409, 106, "wait_not_over");
    assert_eq!(r.retry_after(), Some(WAIT_CANCEL_MS / 1000));
    server.advance(WAIT_CANCEL_MS).await;
    let r = server.post(&path).auth(&alice).send().await;
    assert_eq!(r.expect(201)["match"]["outcome"]["reason"], "cancelled");
    assert_eq!(server.balance(&alice).await, 1_000);
}

#[tokio::test]
async fn an_unanswered_challenge_expires_and_refunds() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let r = server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": bob.address, "game": "tic-tac-toe", "stake": 100 }))
        .send()
        .await;
    let id = r.expect(201)["match"]["id"].as_u64().unwrap();
    server.advance(CHALLENGE_TTL_MS).await;
    // The server's deadline ticker ends it in the background.
    eventually("the challenge to expire", || async {
        server.match_(id).await["phase"] == "finished"
    })
    .await;
    assert_eq!(server.match_(id).await["outcome"]["reason"], "expired");
    assert_eq!(server.balance(&alice).await, 1_000);
    server
        .post(&format!("/api/challenges/{id}/accept"))
        .auth(&bob)
        .send()
        .await
        .expect_error(410, 109, "challenge_expired");
}

#[tokio::test]
async fn the_ticker_sweeps_a_finished_match_from_memory_once_its_retention_is_over() {
    let server = Server::start_with(|a| a.finished_retention_ms = Some(1_000)).await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = server.challenge_accepted(&alice, &bob, 0).await;
    server.x_wins(&alice, &bob, id).await.expect(201);
    let in_memory = || async {
        let engine = server.state().core.read().await;
        engine.match_(MatchId(id)).is_some()
    };
    assert!(in_memory().await);
    // Nobody sends a command: the ticker sweeps it by itself, at the clock's next sweep (at
    // most a minute after the last), past the retention.
    server.advance(Engine::SWEEP_EVERY_MS + 1_000).await;
    eventually("the ticker to sweep the match", || async {
        !in_memory().await
    })
    .await;
    assert_eq!(server.state().core.read().await.next_sweep_ms(), None);
    // The store still has it.
    assert_eq!(server.match_(id).await["outcome"]["reason"], "win");
}

#[tokio::test]
async fn a_command_on_a_match_forgotten_since_it_ended_is_told_it_ended() {
    let server = Server::start_with(|a| a.finished_retention_ms = Some(1_000)).await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let carol = server.user().await;
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    server.x_wins(&alice, &bob, id).await.expect(201);
    let balances = [server.balance(&alice).await, server.balance(&bob).await];
    // What each is told, the same while the match is in memory and once it is forgotten.
    let refused = || async {
        server
            .play(&bob, id, 6, 8, "O")
            .await
            .expect_error(409, 0, "game_over");
        server
            .play(&carol, id, 6, 8, "O")
            .await
            .expect_error(403, 101, "not_a_player");
        for path in ["forfeit", "claim-timeout"] {
            server
                .post(&format!("/api/matches/{id}/{path}"))
                .auth(&bob)
                .send()
                .await
                .expect_error(409, 0, "game_over");
        }
        for (who, path) in [(&bob, "accept"), (&alice, "withdraw")] {
            server
                .post(&format!("/api/challenges/{id}/{path}"))
                .auth(who)
                .send()
                .await
                .expect_error(409, 107, "not_waiting");
        }
        for (who, path) in [(&alice, "accept"), (&bob, "withdraw")] {
            server
                .post(&format!("/api/challenges/{id}/{path}"))
                .auth(who)
                .send()
                .await
                .expect_error(403, 108, "not_your_challenge");
        }
    };
    refused().await;
    server.advance(Engine::SWEEP_EVERY_MS + 1_000).await;
    eventually("the ticker to sweep the match", || async {
        server
            .state()
            .core
            .read()
            .await
            .match_(MatchId(id))
            .is_none()
    })
    .await;
    refused().await;
    // What needed the match in memory: the winning move's repeat was answered as the
    // original, and a rematch could be offered; now the game is over, and no rematch.
    server
        .play(&alice, id, 5, 2, "X")
        .await
        .expect_error(409, 0, "game_over");
    server
        .post(&format!("/api/matches/{id}/rematch"))
        .auth(&alice)
        .send()
        .await
        .expect_error(409, 117, "rematch_unavailable");
    // A match that never was is still unknown; nothing moved any money.
    server
        .play(&bob, id + 1_000, 1, 0, "X")
        .await
        .expect_error(404, 100, "unknown_match");
    assert_eq!(
        [server.balance(&alice).await, server.balance(&bob).await],
        balances
    );
}

// ----- the queue -----------------------------------------------------------------------

#[tokio::test]
async fn leaving_a_staked_queue_before_the_wait_is_refused_with_the_time_left() {
    let server = Server::start().await;
    let (alice, _) = funded_pair(&server, 1_000).await;
    let now = server.now().await;
    let r = server
        .post("/api/queue")
        .auth(&alice)
        .json(&json!({ "game": "sos", "stake": 100 }))
        .send()
        .await;
    let m = &r.expect(201)["match"];
    assert_eq!(m["phase"], "waiting");
    assert_eq!(m["origin"], "queue");
    assert_eq!(m["cancel_allowed_at_ms"], now + WAIT_CANCEL_MS);
    assert_eq!(server.balance(&alice).await, 900);

    let r = server.delete("/api/queue").auth(&alice).send().await;
    let body = r.expect_error(409, 106, "wait_not_over");
    assert!(
        body["message"].as_str().unwrap().contains("120 s"),
        "{body}"
    );
    assert_eq!(r.retry_after(), Some(120));

    server.advance(30_000).await;
    let r = server.delete("/api/queue").auth(&alice).send().await;
    let body = r.expect_error(409, 106, "wait_not_over");
    assert!(body["message"].as_str().unwrap().contains("90 s"), "{body}");
    assert_eq!(r.retry_after(), Some(90));

    server.advance(90_000).await;
    let r = server.delete("/api/queue").auth(&alice).send().await;
    assert_eq!(r.expect(200)["match"]["outcome"]["reason"], "cancelled");
    assert_eq!(server.balance(&alice).await, 1_000);
}

#[tokio::test]
async fn leaving_a_free_queue_is_allowed_at_once() {
    let server = Server::start().await;
    let alice = server.user().await;
    server
        .post("/api/queue")
        .auth(&alice)
        .json(&json!({ "game": "tic-tac-toe" }))
        .send()
        .await
        .expect(201);
    let r = server.delete("/api/queue").auth(&alice).send().await;
    assert_eq!(r.expect(200)["match"]["outcome"]["reason"], "cancelled");
    let r = server.delete("/api/queue").auth(&alice).send().await;
    r.expect_error(404, 210, "not_found");
}

#[tokio::test]
async fn the_second_player_in_a_queue_starts_the_match_against_the_first() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let first = server
        .post("/api/queue")
        .auth(&alice)
        .json(&json!({ "game": "sos", "stake": 100 }))
        .send()
        .await;
    let id = first.expect(201)["match"]["id"].as_u64().unwrap();
    // A different stake is a different queue.
    let carol = server.user().await;
    let other = server
        .post("/api/queue")
        .auth(&carol)
        .json(&json!({ "game": "sos", "stake": 0 }))
        .send()
        .await;
    assert_ne!(other.expect(201)["match"]["id"], id);

    let r = server
        .post("/api/queue")
        .auth(&bob)
        .json(&json!({ "game": "sos", "stake": "100" }))
        .send()
        .await;
    let m = &r.expect(201)["match"];
    assert_eq!(m["id"], id);
    assert_eq!(m["phase"], "ready");
    assert_eq!(m["players"][0]["address"], alice.address.as_str());
    assert_eq!(m["players"][1]["address"], bob.address.as_str());
    // Joined: leaving the queue is over.
    server
        .delete("/api/queue")
        .auth(&alice)
        .send()
        .await
        .expect_error(404, 210, "not_found");
}

// ----- the computer --------------------------------------------------------------------

#[tokio::test]
async fn the_computer_replies_within_the_same_command() {
    let server = Server::start().await;
    let alice = server.user().await;
    // Alice plays second: the computer's first move is already in the answer.
    let r = server
        .post("/api/computer")
        .auth(&alice)
        .json(&json!({ "game": "tic-tac-toe", "level": "perfect", "side": "second" }))
        .send()
        .await;
    let body = r.expect(201);
    assert_eq!(event_types(body), ["game_started", "moved"]);
    let m = &body["match"];
    let id = m["id"].as_u64().unwrap();
    assert_eq!(m["origin"], "computer");
    assert_eq!(m["players"][0]["kind"], "computer");
    assert_eq!(m["players"][0]["level"], "perfect");
    assert_eq!(m["players"][1]["address"], alice.address.as_str());
    assert_eq!(m["seq"], 1);
    assert_eq!(m["turn"], "second");
    assert_eq!(m["turn_address"], alice.address.as_str());
    assert_eq!(m["deadline"], Value::Null, "no clock against the computer");

    let taken = m["moves"][0]["cell"].as_u64().unwrap();
    let cell = (0..9).find(|&c| c != taken).unwrap();
    let r = server.play(&alice, id, 2, cell as u8, "O").await;
    let body = r.expect(201);
    assert_eq!(event_types(body), ["moved", "moved"]);
    assert_eq!(body["match"]["seq"], 3);
    assert_eq!(body["match"]["moves"][2]["player"], "first");
    assert_eq!(
        body["match"]["board"]
            .as_str()
            .unwrap()
            .chars()
            .filter(|&c| c != '-')
            .count(),
        3
    );
}

// ----- matches -------------------------------------------------------------------------

#[tokio::test]
async fn a_match_shows_board_players_marks_turn_seq_deadline_outcome_cells_and_stake() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    let now = server.now().await;

    let m = server.match_(id).await;
    assert_eq!(m["id"], id);
    assert_eq!(m["game"], "tic-tac-toe");
    assert_eq!(m["stake"], "100");
    assert_eq!(m["phase"], "ready");
    assert_eq!(m["host"], alice.address.as_str());
    assert_eq!(
        m["players"],
        json!([
            { "kind": "human", "address": alice.address, "marks": ["X"], "bot": false },
            { "kind": "human", "address": bob.address, "marks": ["O"], "bot": false },
        ])
    );
    assert_eq!(m["board"], "---------");
    assert_eq!(m["turn"], "first");
    assert_eq!(m["turn_address"], alice.address.as_str());
    assert_eq!(m["seq"], 0);
    assert_eq!(m["moves"], json!([]));
    assert_eq!(
        m["deadline"],
        // The first instant past the timeout ("more than" it, as the SOS contract says).
        json!({ "at_ms": now + MOVE_TIMEOUT_MS + 1, "kind": "abort" })
    );
    assert_eq!(m["outcome"], Value::Null);

    server.advance(5_000).await;
    let r = server.play(&alice, id, 1, 0, "X").await;
    let m = &r.expect(201)["match"];
    assert_eq!(m["phase"], "in_progress");
    assert_eq!(m["board"], "X--------");
    assert_eq!(m["turn"], "second");
    assert_eq!(m["turn_address"], bob.address.as_str());
    assert_eq!(m["seq"], 1);
    assert_eq!(
        m["moves"],
        json!([{ "seq": 1, "cell": 0, "mark": "X", "player": "first" }])
    );
    assert_eq!(
        m["deadline"],
        json!({ "at_ms": now + 5_000 + MOVE_TIMEOUT_MS + 1, "kind": "timeout" })
    );

    for (seq, who, cell, mark) in [(2, &bob, 3, "O"), (3, &alice, 1, "X"), (4, &bob, 4, "O")] {
        server.play(who, id, seq, cell, mark).await.expect(201);
    }
    let r = server.play(&alice, id, 5, 2, "X").await;
    let body = r.expect(201);
    assert_eq!(
        event_types(body),
        ["moved", "game_ended", "transferred", "transferred"]
    );
    let m = &body["match"];
    assert_eq!(m["phase"], "finished");
    assert_eq!(m["board"], "XXXOO----");
    assert_eq!(m["turn"], Value::Null);
    assert_eq!(m["deadline"], Value::Null);
    assert_eq!(m["outcome"]["reason"], "win");
    assert_eq!(m["outcome"]["winner"], "first");
    assert_eq!(m["outcome"]["winner_address"], alice.address.as_str());
    assert_eq!(m["outcome"]["cells"], json!([0, 1, 2]));

    // The SOS contract's getGameState().
    let r = server.get(&format!("/api/matches/{id}/state")).send().await;
    assert_eq!(r.expect(200), &json!({ "state": "XXXOO----" }));
    server
        .get("/api/matches/999/state")
        .send()
        .await
        .expect_error(404, 100, "unknown_match");
    server
        .get("/api/matches/999")
        .send()
        .await
        .expect_error(404, 100, "unknown_match");
}

#[tokio::test]
async fn a_repeated_move_answers_duplicate_and_changes_nothing() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 0).await;
    let id = server.challenge_accepted(&alice, &bob, 0).await;
    let first = server.play(&alice, id, 1, 4, "X").await;
    assert_eq!(first.expect(201)["duplicate"], false);
    let again = server.play(&alice, id, 1, 4, "X").await;
    let body = again.expect(200);
    assert_eq!(body["duplicate"], true);
    assert_eq!(body["events"], json!([]));
    assert_eq!(body["match"]["seq"], 1);
    assert_eq!(body["match"]["board"], "----X----");

    // The same seq with another move is stale; a seq ahead of the board is refused.
    server
        .play(&alice, id, 1, 5, "X")
        .await
        .expect_error(409, 113, "stale_seq");
    server
        .play(&bob, id, 3, 5, "O")
        .await
        .expect_error(409, 114, "seq_ahead");
    assert_eq!(server.match_(id).await["seq"], 1);
}

#[tokio::test]
async fn prefer_return_minimal_answers_a_command_with_the_match_id_and_event_seqs() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 0).await;
    let id = server.challenge_accepted(&alice, &bob, 0).await;
    let play = |user, seq: u8, cell: u8, mark: &str, prefer: Option<&str>| {
        let mut call = server
            .post(&format!("/api/matches/{id}/moves"))
            .auth(user)
            .json(&json!({ "seq": seq, "cell": cell, "mark": mark }));
        if let Some(prefer) = prefer {
            call = call.header("prefer", prefer);
        }
        call.send()
    };

    // Without the preference: the full answer, as always, and no Preference-Applied.
    let full = play(&alice, 1, 4, "X", None).await;
    let body = full.expect(201);
    assert_eq!(body["match"]["board"], "----X----", "{body}");
    assert!(full.headers.get("preference-applied").is_none());
    let full_seqs: Vec<u64> = body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert!(!full_seqs.is_empty());

    // With it: the match id and the new events' seqs, which follow the previous ones.
    let minimal = play(&bob, 2, 0, "O", Some("return=minimal")).await;
    let body = minimal.expect(201).clone();
    assert_eq!(
        minimal.headers.get("preference-applied").unwrap(),
        "return=minimal"
    );
    let seqs: Vec<u64> = serde_json::from_value(body["event_seqs"].clone()).unwrap();
    assert_eq!(
        seqs.first(),
        Some(&(full_seqs.last().unwrap() + 1)),
        "{body}"
    );
    assert_eq!(
        body,
        json!({"match_id": id, "event_seqs": seqs, "duplicate": false})
    );
    // Those are the events the match's log holds.
    let events = server
        .get(&format!("/api/matches/{id}/events?since={}", seqs[0] - 1))
        .send()
        .await;
    let logged: Vec<u64> = events.expect(200)["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(logged, seqs);
    assert_eq!(server.match_(id).await["board"], "O---X----");

    // A duplicate, minimal: no events, still the match. Other preferences, parameters,
    // case and quotes are understood as RFC 7240 has them; the first `return` counts.
    let again = play(
        &bob,
        2,
        0,
        "O",
        Some("respond-async, RETURN=\"minimal\"; x=1"),
    )
    .await;
    assert_eq!(
        again.expect(200),
        &json!({"match_id": id, "event_seqs": [], "duplicate": true})
    );
    let representation = play(
        &bob,
        2,
        0,
        "O",
        Some("return=representation, return=minimal"),
    )
    .await;
    assert_eq!(representation.expect(200)["match"]["board"], "O---X----");
    assert!(representation.headers.get("preference-applied").is_none());

    // An error is the same error either way.
    play(&alice, 2, 5, "X", Some("return=minimal"))
        .await
        .expect_error(409, 113, "stale_seq");
}

#[tokio::test]
async fn forfeiting_gives_the_opponent_the_win() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    server.play(&alice, id, 1, 4, "X").await.expect(201);
    let r = server
        .post(&format!("/api/matches/{id}/forfeit"))
        .auth(&alice)
        .send()
        .await;
    let m = &r.expect(201)["match"];
    assert_eq!(m["outcome"]["reason"], "forfeit");
    assert_eq!(m["outcome"]["winner"], "second");
    assert_eq!(m["outcome"]["winner_address"], bob.address.as_str());
    assert_eq!(server.balance(&bob).await, 1_080);
    server
        .post(&format!("/api/matches/{id}/forfeit"))
        .auth(&bob)
        .send()
        .await
        .expect_error(409, 0, "game_over");
}

#[tokio::test]
async fn the_last_mover_claims_the_win_once_the_opponent_runs_out_of_time() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    server.play(&alice, id, 1, 4, "X").await.expect(201);
    let claim = format!("/api/matches/{id}/claim-timeout");

    let r = server.post(&claim).auth(&alice).send().await;
    r.expect_error(409, 110, "deadline_not_reached");
    // Taken from the timeout plus 1 ms: 61 whole seconds.
    assert_eq!(r.retry_after(), Some(MOVE_TIMEOUT_MS / 1000 + 1));
    server
        .post(&claim)
        .auth(&bob)
        .send()
        .await
        .expect_error(403, 111, "not_last_mover");

    server.advance(MOVE_TIMEOUT_MS - 1_000).await;
    let r = server.post(&claim).auth(&alice).send().await;
    r.expect_error(409, 110, "deadline_not_reached");
    assert_eq!(r.retry_after(), Some(2));

    // The SOS contract's "more than" the timeout: refused at exactly it, taken 1 ms later.
    server.advance(1_000).await;
    let r = server.post(&claim).auth(&alice).send().await;
    r.expect_error(409, 110, "deadline_not_reached");
    assert_eq!(r.retry_after(), Some(1));

    server.advance(1).await;
    let r = server.post(&claim).auth(&alice).send().await;
    let m = &r.expect(201)["match"];
    assert_eq!(m["outcome"]["reason"], "timeout");
    assert_eq!(m["outcome"]["winner_address"], alice.address.as_str());
    // 95% of the 200 pot.
    assert_eq!(server.balance(&alice).await, 900 + 190);
}

#[tokio::test]
async fn a_rematch_is_offered_by_one_player_and_starts_when_the_other_accepts() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    server.x_wins(&alice, &bob, id).await.expect(201);
    let path = format!("/api/matches/{id}/rematch");

    let r = server.post(&path).auth(&bob).send().await;
    let body = r.expect(201);
    assert_eq!(event_types(body), ["rematch_offered"]);
    assert_eq!(body["match"]["id"], id);
    assert_eq!(body["match"]["rematch_offer"], "second");
    server
        .post(&path)
        .auth(&bob)
        .send()
        .await
        .expect_error(409, 118, "rematch_already_offered");

    let accept = || {
        server
            .post(&path)
            .auth(&alice)
            .header("idempotency-key", "rematch-1")
    };
    let r = accept().send().await;
    let m = &r.expect(201)["match"];
    let new_id = m["id"].as_u64().unwrap();
    // A repeat of the acceptance changes nothing and says so.
    let again = accept().send().await;
    let repeat = again.expect(200);
    assert_eq!(repeat["duplicate"], true);
    assert!(event_types(repeat).is_empty());
    assert_ne!(new_id, id);
    assert_eq!(m["origin"], "rematch");
    assert_eq!(m["rematch_of"], id);
    assert_eq!(m["phase"], "ready");
    assert_eq!(m["stake"], "100");
    let mut seated: Vec<&str> = m["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["address"].as_str().unwrap())
        .collect();
    seated.sort_unstable();
    let mut expected = [alice.address.as_str(), bob.address.as_str()];
    expected.sort_unstable();
    assert_eq!(seated, expected);
    assert_eq!(server.match_(id).await["rematch"], new_id);
    // Both stakes are escrowed again: 1080 - 100 and 900 - 100.
    assert_eq!(server.balance(&alice).await, 980);
    assert_eq!(server.balance(&bob).await, 800);
    server
        .post(&path)
        .auth(&alice)
        .send()
        .await
        .expect_error(409, 117, "rematch_unavailable");
}

#[tokio::test]
async fn match_events_come_in_order_and_page_without_gaps_or_repeats() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    server.x_wins(&alice, &bob, id).await.expect(201);

    let r = server
        .get(&format!("/api/matches/{id}/events?limit=1000"))
        .send()
        .await;
    let body = r.expect(200);
    assert_eq!(body["next_since"], Value::Null);
    let all: Vec<u64> = body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    // Issued, escrow, accepted, started, escrow, 5 moves, ended, 2 payouts.
    assert_eq!(all.len(), 13, "{body}");
    assert!(all.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(body["events"][0]["kind"]["type"], "challenge_issued");

    let mut paged = Vec::new();
    let mut since = 0;
    let mut pages = 0;
    loop {
        let r = server
            .get(&format!("/api/matches/{id}/events?since={since}&limit=4"))
            .send()
            .await;
        let page = r.expect(200);
        let events = page["events"].as_array().unwrap();
        assert!(events.len() <= 4);
        paged.extend(events.iter().map(|e| e["seq"].as_u64().unwrap()));
        pages += 1;
        match page["next_since"].as_u64() {
            Some(next) => since = next,
            None => break,
        }
    }
    assert_eq!(paged, all);
    assert_eq!(pages, 4);
    // Another match's events are not mixed in.
    let r = server.get("/api/matches/999/events").send().await;
    assert_eq!(r.expect(200)["events"], json!([]));
}

async fn computer_match(server: &Server, user: &User, finish: bool) -> u64 {
    let r = server
        .post("/api/computer")
        .auth(user)
        .json(&json!({ "game": "tic-tac-toe", "level": "random" }))
        .send()
        .await;
    let id = r.expect(201)["match"]["id"].as_u64().unwrap();
    if finish {
        server
            .post(&format!("/api/matches/{id}/forfeit"))
            .auth(user)
            .send()
            .await
            .expect(201);
    }
    id
}

fn ids(page: &Value) -> Vec<u64> {
    page["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect()
}

#[tokio::test]
async fn matches_list_by_player_and_status_newest_first_in_pages() {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    let a1 = computer_match(&server, &alice, true).await;
    let b1 = computer_match(&server, &bob, true).await;
    let a2 = computer_match(&server, &alice, true).await;
    let a3 = computer_match(&server, &alice, true).await;
    let a4 = computer_match(&server, &alice, false).await;

    let r = server
        .get(&format!("/api/matches?player={}", alice.address))
        .send()
        .await;
    let page = r.expect(200);
    assert_eq!(ids(page), [a4, a3, a2, a1]);
    assert_eq!(page["next_before"], Value::Null);

    let r = server.get("/api/matches?limit=100").send().await;
    assert_eq!(ids(r.expect(200)), [a4, a3, a2, b1, a1]);
    // Pages run from the live (the engine's) to the finished (the archive's) and on.
    let mut pages = Vec::new();
    let mut query = "/api/matches?limit=2".to_owned();
    loop {
        let r = server.get(&query).send().await;
        let page = r.expect(200);
        pages.push(ids(page));
        match page["next_before"].as_u64() {
            Some(before) => query = format!("/api/matches?limit=2&before={before}"),
            None => break,
        }
    }
    assert_eq!(pages, [vec![a4, a3], vec![a2, b1], vec![a1]]);

    let r = server
        .get(&format!(
            "/api/matches?player={}&status=ready",
            alice.address
        ))
        .send()
        .await;
    assert_eq!(ids(r.expect(200)), [a4]);
    // "active" is every phase but finished.
    let r = server
        .get(&format!(
            "/api/matches?player={}&status=active",
            alice.address
        ))
        .send()
        .await;
    assert_eq!(ids(r.expect(200)), [a4]);
    let r = server.get("/api/matches?status=over").send().await;
    assert_eq!(r.expect(400)["code"], 215);

    // Finished matches of Alice, two per page.
    let mut seen = Vec::new();
    let mut query = format!(
        "/api/matches?player={}&status=finished&limit=2",
        alice.address
    );
    loop {
        let r = server.get(&query).send().await;
        let page = r.expect(200);
        for m in page["matches"].as_array().unwrap() {
            assert_eq!(m["phase"], "finished");
            seen.push(m["id"].as_u64().unwrap());
        }
        match page["next_before"].as_u64() {
            Some(before) => query = format!("{query}&before={before}"),
            None => break,
        }
    }
    assert_eq!(seen, [a3, a2, a1]);

    let r = server
        .get(&format!("/api/matches?player={}", bob.address))
        .send()
        .await;
    assert_eq!(ids(r.expect(200)), [b1]);
    let r = server.get("/api/matches?status=waiting").send().await;
    assert_eq!(ids(r.expect(200)), Vec::<u64>::new());
}

#[tokio::test]
async fn every_match_is_listed_for_each_of_its_players_however_they_came_to_it() {
    // The `match_players` rows are written with the events that seat players (a challenge,
    // a queue, a start); moves and ends do not touch them. Each way in, checked at the end.
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let listed = |user: &User| {
        let path = format!("/api/matches?player={}&limit=100", user.address);
        let server = &server;
        async move {
            let r = server.get(&path).send().await;
            let mut found = ids(r.expect(200));
            found.sort_unstable();
            found
        }
    };
    // A challenge: the opponent sees it while it waits, before accepting.
    let issued = server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": bob.address, "game": "tic-tac-toe", "stake": 100 }))
        .send()
        .await;
    let challenged = issued.expect(201)["match"]["id"].as_u64().unwrap();
    assert_eq!(listed(&bob).await, [challenged]);
    server
        .post(&format!("/api/challenges/{challenged}/accept"))
        .auth(&bob)
        .send()
        .await
        .expect(201);
    server.x_wins(&alice, &bob, challenged).await.expect(201);
    // A rematch: a new match, seated by its start.
    let path = format!("/api/matches/{challenged}/rematch");
    server.post(&path).auth(&bob).send().await.expect(201);
    let r = server.post(&path).auth(&alice).send().await;
    let rematch = r.expect(201)["match"]["id"].as_u64().unwrap();
    server
        .post(&format!("/api/matches/{rematch}/forfeit"))
        .auth(&alice)
        .send()
        .await
        .expect(201);
    // The queue: the first waits alone, the second starts the match.
    let queue = |user: &User| {
        server
            .post("/api/queue")
            .auth(user)
            .json(&json!({ "game": "sos", "stake": 0 }))
    };
    let queued = queue(&bob).send().await.expect(201)["match"]["id"]
        .as_u64()
        .unwrap();
    assert!(listed(&bob).await.contains(&queued));
    assert!(!listed(&alice).await.contains(&queued));
    queue(&alice).send().await.expect(201);
    let mut all = vec![challenged, rematch, queued];
    all.sort_unstable();
    assert_eq!(listed(&alice).await, all);
    assert_eq!(listed(&bob).await, all);
}

// ----- players and the leaderboard -----------------------------------------------------

#[tokio::test]
async fn a_player_shows_stats_rating_and_active_match() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 0).await;
    let path = format!("/api/players/{}", bob.address);
    let r = server.get(&path).send().await;
    let p = r.expect(200);
    assert_eq!(p["address"], bob.address.as_str());
    assert_eq!(p["games"], 0);
    assert_eq!(p["active_match"], Value::Null);
    assert_eq!(p["rating"]["rating"], 1500.0);
    assert_eq!(p["rating"]["deviation"], 350.0);

    let id = server.challenge_accepted(&alice, &bob, 0).await;
    assert_eq!(
        server.get(&path).send().await.expect(200)["active_match"],
        id
    );
    server.x_wins(&alice, &bob, id).await.expect(201);
    let r = server.get(&path).send().await;
    let p = r.expect(200);
    assert_eq!(p["active_match"], Value::Null);
    assert_eq!(
        (p["games"].as_u64(), p["wins"].as_u64()),
        (Some(1), Some(0))
    );
    assert!(p["rating"]["rating"].as_f64().unwrap() < 1500.0);
    assert!(p["rating"]["deviation"].as_f64().unwrap() < 350.0);
}

#[tokio::test]
async fn the_leaderboard_orders_by_rating_or_by_wins() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 0).await;
    let (carol, dave) = funded_pair(&server, 0).await;
    // Alice beats Bob twice; Carol beats Dave once, then Dave beats Carol.
    for (x, o) in [
        (&alice, &bob),
        (&alice, &bob),
        (&carol, &dave),
        (&dave, &carol),
    ] {
        let id = server.challenge_accepted(x, o, 0).await;
        server.x_wins(x, o, id).await.expect(201);
    }

    let r = server.get("/api/leaderboard?by=wins").send().await;
    let board = r.expect(200);
    assert_eq!(board["by"], "wins");
    let rows = board["players"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0]["address"], alice.address.as_str());
    assert_eq!(rows[3]["address"], bob.address.as_str());
    let wins: Vec<u64> = rows.iter().map(|p| p["wins"].as_u64().unwrap()).collect();
    assert_eq!(wins, [2, 1, 1, 0]);

    for path in ["/api/leaderboard", "/api/leaderboard?by=rating"] {
        let r = server.get(path).send().await;
        let board = r.expect(200);
        assert_eq!(board["by"], "rating");
        let rows = board["players"].as_array().unwrap();
        assert_eq!(rows.len(), 4);
        let ratings: Vec<f64> = rows
            .iter()
            .map(|p| p["rating"]["rating"].as_f64().unwrap())
            .collect();
        assert!(ratings.windows(2).all(|w| w[0] >= w[1]), "{ratings:?}");
        assert_eq!(rows[0]["address"], alice.address.as_str());
        assert_eq!(rows[3]["address"], bob.address.as_str());
    }

    let r = server.get("/api/leaderboard?by=wins&limit=1").send().await;
    let rows = r.expect(200)["players"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["address"], alice.address.as_str());
}

// ----- the ledger ----------------------------------------------------------------------

fn entries(body: &Value) -> Vec<(String, String, Option<u64>)> {
    body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["amount"].as_str().unwrap().to_owned(),
                e["reason"].as_str().unwrap().to_owned(),
                e["match_id"].as_u64(),
            )
        })
        .collect()
}

#[tokio::test]
async fn my_ledger_shows_balance_and_entries_newest_first_in_pages() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    server.x_wins(&alice, &bob, id).await.expect(201);

    let r = server.get("/api/ledger").auth(&alice).send().await;
    let body = r.expect(200);
    assert_eq!(body["balance"], "1080");
    let s = |t: &str| t.to_owned();
    assert_eq!(
        entries(body),
        [
            (s("180"), s("payout"), Some(id)),
            (s("-100"), s("stake"), Some(id)),
            (s("1000"), s("deposit"), None),
        ]
    );
    assert_eq!(body["next_before"], Value::Null);
    // Each entry carries the time of the event that moved the money.
    let r = server
        .get(&format!("/api/matches/{id}/events"))
        .send()
        .await;
    let events = r.expect(200)["events"].as_array().unwrap().clone();
    let mut of_the_match = 0;
    for entry in body["entries"].as_array().unwrap() {
        let at_ms = entry["at_ms"].as_u64().expect("at_ms");
        match events.iter().find(|e| e["seq"] == entry["seq"]) {
            Some(event) => {
                assert_eq!(event["at_ms"].as_u64(), Some(at_ms));
                of_the_match += 1;
            }
            // The deposit is not a match event: only sanity-check its time.
            None => assert!(at_ms > 1_600_000_000_000, "{entry}"),
        }
    }
    assert_eq!(of_the_match, 2, "the stake and the payout");

    let r = server.get("/api/ledger").auth(&bob).send().await;
    let body = r.expect(200);
    assert_eq!(body["balance"], "900");
    assert_eq!(
        entries(body),
        [
            (s("-100"), s("stake"), Some(id)),
            (s("1000"), s("deposit"), None)
        ]
    );

    let r = server.get("/api/ledger?limit=2").auth(&alice).send().await;
    let first = r.expect(200);
    assert_eq!(first["entries"].as_array().unwrap().len(), 2);
    let before = first["next_before"].as_u64().expect("a next page");
    let r = server
        .get(&format!("/api/ledger?limit=2&before={before}"))
        .auth(&alice)
        .send()
        .await;
    let second = r.expect(200);
    assert_eq!(entries(second), [(s("1000"), s("deposit"), None)]);
    assert_eq!(second["next_before"], Value::Null);
}

#[tokio::test]
async fn the_owner_deposits_views_the_reserve_and_collects_it() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    server.x_wins(&alice, &bob, id).await.expect(201);

    let r = server
        .get("/api/ledger/reserve")
        .auth(&server.owner)
        .send()
        .await;
    assert_eq!(
        r.expect(200),
        &json!({ "reserve": "20", "deposited": "2000", "withdrawn": "0" })
    );
    let r = server
        .post("/api/ledger/collect")
        .auth(&server.owner)
        .send()
        .await;
    assert_eq!(event_types(r.expect(201)), ["transferred"]);
    assert_eq!(server.balance(&server.owner).await, 20);
    let r = server
        .get("/api/ledger/reserve")
        .auth(&server.owner)
        .send()
        .await;
    assert_eq!(r.expect(200)["reserve"], "0");
    server
        .post("/api/ledger/collect")
        .auth(&server.owner)
        .send()
        .await
        .expect_error(409, 121, "nothing_to_collect");
}

#[tokio::test]
async fn deposits_and_withdrawals_check_their_amounts() {
    let server = Server::start().await;
    let alice = server.user().await;
    // Amounts above 2^53 come as decimal strings.
    let big = 9_007_199_254_740_993_u64;
    server
        .post("/api/ledger/deposit")
        .auth(&server.owner)
        .json(&json!({ "to": alice.address, "amount": big.to_string() }))
        .send()
        .await
        .expect(201);
    assert_eq!(server.balance(&alice).await, big);
    for (amount, status, code, name) in [
        (json!(0), 422, 116, "zero_amount"),
        (json!(big + 1), 409, 105, "insufficient_balance"),
    ] {
        server
            .post("/api/ledger/withdraw")
            .auth(&alice)
            .json(&json!({ "amount": amount }))
            .send()
            .await
            .expect_error(status, code, name);
    }
    server
        .post("/api/ledger/withdraw")
        .auth(&alice)
        .json(&json!({ "amount": big - 1 }))
        .send()
        .await
        .expect(201);
    assert_eq!(server.balance(&alice).await, 1);
    server
        .post("/api/ledger/deposit")
        .auth(&server.owner)
        .json(&json!({ "to": alice.address, "amount": 0 }))
        .send()
        .await
        .expect_error(422, 116, "zero_amount");
    server
        .post("/api/ledger/deposit")
        .auth(&server.owner)
        .json(&json!({ "to": alice.address, "amount": u128::MAX.to_string() }))
        .send()
        .await
        .expect_error(422, 122, "amount_too_large");
    let r = server
        .get("/api/ledger/reserve")
        .auth(&server.owner)
        .send()
        .await;
    assert_eq!(r.expect(200)["withdrawn"], (big - 1).to_string());
}

// ----- idempotency keys ----------------------------------------------------------------

#[tokio::test]
async fn a_resubmitted_command_with_the_same_idempotency_key_applies_once() {
    let server = Server::start().await;
    let alice = server.user().await;
    let deposit = |amount: u64, key: &'static str| {
        server
            .post("/api/ledger/deposit")
            .auth(&server.owner)
            .header("idempotency-key", key)
            .json(&json!({ "to": alice.address, "amount": amount }))
            .send()
    };
    let first = deposit(500, "deposit-1").await;
    assert_eq!(first.expect(201)["duplicate"], false);
    let again = deposit(500, "deposit-1").await;
    let body = again.expect(200);
    assert_eq!(body["duplicate"], true);
    assert_eq!(body["events"], json!([]));
    assert_eq!(server.balance(&alice).await, 500);

    // The same key for another command is refused, and changes nothing.
    deposit(700, "deposit-1")
        .await
        .expect_error(422, 119, "idempotency_key_reused");
    assert_eq!(server.balance(&alice).await, 500);
    // Another key is another command.
    deposit(500, "deposit-2").await.expect(201);
    assert_eq!(server.balance(&alice).await, 1_000);

    // Keys are per actor: Alice's "deposit-1" is her own.
    let r = server
        .post("/api/computer")
        .auth(&alice)
        .header("idempotency-key", "deposit-1")
        .json(&json!({ "game": "sos" }))
        .send()
        .await;
    let id = r.expect(201)["match"]["id"].as_u64().unwrap();
    let r = server
        .post("/api/computer")
        .auth(&alice)
        .header("idempotency-key", "deposit-1")
        .json(&json!({ "game": "sos" }))
        .send()
        .await;
    let body = r.expect(200);
    assert_eq!(body["duplicate"], true);
    let r = server.get("/api/me").auth(&alice).send().await;
    assert_eq!(r.expect(200)["active_match"]["id"], id);
}

#[tokio::test]
async fn an_idempotency_key_must_be_1_to_128_characters() {
    let server = Server::start().await;
    let alice = server.user().await;
    for key in [String::new(), "k".repeat(129)] {
        server
            .post("/api/computer")
            .auth(&alice)
            .header("idempotency-key", &key)
            .json(&json!({ "game": "sos" }))
            .send()
            .await
            .expect_error(400, 200, "bad_request");
    }
    server
        .post("/api/computer")
        .auth(&alice)
        .header("idempotency-key", &"k".repeat(128))
        .json(&json!({ "game": "sos" }))
        .send()
        .await
        .expect(201);
}

#[tokio::test]
async fn a_live_match_is_listed_from_the_engine_in_its_phase_and_archived_when_it_ends() {
    // `matches` is the archive of finished matches: a live match has no row (the engine
    // holds every live one), so the listings take live matches, and filter them by phase,
    // from the engine; each change of phase is listed at once, under its new status only.
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 0).await;
    let store = &server.running.as_ref().unwrap().state.store;
    let row = |id| async move { store.match_(triad_engine::MatchId(id)).await.unwrap() };
    let server = &server;
    let bob_address = bob.address.clone();
    let listed = |status: &'static str| {
        let path = format!("/api/matches?player={bob_address}&status={status}");
        async move {
            let r = server.get(&path).send().await;
            ids(r.expect(200))
        }
    };
    let r = server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": bob.address, "game": "tic-tac-toe", "stake": 0 }))
        .send()
        .await;
    let id = r.expect(201)["match"]["id"].as_u64().unwrap();
    assert!(row(id).await.is_none(), "an open challenge has no row");
    assert_eq!(
        listed("waiting").await,
        [id],
        "the opponent's open challenge"
    );
    assert_eq!(listed("active").await, [id]);
    server
        .post(&format!("/api/challenges/{id}/accept"))
        .auth(&bob)
        .send()
        .await
        .expect(201);
    assert!(row(id).await.is_none(), "an accepted match has no row");
    assert_eq!(listed("waiting").await, Vec::<u64>::new());
    assert_eq!(listed("ready").await, [id]);
    server.play(&alice, id, 1, 0, "X").await.expect(201);
    server.play(&bob, id, 2, 4, "O").await.expect(201);
    assert!(row(id).await.is_none(), "a match in play has no row");
    assert_eq!(listed("ready").await, Vec::<u64>::new());
    assert_eq!(listed("finished").await, Vec::<u64>::new());
    let path = format!("/api/matches?player={}&status=in_progress", alice.address);
    let r = server.get(&path).send().await;
    let page = r.expect(200);
    let view = &page["matches"][0];
    assert_eq!(view["id"], id, "{page}");
    assert_eq!(view["board"], "X---O----", "{view}");
    assert_eq!(view["phase"], "in_progress", "{view}");
    // X completes the top row.
    server.play(&alice, id, 3, 1, "X").await.expect(201);
    server.play(&bob, id, 4, 8, "O").await.expect(201);
    server.play(&alice, id, 5, 2, "X").await.expect(201);
    let ended = row(id).await.expect("a finished match is archived");
    assert_eq!(ended.moves.len(), 5);
    assert_eq!(ended.phase, triad_engine::Phase::Finished);
    assert_eq!(listed("active").await, Vec::<u64>::new());
    assert_eq!(listed("finished").await, [id]);
    let path = format!("/api/matches?player={}&status=finished", alice.address);
    let r = server.get(&path).send().await;
    let page = r.expect(200);
    assert_eq!(page["matches"][0]["board"], "XXX-O---O", "{page}");
    // A change to a finished match (a rematch offered) is archived too.
    server
        .post(&format!("/api/matches/{id}/rematch"))
        .auth(&bob)
        .send()
        .await
        .expect(201);
    let offered = row(id).await.unwrap();
    assert!(offered.rematch_offer.is_some(), "{offered:?}");
}

#[tokio::test]
async fn an_inbox_and_a_match_are_read_back_from_the_store_after_any_seq() {
    // A WebSocket subscription's catch-up: a topic's stored events, in order, after any
    // seq, up to a limit (on SQLite through the read thread, on PostgreSQL through the
    // pool).
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 0).await;
    let id = server.challenge_accepted(&alice, &bob, 0).await;
    server.play(&alice, id, 1, 0, "X").await.expect(201);
    let server = &server;
    let read = |topic: String, since: u64, limit: u32| async move {
        stored(server, &topic, since, limit).await
    };
    let inbox = format!("inbox:{}", bob.address);
    let all = read(inbox.clone(), 0, 100).await;
    let kinds: Vec<&str> = all.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(
        kinds,
        ["challenge_issued", "challenge_accepted", "game_started"],
        "a move is not an inbox's business: {all:?}"
    );
    assert_eq!(read(inbox.clone(), all[0].0, 100).await, all[1..]);
    assert_eq!(read(inbox.clone(), 0, 2).await, all[..2]);
    assert_eq!(read(inbox.clone(), all[2].0, 100).await, []);
    // Alice's inbox has the same three events; her match topic has the move too.
    assert_eq!(read(format!("inbox:{}", alice.address), 0, 100).await, all);
    let game = read(format!("match:{id}"), 0, 100).await;
    assert_eq!(game[..3], all[..]);
    assert_eq!(game[3].1, "moved", "{game:?}");
    assert_eq!(game.len(), 4, "{game:?}");
}

#[tokio::test]
async fn every_inbox_read_back_from_the_store_is_what_its_subscribers_were_sent() {
    // The store keeps no inbox rows for a match's own events (challenges, starts, ends,
    // rematch offers): it derives them from the match's players. Whatever the path (a
    // challenge accepted, declined or expired, a staked win and its payout, a rematch, a
    // queue left and a queue joined, a forfeit), a catch-up from the store must be exactly
    // what a subscriber of that inbox was sent live, in order.
    let server = Server::start().await;
    let state = server.state();
    let users = [
        server.user().await,
        server.user().await,
        server.user().await,
        server.user().await,
    ];
    let mut live = Vec::new();
    for user in &users {
        let registration = state.hub.register(1_000);
        state
            .hub
            .subscribe(registration.id, &format!("inbox:{}", user.address));
        live.push(registration);
    }
    let [alice, bob, carol, dave] = &users;
    for user in &users {
        server.deposit(user, 1_000).await;
    }
    // A staked win, a rematch offered and accepted, a forfeit.
    let id = server.challenge_accepted(alice, bob, 100).await;
    server.x_wins(alice, bob, id).await.expect(201);
    let rematch = format!("/api/matches/{id}/rematch");
    server.post(&rematch).auth(bob).send().await.expect(201);
    let r = server.post(&rematch).auth(alice).send().await;
    let second = r.expect(201)["match"]["id"].as_u64().unwrap();
    server
        .post(&format!("/api/matches/{second}/forfeit"))
        .auth(alice)
        .send()
        .await
        .expect(201);
    // A challenge declined, and one left to expire.
    let challenge = |from: &User, to: &User| {
        server
            .post("/api/challenges")
            .auth(from)
            .json(&json!({ "opponent": to.address, "game": "tic-tac-toe", "stake": 10 }))
    };
    let r = challenge(carol, dave).send().await;
    let declined = r.expect(201)["match"]["id"].as_u64().unwrap();
    server
        .post(&format!("/api/challenges/{declined}/decline"))
        .auth(dave)
        .send()
        .await
        .expect(201);
    let r = challenge(carol, alice).send().await;
    let expiring = r.expect(201)["match"]["id"].as_u64().unwrap();
    server.advance(CHALLENGE_TTL_MS).await;
    eventually("the challenge to expire", || async {
        server.match_(expiring).await["phase"] == "finished"
    })
    .await;
    // A free queue left, and a staked one joined and forfeited.
    let queue = |user: &User, stake: u64| {
        server
            .post("/api/queue")
            .auth(user)
            .json(&json!({ "game": "sos", "stake": stake }))
    };
    queue(dave, 0).send().await.expect(201);
    server
        .delete("/api/queue")
        .auth(dave)
        .send()
        .await
        .expect(200);
    queue(bob, 50).send().await.expect(201);
    let r = queue(carol, 50).send().await;
    let queued = r.expect(201)["match"]["id"].as_u64().unwrap();
    server
        .post(&format!("/api/matches/{queued}/forfeit"))
        .auth(carol)
        .send()
        .await
        .expect(201);

    let store = &state.store;
    let mut kinds = std::collections::BTreeSet::new();
    for (user, registration) in users.iter().zip(&mut live) {
        let mut sent = Vec::new();
        while let Ok(Some(frame)) = tokio::time::timeout(
            std::time::Duration::from_millis(200),
            registration.frames.recv(),
        )
        .await
        {
            let text: Value = serde_json::from_str(frame.text.as_str()).unwrap();
            let kind = text["event"]["kind"]["type"].as_str().unwrap().to_owned();
            kinds.insert(kind.clone());
            sent.push((frame.seq, kind));
        }
        let topic = format!("inbox:{}", user.address);
        let stored = stored(&server, &topic, 0, 1_000).await;
        assert_eq!(stored, sent, "{topic}");
        // Read page by page, from every cursor, the same list.
        for (i, (seq, _)) in stored.iter().enumerate() {
            let page = store.topic_events(&topic, *seq, 2).await.unwrap();
            let seqs: Vec<u64> = page.iter().map(|e| e.seq).collect();
            let expected: Vec<u64> = stored[i + 1..].iter().take(2).map(|e| e.0).collect();
            assert_eq!(seqs, expected, "{topic} after {seq}");
        }
    }
    let expected = [
        "challenge_accepted",
        "challenge_declined",
        "challenge_expired",
        "challenge_issued",
        "game_ended",
        "game_started",
        "queued",
        "rematch_offered",
        "transferred",
    ];
    for kind in expected {
        assert!(kinds.contains(kind), "no {kind} in any inbox: {kinds:?}");
    }
}

#[tokio::test]
async fn an_inbox_catch_up_looks_only_at_matches_that_can_still_have_events() {
    // Each event stores the oldest match the engine still held (`match_floor`): an inbox's
    // catch-up derives match events only from matches at or above it. A finished match is
    // held for the retention window, where a rematch can still be offered on it; past the
    // window it is gone for good, and the floor moves past it.
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 0).await;
    let first = server.challenge_accepted(&alice, &bob, 0).await;
    server.x_wins(&alice, &bob, first).await.expect(201);
    let inbox = format!("inbox:{}", bob.address);
    let kinds_after = |since: u64| stored(&server, &inbox, since, 100);
    let ended = kinds_after(0).await.last().unwrap().0;
    server
        .post(&format!("/api/matches/{first}/rematch"))
        .auth(&alice)
        .send()
        .await
        .expect(201);
    let after = kinds_after(ended).await;
    let kinds: Vec<&str> = after.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(kinds, ["rematch_offered"], "an old match's new event");

    // Past the retention window (15 minutes), the clock's next sweep forgets the first
    // match (the ticker sends it by itself).
    server.advance(15 * 60 * 1000 + 1).await;
    eventually("the clock to sweep the first match", || async {
        let engine = server.state().core.read().await;
        engine.match_(MatchId(first)).is_none()
    })
    .await;
    let second = server.challenge_accepted(&bob, &alice, 0).await;
    let since = after[0].0;
    let kinds: Vec<String> = kinds_after(since).await.into_iter().map(|e| e.1).collect();
    assert_eq!(
        kinds,
        ["challenge_issued", "challenge_accepted", "game_started"]
    );

    let dir = server.stop().await;
    let url = crate::common::database_of(dir.path());
    let url = if crate::common::on_postgres() {
        url
    } else {
        format!("sqlite://{url}")
    };
    sqlx::any::install_default_drivers();
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&url)
        .await
        .unwrap();
    let floors: Vec<(i64, Option<i64>)> =
        sqlx::query_as("SELECT seq, match_floor FROM events ORDER BY seq")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    let first = i64::try_from(first).unwrap();
    let second = i64::try_from(second).unwrap();
    // Up to the sweep the first match was held (the floor is at most its id); the second
    // challenge came after it was forgotten: its batches' floor is the second match.
    let last = floors.last().unwrap();
    assert_eq!(last.1, Some(second), "{floors:?}");
    assert!(
        floors.iter().all(|(_, f)| f.is_some_and(|f| f <= second)),
        "{floors:?}"
    );
    assert!(
        floors
            .iter()
            .filter(|(seq, _)| *seq <= i64::try_from(since).unwrap())
            .all(|(_, f)| f.is_some_and(|f| f <= first)),
        "{floors:?}"
    );
}

#[tokio::test]
async fn a_sparse_inbox_is_read_page_by_page_across_a_busy_log() {
    // An inbox's catch-up reads the log in growing windows after its cursor (16 events per
    // row asked for, then twice as many, up to the head): an inbox event far behind the
    // cursor, past a hundred events of others, is still the next page.
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 0).await;
    let carol = server.user().await;
    let decline = |id: u64| {
        server
            .post(&format!("/api/challenges/{id}/decline"))
            .auth(&alice)
    };
    let challenge = |from: &User| {
        server
            .post("/api/challenges")
            .auth(from)
            .json(&json!({ "opponent": alice.address, "game": "tic-tac-toe" }))
    };
    let r = challenge(&bob).send().await;
    let first = r.expect(201)["match"]["id"].as_u64().unwrap();
    decline(first).send().await.expect(201);
    for _ in 0..150 {
        server.deposit(&carol, 1).await;
    }
    let r = challenge(&carol).send().await;
    let second = r.expect(201)["match"]["id"].as_u64().unwrap();
    decline(second).send().await.expect(201);

    let store = &server.state().store;
    let inbox = format!("inbox:{}", alice.address);
    let all: Vec<(u64, Option<u64>)> = store
        .topic_events(&inbox, 0, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| {
            let body: Value = serde_json::from_str(&e.body).unwrap();
            (e.seq, body["kind"]["match_id"].as_u64())
        })
        .collect();
    let matches: Vec<Option<u64>> = all.iter().map(|e| e.1).collect();
    assert_eq!(
        matches,
        [
            Some(first),
            Some(first),
            Some(first),
            Some(second),
            Some(second),
            Some(second)
        ],
        "issued, declined, ended, twice: {all:?}"
    );
    assert!(all[3].0 > all[2].0 + 150, "a busy log between: {all:?}");
    // One event per page, from every cursor: the same list.
    let mut since = 0;
    let mut paged = Vec::new();
    loop {
        let page = store.topic_events(&inbox, since, 1).await.unwrap();
        let Some(event) = page.first() else { break };
        assert_eq!(page.len(), 1);
        paged.push(event.seq);
        since = event.seq;
    }
    let seqs: Vec<u64> = all.iter().map(|e| e.0).collect();
    assert_eq!(paged, seqs);
}
