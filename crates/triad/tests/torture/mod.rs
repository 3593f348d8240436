//! The crash torture's clients and books, shared by the single-node torture on SQLite
//! (`reliability.rs`) and the cluster torture on PostgreSQL (`cluster_crash.rs`).
//!
//! A round is a plan of chains: every player in one staked game and one to three money
//! movements, each chain a client sending its commands one after another, each with its
//! own idempotency key, to its player's node. After a crash, [`find_landed`] learns how far
//! each chain got, [`check_books`] checks one node's view against the [`Books`] the landed
//! commands imply, and [`drive`] resumes the clients.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{
    Api, E, Player, Resp, SOS_ALL_O, SOS_DIAGONAL, TTT_SLOW_WIN, TTT_TOP_ROW, amount, nth, share,
};

/// Whether this is the long run (`TRIAD_SOAK=1`).
pub(crate) fn soak() -> bool {
    std::env::var("TRIAD_SOAK").is_ok_and(|v| v == "1")
}

/// A number from the environment, or the short or long default.
pub(crate) fn setting(name: &str, short: u64, long: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) if soak() => long,
        Err(_) => short,
    }
}

/// The crash torture's seed: `TRIAD_CRASH_SEED`, or a fresh one.
pub(crate) fn crash_seed() -> u64 {
    std::env::var("TRIAD_CRASH_SEED").map_or_else(
        |_| {
            let mut bytes = [0u8; 8];
            rand::TryRng::try_fill_bytes(&mut rand::rngs::SysRng, &mut bytes).expect("randomness");
            u64::from_le_bytes(bytes)
        },
        |v| v.parse().expect("TRIAD_CRASH_SEED is a number"),
    )
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Each player's first deposit.
pub(crate) const D: u64 = 100 * E;

/// A game played from a script; the challenger moves first and every script ends on its
/// last move, so any shorter prefix leaves the game open.
pub(crate) struct Script {
    pub(crate) game: &'static str,
    pub(crate) moves: &'static [(u8, &'static str)],
    pub(crate) draw: bool,
}

pub(crate) const SCRIPTS: [Script; 4] = [
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
pub(crate) enum End {
    Win(usize),
    Draw,
    Timeout(usize),
    Aborted,
}

/// The owner and the players, shared by every client task.
pub(crate) struct World {
    pub(crate) owner: Player,
    pub(crate) players: Vec<Player>,
    /// Each player's node: the index of the API its commands go to (the owner's deposits
    /// go to the receiving player's node).
    pub(crate) home: Vec<usize>,
}

#[derive(Clone, Debug)]
pub(crate) struct Game {
    pub(crate) a: usize,
    pub(crate) b: usize,
    pub(crate) script: usize,
    pub(crate) stake: u64,
    /// Moves the clients make: the whole script, or fewer for a game left to its deadline.
    pub(crate) planned: usize,
    pub(crate) id: Option<u64>,
    pub(crate) end: Option<End>,
}

impl Game {
    pub(crate) fn mover(&self, seq: usize) -> usize {
        if seq % 2 == 1 { self.a } else { self.b }
    }

    pub(crate) fn script(&self) -> &'static Script {
        &SCRIPTS[self.script]
    }

    pub(crate) fn finishes(&self) -> bool {
        self.planned == self.script().moves.len()
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Work {
    /// Challenge, accept, then the moves.
    Game(Game),
    /// Deposits by the owner (positive) and withdrawals by the player (negative).
    Money { p: usize, ops: Vec<i64> },
}

/// A client: commands sent one after another, each with its own idempotency key.
#[derive(Clone, Debug)]
pub(crate) struct Chain {
    pub(crate) key: String,
    pub(crate) work: Work,
    /// Commands answered with success.
    pub(crate) acked: usize,
    /// Command `acked` was sent and no answer came, or it was refused.
    pub(crate) stopped: bool,
    /// It was refused with "storage full": known not applied.
    pub(crate) refused: bool,
    /// How many commands the server holds after a crash: `acked`, or one more.
    pub(crate) landed: usize,
}

impl Chain {
    pub(crate) fn new(key: String, work: Work) -> Chain {
        Chain {
            key,
            work,
            acked: 0,
            stopped: false,
            refused: false,
            landed: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        match &self.work {
            Work::Game(g) => 2 + g.planned,
            Work::Money { ops, .. } => ops.len(),
        }
    }

    /// The `n`th command: the node it goes to, path, token, body.
    pub(crate) fn request(&self, w: &World, n: usize) -> (usize, String, String, Value) {
        match &self.work {
            Work::Game(g) => {
                let id = g.id.unwrap_or(0);
                match n {
                    0 => (
                        w.home[g.a],
                        "/api/challenges".to_owned(),
                        w.players[g.a].token.clone(),
                        json!({ "opponent": w.players[g.b].address, "game": g.script().game,
                                "stake": g.stake, "first": "challenger" }),
                    ),
                    1 => (
                        w.home[g.b],
                        format!("/api/challenges/{id}/accept"),
                        w.players[g.b].token.clone(),
                        json!({}),
                    ),
                    _ => {
                        let mv = nth(g.script().moves, u8::try_from(n - 1).unwrap());
                        (
                            w.home[g.mover(n - 1)],
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
                        w.home[*p],
                        "/api/ledger/deposit".to_owned(),
                        w.owner.token.clone(),
                        json!({ "to": w.players[*p].address, "amount": op }),
                    )
                } else {
                    (
                        w.home[*p],
                        "/api/ledger/withdraw".to_owned(),
                        w.players[*p].token.clone(),
                        json!({ "amount": -op }),
                    )
                }
            }
        }
    }

    /// Takes in the answer to command `n`.
    pub(crate) fn answered(&mut self, n: usize, r: &Resp) {
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
pub(crate) struct Books {
    pub(crate) balances: Vec<i64>,
    pub(crate) owner: i64,
    pub(crate) reserve: i64,
    pub(crate) deposited: i64,
    pub(crate) withdrawn: i64,
    pub(crate) escrow: i64,
    pub(crate) stats: Vec<(u64, u64, u64)>,
}

impl Books {
    pub(crate) fn new(players: usize) -> Books {
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

    pub(crate) fn deposit(&mut self, p: usize, k: i64) {
        self.balances[p] += k;
        self.deposited += k;
    }

    /// Adds the first `n` commands of a chain.
    pub(crate) fn add(&mut self, chain: &Chain, n: usize) {
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
    pub(crate) fn settle(&mut self, g: &Game, end: End) {
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
pub(crate) fn books_with(base: &Books, chains: &[Chain], count: impl Fn(&Chain) -> usize) -> Books {
    let mut books = base.clone();
    for c in chains {
        books.add(c, count(c));
    }
    books
}

/// Checks the server holds exactly `books`, and that the money adds up.
pub(crate) async fn check_books(api: &Api, w: &World, books: &Books, what: &str) {
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

/// How `drive` treats a failure.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The server may die: a request without an answer stops the chain.
    MayDie,
    /// The server or its database may die: a request without an answer, or refused with
    /// `storage_unavailable` (503, code 209), stops the chain.
    MayLoseDatabase,
    /// A node may stop answering for seconds (frozen holding the cluster lock): as
    /// `MayLoseDatabase`, and a request that outlived the node's time limit (408, code 214)
    /// also stops the chain.
    MayFreeze,
    /// The disk may fill: `storage_full` stops the chain; no answer is a failure.
    MayFill,
    /// Everything must succeed.
    Strict,
}

/// Runs every chain from where it stands to its end (or until it stops, by `mode`).
/// A stopped chain first sends its stopped command again, with the same key: it must be a
/// duplicate exactly when it had landed.
pub(crate) async fn drive(
    apis: &[Api],
    w: &Arc<World>,
    chains: Vec<Chain>,
    answered: &Arc<AtomicUsize>,
    mode: Mode,
) -> Vec<Chain> {
    let may_lose_database = mode == Mode::MayLoseDatabase || mode == Mode::MayFreeze;
    let mut set = tokio::task::JoinSet::new();
    for (i, mut c) in chains.into_iter().enumerate() {
        let (apis, w, answered) = (apis.to_vec(), w.clone(), answered.clone());
        set.spawn(async move {
            let mut resend = c.stopped;
            c.stopped = false;
            c.refused = false;
            while c.acked < c.len() {
                let n = c.acked;
                let (node, path, token, body) = c.request(&w, n);
                let key = format!("{}-{n}", c.key);
                let sent = apis[node]
                    .try_send_keyed(Method::POST, &path, Some(&token), Some(&body), Some(&key))
                    .await;
                let r = match sent {
                    Ok(r) => r,
                    Err(e) => {
                        assert!(
                            matches!(mode, Mode::MayDie | Mode::MayLoseDatabase | Mode::MayFreeze),
                            "{key}: no answer: {e}"
                        );
                        c.stopped = true;
                        return (i, c);
                    }
                };
                if may_lose_database && r.status == 503 {
                    // Refused, yet possibly committed: the connection died with the
                    // commit's answer. `find_landed` tells.
                    r.expect_error(503, 209);
                    c.stopped = true;
                    return (i, c);
                }
                if mode == Mode::MayFreeze && r.status == 408 {
                    // The node was stopped with the request in it: whether its command
                    // was committed is for `find_landed` to tell.
                    r.expect_error(408, 214);
                    c.stopped = true;
                    return (i, c);
                }
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
pub(crate) async fn find_landed(api: &Api, w: &World, chains: &mut [Chain], base: &Books) {
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
pub(crate) fn plan(rng: &mut ChaCha8Rng, tag: &str, players: usize, hanging: f64) -> Vec<Chain> {
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

/// Games left open run out of time: an unplayed one is aborted by the ticker of the first
/// node, in any other the last mover claims the win there (the player to move cannot).
/// Every node's clock first moves to one time past the move timeout: a node's clock may lag
/// the log's (the engine never lets time go back), and a claim is judged by its node's.
pub(crate) async fn run_out_the_clock(apis: &[Api], w: &World, chains: &mut [Chain]) {
    let nows = futures_util::future::join_all(apis.iter().map(|api| api.advance(0))).await;
    let then = nows.iter().max().expect("a node") + 60_001;
    for (api, now) in apis.iter().zip(nows) {
        api.advance(then - now).await;
    }
    let api = &apis[0];
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

/// The owner and `n` players, each with `D` deposited, all at home on the first node.
pub(crate) async fn set_up(
    api: &Api,
    owner_key: &triad_identity::KeyFile,
    n: usize,
) -> (World, Books) {
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
    let home = vec![0; n];
    (
        World {
            owner,
            players,
            home,
        },
        books,
    )
}
