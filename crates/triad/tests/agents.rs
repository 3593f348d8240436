//! Agents end to end: real `triad agent` processes playing through a real `triad serve`,
//! the A2A tic-tac-toe protocol's example game sent with `triad apps send` and read with `triad
//! apps inbox`, and the agents' inbox on the WebSocket.

mod support;

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use support::{Server, Ws, new_key};
use triad_identity::KeyFile;

/// How long the 100 games may take before the test fails (they take a few seconds).
const GAMES_WAIT: Duration = Duration::from_secs(240);

/// A `triad` command with nothing from the environment but the server.
fn triad(server: &Server, key: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_triad"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("TRIAD_") {
            cmd.env_remove(name);
        }
    }
    cmd.env("TRIAD_SERVER", &server.api.base)
        .env("TRIAD_KEY_FILE", key)
        .stdin(Stdio::null());
    cmd
}

fn save_key(dir: &Path, name: &str) -> (PathBuf, KeyFile) {
    let key = new_key();
    let path = dir.join(format!("{name}.json"));
    key.save(&path, false).expect("the key is saved");
    (path, key)
}

struct Agent {
    name: &'static str,
    child: Child,
    out: PathBuf,
    err: PathBuf,
}

impl Agent {
    fn spawn(server: &Server, dir: &Path, name: &'static str, key: &Path, args: &[&str]) -> Agent {
        let out = dir.join(format!("{name}.out"));
        let err = dir.join(format!("{name}.err"));
        let child = triad(server, key)
            .arg("agent")
            .args(args)
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("triad agent starts");
        Agent {
            name,
            child,
            out,
            err,
        }
    }

    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn log(&self) -> String {
        format!(
            "--- {} stdout ---\n{}\n--- {} stderr ---\n{}",
            self.name,
            std::fs::read_to_string(&self.out).unwrap_or_default(),
            self.name,
            std::fs::read_to_string(&self.err).unwrap_or_default()
        )
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for every agent to exit; on a timeout, fails with their logs.
async fn wait_all(agents: &mut [Agent]) -> Vec<ExitStatus> {
    let started = Instant::now();
    let mut statuses: Vec<Option<ExitStatus>> = vec![None; agents.len()];
    while statuses.iter().any(Option::is_none) {
        for (agent, status) in agents.iter_mut().zip(statuses.iter_mut()) {
            if status.is_none() {
                *status = agent.child.try_wait().expect("the agent can be waited for");
            }
        }
        if started.elapsed() > GAMES_WAIT {
            let logs: String = agents.iter().map(Agent::log).collect();
            panic!("the agents did not finish within {GAMES_WAIT:?}:\n{logs}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    statuses.into_iter().map(Option::unwrap).collect()
}

/// `(won, lost, drew, aborted)` from an agent's game lines, checking each line agrees with
/// the referee.
fn tally(agent: &Agent) -> (u32, u32, u32, u32) {
    let mut t = (0, 0, 0, 0);
    for line in agent.lines().iter().filter(|l| l.starts_with("game ")) {
        assert!(line.contains("; referee: "), "{line}");
        assert!(!line.contains("DISAGREES"), "{line}\n{}", agent.log());
        if line.contains(": won (") {
            t.0 += 1;
        } else if line.contains(": lost (") {
            t.1 += 1;
        } else if line.contains(": drew (") {
            t.2 += 1;
        } else if line.contains(": aborted (") {
            t.3 += 1;
        } else {
            panic!("unexpected game line: {line}");
        }
    }
    t
}

async fn player(server: &Server, address: &str) -> Value {
    server
        .api
        .get(&format!("/api/players/{address}"), None)
        .await
        .ok()
}

#[tokio::test]
async fn two_pairs_of_agents_play_100_games_through_a_real_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "", &[]).await;
    let started = Instant::now();
    let (host_a, key_a) = save_key(dir.path(), "host-a");
    let (guest_a, key_ga) = save_key(dir.path(), "guest-a");
    let (host_b, key_b) = save_key(dir.path(), "host-b");
    let (guest_b, key_gb) = save_key(dir.path(), "guest-b");
    let a = key_a.address_string();
    let b = key_b.address_string();
    // Pair A: perfect against perfect; pair B: perfect against random. The guests propose,
    // alternating X and O, so each strategy plays both sides.
    let mut agents = vec![
        Agent::spawn(
            &server,
            dir.path(),
            "host-a",
            &host_a,
            &["--strategy", "perfect", "--games", "50", "--seed", "1"],
        ),
        Agent::spawn(
            &server,
            dir.path(),
            "host-b",
            &host_b,
            &[
                "--strategy",
                "perfect",
                "--games",
                "50",
                "--seed",
                "2",
                "--app",
                "tic-tac-toe",
            ],
        ),
        Agent::spawn(
            &server,
            dir.path(),
            "guest-a",
            &guest_a,
            &[
                "--challenge",
                &a,
                "--strategy",
                "perfect",
                "--games",
                "50",
                "--seed",
                "3",
            ],
        ),
        Agent::spawn(
            &server,
            dir.path(),
            "guest-b",
            &guest_b,
            &[
                "--challenge",
                &b,
                "--strategy",
                "random",
                "--games",
                "50",
                "--seed",
                "4",
            ],
        ),
    ];
    let statuses = wait_all(&mut agents).await;
    let elapsed = started.elapsed();
    for (agent, status) in agents.iter().zip(&statuses) {
        assert!(status.success(), "{} failed:\n{}", agent.name, agent.log());
        let games = agent
            .lines()
            .iter()
            .filter(|l| l.starts_with("game "))
            .count();
        assert_eq!(
            games,
            50,
            "{} logged 50 games:\n{}",
            agent.name,
            agent.log()
        );
    }
    // Perfect against perfect always draws.
    assert_eq!(tally(&agents[0]), (0, 0, 50, 0));
    assert_eq!(tally(&agents[2]), (0, 0, 50, 0));
    // Perfect never loses to random (and the two logs mirror each other).
    let (won, lost, drew, aborted) = tally(&agents[1]);
    assert_eq!((lost, aborted), (0, 0), "{}", agents[1].log());
    assert!(
        won > 0,
        "perfect beats random now and then: {won} won, {drew} drawn"
    );
    assert_eq!(tally(&agents[3]), (0, won, drew, 0));
    // The referee's records: the hall of fame and the ratings.
    let ga = player(&server, &key_ga.address_string()).await;
    assert_eq!(
        (
            ga["games"].as_u64(),
            ga["draws"].as_u64(),
            ga["wins"].as_u64()
        ),
        (Some(50), Some(50), Some(0))
    );
    let hb = player(&server, &b).await;
    assert_eq!(
        (hb["games"].as_u64(), hb["wins"].as_u64()),
        (Some(50), Some(u64::from(won)))
    );
    let gb = player(&server, &key_gb.address_string()).await;
    assert_eq!(gb["wins"].as_u64(), Some(0));
    // `triad agent` logs in as a bot: every one of the four is marked one.
    for account in [&ga, &hb, &gb, &player(&server, &a).await] {
        assert_eq!(account["bot"], true, "{account}");
    }
    assert!(hb["rating"]["rating"].as_f64() > gb["rating"]["rating"].as_f64());
    eprintln!("100 games by four agents in {elapsed:?}");
    assert!(
        elapsed < Duration::from_secs(60),
        "the 100 games took {elapsed:?}"
    );
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let output = cmd.output().expect("triad runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The A2A tic-tac-toe protocol's example game (see `testdata/README.md`) with `triad` in
/// place of `reef`, as the README shows it.
#[tokio::test]
async fn the_a2a_example_game_with_triad_apps_send_and_inbox() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "", &[]).await;
    let (alice_key, alice) = save_key(dir.path(), "alice");
    let (bob_key, bob) = save_key(dir.path(), "bob");
    let (alice, bob) = (alice.address_string(), bob.address_string());
    let spec = include_str!("../../../testdata/a2a-tic-tac-toe.md");
    let example = &spec[spec.find("## Example Game").unwrap()..];
    let mut sent = 0;
    for line in example.lines().filter(|l| l.contains("reef apps send ")) {
        let (who, command) = line.split_once('→').unwrap();
        let (key, to) = if who.trim() == "Alice" {
            (&alice_key, &bob)
        } else {
            (&bob_key, &alice)
        };
        let start = command.find("--payload '").unwrap() + "--payload '".len();
        let payload = &command[start..command[start..].find('\'').unwrap() + start];
        let words: Vec<&str> = command.split_whitespace().collect();
        let (ok, out, err) = run(triad(&server, key).args([
            "apps",
            "send",
            to,
            words[4],
            words[5],
            "--payload",
            payload,
        ]));
        assert!(ok, "{line}: {err}");
        assert!(out.starts_with("sent #"), "{out}");
        sent += 1;
        // The recipient reads it at once, board drawn under each move.
        let reader = if key == &alice_key {
            &bob_key
        } else {
            &alice_key
        };
        let (ok, out, err) = run(triad(&server, reader).args(["apps", "inbox"]));
        assert!(ok, "{err}");
        assert_eq!(
            out.lines().filter(|l| l.starts_with('#')).count(),
            1,
            "{out}"
        );
        assert!(out.contains(payload), "{out} shows {payload}");
        if words[5] == "move" {
            assert_eq!(
                out.lines().filter(|l| l.contains(" | ")).count(),
                3,
                "{out}"
            );
        }
        assert!(out.contains("[signed]"), "{out}");
    }
    assert_eq!(sent, 8);
    assert!(err_free_last_line(&server, &alice_key));
    // The referee recorded Alice's win.
    let stats = server
        .api
        .get(&format!("/api/players/{alice}"), None)
        .await
        .ok();
    assert_eq!(
        (stats["wins"].as_u64(), stats["games"].as_u64()),
        (Some(1), Some(1))
    );
    // A move after the end is refused, with the reason, and the exit status says so.
    let (ok, _, err) = run(triad(&server, &bob_key).args([
        "apps", "send", &alice, "tic-tac-toe", "move", "--payload",
        r#"{"seq":6,"replyTo":5,"position":3,"mark":"O","board":["X","O","O","O","X","","","","X"]}"#,
    ]));
    assert!(!ok);
    assert!(err.contains("game_over (0, HTTP 409)"), "{err}");
    // A malformed payload is refused before it leaves.
    let (ok, _, err) = run(triad(&server, &bob_key).args([
        "apps",
        "send",
        &alice,
        "tic-tac-toe",
        "move",
        "--payload",
        r#"{"seq":1}"#,
    ]));
    assert!(!ok && err.contains("replyTo is missing"), "{err}");
    // --all reads everything again, as JSON lines; the saved position does not move.
    let (ok, out, _) = run(triad(&server, &bob_key).args(["apps", "inbox", "--all", "--json"]));
    assert!(ok);
    let actions: Vec<String> = out
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["action"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(actions, ["propose", "move", "move", "move", "result"]);
    let (ok, _, err) = run(triad(&server, &bob_key).args(["apps", "inbox"]));
    assert!(ok && err.contains("no new messages"), "{err}");
    // The manifest is the specification's front matter.
    let (ok, out, _) = run(triad(&server, &bob_key).args(["apps", "manifest"]));
    assert!(ok && spec.starts_with(&out), "{out}");
}

/// `triad apps inbox` for someone with nothing new says so on stderr and succeeds.
fn err_free_last_line(server: &Server, key: &Path) -> bool {
    let (ok, out, err) = run(triad(server, key).args(["apps", "inbox"]));
    ok && out.is_empty() && err.contains("no new messages")
}

#[tokio::test]
async fn the_websocket_topic_apps_streams_the_inbox_from_a_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "", &[]).await;
    let alice = server.api.login(&new_key()).await;
    let bob = server.api.login(&new_key()).await;
    let send = |payload: Value, action: &str| {
        let api = server.api.clone();
        let (token, to) = (alice.token.clone(), bob.address.clone());
        let action = action.to_owned();
        async move {
            api.post(
                "/api/apps/messages",
                Some(&token),
                &json!({"to": to, "appId": "tic-tac-toe", "action": action, "payload": payload}),
            )
            .await
            .ok()
        }
    };
    let first = send(json!({"seq":0,"role":"X","gameId":"w1"}), "propose").await;
    let first_id = first["id"].as_u64().unwrap();

    let mut ws = Ws::connect(&server.api, &bob.token).await;
    ws.send(json!({"type": "subscribe", "topic": "apps", "since": 0}))
        .await;
    let frame = ws.next_json().await;
    assert_eq!(frame["type"], "app_message", "{frame}");
    assert_eq!(frame["topic"], format!("apps:{}", bob.address));
    assert_eq!(frame["seq"].as_u64(), Some(first_id));
    assert_eq!(
        frame["message"]["payload"],
        json!({"seq":0,"role":"X","gameId":"w1"})
    );
    assert_eq!(frame["message"]["from"], alice.address.as_str());
    let subscribed = ws.next_json().await;
    assert_eq!(
        (subscribed["type"].as_str(), subscribed["seq"].as_u64()),
        (Some("subscribed"), Some(first_id))
    );
    // Live: Bob accepts; Alice's move arrives on Bob's socket as it is relayed.
    server
        .api
        .post(
            "/api/apps/messages",
            Some(&bob.token),
            &json!({"to": alice.address, "appId": "tic-tac-toe", "action": "accept", "payload": {"seq":0,"role":"O","gameId":"w1"}}),
        )
        .await
        .ok();
    let moved = send(
        json!({"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""],"gameId":"w1"}),
        "move",
    )
    .await;
    let frame = ws.next_json().await;
    assert_eq!(frame["type"], "app_message", "{frame}");
    assert_eq!(frame["seq"], moved["id"]);
    assert_eq!(frame["message"]["action"], "move");
    ws.close().await;
    // Reconnecting from the first message's id: only what came after it.
    let mut ws = Ws::connect(&server.api, &bob.token).await;
    ws.send(json!({"type": "subscribe", "topic": "apps", "since": first_id}))
        .await;
    let frame = ws.next_json().await;
    assert_eq!(frame["message"]["action"], "move", "{frame}");
    assert_eq!(ws.next_json().await["type"], "subscribed");
    // Someone else's agents' inbox is not a topic; without a login there is none.
    let mut anonymous = Ws::connect(&server.api, &alice.token).await;
    anonymous
        .send(json!({"type": "subscribe", "topic": format!("apps:{}", bob.address), "since": 0}))
        .await;
    assert_eq!(anonymous.next_json().await["type"], "error");
}

/// An opponent that goes silent loses on the referee's clock (the server's move timeout):
/// the agent claims the win (the on-chain SOS contract's `ur2slow`) instead of calling the game
/// off, and its game line is the referee's record.
#[tokio::test]
async fn an_agent_whose_opponent_goes_silent_claims_the_win_by_timeout() {
    silent_opponent(&[]).await;
}

/// The same when the server ends slow players' games itself: the agent finds the game over
/// and logs the referee's record, where it used to send an abort the referee refused.
#[tokio::test]
async fn an_agent_whose_opponent_goes_silent_takes_the_servers_automatic_timeout() {
    silent_opponent(&["--automatic-timeouts", "true"]).await;
}

/// Bob proposes to an agent, makes one move and falls silent until his time runs out.
async fn silent_opponent(server_args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    // An owner, for the dev clock (only the owner may move it).
    let owner = new_key().address_string();
    let server = Server::start(dir.path(), &owner, server_args).await;
    let (ann_key, ann) = save_key(dir.path(), "ann");
    let (bob_key, _) = save_key(dir.path(), "bob");
    let ann_address = ann.address_string();
    let mut agents = [Agent::spawn(
        &server,
        dir.path(),
        "ann",
        &ann_key,
        &["--games", "1", "--patience", "3", "--seed", "1"],
    )];
    let bob_sends = |action: &str, payload: &str| {
        let (ok, _, err) = run(triad(&server, &bob_key).args([
            "apps",
            "send",
            &ann_address,
            "tic-tac-toe",
            action,
            "--payload",
            payload,
        ]));
        assert!(ok, "{action}: {err}");
    };
    // Until match 1 has `seq` moves (0: until Ann has accepted).
    let until_moves = |seq: u64| {
        let server = &server;
        let agents = &agents;
        async move {
            let started = Instant::now();
            loop {
                let view = server.api.get("/api/matches/1", None).await.body;
                if view["phase"] != "waiting" && view["seq"].as_u64() == Some(seq) {
                    return;
                }
                assert!(
                    started.elapsed() < GAMES_WAIT,
                    "{view}\n{}",
                    agents[0].log()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    // Bob proposes as X, makes his first move once Ann accepts, and then never moves again.
    bob_sends("propose", r#"{"seq":0,"role":"X"}"#);
    until_moves(0).await;
    bob_sends(
        "move",
        r#"{"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}"#,
    );
    until_moves(2).await;
    // Bob's time runs out (the move timeout is 60 s). When Ann's patience (3 s) runs out
    // too, she asks the referee rather than call the game off.
    server.api.advance(61_000).await;
    let statuses = wait_all(&mut agents).await;
    let [ann] = &agents;
    assert!(statuses[0].success(), "{}", ann.log());
    let games: Vec<String> = ann
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("game "))
        .collect();
    assert_eq!(games.len(), 1, "{}", ann.log());
    assert!(
        games[0].contains(": won (the referee ended it after 2 moves")
            && games[0].ends_with("; referee: win by O (timeout)"),
        "{}",
        ann.log()
    );
    assert_eq!(tally(ann), (1, 0, 0, 0));
    assert!(!ann.log().contains("aborting"), "{}", ann.log());
}

#[tokio::test]
async fn four_agents_play_a_swiss_tournament_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let server = Server::start(
        dir.path(),
        &owner_key.address_string(),
        &["--tournament-round-gap-ms", "300"],
    )
    .await;
    let owner = server.api.login(&owner_key).await;
    let created = server
        .api
        .post(
            "/api/tournaments",
            Some(&owner.token),
            &json!({"name": "Bots' Swiss", "game": "tic-tac-toe", "format": "swiss",
                    "rounds": 3, "starts_in_seconds": 60, "entry": "bots"}),
        )
        .await
        .ok();
    let id = created["tournament"]["id"].as_u64().unwrap();
    let names = ["ann", "bob", "cat", "dan"];
    let strategies = ["perfect", "casual", "random", "random"];
    let mut agents: Vec<Agent> = names
        .iter()
        .zip(strategies)
        .enumerate()
        .map(|(i, (name, strategy))| {
            let (key, _) = save_key(dir.path(), name);
            let seed = i.to_string();
            let args = [
                "--tournament",
                &id.to_string(),
                "--strategy",
                strategy,
                "--seed",
                &seed,
            ]
            .map(str::to_owned);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            Agent::spawn(&server, dir.path(), name, &key, &args)
        })
        .collect();
    // Every agent entered (as a bot: the tournament takes bots only), then the clock
    // starts it.
    server
        .api
        .poll("four entrants", || async {
            let t = server
                .api
                .get(&format!("/api/tournaments/{id}"), None)
                .await
                .ok();
            (t["players"] == 4).then_some(())
        })
        .await;
    server.api.advance(60_000).await;
    // The dev clock stands still unless moved: a second every 200 ms lets the rounds
    // come (300 ms apart) while the agents, who move at once, never run out of time.
    let clock = {
        let api = server.api.clone();
        tokio::spawn(async move {
            loop {
                api.advance(1_000).await;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    };
    let statuses = wait_all(&mut agents).await;
    clock.abort();
    for (agent, status) in agents.iter().zip(statuses) {
        assert!(status.success(), "{}", agent.log());
        let err = std::fs::read_to_string(&agent.err).unwrap();
        assert!(
            err.contains(&format!("tournament {id} finished: rank ")),
            "{}",
            agent.log()
        );
    }
    let t = server
        .api
        .get(&format!("/api/tournaments/{id}"), None)
        .await
        .ok();
    assert_eq!(t["phase"], "finished");
    assert_eq!(t["round"], 3);
    let standings = t["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 4);
    // Three rounds of two games: twelve points given out, every player a bot.
    let points: u64 = standings.iter().map(|s| s["score"].as_u64().unwrap()).sum();
    assert_eq!(points, 12);
    assert!(standings.iter().all(|s| s["player"]["bot"] == true));
    let winner = t["winner"].as_str().unwrap();
    assert_eq!(player(&server, winner).await["tournament_wins"], 1);

    // Every move the agents made is signed by its agent: each of the winner's games has a
    // transcript that `triad verify` checks with all of its moves signed by their players.
    let games = server
        .api
        .get(&format!("/api/matches?player={winner}&limit=10"), None)
        .await
        .ok();
    let games = games["matches"].as_array().unwrap();
    assert_eq!(games.len(), 3, "one game a round: {games:?}");
    let mut signed = 0;
    for game in games {
        let id = game["id"].as_u64().unwrap().to_string();
        let file = dir.path().join(format!("transcript-{id}.json"));
        let file = file.to_str().unwrap();
        let base = server.api.base.as_str();
        let key = dir.path().join("ann.json");
        let fetched = triad(&server, &key)
            .args(["transcript", &id, "--server", base, "-o", file])
            .output()
            .unwrap();
        assert!(fetched.status.success(), "{fetched:?}");
        let verified = triad(&server, &key)
            .args(["verify", file, "--server", base])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&verified.stdout);
        assert!(verified.status.success(), "{verified:?}");
        let line = out
            .lines()
            .find(|l| l.contains("moves signed by their players"))
            .unwrap_or_else(|| panic!("match {id}: {out}"));
        let counts: Vec<u32> = line
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        assert_eq!(counts.len(), 2, "{line}");
        assert_eq!(counts[0], counts[1], "match {id}: {line}");
        signed += counts[0];
    }
    assert!(signed >= 5, "moves were made, and signed: {signed}");
}
