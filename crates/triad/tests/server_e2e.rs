//! `triad serve` end to end: the real binary on a real socket, a fresh SQLite file per
//! test, keys and logins as a client makes them, HTTP with reqwest and the WebSocket with
//! tokio-tungstenite, time moved only by the dev clock.

mod support;

use serde_json::{Value, json};
use support::{
    Api, E, Mv, Player, SOS_ALL_O, SOS_DIAGONAL, Server, TTT_SLOW_WIN, TTT_TOP_ROW, Ws, amount,
    kind, new_key, nth, run_to_exit, seqs_increasing, serve_command,
};

/// Each player's starting money in these tests.
const D: u64 = 10 * E;

async fn server_with_owner(dir: &std::path::Path) -> (Server, Player) {
    let owner_key = new_key();
    let server = Server::start(dir, &owner_key.address_string(), &[]).await;
    let owner = server.api.login(&owner_key).await;
    (server, owner)
}

/// Alice and Bob in a tic-tac-toe match without a stake (Alice challenged, Bob accepted;
/// Alice moves first), on a server with an owner.
struct Duel {
    server: Server,
    alice: Player,
    bob: Player,
    /// The match's id.
    id: u64,
    /// `match:{id}`.
    topic: String,
}

async fn duel(dir: &std::path::Path) -> Duel {
    let (server, _owner) = server_with_owner(dir).await;
    let alice = server.api.login(&new_key()).await;
    let bob = server.api.login(&new_key()).await;
    let id = server
        .api
        .challenge_accepted(&alice, &bob, "tic-tac-toe", 0)
        .await;
    Duel {
        server,
        alice,
        bob,
        id,
        topic: format!("match:{id}"),
    }
}

/// The moved event of a move, checked against what was played.
#[track_caller]
fn assert_moved(event: &Value, id: u64, seq: u8, cell: u8, mark: &str) {
    assert_eq!(kind(event), "moved", "{event}");
    let k = &event["kind"];
    assert_eq!(k["match_id"].as_u64(), Some(id), "{event}");
    assert_eq!(k["seq"].as_u64(), Some(u64::from(seq)), "{event}");
    assert_eq!(k["cell"].as_u64(), Some(u64::from(cell)), "{event}");
    assert_eq!(k["mark"], mark, "{event}");
}

#[tokio::test]
async fn two_players_play_a_challenge_to_a_win_watched_live_by_both() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _owner) = server_with_owner(dir.path()).await;
    let api = &server.api;
    let alice = api.login(&new_key()).await;
    let bob = api.login(&new_key()).await;

    // Bob follows his inbox and sees the challenge arrive live.
    let mut bob_inbox = Ws::connect(api, &bob.token).await;
    let (old, _) = bob_inbox.subscribe("inbox", 0).await;
    assert!(old.is_empty(), "a new player's inbox is empty: {old:?}");
    let issued = api
        .post(
            "/api/challenges",
            Some(&alice.token),
            &json!({ "opponent": bob.address, "game": "tic-tac-toe", "first": "challenger" }),
        )
        .await
        .ok();
    let id = issued["match"]["id"].as_u64().unwrap();
    let challenge = bob_inbox.next_event().await;
    assert_eq!(kind(&challenge), "challenge_issued");
    assert_eq!(challenge["kind"]["challenger"], alice.address.as_str());
    assert_eq!(challenge["kind"]["match_id"].as_u64(), Some(id));
    bob_inbox.close().await;

    let incoming = api.get("/api/challenges", Some(&bob.token)).await.ok();
    assert_eq!(incoming["incoming"][0]["id"].as_u64(), Some(id));
    let accepted = api
        .post(
            &format!("/api/challenges/{id}/accept"),
            Some(&bob.token),
            &json!({}),
        )
        .await
        .ok();
    assert_eq!(accepted["match"]["phase"], "ready");
    assert_eq!(accepted["match"]["turn_address"], alice.address.as_str());

    // Both watch the match: the history first, then every move live.
    let mut watchers = [
        Ws::connect(api, &alice.token).await,
        Ws::connect(api, &bob.token).await,
    ];
    let mut histories = Vec::new();
    for ws in &mut watchers {
        histories.push(ws.subscribe(&format!("match:{id}"), 0).await);
    }
    assert_eq!(histories[0], histories[1]);
    let (history, caught_up) = &histories[0];
    let kinds: Vec<&str> = history.iter().map(kind).collect();
    assert_eq!(
        kinds,
        ["challenge_issued", "challenge_accepted", "game_started"]
    );
    seqs_increasing(history);
    assert_eq!(history.last().unwrap()["seq"].as_u64(), Some(*caught_up));

    let mut last_seq = *caught_up;
    for n in 1..=5u8 {
        let mover = if n % 2 == 1 { &alice } else { &bob };
        let m = nth(&TTT_TOP_ROW, n);
        let acked = api.try_move(mover, id, m).await.ok();
        let acked_moved = &acked["events"][0];
        assert_moved(acked_moved, id, n, m.cell, m.mark);
        // Each watcher has the move before the next one is made: it came live.
        for ws in &mut watchers {
            let event = ws.next_event().await;
            assert_moved(&event, id, n, m.cell, m.mark);
            assert_eq!(
                &event, acked_moved,
                "the same event over HTTP and WebSocket"
            );
            assert!(event["seq"].as_u64().unwrap() > last_seq);
        }
        last_seq = acked_moved["seq"].as_u64().unwrap();
    }
    for ws in &mut watchers {
        let ended = ws.next_event().await;
        assert_eq!(kind(&ended), "game_ended", "{ended}");
        assert_eq!(ended["seq"].as_u64(), Some(last_seq + 1));
        assert_eq!(ended["kind"]["reason"], "win");
        assert_eq!(ended["kind"]["winner"], "first");
        // The winning cells as a bit set: the top row, cells 0, 1 and 2.
        assert_eq!(ended["kind"]["cells"].as_u64(), Some(0b111));
    }
    for ws in watchers {
        ws.close().await;
    }

    let m = api.match_(id).await;
    assert_eq!(m["phase"], "finished");
    assert_eq!(m["board"], "XXXOO----");
    assert_eq!(m["outcome"]["reason"], "win");
    assert_eq!(m["outcome"]["winner"], "first");
    assert_eq!(m["outcome"]["winner_address"], alice.address.as_str());
    assert_eq!(m["outcome"]["cells"], json!([0, 1, 2]));
    let state = api
        .get(&format!("/api/matches/{id}/state"), None)
        .await
        .ok();
    assert_eq!(state["state"], "XXXOO----");

    let a = api.stats(&alice.address).await;
    let b = api.stats(&bob.address).await;
    assert_eq!(
        (a["wins"].as_u64(), a["games"].as_u64(), a["draws"].as_u64()),
        (Some(1), Some(1), Some(0))
    );
    assert_eq!(
        (b["wins"].as_u64(), b["games"].as_u64(), b["draws"].as_u64()),
        (Some(0), Some(1), Some(0))
    );
    assert!(a["rating"]["rating"].as_f64().unwrap() > 1500.0, "{a}");
    assert!(b["rating"]["rating"].as_f64().unwrap() < 1500.0, "{b}");
    assert!(a["rating"]["deviation"].as_f64().unwrap() < 350.0, "{a}");
    assert!(a["active_match"].is_null() && b["active_match"].is_null());
    let me = api.me(&alice).await;
    assert_eq!(me["stats"]["wins"].as_u64(), Some(1));
    assert!(me["active_match"].is_null());
    let board = api.get("/api/leaderboard?by=wins", None).await.ok();
    assert_eq!(board["players"][0]["address"], alice.address.as_str());
}

#[tokio::test]
async fn the_staked_queue_pays_the_sos_contracts_amounts() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner) = server_with_owner(dir.path()).await;
    let api = &server.api;
    let alice = api.login(&new_key()).await;
    let bob = api.login(&new_key()).await;

    // Only the owner deposits.
    api.deposit(&alice, &bob, D).await.expect_error(403, 115);
    for p in [&alice, &bob] {
        api.deposit(&owner, p, D).await.ok();
        assert_eq!(api.balance(p).await, D);
    }
    assert_eq!(api.reserve(&owner).await, (0, 2 * D, 0));
    api.get("/api/ledger/reserve", Some(&alice.token))
        .await
        .expect_error(403, 115);

    // A win: 1.8E of the 2E pot to the winner, 0.2E to the reserve.
    let id = api.queue_pair(&alice, &bob, "sos", E).await;
    assert_eq!(api.balance(&alice).await, D - E);
    assert_eq!(api.balance(&bob).await, D - E);
    assert_eq!(api.reserve(&owner).await.0, 0);
    api.play(&alice, id, nth(&SOS_DIAGONAL, 1)).await;
    api.play(&bob, id, nth(&SOS_DIAGONAL, 2)).await;
    let last = api.try_move(&alice, id, nth(&SOS_DIAGONAL, 3)).await.ok();
    let kinds: Vec<&str> = last["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(kind)
        .collect();
    assert_eq!(kinds, ["moved", "game_ended", "transferred", "transferred"]);
    let payout = &last["events"][2]["kind"]["transfer"];
    assert_eq!(payout["amount"], (E / 10 * 18).to_string());
    assert_eq!(payout["reason"], "payout");
    assert_eq!(payout["to"]["id"], alice.address.as_str());
    assert_eq!(last["match"]["outcome"]["cells"], json!([0, 4, 8]));
    assert_eq!(api.balance(&alice).await, D + E / 10 * 8);
    assert_eq!(api.balance(&bob).await, D - E);
    assert_eq!(api.reserve(&owner).await.0, E / 10 * 2);

    // A tie: 0.9E back to each, 0.2E to the reserve.
    let id = api.queue_pair(&bob, &alice, "sos", E).await;
    for n in 1..=9u8 {
        let mover = if n % 2 == 1 { &bob } else { &alice };
        let m = api.play(mover, id, nth(&SOS_ALL_O, n)).await;
        assert_eq!(m["phase"], if n == 9 { "finished" } else { "in_progress" });
    }
    assert_eq!(api.match_(id).await["outcome"]["reason"], "draw");
    assert_eq!(api.balance(&alice).await, D + E / 10 * 8 - E / 10);
    assert_eq!(api.balance(&bob).await, D - E - E / 10);
    assert_eq!(api.reserve(&owner).await.0, E / 10 * 4);

    // The owner collects the reserve.
    let collected = api
        .post("/api/ledger/collect", Some(&owner.token), &json!({}))
        .await
        .ok();
    assert_eq!(
        collected["events"][0]["kind"]["transfer"]["amount"],
        (E / 10 * 4).to_string()
    );
    assert_eq!(api.balance(&owner).await, E / 10 * 4);
    assert_eq!(api.reserve(&owner).await, (0, 2 * D, 0));
    api.post("/api/ledger/collect", Some(&owner.token), &json!({}))
        .await
        .expect_error(409, 121);
    let total = api.balance(&alice).await + api.balance(&bob).await + api.balance(&owner).await;
    assert_eq!(total, 2 * D, "no money made or lost");

    // The ledger tells the same story, newest first.
    let ledger = api.get("/api/ledger", Some(&alice.token)).await.ok();
    let entries: Vec<(String, String)> = ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["reason"].as_str().unwrap().to_owned(),
                e["amount"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("payout", (E / 10 * 9).to_string()),
        ("stake", format!("-{E}")),
        ("payout", (E / 10 * 18).to_string()),
        ("stake", format!("-{E}")),
        ("deposit", D.to_string()),
    ]
    .into_iter()
    .map(|(r, a)| (r.to_owned(), a))
    .collect();
    assert_eq!(entries, expected);
    let a = api.stats(&alice.address).await;
    assert_eq!(
        (a["wins"].as_u64(), a["games"].as_u64(), a["draws"].as_u64()),
        (Some(1), Some(2), Some(1))
    );
}

#[tokio::test]
async fn waits_and_moves_time_out_on_the_dev_clock() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner) = server_with_owner(dir.path()).await;
    let api = &server.api;
    let alice = api.login(&new_key()).await;
    let bob = api.login(&new_key()).await;
    for p in [&alice, &bob] {
        api.deposit(&owner, p, D).await.ok();
    }

    // A staked wait cannot be cancelled before 120 s.
    let waiting = api.queue(&alice, "sos", E).await.ok();
    let wait_id = waiting["match"]["id"].as_u64().unwrap();
    let early = api.delete("/api/queue", Some(&alice.token)).await;
    early.expect_error(409, 106);
    assert_eq!(early.retry_after, Some(120));
    api.advance(119_000).await;
    let still = api.delete("/api/queue", Some(&alice.token)).await;
    still.expect_error(409, 106);
    assert_eq!(still.retry_after, Some(1));
    api.advance(1_000).await;
    let cancelled = api.delete("/api/queue", Some(&alice.token)).await.ok();
    assert_eq!(cancelled["match"]["id"].as_u64(), Some(wait_id));
    assert_eq!(cancelled["match"]["outcome"]["reason"], "cancelled");
    assert_eq!(
        api.balance(&alice).await,
        D,
        "a cancelled wait refunds in full"
    );
    api.delete("/api/queue", Some(&alice.token))
        .await
        .expect_error(404, 210);

    // A slow opponent: the last mover claims after 60 s and gets 1.9E.
    let id = api.queue_pair(&alice, &bob, "sos", E).await;
    api.play(&alice, id, nth(&SOS_ALL_O, 1)).await;
    let early = api.claim(&alice, id).await;
    early.expect_error(409, 110);
    // "More than 1 minute": the claim is taken from 60.001 s on.
    assert_eq!(early.retry_after, Some(61));
    api.claim(&bob, id).await.expect_error(403, 111);
    api.advance(59_999).await;
    let almost = api.claim(&alice, id).await;
    almost.expect_error(409, 110);
    assert_eq!(almost.retry_after, Some(1));
    api.advance(1).await;
    let exactly = api.claim(&alice, id).await;
    exactly.expect_error(409, 110);
    assert_eq!(exactly.retry_after, Some(1));
    api.advance(1).await;
    api.claim(&bob, id).await.expect_error(403, 111);
    let claimed = api.claim(&alice, id).await;
    assert_eq!(claimed.status, 201, "{}", claimed.body);
    let outcome = &claimed.body["match"]["outcome"];
    assert_eq!(outcome["reason"], "timeout");
    assert_eq!(outcome["winner_address"], alice.address.as_str());
    assert_eq!(api.balance(&alice).await, D - E + E / 10 * 19);
    assert_eq!(api.balance(&bob).await, D - E);
    assert_eq!(api.reserve(&owner).await.0, E / 10);

    // A match whose first move never comes is aborted by the ticker, with full refunds.
    let id = api.queue_pair(&bob, &alice, "sos", E).await;
    let mut ws = Ws::connect(api, &alice.token).await;
    let (history, _) = ws.subscribe(&format!("match:{id}"), 0).await;
    assert_eq!(kind(history.last().unwrap()), "transferred");
    api.advance(60_000).await;
    api.claim(&bob, id).await.expect_error(409, 110);
    api.advance(1).await;
    let (ended, skipped) = ws.until_kind("game_ended").await;
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(ended["kind"]["reason"], "aborted");
    assert!(ended["kind"]["winner"].is_null());
    let mut refunded = Vec::new();
    for _ in 0..2 {
        let refund = ws.next_event().await;
        let t = &refund["kind"]["transfer"];
        assert_eq!(t["reason"], "refund", "{refund}");
        assert_eq!(t["amount"], E.to_string());
        refunded.push(t["to"]["id"].as_str().unwrap().to_owned());
    }
    refunded.sort();
    let mut both = vec![alice.address.clone(), bob.address.clone()];
    both.sort();
    assert_eq!(refunded, both);
    ws.close().await;
    assert_eq!(api.match_(id).await["outcome"]["reason"], "aborted");
    assert_eq!(api.balance(&alice).await, D + E / 10 * 9);
    assert_eq!(api.balance(&bob).await, D - E);
    // Aborted matches are not games.
    let b = api.stats(&bob.address).await;
    assert_eq!(b["games"].as_u64(), Some(1));
}

#[tokio::test]
async fn a_reconnecting_client_catches_up_without_gaps_or_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let Duel {
        server,
        alice,
        bob,
        id,
        topic,
    } = duel(dir.path()).await;
    let api = &server.api;
    let mover = |n: u8| if n % 2 == 1 { &alice } else { &bob };

    let mut seen: Vec<Value> = Vec::new();
    let mut ws = Ws::connect(api, &bob.token).await;
    let (history, _) = ws.subscribe(&topic, 0).await;
    seen.extend(history);
    for n in 1..=2 {
        api.play(mover(n), id, nth(&TTT_SLOW_WIN, n)).await;
        seen.push(ws.next_event().await);
    }
    let last_seen = seen.last().unwrap()["seq"].as_u64().unwrap();
    ws.close().await;

    // Moves while Bob is away.
    for n in 3..=4 {
        api.play(mover(n), id, nth(&TTT_SLOW_WIN, n)).await;
    }

    // He comes back from his last seq while the next move races his subscription.
    let mut ws = Ws::connect(api, &bob.token).await;
    let (caught_up, ack) = tokio::join!(
        ws.subscribe(&topic, last_seen),
        api.play(mover(5), id, nth(&TTT_SLOW_WIN, 5))
    );
    let (mut after, subscribed_at) = caught_up;
    assert!(
        after
            .iter()
            .all(|e| e["seq"].as_u64().unwrap() <= subscribed_at),
        "the catch-up ends where `subscribed` says"
    );
    assert_eq!(ack["seq"].as_u64(), Some(5));
    // Move 5 came either in the catch-up or live right after it; nothing twice.
    while !after
        .iter()
        .any(|e| kind(e) == "moved" && e["kind"]["seq"].as_u64() == Some(5))
    {
        after.push(ws.next_event().await);
    }
    seen.extend(after);
    // Then the rest, live.
    for n in 6..=7 {
        api.play(mover(n), id, nth(&TTT_SLOW_WIN, n)).await;
        seen.push(ws.next_event().await);
    }
    let ended = ws.next_event().await;
    assert_eq!(kind(&ended), "game_ended");
    assert_eq!(ended["kind"]["cells"].as_u64(), Some(0b111 << 6));
    seen.push(ended);
    ws.close().await;

    // Exactly the log: no gap, no duplicate, in order.
    let log = api.match_events(id).await;
    seqs_increasing(&seen);
    assert_eq!(seen, log);
    let moves: Vec<u64> = seen
        .iter()
        .filter(|e| kind(e) == "moved")
        .map(|e| e["kind"]["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(moves, [1, 2, 3, 4, 5, 6, 7]);

    // A subscription from the very end has nothing to catch up on.
    let mut ws = Ws::connect(api, &alice.token).await;
    let end = log.last().unwrap()["seq"].as_u64().unwrap();
    let (nothing, at) = ws.subscribe(&topic, end).await;
    assert!(nothing.is_empty());
    assert_eq!(at, end);
    ws.close().await;

    // The server saw the match begin: its three catch-ups came from memory, none from
    // the log, and they were the log's all the same (above).
    let page = api.metrics().await;
    let catch_ups = |from: &str| {
        let name = format!("triad_catch_ups_total{{from=\"{from}\"}} ");
        page.lines()
            .find_map(|l| l.strip_prefix(name.as_str()))
            .map_or(0.0, |v| v.trim().parse::<f64>().unwrap())
    };
    assert_eq!(
        (catch_ups("memory"), catch_ups("log")),
        (3.0, 0.0),
        "{page}"
    );
    // A node on SQLite has no cluster lock, so none of its metrics.
    let cluster: Vec<&str> = page
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains("triad_cluster_"))
        .collect();
    assert_eq!(cluster, Vec::<&str>::new(), "{page}");
}

/// The sum and count of a histogram (a Prometheus summary) on the metrics page.
fn histogram(page: &str, name: &str) -> (f64, f64) {
    let value = |suffix: &str| {
        page.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}_{suffix} ")))
            .map_or(0.0, |v| v.trim().parse().unwrap())
    };
    (value("sum"), value("count"))
}

#[tokio::test]
async fn concurrent_commands_are_group_committed() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner) = server_with_owner(dir.path()).await;
    let api = &server.api;
    let players = api.players(20).await;
    let (sum_before, count_before) = histogram(&api.metrics().await, "triad_commit_batch_commands");

    const COMMANDS: u64 = 200;
    let deposits = (0..COMMANDS).map(|i| {
        let p = &players[i as usize % players.len()];
        let api: Api = api.clone();
        let owner = owner.clone();
        let p = p.clone();
        async move { api.deposit(&owner, &p, 1 + i).await }
    });
    for r in futures_util::future::join_all(deposits).await {
        r.ok();
    }

    let page = api.metrics().await;
    let (sum, count) = histogram(&page, "triad_commit_batch_commands");
    let (commands, commits) = (sum - sum_before, count - count_before);
    assert_eq!(commands, COMMANDS as f64, "every deposit committed once");
    assert!(
        commits < commands,
        "{commands} commands took {commits} commits: no group commit"
    );
    assert!(commits >= 1.0);
    eprintln!(
        "group commit: {commands} commands in {commits} commits ({:.1} per commit)",
        commands / commits
    );
    assert!(page.contains("triad_commit_seconds"));
    assert!(page.contains("triad_http_requests_total"));

    // And every deposit landed exactly once.
    let mut total = 0;
    for (n, p) in players.iter().enumerate() {
        let expected: u64 = (0..COMMANDS)
            .filter(|i| *i as usize % players.len() == n)
            .map(|i| 1 + i)
            .sum();
        assert_eq!(api.balance(p).await, expected);
        total += expected;
    }
    assert_eq!(api.reserve(&owner).await, (0, total, 0));
}

#[tokio::test]
async fn a_database_from_a_newer_triad_is_refused() {
    use sqlx::Connection as _;

    let dir = tempfile::tempdir().unwrap();
    let owner = new_key().address_string();
    let mut server = Server::start(dir.path(), &owner, &[]).await;
    assert!(server.terminate().await.success());

    // A newer Triad migrated this database to schema 999.
    let url = format!("sqlite://{}", server.db().display());
    let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (999, 'from the future', TRUE, X'00', 0)",
    )
    .execute(&mut db)
    .await
    .unwrap();
    db.close().await.unwrap();

    let (status, _, stderr) = run_to_exit(
        serve_command(dir.path(), &owner, &[]),
        dir.path(),
        "newer-schema",
    )
    .await;
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("newer version of Triad") && stderr.contains("999"),
        "the error names a newer Triad and the version: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test]
async fn keygen_writes_a_private_key_file_that_whoami_and_serve_read() {
    use std::os::unix::fs::PermissionsExt as _;

    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("keys").join("key.json");
    let triad = |args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_triad"));
        cmd.args(args).env("TRIAD_KEY_FILE", &key_file);
        cmd
    };

    let (status, address, stderr) = run_to_exit(triad(&["keygen"]), dir.path(), "keygen").await;
    assert!(status.success(), "{stderr}");
    let address = address.trim().to_owned();
    assert!(
        address.len() == 66 && address.starts_with("0x"),
        "{address}"
    );
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the key file is private");
    let written = std::fs::read(&key_file).unwrap();

    let (status, whoami, stderr) = run_to_exit(triad(&["whoami"]), dir.path(), "whoami").await;
    assert!(status.success(), "{stderr}");
    assert_eq!(whoami.trim(), address);
    let (status, whoami, _) = run_to_exit(
        triad(&["whoami", "--key-file", key_file.to_str().unwrap()]),
        dir.path(),
        "whoami-flag",
    )
    .await;
    assert!(status.success());
    assert_eq!(whoami.trim(), address);

    // A second keygen does not overwrite the key.
    let (status, _, stderr) = run_to_exit(triad(&["keygen"]), dir.path(), "keygen-again").await;
    assert!(!status.success());
    assert!(!stderr.is_empty());
    assert_eq!(std::fs::read(&key_file).unwrap(), written);

    // Without --owner, the server's own key is the owner.
    let key = triad_identity::KeyFile::load(&key_file).unwrap();
    assert_eq!(key.address_string(), address);
    let server = Server::start_with_env(
        dir.path(),
        "",
        &[],
        &[("TRIAD_KEY_FILE", key_file.to_str().unwrap())],
    )
    .await;
    let owner = server.api.login(&key).await;
    assert_eq!(server.api.me(&owner).await["owner"], true);
    let other = server.api.login(&new_key()).await;
    assert_eq!(server.api.me(&other).await["owner"], false);
    server.api.deposit(&owner, &other, 5).await.ok();
    assert_eq!(amount(&server.api.me(&other).await["balance"]), 5);
}

#[tokio::test]
async fn moves_sent_on_the_websocket_are_checked_acked_and_seen_live_like_http_moves() {
    let dir = tempfile::tempdir().unwrap();
    let Duel {
        server,
        alice,
        bob,
        id,
        topic,
    } = duel(dir.path()).await;
    let api = &server.api;
    let mut a = Ws::connect(api, &alice.token).await;
    let mut b = Ws::connect(api, &bob.token).await;
    let (_, mut last) = a.subscribe(&topic, 0).await;
    b.subscribe(&topic, 0).await;
    let send_move = |n: u8, reference: &str| {
        let m = nth(&TTT_SLOW_WIN, n);
        json!({ "type": "move", "ref": reference, "match_id": id, "seq": m.seq, "cell": m.cell, "mark": m.mark })
    };

    for n in 1..=7u8 {
        let (mover, other) = if n % 2 == 1 {
            (&mut a, &mut b)
        } else {
            (&mut b, &mut a)
        };
        let m = nth(&TTT_SLOW_WIN, n);
        let reference = format!("move-{n}");
        mover.send(send_move(n, &reference)).await;
        // The mover gets the move's events first, then the ack naming them.
        let mut seen = Vec::new();
        let ack = loop {
            let frame = mover.next_json().await;
            match frame["type"].as_str() {
                Some("event") => seen.push(frame["event"].clone()),
                Some("ack") => break frame,
                _ => panic!("unexpected frame: {frame}"),
            }
        };
        assert_eq!(ack["ref"], reference.as_str(), "{ack}");
        assert_eq!(ack["match_id"].as_u64(), Some(id), "{ack}");
        assert_eq!(ack["duplicate"], false, "{ack}");
        let seqs: Vec<u64> = seen.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        assert_eq!(ack["event_seqs"], json!(seqs), "{ack}");
        assert_moved(&seen[0], id, n, m.cell, m.mark);
        assert!(seqs[0] > last);
        last = *seqs.last().unwrap();
        // The opponent sees the same events, live.
        for event in &seen {
            assert_eq!(&other.next_event().await, event);
        }
        if n == 7 {
            assert_eq!(kind(&seen[1]), "game_ended", "{seen:?}");
            assert_eq!(seen[1]["kind"]["reason"], "win");
        }
        if n == 3 {
            // Out of turn: the same refusal as over HTTP, with the ref; nothing changes.
            let http = api.try_move(&alice, id, nth(&TTT_SLOW_WIN, 4)).await;
            a.send(send_move(4, "early")).await;
            let refused = a.next_json().await;
            assert_eq!(refused["type"], "error", "{refused}");
            assert_eq!(refused["ref"], "early", "{refused}");
            assert_eq!(
                refused["code"], http.body["code"],
                "{refused} {}",
                http.body
            );
            assert_eq!(
                refused["code"].as_u64(),
                Some(2),
                "not your turn: {refused}"
            );
            // A resent move is a duplicate: acked, no new event.
            a.send(send_move(3, "again")).await;
            let again = a.next_json().await;
            assert_eq!(again["type"], "ack", "{again}");
            assert_eq!(
                (again["ref"].as_str(), &again["duplicate"]),
                (Some("again"), &json!(true))
            );
            assert_eq!(again["event_seqs"], json!([]), "{again}");
        }
    }
    let m = api.match_(id).await;
    assert_eq!(m["phase"], "finished");
    assert_eq!(m["outcome"]["winner_address"], alice.address.as_str());
    assert_eq!(
        api.match_events(id).await.last().unwrap()["seq"].as_u64(),
        Some(last)
    );

    // A ref over 128 bytes is refused; so is a move from a socket that never logged in, and
    // a socket whose session ended is closed (a logout ends what its sockets may do).
    a.send(json!({ "type": "move", "ref": "r".repeat(129), "match_id": id, "seq": 8, "cell": 5, "mark": "O" }))
        .await;
    let long = a.next_json().await;
    assert_eq!(
        (long["type"].as_str(), long["error"].as_str()),
        (Some("error"), Some("bad_request")),
        "{long}"
    );
    let mut anonymous = Ws::connect_anonymous(api).await;
    anonymous
        .send(json!({ "type": "move", "ref": 1, "match_id": id, "seq": 8, "cell": 5, "mark": "O" }))
        .await;
    let unauthed = anonymous.next_json().await;
    assert_eq!(unauthed["type"], "error", "{unauthed}");
    assert_eq!(
        unauthed["error"], "bad_request",
        "a ref must be a string: {unauthed}"
    );
    anonymous
        .send(
            json!({ "type": "move", "ref": "x", "match_id": id, "seq": 8, "cell": 5, "mark": "O" }),
        )
        .await;
    let unauthed = anonymous.next_json().await;
    assert_eq!(
        (unauthed["error"].as_str(), unauthed["ref"].as_str()),
        (Some("unauthorized"), Some("x")),
        "{unauthed}"
    );
    api.post("/api/auth/logout", Some(&bob.token), &json!({}))
        .await
        .ok();
    b.send(
        json!({ "type": "move", "ref": "late", "match_id": id, "seq": 8, "cell": 5, "mark": "O" }),
    )
    .await;
    // The logout closed the socket (4001) before its move was read: nothing it opened
    // goes on.
    assert_eq!(b.expect_close().await, 4001);

    // /metrics counts the socket's moves by outcome: 7 played and the duplicate, the move
    // out of turn and the unauthenticated one (the logged-out socket was closed before
    // its move). (The over-long ref and
    // the unreadable message are refused before they are moves.)
    let metrics = api.metrics().await;
    let count = |outcome: &str| -> u64 {
        let line = format!("triad_ws_moves_total{{outcome=\"{outcome}\"}} ");
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(&line))
            .map_or(0, |n| n.trim().parse().unwrap())
    };
    assert_eq!(count("ok"), 8, "{metrics}");
    assert_eq!(count("not_your_turn"), 1, "{metrics}");
    assert_eq!(count("unauthorized"), 1, "{metrics}");
    assert_eq!(count("invalid_token"), 0, "{metrics}");
}

/// The server forgets a finished match once its retention is over. A move sent on the
/// socket for it is then told, as over HTTP, that the game is over, not that no match has
/// that id; only the repeat of the winning move, which was its duplicate, is told so too.
#[tokio::test]
async fn a_move_on_the_websocket_for_a_match_forgotten_since_it_ended_is_told_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let owner = new_key();
    let server = Server::start_with_env(
        dir.path(),
        &owner.address_string(),
        &[],
        &[("TRIAD_FINISHED_RETENTION_MS", "1000")],
    )
    .await;
    let api = &server.api;
    let alice = api.login(&new_key()).await;
    let bob = api.login(&new_key()).await;
    let id = api.challenge_accepted(&alice, &bob, "tic-tac-toe", 0).await;
    for n in 1..=7u8 {
        let mover = if n % 2 == 1 { &alice } else { &bob };
        api.play(mover, id, nth(&TTT_SLOW_WIN, n)).await;
    }
    let winning = nth(&TTT_SLOW_WIN, 7);
    let on_socket = |reference: &str, m: Mv| json!({ "type": "move", "ref": reference, "match_id": id, "seq": m.seq, "cell": m.cell, "mark": m.mark });
    let late = Mv {
        seq: 8,
        cell: 5,
        mark: "O",
    };
    let mut a = Ws::connect(api, &alice.token).await;
    let mut b = Ws::connect(api, &bob.token).await;
    // The error frame of a refused move: (ref, error, code).
    async fn refusal(ws: &mut Ws) -> (String, String, u64) {
        let frame = ws.next_json().await;
        assert_eq!(frame["type"], "error", "{frame}");
        (
            frame["ref"].as_str().unwrap_or_default().to_owned(),
            frame["error"].as_str().unwrap_or_default().to_owned(),
            frame["code"].as_u64().expect("a code"),
        )
    }
    let game_over = |reference: &str| (reference.to_owned(), "game_over".to_owned(), 0);

    // While the match is in memory: a late move is refused, the winning move's repeat is
    // its duplicate.
    b.send(on_socket("late", late)).await;
    assert_eq!(refusal(&mut b).await, game_over("late"));
    a.send(on_socket("again", winning)).await;
    let again = a.next_json().await;
    assert_eq!(
        (again["type"].as_str(), &again["duplicate"]),
        (Some("ack"), &json!(true)),
        "{again}"
    );

    // The clock sweeps it: the winning move's repeat over HTTP stops being a duplicate.
    api.advance(triad_engine::Engine::SWEEP_EVERY_MS + 1_000)
        .await;
    api.poll("the server to forget the finished match", || async {
        let r = api.try_move(&alice, id, winning).await;
        (r.status != 200).then_some(r)
    })
    .await
    .expect_error(409, 0);

    b.send(on_socket("late", late)).await;
    assert_eq!(refusal(&mut b).await, game_over("late"));
    a.send(on_socket("again", winning)).await;
    assert_eq!(refusal(&mut a).await, game_over("again"));
    // A match that never was is still unknown.
    b.send(json!({ "type": "move", "ref": "none", "match_id": id + 1_000, "seq": 1, "cell": 0, "mark": "X" }))
        .await;
    assert_eq!(
        refusal(&mut b).await,
        ("none".to_owned(), "unknown_match".to_owned(), 100)
    );
}

/// A log written to a file is plain text: colours are for a terminal only.
#[tokio::test]
async fn the_log_of_a_server_writing_to_a_file_has_no_escape_codes() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _owner) = server_with_owner(dir.path()).await;
    let _player = server.api.login(&new_key()).await;
    let log = std::fs::read_to_string(dir.path().join("server-1.log")).unwrap();
    assert!(log.lines().count() > 0, "the server logged nothing");
    assert!(!log.contains('\u{1b}'), "escape codes in the log:\n{log}");
}
