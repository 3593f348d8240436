//! Reliability (RELIABILITY.md): the real `triad serve` on a real socket and a real SQLite
//! file, SIGKILLed at random moments, on a disk that fills up, and under steady load.
//!
//! Short by default; `TRIAD_SOAK=1` runs the long versions. The crash torture prints its
//! seed and `TRIAD_CRASH_SEED` replays its plan: the games, the money, and where in each
//! round the server is killed (counted in answered commands); how concurrent requests
//! interleave is up to the scheduler.

mod support;
mod torture;

use std::{
    path::Path,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use reqwest::Method;
use support::{Server, Tmpfs, WAIT, fill, new_key};
use torture::{
    Chain, Game, Mode, SCRIPTS, Work, books_with, check_books, crash_seed, drive, find_landed,
    plan, run_out_the_clock, runtime, set_up, setting,
};

/// One test at a time: they kill processes, fill a disk and measure, on a small machine.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `PRAGMA integrity_check` on the SQLite file (beside the running server: WAL readers do
/// not disturb the writer).
async fn integrity_check(db: &Path) {
    use sqlx::Connection as _;
    let url = format!("sqlite://{}", db.display());
    let mut conn = sqlx::SqliteConnection::connect(&url)
        .await
        .expect("the database opens");
    let verdict: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_all(&mut conn)
        .await
        .expect("the integrity check runs");
    assert_eq!(verdict, ["ok"], "PRAGMA integrity_check");
    conn.close().await.expect("the connection closes");
}

/// SIGKILL at a random moment of each round of concurrent games and money movements, then
/// restart and check: every answered command is there, nothing unanswered is half there,
/// the money adds up, stats follow the endings, the clients resume with their idempotency
/// keys, and deadlines set before the crash still fire.
#[test]
fn crash_torture() {
    let _serial = serial();
    let seed = crash_seed();
    let rounds = setting("TRIAD_CRASH_ROUNDS", 3, 100);
    let players = usize::try_from(setting("TRIAD_CRASH_PLAYERS", 80, 200)).unwrap();
    eprintln!(
        "crash torture: TRIAD_CRASH_SEED={seed} TRIAD_CRASH_ROUNDS={rounds} TRIAD_CRASH_PLAYERS={players}"
    );
    runtime().block_on(crash_torture_run(seed, rounds, players));
}

async fn crash_torture_run(seed: u64, rounds: u64, players: usize) {
    let started = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let mut server = Server::start(dir.path(), &owner_key.address_string(), &[]).await;
    let (world, mut books) = set_up(&server.api, &owner_key, players).await;
    let world = Arc::new(world);
    let (mut answered_total, mut landed_unanswered, mut sent_total) = (0, 0, 0);
    for round in 0..rounds {
        let chains = plan(&mut rng, &format!("{seed:x}-r{round}"), players, 0.15);
        let total: usize = chains.iter().map(Chain::len).sum();
        let kill_at = rng.random_range(1..total);
        sent_total += total;

        let api = server.api.clone();
        let answered = Arc::new(AtomicUsize::new(0));
        let stream = {
            let (api, world, answered) = (api.clone(), world.clone(), answered.clone());
            tokio::spawn(async move {
                drive(
                    std::slice::from_ref(&api),
                    &world,
                    chains,
                    &answered,
                    Mode::MayDie,
                )
                .await
            })
        };
        let waiting = Instant::now();
        while answered.load(Ordering::SeqCst) < kill_at {
            assert!(
                waiting.elapsed() < WAIT,
                "round {round}: the commands are answered"
            );
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        server.kill9();
        let mut chains = stream.await.expect("the clients end");
        answered_total += chains.iter().map(|c| c.acked).sum::<usize>();

        // The engine replays the log and audits it before the server listens again.
        server.restart().await;
        let api = server.api.clone();
        integrity_check(&server.db()).await;
        find_landed(&api, &world, &mut chains, &books).await;
        let in_flight: usize = chains.iter().map(|c| c.landed - c.acked).sum();
        landed_unanswered += in_flight;
        let now = books_with(&books, &chains, |c| c.landed);
        check_books(
            &api,
            &world,
            &now,
            &format!("round {round} after the crash"),
        )
        .await;

        // The clients resume, then the games left open run out of time.
        let mut chains = drive(
            std::slice::from_ref(&api),
            &world,
            chains,
            &answered,
            Mode::Strict,
        )
        .await;
        run_out_the_clock(std::slice::from_ref(&api), &world, &mut chains).await;
        books = books_with(&books, &chains, Chain::len);
        assert_eq!(books.escrow, 0);
        check_books(&api, &world, &books, &format!("round {round}, end")).await;
        assert_eq!(api.get("/healthz", None).await.ok()["live_matches"], 0);
        eprintln!(
            "round {round}: killed after {kill_at} of {total} answers; {in_flight} landed unanswered"
        );
    }
    // And once more, from a last kill.
    server.restart().await;
    integrity_check(&server.db()).await;
    check_books(&server.api, &world, &books, "after the last restart").await;
    eprintln!(
        "crash torture: seed {seed}, {rounds} rounds of {players} players, {sent_total} commands, \
         {answered_total} answered before a kill, {landed_unanswered} landed without an answer; \
         {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The SQLite file on a small tmpfs that fills up: commands are refused with
/// `storage_full` (503, code 218), nothing refused is applied, reads go on, the server
/// neither dies nor wedges, and once space returns the same commands (same keys) go through;
/// after a SIGKILL the file passes `PRAGMA integrity_check` and the engine's audit.
#[test]
fn full_disk() {
    let _serial = serial();
    let cycles = setting("TRIAD_FULL_DISK_CYCLES", 3, 30);
    runtime().block_on(full_disk_run(cycles));
}

async fn full_disk_run(cycles: u64) {
    let dir = tempfile::tempdir().unwrap();
    // Room for the database to grow over the cycles (about 1 MiB each).
    let disk = Tmpfs::mount(&dir.path().join("disk"), (8 + 2 * cycles) << 20);
    let owner_key = new_key();
    let db = disk.path.join("triad.db");
    let mut server = Server::start_on(dir.path(), &db, &owner_key.address_string(), &[], &[]).await;
    let players = 40;
    let (world, mut books) = set_up(&server.api, &owner_key, players).await;
    let world = Arc::new(world);
    let mut rng = ChaCha8Rng::seed_from_u64(cycles);
    let (mut refused_total, mut logins_refused) = (0, 0);
    for cycle in 0..cycles {
        let api = server.api.clone();
        let margin = rng.random_range(0..64u64) * 4096;
        let filler = fill(&disk.path, margin);
        // Load until the disk is full: fresh rounds of games and money, each chain stopped
        // at its first refusal.
        let answered = Arc::new(AtomicUsize::new(0));
        let mut chains = Vec::new();
        for batch in 0.. {
            assert!(batch < 200, "cycle {cycle}: the disk never filled");
            let tag = format!("d{cycle}-{batch}");
            let done = drive(
                std::slice::from_ref(&api),
                &world,
                plan(&mut rng, &tag, players, 0.0),
                &answered,
                Mode::MayFill,
            )
            .await;
            let full = done.iter().any(|c| c.refused);
            for c in done {
                if c.refused {
                    chains.push(c);
                } else {
                    books = books_with(&books, std::slice::from_ref(&c), Chain::len);
                }
            }
            if full {
                break;
            }
        }
        let refused = chains.len();
        refused_total += refused;
        // Nothing refused was applied; reads still work; the server is up.
        for c in &mut chains {
            c.landed = c.acked;
        }
        let held = books_with(&books, &chains, |c| c.acked);
        check_books(&api, &world, &held, &format!("cycle {cycle}, disk full")).await;
        // The server cannot take commands: `/healthz` says so (it said ok here before).
        let health = api.get("/healthz", None).await;
        health.expect_error(503, 218);
        assert!(
            health.retry_after.is_some(),
            "storage_full says when to retry"
        );
        // A login stores a session: refused as well, or (if its page had room) done.
        let login = api.try_login(&new_key()).await;
        if login.status == 503 {
            login.expect_error(503, 218);
            logins_refused += 1;
        } else {
            assert_eq!(login.status, 200, "{}", login.body);
        }

        // Space comes back: the refused commands go through with the same keys.
        std::fs::remove_file(&filler).expect("the filler goes");
        assert_eq!(api.get("/healthz", None).await.status, 200);
        let again = drive(
            std::slice::from_ref(&api),
            &world,
            chains,
            &answered,
            Mode::Strict,
        )
        .await;
        books = books_with(&books, &again, Chain::len);
        assert_eq!(books.escrow, 0);
        check_books(&api, &world, &books, &format!("cycle {cycle}, space back")).await;
        let fresh = api.login(&new_key()).await;
        assert!(!fresh.token.is_empty());
        eprintln!(
            "full disk, cycle {cycle}: {} commands answered, {refused} refused with storage_full",
            answered.load(Ordering::SeqCst)
        );
    }
    server.kill9();
    server.restart().await;
    integrity_check(&db).await;
    check_books(&server.api, &world, &books, "after the restart").await;
    eprintln!(
        "full disk: {cycles} cycles, {refused_total} commands refused and then retried; \
         {logins_refused} logins refused"
    );
}

/// One answered command of the load soak.
#[derive(Copy, Clone, Debug)]
struct Sample {
    /// Milliseconds since the start.
    at_ms: u64,
    latency_us: u64,
    is_move: bool,
}

/// The server's resident memory in kB.
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Steady load: pairs of players play game after game at a fixed pace, with a deposit and
/// a withdrawal after each game. Per interval: moves/s, latencies and the server's memory.
/// At the end: no errors, every answered command there (also after a SIGKILL), and the
/// memory no higher after warm-up than a generous bound.
#[test]
fn load_soak() {
    let _serial = serial();
    let secs = setting("TRIAD_SOAK_SECS", 20, 600);
    let pairs = usize::try_from(setting("TRIAD_SOAK_PAIRS", 50, 50)).unwrap();
    let rate = setting("TRIAD_SOAK_RATE", 200, 200);
    let interval = setting("TRIAD_SOAK_INTERVAL_SECS", 2, 30);
    runtime().block_on(load_soak_run(secs, pairs, rate, interval));
}

async fn load_soak_run(secs: u64, pairs: usize, rate: u64, interval: u64) {
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    // Finished matches leave memory 5 s (of the dev clock, which follows real time here)
    // after they end; they stay in the database.
    let mut server = Server::start(
        dir.path(),
        &owner_key.address_string(),
        &["--finished-retention-ms", "5000"],
    )
    .await;
    let api = server.api.clone();
    let (world, base) = set_up(&api, &owner_key, 2 * pairs).await;
    let world = Arc::new(world);
    let pid = server.pid();
    let stop = Arc::new(AtomicBool::new(false));
    let samples: Arc<Mutex<Vec<Sample>>> = Arc::new(Mutex::new(Vec::new()));
    let started = Instant::now();

    // The dev clock follows real time.
    let clock = {
        let (api, stop) = (api.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_secs(1)).await;
                api.advance(1_000).await;
            }
        })
    };
    // Each pair sends one command per `period`: `rate` commands per second in all.
    let period = Duration::from_micros(1_000_000 * pairs as u64 / rate);
    let mut clients = tokio::task::JoinSet::new();
    for pair in 0..pairs {
        let (api, w, stop, samples) = (api.clone(), world.clone(), stop.clone(), samples.clone());
        clients.spawn(async move {
            let mut ticks = tokio::time::interval(period);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // Spread the pairs over the period.
            tokio::time::sleep(period * u32::try_from(pair).unwrap() / pairs as u32).await;
            let mut done: Vec<Chain> = Vec::new();
            let mut local: Vec<Sample> = Vec::new();
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let script = (pair + n) % SCRIPTS.len();
                let game = Game {
                    a: 2 * pair,
                    b: 2 * pair + 1,
                    script,
                    stake: 1_000 + 10 * n as u64,
                    planned: SCRIPTS[script].moves.len(),
                    id: None,
                    end: None,
                };
                let money = Work::Money {
                    p: 2 * pair + n % 2,
                    ops: vec![7, -3],
                };
                for work in [Work::Game(game), money] {
                    let mut c = Chain::new(format!("soak-{pair}-{n}"), work);
                    while c.acked < c.len() {
                        ticks.tick().await;
                        let (_, path, token, body) = c.request(&w, c.acked);
                        let sent = Instant::now();
                        let r = api
                            .try_send(Method::POST, &path, Some(&token), Some(&body))
                            .await
                            .unwrap_or_else(|e| panic!("{} {path}: no answer: {e}", c.key));
                        let latency_us = u64::try_from(sent.elapsed().as_micros()).unwrap();
                        c.answered(c.acked, &r);
                        local.push(Sample {
                            at_ms: u64::try_from(sent.duration_since(started).as_millis()).unwrap(),
                            latency_us,
                            is_move: matches!(c.work, Work::Game(_)) && c.acked >= 2,
                        });
                        c.acked += 1;
                    }
                    done.push(c);
                }
                n += 1;
                if local.len() >= 256 {
                    samples.lock().unwrap().append(&mut local);
                }
            }
            samples.lock().unwrap().append(&mut local);
            done
        });
    }

    // Sample the server's memory each interval.
    let mut rss: Vec<(u64, u64)> = Vec::new();
    let end = started + Duration::from_secs(secs);
    let mut next = started;
    while Instant::now() < end {
        next += Duration::from_secs(interval);
        tokio::time::sleep_until(next.min(end).into()).await;
        rss.push((started.elapsed().as_secs(), rss_kb(pid)));
    }
    stop.store(true, Ordering::SeqCst);
    let mut chains = Vec::new();
    while let Some(r) = clients.join_next().await {
        chains.extend(r.expect("a client ends without an error"));
    }
    clock.await.expect("the clock task ends");
    let elapsed = started.elapsed().as_secs_f64();

    // The figures, per interval.
    let samples = std::mem::take(&mut *samples.lock().unwrap());
    let ms = interval * 1_000;
    println!(
        "\nload soak: {pairs} pairs, {rate} commands/s asked, {secs} s, intervals of {interval} s"
    );
    println!(
        "| interval (s) | commands/s | moves/s | move p50 (ms) | move p99 (ms) | move max (ms) | server RSS (MB) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let intervals = secs.div_ceil(interval);
    for i in 0..intervals {
        let in_it: Vec<&Sample> = samples.iter().filter(|s| s.at_ms / ms == i).collect();
        let mut moves: Vec<u64> = in_it
            .iter()
            .filter(|s| s.is_move)
            .map(|s| s.latency_us)
            .collect();
        moves.sort_unstable();
        let span = (secs - i * interval).min(interval) as f64;
        let mb = rss
            .get(usize::try_from(i).unwrap())
            .map_or(0.0, |r| r.1 as f64 / 1024.0);
        println!(
            "| {}-{} | {:.0} | {:.0} | {:.1} | {:.1} | {:.1} | {mb:.1} |",
            i * interval,
            ((i + 1) * interval).min(secs),
            in_it.len() as f64 / span,
            moves.len() as f64 / span,
            percentile(&moves, 0.50) as f64 / 1000.0,
            percentile(&moves, 0.99) as f64 / 1000.0,
            moves.last().copied().unwrap_or(0) as f64 / 1000.0,
        );
    }
    let mut all: Vec<u64> = samples
        .iter()
        .filter(|s| s.is_move)
        .map(|s| s.latency_us)
        .collect();
    all.sort_unstable();
    println!(
        "total: {} commands ({} moves) in {elapsed:.1} s: {:.0} commands/s, {:.0} moves/s; move p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; 0 errors",
        samples.len(),
        all.len(),
        samples.len() as f64 / elapsed,
        all.len() as f64 / elapsed,
        percentile(&all, 0.50) as f64 / 1000.0,
        percentile(&all, 0.99) as f64 / 1000.0,
        all.last().copied().unwrap_or(0) as f64 / 1000.0,
    );

    // Nothing lost: the books of every answered command, before and after a SIGKILL.
    let books = books_with(&base, &chains, Chain::len);
    assert_eq!(books.escrow, 0);
    check_books(&api, &world, &books, "after the soak").await;
    server.restart().await;
    integrity_check(&server.db()).await;
    check_books(&server.api, &world, &books, "after the soak and a SIGKILL").await;

    // Memory: flat once warm. The first quarter warms up (caches, pools, the retention
    // window filling); after it, the peak may exceed the warm figure by 10 % or 16 MB,
    // whichever is more. A leak grows without bound and fails this in a long run.
    let warm_at = secs / 4;
    let warm = rss.iter().find(|(t, _)| *t >= warm_at).map_or(0, |r| r.1);
    let peak = rss
        .iter()
        .filter(|(t, _)| *t >= warm_at)
        .map(|r| r.1)
        .max()
        .unwrap_or(0);
    let bound = warm + (warm / 10).max(16 * 1024);
    println!(
        "memory: {:.1} MB when warm ({warm_at} s), peak after {:.1} MB, bound {:.1} MB",
        warm as f64 / 1024.0,
        peak as f64 / 1024.0,
        bound as f64 / 1024.0
    );
    assert!(
        peak <= bound,
        "the server's memory grew after warm-up: {rss:?}"
    );
}
