//! Several nodes on one PostgreSQL database (always PostgreSQL, whatever
//! `TRIAD_TEST_BACKEND` says; `TRIAD_TEST_POSTGRES` must name a server). Each node is a
//! whole server in this process, with its own engine, hub and core, sharing only the
//! database, as separate `triad serve` processes do. Commands race through different nodes
//! for real (`tokio::join!` on a multi-threaded runtime).

use serde_json::{Value, json};
use triad_server::store::{FollowConnection, LockConnection, SCHEMA_VERSION, Store, StoreError};

use crate::common::{Resp, Server, User, base_args, fresh_postgres_database, key};

/// `n` nodes on one fresh database.
async fn cluster(n: usize) -> (Vec<Server>, String) {
    let url = fresh_postgres_database().await;
    let mut nodes = Vec::new();
    for _ in 0..n {
        nodes.push(node(url.clone()).await);
    }
    (nodes, url)
}

/// A node on the database at `url`.
async fn node(url: String) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let mut args = base_args(dir.path());
    args.database = Some(url);
    Server::start_in(dir, args).await
}

/// The engine of every node passes its audit, and so does one rebuilt from the log alone;
/// every node agrees with the log on every balance.
async fn audit(nodes: &[Server], url: &str, users: &[&User]) {
    let config = nodes[0].state().core.read().await.config().clone();
    let store = Store::open(url).await.unwrap();
    let rebuilt = store.load_engine(config).await.expect("the log replays");
    rebuilt.audit().unwrap();
    for node in nodes {
        let engine = node.state().core.read().await;
        engine.audit().unwrap();
        assert_eq!(engine.next_seq(), rebuilt.next_seq());
        for user in users {
            let address = user.address.parse().unwrap();
            assert_eq!(engine.balance(address), rebuilt.balance(address));
        }
    }
    store.close().await;
}

fn kinds(events: &Value) -> Vec<String> {
    events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"]["type"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn match_events(node: &Server, id: u64) -> Value {
    node.get(&format!("/api/matches/{id}/events?limit=500"))
        .send()
        .await
        .expect(200)
        .clone()
}

/// The ids of `user`'s matches in `status`, as `node` lists them.
async fn listed(node: &Server, user: &User, status: &str) -> Vec<u64> {
    let path = format!("/api/matches?player={}&status={status}", user.address);
    node.get(&path).send().await.expect(200)["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_players_on_two_nodes_play_each_other_in_real_time() {
    let (nodes, url) = cluster(2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let alice = a.login(&key(1)).await;
    let bob = b.login(&key(2)).await;
    // Bob's inbox, followed on both nodes.
    let mut inboxes = [a, b].map(|n| {
        let reg = n.state().hub.register(64);
        n.state()
            .hub
            .subscribe(reg.id, &format!("inbox:{}", bob.address));
        reg
    });
    a.deposit(&alice, 1_000).await;
    b.deposit(&bob, 1_000).await;

    // The challenge is made on A and accepted on B.
    let r = a
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({"opponent": bob.address, "game": "tic-tac-toe", "stake": 100}))
        .send()
        .await;
    let id = r.expect(201)["match"]["id"].as_u64().unwrap();
    // A live match is listed from each node's engine, by its phase now, whichever node
    // changed it (an API read follows the log first).
    assert_eq!(listed(b, &bob, "waiting").await, [id]);
    b.post(&format!("/api/challenges/{id}/accept"))
        .auth(&bob)
        .send()
        .await
        .expect(201);
    assert_eq!(listed(a, &bob, "waiting").await, Vec::<u64>::new());
    assert_eq!(listed(a, &bob, "ready").await, [id]);

    // Each node's subscribers of the match hear every move, whichever node took it.
    let hubs = [a, b].map(|n| {
        let reg = n.state().hub.register(64);
        n.state().hub.subscribe(reg.id, &format!("match:{id}"));
        reg
    });
    let mut hubs = hubs;
    let moves = [
        (a, &alice, 1, 0, "X"),
        (b, &bob, 2, 3, "O"),
        (a, &alice, 3, 1, "X"),
        (b, &bob, 4, 4, "O"),
        (a, &alice, 5, 2, "X"),
    ];
    for (node, who, seq, cell, mark) in moves {
        node.play(who, id, seq, cell, mark).await.expect(201);
        for reg in &mut hubs {
            // Bounded wait: the frame comes from the other node through NOTIFY (or the
            // one-second poll at worst).
            loop {
                let frame =
                    tokio::time::timeout(std::time::Duration::from_secs(5), reg.frames.recv())
                        .await
                        .expect("a frame within 5 s")
                        .expect("the hub is open");
                let v: Value = serde_json::from_str(frame.text.as_str()).unwrap();
                if v["event"]["kind"]["type"] == "moved" {
                    assert_eq!(v["event"]["kind"]["seq"], seq);
                    break;
                }
            }
        }
    }
    // Both nodes see the end and the payout (1800 of a 200 pot to the winner), and list
    // the match from the archive, no longer from the engine.
    for node in [a, b] {
        assert_eq!(node.match_(id).await["phase"], "finished");
        assert_eq!(listed(node, &bob, "active").await, Vec::<u64>::new());
        assert_eq!(listed(node, &bob, "finished").await, [id]);
        assert_eq!(node.balance(&alice).await, 900 + 180);
        assert_eq!(node.balance(&bob).await, 900);
    }
    // Both nodes sent Bob's inbox the same events, in order, whichever node took them
    // (a match's own events are derived from its players on the way to the other node:
    // `Store::events_after`), and the store's catch-up is that list too.
    let mut sent = Vec::new();
    for reg in &mut inboxes {
        let mut seqs = Vec::new();
        while let Ok(Some(frame)) =
            tokio::time::timeout(std::time::Duration::from_secs(3), reg.frames.recv()).await
        {
            let v: Value = serde_json::from_str(frame.text.as_str()).unwrap();
            let kind = v["event"]["kind"]["type"].as_str().unwrap().to_owned();
            seqs.push((frame.seq, kind));
        }
        sent.push(seqs);
    }
    assert_eq!(sent[0], sent[1]);
    let kinds: Vec<&str> = sent[0].iter().map(|(_, k)| k.as_str()).collect();
    for kind in [
        "challenge_issued",
        "challenge_accepted",
        "game_started",
        "game_ended",
    ] {
        assert!(kinds.contains(&kind), "no {kind} in {kinds:?}");
    }
    let stored = b
        .state()
        .store
        .topic_events(&format!("inbox:{}", bob.address), 0, 100)
        .await
        .unwrap();
    let stored: Vec<u64> = stored.iter().map(|e| e.seq).collect();
    let sent: Vec<u64> = sent[0].iter().map(|(seq, _)| *seq).collect();
    assert_eq!(stored, sent);
    // The log read back as a node follows it gives each event the topics it was published
    // on (stored, and the inboxes derived from the match's players), a page as the whole.
    let store = &b.state().store;
    let mut log = FollowConnection::new();
    let read_back = log.events_after(store, 0, 1_000).await.unwrap();
    let inbox = format!("inbox:{}", bob.address);
    let on_inbox: Vec<u64> = read_back
        .iter()
        .filter(|(_, topics)| topics.contains(&inbox))
        .map(|(e, _)| e.seq)
        .collect();
    assert_eq!(on_inbox, sent);
    let page = log.events_after(store, 3, 4).await.unwrap();
    assert_eq!(page, read_back[3..7]);
    // Each node had the other's moves from their batches' announcements, not by reading
    // the log back (the metrics are the process's, so both nodes' together).
    let announced = followed_events(b, "announcement").await;
    assert!(announced >= 2.0, "{announced} events applied as announced");
    audit(&nodes, &url, &[&alice, &bob]).await;
}

/// A batch too large for one notification (PostgreSQL's limit is 8,000 bytes) is
/// announced in several in a row, and the other nodes apply it whole from them, in order,
/// without reading the log back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_too_large_for_one_notification_reaches_the_other_nodes_announced() {
    use triad_engine::{Command, Envelope};
    use triad_server::store::{Commit, Encoded, LockConnection};

    let (nodes, url) = cluster(2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let alice = a.login(&key(1)).await;
    let to: triad_engine::Address = alice.address.parse().unwrap();
    let inbox = format!("inbox:{}", alice.address);
    let mut subscriber = b.state().hub.register(512);
    b.state().hub.subscribe(subscriber.id, &inbox);

    // A third writer commits 200 deposits in one batch, as a node would.
    let config = a.state().core.read().await.config().clone();
    let store = Store::open(&url).await.unwrap();
    let mut engine = store.load_engine(config.clone()).await.unwrap();
    let now = a.now().await;
    let events: Vec<_> = (0..200)
        .flat_map(|i| {
            let deposit = Command::Deposit { to, amount: 1 + i };
            let envelope = Envelope::new(config.owner, now, deposit);
            engine.execute(&envelope).unwrap().events
        })
        .collect();
    let commit = Commit {
        events: events
            .iter()
            .map(|e| Encoded::new(e, triad_server::hub::topics(e, &engine)).unwrap())
            .collect(),
        matches: Vec::new(),
        tournaments: Vec::new(),
        match_floor: engine.oldest_match_id().0,
    };
    let bytes: usize = commit.events.iter().map(|e| e.json.len()).sum();
    assert!(bytes > 3 * 8_000, "{bytes} bytes of events");
    let announced = followed_events(b, "announcement").await;
    let mut lock = LockConnection::new();
    lock.lock(&store).await.unwrap();
    lock.commit(&commit).await.unwrap();
    lock.unlock().await.unwrap();

    // B's subscriber has every deposit, in order, and both nodes applied them as announced
    // (the metrics are the process's: both nodes' together).
    let mut heard = Vec::new();
    while heard.len() < events.len() {
        let frame =
            tokio::time::timeout(std::time::Duration::from_secs(5), subscriber.frames.recv())
                .await
                .expect("a frame within 5 s")
                .expect("the hub is open");
        heard.push(frame.seq);
    }
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(heard, seqs);
    let applied = followed_events(b, "announcement").await - announced;
    assert!(applied >= 200.0, "{applied} events applied as announced");
    for node in [a, b] {
        assert_eq!(node.balance(&alice).await, (1..=200).sum::<u64>());
    }
    audit(&nodes, &url, &[&alice]).await;
    store.close().await;
}

/// The cluster's batches cost no node a read of the log: a node follows them from their
/// announcements, and its deadline ticker, which every batch wakes, reads the engine as the
/// node has it. (It used to follow the log first: a query on every node for every batch.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_clusters_batches_cost_no_node_a_read_of_the_log() {
    let (nodes, _url) = cluster(2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let alice = a.login(&key(1)).await;
    a.deposit(&alice, 1).await;
    let reads = || a.state().core.log_reads() + b.state().core.log_reads();
    let before = reads();
    let started = std::time::Instant::now();
    // Forty batches, one after the other, each heard by the other node and waking both
    // nodes' tickers.
    for _ in 0..40 {
        a.deposit(&alice, 1).await;
    }
    let last = a.state().core.read().await.next_seq() - 1;
    crate::common::eventually("B to follow A's batches", || {
        b.state().core.has_applied(last)
    })
    .await;
    // Both nodes' reads (each node's own count: the metrics are the process's, which the
    // other tests share): the once-a-second follow of each node while this ran, and the
    // read that asked for A's last event; not one per batch per node (80).
    let reads = reads() - before;
    let polls = 2 * (started.elapsed().as_secs() + 2);
    assert!(
        reads <= polls + 1,
        "{reads} reads of the log for 40 batches in {:?}",
        started.elapsed()
    );
}

/// Reads waiting at once share a read of the log (`Core::catch_up`), and each still sees
/// every deposit acknowledged on the other node before it asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reads_at_once_share_a_read_of_the_log_and_each_sees_what_was_acknowledged_before_it() {
    use std::sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    };
    let (nodes, _url) = cluster(2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let alice = a.login(&key(1)).await;
    let address: triad_engine::Address = alice.address.parse().unwrap();
    // Deposited and acknowledged on A so far; set once each deposit is answered.
    let acked = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let before = b.state().core.log_reads();
    let readers: Vec<_> = (0..16)
        .map(|_| {
            let (core, acked, done) = (b.state().core.clone(), acked.clone(), done.clone());
            tokio::spawn(async move {
                let mut reads = 0u64;
                while !done.load(Ordering::SeqCst) {
                    let asked_after = acked.load(Ordering::SeqCst);
                    let balance = core.read().await.balance(address);
                    assert!(
                        balance >= u128::from(asked_after),
                        "B read {balance} after A had acknowledged {asked_after}"
                    );
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    for amount in 1..=60 {
        a.deposit(&alice, amount).await;
        acked.fetch_add(amount, Ordering::SeqCst);
    }
    done.store(true, Ordering::SeqCst);
    let mut reads = 0;
    for reader in readers {
        reads += reader.await.unwrap();
    }
    let log_reads = b.state().core.log_reads() - before;
    assert!(
        log_reads * 2 <= reads,
        "{log_reads} reads of the log for {reads} reads of B's state"
    );
}

/// `triad_cluster_followed_events_total` from `from`, as `/metrics` shows it.
async fn followed_events(node: &Server, from: &str) -> f64 {
    let r = node.get("/metrics").send().await;
    let prefix = format!("triad_cluster_followed_events_total{{from=\"{from}\"}} ");
    r.text
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map_or(0.0, |v| v.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn players_who_queue_on_different_nodes_are_matched_exactly_once() {
    let (nodes, url) = cluster(2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let mut users = Vec::new();
    for round in 0..10u8 {
        let p = a.login(&key(1 + 2 * round)).await;
        let q = b.login(&key(2 + 2 * round)).await;
        a.deposit(&p, 500).await;
        a.deposit(&q, 500).await;
        let body = json!({"game": "tic-tac-toe", "stake": 100});
        let (rp, rq) = tokio::join!(
            a.post("/api/queue").auth(&p).json(&body).send(),
            b.post("/api/queue").auth(&q).json(&body).send(),
        );
        let (mp, mq) = (&rp.expect(201)["match"], &rq.expect(201)["match"]);
        // One waited and the other found it: one match, both seated, started once.
        assert_eq!(mp["id"], mq["id"], "round {round}: {mp} / {mq}");
        let id = mp["id"].as_u64().unwrap();
        let events = kinds(&match_events(a, id).await);
        assert_eq!(
            events.iter().filter(|k| *k == "game_started").count(),
            1,
            "{events:?}"
        );
        for node in [a, b] {
            let m = node.match_(id).await;
            assert_eq!(m["players"].as_array().unwrap().len(), 2, "{m}");
            assert_eq!(node.balance(&p).await, 400);
            assert_eq!(node.balance(&q).await, 400);
        }
        users.push(p);
        users.push(q);
    }
    let refs: Vec<&User> = users.iter().collect();
    audit(&nodes, &url, &refs).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conflicting_commands_through_two_nodes_lose_no_update_and_pay_once() {
    let (nodes, url) = cluster(2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let mut users = Vec::new();
    for round in 0..8u8 {
        let alice = a.login(&key(1 + 2 * round)).await;
        let bob = a.login(&key(2 + 2 * round)).await;
        a.deposit(&alice, 1_000).await;
        a.deposit(&bob, 1_000).await;
        let id = a.challenge_accepted(&alice, &bob, 100).await;

        // The same first move, twice, through both nodes at once: exactly one is taken.
        let (r1, r2) = tokio::join!(a.play(&alice, id, 1, 0, "X"), b.play(&alice, id, 1, 4, "X"));
        let taken = [&r1, &r2].iter().filter(|r| r.status == 201).count();
        assert_eq!(taken, 1, "{} / {}", r1.text, r2.text);
        let first_cell = if r1.status == 201 { 0 } else { 4 };
        let (o1, x2, o2) = if first_cell == 0 {
            (3, 1, 4)
        } else {
            (0, 2, 1)
        };
        a.play(&bob, id, 2, o1, "O").await.expect(201);
        b.play(&alice, id, 3, x2, "X").await.expect(201);
        a.play(&bob, id, 4, o2, "O").await.expect(201);
        let winning = if first_cell == 0 { 2 } else { 6 };

        // X's winning move on A races O's forfeit on B: one ends the match, once.
        let (win, forfeit) = tokio::join!(
            a.play(&alice, id, 5, winning, "X"),
            b.post(&format!("/api/matches/{id}/forfeit"))
                .auth(&bob)
                .send()
        );
        assert_eq!(
            [win.status.as_u16(), forfeit.status.as_u16()]
                .iter()
                .filter(|s| **s == 201)
                .count(),
            1,
            "{} / {}",
            win.text,
            forfeit.text
        );
        let events = kinds(&match_events(b, id).await);
        assert_eq!(
            events.iter().filter(|k| *k == "game_ended").count(),
            1,
            "{events:?}"
        );
        // Either way alice won: 900 + 180 (a forfeit pays as a win).
        for node in [a, b] {
            let total = node.balance(&alice).await + node.balance(&bob).await;
            assert_eq!(node.balance(&bob).await, 900, "round {round}");
            assert_eq!(total, 900 + 180 + 900, "round {round}");
        }
        users.push(alice);
        users.push(bob);
    }
    let refs: Vec<&User> = users.iter().collect();
    audit(&nodes, &url, &refs).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deadline_fires_exactly_once_across_the_cluster() {
    let (nodes, url) = cluster(3).await;
    let bob = nodes[1].login(&key(1)).await;
    let mut ids = Vec::new();
    let mut challengers = Vec::new();
    for i in 0..5u8 {
        let node = &nodes[usize::from(i) % 3];
        let alice = node.login(&key(10 + i)).await;
        node.deposit(&alice, 1_000).await;
        let r = node
            .post("/api/challenges")
            .auth(&alice)
            .json(&json!({"opponent": bob.address, "game": "sos", "stake": 100}))
            .send()
            .await;
        ids.push(r.expect(201)["match"]["id"].as_u64().unwrap());
        assert_eq!(nodes[2].balance(&alice).await, 900);
        challengers.push(alice);
    }
    // Every node's clock passes the challenges' expiry; every node's ticker wakes.
    let (_, _, _) = tokio::join!(
        nodes[0].advance(600_001),
        nodes[1].advance(600_001),
        nodes[2].advance(600_001)
    );
    for node in &nodes {
        for alice in &challengers {
            crate::common::eventually("the challenges expire everywhere", || async {
                node.balance(alice).await == 1_000
            })
            .await;
        }
    }
    for id in ids {
        let events = kinds(&match_events(&nodes[1], id).await);
        let expired = events.iter().filter(|k| *k == "challenge_expired").count();
        let refunds = events.iter().filter(|k| *k == "transferred").count();
        // One escrow of the stake, one refund, one expiry.
        assert_eq!((expired, refunds), (1, 2), "{events:?}");
    }
    let mut everyone: Vec<&User> = challengers.iter().collect();
    everyone.push(&bob);
    audit(&nodes, &url, &everyone).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nodes_take_turns_with_the_lock_and_get_over_their_connections_being_cut() {
    use sqlx::Connection as _;
    let (nodes, url) = cluster(2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let alice = a.login(&key(1)).await;
    let bob = b.login(&key(2)).await;
    // A burst on A keeps its lock for stints; B's deposits in the middle of it still go
    // through (A lets go within a stint), and every one is counted once.
    let burst = async {
        for _ in 0..40 {
            a.deposit(&alice, 1).await;
        }
    };
    let between = async {
        for _ in 0..10 {
            b.deposit(&bob, 1).await;
        }
    };
    tokio::join!(burst, between);
    assert_eq!(b.balance(&alice).await, 40);
    assert_eq!(a.balance(&bob).await, 10);

    // Every connection to the database is cut (a restart, a failover): the pools, the
    // listeners and the lock's own connections. The next command on each node is taken
    // all the same: a node reconnects instead of refusing it.
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    let cut: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t",
    )
    .fetch_one(&mut admin)
    .await
    .unwrap();
    assert!(
        cut >= 4,
        "both nodes' pools, listeners and lock connections: {cut}"
    );
    a.deposit(&alice, 5).await;
    b.deposit(&bob, 5).await;
    for node in [a, b] {
        assert_eq!(node.balance(&alice).await, 45);
        assert_eq!(node.balance(&bob).await, 15);
    }
    audit(&nodes, &url, &[&alice, &bob]).await;
}

/// A node follows the log on a connection of its own, named `triad follow` in
/// `pg_stat_activity` after the operator's own name for the node, and gets over it being
/// cut: the read is sent again on a fresh one, not refused (an API read would then have
/// answered from the node's state as it was). A database that stops answering holds its
/// readers for a bounded time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_follows_the_log_on_a_connection_of_its_own_and_gets_over_it_being_cut_or_stalled() {
    use sqlx::Connection as _;
    let url = fresh_postgres_database().await;
    let nodes = [
        node(url.clone()).await,
        node(format!("{url}?application_name=node-b")).await,
    ];
    let (a, b) = (&nodes[0], &nodes[1]);
    let alice = a.login(&key(1)).await;
    let address: triad_engine::Address = alice.address.parse().unwrap();
    let core = &b.state().core;
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    for round in 1..=3u32 {
        a.deposit(&alice, 1).await;
        let reads = core.log_reads();
        core.catch_up()
            .await
            .unwrap_or_else(|e| panic!("round {round}: B could not follow the log: {e}"));
        assert!(
            core.log_reads() > reads,
            "round {round}: B did not read the log"
        );
        assert_eq!(core.read().await.balance(address), u128::from(round));
        // B's connection is there to be cut, in every round but the first a fresh one.
        let cut: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND application_name = 'node-b triad follow') \
             AS t",
        )
        .fetch_one(&mut admin)
        .await
        .unwrap();
        assert_eq!(
            cut, 1,
            "round {round}: B's connections named for following the log"
        );
    }
    // A database that stops answering: the log is locked against every read. B's read gives
    // up (its readers then read B's state as it is) rather than hold them until TCP would.
    let mut stall = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::raw_sql("BEGIN; LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
        .execute(&mut stall)
        .await
        .unwrap();
    let patience = FollowConnection::PATIENCE;
    // Up to two reads of two tries each, the first a poll's that may have begun before.
    let stalled = tokio::time::timeout(5 * patience, core.catch_up()).await;
    assert!(
        matches!(stalled, Ok(Err(_))),
        "B's read of a stalled log: {stalled:?}"
    );
    sqlx::raw_sql("ROLLBACK").execute(&mut stall).await.unwrap();
    core.catch_up().await.expect("B follows the log again");
    audit(&nodes, &url, &[&alice]).await;
}

/// How many sessions named `name` hold an advisory lock: for a node's `triad lock`
/// connection, whether it holds the cluster lock, the only one it takes.
async fn lock_holders(admin: &mut sqlx::PgConnection, name: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid \
         WHERE l.locktype = 'advisory' AND l.granted AND s.datname = current_database() \
         AND s.application_name = $1",
    )
    .bind(name)
    .fetch_one(admin)
    .await
    .unwrap()
}

/// The owner's deposit of 1 to `to` through `node`, answered as it may be.
async fn try_deposit(node: &Server, to: &User) -> Resp {
    node.post("/api/ledger/deposit")
        .auth(&node.owner)
        .json(&json!({ "to": to.address, "amount": 1 }))
        .send()
        .await
}

/// A node that freezes while it holds the cluster lock (a stopped process, a paused
/// machine: here, its batch holds the lock and waits for its engine, which the test holds)
/// holds the other nodes up for the silence PostgreSQL allows the lock's holder, not for as
/// long as it stays frozen. Thawed, its batch finds its session ended and is refused, with
/// nothing done; its next one goes through, after what the other node did meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_node_frozen_with_the_cluster_lock_holds_the_others_up_for_a_bounded_time() {
    use sqlx::Connection as _;
    let url = fresh_postgres_database().await;
    let nodes = [
        node(format!("{url}?application_name=node-a")).await,
        node(url.clone()).await,
    ];
    let (a, b) = (&nodes[0], &nodes[1]);
    let alice = a.login(&key(1)).await;
    let bob = b.login(&key(2)).await;
    a.deposit(&alice, 1).await;
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();

    let frozen = a.state().core.read().await;
    let meanwhile = async {
        let mut waited = 0;
        while lock_holders(&mut admin, "node-a triad lock").await == 0 {
            assert!(waited < 500, "A's batch never took the cluster lock");
            waited += 1;
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // A holds the lock and says nothing; B's deposit goes through all the same.
        let patience = LockConnection::PATIENCE;
        tokio::time::timeout(patience, b.deposit(&bob, 1))
            .await
            .expect("B's deposit waited out A's silence and more");
        assert_eq!(lock_holders(&mut admin, "node-a triad lock").await, 0);
        drop(frozen);
    };
    let (thawed, ()) = tokio::join!(try_deposit(a, &alice), meanwhile);
    thawed.expect_error(503, 209, "storage_unavailable");

    a.deposit(&alice, 1).await;
    for node in [a, b] {
        assert_eq!(node.balance(&alice).await, 2);
        assert_eq!(node.balance(&bob).await, 1);
    }
    audit(&nodes, &url, &[&alice, &bob]).await;
}

/// A database that does not grant the cluster lock (here: a session of the test's own
/// holds it and stays silent, as a node may not) has a node refuse its commands once the
/// lock's patience is over, rather than hold them until TCP gives up; once it grants the
/// lock again, they go through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_refuses_its_commands_when_the_cluster_lock_is_not_granted_in_time() {
    use sqlx::Connection as _;
    let (nodes, url) = cluster(1).await;
    let a = &nodes[0];
    let alice = a.login(&key(1)).await;
    a.deposit(&alice, 1).await;
    let mut stall = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(LockConnection::KEY)
        .execute(&mut stall)
        .await
        .unwrap();
    let refused = tokio::time::timeout(2 * LockConnection::PATIENCE, try_deposit(a, &alice))
        .await
        .expect("A's deposit waited for the lock past its patience");
    refused.expect_error(503, 209, "storage_unavailable");
    sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(LockConnection::KEY)
        .execute(&mut stall)
        .await
        .unwrap();
    a.deposit(&alice, 1).await;
    assert_eq!(a.balance(&alice).await, 2);
    audit(&nodes, &url, &[&alice]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_from_one_node_works_on_another_and_a_logout_ends_it_everywhere() {
    let (nodes, _url) = cluster(2).await;
    let alice = nodes[0].login(&key(1)).await;
    nodes[1]
        .get("/api/me")
        .auth(&alice)
        .send()
        .await
        .expect(200);
    nodes[0]
        .post("/api/auth/logout")
        .auth(&alice)
        .send()
        .await
        .expect(204);
    // Node 1 cached the session; it drops it when it hears node 0's `triad_sessions`
    // notification, a few milliseconds later, and from then on refuses the token.
    let heard = tokio::time::Instant::now();
    loop {
        let r = nodes[1].get("/api/me").auth(&alice).send().await;
        if r.status == 401 {
            r.expect_error(401, 202, "invalid_token");
            break;
        }
        r.expect(200);
        assert!(
            heard.elapsed() < std::time::Duration::from_secs(2),
            "node 1 still takes a token node 0 logged out"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    // Refused for good: the cache does not take it back from an earlier read.
    for _ in 0..3 {
        nodes[1]
            .get("/api/me")
            .auth(&alice)
            .send()
            .await
            .expect_error(401, 202, "invalid_token");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_challenge_from_one_node_logs_in_on_another_once() {
    use triad_identity::{public_key_hex, sign_ed25519};
    let (nodes, _url) = cluster(2).await;
    let key = key(1);
    let login = |challenge: &Value| {
        let message = challenge["message"].as_str().unwrap();
        json!({
            "challenge_id": challenge["challenge_id"],
            "public_key": public_key_hex(&key.verifying_key()),
            "signature": sign_ed25519(&key, message.as_bytes()),
        })
    };
    // Issued by node 0, used through node 1: no sticky sessions needed.
    let challenge = nodes[0].challenge(&key).await;
    let body = login(&challenge);
    let r = nodes[1].post("/api/auth/login").json(&body).send().await;
    let token = r.expect(200)["token"].as_str().unwrap().to_owned();
    assert_eq!(token.len(), 64);
    // Used once, on every node.
    for node in &nodes {
        let r = node.post("/api/auth/login").json(&body).send().await;
        r.expect_error(401, 204, "unknown_challenge");
    }
    // The same challenge through both nodes at once: exactly one login.
    for _ in 0..5 {
        let challenge = nodes[1].challenge(&key).await;
        let body = login(&challenge);
        let (a, b) = tokio::join!(
            nodes[0].post("/api/auth/login").json(&body).send(),
            nodes[1].post("/api/auth/login").json(&body).send(),
        );
        let ok = [&a, &b].iter().filter(|r| r.status == 200).count();
        assert_eq!(ok, 1, "{} / {}", a.text, b.text);
    }
}

#[tokio::test]
async fn postgres_migrations_are_versioned_as_on_sqlite_and_a_newer_schema_is_refused() {
    use sqlx::{Connection as _, Row as _};
    let url = fresh_postgres_database().await;
    Store::open(&url).await.unwrap().close().await;
    // Opening again applies nothing twice.
    Store::open(&url).await.unwrap().close().await;
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let versions: Vec<i64> = sqlx::query("SELECT version FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&mut conn)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, (1..=SCHEMA_VERSION).collect::<Vec<_>>());
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES ($1, 'from the future', TRUE, '\\x00', 0)",
    )
    .bind(SCHEMA_VERSION + 1)
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();
    let error = Store::open(&url)
        .await
        .expect_err("a newer schema is refused");
    let StoreError::Schema(message) = &error else {
        panic!("expected a schema error, got {error:?}");
    };
    assert!(message.contains("newer version of Triad"), "{message}");
}
