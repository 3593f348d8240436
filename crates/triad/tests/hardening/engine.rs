//! The engine task never dies on a command, and `/healthz` says whether the server can
//! take commands: 503 with a stable code when its core has stopped (212), its storage
//! fails (209) or its disk is full (218), 200 again once it has recovered.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{E, Player, Server, TTT_TOP_ROW, Tmpfs, WAIT, fill, new_key, nth, share};

/// One test at a time of those that mount a filesystem and fill it.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Crossed challenges with `--cancel-bps-of-stake 5000`: Bob's acceptance of Alice's
/// challenge withdraws his own, which refunds half its stake, as a cancel does. The
/// acceptance used to count the whole stake as refunded, and the ledger's overdraw check
/// panicked the engine task: every later command got 503 while `/healthz` said ok. Now
/// the acceptance counts the half (refused when short, accepted when not), the server
/// goes on, and the money adds up to the deposits to the last unit.
#[tokio::test]
async fn a_crossed_acceptance_with_half_refunded_cancels_works_and_conserves_money() {
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let server = Server::start(
        dir.path(),
        &owner_key.address_string(),
        &["--cancel-bps-of-stake", "5000"],
    )
    .await;
    let api = &server.api;
    let owner = api.login(&owner_key).await;
    let (alice, bob) = (api.login(&new_key()).await, api.login(&new_key()).await);
    api.deposit(&owner, &alice, E).await.ok();
    api.deposit(&owner, &bob, E).await.ok();
    let challenge = |from: &Player, to: &Player| {
        let body = json!({ "opponent": to.address, "game": "tic-tac-toe", "stake": E.to_string(), "first": "challenger" });
        let token = from.token.clone();
        async move {
            api.post("/api/challenges", Some(&token), &body).await.ok()["match"]["id"]
                .as_u64()
                .expect("a match")
        }
    };
    let alices = challenge(&alice, &bob).await;
    let bobs = challenge(&bob, &alice).await;
    let accept = format!("/api/challenges/{alices}/accept");
    // Bob holds nothing and would get half his stake back: short of the stake, refused.
    api.post(&accept, Some(&bob.token), &json!({}))
        .await
        .expect_error(409, 105);
    assert_eq!(api.match_(bobs).await["phase"], "waiting");
    // With half a stake more, it goes through: his own challenge is withdrawn.
    api.deposit(&owner, &bob, E / 2).await.ok();
    let started = api
        .post(
            &accept,
            Some(&bob.token),
            &json!({ "stake": E.to_string() }),
        )
        .await
        .ok();
    assert_eq!(started["match"]["phase"], "ready", "{started}");
    assert_eq!(api.match_(bobs).await["outcome"]["reason"], "cancelled");
    assert_eq!(api.get("/healthz", None).await.status, 200);
    // The server goes on taking commands: the game is played to its end.
    for n in 1..=5u8 {
        let mover = if n % 2 == 1 { &alice } else { &bob };
        api.play(mover, alices, nth(&TTT_TOP_ROW, n)).await;
    }
    let (reserve, deposited, withdrawn) = api.reserve(&owner).await;
    let (a, b) = (api.balance(&alice).await, api.balance(&bob).await);
    assert_eq!(a, share(2 * E, 9_000), "Alice won 90% of the pot");
    assert_eq!(b, 0);
    assert_eq!(reserve, E / 2 + (2 * E - share(2 * E, 9_000)));
    assert_eq!((deposited, withdrawn), (2 * E + E / 2, 0));
    assert_eq!(a + b + reserve, deposited, "every unit is accounted for");
}

/// Waits (bounded) until `/healthz` answers with `status`; the last answer.
async fn health_until(server: &Server, status: u16) -> crate::support::Resp {
    let started = Instant::now();
    loop {
        let r = server.api.get("/healthz", None).await;
        if r.status == status {
            return r;
        }
        assert!(
            started.elapsed() < WAIT,
            "/healthz never answered {status}: {} {}",
            r.status,
            r.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The database on a small tmpfs that fills up: `/healthz` says 503 `storage_full` (with
/// `Retry-After`) as soon as the disk is full, before any command fails for it (it said
/// ok throughout), and ok again once space is back.
#[tokio::test]
async fn a_full_disk_makes_healthz_not_ok() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let disk = Tmpfs::mount(&dir.path().join("disk"), 16 << 20);
    let owner_key = new_key();
    let db = disk.path.join("triad.db");
    let server = Server::start_on(dir.path(), &db, &owner_key.address_string(), &[], &[]).await;
    let api = &server.api;
    let owner = api.login(&owner_key).await;
    let alice = api.login(&new_key()).await;
    api.deposit(&owner, &alice, E).await.ok();
    assert_eq!(api.get("/healthz", None).await.status, 200);

    let filler = fill(&disk.path, 0);
    let full = api.get("/healthz", None).await;
    full.expect_error(503, 218);
    assert!(full.retry_after.is_some(), "{full:?}");
    // Reads go on.
    assert_eq!(api.balance(&alice).await, E);

    std::fs::remove_file(&filler).expect("the filler goes");
    health_until(&server, 200).await;
    api.deposit(&owner, &alice, 1).await.ok();
}

/// Runs SQL on the server's SQLite file from outside, as an operator (or a fault) would.
async fn sql(db: &std::path::Path, statements: &'static str) {
    let url = format!("sqlite://{}", db.display());
    let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&url)
        .await
        .expect("the database opens");
    sqlx::raw_sql(statements)
        .execute(&mut conn)
        .await
        .expect("the statements run");
}

/// The database starts refusing every write (triggers that abort them stand for a failing
/// disk or database; a read-only remount of a busy filesystem is refused by Linux). The
/// server finds out by itself (`/healthz` makes a probe write when nothing else wrote) and
/// says 503 `storage_unavailable` (it said ok); a command is refused the same way; once
/// writes go through again, `/healthz` is ok and commands go through, with no restart.
#[tokio::test]
async fn failing_storage_makes_healthz_not_ok() {
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let server = Server::start(dir.path(), &owner_key.address_string(), &[]).await;
    let db = dir.path().join("triad.db");
    let api = &server.api;
    let owner = api.login(&owner_key).await;
    let alice = api.login(&new_key()).await;
    api.deposit(&owner, &alice, E).await.ok();
    assert_eq!(api.get("/healthz", None).await.status, 200);

    sql(
        &db,
        "CREATE TRIGGER fail_events BEFORE INSERT ON events \
           BEGIN SELECT RAISE(ABORT, 'the disk fails'); END; \
         CREATE TRIGGER fail_settings BEFORE UPDATE ON settings \
           BEGIN SELECT RAISE(ABORT, 'the disk fails'); END;",
    )
    .await;
    let failing = health_until(&server, 503).await;
    failing.expect_error(503, 209);
    api.deposit(&owner, &alice, 1).await.expect_error(503, 209);
    health_until(&server, 503).await.expect_error(503, 209);
    assert_eq!(
        api.balance(&alice).await,
        E,
        "reads go on; nothing was applied"
    );

    sql(&db, "DROP TRIGGER fail_events; DROP TRIGGER fail_settings;").await;
    health_until(&server, 200).await;
    api.deposit(&owner, &alice, 1).await.ok();
    assert_eq!(api.balance(&alice).await, E + 1);
}

/// A core that cannot go on stops the server loudly: here the engine must be rebuilt from
/// the log (a commit failed on a full disk) and the log cannot be replayed (an event was
/// corrupted behind the server's back). The process exits with a failure status, its log
/// says why (the panic and "the core stopped"), and meanwhile nothing answers ok.
#[tokio::test]
async fn a_core_that_cannot_go_on_stops_the_server_loudly() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let disk = Tmpfs::mount(&dir.path().join("disk"), 16 << 20);
    let owner_key = new_key();
    let db = disk.path.join("triad.db");
    let mut server = Server::start_on(dir.path(), &db, &owner_key.address_string(), &[], &[]).await;
    let api = server.api.clone();
    let owner = api.login(&owner_key).await;
    let alice = api.login(&new_key()).await;
    api.deposit(&owner, &alice, E).await.ok();

    // The first event's body is no event any more.
    sql(&db, "UPDATE events SET body = '{}' WHERE seq = 1").await;

    // A full disk makes a commit fail, and the core rebuilds from the log: it cannot.
    let _filler = fill(&disk.path, 0);
    let started = Instant::now();
    for n in 0.. {
        assert!(
            started.elapsed() < WAIT,
            "no commit failed after {n} deposits"
        );
        match api
            .try_send(
                reqwest::Method::POST,
                "/api/ledger/deposit",
                Some(&owner.token),
                Some(&json!({ "to": alice.address, "amount": 1 })),
            )
            .await
        {
            Ok(r) if r.status == 201 => continue,
            Ok(r) => {
                assert_eq!(r.status, 503, "{}", r.body);
                break;
            }
            // The server went away mid-request: it stopped.
            Err(_) => break,
        }
    }
    let status = server.wait_exit().await;
    assert!(
        !status.success(),
        "the server stopped with a failure: {status}"
    );
    let logs = server.logs();
    assert!(
        logs.contains("panicked") && logs.contains("cannot be replayed"),
        "the panic is in the log:\n{logs}"
    );
    assert!(logs.contains("the core stopped"), "{logs}");
}
