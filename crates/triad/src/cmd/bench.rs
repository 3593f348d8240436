//! `triad bench`: a load generator that drives a running Triad server the way real clients
//! do, and the chart of its results.
//!
//! Each game has two clients, each with its own key, session and WebSocket. A client logs
//! in once and plays its slot's games one after the other, with a new WebSocket per game
//! (`--login-per-game`: two fresh keys log in for every game). Moves go on the WebSocket
//! (`{"type":"move",…}`, answered by an `ack`), as the boardgame.io peer's clients send theirs
//! on socket.io; `--moves-over-http` posts each move instead. Every request asks for the
//! short command answer (`Prefer: return=minimal`): the events come on the WebSocket. The
//! challenger challenges, the other learns of the challenge on its `inbox` topic and accepts, both
//! subscribe to the match, and they play game *i* of the same seeded move scripts as the
//! boardgame.io peer benchmark (`../shared/peerbench/loadgen.js`): a Fisher-Yates shuffle
//! of the cells by mulberry32, seeded with `(seed * 1000003 + i) mod 2^32`, played until
//! the game ends. A move's latency runs from the mover's send until the opponent sees the
//! move on its WebSocket. As in the peer, warmup games use indices from 1,000,000 and the
//! measured games are always 0..games-1.

use std::{
    collections::BTreeMap,
    fmt::Write as _,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::Context as _;
use clap::Args;
use futures_util::{SinkExt, StreamExt};
use rand::{rand_core::UnwrapErr, rngs::SysRng};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, tungstenite::Message};
use triad_identity::KeyFile;

use super::keys::log_in;

/// Drive a running server with N concurrent games of two clients each, and report
/// throughput, move latency, errors and the server's CPU and memory as JSON (and a chart).
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// The server.
    #[arg(long, env = "TRIAD_SERVER", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// The server's process id, to read its CPU time and memory from /proc.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Games in flight at once; a list runs one point per value, in order.
    #[arg(long, value_delimiter = ',', default_value = "10")]
    concurrency: Vec<usize>,
    /// Measured games per point (game indices 0..games-1).
    #[arg(long, default_value_t = 1000)]
    games: u64,
    /// Unmeasured games before each point [default: max(concurrency, 100)].
    #[arg(long)]
    warmup: Option<u64>,
    /// Seed of the move scripts (the peer's `--seed`).
    #[arg(long, default_value_t = 1)]
    seed: u32,
    /// Pause before each move, in ms (each game offsets it by up to half, deterministically),
    /// as people do; 0 plays flat out.
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// Set up every game of a point (logins, WebSockets, matches) before any move, so that
    /// all of them are live at once; needs --games equal to the concurrency.
    #[arg(long)]
    hold: bool,
    /// Games setting up (logging in, connecting, challenging) at once; the rest wait
    /// [default: no limit; 256 with --hold, so that thousands of logins do not open
    /// thousands of HTTP connections at once].
    #[arg(long)]
    setup_concurrency: Option<usize>,
    /// Log two fresh keys in for every game, as the first runs did (2026-11-21, run1). By
    /// default each of the 2 x concurrency clients logs in once and plays its slot's games
    /// one after the other with that session, as players do (the boardgame.io peer's
    /// clients get per-game credentials from lobby calls: our challenge and accept).
    /// Implies --ws-per-game.
    #[arg(long)]
    login_per_game: bool,
    /// Open a new WebSocket for every game and close it at the end, as runs 1-5 did
    /// (2026-11-21) and as the boardgame.io peer's clients must (one socket.io connection
    /// per match). By default each client keeps one WebSocket for all its games, as the
    /// web app does: it subscribes to each new match and unsubscribes when it ends.
    #[arg(long)]
    ws_per_game: bool,
    /// Post each move (`POST /api/matches/{id}/moves`) instead of sending it on the
    /// player's WebSocket, as runs 1-3 did (2026-11-21).
    #[arg(long)]
    moves_over_http: bool,
    /// A game not over after this many seconds fails.
    #[arg(long, default_value_t = 60)]
    game_timeout_s: u64,
    /// A name for this run's series in the JSON and the chart.
    #[arg(long, default_value = "triad")]
    label: String,
    /// Write the results here as JSON (always printed to stdout as well).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Draw latency and throughput against concurrency into this SVG file.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Draw the chart of a results file (this tool's JSON, any number of series) into
    /// --svg and exit, without running anything.
    #[arg(long, requires = "svg")]
    chart_from: Option<PathBuf>,
    /// Print the first N move scripts as the peer's `loadgen.js --dump-moves N` does, and exit.
    #[arg(long)]
    dump_moves: Option<u64>,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
}

// ------------------------------------------------------------------ move scripts --

/// How a scripted game ends: the winner's player index (0 moves first), or a draw.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    Winner(u8),
    Draw,
}

/// Game `index`'s cells in the order played, and how it ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Script {
    pub(crate) cells: Vec<u8>,
    pub(crate) ending: Ending,
}

/// mulberry32, exactly as the peer's JavaScript: the next number in [0, 1).
fn mulberry32(state: &mut u32) -> f64 {
    *state = state.wrapping_add(0x6d2b_79f5);
    let a = *state;
    let mut t = (a ^ (a >> 15)).wrapping_mul(1 | a);
    t = t.wrapping_add((t ^ (t >> 7)).wrapping_mul(61 | t)) ^ t;
    f64::from(t ^ (t >> 14)) / 4_294_967_296.0
}

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

/// The peer's `scriptFor(i)`.
pub(crate) fn script_for(seed: u32, index: u64) -> Script {
    // Math.imul(seed, 1000003) + i, then >>> 0: everything mod 2^32.
    #[allow(clippy::cast_possible_truncation)]
    let mut state = seed.wrapping_mul(1_000_003).wrapping_add(index as u32);
    let mut perm: [u8; 9] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
    for k in (1..=8usize).rev() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let j = (mulberry32(&mut state) * (k + 1) as f64).floor() as usize;
        perm.swap(k, j);
    }
    let mut board = [None::<u8>; 9];
    for (k, &cell) in perm.iter().enumerate() {
        #[allow(clippy::cast_possible_truncation)]
        let player = (k % 2) as u8;
        board[usize::from(cell)] = Some(player);
        let won = LINES.iter().any(|line| {
            line.iter()
                .all(|&c| board[c].is_some() && board[c] == board[line[0]])
        });
        let cells = perm[..=k].to_vec();
        if won {
            return Script {
                cells,
                ending: Ending::Winner(player),
            };
        }
        if board.iter().all(Option::is_some) {
            return Script {
                cells,
                ending: Ending::Draw,
            };
        }
    }
    unreachable!("nine marks fill the board")
}

/// One line of `loadgen.js --dump-moves`, byte for byte.
pub(crate) fn dump_line(index: u64, script: &Script) -> String {
    let cells: Vec<String> = script.cells.iter().map(u8::to_string).collect();
    let result = match script.ending {
        Ending::Winner(p) => format!("{{\"winner\":\"{p}\"}}"),
        Ending::Draw => "{\"draw\":true}".to_owned(),
    };
    format!(
        "{{\"game\":{index},\"cells\":[{}],\"result\":{result}}}",
        cells.join(",")
    )
}

// ---------------------------------------------------------------------- results --

/// Percentiles of a sample, in ms, the peer's way (nearest rank).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Summary {
    n: usize,
    mean: Option<f64>,
    p50: Option<f64>,
    p95: Option<f64>,
    p99: Option<f64>,
    max: Option<f64>,
}

fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}

fn summary(mut sample: Vec<f64>) -> Summary {
    sample.sort_by(f64::total_cmp);
    let n = sample.len();
    let pct = |p: f64| -> Option<f64> {
        if n == 0 {
            return None;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let rank = ((p / 100.0) * n as f64).ceil() as usize;
        Some(round(sample[rank.clamp(1, n) - 1], 3))
    };
    #[allow(clippy::cast_precision_loss)]
    let mean = (n > 0).then(|| round(sample.iter().sum::<f64>() / n as f64, 3));
    Summary {
        n,
        mean,
        p50: pct(50.0),
        p95: pct(95.0),
        p99: pct(99.0),
        max: sample.last().map(|&x| round(x, 3)),
    }
}

/// The server's figures over a measured phase.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ServerFigures {
    cpu_s: f64,
    cpu_util: f64,
    cpu_ms_per_game: Option<f64>,
    rss_start_mb: f64,
    rss_peak_measured_mb: f64,
    /// VmHWM: the peak over the process's life, warmup included.
    vmhwm_mb: f64,
    /// With --hold: the resident memory once every game was set up, before any move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rss_held_mb: Option<f64>,
}

/// One point: a concurrency level's measured phase.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Point {
    concurrency: usize,
    #[serde(default)]
    repeat: Option<u32>,
    games: u64,
    warmup_ok: u64,
    warmup_failed: u64,
    games_ok: u64,
    games_failed: u64,
    errors: BTreeMap<String, u64>,
    #[serde(default)]
    error_samples: Vec<String>,
    moves: u64,
    wall_s: f64,
    games_per_s: f64,
    moves_per_s: f64,
    move_latency_ms: Summary,
    setup_ms: Summary,
    game_ms: Summary,
    server: Option<ServerFigures>,
    /// CPU of other processes during the phase, in cores (system busy minus the server
    /// minus this load generator): if not about 0, the run was contended.
    other_cores: Option<f64>,
    loadgen_cpu_s: Option<f64>,
}

/// A series of points.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Series {
    label: String,
    points: Vec<Point>,
}

/// What `triad bench` writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Report {
    tool: String,
    params: Value,
    series: Vec<Series>,
}

// ------------------------------------------------------------------------- /proc --

/// Clock ticks per second of `/proc/*/stat` (USER_HZ, 100 on Linux).
const CLK_TCK: f64 = 100.0;

fn proc_cpu_s(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / CLK_TCK)
}

fn proc_status_mb(pid: u32, key: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(&format!("{key}:")))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Busy seconds of the whole system (every CPU), from `/proc/stat`.
fn system_busy_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<f64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .take(8)
        .filter_map(|f| f.parse().ok())
        .collect();
    if fields.len() < 8 {
        return None;
    }
    let total: f64 = fields.iter().sum();
    Some((total - fields[3] - fields[4]) / CLK_TCK)
}

// ------------------------------------------------------------------------ games --

type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// A failed game: the stage it failed at (the key of the error count) and the detail.
struct Failure {
    stage: &'static str,
    detail: String,
}

fn fail<E: std::fmt::Display>(stage: &'static str) -> impl FnOnce(E) -> Failure {
    move |e| Failure {
        stage,
        detail: format!("{e:#}"),
    }
}

/// What every game shares.
struct Shared {
    http: reqwest::Client,
    server: String,
    ws_base: String,
    seed: u32,
    think_ms: u64,
    game_timeout: Duration,
    setup_limit: Option<Arc<tokio::sync::Semaphore>>,
    login_per_game: bool,
    /// Each game opens its own two WebSockets and closes them at its end: with
    /// --ws-per-game, or with --login-per-game (a fresh session has no socket yet).
    socket_per_game: bool,
    moves_over_http: bool,
    /// Logged-in pairs between games (and from the warmup to the measured games), with
    /// their WebSockets unless --ws-per-game: a slot takes one, or logs a new pair in, and
    /// puts it back when its games are done.
    sessions: std::sync::Mutex<Vec<[Client; 2]>>,
}

/// A logged-in player.
struct Session {
    address: String,
    token: String,
    /// The last event seen on this player's `inbox` topic: the next subscription starts
    /// after it, so that an old challenge is not sent again.
    inbox_since: u64,
}

/// One client: its session and, between games unless --ws-per-game, its WebSocket.
struct Client {
    session: Session,
    ws: Option<Ws>,
}

/// A client connected for a game: its session and its WebSocket.
struct Player {
    session: Session,
    ws: Ws,
    /// Whether the WebSocket was opened for this game (its subscriptions start afresh).
    new: bool,
}

/// A game's measures.
#[derive(Default)]
struct GameResult {
    latencies_ms: Vec<f64>,
    setup_ms: f64,
    game_ms: f64,
    moves: u64,
}

/// Counts the games that are set up (or failed before that); every game then waits for
/// all. Dropping an arrival that never arrived counts it, so a failure never blocks the rest.
struct Gate {
    arrived: watch::Sender<u64>,
    expected: u64,
}

struct Arrival {
    gate: Option<Arc<Gate>>,
}

impl Arrival {
    async fn arrive(&mut self) {
        if let Some(gate) = self.gate.take() {
            gate.arrived.send_modify(|n| *n += 1);
            let mut rx = gate.arrived.subscribe();
            let expected = gate.expected;
            let _ = rx.wait_for(|n| *n >= expected).await;
        }
    }
}

impl Drop for Arrival {
    fn drop(&mut self) {
        if let Some(gate) = self.gate.take() {
            gate.arrived.send_modify(|n| *n += 1);
        }
    }
}

/// A new key, logged in.
async fn log_in_new(ctx: &Shared) -> Result<Session, Failure> {
    let key = KeyFile::generate(&mut UnwrapErr(SysRng));
    let token = log_in(&ctx.http, &ctx.server, &key)
        .await
        .map_err(fail("login"))?;
    Ok(Session {
        address: key.address_string(),
        token,
        inbox_since: 0,
    })
}

/// A client with its WebSocket: the one it kept from its last game, or a new one.
async fn connect_client(ctx: &Shared, client: Client) -> Result<Player, Failure> {
    let Client { session, ws } = client;
    if let Some(ws) = ws {
        return Ok(Player {
            session,
            ws,
            new: false,
        });
    }
    // The token goes in the first message, not the URL (proxies log URLs).
    let url = format!("{}/api/ws", ctx.ws_base);
    // A small read buffer (the default is 128 KiB), so that 20,000 clients fit in memory.
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(4 * 1024);
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .map_err(fail("ws_connect"))?;
    authenticate(&mut ws, &session.token).await?;
    Ok(Player {
        session,
        ws,
        new: true,
    })
}

/// The next JSON text frame.
async fn next_frame(ws: &mut Ws) -> Result<Value, Failure> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => {
                return serde_json::from_str(&text).map_err(fail("ws_frame"));
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
            Some(Ok(Message::Binary(_))) => {
                return Err(Failure {
                    stage: "ws_frame",
                    detail: "a binary frame".into(),
                });
            }
            Some(Ok(Message::Close(close))) => {
                return Err(Failure {
                    stage: "ws_closed",
                    detail: format!("{close:?}"),
                });
            }
            Some(Err(e)) => return Err(fail("ws_read")(e)),
            None => {
                return Err(Failure {
                    stage: "ws_closed",
                    detail: "the stream ended".into(),
                });
            }
        }
    }
}

/// Sends one message on the socket.
async fn send_json(ws: &mut Ws, message: &Value) -> Result<(), Failure> {
    ws.send(Message::text(message.to_string()))
        .await
        .map_err(fail("ws_send"))
}

/// Logs the socket in with its first message and reads until `authed`.
async fn authenticate(ws: &mut Ws, token: &str) -> Result<(), Failure> {
    send_json(ws, &json!({ "type": "auth", "token": token })).await?;
    loop {
        let frame = next_frame(ws).await?;
        match frame["type"].as_str() {
            Some("authed") => return Ok(()),
            Some("error") => return Err(fail("ws_auth")(frame)),
            _ => {}
        }
    }
}

/// Subscribes to `topic` after event `since` and reads until `subscribed`, following the
/// server's pages (`more`: subscribe again from its `seq`) and its replay budget (an
/// `error` with `retry_after_s`: subscribe again after it).
async fn subscribe(ws: &mut Ws, topic: &str, since: u64) -> Result<(), Failure> {
    let mut since = since;
    loop {
        send_json(
            ws,
            &json!({ "type": "subscribe", "topic": topic, "since": since }),
        )
        .await?;
        loop {
            let frame = next_frame(ws).await?;
            match frame["type"].as_str() {
                // The reply names the resolved topic (`inbox:0x…`); subscriptions are one at a time.
                Some("subscribed") => return Ok(()),
                Some("more") => {
                    since = frame["seq"].as_u64().unwrap_or(since);
                    break;
                }
                Some("error") => match frame["retry_after_s"].as_u64() {
                    Some(wait) if frame["topic"].is_string() => {
                        since = frame["seq"].as_u64().unwrap_or(since);
                        tokio::time::sleep(Duration::from_secs(wait)).await;
                        break;
                    }
                    _ => return Err(fail("ws_error")(frame)),
                },
                _ => {}
            }
        }
    }
}

/// Reads events until one of `kind` for `match_id` (and, when given, with move `seq`).
async fn until_event(
    ws: &mut Ws,
    kind: &str,
    match_id: u64,
    seq: Option<u64>,
) -> Result<Value, Failure> {
    loop {
        let frame = next_frame(ws).await?;
        match frame["type"].as_str() {
            Some("event") => {
                let k = &frame["event"]["kind"];
                if k["type"] == kind
                    && k["match_id"].as_u64() == Some(match_id)
                    && (seq.is_none() || k["seq"].as_u64() == seq)
                {
                    return Ok(frame["event"].clone());
                }
            }
            Some("error") => return Err(fail("ws_error")(frame)),
            _ => {}
        }
    }
}

/// Sends a move on the mover's WebSocket and reads until its `ack` (past the move's own
/// events); a refusal fails at `move` with the server's error.
async fn send_move(ws: &mut Ws, id: u64, seq: u64, cell: u8, mark: &str) -> Result<(), Failure> {
    let reference = seq.to_string();
    let message = json!({ "type": "move", "ref": reference, "match_id": id, "seq": seq, "cell": cell, "mark": mark });
    ws.send(Message::text(message.to_string()))
        .await
        .map_err(fail("ws_send"))?;
    loop {
        let frame = next_frame(ws).await?;
        match frame["type"].as_str() {
            Some("ack") if frame["ref"] == reference.as_str() => return Ok(()),
            Some("error") => return Err(fail("move")(frame)),
            _ => {}
        }
    }
}

/// A POST with the session, asking for the short answer (`Prefer: return=minimal`); the
/// JSON answer, or a failure at `stage` with the server's error code.
async fn post(
    ctx: &Shared,
    token: &str,
    path: &str,
    body: &Value,
    stage: &'static str,
) -> Result<Value, Failure> {
    let response = ctx
        .http
        .post(format!("{}{path}", ctx.server))
        .bearer_auth(token)
        // The WebSocket brings the events: the short answer is enough (RFC 7240).
        .header("prefer", "return=minimal")
        .json(body)
        .send()
        .await
        .map_err(fail(stage))?;
    let status = response.status();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    if status.is_success() {
        Ok(answer)
    } else {
        Err(Failure {
            stage,
            detail: format!("HTTP {status}: {answer}"),
        })
    }
}

/// Plays game `index`: two logins and two WebSockets (unless `pair` holds a logged-in pair,
/// which is reused without --login-per-game, with its WebSockets without --ws-per-game), a
/// challenge, an acceptance, the scripted moves, and the check of how it ended. The pair is
/// left in `pair` for the slot's next game only when this one went well.
async fn play_game(
    ctx: &Shared,
    index: u64,
    mut arrival: Arrival,
    pair: &mut Option<[Client; 2]>,
) -> Result<GameResult, Failure> {
    let permit = match &ctx.setup_limit {
        Some(limit) => Some(
            Arc::clone(limit)
                .acquire_owned()
                .await
                .map_err(fail("setup"))?,
        ),
        None => None,
    };
    let started = Instant::now();
    let script = script_for(ctx.seed, index);
    let [first, second] = match pair.take() {
        Some(clients) if !ctx.login_per_game => clients,
        _ => {
            let (a, b) = tokio::join!(log_in_new(ctx), log_in_new(ctx));
            [a?, b?].map(|session| Client { session, ws: None })
        }
    };
    let (a, b) = tokio::join!(connect_client(ctx, first), connect_client(ctx, second));
    let mut players = [a?, b?];
    // The challenged client follows its inbox from the moment its WebSocket opens.
    let inbox_since = players[1].session.inbox_since;
    if players[1].new {
        subscribe(&mut players[1].ws, "inbox", inbox_since).await?;
    }
    let issued = post(
        ctx,
        &players[0].session.token,
        "/api/challenges",
        &json!({ "opponent": players[1].session.address, "game": "tic-tac-toe", "first": "challenger" }),
        "challenge",
    )
    .await?;
    let id = issued["match_id"]
        .as_u64()
        .ok_or_else(|| fail("challenge")(format!("no match id in {issued}")))?;
    // The challenged client learns of the challenge as a person would: on its inbox.
    until_event(&mut players[1].ws, "challenge_issued", id, None).await?;
    // The terms the challenge was made with: the server refuses the acceptance otherwise.
    post(
        ctx,
        &players[1].session.token,
        &format!("/api/challenges/{id}/accept"),
        &json!({ "stake": "0", "game": "tic-tac-toe", "challenger": players[0].session.address, "first": "challenger" }),
        "accept",
    )
    .await?;
    let topic = format!("match:{id}");
    for p in &mut players {
        subscribe(&mut p.ws, &topic, 0).await?;
    }
    let mut result = GameResult {
        setup_ms: started.elapsed().as_secs_f64() * 1000.0,
        ..GameResult::default()
    };
    drop(permit);
    arrival.arrive().await;
    let playing = Instant::now();
    for (k, &cell) in script.cells.iter().enumerate() {
        let seq = k as u64 + 1;
        let (mover, mark) = if k % 2 == 0 { (0, "X") } else { (1, "O") };
        if ctx.think_ms > 0 {
            // Between half and one and a half times the pause, differing by game and move.
            let jitter = (index.wrapping_mul(2_654_435_761) ^ seq.wrapping_mul(40_503)) % 1000;
            let pause = ctx.think_ms / 2 + ctx.think_ms * jitter / 1000;
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
        let [first, second] = &mut players;
        let (me, opponent) = if mover == 0 {
            (first, second)
        } else {
            (second, first)
        };
        let sent = Instant::now();
        // A refused move fails the game at once: its opponent would wait for it forever.
        let (_, seen) = tokio::try_join!(
            async {
                if ctx.moves_over_http {
                    let body = json!({ "seq": seq, "cell": cell, "mark": mark });
                    let path = format!("/api/matches/{id}/moves");
                    post(ctx, &me.session.token, &path, &body, "move").await?;
                } else {
                    send_move(&mut me.ws, id, seq, cell, mark).await?;
                }
                Ok::<(), Failure>(())
            },
            async {
                until_event(&mut opponent.ws, "moved", id, Some(seq)).await?;
                Ok::<Instant, Failure>(Instant::now())
            }
        )?;
        result
            .latencies_ms
            .push((seen - sent).as_secs_f64() * 1000.0);
        result.moves += 1;
    }
    // The last move's opponent sees the end; it must be the script's.
    let last_opponent = if script.cells.len() % 2 == 1 { 1 } else { 0 };
    let ended = until_event(&mut players[last_opponent].ws, "game_ended", id, None).await?;
    let k = &ended["kind"];
    let expected = match script.ending {
        Ending::Winner(0) => ("win", "first"),
        Ending::Winner(_) => ("win", "second"),
        Ending::Draw => ("draw", ""),
    };
    let got = (
        k["reason"].as_str().unwrap_or(""),
        k["winner"].as_str().unwrap_or(""),
    );
    if got.0 != expected.0 || (expected.0 == "win" && got.1 != expected.1) {
        return Err(Failure {
            stage: "wrong_ending",
            detail: format!("game {index}: expected {expected:?}, the server said {k}"),
        });
    }
    result.game_ms = playing.elapsed().as_secs_f64() * 1000.0;
    // Every event of this game came before its end: the next game's inbox starts after it.
    let ended_seq = ended["seq"].as_u64().unwrap_or(inbox_since);
    let mut kept = Vec::with_capacity(2);
    for mut p in players {
        p.session.inbox_since = ended_seq;
        let ws = if ctx.socket_per_game {
            let _ = p.ws.close(None).await;
            None
        } else {
            // The client leaves the match, as the web app does when its game is over.
            let leave = json!({ "type": "unsubscribe", "topic": topic }).to_string();
            p.ws.send(Message::text(leave))
                .await
                .map_err(fail("ws_send"))?;
            Some(p.ws)
        };
        kept.push(Client {
            session: p.session,
            ws,
        });
    }
    *pair = <[Client; 2]>::try_from(kept).ok();
    Ok(result)
}

/// What a phase gathered.
#[derive(Default)]
struct Sink {
    latencies_ms: Vec<f64>,
    setup_ms: Vec<f64>,
    game_ms: Vec<f64>,
    moves: u64,
    ok: u64,
    failed: u64,
    errors: BTreeMap<String, u64>,
    samples: Vec<String>,
}

impl Sink {
    fn merge(&mut self, other: Sink) {
        self.latencies_ms.extend(other.latencies_ms);
        self.setup_ms.extend(other.setup_ms);
        self.game_ms.extend(other.game_ms);
        self.moves += other.moves;
        self.ok += other.ok;
        self.failed += other.failed;
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
        for s in other.samples {
            if self.samples.len() < 5 {
                self.samples.push(s);
            }
        }
    }
}

/// Plays games `first..first+count` with `concurrency` in flight.
async fn run_phase(
    ctx: &Arc<Shared>,
    first: u64,
    count: u64,
    concurrency: usize,
    gate: Option<Arc<Gate>>,
    bar: &indicatif::ProgressBar,
) -> Sink {
    let next = Arc::new(AtomicU64::new(first));
    let end = first + count;
    let workers = concurrency.min(usize::try_from(count).unwrap_or(usize::MAX));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..workers {
        let ctx = Arc::clone(ctx);
        let next = Arc::clone(&next);
        let gate = gate.clone();
        let bar = bar.clone();
        tasks.spawn(async move {
            let mut sink = Sink::default();
            // This slot's logged-in pair, from an earlier phase when there is one.
            let mut pair = ctx.sessions.lock().ok().and_then(|mut s| s.pop());
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= end {
                    break;
                }
                let arrival = Arrival { gate: gate.clone() };
                let outcome = tokio::time::timeout(
                    ctx.game_timeout,
                    play_game(&ctx, index, arrival, &mut pair),
                )
                .await;
                match outcome {
                    Ok(Ok(game)) => {
                        sink.ok += 1;
                        sink.moves += game.moves;
                        sink.latencies_ms.extend(game.latencies_ms);
                        sink.setup_ms.push(game.setup_ms);
                        sink.game_ms.push(game.game_ms);
                    }
                    Ok(Err(f)) => {
                        sink.failed += 1;
                        *sink.errors.entry(f.stage.to_owned()).or_default() += 1;
                        if sink.samples.len() < 5 {
                            sink.samples.push(format!("{}: {}", f.stage, f.detail));
                        }
                    }
                    Err(_) => {
                        sink.failed += 1;
                        *sink.errors.entry("timeout".to_owned()).or_default() += 1;
                    }
                }
                bar.inc(1);
            }
            if let (Some(pair), Ok(mut sessions)) = (pair, ctx.sessions.lock()) {
                sessions.push(pair);
            }
            sink
        });
    }
    let mut all = Sink::default();
    while let Some(done) = tasks.join_next().await {
        match done {
            Ok(sink) => all.merge(sink),
            Err(e) => {
                all.failed += 1;
                *all.errors.entry("panic".to_owned()).or_default() += 1;
                all.samples.push(e.to_string());
            }
        }
    }
    all
}

fn progress(total: u64, message: String, hidden: bool) -> indicatif::ProgressBar {
    if hidden {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} games ({per_sec}, eta {eta})",
    ) {
        bar.set_style(style);
    }
    bar.set_message(message);
    bar
}

async fn run_point(
    ctx: &Arc<Shared>,
    args: &BenchArgs,
    concurrency: usize,
) -> anyhow::Result<Point> {
    let warmup = args.warmup.unwrap_or(concurrency.max(100) as u64);
    let pid = args.server_pid;
    let pid_s = pid.map(|p| p.to_string());
    let hidden = args.no_progress;

    let warm = if warmup > 0 {
        let bar = progress(warmup, format!("c={concurrency} warmup"), hidden);
        let sink = run_phase(ctx, 1_000_000, warmup, concurrency, None, &bar).await;
        bar.finish_and_clear();
        sink
    } else {
        Sink::default()
    };

    let gate = args.hold.then(|| {
        Arc::new(Gate {
            arrived: watch::channel(0).0,
            expected: args.games,
        })
    });
    let cpu0 = pid_s.as_deref().and_then(proc_cpu_s);
    let self0 = proc_cpu_s("self");
    let busy0 = system_busy_s();
    let rss_start = pid.and_then(|p| proc_status_mb(p, "VmRSS"));
    // Sample the server's resident memory every 100 ms during the phase (and, with --hold,
    // note it once every game is set up).
    let (stop_tx, mut stop_rx) = watch::channel(false);
    let held_rx = gate.as_ref().map(|g| g.arrived.subscribe());
    let expected = args.games;
    let sampler = tokio::spawn(async move {
        let mut peak = rss_start.unwrap_or(0.0);
        let mut held = None;
        let mut held_rx = held_rx;
        loop {
            if let Some(p) = pid {
                let now = proc_status_mb(p, "VmRSS").unwrap_or(0.0);
                peak = peak.max(now);
                if held.is_none() && held_rx.as_mut().is_some_and(|rx| *rx.borrow() >= expected) {
                    held = Some(now);
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                _ = stop_rx.changed() => break,
            }
        }
        (peak, held)
    });
    let bar = progress(args.games, format!("c={concurrency}"), hidden);
    let t1 = Instant::now();
    let m = run_phase(ctx, 0, args.games, concurrency, gate, &bar).await;
    let wall = t1.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let _ = stop_tx.send(true);
    let (rss_peak, rss_held) = sampler.await.unwrap_or((0.0, None));
    let server_cpu = match (cpu0, pid_s.as_deref().and_then(proc_cpu_s)) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let self_cpu = match (self0, proc_cpu_s("self")) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let busy = match (busy0, system_busy_s()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    #[allow(clippy::cast_precision_loss)]
    let per_game = |cpu: f64| (m.ok > 0).then(|| round(cpu * 1000.0 / m.ok as f64, 3));
    let server = match (pid, server_cpu) {
        (Some(p), Some(cpu)) => Some(ServerFigures {
            cpu_s: round(cpu, 2),
            cpu_util: round(cpu / wall, 2),
            cpu_ms_per_game: per_game(cpu),
            rss_start_mb: round(rss_start.unwrap_or(0.0), 2),
            rss_peak_measured_mb: round(rss_peak, 2),
            vmhwm_mb: round(proc_status_mb(p, "VmHWM").unwrap_or(0.0), 2),
            rss_held_mb: rss_held.map(|x| round(x, 2)),
        }),
        _ => None,
    };
    let other_cores = busy.map(|b| {
        round(
            (b - server_cpu.unwrap_or(0.0) - self_cpu.unwrap_or(0.0)) / wall,
            2,
        )
    });
    #[allow(clippy::cast_precision_loss)]
    let point = Point {
        concurrency,
        repeat: None,
        games: args.games,
        warmup_ok: warm.ok,
        warmup_failed: warm.failed,
        games_ok: m.ok,
        games_failed: m.failed,
        errors: m.errors,
        error_samples: m.samples,
        moves: m.moves,
        wall_s: round(wall, 2),
        games_per_s: round(m.ok as f64 / wall, 2),
        moves_per_s: round(m.moves as f64 / wall, 2),
        move_latency_ms: summary(m.latencies_ms),
        setup_ms: summary(m.setup_ms),
        game_ms: summary(m.game_ms),
        server,
        other_cores,
        loadgen_cpu_s: self_cpu.map(|x| round(x, 2)),
    };
    Ok(point)
}

fn row(p: &Point) -> String {
    let l = &p.move_latency_ms;
    let ms = |x: Option<f64>| x.map_or("-".to_owned(), |v| format!("{v:.2}"));
    let (cpu, rss) = p.server.as_ref().map_or(("-".into(), "-".into()), |s| {
        (
            s.cpu_ms_per_game
                .map_or("-".to_owned(), |c| format!("{c:.3}")),
            format!("{:.1}", s.vmhwm_mb),
        )
    });
    format!(
        "| {} | {}/{} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} | {} |",
        p.concurrency,
        p.games_ok,
        p.games,
        p.games_per_s,
        p.moves_per_s,
        ms(l.p50),
        ms(l.p95),
        ms(l.p99),
        p.games_failed,
        cpu,
        rss,
        p.other_cores.map_or("-".to_owned(), |x| format!("{x:.2}")),
    )
}

pub(crate) fn run(args: BenchArgs) -> anyhow::Result<std::process::ExitCode> {
    if let Some(n) = args.dump_moves {
        let mut out = String::new();
        for i in 0..n {
            let _ = writeln!(out, "{}", dump_line(i, &script_for(args.seed, i)));
        }
        print!("{out}");
        return Ok(std::process::ExitCode::SUCCESS);
    }
    if let Some(from) = &args.chart_from {
        let text = std::fs::read_to_string(from)
            .with_context(|| format!("cannot read {}", from.display()))?;
        let report: Report = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a triad bench report", from.display()))?;
        let svg = args.svg.as_deref().context("--chart-from needs --svg")?;
        chart(&report.series, svg)?;
        eprintln!("wrote {}", svg.display());
        return Ok(std::process::ExitCode::SUCCESS);
    }
    if args.hold && args.concurrency.iter().any(|&c| c as u64 != args.games) {
        anyhow::bail!(
            "--hold sets up every game before any move: give --games equal to --concurrency"
        );
    }
    if args.concurrency.contains(&0) {
        anyhow::bail!("--concurrency must be at least 1");
    }
    let server = args.server.trim_end_matches('/').to_owned();
    let ws_base = server
        .replacen("https://", "wss://", 1)
        .replacen("http://", "ws://", 1);
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(args.game_timeout_s))
        .pool_max_idle_per_host(512)
        .build()?;
    let setup_limit = match (args.setup_concurrency, args.hold) {
        (Some(n), _) => Some(n.max(1)),
        (None, true) => Some(256),
        (None, false) => None,
    };
    let ctx = Arc::new(Shared {
        http,
        server,
        ws_base,
        seed: args.seed,
        think_ms: args.think_ms,
        game_timeout: Duration::from_secs(args.game_timeout_s),
        setup_limit: setup_limit.map(|n| Arc::new(tokio::sync::Semaphore::new(n))),
        login_per_game: args.login_per_game,
        socket_per_game: args.ws_per_game || args.login_per_game,
        moves_over_http: args.moves_over_http,
        sessions: std::sync::Mutex::new(Vec::new()),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut points = Vec::new();
    eprintln!(
        "| concurrency | games ok | games/s | moves/s | p50 ms | p95 ms | p99 ms | failed | server CPU ms/game | server peak RSS MB | other cores |"
    );
    eprintln!("|---|---|---|---|---|---|---|---|---|---|---|");
    for &c in &args.concurrency {
        let point = runtime.block_on(run_point(&ctx, &args, c))?;
        eprintln!("{}", row(&point));
        for s in &point.error_samples {
            eprintln!("  error: {s}");
        }
        points.push(point);
    }
    let failed = points
        .iter()
        .any(|p| p.games_failed > 0 || p.warmup_failed > 0);
    let report = Report {
        tool: "triad bench".into(),
        params: json!({
            "server": args.server, "seed": args.seed, "games": args.games,
            "warmup": args.warmup, "think_ms": args.think_ms, "hold": args.hold,
            "game_timeout_s": args.game_timeout_s, "flow": "challenge+accept",
            "login": if args.login_per_game { "per-game" } else { "per-client" },
            "moves": if args.moves_over_http { "http" } else { "websocket" },
            "websocket": if ctx.socket_per_game { "per-game" } else { "per-client" },
            "prefer": "return=minimal",
        }),
        series: vec![Series {
            label: args.label.clone(),
            points,
        }],
    };
    let text = serde_json::to_string_pretty(&report)?;
    println!("{text}");
    if let Some(path) = &args.json {
        std::fs::write(path, format!("{text}\n"))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(svg) = &args.svg {
        chart(&report.series, svg)?;
    }
    Ok(if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    })
}

// ------------------------------------------------------------------------ chart --

/// Move latency (p50 dashed, p99 solid) and games/s against concurrency, log-log, one
/// colour per series; repeats of a point are averaged.
pub(crate) fn chart(series: &[Series], path: &Path) -> anyhow::Result<()> {
    use plotters::prelude::*;

    let mean_by_concurrency = |points: &[Point], f: &dyn Fn(&Point) -> Option<f64>| {
        let mut by: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for p in points {
            if let Some(v) = f(p) {
                by.entry(p.concurrency).or_default().push(v);
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let means: Vec<(f64, f64)> = by
            .into_iter()
            .map(|(c, v)| (c as f64, v.iter().sum::<f64>() / v.len() as f64))
            .collect();
        means
    };
    let all: Vec<&Point> = series.iter().flat_map(|s| &s.points).collect();
    anyhow::ensure!(!all.is_empty(), "no points to draw");
    #[allow(clippy::cast_precision_loss)]
    let max_c = all.iter().map(|p| p.concurrency).max().unwrap_or(1) as f64 * 1.5;
    let lat_values: Vec<f64> = all
        .iter()
        .flat_map(|p| [p.move_latency_ms.p50, p.move_latency_ms.p99])
        .flatten()
        .filter(|v| *v > 0.0)
        .collect();
    let lat_min = lat_values.iter().copied().fold(f64::MAX, f64::min).min(1.0) * 0.5;
    let lat_max = lat_values.iter().copied().fold(0.0, f64::max).max(1.0) * 2.0;
    let thr_max = all
        .iter()
        .map(|p| p.games_per_s)
        .fold(0.0, f64::max)
        .max(1.0)
        * 2.0;
    let thr_min = all
        .iter()
        .map(|p| p.games_per_s)
        .filter(|v| *v > 0.0)
        .fold(f64::MAX, f64::min)
        .min(thr_max / 4.0)
        * 0.5;

    let root = SVGBackend::new(path, (1100, 450)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (left, right) = root.split_horizontally(550);
    let palette = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
    ];
    let err = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("cannot draw the chart: {e}");

    let mut lat = ChartBuilder::on(&left)
        .caption("Move latency (p99 solid, p50 dashed)", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((1f64..max_c).log_scale(), (lat_min..lat_max).log_scale())
        .map_err(err)?;
    lat.configure_mesh()
        .x_desc("concurrent games")
        .y_desc("ms")
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let color = palette[i % palette.len()];
        let p99 = mean_by_concurrency(&s.points, &|p| p.move_latency_ms.p99);
        let p50 = mean_by_concurrency(&s.points, &|p| p.move_latency_ms.p50);
        lat.draw_series(LineSeries::new(p99.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(s.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        lat.draw_series(DashedLineSeries::new(p50, 6, 4, color.stroke_width(1)))
            .map_err(err)?;
        lat.draw_series(
            p99.iter()
                .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
        )
        .map_err(err)?;
    }
    lat.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(err)?;

    let mut thr = ChartBuilder::on(&right)
        .caption("Throughput", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((1f64..max_c).log_scale(), (thr_min..thr_max).log_scale())
        .map_err(err)?;
    thr.configure_mesh()
        .x_desc("concurrent games")
        .y_desc("games/s")
        .draw()
        .map_err(err)?;
    for (i, s) in series.iter().enumerate() {
        let color = palette[i % palette.len()];
        let g = mean_by_concurrency(&s.points, &|p| Some(p.games_per_s));
        thr.draw_series(LineSeries::new(g.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(s.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        thr.draw_series(
            g.iter()
                .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
        )
        .map_err(err)?;
    }
    thr.configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(err)?;
    root.present()
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_scripts_are_the_peers() {
        // The first lines of `node loadgen.js --dump-moves 3 --seed 1`.
        let expected = [
            r#"{"game":0,"cells":[0,2,1,3,4,7,6,5,8],"result":{"winner":"0"}}"#,
            r#"{"game":1,"cells":[1,7,2,5,6,8,4],"result":{"winner":"0"}}"#,
            r#"{"game":2,"cells":[6,4,8,5,0,7,2,3],"result":{"winner":"1"}}"#,
        ];
        for (i, line) in expected.iter().enumerate() {
            assert_eq!(dump_line(i as u64, &script_for(1, i as u64)), *line);
        }
    }

    #[test]
    fn seed_1_plays_the_peers_move_count() {
        // The peer's README: games 0..1999 of seed 1 make 15,363 moves, 292 of them draws.
        let scripts: Vec<Script> = (0..2000).map(|i| script_for(1, i)).collect();
        let moves: usize = scripts.iter().map(|s| s.cells.len()).sum();
        let draws = scripts.iter().filter(|s| s.ending == Ending::Draw).count();
        assert_eq!((moves, draws), (15_363, 292));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let s = summary((1..=100).map(f64::from).collect());
        assert_eq!(
            (s.p50, s.p95, s.p99, s.max),
            (Some(50.0), Some(95.0), Some(99.0), Some(100.0))
        );
        assert!(summary(Vec::new()).p50.is_none());
    }
}
