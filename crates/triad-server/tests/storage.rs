//! The database: reopening keeps everything; a schema newer than the binary is refused.

mod common;

use common::{Server, User, base_args};
use serde_json::Value;
use sqlx::{Connection as _, Row as _, SqliteConnection};
use triad_server::{
    ServeError,
    store::{SCHEMA_VERSION, Store, StoreError},
};

fn sqlite_url(dir: &tempfile::TempDir) -> String {
    format!("sqlite://{}", dir.path().join("t.db").display())
}

/// The migrations this binary applies: 1, 2, … up to its schema version.
fn every_version() -> Vec<i64> {
    (1..=SCHEMA_VERSION).collect()
}

async fn schema_versions(dir: &tempfile::TempDir) -> Vec<i64> {
    let mut conn = SqliteConnection::connect(&sqlite_url(dir)).await.unwrap();
    let rows = sqlx::query("SELECT version FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    rows.iter().map(|r| r.get::<i64, _>(0)).collect()
}

/// Everything the API says about two players and their matches.
async fn snapshot(s: &Server, alice: &User, bob: &User, ids: [u64; 2]) -> Vec<Value> {
    let mut out = Vec::new();
    for user in [alice, bob] {
        out.push(s.get("/api/me").auth(user).send().await.expect(200).clone());
        out.push(
            s.get("/api/ledger")
                .auth(user)
                .send()
                .await
                .expect(200)
                .clone(),
        );
    }
    for id in ids {
        out.push(s.match_(id).await);
        out.push(
            s.get(&format!("/api/matches/{id}/events"))
                .send()
                .await
                .expect(200)
                .clone(),
        );
    }
    out.push(s.get("/api/leaderboard").send().await.expect(200).clone());
    out.push(s.get("/healthz").send().await.expect(200).clone());
    out
}

#[tokio::test]
async fn reopening_a_database_keeps_matches_balances_stats_sessions_and_the_seed() {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    server.deposit(&alice, 1_000).await;
    server.deposit(&bob, 1_000).await;
    let done = server.challenge_accepted(&alice, &bob, 100).await;
    server.x_wins(&alice, &bob, done).await.expect(201);
    let live = server.challenge_accepted(&alice, &bob, 100).await;
    server.play(&alice, live, 1, 4, "X").await.expect(201);

    let before = snapshot(&server, &alice, &bob, [done, live]).await;
    let seed = server.state().store.setting("engine_seed").await.unwrap();
    let now = server.now().await;
    let dir = server.stop().await;
    assert_eq!(schema_versions(&dir).await, every_version());

    // The same file and settings. (The dev clock starts again from the system time; this
    // test never moved it, so time does not go backwards.)
    let args = base_args(dir.path());
    let server = Server::start_in(dir, args).await;
    assert!(server.now().await >= now);
    // Tokens issued before the restart still work: sessions are stored.
    assert_eq!(snapshot(&server, &alice, &bob, [done, live]).await, before);
    assert_eq!(
        server.state().store.setting("engine_seed").await.unwrap(),
        seed
    );
    // The live match goes on where it was.
    server.play(&bob, live, 2, 0, "O").await.expect(201);
    assert_eq!(server.match_(live).await["board"], "O---X----");
    let dir = server.stop().await;
    assert_eq!(schema_versions(&dir).await, every_version());
}

#[tokio::test]
async fn a_database_from_a_newer_triad_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    Store::open(&url).await.unwrap().close().await;
    {
        let mut conn = SqliteConnection::connect(&url).await.unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES ($1, 'from the future', TRUE, X'00', 0)",
        )
        .bind(SCHEMA_VERSION + 1)
        .execute(&mut conn)
        .await
        .unwrap();
        conn.close().await.unwrap();
    }

    let error = Store::open(&url)
        .await
        .expect_err("a newer schema is refused");
    let StoreError::Schema(message) = &error else {
        panic!("expected a schema error, got {error:?}");
    };
    assert!(
        message.contains("newer version of Triad"),
        "unclear message: {message}"
    );
    assert!(
        message.contains(&(SCHEMA_VERSION + 1).to_string()),
        "{message}"
    );

    // And the server does not start on it.
    let settings = base_args(dir.path()).resolve().unwrap();
    match triad_server::start(settings).await {
        Err(ServeError::Store(StoreError::Schema(message))) => {
            assert!(message.contains("newer version of Triad"), "{message}");
        }
        other => panic!("expected a schema error, got {other:?}"),
    }
    // Nothing was changed: the newer version is still recorded, nothing was added.
    let mut expected = every_version();
    expected.push(SCHEMA_VERSION + 1);
    assert_eq!(schema_versions(&dir).await, expected);
}

#[tokio::test]
async fn a_fresh_database_gets_every_migration_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    Store::open(&url).await.unwrap().close().await;
    assert_eq!(schema_versions(&dir).await, every_version());
    // Reopening runs nothing twice.
    let store = Store::open(&url).await.unwrap();
    assert!(store.ping().await);
    store.close().await;
    assert_eq!(schema_versions(&dir).await, every_version());
    // A plain path (no sqlite://) is the same database.
    let plain = dir.path().join("t.db").display().to_string();
    let store = Store::open(&plain).await.unwrap();
    assert_eq!(
        store.setting_or_insert("k", "v").await.unwrap(),
        "v".to_owned()
    );
    store.close().await;
    let store = Store::open(&url).await.unwrap();
    assert_eq!(store.setting("k").await.unwrap().as_deref(), Some("v"));
    store.close().await;
}
