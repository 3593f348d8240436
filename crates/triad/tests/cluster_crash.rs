//! The crash torture on a cluster (RELIABILITY.md, "Crashes"): three `triad serve` nodes on
//! one PostgreSQL server of the test's own, players spread over the nodes, each round of
//! concurrent staked games and money movements cut by a SIGKILL of one node mid-burst, of
//! PostgreSQL's postmaster, or of every PostgreSQL process at once, or by a SIGSTOP of the
//! node that holds the cluster lock, for longer than the lock lets its holder be silent
//! (PostgreSQL then ends its session, and the other nodes go on). After each crash every
//! acknowledged command is there on every node's view, nothing unanswered is half there,
//! no command counts twice, the money adds up on every node, and the engine rebuilt from the
//! log alone passes its audit.
//!
//! It owns its PostgreSQL, since it kills it: a throwaway cluster made with `initdb` and run
//! with `pg_ctl` from `TRIAD_TEST_PG_BIN` (set by `cargo xtask test` and `cargo xtask pg`),
//! else from `PATH` or `/usr/lib/postgresql/*/bin`. As root, PostgreSQL runs as the
//! `postgres` user. Short by default; `TRIAD_SOAK=1` runs the long version. The seed is
//! printed and `TRIAD_CRASH_SEED` replays the plan.

mod support;
mod torture;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::{Api, Server, WAIT, free_port, kind, new_key};
use torture::{
    Books, Chain, Mode, Work, World, books_with, check_books, crash_seed, drive, find_landed, plan,
    run_out_the_clock, runtime, set_up, setting,
};
use triad_server::store::LockConnection;

const NODES: usize = 3;

/// The engine seed every node runs with (the log's replay needs the same).
const ENGINE_SEED: u64 = 17;

/// What cuts a round.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Cut {
    /// SIGKILL of one node, restarted while the other nodes go on.
    Node,
    /// SIGKILL of PostgreSQL's postmaster alone: its backends end by themselves.
    Postmaster,
    /// SIGKILL of every PostgreSQL process at once (its process group).
    Postgres,
    /// SIGSTOP of the node that holds the cluster lock, caught holding it; SIGCONT once
    /// PostgreSQL has ended its session and a little more.
    Freeze,
}

/// The cuts in turn, so that even the short run has each.
const CUTS: [Cut; 4] = [Cut::Node, Cut::Postmaster, Cut::Freeze, Cut::Postgres];

/// The longest the cluster lock stays with a stopped node: PostgreSQL ends the session of a
/// holder silent for `LockConnection::SILENCE`; the rest is for the machine's load.
const FROZEN_HOLDER_BOUND: Duration = Duration::from_secs(LockConnection::SILENCE.as_secs() + 5);

/// The database URL of node `i`: its connections are named `node-i …` in
/// `pg_stat_activity`, so that `pg_locks` tells which node holds the cluster lock.
fn node_url(url: &str, i: usize) -> String {
    format!("{url}?application_name=node-{i}")
}

/// The node whose connection holds the cluster lock, if one does: the advisory lock on
/// `LockConnection::KEY`, which `pg_locks` shows as its high and low 32 bits.
async fn lock_holder(admin: &mut sqlx::PgConnection) -> Option<usize> {
    let key = LockConnection::KEY;
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT s.application_name FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid \
         WHERE l.locktype = 'advisory' AND l.classid::bigint = $1 AND l.objid::bigint = $2 \
         AND l.objsubid = 1 AND l.granted AND s.datname = current_database()",
    )
    .bind(key >> 32)
    .bind(key & 0xffff_ffff)
    .fetch_all(admin)
    .await
    .expect("pg_locks can be read");
    assert!(
        names.len() <= 1,
        "one holder of the cluster lock: {names:?}"
    );
    let name = names.first()?;
    let node = name
        .strip_prefix("node-")
        .and_then(|rest| rest.strip_suffix(" triad lock"))
        .and_then(|i| i.parse().ok());
    Some(node.unwrap_or_else(|| panic!("the cluster lock is held by {name:?}, not a node")))
}

/// Sends `signal` (`STOP`, `CONT`) to the processes `pids`, at once.
fn signal(signal: &str, pids: &[u32]) {
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    let sent = Command::new("kill")
        .arg(format!("-{signal}"))
        .args(&pids)
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -{signal} {pids:?}");
}

/// Stops (SIGSTOP) the node that holds the cluster lock, caught holding it. Every node is
/// stopped at once, and `pg_locks` read once what they sent before the stop (a release,
/// say) has had time to run: the holder then stays stopped, and the others go on. When
/// none holds it at that moment, all go on, and the next try comes a little later.
/// Returns the node stopped, and the tries it took.
async fn stop_the_lock_holder(admin: &mut sqlx::PgConnection, nodes: &[Server]) -> (usize, u32) {
    let pids: Vec<u32> = nodes.iter().map(Server::pid).collect();
    let started = Instant::now();
    let mut tries = 0;
    loop {
        tries += 1;
        assert!(
            started.elapsed() < WAIT,
            "no node was caught holding the cluster lock"
        );
        signal("STOP", &pids);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let holder = lock_holder(admin).await;
        let others: Vec<u32> = (0..pids.len())
            .filter(|&i| Some(i) != holder)
            .map(|i| pids[i])
            .collect();
        signal("CONT", &others);
        if let Some(holder) = holder {
            return (holder, tries);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Where PostgreSQL's programs are: `TRIAD_TEST_PG_BIN`, else the directory of `pg_ctl` on
/// `PATH` (its real one, where `postgres` sits beside it), else the newest
/// `/usr/lib/postgresql/*/bin`.
fn postgres_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("TRIAD_TEST_PG_BIN").filter(|v| !v.is_empty()) {
        return PathBuf::from(bin);
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("pg_ctl"))
            .find(|p| p.is_file())
            .and_then(|p| std::fs::canonicalize(p).ok())
            .and_then(|p| p.parent().map(Path::to_owned))
    });
    if let Some(bin) = on_path {
        return bin;
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).unwrap_or_else(|| {
        panic!(
            "no PostgreSQL programs (initdb, pg_ctl): this test runs its own PostgreSQL. Run it \
             with `cargo xtask pg`, which finds or installs them and sets TRIAD_TEST_PG_BIN"
        )
    })
}

/// A PostgreSQL server of this test's own, in a temporary directory on a free port, so that
/// it can be killed and started again on the same data. `fsync` is off: a SIGKILL does not
/// lose what the kernel holds, and a commit has written its WAL before it answers. Stopped
/// (immediately) when dropped.
struct Postgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    /// Whether PostgreSQL's programs run as the `postgres` user (they refuse root).
    as_postgres: bool,
}

impl Postgres {
    fn start() -> Postgres {
        let bin = postgres_bin();
        let uid = Command::new("id").arg("-u").output().expect("id runs");
        let as_postgres = String::from_utf8_lossy(&uid.stdout).trim() == "0";
        let dir = tempfile::tempdir().expect("a temporary directory");
        if as_postgres {
            let owned = Command::new("chown")
                .arg("postgres:")
                .arg(dir.path())
                .status()
                .expect("chown runs");
            assert!(owned.success(), "chown postgres: {}", dir.path().display());
        }
        let pg = Postgres {
            bin,
            dir,
            port: free_port(),
            as_postgres,
        };
        let made = pg.run(
            "initdb",
            &[
                "-D",
                &pg.data(),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            ],
        );
        assert!(made.status.success(), "initdb: {}", output_text(&made));
        pg.pg_ctl_start().unwrap_or_else(|e| panic!("{e}"));
        pg
    }

    fn data(&self) -> String {
        self.dir.path().join("data").to_string_lossy().into_owned()
    }

    /// The server's URL, to database `name`.
    fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Runs one of PostgreSQL's programs (as `postgres` when this is root).
    fn run(&self, program: &str, args: &[&str]) -> Output {
        let path = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(path);
            cmd
        } else {
            Command::new(path)
        };
        cmd.args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{program} runs: {e}"))
    }

    fn pg_ctl_start(&self) -> Result<(), String> {
        let dir = self.dir.path().to_string_lossy().into_owned();
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories={dir} \
             -c max_connections=200 -c fsync=off",
            self.port
        );
        let log = format!("{dir}/log");
        let data = self.data();
        let started = self.run(
            "pg_ctl",
            &[
                "-D", &data, "-l", &log, "-w", "-t", "30", "-o", &options, "start",
            ],
        );
        if started.status.success() {
            Ok(())
        } else {
            Err(format!(
                "pg_ctl start: {}\n{}",
                output_text(&started),
                std::fs::read_to_string(&log).unwrap_or_default()
            ))
        }
    }

    /// The postmaster's process id, from its pid file.
    fn postmaster_pid(&self) -> u32 {
        let file = self.dir.path().join("data").join("postmaster.pid");
        let text = std::fs::read_to_string(&file).expect("postmaster.pid");
        text.lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .expect("postmaster.pid starts with the pid")
    }

    /// SIGKILL to the postmaster alone, or to its whole process group (every backend, the
    /// checkpointer, the WAL writer: the postmaster leads a session of its own).
    fn kill9(&self, everything: bool) {
        let pid = self.postmaster_pid();
        let target = if everything {
            format!("-{pid}")
        } else {
            pid.to_string()
        };
        let killed = Command::new("kill")
            .args(["-KILL", "--", &target])
            .status()
            .expect("kill runs");
        assert!(killed.success(), "kill -KILL -- {target}");
    }

    /// Starts the server again on the same data: it recovers from its WAL. After a SIGKILL
    /// of the postmaster alone, its old backends hold the shared memory until they notice
    /// and exit, and the start is refused until then: so it is tried again, bounded.
    async fn restart(&self) {
        let started = Instant::now();
        loop {
            match self.pg_ctl_start() {
                Ok(()) => return,
                Err(e) if started.elapsed() > WAIT => {
                    panic!("PostgreSQL did not start again within {WAIT:?}: {e}")
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    /// Makes database `name`.
    async fn create_database(&self, name: &str) {
        use sqlx::Connection as _;
        let mut admin = sqlx::PgConnection::connect(&self.url("postgres"))
            .await
            .expect("PostgreSQL lets the test in");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .expect("a new database");
        admin.close().await.expect("the connection closes");
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
    }
}

fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Waits (bounded) until every node says it is healthy: its core runs, it is not
/// rebuilding, and its database answers.
async fn all_healthy(apis: &[Api], what: &str) {
    for (i, api) in apis.iter().enumerate() {
        api.poll(&format!("{what}: node {i} is healthy"), || async {
            let health = api
                .try_send(reqwest::Method::GET, "/healthz", None, None)
                .await;
            health.ok().filter(|r| r.status == 200).map(|_| ())
        })
        .await;
    }
}

/// On one node's view, at the end of a round: each game of the round ended once, with one
/// `moved` event per move played, so no command counted twice.
async fn check_matches(api: &Api, chains: &[Chain], what: &str) {
    for c in chains {
        let Work::Game(g) = &c.work else { continue };
        let id = g.id.expect("every game of the round was accepted");
        let events = api.match_events(id).await;
        let moves = events.iter().filter(|e| kind(e) == "moved").count();
        let ends = events.iter().filter(|e| kind(e) == "game_ended").count();
        assert_eq!(
            (moves, ends),
            (g.planned, 1),
            "{what}: {}: moves and endings of match {id}",
            c.key
        );
    }
}

/// The log alone rebuilds an engine that passes its own audit and holds `books`.
async fn audit_the_log(url: &str, owner: &str, w: &World, books: &Books, what: &str) {
    let store = triad_server::store::Store::open(url)
        .await
        .expect("the database opens");
    let mut config = triad_engine::Config::new(owner.parse().expect("an address"));
    config.seed = ENGINE_SEED;
    let engine = store.load_engine(config).await.expect("the log replays");
    engine
        .audit()
        .unwrap_or_else(|e| panic!("{what}: the engine's audit: {e}"));
    for (p, player) in w.players.iter().enumerate() {
        let balance = engine.balance(player.address.parse().expect("an address"));
        assert_eq!(
            i64::try_from(balance).unwrap(),
            books.balances[p],
            "{what}: player {p}'s balance in the log"
        );
    }
    assert_eq!(
        i64::try_from(engine.reserve()).unwrap(),
        books.reserve,
        "{what}: the reserve in the log"
    );
    store.close().await;
}

/// Rounds of concurrent games and money movements over three nodes, each cut by a SIGKILL
/// of a node or of PostgreSQL, then checked on every node.
#[test]
fn cluster_crash_torture() {
    let seed = crash_seed();
    let rounds = setting("TRIAD_CRASH_ROUNDS", 4, 40);
    let players = usize::try_from(setting("TRIAD_CRASH_PLAYERS", 48, 120)).unwrap();
    eprintln!(
        "cluster crash torture: TRIAD_CRASH_SEED={seed} TRIAD_CRASH_ROUNDS={rounds} \
         TRIAD_CRASH_PLAYERS={players}"
    );
    runtime().block_on(cluster_crash_torture_run(seed, rounds, players));
}

#[allow(clippy::too_many_lines)]
async fn cluster_crash_torture_run(seed: u64, rounds: u64, players: usize) {
    let started = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let pg = Postgres::start();
    pg.create_database("triad").await;
    let url = pg.url("triad");
    let owner_key = new_key();
    let owner = owner_key.address_string();
    let dirs: Vec<tempfile::TempDir> = (0..NODES).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut nodes = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        // A fixed port, so that a restarted node is where its clients left it.
        let addr = format!("127.0.0.1:{}", free_port());
        let seed = ENGINE_SEED.to_string();
        let database = node_url(&url, i);
        let args = ["--addr", &addr, "--database", &database, "--seed", &seed];
        nodes.push(Server::start(dir.path(), &owner, &args).await);
    }
    let apis: Vec<Api> = nodes.iter().map(|n| n.api.clone()).collect();
    let (mut world, mut books) = set_up(&apis[0], &owner_key, players).await;
    world.home = (0..players).map(|p| p % NODES).collect();
    let world = Arc::new(world);
    let (mut answered_total, mut landed_unanswered, mut sent_total) = (0, 0, 0);
    let mut cut_counts = [0usize; 4];
    for round in 0..rounds {
        let cut = CUTS[usize::try_from(round).unwrap() % CUTS.len()];
        let chains = plan(&mut rng, &format!("{seed:x}-c{round}"), players, 0.15);
        let total: usize = chains.iter().map(Chain::len).sum();
        // A freeze comes while most of the burst is still to come: the lock is busy.
        let last = if cut == Cut::Freeze { total / 2 } else { total };
        let kill_at = rng.random_range(1..last.max(2));
        let mut victim = rng.random_range(0..NODES);
        let mut down_ms = rng.random_range(0..300u64);
        sent_total += total;

        let mode = match cut {
            Cut::Node => Mode::MayDie,
            Cut::Postmaster | Cut::Postgres => Mode::MayLoseDatabase,
            Cut::Freeze => Mode::MayFreeze,
        };
        let answered = Arc::new(AtomicUsize::new(0));
        let stream = {
            let (apis, world, answered) = (apis.clone(), world.clone(), answered.clone());
            tokio::spawn(async move { drive(&apis, &world, chains, &answered, mode).await })
        };
        let waiting = Instant::now();
        while answered.load(Ordering::SeqCst) < kill_at {
            assert!(
                waiting.elapsed() < WAIT,
                "round {round}: the commands are answered"
            );
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        // The other nodes go on while the victim is down, and it comes back mid-burst.
        match cut {
            Cut::Node => {
                nodes[victim].kill9();
                cut_counts[0] += 1;
                tokio::time::sleep(Duration::from_millis(down_ms)).await;
                nodes[victim].restart().await;
            }
            Cut::Postmaster | Cut::Postgres => {
                pg.kill9(cut == Cut::Postgres);
                cut_counts[if cut == Cut::Postmaster { 1 } else { 2 }] += 1;
                tokio::time::sleep(Duration::from_millis(down_ms)).await;
                pg.restart().await;
            }
            Cut::Freeze => {
                use sqlx::Connection as _;
                let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
                let tries;
                (victim, tries) = stop_the_lock_holder(&mut admin, &nodes).await;
                cut_counts[3] += 1;
                let stopped = Instant::now();
                // The stopped node's session is ended under it, and the lock with it.
                while lock_holder(&mut admin).await == Some(victim) {
                    assert!(
                        stopped.elapsed() < FROZEN_HOLDER_BOUND,
                        "round {round}: node {victim}, stopped, still holds the cluster lock"
                    );
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                down_ms = u64::try_from(stopped.elapsed().as_millis()).unwrap();
                let before = answered.load(Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(500)).await;
                let meanwhile = answered.load(Ordering::SeqCst) - before;
                signal("CONT", &[nodes[victim].pid()]);
                eprintln!(
                    "round {round}: node {victim}, stopped holding the cluster lock (caught on \
                     try {tries}), lost it with its session after {down_ms} ms; then \
                     {meanwhile} answers in 500 ms"
                );
            }
        }
        let mut chains = stream.await.expect("the clients end");
        answered_total += chains.iter().map(|c| c.acked).sum::<usize>();
        let stopped = chains.iter().filter(|c| c.stopped).count();

        // Nobody restarts a node after PostgreSQL's crash: each finds its way back.
        all_healthy(&apis, &format!("round {round} after the crash")).await;
        find_landed(&apis[0], &world, &mut chains, &books).await;
        let in_flight: usize = chains.iter().map(|c| c.landed - c.acked).sum();
        landed_unanswered += in_flight;
        let now = books_with(&books, &chains, |c| c.landed);
        for (i, api) in apis.iter().enumerate() {
            let what = format!("round {round} after the crash, node {i}");
            check_books(api, &world, &now, &what).await;
        }

        // The clients resume, each through its own node, then the open games run out of time.
        let mut chains = drive(&apis, &world, chains, &answered, Mode::Strict).await;
        run_out_the_clock(&apis, &world, &mut chains).await;
        books = books_with(&books, &chains, Chain::len);
        assert_eq!(books.escrow, 0);
        for (i, api) in apis.iter().enumerate() {
            let what = format!("round {round}, end, node {i}");
            check_books(api, &world, &books, &what).await;
            check_matches(api, &chains, &what).await;
            api.poll(&format!("{what}: no live match"), || async {
                let health = api.get("/healthz", None).await.ok();
                (health["live_matches"] == 0).then_some(())
            })
            .await;
        }
        audit_the_log(&url, &owner, &world, &books, &format!("round {round}")).await;
        eprintln!(
            "round {round}: {cut:?} cut (node {victim}, down {down_ms} ms) after {kill_at} of \
             {total} answers; {stopped} clients cut, {in_flight} commands landed unanswered"
        );
    }
    // And once more: every node and PostgreSQL killed at once, started again.
    for node in &mut nodes {
        node.kill9();
    }
    pg.kill9(true);
    pg.restart().await;
    for node in &mut nodes {
        node.restart().await;
    }
    all_healthy(&apis, "after the last restart").await;
    for (i, api) in apis.iter().enumerate() {
        check_books(
            api,
            &world,
            &books,
            &format!("after the last restart, node {i}"),
        )
        .await;
    }
    audit_the_log(&url, &owner, &world, &books, "after the last restart").await;
    eprintln!(
        "cluster crash torture: seed {seed}, {rounds} rounds of {players} players on {NODES} \
         nodes ({} node kills, {} postmaster kills, {} PostgreSQL kills, {} lock holders \
         frozen), {sent_total} commands, {answered_total} answered before a kill, \
         {landed_unanswered} landed without an answer; {:.1} s",
        cut_counts[0],
        cut_counts[1],
        cut_counts[2],
        cut_counts[3],
        started.elapsed().as_secs_f64()
    );
}
