//! `triad bench` end to end: its move scripts are the boardgame.io peer's (`bench/peer`),
//! byte for byte, and a small run against a real server plays every game without an error
//! and reports well-formed figures. (Nothing here asserts a timing: the figures are in
//! BENCHMARKS.md.)

mod support;

use std::{path::PathBuf, process::Command};

use serde_json::Value;
use support::{Server, run_to_exit};

/// Triad's peer benchmark: a boardgame.io server and its load generator.
fn peer_bench() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench/peer")
}

fn triad() -> Command {
    Command::new(env!("CARGO_BIN_EXE_triad"))
}

#[tokio::test]
async fn the_move_scripts_are_the_peers_for_several_seeds() {
    let peer = peer_bench();
    assert!(
        peer.join("loadgen.js").is_file(),
        "{} is missing: the peer benchmark lives in bench/peer",
        peer.display()
    );
    assert!(
        peer.join("node_modules/boardgame.io").is_dir(),
        "the peer's dependencies are missing: run `npm ci` in {} (cargo xtask test does)",
        peer.display()
    );
    let dir = tempfile::tempdir().unwrap();
    for seed in ["1", "2", "77", "4294967295"] {
        let mut node = Command::new("node");
        node.current_dir(&peer)
            .args(["loadgen.js", "--dump-moves", "300", "--seed", seed]);
        let (status, theirs, err) = run_to_exit(node, dir.path(), "node").await;
        assert!(
            status.success(),
            "node loadgen.js failed (is node installed?): {err}"
        );
        let mut ours = triad();
        ours.args(["bench", "--dump-moves", "300", "--seed", seed]);
        let (status, ours, err) = run_to_exit(ours, dir.path(), "triad").await;
        assert!(status.success(), "{err}");
        assert_eq!(theirs.lines().count(), 300);
        assert_eq!(ours, theirs, "--seed {seed}: the scripts differ");
    }
}

/// The server's count of successful requests to `route` with `status`.
async fn requests(base: &str, route: &str, status: &str) -> u64 {
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter(|l| {
            l.starts_with("triad_http_requests_total{")
                && l.contains(&format!("route=\"{route}\""))
                && l.contains(&format!("status=\"{status}\""))
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

#[tokio::test]
async fn a_small_run_plays_every_game_without_an_error() {
    // By default each client logs in once, in its first game (a warmup game here), and
    // plays every later game of its slot with that session, also at the next point: at
    // most 4 slots at once, so 8 logins for the 2 x (3 + 12) games.
    // Every move goes on the WebSocket: none is posted. Each client keeps one WebSocket
    // for all its games, so there are as many as there are logins.
    let run = small_run(&[], ["per-client", "websocket", "per-client"]).await;
    assert_eq!(run.logins, 8, "logins");
    assert_eq!(run.upgrades, 8, "WebSockets opened");
    assert_eq!(run.move_posts, 0, "moves posted");
}

#[tokio::test]
async fn with_login_per_game_every_game_logs_two_fresh_keys_in() {
    let run = small_run(&["--login-per-game"], ["per-game", "websocket", "per-game"]).await;
    assert_eq!(run.logins, 2 * 2 * (3 + 12), "logins");
    assert_eq!(run.upgrades, 2 * 2 * (3 + 12), "WebSockets opened");
}

#[tokio::test]
async fn with_ws_per_game_every_game_opens_two_websockets() {
    let run = small_run(&["--ws-per-game"], ["per-client", "websocket", "per-game"]).await;
    assert_eq!(run.logins, 8, "logins");
    assert_eq!(run.upgrades, 2 * 2 * (3 + 12), "WebSockets opened");
}

#[tokio::test]
async fn with_moves_over_http_every_move_is_posted() {
    let run = small_run(&["--moves-over-http"], ["per-client", "http", "per-client"]).await;
    // The 12 measured games of each point and the 3 warmup games of each.
    let played: u64 = run.report["series"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["moves"].as_u64().unwrap())
        .sum();
    // Plus the 3 warmup games of each point, 5 to 9 moves each.
    let warmup = run
        .move_posts
        .checked_sub(played)
        .expect("every measured move was posted");
    assert!(
        (2 * 3 * 5..=2 * 3 * 9).contains(&warmup),
        "{warmup} warmup moves posted"
    );
}

/// What [`small_run`] found.
struct Run {
    report: Value,
    /// Successful logins, by the server's count.
    logins: u64,
    /// Moves posted over HTTP, by the server's count.
    move_posts: u64,
    /// WebSockets opened, by the server's count.
    upgrades: u64,
}

/// The number of moves in the scripts of games `0..n` with `--seed 5`.
async fn moves_of(dir: &tempfile::TempDir, n: u64) -> u64 {
    let mut dump = triad();
    dump.args(["bench", "--dump-moves", &n.to_string(), "--seed", "5"]);
    let (_, scripts, _) = run_to_exit(dump, dir.path(), "dump").await;
    scripts
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["cells"]
                .as_array()
                .unwrap()
                .len() as u64
        })
        .sum()
}

/// Plays 3 warmup and 12 measured games at concurrency 1 then 4, checks the report (its
/// `login`, `moves` and `websocket` parameters are `modes`), and returns it with the
/// server's counts of logins, posted moves and opened WebSockets.
async fn small_run(extra: &[&str], modes: [&str; 3]) -> Run {
    let [login, moves_by, websocket] = modes;
    let dir = tempfile::tempdir().unwrap();
    // Each client sends its slot's games on one WebSocket, far faster than a person.
    let server = Server::start(dir.path(), "", &["--ws-rate", "1000000"]).await;
    let json = dir.path().join("bench.json");
    let svg = dir.path().join("bench.svg");
    let mut bench = triad();
    bench
        .args(["bench", "--server", &server.api.base, "--server-pid"])
        .arg(server.pid().to_string())
        .args(["--concurrency", "1,4", "--games", "12", "--warmup", "3"])
        .args(["--seed", "5", "--no-progress", "--json"])
        .arg(&json)
        .arg("--svg")
        .arg(&svg)
        .args(extra);
    let (status, stdout, stderr) = run_to_exit(bench, dir.path(), "bench").await;
    assert!(status.success(), "triad bench failed:\n{stderr}\n{stdout}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let printed: Value = serde_json::from_str(&stdout).expect("the report on stdout is JSON");
    assert_eq!(report, printed);
    assert_eq!(report["params"]["login"], login, "{}", report["params"]);
    assert_eq!(report["params"]["moves"], moves_by, "{}", report["params"]);
    assert_eq!(
        report["params"]["websocket"], websocket,
        "{}",
        report["params"]
    );
    assert_eq!(report["params"]["prefer"], "return=minimal");

    // The moves of games 0..11 with `--seed 5`, from the scripts themselves.
    let moves = moves_of(&dir, 12).await;

    let points = report["series"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (point, concurrency) in points.iter().zip([1, 4]) {
        assert_eq!(point["concurrency"], concurrency, "{point}");
        assert_eq!(point["games_ok"], 12, "{point}");
        assert_eq!(point["games_failed"], 0, "{point}");
        assert_eq!(point["warmup_ok"], 3, "{point}");
        assert_eq!(point["errors"], serde_json::json!({}), "{point}");
        assert_eq!(point["moves"].as_u64(), Some(moves), "{point}");
        let latency = &point["move_latency_ms"];
        assert_eq!(latency["n"].as_u64(), Some(moves), "{point}");
        let (p50, p99) = (
            latency["p50"].as_f64().unwrap(),
            latency["p99"].as_f64().unwrap(),
        );
        assert!(0.0 < p50 && p50 <= p99, "{point}");
        assert!(point["games_per_s"].as_f64().unwrap() > 0.0, "{point}");
        let server = &point["server"];
        assert!(server["cpu_s"].as_f64().unwrap() >= 0.0, "{point}");
        assert!(server["cpu_ms_per_game"].as_f64().is_some(), "{point}");
        assert!(server["vmhwm_mb"].as_f64().unwrap() > 1.0, "{point}");
    }
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(
        chart.starts_with("<svg") && chart.trim_end().ends_with("</svg>"),
        "{chart}"
    );
    assert!(
        chart.contains("concurrent games"),
        "the chart has its axis labels"
    );
    let base = &server.api.base;
    Run {
        report,
        logins: requests(base, "/api/auth/login", "200").await,
        move_posts: requests(base, "/api/matches/{id}/moves", "201").await,
        upgrades: requests(base, "/api/ws", "101").await,
    }
}
