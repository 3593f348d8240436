//! `/api/tournaments` on a real server: a staked Swiss event from creation to prizes,
//! with a bot among the people, the clock starting it and pairing its rounds, its events
//! on the `tournament:<id>` topic, the leaderboard's tournament wins; the refusals with
//! their codes; and a tournament that survives a restart.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::common::*;

const FEE: u64 = 1_000;

fn swiss(rounds: u8) -> Value {
    json!({
        "name": "Thursday Swiss",
        "game": "tic-tac-toe",
        "format": "swiss",
        "rounds": rounds,
        "starts_in_seconds": 60,
        "entry_fee": FEE.to_string(),
        "prizes_bps": [6000, 3000],
        "max_players": 16,
    })
}

async fn tournament(server: &Server, id: u64) -> Value {
    server
        .get(&format!("/api/tournaments/{id}"))
        .send()
        .await
        .expect(200)
        .clone()
}

/// Plays every game being played to the first mover's win.
async fn play_round(server: &Server, id: u64, users: &HashMap<String, &User>) {
    let t = tournament(server, id).await;
    for p in t["pairings"].as_array().unwrap() {
        let first = users[p["first"]["address"].as_str().unwrap()];
        let second = users[p["second"]["address"].as_str().unwrap()];
        let game = p["match_id"].as_u64().unwrap();
        // The match names the tournament and the round that paired it.
        let m = server.get(&format!("/api/matches/{game}")).send().await;
        let m = m.expect(200);
        assert_eq!(m["origin"], "tournament");
        assert_eq!(m["tournament"], id);
        assert_eq!(m["round"], t["round"]);
        server.x_wins(first, second, game).await.expect(201);
    }
}

#[tokio::test]
async fn a_staked_swiss_event_runs_from_entries_to_prizes() {
    let server = Server::start_with(|a| a.tournament_round_gap_ms = Some(1_000)).await;
    let mut people = Vec::new();
    for _ in 0..4 {
        people.push(server.user().await);
    }
    let bot = server.login_bot(&key(40)).await;
    let everyone: Vec<&User> = people.iter().chain([&bot]).collect();
    for u in &everyone {
        server.deposit(u, 10_000).await;
    }
    let r = server
        .post("/api/tournaments")
        .auth(&server.owner)
        .json(&swiss(2))
        .send()
        .await;
    let created = r.expect(201).clone();
    let id = created["tournament"]["id"].as_u64().unwrap();
    assert_eq!(created["tournament"]["phase"], "upcoming");
    for u in &everyone {
        server
            .post(&format!("/api/tournaments/{id}/join"))
            .auth(u)
            .send()
            .await
            .expect(201);
    }
    assert_eq!(server.balance(&people[0]).await, 10_000 - FEE);
    let listed = server
        .get("/api/tournaments")
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(listed["tournaments"][0]["id"], id);
    assert_eq!(listed["tournaments"][0]["players"], 5);
    assert_eq!(listed["tournaments"][0]["pool"], (5 * FEE).to_string());
    let t = tournament(&server, id).await;
    assert_eq!(
        t["next_at_ms"], t["starts_at_ms"],
        "the countdown is to the start"
    );
    let bot_row = t["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["player"]["address"] == bot.address.as_str())
        .unwrap();
    assert_eq!(bot_row["player"]["bot"], true, "the bot is shown as one");

    // The clock starts it: two games and a bye.
    server.advance(60_000).await;
    eventually("the start", || async {
        tournament(&server, id).await["phase"] == "running"
    })
    .await;
    let t = tournament(&server, id).await;
    assert_eq!(t["round"], 1);
    assert_eq!(t["pairings"].as_array().unwrap().len(), 2);
    let users: HashMap<String, &User> = everyone.iter().map(|u| (u.address.clone(), *u)).collect();
    play_round(&server, id, &users).await;
    // The next round after the gap; then the end, with the prizes.
    server.advance(1_000).await;
    eventually("round 2", || async {
        tournament(&server, id).await["round"] == 2
    })
    .await;
    play_round(&server, id, &users).await;
    server.advance(1_000).await;
    eventually("the end", || async {
        tournament(&server, id).await["phase"] == "finished"
    })
    .await;
    let t = tournament(&server, id).await;
    let prizes = t["prizes"].as_array().unwrap();
    assert_eq!(prizes.len(), 2);
    assert_eq!(prizes[0]["amount"], (5 * FEE * 6 / 10).to_string());
    assert_eq!(prizes[1]["amount"], (5 * FEE * 3 / 10).to_string());
    let winner = t["winner"].as_str().unwrap();
    assert_eq!(prizes[0]["player"]["address"], winner);
    assert_eq!(t["standings"][0]["player"]["address"], winner);
    assert_eq!(
        t["standings"][0]["score"], 4,
        "two wins, or a win and a bye"
    );
    let paid: u64 = {
        let mut sum = 0;
        for u in &everyone {
            sum += server.balance(u).await;
        }
        sum
    };
    assert_eq!(
        paid,
        5 * 10_000 - 5 * FEE / 10,
        "the reserve keeps a tenth of the pool"
    );

    // The leaderboard of tournament wins.
    let board = server
        .get("/api/leaderboard?by=tournaments")
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(board["players"][0]["address"], winner);
    assert_eq!(board["players"][0]["tournament_wins"], 1);

    // Its topic carried its life, in order.
    let events = server
        .state()
        .store
        .topic_events(&format!("tournament:{id}"), 0, 1_000)
        .await
        .unwrap();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            serde_json::from_str::<Value>(&e.body).unwrap()["kind"]["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    for kind in [
        "tournament_created",
        "tournament_joined",
        "tournament_started",
        "tournament_round",
        "game_started",
        "game_ended",
        "tournament_finished",
    ] {
        assert!(
            kinds.iter().any(|k| k == kind),
            "{kind} is on the topic: {kinds:?}"
        );
    }
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("transferred"),
        "the prizes end it"
    );
}

#[tokio::test]
async fn refusals_have_their_codes() {
    let server = Server::start().await;
    let alice = server.user().await;
    // Only the owner creates tournaments here.
    server
        .post("/api/tournaments")
        .auth(&alice)
        .json(&swiss(2))
        .send()
        .await
        .expect_error(403, 140, "tournament_creation_restricted");
    let mut arena = swiss(2);
    arena["format"] = json!("arena");
    server
        .post("/api/tournaments")
        .auth(&server.owner)
        .json(&arena)
        .send()
        .await
        .expect_error(400, 215, "invalid_parameter");
    let mut unnamed = swiss(2);
    unnamed["name"] = json!("");
    server
        .post("/api/tournaments")
        .auth(&server.owner)
        .json(&unnamed)
        .send()
        .await
        .expect_error(422, 139, "invalid_tournament");
    server
        .post("/api/tournaments/99/join")
        .auth(&alice)
        .send()
        .await
        .expect_error(404, 132, "unknown_tournament");
    server
        .get("/api/tournaments/99")
        .send()
        .await
        .expect_error(404, 132, "unknown_tournament");
    let id = server
        .post("/api/tournaments")
        .auth(&server.owner)
        .json(&swiss(2))
        .send()
        .await
        .expect(201)["tournament"]["id"]
        .as_u64()
        .unwrap();
    // No money for the fee.
    server
        .post(&format!("/api/tournaments/{id}/join"))
        .auth(&alice)
        .send()
        .await
        .expect_error(409, 105, "insufficient_balance");
    server.deposit(&alice, FEE).await;
    let join = || {
        server
            .post(&format!("/api/tournaments/{id}/join"))
            .auth(&alice)
            .send()
    };
    join().await.expect(201);
    join().await.expect_error(409, 135, "already_entered");
    server
        .post(&format!("/api/tournaments/{id}/cancel"))
        .auth(&alice)
        .send()
        .await
        .expect_error(403, 143, "not_organizer");
    server
        .post(&format!("/api/tournaments/{id}/pause"))
        .auth(&alice)
        .json(&json!({"paused": false}))
        .send()
        .await
        .expect_error(409, 144, "nothing_to_pause");
    // Leaving before the start refunds the fee; the owner's cancellation changes nothing
    // more for Alice.
    server
        .post(&format!("/api/tournaments/{id}/leave"))
        .auth(&alice)
        .send()
        .await
        .expect(201);
    assert_eq!(server.balance(&alice).await, FEE);
    let cancelled = server
        .post(&format!("/api/tournaments/{id}/cancel"))
        .auth(&server.owner)
        .send()
        .await
        .expect(201)
        .clone();
    assert_eq!(cancelled["tournament"]["phase"], "cancelled");
    server
        .get("/api/tournaments?phase=soon")
        .send()
        .await
        .expect_error(400, 215, "invalid_parameter");
    let finished = server
        .get("/api/tournaments?phase=finished")
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(finished["tournaments"][0]["id"], id);
}

#[tokio::test]
async fn a_tournament_survives_a_restart() {
    let server = Server::start().await;
    let alice = server.user().await;
    let bob = server.user().await;
    let id = server
        .post("/api/tournaments")
        .auth(&server.owner)
        .json(&json!({"name": "Long arena", "game": "sos", "format": "arena", "minutes": 30}))
        .send()
        .await
        .expect(201)["tournament"]["id"]
        .as_u64()
        .unwrap();
    for u in [&alice, &bob] {
        server
            .post(&format!("/api/tournaments/{id}/join"))
            .auth(u)
            .send()
            .await
            .expect(201);
    }
    server.advance(60_000).await;
    eventually("the first wave", || async {
        tournament(&server, id).await["pairings"]
            .as_array()
            .unwrap()
            .len()
            == 1
    })
    .await;
    let before = tournament(&server, id).await;
    let args = base_args(server.dir.path());
    let dir = server.stop().await;
    let server = Server::start_in(dir, args).await;
    let after = tournament(&server, id).await;
    assert_eq!(after["phase"], "running");
    assert_eq!(after["pairings"], before["pairings"]);
    assert_eq!(after["standings"], before["standings"]);
}

#[tokio::test]
async fn an_ended_tournament_is_served_from_the_archive_once_the_engine_forgets_it() {
    let server = Server::start_with(|a| {
        a.tournament_round_gap_ms = Some(1_000);
        a.finished_retention_ms = Some(1_000);
    })
    .await;
    let alice = server.user().await;
    let bob = server.user().await;
    for u in [&alice, &bob] {
        server.deposit(u, 10_000).await;
    }
    let create = || async {
        server
            .post("/api/tournaments")
            .auth(&server.owner)
            .json(&swiss(1))
            .send()
            .await
            .expect(201)["tournament"]["id"]
            .as_u64()
            .unwrap()
    };
    let join = |id: u64, u: &User| {
        server
            .post(&format!("/api/tournaments/{id}/join"))
            .auth(u)
            .send()
    };
    // One event is played to its end; another, that Alice alone enters, is cancelled at
    // its start, short of players, and her fee refunded.
    let played = create().await;
    let cancelled = create().await;
    let enter_played = || {
        server
            .post(&format!("/api/tournaments/{played}/join"))
            .auth(&alice)
            .header("idempotency-key", "enter-played")
            .send()
    };
    enter_played().await.expect(201);
    join(played, &bob).await.expect(201);
    join(cancelled, &alice).await.expect(201);
    server.advance(60_000).await;
    eventually("the start", || async {
        tournament(&server, played).await["phase"] == "running"
    })
    .await;
    let users: HashMap<String, &User> = [&alice, &bob]
        .into_iter()
        .map(|u| (u.address.clone(), u))
        .collect();
    play_round(&server, played, &users).await;
    server.advance(1_000).await;
    eventually("the end", || async {
        tournament(&server, played).await["phase"] == "finished"
    })
    .await;
    assert_eq!(tournament(&server, cancelled).await["phase"], "cancelled");
    let balances = (server.balance(&alice).await, server.balance(&bob).await);
    let ended = || async {
        server
            .get("/api/tournaments?phase=finished")
            .send()
            .await
            .expect(200)["tournaments"]
            .clone()
    };
    let views_before = [
        tournament(&server, played).await,
        tournament(&server, cancelled).await,
    ];
    let listed_before = ended().await;
    assert_eq!(
        listed_before
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [cancelled, played],
        "newest first"
    );

    // Past the retention window the ticker sweeps both from memory; the archive serves
    // them as they were.
    let in_memory = || async {
        let engine = server.state().core.read().await;
        engine.tournaments().count()
    };
    assert_eq!(in_memory().await, 2);
    server
        .advance(triad_engine::Engine::SWEEP_EVERY_MS + 1_000)
        .await;
    eventually("the ticker to sweep the tournaments", || async {
        in_memory().await == 0
    })
    .await;
    as_before(&server, [played, cancelled], &views_before, &listed_before).await;
    // Alice's place in it, as she asks for it.
    let mine = server
        .get(&format!(
            "/api/tournaments/{played}?player={}",
            alice.address
        ))
        .send()
        .await
        .expect(200)["me"]["standing"]["player"]["address"]
        .clone();
    assert_eq!(mine, alice.address.as_str());
    // To a command it is over, as the archive says (the engine knows it no more); a
    // command repeated with its idempotency key has its first answer, with the tournament
    // as it is now.
    join(played, &bob)
        .await
        .expect_error(409, 133, "tournament_closed");
    join(cancelled, &bob)
        .await
        .expect_error(409, 133, "tournament_closed");
    let again = enter_played().await;
    let again = again.expect(200);
    assert_eq!(again["duplicate"], true);
    assert_eq!(again["tournament"]["phase"], "finished");
    assert_eq!(again["tournament"]["id"], played);
    join(played + 100, &bob)
        .await
        .expect_error(404, 132, "unknown_tournament");
    assert_eq!(
        (server.balance(&alice).await, server.balance(&bob).await),
        balances
    );

    // A restart replays the log, forgetting them again (at the same retention); the
    // archive still has them.
    let mut args = base_args(server.dir.path());
    args.finished_retention_ms = Some(1_000);
    let dir = server.stop().await;
    let server = Server::start_in(dir, args).await;
    assert_eq!(server.state().core.read().await.tournaments().count(), 0);
    as_before(&server, [played, cancelled], &views_before, &listed_before).await;
}

/// Checks that `ids`' views and the list of every tournament are what they were (but for
/// the server's time in the views), and that none is open.
async fn as_before(server: &Server, ids: [u64; 2], views: &[Value; 2], listed: &Value) {
    let without_clock = |v: &Value| {
        let mut v = v.clone();
        v["now_ms"] = Value::Null;
        v
    };
    for (id, before) in ids.into_iter().zip(views) {
        let now = tournament(server, id).await;
        assert_eq!(
            without_clock(&now),
            without_clock(before),
            "tournament {id}"
        );
    }
    let all = server.get("/api/tournaments?phase=all").send().await;
    assert_eq!(&all.expect(200)["tournaments"], listed);
    let open = server.get("/api/tournaments").send().await;
    assert_eq!(open.expect(200)["tournaments"], json!([]));
}
