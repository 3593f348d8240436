//! `triad serve` dies and comes back: SIGKILL in the middle of concurrent games with
//! requests in flight, and a graceful SIGTERM with a WebSocket open. Every acknowledged
//! command must survive; an unacknowledged one is either wholly there or wholly absent.

mod support;

use std::{
    collections::{BTreeSet, HashMap},
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use reqwest::Method;
use serde_json::{Value, json};
use support::{
    Api, E, Player, SOS_ALL_O, SOS_DIAGONAL, Server, TTT_SLOW_WIN, TTT_TOP_ROW, Ws, kind, new_key,
    nth, seqs_increasing, share,
};

/// Each player's starting money.
const D: u64 = 100 * E;
/// Concurrent games.
const PAIRS: usize = 20;

/// How a game ended, with the winner's player index.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum End {
    Win(usize),
    Draw,
    Timeout(usize),
    Aborted,
}

#[derive(Debug)]
struct Game {
    id: u64,
    /// The pair number.
    pair: usize,
    /// The first player's index; `b` is the second's.
    a: usize,
    b: usize,
    stake: u64,
    script: &'static [(u8, &'static str)],
    /// Moves known to be on the board.
    moves: u8,
    end: Option<End>,
}

impl Game {
    fn mover(&self, seq: u8) -> usize {
        if seq % 2 == 1 { self.a } else { self.b }
    }
}

/// What the rules say everyone holds: balances, the reserve and the money in escrow.
fn expected_money(games: &[Game], start: &[u64]) -> (Vec<u64>, u64, u64) {
    let mut balances = start.to_vec();
    let (mut reserve, mut escrow) = (0, 0);
    for g in games {
        let (s, pot) = (g.stake, 2 * g.stake);
        balances[g.a] -= s;
        balances[g.b] -= s;
        match g.end {
            None => escrow += pot,
            Some(End::Win(w)) => {
                balances[w] += share(pot, 9_000);
                reserve += pot - share(pot, 9_000);
            }
            Some(End::Draw) => {
                balances[g.a] += share(s, 9_000);
                balances[g.b] += share(s, 9_000);
                reserve += pot - 2 * share(s, 9_000);
            }
            Some(End::Timeout(w)) => {
                balances[w] += share(pot, 9_500);
                reserve += pot - share(pot, 9_500);
            }
            Some(End::Aborted) => {
                balances[g.a] += s;
                balances[g.b] += s;
            }
        }
    }
    (balances, reserve, escrow)
}

async fn balances(api: &Api, players: &[Player]) -> Vec<u64> {
    futures_util::future::join_all(players.iter().map(|p| api.balance(p))).await
}

async fn all_stats(api: &Api, players: &[Player]) -> Vec<Value> {
    futures_util::future::join_all(players.iter().map(|p| api.stats(&p.address))).await
}

/// The board and the log of a match agree with each other and with the script.
async fn check_board(api: &Api, g: &Game) -> u8 {
    let m = api.match_(g.id).await;
    let moves = m["moves"].as_array().unwrap();
    let n = u8::try_from(moves.len()).unwrap();
    for (i, mv) in moves.iter().enumerate() {
        let expected = nth(g.script, u8::try_from(i).unwrap() + 1);
        assert_eq!(
            (mv["seq"].as_u64(), mv["cell"].as_u64(), mv["mark"].as_str()),
            (
                Some(u64::from(expected.seq)),
                Some(u64::from(expected.cell)),
                Some(expected.mark)
            ),
            "match {}: {m}",
            g.id
        );
    }
    assert_eq!(m["seq"].as_u64(), Some(u64::from(n)));
    let log = api.match_events(g.id).await;
    seqs_increasing(&log);
    let logged: Vec<(u64, u64, String)> = log
        .iter()
        .filter(|e| kind(e) == "moved")
        .map(|e| {
            (
                e["kind"]["seq"].as_u64().unwrap(),
                e["kind"]["cell"].as_u64().unwrap(),
                e["kind"]["mark"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let on_board: Vec<(u64, u64, String)> = moves
        .iter()
        .map(|mv| {
            (
                mv["seq"].as_u64().unwrap(),
                mv["cell"].as_u64().unwrap(),
                mv["mark"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        logged, on_board,
        "match {}: the log and the board agree",
        g.id
    );
    let phase = if g.end.is_some() {
        "finished"
    } else if n == 0 {
        "ready"
    } else {
        "in_progress"
    };
    assert_eq!(m["phase"], phase, "match {}: {m}", g.id);
    n
}

/// Deposited minus withdrawn is everything held: balances, the reserve, the escrows.
async fn check_conservation(api: &Api, owner: &Player, players: &[Player], escrow: u64) {
    let (reserve, deposited, withdrawn) = api.reserve(owner).await;
    let held: u64 = balances(api, players).await.iter().sum::<u64>() + api.balance(owner).await;
    assert_eq!(deposited - withdrawn, held + reserve + escrow);
}

/// A chain of commands sent one after another.
enum Chain {
    /// The moves of a game, by index.
    Moves(usize),
    /// The deposits to a player, by index.
    Deposits(usize),
}

/// The deposits each player gets during the stream, plus the player's index.
const DEPOSITS: [u64; 3] = [1_000, 20_000, 300_000];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_with_requests_in_flight_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let mut server = Server::start(dir.path(), &owner_key.address_string(), &[]).await;
    let api = server.api.clone();
    let owner = api.login(&owner_key).await;
    let players = api.players(2 * PAIRS).await;
    for r in futures_util::future::join_all(players.iter().map(|p| api.deposit(&owner, p, D))).await
    {
        r.ok();
    }

    // Twenty games at once: ten challenges (tic-tac-toe), ten from the queue (SOS), each
    // with its own stake; three are played to the end, the others to 0-3 moves.
    let setups = (0..PAIRS).map(|pair| {
        let api = api.clone();
        let (a, b) = (2 * pair, 2 * pair + 1);
        let (pa, pb) = (players[a].clone(), players[b].clone());
        async move {
            let stake = E + 1_000 * pair as u64;
            let (id, script): (u64, &'static [(u8, &str)]) = if pair < 10 {
                let id = api.challenge_accepted(&pa, &pb, "tic-tac-toe", stake).await;
                (
                    id,
                    if pair < 3 {
                        &TTT_TOP_ROW
                    } else {
                        &TTT_SLOW_WIN
                    },
                )
            } else {
                (api.queue_pair(&pa, &pb, "sos", stake).await, &SOS_ALL_O)
            };
            let mut g = Game {
                id,
                pair,
                a,
                b,
                stake,
                script,
                moves: 0,
                end: None,
            };
            let planned = if pair < 3 { 5 } else { (pair % 4) as u8 };
            for n in 1..=planned {
                let who = if g.mover(n) == a { &pa } else { &pb };
                let m = api.play(who, id, nth(script, n)).await;
                g.moves = n;
                if m["phase"] == "finished" {
                    g.end = Some(End::Win(a));
                }
            }
            g
        }
    });
    let mut games: Vec<Game> = futures_util::future::join_all(setups).await;
    assert_eq!(games.iter().filter(|g| g.end.is_some()).count(), 3);

    // Everything acknowledged so far.
    let before = balances(&api, &players).await;
    let stats_before = all_stats(&api, &players).await;
    let owner_before = api.balance(&owner).await;
    let (reserve_before, deposited_before, _) = api.reserve(&owner).await;
    let (expected, reserve, escrow) = expected_money(&games, &vec![D; players.len()]);
    assert_eq!(before, expected);
    assert_eq!(reserve_before, reserve);
    assert_eq!(deposited_before, D * players.len() as u64);
    check_conservation(&api, &owner, &players, escrow).await;
    for s in &stats_before[..6] {
        assert_eq!(s["games"].as_u64(), Some(1), "{s}");
    }

    // A stream of commands: every live game (but games 4 and 12, whose first move never
    // comes) plays on as fast as it can without ending, and every player gets three
    // deposits one after another. Each chain sends a command once the previous one is
    // answered. The server is killed when about a third are answered: some commands are
    // then committed but unanswered, some half-way through a commit, some never arrived.
    let answered = Arc::new(AtomicUsize::new(0));
    let mut chains = tokio::task::JoinSet::new();
    let mut chain_len = 0;
    for (gi, g) in games.iter().enumerate() {
        if g.end.is_some() || g.pair == 4 || g.pair == 12 {
            continue;
        }
        // Tic-tac-toe's slow win cannot end before move 7, nine Os never end before 9.
        let last = if g.pair < 10 { 6 } else { 8 };
        let steps: Vec<(String, u64, Value)> = (g.moves + 1..=last)
            .map(|n| {
                let mv = nth(g.script, n);
                (
                    players[g.mover(n)].token.clone(),
                    g.id,
                    json!({ "seq": mv.seq, "cell": mv.cell, "mark": mv.mark }),
                )
            })
            .collect();
        chain_len += steps.len();
        let (api, answered) = (api.clone(), answered.clone());
        chains.spawn(async move {
            let sent = steps.len();
            for (n, (token, id, body)) in steps.into_iter().enumerate() {
                let path = format!("/api/matches/{id}/moves");
                match api
                    .try_send(Method::POST, &path, Some(&token), Some(&body))
                    .await
                {
                    Ok(r) => assert_eq!(r.status, 201, "an answered move succeeded: {}", r.body),
                    Err(_) => return (Chain::Moves(gi), n, true),
                }
                answered.fetch_add(1, Ordering::SeqCst);
            }
            (Chain::Moves(gi), sent, false)
        });
    }
    for (i, p) in players.iter().enumerate() {
        let (api, answered) = (api.clone(), answered.clone());
        let (owner, to) = (owner.clone(), p.address.clone());
        chain_len += DEPOSITS.len();
        chains.spawn(async move {
            for (n, k) in DEPOSITS.iter().enumerate() {
                let body = json!({ "to": to, "amount": k + i as u64 });
                match api
                    .try_send(
                        Method::POST,
                        "/api/ledger/deposit",
                        Some(&owner.token),
                        Some(&body),
                    )
                    .await
                {
                    Ok(r) => assert_eq!(r.status, 201, "an answered deposit succeeded: {}", r.body),
                    Err(_) => return (Chain::Deposits(i), n, true),
                }
                answered.fetch_add(1, Ordering::SeqCst);
            }
            (Chain::Deposits(i), DEPOSITS.len(), false)
        });
    }
    let started = std::time::Instant::now();
    while answered.load(Ordering::SeqCst) < chain_len / 3 {
        assert!(
            started.elapsed() < support::WAIT,
            "the commands are answered"
        );
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    server.kill9();
    // Per chain: how many commands were answered, and whether one was cut off unanswered.
    let mut game_chains: HashMap<usize, (u8, bool)> = HashMap::new();
    let mut deposit_chains: HashMap<usize, (usize, bool)> = HashMap::new();
    while let Some(r) = chains.join_next().await {
        match r.unwrap() {
            (Chain::Moves(gi), n, cut) => {
                game_chains.insert(gi, (u8::try_from(n).unwrap(), cut));
            }
            (Chain::Deposits(i), n, cut) => {
                deposit_chains.insert(i, (n, cut));
            }
        }
    }
    let acked: usize = game_chains
        .values()
        .map(|c| usize::from(c.0))
        .sum::<usize>()
        + deposit_chains.values().map(|c| c.0).sum::<usize>();

    // Back on the same database.
    server.restart().await;
    let api = server.api.clone();
    let mut unanswered_but_there = 0;
    for (gi, g) in games.iter_mut().enumerate() {
        let n = check_board(&api, g).await;
        let (answered, cut) = game_chains.get(&gi).copied().unwrap_or((0, false));
        let lowest = g.moves + answered;
        assert!(
            n == lowest || (cut && n == lowest + 1),
            "match {}: {} moves before, {answered} more answered (cut: {cut}), {n} there",
            g.id,
            g.moves
        );
        unanswered_but_there += usize::from(n - lowest);
        g.moves = n;
    }
    let mut start = vec![D; players.len()];
    let mut deposited_in_flight = 0;
    let after = balances(&api, &players).await;
    for (i, (&was, &is)) in before.iter().zip(&after).enumerate() {
        let (answered, cut) = deposit_chains[&i];
        // The deposits that landed are a prefix of the chain: which one, the sum tells.
        let landed = (0..=DEPOSITS.len())
            .find(|&n| was + DEPOSITS[..n].iter().map(|k| k + i as u64).sum::<u64>() == is)
            .unwrap_or_else(|| panic!("player {i}: {was} then {is}: not a prefix of the deposits"));
        assert!(
            landed == answered || (cut && landed == answered + 1),
            "player {i}: {answered} deposits answered (cut: {cut}), {landed} landed"
        );
        unanswered_but_there += landed - answered;
        start[i] += is - was;
        deposited_in_flight += is - was;
    }
    assert_eq!(api.balance(&owner).await, owner_before);
    let (reserve_now, deposited_now, withdrawn_now) = api.reserve(&owner).await;
    assert_eq!(
        (reserve_now, deposited_now, withdrawn_now),
        (reserve_before, deposited_before + deposited_in_flight, 0)
    );
    let (expected, _, escrow) = expected_money(&games, &start);
    assert_eq!(after, expected);
    check_conservation(&api, &owner, &players, escrow).await;
    // No game ended in flight, so no stat moved.
    assert_eq!(all_stats(&api, &players).await, stats_before);
    eprintln!(
        "{acked} of {chain_len} commands were answered before the kill; \
         {unanswered_but_there} more were committed without an answer"
    );

    // The games go on. Odd pairs play to the end on the restarted server.
    let head = api.get("/healthz", None).await.ok()["events"]
        .as_u64()
        .unwrap();
    let mut lobby = Ws::connect(&api, &players[0].token).await;
    let (missed, _) = lobby.subscribe("lobby", head).await;
    assert!(missed.is_empty());
    let finishing = games
        .iter_mut()
        .filter(|g| g.end.is_none() && g.pair % 2 == 1)
        .map(|g| {
            let api = api.clone();
            let (pa, pb) = (players[g.a].clone(), players[g.b].clone());
            async move {
                for n in g.moves + 1..=u8::try_from(g.script.len()).unwrap() {
                    let who = if g.mover(n) == g.a { &pa } else { &pb };
                    let m = api.play(who, g.id, nth(g.script, n)).await;
                    g.moves = n;
                    if m["phase"] == "finished" {
                        g.end = Some(match m["outcome"]["reason"].as_str() {
                            Some("win") => End::Win(if m["outcome"]["winner"] == "first" {
                                g.a
                            } else {
                                g.b
                            }),
                            Some("draw") => End::Draw,
                            other => panic!("match {} ended by {other:?}", g.id),
                        });
                    }
                }
                assert!(g.end.is_some(), "match {} ended", g.id);
            }
        });
    futures_util::future::join_all(finishing).await;

    // The others time out: deadlines set before the kill still hold after it.
    let aborting: BTreeSet<u64> = games
        .iter()
        .filter(|g| g.end.is_none() && g.moves == 0)
        .map(|g| g.id)
        .collect();
    assert!(aborting.len() >= 2, "games 4 and 12 never moved");
    api.advance(60_001).await;
    let mut aborted = BTreeSet::new();
    while aborted != aborting {
        let event = lobby.next_event().await;
        if kind(&event) == "game_ended" && event["kind"]["reason"] == "aborted" {
            aborted.insert(event["kind"]["match_id"].as_u64().unwrap());
        }
    }
    lobby.close().await;
    for g in games.iter_mut().filter(|g| g.end.is_none()) {
        if aborting.contains(&g.id) {
            g.end = Some(End::Aborted);
            check_board(&api, g).await;
            continue;
        }
        let last_mover = g.mover(g.moves);
        let to_move = g.mover(g.moves + 1);
        api.claim(&players[to_move], g.id)
            .await
            .expect_error(403, 111);
        let claimed = api.claim(&players[last_mover], g.id).await.ok();
        assert_eq!(claimed["match"]["outcome"]["reason"], "timeout");
        g.end = Some(End::Timeout(last_mover));
    }

    // Everything settled exactly by the rules.
    let check_final =
        |api: Api, games: &[Game], players: Vec<Player>, owner: Player, start: Vec<u64>| {
            let (expected, reserve, escrow) = expected_money(games, &start);
            let ends: Vec<Option<End>> = games.iter().map(|g| g.end).collect();
            let pairs: Vec<(usize, usize)> = games.iter().map(|g| (g.a, g.b)).collect();
            async move {
                assert_eq!(escrow, 0);
                assert_eq!(balances(&api, &players).await, expected);
                assert_eq!(api.reserve(&owner).await.0, reserve);
                let stats = all_stats(&api, &players).await;
                for (end, (a, b)) in ends.iter().zip(pairs) {
                    let played = u64::from(!matches!(end, Some(End::Aborted)));
                    for p in [a, b] {
                        let won = u64::from(
                            matches!(end, Some(End::Win(w) | End::Timeout(w)) if *w == p),
                        );
                        let drew = u64::from(matches!(end, Some(End::Draw)));
                        let s = &stats[p];
                        assert_eq!(
                            (s["games"].as_u64(), s["wins"].as_u64(), s["draws"].as_u64()),
                            (Some(played), Some(won), Some(drew)),
                            "player {p}: {s}"
                        );
                        assert!(s["active_match"].is_null());
                    }
                }
                for phase in ["waiting", "ready", "in_progress"] {
                    let page = api
                        .get(&format!("/api/matches?status={phase}"), None)
                        .await
                        .ok();
                    assert_eq!(page["matches"], json!([]), "no match is left {phase}");
                }
                assert_eq!(api.get("/healthz", None).await.ok()["live_matches"], 0);
            }
        };
    check_final(
        api.clone(),
        &games,
        players.clone(),
        owner.clone(),
        start.clone(),
    )
    .await;
    check_conservation(&api, &owner, &players, 0).await;

    // And once more after another SIGKILL, with the aborts the ticker made.
    server.restart().await;
    let api = server.api.clone();
    check_final(
        api.clone(),
        &games,
        players.clone(),
        owner.clone(),
        start.clone(),
    )
    .await;
    let (_, reserve, _) = expected_money(&games, &start);
    api.post("/api/ledger/collect", Some(&owner.token), &json!({}))
        .await
        .ok();
    assert_eq!(api.balance(&owner).await, owner_before + reserve);
    assert_eq!(api.reserve(&owner).await.0, 0);
    check_conservation(&api, &owner, &players, 0).await;
}

/// A server on a database in `dir`, its owner, and two players with 10 E each.
async fn two_funded_players(dir: &std::path::Path) -> (Server, Api, Player, Player, Player) {
    let owner_key = new_key();
    let server = Server::start(dir, &owner_key.address_string(), &[]).await;
    let api = server.api.clone();
    let owner = api.login(&owner_key).await;
    let alice = api.login(&new_key()).await;
    let bob = api.login(&new_key()).await;
    for p in [&alice, &bob] {
        api.deposit(&owner, p, 10 * E).await.ok();
    }
    (server, api, owner, alice, bob)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_closes_websockets_with_1001_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, api, owner, alice, bob) = two_funded_players(dir.path()).await;
    let id = api.queue_pair(&alice, &bob, "sos", E).await;
    api.play(&alice, id, nth(&SOS_DIAGONAL, 1)).await;

    let mut ws = Ws::connect(&api, &alice.token).await;
    let (history, _) = ws.subscribe(&format!("match:{id}"), 0).await;

    // Deposits race the shutdown: each answered one must survive it. Amounts are powers of
    // two, so Bob's balance says exactly which landed.
    let mut racing = tokio::task::JoinSet::new();
    for bit in 0..20u32 {
        let (api, owner, to) = (api.clone(), owner.clone(), bob.address.clone());
        racing.spawn(async move {
            let body = json!({ "to": to, "amount": 1u64 << bit });
            let r = api
                .try_send(
                    Method::POST,
                    "/api/ledger/deposit",
                    Some(&owner.token),
                    Some(&body),
                )
                .await;
            (bit, r)
        });
    }
    tokio::task::yield_now().await;
    server.sigterm();
    assert_eq!(
        ws.expect_close().await,
        1001,
        "the WebSocket is closed as going away"
    );
    let status = server.wait_exit().await;
    assert!(status.success(), "a graceful shutdown exits 0: {status}");
    let mut answered = 0u64;
    while let Some(r) = racing.join_next().await {
        let (bit, r) = r.unwrap();
        if let Ok(r) = r {
            if r.status == 201 {
                answered |= 1 << bit;
            } else {
                // Refused, never half-done: the server said it was shutting down.
                r.expect_error(503, 212);
            }
        }
    }
    drop(ws);

    server.restart().await;
    let api = server.api.clone();
    let m = api.match_(id).await;
    assert_eq!(m["phase"], "in_progress");
    assert_eq!(m["seq"].as_u64(), Some(1));
    assert_eq!(api.balance(&alice).await, 10 * E - E);
    let extra = api.balance(&bob).await - (10 * E - E);
    assert_eq!(
        extra & answered,
        answered,
        "every answered deposit is there"
    );
    assert!(extra < 1 << 20);
    let (_, deposited, _) = api.reserve(&owner).await;
    assert_eq!(deposited, 20 * E + extra);

    // The same history, and the game goes on: Bob's token still works.
    let mut ws = Ws::connect(&api, &alice.token).await;
    let (again, caught_up) = ws.subscribe(&format!("match:{id}"), 0).await;
    assert_eq!(again, history);
    api.play(&bob, id, nth(&SOS_DIAGONAL, 2)).await;
    let moved = ws.next_event().await;
    assert_eq!(kind(&moved), "moved");
    assert!(moved["seq"].as_u64().unwrap() > caught_up);
    api.play(&alice, id, nth(&SOS_DIAGONAL, 3)).await;
    let (ended, _) = ws.until_kind("game_ended").await;
    assert_eq!(ended["kind"]["reason"], "win");
    ws.close().await;
    assert_eq!(api.balance(&alice).await, 10 * E - E + E / 10 * 18);

    // A clean shutdown left a checkpointed database: the WAL is empty.
    assert!(server.terminate().await.success());
    let wal = server.db().with_extension("db-wal");
    assert!(
        std::fs::metadata(&wal).map_or(true, |m| m.len() == 0),
        "the WAL was checkpointed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_reaches_a_websocket_busy_catching_up() {
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let mut server = Server::start(dir.path(), &owner_key.address_string(), &[]).await;
    let api = server.api.clone();
    let owner = api.login(&owner_key).await;
    let bob = api.login(&new_key()).await;
    // A long inbox to catch up on.
    const EVENTS: u64 = 1_500;
    let deposits = (1..=EVENTS).map(|amount| {
        let (api, owner, bob) = (api.clone(), owner.clone(), bob.clone());
        async move { api.deposit(&owner, &bob, amount).await }
    });
    for r in futures_util::future::join_all(deposits).await {
        r.ok();
    }

    // The shutdown comes while the socket is busy sending the catch-up, not waiting.
    let mut ws = Ws::connect(&api, &bob.token).await;
    ws.send(json!({ "type": "subscribe", "topic": "inbox", "since": 0 }))
        .await;
    let first = ws.next_json().await;
    assert_eq!(first["type"], "event");
    server.sigterm();
    let started = std::time::Instant::now();
    assert_eq!(ws.expect_close().await, 1001);
    let status = server.wait_exit().await;
    assert!(status.success(), "{status}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "the shutdown took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn the_dev_clock_resumes_where_the_log_left_off() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, api, _owner, alice, bob) = two_funded_players(dir.path()).await;
    // An hour passes on the dev clock, then a match starts whose first move never comes.
    let before = api.advance(3_600_000).await;
    let id = api.queue_pair(&alice, &bob, "sos", E).await;
    let deadline = api.match_(id).await["deadline"]["at_ms"].as_u64().unwrap();
    // The deadline is the first millisecond past the minute (the SOS contract's "more than 1
    // minute").
    assert_eq!(deadline, before + 60_001);

    // After a crash, the clock goes on from there, not from the system's time.
    server.restart().await;
    let api = server.api.clone();
    let now = api.advance(0).await;
    assert!(now >= before, "the clock went back from {before} to {now}");
    api.claim(&alice, id).await.expect_error(409, 110);
    api.advance(60_001).await;
    let m = api
        .poll("the abort", || async {
            let m = api.match_(id).await;
            (m["phase"] == "finished").then_some(m)
        })
        .await;
    assert_eq!(m["outcome"]["reason"], "aborted");
    assert_eq!(api.balance(&alice).await, 10 * E);
    assert_eq!(api.balance(&bob).await, 10 * E);
}

#[tokio::test]
async fn sigterm_right_after_start_is_still_graceful() {
    // The signal handlers are in place before the server says it listens.
    let dir = tempfile::tempdir().unwrap();
    let owner = new_key().address_string();
    let mut server = Server::start(dir.path(), &owner, &[]).await;
    assert!(server.terminate().await.success());
    for _ in 0..5 {
        server.restart().await;
        let status = server.terminate().await;
        assert!(status.success(), "SIGTERM at once: {status}");
    }
}
