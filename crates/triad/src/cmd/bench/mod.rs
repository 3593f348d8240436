//! `triad bench`: a load generator that drives a running Triad server the way real clients
//! do, and the chart of its results.
//!
//! Each game has two clients, each with its own key, session and WebSocket. A client logs
//! in once and plays its slot's games one after the other on one WebSocket
//! (`--login-per-game`: two fresh keys log in for every game; `--ws-per-game`: a new
//! WebSocket per game). Moves go on the WebSocket (`{"type":"move",…}`, answered by an
//! `ack`), as the boardgame.io peer's clients send theirs on socket.io; `--moves-over-http`
//! posts each move instead. The challenger challenges, the other learns of the challenge on
//! its `inbox` topic and accepts, both subscribe to the match, and they play game *i* of the
//! move scripts that the peer benchmark (`bench/peer`) plays too. A move's latency runs from
//! the mover's send until the opponent sees the move on its WebSocket. As in the peer,
//! warmup games use indices from 1,000,000 and the measured games are always 0..games-1.
//! Given a cluster's nodes, the clients spread over them and each game's two players are on
//! different nodes, so that every move crosses nodes.
//!
//! The modules: [`scripts`] (the games), [`client`] (one client's protocol), [`game`] (one
//! game), [`driver`] (the phases of a point and their measures), [`report`] and [`chart`]
//! (what comes out), [`proc`] (the readings of `/proc`).

mod chart;
mod client;
mod driver;
mod game;
mod proc;
mod report;
mod scripts;

use std::{
    fmt::Write as _,
    path::PathBuf,
    sync::{Arc, atomic::AtomicU64},
    time::Duration,
};

use anyhow::Context as _;
use clap::Args;
use serde_json::json;

use self::{
    client::Servers,
    game::Shared,
    report::{Report, Series, TABLE_HEADER, row},
    scripts::{dump_line, script_for},
};

/// Drive a running server with N concurrent games of two clients each, and report
/// throughput, move latency, errors and the server's CPU and memory as JSON (and a chart).
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// The server; a list (`URL,URL,…`) names a cluster's nodes, over which the clients
    /// spread so that the two players of each game are on different nodes.
    #[arg(
        long,
        env = "TRIAD_SERVER",
        value_delimiter = ',',
        default_value = "http://127.0.0.1:8080"
    )]
    server: Vec<String>,
    /// The server's process id (one node's, with several), to read its CPU time and memory
    /// from /proc.
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
    /// Which set of move scripts to play (the peer's `--seed`): game i's shuffle is seeded
    /// with (seed * 1000003 + i) mod 2^32.
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
    /// Log two fresh keys in for every game. By default each of the 2 x concurrency clients
    /// logs in once and plays its slot's games one after the other with that session, as
    /// players do (the boardgame.io peer's clients get per-game credentials from lobby
    /// calls: our challenge and accept). Implies --ws-per-game.
    #[arg(long)]
    login_per_game: bool,
    /// Open a new WebSocket for every game and close it at the end, as the boardgame.io
    /// peer's clients must (one socket.io connection per match). By default each client keeps one WebSocket for all its games, as the
    /// web app does: it subscribes to each new match and unsubscribes when it ends.
    #[arg(long)]
    ws_per_game: bool,
    /// Post each move (`POST /api/matches/{id}/moves`) instead of sending it on the
    /// player's WebSocket.
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
        chart::chart(&report.series, svg)?;
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
        servers: Servers::new(http, &args.server),
        seed: args.seed,
        think_ms: args.think_ms,
        game_timeout: Duration::from_secs(args.game_timeout_s),
        setup_limit: setup_limit.map(|n| Arc::new(tokio::sync::Semaphore::new(n))),
        login_per_game: args.login_per_game,
        socket_per_game: args.ws_per_game || args.login_per_game,
        moves_over_http: args.moves_over_http,
        sessions: std::sync::Mutex::new(Vec::new()),
        pairs: AtomicU64::new(0),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut points = Vec::new();
    eprintln!("{TABLE_HEADER}");
    for &c in &args.concurrency {
        let point = runtime.block_on(driver::run_point(&ctx, &args, c))?;
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
            "server": args.server.join(","), "seed": args.seed, "games": args.games,
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
        chart::chart(&report.series, svg)?;
    }
    Ok(if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    })
}
