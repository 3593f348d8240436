//! Three `triad serve` processes on one PostgreSQL database (`TRIAD_TEST_POSTGRES`; run
//! through `cargo xtask test` or `cargo xtask pg`). Players spread over the three nodes
//! play many games at once, each sending to its own node; one node is killed with SIGKILL
//! in the middle and restarted; its players go on through another node meanwhile. After
//! the games, every balance, stat and match is audited against the rules on every node,
//! and the engine rebuilt from the log alone passes its own audit.

mod support;

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use serde_json::json;
use support::{
    Api, E, Mv, Player, SOS_ALL_O, SOS_DIAGONAL, Server, TTT_SLOW_WIN, TTT_TOP_ROW, free_port,
    fresh_database, kind, new_key, nth, share,
};

const NODES: usize = 3;
const PAIRS: usize = 24;
const STAKE: u64 = E;
const D: u64 = 100 * E;

/// The scripts the pairs play in turn, and who wins each: `Some(0)` the first player,
/// `None` a draw.
type Script = &'static [(u8, &'static str)];

const SCRIPTS: [(Script, &str, Option<usize>); 4] = [
    (&TTT_TOP_ROW, "tic-tac-toe", Some(0)),
    (&TTT_SLOW_WIN, "tic-tac-toe", Some(0)),
    (&SOS_DIAGONAL, "sos", Some(0)),
    (&SOS_ALL_O, "sos", None),
];

/// Sends a move through the player's node, going to the next node whenever one does not
/// answer; a retried move that had been taken before its answer was lost is found on the
/// board. Returns the node it used last.
async fn play_move(
    apis: &[Api],
    mut node: usize,
    p: &Player,
    id: u64,
    m: Mv,
    failovers: &AtomicUsize,
) -> usize {
    for _ in 0..200 {
        let api = &apis[node];
        let sent = api
            .try_send(
                reqwest::Method::POST,
                &format!("/api/matches/{id}/moves"),
                Some(&p.token),
                Some(&json!({ "seq": m.seq, "cell": m.cell, "mark": m.mark })),
            )
            .await;
        match sent {
            Ok(r) if r.status == 201 => return node,
            Ok(r) if r.status == 503 => {}
            Ok(r) => {
                // Taken before, through a node that died before it answered?
                let now = api.match_(id).await;
                let on_board = now["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|mv| mv["seq"].as_u64() == Some(u64::from(m.seq)));
                assert!(on_board, "move {m:?} of match {id} refused: {:?}", r.body);
                return node;
            }
            // No answer: this node is down; the player reconnects to the next one.
            Err(_) => {
                failovers.fetch_add(1, Ordering::SeqCst);
                node = (node + 1) % apis.len();
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("move {m:?} of match {id} never went through");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_survive_a_sigkill_mid_game_and_the_audit_holds() {
    let url = fresh_database("cluster").await;
    let owner_key = new_key();
    let owner_address = owner_key.address_string();
    let ports: Vec<u16> = (0..NODES).map(|_| free_port()).collect();
    let dirs: Vec<tempfile::TempDir> = (0..NODES).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut servers = Vec::new();
    for (dir, port) in dirs.iter().zip(&ports) {
        let addr = format!("127.0.0.1:{port}");
        servers.push(
            Server::start(
                dir.path(),
                &owner_address,
                &["--addr", &addr, "--database", &url, "--seed", "11"],
            )
            .await,
        );
    }
    let apis: Vec<Api> = servers.iter().map(|s| s.api.clone()).collect();
    let owner = apis[0].login(&owner_key).await;

    // Each pair: the first player on node i, the second on node i + 1.
    let mut players = Vec::new();
    let mut games = Vec::new();
    for pair in 0..PAIRS {
        let (na, nb) = (pair % NODES, (pair + 1) % NODES);
        let a = apis[na].login(&new_key()).await;
        let b = apis[nb].login(&new_key()).await;
        apis[nb].deposit(&owner, &a, D).await.ok();
        apis[na].deposit(&owner, &b, D).await.ok();
        let (script, game, winner) = SCRIPTS[pair % SCRIPTS.len()];
        let id = apis[na].challenge_accepted(&a, &b, game, STAKE).await;
        games.push((id, [na, nb], script, winner, pair));
        players.push((a, b));
    }

    // Every game is played at once, each player through its own node.
    let played = Arc::new(AtomicUsize::new(0));
    let failovers = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for (pair, &(id, nodes, script, _, _)) in games.iter().enumerate() {
        let (a, b) = players[pair].clone();
        let apis = apis.clone();
        let played = played.clone();
        let failovers = failovers.clone();
        tasks.push(tokio::spawn(async move {
            let mut nodes = nodes;
            for n in 1..=u8::try_from(script.len()).unwrap() {
                let side = usize::from(n % 2 == 0);
                let who = if side == 0 { &a } else { &b };
                nodes[side] =
                    play_move(&apis, nodes[side], who, id, nth(script, n), &failovers).await;
                played.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }));
    }

    // Kill node 1 in the middle of play, then bring it back on the same port.
    let total: usize = games.iter().map(|g| g.2.len()).sum();
    while played.load(Ordering::SeqCst) < total / 3 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    servers[1].kill9();
    let at_kill = played.load(Ordering::SeqCst);
    assert!(at_kill < total, "the kill came after every move");
    tokio::time::sleep(Duration::from_millis(300)).await;
    servers[1].restart().await;
    for t in tasks {
        t.await.expect("a game's task ends");
    }
    let failovers = failovers.load(Ordering::SeqCst);
    assert!(failovers > 0, "no player had to go to another node");

    // The audit, on every node: each match, each player's balance and stats, the money.
    let mut reserve_expected = 0;
    for &(id, _, script, winner, pair) in &games {
        let (a, b) = &players[pair];
        let pot = 2 * STAKE;
        let (ea, eb) = match winner {
            Some(_) => {
                reserve_expected += pot - share(pot, 9_000);
                (D - STAKE + share(pot, 9_000), D - STAKE)
            }
            None => {
                reserve_expected += pot - 2 * share(STAKE, 9_000);
                (
                    D - STAKE + share(STAKE, 9_000),
                    D - STAKE + share(STAKE, 9_000),
                )
            }
        };
        for api in &apis {
            let m = api.match_(id).await;
            assert_eq!(m["phase"], "finished", "match {id}: {m}");
            assert_eq!(m["moves"].as_array().unwrap().len(), script.len());
            let events = api.match_events(id).await;
            let ends = events.iter().filter(|e| kind(e) == "game_ended").count();
            let moves = events.iter().filter(|e| kind(e) == "moved").count();
            assert_eq!((ends, moves), (1, script.len()), "match {id}");
            assert_eq!(api.balance(a).await, ea, "match {id}");
            assert_eq!(api.balance(b).await, eb, "match {id}");
            let (sa, sb) = (api.stats(&a.address).await, api.stats(&b.address).await);
            let wins = u64::from(winner.is_some());
            assert_eq!(
                (
                    sa["games"].as_u64(),
                    sa["wins"].as_u64(),
                    sb["wins"].as_u64()
                ),
                (Some(1), Some(wins), Some(0))
            );
            assert_eq!(sb["draws"].as_u64(), Some(1 - wins));
        }
    }
    for api in &apis {
        let (reserve, deposited, withdrawn) = api.reserve(&owner).await;
        assert_eq!(reserve, reserve_expected);
        assert_eq!((deposited, withdrawn), (2 * D * PAIRS as u64, 0));
    }

    // The log alone rebuilds an engine that passes its audit and agrees with the nodes.
    let store = triad_server::store::Store::open(&url).await.unwrap();
    let mut config = triad_engine::Config::new(owner_address.parse().unwrap());
    config.seed = 11;
    let engine = store.load_engine(config).await.expect("the log replays");
    engine.audit().unwrap();
    for (a, b) in &players {
        for p in [a, b] {
            assert_eq!(
                engine.balance(p.address.parse().unwrap()),
                u128::from(apis[2].balance(p).await)
            );
        }
    }
    store.close().await;
    println!(
        "{PAIRS} games, {total} moves over {NODES} nodes; node 1 killed after {at_kill} moves; \
         {failovers} requests went to another node"
    );
}

/// A staked Swiss event on two nodes of one database: the owner creates it on one, four
/// `triad agent --tournament` processes enter and play through both, each node's clock
/// moves (each ticks when its clock says a round is due, and the database serialises
/// them), and both nodes end with the same standings, prizes and money, which the log
/// alone rebuilds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_runs_across_two_nodes() {
    let url = fresh_database("tournament").await;
    let owner_key = new_key();
    let owner_address = owner_key.address_string();
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut servers = Vec::new();
    for dir in &dirs {
        let addr = format!("127.0.0.1:{}", free_port());
        servers.push(
            Server::start(
                dir.path(),
                &owner_address,
                &[
                    "--addr",
                    &addr,
                    "--database",
                    &url,
                    "--seed",
                    "13",
                    "--tournament-round-gap-ms",
                    "300",
                ],
            )
            .await,
        );
    }
    let apis: Vec<Api> = servers.iter().map(|s| s.api.clone()).collect();
    let owner = apis[0].login(&owner_key).await;
    let created = apis[0]
        .post(
            "/api/tournaments",
            Some(&owner.token),
            &json!({"name": "Two nodes", "game": "sos", "format": "swiss", "rounds": 3,
                    "starts_in_seconds": 60, "entry_fee": E.to_string(),
                    "prizes_bps": [7000, 2000]}),
        )
        .await
        .ok();
    let id = created["tournament"]["id"].as_u64().unwrap();
    let mut agents = Vec::new();
    for i in 0..4 {
        let key = new_key();
        let path = dirs[0].path().join(format!("agent-{i}.json"));
        key.save(&path, false).unwrap();
        let player = apis[i % 2].login(&key).await;
        apis[i % 2].deposit(&owner, &player, D).await.ok();
        let log = std::fs::File::create(dirs[0].path().join(format!("agent-{i}.err"))).unwrap();
        agents.push(
            std::process::Command::new(env!("CARGO_BIN_EXE_triad"))
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("TRIAD_SERVER", &apis[i % 2].base)
                .env("TRIAD_KEY_FILE", &path)
                .args([
                    "agent",
                    "--tournament",
                    &id.to_string(),
                    "--strategy",
                    "random",
                ])
                .args(["--seed", &i.to_string()])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(log)
                .spawn()
                .unwrap(),
        );
    }
    apis[1]
        .poll("four entrants, seen on the other node", || async {
            let t = apis[1]
                .get(&format!("/api/tournaments/{id}"), None)
                .await
                .ok();
            (t["players"] == 4).then_some(())
        })
        .await;
    // Both clocks move: a second every 150 ms, each node ticking by its own.
    let started = std::time::Instant::now();
    let mut statuses = vec![None; agents.len()];
    while statuses.iter().any(Option::is_none) {
        for api in &apis {
            api.advance(if started.elapsed() < Duration::from_millis(200) {
                60_000
            } else {
                1_000
            })
            .await;
        }
        for (agent, status) in agents.iter_mut().zip(statuses.iter_mut()) {
            if status.is_none() {
                *status = agent.try_wait().unwrap();
            }
        }
        let logs = || {
            (0..4)
                .map(|i| {
                    std::fs::read_to_string(dirs[0].path().join(format!("agent-{i}.err"))).unwrap()
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the agents did not finish:\n{}",
            logs()
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    for (i, status) in statuses.into_iter().enumerate() {
        assert!(status.unwrap().success(), "agent {i} failed");
    }
    // Both nodes tell the same end.
    let views: Vec<serde_json::Value> = {
        let mut v = Vec::new();
        for api in &apis {
            let t = api
                .poll("the end on this node", || async {
                    let t = api.get(&format!("/api/tournaments/{id}"), None).await.ok();
                    (t["phase"] == "finished").then_some(t)
                })
                .await;
            v.push(t);
        }
        v
    };
    assert_eq!(views[0]["standings"], views[1]["standings"]);
    assert_eq!(views[0]["prizes"], views[1]["prizes"]);
    assert_eq!(views[0]["round"], 3);
    let prizes: u64 = views[0]["prizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["amount"].as_str().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        prizes,
        4 * E * 9 / 10,
        "70% and 20% of the pool of four fees"
    );
    let (reserve, deposited, _) = apis[1].reserve(&owner).await;
    assert_eq!(deposited, 4 * D);
    assert_eq!(reserve, 4 * E / 10, "the reserve keeps a tenth of the pool");
    // The log alone rebuilds an engine that passes its audit.
    let store = triad_server::store::Store::open(&url).await.unwrap();
    let mut config = triad_engine::Config::new(owner_address.parse().unwrap());
    config.seed = 13;
    let engine = store.load_engine(config).await.expect("the log replays");
    engine.audit().unwrap();
    assert_eq!(
        engine
            .tournament(triad_engine::TournamentId(id))
            .unwrap()
            .phase,
        triad_engine::TournamentPhase::Finished
    );
    store.close().await;
}
