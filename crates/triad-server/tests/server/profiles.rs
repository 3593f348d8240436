//! Players' profiles against a real server: display names (set, clear, look-alikes,
//! reserved, the bound on renames, a race between two players) and the bot mark (a login
//! with `"bot": true`, MCP and A2A), shown on the player's page, `/api/me` and the
//! leaderboard. On PostgreSQL too (`TRIAD_TEST_BACKEND=postgres`).

use axum::http::Method;
use serde_json::{Value, json};
use triad_identity::{public_key_hex, sign_ed25519};
use triad_server::profiles::{RENAME_WINDOW_MS, RENAMES_PER_WINDOW};

use crate::common::{Server, User, base_args, key};

async fn rename(server: &Server, user: &User, name: Value) -> crate::common::Resp {
    server
        .call(Method::PUT, "/api/me/name")
        .auth(user)
        .json(&json!({ "name": name }))
        .send()
        .await
}

async fn player(server: &Server, user: &User) -> Value {
    server
        .get(&format!("/api/players/{}", user.address))
        .send()
        .await
        .expect(200)
        .clone()
}

/// Logs `seed`'s key in, saying `bot` when given.
async fn login_as(server: &Server, seed: u8, bot: Option<bool>) -> User {
    let key = key(seed);
    let challenge = server.challenge(&key).await;
    let mut body = json!({
        "challenge_id": challenge["challenge_id"],
        "public_key": public_key_hex(&key.verifying_key()),
        "signature": sign_ed25519(&key, challenge["message"].as_str().unwrap().as_bytes()),
    });
    if let Some(bot) = bot {
        body["bot"] = json!(bot);
    }
    let r = server.post("/api/auth/login").json(&body).send().await;
    let body = r.expect(200);
    User {
        key,
        token: body["token"].as_str().unwrap().to_owned(),
        address: body["address"].as_str().unwrap().to_owned(),
    }
}

#[tokio::test]
async fn a_name_is_set_shown_everywhere_changed_and_cleared() {
    let server = Server::start().await;
    let (ada, bob) = (server.user().await, server.user().await);
    // Nobody has a name to start with.
    let page = player(&server, &ada).await;
    assert_eq!((&page["name"], &page["bot"]), (&Value::Null, &json!(false)));

    let r = rename(&server, &ada, json!("Ada_L")).await;
    assert_eq!(
        r.expect(200),
        &json!({ "address": ada.address, "name": "Ada_L", "bot": false })
    );
    assert_eq!(player(&server, &ada).await["name"], "Ada_L");
    let me = server.get("/api/me").auth(&ada).send().await;
    assert_eq!(me.expect(200)["stats"]["name"], "Ada_L");

    // On the leaderboard once she has played.
    let id = server.challenge_accepted(&ada, &bob, 0).await;
    server.x_wins(&ada, &bob, id).await.expect(201);
    let board = server.get("/api/leaderboard").send().await;
    let rows = board.expect(200)["players"].as_array().unwrap().clone();
    let row = |address: &str| rows.iter().find(|p| p["address"] == address).cloned();
    assert_eq!(row(&ada.address).unwrap()["name"], "Ada_L");
    assert_eq!(row(&bob.address).unwrap()["name"], Value::Null);

    // Her own name in another case is hers to take; asking again for the same is no change.
    rename(&server, &ada, json!("ADA_L")).await.expect(200);
    rename(&server, &ada, json!("ADA_L")).await.expect(200);
    assert_eq!(player(&server, &ada).await["name"], "ADA_L");
    // Cleared, the name is free for another.
    let r = rename(&server, &ada, Value::Null).await;
    assert_eq!(r.expect(200)["name"], Value::Null);
    assert_eq!(player(&server, &ada).await["name"], Value::Null);
    rename(&server, &bob, json!("ada-l")).await.expect(200);
    // A name outlives a restart.
    let dir = server.stop().await;
    let args = base_args(dir.path());
    let server = Server::start_in(dir, args).await;
    assert_eq!(player(&server, &bob).await["name"], "ada-l");
}

#[tokio::test]
async fn look_alikes_reserved_and_malformed_names_are_refused_with_what_to_do() {
    let server = Server::start().await;
    let (ada, bob) = (server.user().await, server.user().await);
    rename(&server, &ada, json!("Good_Player1"))
        .await
        .expect(200);
    for alike in [
        "good_player1",
        "G00D-PLAYER1",
        "good_playerl",
        "good_playerI",
        "good_p1ayeri",
    ] {
        let r = rename(&server, &bob, json!(alike)).await;
        let body = r.expect_error(409, 262, "display_name_taken");
        assert!(
            body["message"].as_str().unwrap().contains("choose another"),
            "{body}"
        );
    }
    rename(&server, &ada, json!("barn5")).await.expect(200);
    rename(&server, &bob, json!("BAMS"))
        .await
        .expect_error(409, 262, "display_name_taken");
    rename(&server, &bob, json!("vvizard2")).await.expect(200);
    rename(&server, &ada, json!("wizardz"))
        .await
        .expect_error(409, 262, "display_name_taken");

    for reserved in [
        "Admin",
        "triad",
        "c0mputer",
        "B0T",
        "system",
        "Triad_fan",
        "anonymous",
    ] {
        rename(&server, &bob, json!(reserved)).await.expect_error(
            422,
            261,
            "display_name_reserved",
        );
    }
    for (bad, why) in [
        ("ab", "3 to 20 characters"),
        ("abcdefghijklmnopqrstu", "3 to 20 characters"),
        ("bad name", "not one of them"),
        ("аda", "not one of them"),
        ("<b>x</b>", "not one of them"),
        ("-ada", "starts and ends"),
        ("0xdeadbeef", "address"),
    ] {
        let r = rename(&server, &bob, json!(bad)).await;
        let body = r.expect_error(422, 260, "invalid_display_name");
        assert!(
            body["message"].as_str().unwrap().contains(why),
            "{bad}: {body}"
        );
    }
    // Not a string, and another field: the body is unreadable.
    rename(&server, &bob, json!(5))
        .await
        .expect_error(400, 200, "bad_request");
    server
        .call(Method::PUT, "/api/me/name")
        .auth(&bob)
        .json(&json!({ "name": "bobby", "colour": "red" }))
        .send()
        .await
        .expect_error(400, 200, "bad_request");
    // Only a logged-in player has a name to set.
    server
        .call(Method::PUT, "/api/me/name")
        .json(&json!({ "name": "bobby" }))
        .send()
        .await
        .expect_error(401, 201, "unauthorized");
    // Refusals changed nothing.
    assert_eq!(player(&server, &bob).await["name"], "vvizard2");
    assert_eq!(player(&server, &ada).await["name"], "barn5");
}

#[tokio::test]
async fn of_two_players_racing_for_look_alikes_one_wins() {
    let server = Server::start().await;
    for round in 0..8 {
        let (a, b) = (server.user().await, server.user().await);
        let (name_a, name_b) = (format!("racer{round}o"), format!("RACER{round}0"));
        let (ra, rb) = tokio::join!(
            rename(&server, &a, json!(name_a)),
            rename(&server, &b, json!(name_b))
        );
        let won: Vec<u16> = [&ra, &rb].iter().map(|r| r.status.as_u16()).collect();
        assert!(
            won == [200, 409] || won == [409, 200],
            "round {round}: {won:?}: {} / {}",
            ra.text,
            rb.text
        );
    }
}

#[tokio::test]
async fn renames_are_bounded_per_player_per_hour() {
    let server = Server::start().await;
    let (ada, bob) = (server.user().await, server.user().await);
    for n in 0..RENAMES_PER_WINDOW {
        rename(&server, &ada, json!(format!("ada{n}n")))
            .await
            .expect(200);
    }
    // A refused name is not a rename: it does not count.
    rename(&server, &ada, json!("admin"))
        .await
        .expect_error(422, 261, "display_name_reserved");
    let r = rename(&server, &ada, json!("ada_again")).await;
    let body = r.expect_error(429, 263, "too_many_renames").clone();
    let wait = r.retry_after().expect("Retry-After");
    assert!((1..=RENAME_WINDOW_MS / 1000).contains(&wait), "{wait}");
    assert!(
        body["message"].as_str().unwrap().contains("try again in"),
        "{body}"
    );
    // Clearing is a change too; the same name again is none.
    rename(&server, &ada, Value::Null)
        .await
        .expect_error(429, 263, "too_many_renames");
    rename(
        &server,
        &ada,
        json!(format!("ada{}n", RENAMES_PER_WINDOW - 1)),
    )
    .await
    .expect(200);
    // Another player is not held up.
    rename(&server, &bob, json!("bobby")).await.expect(200);
    // An hour on, the window is new.
    server.advance(RENAME_WINDOW_MS).await;
    rename(&server, &ada, json!("ada_again")).await.expect(200);
}

#[tokio::test]
async fn an_agent_is_marked_a_bot_for_good() {
    let server = Server::start().await;
    let person = login_as(&server, 1, None).await;
    let said_no = login_as(&server, 2, Some(false)).await;
    let bot = login_as(&server, 3, Some(true)).await;
    assert_eq!(player(&server, &person).await["bot"], false);
    assert_eq!(player(&server, &said_no).await["bot"], false);
    assert_eq!(player(&server, &bot).await["bot"], true);
    // A bot that logs in again without saying so stays one.
    let again = login_as(&server, 3, None).await;
    assert_eq!(player(&server, &again).await["bot"], true);
    let again = login_as(&server, 3, Some(false)).await;
    let me = server.get("/api/me").auth(&again).send().await;
    assert_eq!(me.expect(200)["stats"]["bot"], true);
    // A bot may take a name, and keeps its mark.
    let r = rename(&server, &bot, json!("deep_thought")).await;
    assert_eq!(r.expect(200)["bot"], true);
    // Whoever it plays sees it on the match's seats.
    let id = server.challenge_accepted(&person, &bot, 0).await;
    let seats = server.match_(id).await["players"].clone();
    assert_eq!(
        (&seats[0]["bot"], &seats[0].get("name")),
        (&json!(false), &None),
        "{seats}"
    );
    assert_eq!(
        (&seats[1]["bot"], &seats[1]["name"]),
        (&json!(true), &json!("deep_thought")),
        "{seats}"
    );

    // Whoever uses MCP or A2A is an agent too.
    let mcp = login_as(&server, 4, None).await;
    let a2a = login_as(&server, 5, None).await;
    server
        .post("/mcp")
        .auth(&mcp)
        .header("accept", "application/json, text/event-stream")
        .header("host", crate::common::DOMAIN)
        .json(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "triad-test", "version": "1"}
            }
        }))
        .send()
        .await
        .expect(200);
    assert_eq!(player(&server, &mcp).await["bot"], true);
    let r = server
        .post("/a2a")
        .auth(&a2a)
        .header("A2A-Version", "1.0")
        .json(
            &json!({ "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": { "id": "none" } }),
        )
        .send()
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(player(&server, &a2a).await["bot"], true);
    // Neither touched the person's mark, on the leaderboard either.
    assert_eq!(player(&server, &person).await["bot"], false);
}
