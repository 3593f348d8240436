//! The phases of a point: `concurrency` slots, each playing games one after the other
//! until the phase's games are all taken, and the readings of `/proc` around the measured
//! phase.

use std::{
    collections::BTreeMap,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use tokio::sync::watch;

use super::{
    BenchArgs,
    game::{Arrival, Gate, Shared, play_game},
    proc,
    report::{Point, ServerFigures, round, summary},
};

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

/// Runs one point: the warmup games, then the measured ones with the readings of the
/// server's CPU and memory around them.
pub(super) async fn run_point(
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
    let cpu0 = pid_s.as_deref().and_then(proc::cpu_s);
    let self0 = proc::cpu_s("self");
    let busy0 = proc::system_busy_s();
    let rss_start = pid.and_then(|p| proc::status_mb(p, "VmRSS"));
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
                let now = proc::status_mb(p, "VmRSS").unwrap_or(0.0);
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
    let server_cpu = match (cpu0, pid_s.as_deref().and_then(proc::cpu_s)) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let self_cpu = match (self0, proc::cpu_s("self")) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let busy = match (busy0, proc::system_busy_s()) {
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
            vmhwm_mb: round(proc::status_mb(p, "VmHWM").unwrap_or(0.0), 2),
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
