//! Reliability (RELIABILITY.md): the real `triad serve` on a real socket and a real SQLite
//! file, SIGKILLed at random moments, on a disk that fills up, and under steady load.
//!
//! Short by default; `TRIAD_SOAK=1` runs the long versions. The crash torture prints its
//! seed and `TRIAD_CRASH_SEED` replays its plan: the games, the money, and where in each
//! round the server is killed (counted in answered commands); how concurrent requests
//! interleave is up to the scheduler.

mod support;

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
use serde_json::{Value, json};
use support::{
    Api, E, Player, Resp, SOS_ALL_O, SOS_DIAGONAL, Server, TTT_SLOW_WIN, TTT_TOP_ROW, Tmpfs, WAIT,
    amount, fill, new_key, nth, share,
};

/// One test at a time: they kill processes, fill a disk and measure, on a small machine.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether this is the long run (`TRIAD_SOAK=1`).
fn soak() -> bool {
    std::env::var("TRIAD_SOAK").is_ok_and(|v| v == "1")
}

/// A number from the environment, or the short or long default.
fn setting(name: &str, short: u64, long: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) if soak() => long,
        Err(_) => short,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Each player's first deposit.
const D: u64 = 100 * E;

/// A game played from a script; the challenger moves first and every script ends on its
/// last move, so any shorter prefix leaves the game open.
struct Script {
    game: &'static str,
    moves: &'static [(u8, &'static str)],
    draw: bool,
}

const SCRIPTS: [Script; 4] = [
    Script {
        game: "tic-tac-toe",
        moves: &TTT_TOP_ROW,
        draw: false,
    },
    Script {
        game: "tic-tac-toe",
        moves: &TTT_SLOW_WIN,
        draw: false,
    },
    Script {
        game: "sos",
        moves: &SOS_DIAGONAL,
        draw: false,
    },
    Script {
        game: "sos",
        moves: &SOS_ALL_O,
        draw: true,
    },
];

/// How a game ended, with the winner's player index.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum End {
    Win(usize),
    Draw,
    Timeout(usize),
    Aborted,
}

/// The owner and the players, shared by every client task.
struct World {
    owner: Player,
    players: Vec<Player>,
}

#[derive(Clone, Debug)]
struct Game {
    a: usize,
    b: usize,
    script: usize,
    stake: u64,
    /// Moves the clients make: the whole script, or fewer for a game left to its deadline.
    planned: usize,
    id: Option<u64>,
    end: Option<End>,
}

impl Game {
    fn mover(&self, seq: usize) -> usize {
        if seq % 2 == 1 { self.a } else { self.b }
    }

    fn script(&self) -> &'static Script {
        &SCRIPTS[self.script]
    }

    fn finishes(&self) -> bool {
        self.planned == self.script().moves.len()
    }
}

#[derive(Clone, Debug)]
enum Work {
    /// Challenge, accept, then the moves.
    Game(Game),
    /// Deposits by the owner (positive) and withdrawals by the player (negative).
    Money { p: usize, ops: Vec<i64> },
}

/// A client: commands sent one after another, each with its own idempotency key.
#[derive(Clone, Debug)]
struct Chain {
    key: String,
    work: Work,
    /// Commands answered with success.
    acked: usize,
    /// Command `acked` was sent and no answer came, or it was refused.
    stopped: bool,
    /// It was refused with "storage full": known not applied.
    refused: bool,
    /// How many commands the server holds after a crash: `acked`, or one more.
    landed: usize,
}

impl Chain {
    fn new(key: String, work: Work) -> Chain {
        Chain {
            key,
            work,
            acked: 0,
            stopped: false,
            refused: false,
            landed: 0,
        }
    }

    fn len(&self) -> usize {
        match &self.work {
            Work::Game(g) => 2 + g.planned,
            Work::Money { ops, .. } => ops.len(),
        }
    }

    /// The `n`th command: path, token, body.
    fn request(&self, w: &World, n: usize) -> (String, String, Value) {
        match &self.work {
            Work::Game(g) => {
                let id = g.id.unwrap_or(0);
                match n {
                    0 => (
                        "/api/challenges".to_owned(),
                        w.players[g.a].token.clone(),
                        json!({ "opponent": w.players[g.b].address, "game": g.script().game,
                                "stake": g.stake, "first": "challenger" }),
                    ),
                    1 => (
                        format!("/api/challenges/{id}/accept"),
                        w.players[g.b].token.clone(),
                        json!({}),
                    ),
                    _ => {
                        let mv = nth(g.script().moves, u8::try_from(n - 1).unwrap());
                        (
                            format!("/api/matches/{id}/moves"),
                            w.players[g.mover(n - 1)].token.clone(),
                            json!({ "seq": mv.seq, "cell": mv.cell, "mark": mv.mark }),
                        )
                    }
                }
            }
            Work::Money { p, ops } => {
                let op = ops[n];
                if op > 0 {
                    (
                        "/api/ledger/deposit".to_owned(),
                        w.owner.token.clone(),
                        json!({ "to": w.players[*p].address, "amount": op }),
                    )
                } else {
                    (
                        "/api/ledger/withdraw".to_owned(),
                        w.players[*p].token.clone(),
                        json!({ "amount": -op }),
                    )
                }
            }
        }
    }

    /// Takes in the answer to command `n`.
    fn answered(&mut self, n: usize, r: &Resp) {
        assert!(
            (200..300).contains(&r.status),
            "{} command {n}: {} {}",
            self.key,
            r.status,
            r.body
        );
        let len = self.len();
        if let Work::Game(g) = &mut self.work {
            if n == 0
                && let Some(id) = r.body["match"]["id"].as_u64()
            {
                g.id = Some(id);
            }
            if n + 1 == len && g.finishes() {
                let m = &r.body["match"];
                if !m.is_null() {
                    assert_eq!(m["phase"], "finished", "{}: {m}", self.key);
                }
                g.end = Some(if g.script().draw {
                    End::Draw
                } else {
                    End::Win(g.a)
                });
            }
        }
    }
}

/// What the server should hold: every balance, the reserve, the money in and out, the
/// money in escrow and every player's (games, wins, draws).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Books {
    balances: Vec<i64>,
    owner: i64,
    reserve: i64,
    deposited: i64,
    withdrawn: i64,
    escrow: i64,
    stats: Vec<(u64, u64, u64)>,
}

impl Books {
    fn new(players: usize) -> Books {
        Books {
            balances: vec![0; players],
            owner: 0,
            reserve: 0,
            deposited: 0,
            withdrawn: 0,
            escrow: 0,
            stats: vec![(0, 0, 0); players],
        }
    }

    fn deposit(&mut self, p: usize, k: i64) {
        self.balances[p] += k;
        self.deposited += k;
    }

    /// Adds the first `n` commands of a chain.
    fn add(&mut self, chain: &Chain, n: usize) {
        match &chain.work {
            Work::Money { p, ops } => {
                for &op in &ops[..n] {
                    self.balances[*p] += op;
                    if op > 0 {
                        self.deposited += op;
                    } else {
                        self.withdrawn -= op;
                    }
                }
            }
            Work::Game(g) => {
                let s = i64::try_from(g.stake).unwrap();
                if n >= 1 {
                    self.balances[g.a] -= s;
                    self.escrow += s;
                }
                if n >= 2 {
                    self.balances[g.b] -= s;
                    self.escrow += s;
                }
                if let Some(end) = g.end {
                    self.settle(g, end);
                }
            }
        }
    }

    /// The payout rules (the SOS contract's): 90 % of the pot to a winner, 95 % on a timeout, 90 %
    /// of each stake back on a draw, everything back on an abort; the rest to the reserve.
    fn settle(&mut self, g: &Game, end: End) {
        let (s, pot) = (g.stake, 2 * g.stake);
        let i = |v: u64| i64::try_from(v).unwrap();
        self.escrow -= i(pot);
        let paid = match end {
            End::Win(w) => {
                self.balances[w] += i(share(pot, 9_000));
                share(pot, 9_000)
            }
            End::Timeout(w) => {
                self.balances[w] += i(share(pot, 9_500));
                share(pot, 9_500)
            }
            End::Draw => {
                self.balances[g.a] += i(share(s, 9_000));
                self.balances[g.b] += i(share(s, 9_000));
                2 * share(s, 9_000)
            }
            End::Aborted => {
                self.balances[g.a] += i(s);
                self.balances[g.b] += i(s);
                pot
            }
        };
        self.reserve += i(pot - paid);
        if end != End::Aborted {
            for p in [g.a, g.b] {
                let won = matches!(end, End::Win(w) | End::Timeout(w) if w == p);
                let st = &mut self.stats[p];
                st.0 += 1;
                st.1 += u64::from(won);
                st.2 += u64::from(end == End::Draw);
            }
        }
    }
}

/// The books `chains` add to `base`, each chain counted `count(chain)` commands far.
fn books_with(base: &Books, chains: &[Chain], count: impl Fn(&Chain) -> usize) -> Books {
    let mut books = base.clone();
    for c in chains {
        books.add(c, count(c));
    }
    books
}

/// Checks the server holds exactly `books`, and that the money adds up.
async fn check_books(api: &Api, w: &World, books: &Books, what: &str) {
    let balances: Vec<i64> =
        futures_util::future::join_all(w.players.iter().map(|p| api.balance(p)))
            .await
            .into_iter()
            .map(|b| i64::try_from(b).unwrap())
            .collect();
    for (p, (is, should)) in balances.iter().zip(&books.balances).enumerate() {
        assert_eq!(is, should, "{what}: player {p}'s balance");
    }
    let (reserve, deposited, withdrawn) = api.reserve(&w.owner).await;
    let i = |v: u64| i64::try_from(v).unwrap();
    assert_eq!(
        (i(reserve), i(deposited), i(withdrawn)),
        (books.reserve, books.deposited, books.withdrawn),
        "{what}: reserve, deposited, withdrawn"
    );
    let owner = i(api.balance(&w.owner).await);
    assert_eq!(owner, books.owner, "{what}: the owner's balance");
    // Double entry: what came in and did not go out is held somewhere.
    assert_eq!(
        i(deposited) - i(withdrawn),
        balances.iter().sum::<i64>() + owner + i(reserve) + books.escrow,
        "{what}: conservation"
    );
    let stats =
        futures_util::future::join_all(w.players.iter().map(|p| api.stats(&p.address))).await;
    for (p, (s, should)) in stats.iter().zip(&books.stats).enumerate() {
        assert_eq!(
            (
                s["games"].as_u64().unwrap(),
                s["wins"].as_u64().unwrap(),
                s["draws"].as_u64().unwrap()
            ),
            *should,
            "{what}: player {p}'s stats: {s}"
        );
    }
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

/// How `drive` treats a failure.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Mode {
    /// The server may die: a request without an answer stops the chain.
    MayDie,
    /// The disk may fill: `storage_full` stops the chain; no answer is a failure.
    MayFill,
    /// Everything must succeed.
    Strict,
}

/// Runs every chain from where it stands to its end (or until it stops, by `mode`).
/// A stopped chain first sends its stopped command again, with the same key: it must be a
/// duplicate exactly when it had landed.
async fn drive(
    api: &Api,
    w: &Arc<World>,
    chains: Vec<Chain>,
    answered: &Arc<AtomicUsize>,
    mode: Mode,
) -> Vec<Chain> {
    let mut set = tokio::task::JoinSet::new();
    for (i, mut c) in chains.into_iter().enumerate() {
        let (api, w, answered) = (api.clone(), w.clone(), answered.clone());
        set.spawn(async move {
            let mut resend = c.stopped;
            c.stopped = false;
            c.refused = false;
            while c.acked < c.len() {
                let n = c.acked;
                let (path, token, body) = c.request(&w, n);
                let key = format!("{}-{n}", c.key);
                let sent = api
                    .try_send_keyed(Method::POST, &path, Some(&token), Some(&body), Some(&key))
                    .await;
                let r = match sent {
                    Ok(r) => r,
                    Err(e) => {
                        assert_eq!(mode, Mode::MayDie, "{key}: no answer: {e}");
                        c.stopped = true;
                        return (i, c);
                    }
                };
                if mode == Mode::MayFill && r.status == 503 {
                    r.expect_error(503, 218);
                    assert!(r.retry_after.is_some(), "storage_full says when to retry");
                    c.stopped = true;
                    c.refused = true;
                    return (i, c);
                }
                if resend {
                    // Landed before the crash: a duplicate; otherwise applied now.
                    let landed = c.landed > c.acked;
                    assert_eq!(
                        (r.status, r.body["duplicate"].as_bool()),
                        (if landed { 200 } else { 201 }, Some(landed)),
                        "{key} sent again (landed: {landed}): {}",
                        r.body
                    );
                    resend = false;
                }
                c.answered(n, &r);
                c.acked += 1;
                answered.fetch_add(1, Ordering::SeqCst);
            }
            (i, c)
        });
    }
    let mut done: Vec<(usize, Chain)> = Vec::new();
    while let Some(r) = set.join_next().await {
        done.push(r.expect("a client task"));
    }
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, c)| c).collect()
}

/// After a crash: how far each chain got on the server. Every answered command is there,
/// an unanswered one wholly or not at all, and the board is the script's prefix.
async fn find_landed(api: &Api, w: &World, chains: &mut [Chain], base: &Books) {
    for c in chains.iter_mut() {
        let (acked, stopped, len) = (c.acked, c.stopped, c.len());
        let key = c.key.clone();
        let Work::Game(g) = &mut c.work else {
            continue;
        };
        if g.id.is_none() {
            // The challenge's answer was lost: the challenger's active match says.
            let s = api.stats(&w.players[g.a].address).await;
            g.id = s["active_match"].as_u64();
        }
        let landed = match g.id {
            None => 0,
            Some(id) => {
                let m = api.match_(id).await;
                let moves: Vec<(u64, u64, String)> = m["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|mv| {
                        (
                            mv["seq"].as_u64().unwrap(),
                            mv["cell"].as_u64().unwrap(),
                            mv["mark"].as_str().unwrap().to_owned(),
                        )
                    })
                    .collect();
                let script: Vec<(u64, u64, String)> = (1..=moves.len())
                    .map(|n| {
                        let mv = nth(g.script().moves, u8::try_from(n).unwrap());
                        (u64::from(mv.seq), u64::from(mv.cell), mv.mark.to_owned())
                    })
                    .collect();
                assert_eq!(moves, script, "{key}: the board is the script's prefix");
                assert_eq!(amount(&m["stake"]), g.stake, "{key}: {m}");
                let landed = if m["phase"] == "waiting" {
                    1
                } else {
                    2 + moves.len()
                };
                let phase = if landed == 1 {
                    "waiting"
                } else if moves.len() == g.script().moves.len() {
                    "finished"
                } else if moves.is_empty() {
                    "ready"
                } else {
                    "in_progress"
                };
                assert_eq!(m["phase"], phase, "{key}: {m}");
                if phase == "finished" {
                    let reason = if g.script().draw { "draw" } else { "win" };
                    assert_eq!(m["outcome"]["reason"], reason, "{key}: {m}");
                    g.end = Some(if g.script().draw {
                        End::Draw
                    } else {
                        End::Win(g.a)
                    });
                }
                landed
            }
        };
        assert!(
            landed <= len && (landed == acked || (stopped && landed == acked + 1)),
            "{key}: {acked} answered (stopped: {stopped}), {landed} on the server"
        );
        c.landed = landed;
    }
    // Money: the games are known now, so each balance says whether the stopped deposit or
    // withdrawal landed.
    let known = books_with(base, chains, |c| match c.work {
        Work::Game(_) => c.landed,
        Work::Money { .. } => c.acked,
    });
    for c in chains.iter_mut() {
        let Work::Money { p, ops } = &c.work else {
            continue;
        };
        c.landed = c.acked;
        if !c.stopped {
            continue;
        }
        let is = i64::try_from(api.balance(&w.players[*p]).await).unwrap();
        let without = known.balances[*p];
        if is == without + ops[c.acked] {
            c.landed = c.acked + 1;
        } else {
            assert_eq!(
                is, without,
                "{}: player {p}'s balance is neither with nor without the unanswered command",
                c.key
            );
        }
    }
}

/// A round's plan: every player in one game (a few left to their deadlines) and one to
/// three money movements.
fn plan(rng: &mut ChaCha8Rng, tag: &str, players: usize, hanging: f64) -> Vec<Chain> {
    let mut order: Vec<usize> = (0..players).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    let mut chains = Vec::new();
    for pair in order.chunks_exact(2) {
        let script = rng.random_range(0..SCRIPTS.len());
        let len = SCRIPTS[script].moves.len();
        let planned = if rng.random_bool(hanging) {
            rng.random_range(0..len)
        } else {
            len
        };
        let game = Game {
            a: pair[0],
            b: pair[1],
            script,
            stake: rng.random_range(1..=100u64) * 1_000,
            planned,
            id: None,
            end: None,
        };
        chains.push(Chain::new(
            format!("{tag}-g{}", chains.len()),
            Work::Game(game),
        ));
    }
    for p in 0..players {
        let ops = (0..rng.random_range(1..=3))
            .map(|_| {
                let k = rng.random_range(1..=10_000i64);
                if rng.random_bool(0.5) { k } else { -k }
            })
            .collect();
        chains.push(Chain::new(
            format!("{tag}-m{}", chains.len()),
            Work::Money { p, ops },
        ));
    }
    chains
}

/// Games left open run out of time: an unplayed one is aborted by the server's ticker, in
/// any other the last mover claims the win (the player to move cannot).
async fn run_out_the_clock(api: &Api, w: &World, chains: &mut [Chain]) {
    api.advance(60_001).await;
    for c in chains.iter_mut() {
        let Work::Game(g) = &mut c.work else {
            continue;
        };
        if g.finishes() {
            continue;
        }
        let id = g.id.expect("an accepted match");
        if g.planned == 0 {
            let m = api
                .poll("the ticker aborts an unplayed match", || async {
                    let m = api.match_(id).await;
                    (m["phase"] == "finished").then_some(m)
                })
                .await;
            assert_eq!(m["outcome"]["reason"], "aborted", "{m}");
            g.end = Some(End::Aborted);
        } else {
            let last = g.mover(g.planned);
            let to_move = g.mover(g.planned + 1);
            api.claim(&w.players[to_move], id)
                .await
                .expect_error(403, 111);
            let claimed = api.claim(&w.players[last], id).await.ok();
            assert_eq!(claimed["match"]["outcome"]["reason"], "timeout");
            g.end = Some(End::Timeout(last));
        }
    }
}

/// The owner and `n` players, each with `D` deposited.
async fn set_up(api: &Api, owner_key: &triad_identity::KeyFile, n: usize) -> (World, Books) {
    let owner = api.login(owner_key).await;
    let players = api.players(n).await;
    let mut books = Books::new(n);
    for r in futures_util::future::join_all(players.iter().map(|p| api.deposit(&owner, p, D))).await
    {
        r.ok();
    }
    for p in 0..n {
        books.deposit(p, i64::try_from(D).unwrap());
    }
    (World { owner, players }, books)
}

/// SIGKILL at a random moment of each round of concurrent games and money movements, then
/// restart and check: every answered command is there, nothing unanswered is half there,
/// the money adds up, stats follow the endings, the clients resume with their idempotency
/// keys, and deadlines set before the crash still fire.
#[test]
fn crash_torture() {
    let _serial = serial();
    let seed = std::env::var("TRIAD_CRASH_SEED").map_or_else(
        |_| {
            let mut bytes = [0u8; 8];
            rand::TryRng::try_fill_bytes(&mut rand::rngs::SysRng, &mut bytes).expect("randomness");
            u64::from_le_bytes(bytes)
        },
        |v| v.parse().expect("TRIAD_CRASH_SEED is a number"),
    );
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
            tokio::spawn(async move { drive(&api, &world, chains, &answered, Mode::MayDie).await })
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
        let mut chains = drive(&api, &world, chains, &answered, Mode::Strict).await;
        run_out_the_clock(&api, &world, &mut chains).await;
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
                &api,
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
        let again = drive(&api, &world, chains, &answered, Mode::Strict).await;
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
                        let (path, token, body) = c.request(&w, c.acked);
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
