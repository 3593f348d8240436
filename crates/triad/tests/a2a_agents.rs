//! `triad agent --a2a` end to end: a `triad agent` process plays whole games over A2A
//! against another Triad node's computer (`triad serve`), in A2A 1.0 and in 0.3; and against
//! a fake A2A agent that cheats, which it must catch.

mod support;

use std::{
    path::{Path, PathBuf},
    process::{Command, ExitStatus, Stdio},
    sync::{Arc, Mutex},
};

use axum::{Json, Router, extract::State, http::HeaderMap, routing::get, routing::post};
use serde_json::{Value, json};
use support::{Server, new_key, run_to_exit};

/// `triad agent --a2a <url> …` with nothing from the environment.
fn agent(dir: &Path, key: &Path, url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_triad"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("TRIAD_") {
            cmd.env_remove(name);
        }
    }
    cmd.current_dir(dir)
        .arg("agent")
        .args(["--a2a", url, "--key-file"])
        .arg(key)
        .args(args)
        .stdin(Stdio::null());
    cmd
}

fn save_key(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}-key.json"));
    new_key().save(&path, false).expect("the key is saved");
    path
}

/// The game lines an agent printed.
fn games(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("game ")).collect()
}

/// Runs the agent to its end: `(status, stdout, stderr)`.
async fn play(dir: &Path, url: &str, args: &[&str], name: &str) -> (ExitStatus, String, String) {
    let key = save_key(dir, name);
    run_to_exit(agent(dir, &key, url, args), dir, name).await
}

/// Every game of `out` ended with `outcome` (`drew`, `won`, …), in that version.
fn assert_all(out: &str, err: &str, count: usize, version: &str, outcome: &str) {
    let lines = games(out);
    assert_eq!(lines.len(), count, "{count} games:\n{out}\n{err}");
    for line in lines {
        assert!(line.contains(&format!(" over A2A {version} ")), "{line}");
        assert!(line.contains(&format!(": {outcome} (")), "{line}\n{err}");
    }
}

#[tokio::test]
async fn perfect_play_draws_against_another_nodes_computer_in_both_versions_and_games() {
    let dir = tempfile::tempdir().unwrap();
    let node_b = Server::start(dir.path(), "", &[]).await;
    let base = node_b.api.base.clone();
    let card = format!("{base}/.well-known/agent-card.json");
    for (app, version, url) in [
        ("tic-tac-toe", "0.3", card.as_str()),
        ("sos", "0.3", base.as_str()),
        ("tic-tac-toe", "1.0", base.as_str()),
        ("sos", "1.0", card.as_str()),
    ] {
        let name = format!("{app}-{version}");
        let (status, out, err) = play(
            dir.path(),
            url,
            &[
                "--app",
                app,
                "--a2a-version",
                version,
                "--games",
                "2",
                "--seed",
                "7",
            ],
            &name,
        )
        .await;
        assert!(status.success(), "{name}:\n{out}\n{err}");
        // Perfect against perfect: a draw, as X and as O.
        assert_all(&out, &err, 2, version, "drew");
        let (first, second) = if app == "sos" {
            (" as first ", " as second ")
        } else {
            (" as X ", " as O ")
        };
        assert!(games(&out)[0].contains(first), "{out}");
        assert!(games(&out)[0].contains(" vs Triad computer "), "{out}");
        assert!(games(&out)[1].contains(second), "{out}");
        assert!(
            err.contains("played 2: 0 won, 0 lost, 2 drawn, 0 aborted"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn the_newest_version_is_chosen_and_perfect_never_loses_to_random() {
    let dir = tempfile::tempdir().unwrap();
    let node_b = Server::start(dir.path(), "", &[]).await;
    let (status, out, err) = play(
        dir.path(),
        &node_b.api.base,
        &["--games", "6", "--opponent-level", "random", "--seed", "11"],
        "random",
    )
    .await;
    assert!(status.success(), "{out}\n{err}");
    let lines = games(&out);
    assert_eq!(lines.len(), 6, "{out}");
    for line in &lines {
        assert!(
            line.contains(" over A2A 1.0 "),
            "the newest both speak: {line}"
        );
        assert!(
            line.contains(": won (") || line.contains(": drew ("),
            "perfect never loses: {line}"
        );
    }
    // The record of the other node agrees: the games are its matches against its computer.
    let context = lines[0].rsplit("context ").next().unwrap();
    assert!(context.starts_with("triad-match-"), "{context}");
}

#[tokio::test]
async fn a_card_that_offers_no_common_version_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::start(Cheat::None, &["2.0"]).await;
    let (status, out, err) = play(dir.path(), &fake.url, &[], "no-version").await;
    assert!(!status.success(), "{out}\n{err}");
    assert!(
        err.contains("this agent speaks A2A 1.0 or 0.3 over JSON-RPC"),
        "{err}"
    );
}

/// What the fake agent does wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cheat {
    /// Nothing: it plays the first empty cell and declares honestly.
    None,
    /// It answers the first move with a move on the cell just taken.
    OccupiedCell,
    /// It answers the first move with a legal move and claims the win.
    FalseWin,
    /// Its move carries a board with an extra mark.
    WrongBoard,
    /// It answers moves with nothing.
    Silent,
    /// It refuses every move with a JSON-RPC error.
    Refuses,
    /// It declines every proposal (an honest abort, not a cheat).
    Declines,
    /// It answers with 2 MiB.
    Floods,
}

/// A fake A2A agent (tic-tac-toe, always O), speaking 1.0 the way the official SDKs write it
/// (numbers as doubles) or 0.3; it records what it was sent.
#[derive(Clone)]
struct Fake {
    url: String,
    requests: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
}

#[derive(Clone)]
struct FakeState {
    cheat: Cheat,
    versions: Vec<String>,
    base: String,
    requests: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
    board: Arc<Mutex<[&'static str; 9]>>,
}

impl Fake {
    async fn start(cheat: Cheat, versions: &[&str]) -> Fake {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let state = FakeState {
            cheat,
            versions: versions.iter().map(|v| (*v).to_owned()).collect(),
            base: url.clone(),
            requests: requests.clone(),
            board: Arc::new(Mutex::new([""; 9])),
        };
        let app = Router::new()
            .route("/.well-known/agent-card.json", get(fake_card))
            .route("/a2a", post(fake_rpc))
            .with_state(state);
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Fake { url, requests }
    }

    /// The data parts it was sent, in order.
    fn received(&self) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|(_, r)| r["params"]["message"]["parts"][0]["data"].clone())
            .collect()
    }
}

async fn fake_card(State(state): State<FakeState>) -> Json<Value> {
    let interfaces: Vec<Value> = state
        .versions
        .iter()
        .map(|v| json!({"url": format!("{}/a2a", state.base), "protocolBinding": "JSONRPC", "protocolVersion": v}))
        .collect();
    Json(json!({
        "name": "Fake agent",
        "description": "plays O, sometimes badly",
        "version": "1",
        "supportedInterfaces": interfaces,
        "capabilities": {},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [],
        "securitySchemes": {"token": {"httpAuthSecurityScheme": {"scheme": "bearer"}}},
        "securityRequirements": [{"schemes": {"token": {"list": []}}}],
    }))
}

fn action(action: &str, payload: Value) -> Value {
    json!({"appId": "tic-tac-toe", "action": action, "payload": payload})
}

async fn fake_rpc(
    State(state): State<FakeState>,
    headers: HeaderMap,
    Json(request): Json<Value>,
) -> Json<Value> {
    state
        .requests
        .lock()
        .unwrap()
        .push((headers, request.clone()));
    let v1 = request["method"] == "SendMessage";
    let data = &request["params"]["message"]["parts"][0]["data"];
    if state.cheat == Cheat::Floods {
        let text = "x".repeat(2 << 20);
        return Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "kind": "message", "role": "agent", "messageId": "f", "parts": [{"kind": "text", "text": text}]}}));
    }
    if state.cheat == Cheat::Refuses && data["action"] == "move" {
        return Json(json!({"jsonrpc": "2.0", "id": request["id"], "error": {
            "code": -32602, "message": "that cell is already taken; choose an empty cell",
            "data": {"code": 3, "error": "cell_occupied", "message": "that cell is already taken"}}}));
    }
    let mut board = state.board.lock().unwrap();
    let parts: Vec<Value> = match (data["action"].as_str(), state.cheat) {
        (Some("propose"), Cheat::Declines) => vec![action(
            "result",
            json!({"outcome": "abort", "reason": "busy"}),
        )],
        (Some("propose"), _) => vec![action("accept", json!({"seq": 0, "role": "O"}))],
        (Some("move"), cheat) => {
            let payload = &data["payload"];
            let seq = payload["seq"].as_u64().unwrap();
            board[usize::try_from(payload["position"].as_u64().unwrap()).unwrap()] = "X";
            let free = board.iter().position(|c| c.is_empty());
            match free {
                // X won or filled the board: X declares, nothing to answer.
                _ if x_won(&board) || cheat == Cheat::Silent => vec![],
                None => vec![],
                Some(free) => {
                    let cell = if cheat == Cheat::OccupiedCell {
                        usize::try_from(payload["position"].as_u64().unwrap()).unwrap()
                    } else {
                        free
                    };
                    board[cell] = "O";
                    let mut sent = board.to_vec();
                    if cheat == Cheat::WrongBoard {
                        let other = board.iter().rposition(|c| c.is_empty()).unwrap();
                        sent[other] = "O";
                    }
                    let mut parts = vec![action(
                        "move",
                        json!({"seq": seq + 1, "replyTo": seq, "position": cell, "mark": "O", "board": sent}),
                    )];
                    if cheat == Cheat::FalseWin {
                        parts.push(action("result", json!({"outcome": "win", "winner": "O"})));
                    }
                    parts
                }
            }
        }
        _ => vec![],
    };
    let parts: Vec<Value> = parts
        .into_iter()
        .map(|data| {
            if v1 {
                // As protobuf's Value carries every number: a double.
                let text = data.to_string();
                let doubled = as_doubles(&text);
                json!({"data": serde_json::from_str::<Value>(&doubled).unwrap()})
            } else {
                json!({"kind": "data", "data": data})
            }
        })
        .collect();
    let message = if v1 {
        json!({"message": {"messageId": "f", "role": "ROLE_AGENT", "contextId": "fake-1", "parts": parts}})
    } else {
        json!({"kind": "message", "messageId": "f", "role": "agent", "contextId": "fake-1", "parts": parts})
    };
    Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": message}))
}

/// Whether X has three in a row.
fn x_won(board: &[&str; 9]) -> bool {
    const LINES: [[usize; 3]; 8] = [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7, 8],
        [0, 3, 6],
        [1, 4, 7],
        [2, 5, 8],
        [0, 4, 8],
        [2, 4, 6],
    ];
    LINES
        .iter()
        .any(|line| line.iter().all(|&c| board[c] == "X"))
}

/// Every bare integer in JSON text written as a double (`1` → `1.0`), as the official SDKs'
/// protobuf JSON writes numbers in a data part.
fn as_doubles(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '"' {
            in_string = !in_string;
        } else if !in_string
            && c.is_ascii_digit()
            && !chars.peek().is_some_and(char::is_ascii_digit)
        {
            out.push_str(".0");
        }
    }
    out
}

async fn caught(cheat: Cheat, version: &str) -> (String, Fake) {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::start(cheat, &[version]).await;
    let (status, out, err) = play(
        dir.path(),
        &fake.url,
        &["--role", "X", "--games", "3", "--a2a-token", "t"],
        &format!("{cheat:?}"),
    )
    .await;
    assert!(!status.success(), "the cheat is caught:\n{out}\n{err}");
    assert!(games(&out).is_empty(), "{out}");
    assert!(
        err.contains("game 1 (tic-tac-toe as X): Fake agent broke the A2A tic-tac-toe protocol:"),
        "{err}"
    );
    // The game was called off before the agent stopped.
    let received = fake.received();
    assert_eq!(
        received.last().unwrap(),
        &json!({"appId": "tic-tac-toe", "action": "result", "payload": {"outcome": "abort", "reason": "state-conflict"}}),
        "{received:?}"
    );
    (err, fake)
}

#[tokio::test]
async fn an_honest_fake_agent_is_played_to_the_end_in_the_sdks_wire_form() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::start(Cheat::None, &["0.3", "1.0"]).await;
    let (status, out, err) = play(
        dir.path(),
        &fake.url,
        &["--role", "X", "--a2a-token", "fake-token"],
        "honest",
    )
    .await;
    assert!(status.success(), "{out}\n{err}");
    // X (perfect) beats an agent that plays the first empty cell.
    assert_all(&out, &err, 1, "1.0", "won");
    let requests = fake.requests.lock().unwrap();
    let (headers, first) = &requests[0];
    assert_eq!(headers["a2a-version"], "1.0");
    // Its card asks for a bearer token: the one given.
    assert!(
        requests
            .iter()
            .all(|(h, _)| h["authorization"] == "Bearer fake-token")
    );
    assert_eq!(first["params"]["configuration"], json!({}));
    assert_eq!(first["method"], "SendMessage");
    let message = &first["params"]["message"];
    assert_eq!(message["role"], "ROLE_USER");
    assert!(message["messageId"].is_string());
    assert_eq!(
        message["parts"],
        json!([{"data": {"appId": "tic-tac-toe", "action": "propose", "payload": {"seq": 0, "role": "X"}}}])
    );
    // Then the conversation's context, and the declared win last.
    assert_eq!(requests[1].1["params"]["message"]["contextId"], "fake-1");
    let last = &requests.last().unwrap().1["params"]["message"]["parts"][0]["data"];
    assert_eq!(last["action"], "result");
    assert_eq!(last["payload"], json!({"outcome": "win", "winner": "X"}));
}

#[tokio::test]
async fn a_fake_agent_that_plays_on_a_taken_cell_is_caught() {
    let (err, _) = caught(Cheat::OccupiedCell, "1.0").await;
    assert!(err.contains("that cell is already taken"), "{err}");
}

#[tokio::test]
async fn a_fake_agent_that_claims_a_false_win_is_caught() {
    let (err, _) = caught(Cheat::FalseWin, "0.3").await;
    assert!(err.contains("a false result"), "{err}");
    assert!(err.contains("win by O"), "{err}");
}

#[tokio::test]
async fn a_fake_agent_whose_board_disagrees_is_caught() {
    let (err, fake) = caught(Cheat::WrongBoard, "1.0").await;
    assert!(err.contains("state conflict: the board sent"), "{err}");
    let requests = fake.requests.lock().unwrap();
    assert_eq!(requests[0].1["method"], "SendMessage");
}

#[tokio::test]
async fn an_agent_that_does_not_answer_with_a_move_refuses_one_or_floods_ends_the_run_clearly() {
    let dir = tempfile::tempdir().unwrap();
    for (cheat, expected) in [
        (
            Cheat::Silent,
            "Fake agent answered without its move; this agent expects each answer to carry \
             the other agent's next action",
        ),
        (Cheat::Refuses, "Fake agent refused my move {\"seq\":1,"),
        (
            Cheat::Floods,
            "no answer from Fake agent to my propose {\"seq\":0,\"role\":\"X\"}: the answer of \
             Fake agent is over 1048576 bytes",
        ),
    ] {
        let fake = Fake::start(cheat, &["0.3"]).await;
        let (status, out, err) = play(
            dir.path(),
            &fake.url,
            &["--role", "X", "--a2a-token", "t"],
            &format!("{cheat:?}"),
        )
        .await;
        assert!(!status.success(), "{out}\n{err}");
        assert!(err.contains(expected), "{err}");
        if cheat == Cheat::Refuses {
            assert!(
                err.contains("JSON-RPC error -32602: that cell is already taken; choose an empty cell (cell_occupied, 3)"),
                "{err}"
            );
        }
    }
}

#[tokio::test]
async fn a_declined_proposal_is_an_aborted_game_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Fake::start(Cheat::Declines, &["1.0"]).await;
    let (status, out, err) = play(
        dir.path(),
        &fake.url,
        &["--games", "2", "--a2a-token", "t"],
        "declines",
    )
    .await;
    assert!(status.success(), "{out}\n{err}");
    assert_all(&out, &err, 2, "1.0", "aborted");
    assert!(
        games(&out)[0].contains(": aborted (abort (busy) by the opponent after 0 moves)"),
        "{out}"
    );
    assert!(
        err.contains("played 2: 0 won, 0 lost, 0 drawn, 2 aborted"),
        "{err}"
    );
}
