//! The database: reopening keeps everything; a schema newer than the binary is refused.

use serde_json::Value;
use sqlx::{Connection as _, Row as _, SqliteConnection};
use triad_server::{
    ServeError,
    store::{SCHEMA_VERSION, Store, StoreError},
};

use crate::common::{Server, User, base_args, eventually};

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

/// A server with something in every table, and what the API says about it.
struct Populated {
    server: Server,
    alice: User,
    bob: User,
    /// A finished match (Alice won it) and a live one (Alice played the centre).
    ids: [u64; 2],
    /// [`snapshot`] of the two players and the two matches.
    before: Vec<Value>,
}

/// Starts a server where Alice and Bob, with deposits, play a staked match to the end and
/// start another; returns it with their [`snapshot`].
async fn populated() -> Populated {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    server.deposit(&alice, 1_000).await;
    server.deposit(&bob, 1_000).await;
    let done = server.challenge_accepted(&alice, &bob, 100).await;
    server.x_wins(&alice, &bob, done).await.expect(201);
    let live = server.challenge_accepted(&alice, &bob, 100).await;
    server.play(&alice, live, 1, 4, "X").await.expect(201);
    let before = snapshot(&server, &alice, &bob, [done, live]).await;
    Populated {
        server,
        alice,
        bob,
        ids: [done, live],
        before,
    }
}

#[tokio::test]
async fn reopening_a_database_keeps_matches_balances_stats_sessions_and_the_seed() {
    let Populated {
        server,
        alice,
        bob,
        ids: [done, live],
        before,
    } = populated().await;
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
async fn a_database_from_before_the_clocks_sweeps_replays_its_old_events_as_written() {
    let Populated {
        server,
        alice,
        bob,
        ids,
        before,
    } = populated().await;
    // A fresh database is swept by the clock from its first event.
    let setting = "swept_by_clock_from_seq";
    let store = &server.state().store;
    assert_eq!(store.setting(setting).await.unwrap().as_deref(), Some("1"));
    let head = store.head_seq().await.unwrap();
    let dir = server.stop().await;

    // One written by an earlier Triad has no such setting: its events so far replay
    // sweeping memory at each event, as they did; the clock sweeps from the next one.
    let mut conn = SqliteConnection::connect(&sqlite_url(&dir)).await.unwrap();
    sqlx::query("DELETE FROM settings WHERE key = $1")
        .bind(setting)
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    let args = base_args(dir.path());
    let server = Server::start_in(dir, args).await;
    let from = server
        .state()
        .core
        .read()
        .await
        .config()
        .swept_by_clock_from_seq;
    assert_eq!(from, head + 1);
    assert_eq!(snapshot(&server, &alice, &bob, ids).await, before);
    // Kept from then on.
    let dir = server.stop().await;
    let args = base_args(dir.path());
    let server = Server::start_in(dir, args).await;
    let kept = server.state().store.setting(setting).await.unwrap();
    assert_eq!(kept, Some(from.to_string()));
    server.stop().await;
}

#[tokio::test]
async fn tournaments_that_ended_before_the_archive_stay_in_memory() {
    let retention = |a: &mut triad_server::ServeArgs| a.finished_retention_ms = Some(1_000);
    let server = Server::start_with(retention).await;
    let alice = server.user().await;
    let created = server
        .post("/api/tournaments")
        .auth(&server.owner)
        .json(
            &serde_json::json!({"name": "Lonely arena", "game": "sos", "format": "arena",
            "minutes": 5, "starts_in_seconds": 60}),
        )
        .send()
        .await;
    let id = created.expect(201)["tournament"]["id"].as_u64().unwrap();
    let r = server
        .post(&format!("/api/tournaments/{id}/join"))
        .auth(&alice)
        .send()
        .await;
    r.expect(201);
    server.advance(60_000).await;
    async fn phase(server: &Server, id: u64) -> Value {
        let r = server.get(&format!("/api/tournaments/{id}")).send().await;
        r.expect(200)["phase"].clone()
    }
    eventually("cancelled, short of players", || async {
        phase(&server, id).await == "cancelled"
    })
    .await;
    let setting = "tournaments_archived_from_seq";
    let store = &server.state().store;
    assert_eq!(store.setting(setting).await.unwrap().as_deref(), Some("1"));
    let head = store.head_seq().await.unwrap();
    let dir = server.stop().await;

    // As a Triad from before the archive left it: no row, no setting. Its tournaments
    // stay in memory, the one place that holds them, past the retention window.
    let mut conn = SqliteConnection::connect(&sqlite_url(&dir)).await.unwrap();
    for sql in [
        "DELETE FROM tournaments",
        "DELETE FROM settings WHERE key = 'tournaments_archived_from_seq'",
    ] {
        sqlx::query(sql).execute(&mut conn).await.unwrap();
    }
    conn.close().await.unwrap();
    let mut args = base_args(dir.path());
    retention(&mut args);
    let server = Server::start_in(dir, args).await;
    let kept = server.state().store.setting(setting).await.unwrap();
    assert_eq!(kept, Some((head + 1).to_string()));
    {
        let engine = server.state().core.read().await;
        assert!(engine.tournament(triad_engine::TournamentId(id)).is_some());
        assert_eq!(
            engine.next_sweep_ms(),
            None,
            "nothing is due to be forgotten"
        );
    }
    server
        .advance(triad_engine::Engine::SWEEP_EVERY_MS + 1_000)
        .await;
    assert_eq!(phase(&server, id).await, "cancelled");
    server.stop().await;
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

/// Schema version 3's layout of the tables that version 4 rebuilds, as 0001 created them.
const V3_TABLES: &[(&str, &str, &str)] = &[
    (
        "events",
        "seq BIGINT PRIMARY KEY, at_ms BIGINT NOT NULL, match_id BIGINT, kind TEXT NOT NULL, body TEXT NOT NULL",
        "seq, at_ms, match_id, kind, body",
    ),
    (
        "event_topics",
        "topic TEXT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (topic, seq)",
        "topic, seq",
    ),
    (
        "matches",
        "id BIGINT PRIMARY KEY, game TEXT NOT NULL, stake TEXT NOT NULL, origin TEXT NOT NULL, \
         phase TEXT NOT NULL, reason TEXT, created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL, body TEXT NOT NULL",
        "id, game, stake, origin, phase, reason, created_ms, updated_ms, body",
    ),
    (
        "match_players",
        "address TEXT NOT NULL, match_id BIGINT NOT NULL, PRIMARY KEY (address, match_id)",
        "address, match_id",
    ),
    (
        "ledger_entries",
        "address TEXT NOT NULL, seq BIGINT NOT NULL, amount TEXT NOT NULL, reason TEXT NOT NULL, \
         match_id BIGINT, PRIMARY KEY (address, seq)",
        "address, seq, amount, reason, match_id",
    ),
];

/// How SQLite stores `table`: its `CREATE TABLE` text, and its row count.
async fn layout(conn: &mut SqliteConnection, table: &str) -> (String, i64) {
    let sql: String =
        sqlx::query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = $1")
            .bind(table)
            .fetch_one(&mut *conn)
            .await
            .unwrap()
            .get(0);
    let count: i64 = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
        .fetch_one(&mut *conn)
        .await
        .unwrap()
        .get(0);
    (sql, count)
}

/// An older version's file: [`populated`]'s, stopped, put back by `downgrade` (given the
/// file and the two matches; what it returns is handed back) as that version left it,
/// with `versions` recorded. This binary must upgrade it and answer every API read as
/// before, and the live match must go on: Bob's reply is on the board and, last, among
/// the match's events. Returns the file, stopped again at the latest version.
async fn upgraded<T>(
    versions: std::ops::RangeInclusive<i64>,
    downgrade: impl AsyncFnOnce(&mut SqliteConnection, [u64; 2]) -> T,
) -> (tempfile::TempDir, T) {
    let Populated {
        server,
        alice,
        bob,
        ids: [done, live],
        before,
    } = populated().await;
    let dir = server.stop().await;
    let mut conn = SqliteConnection::connect(&sqlite_url(&dir)).await.unwrap();
    // What the migrations after 8 made, no older version had (`downgrade` forgets them).
    if *versions.end() < 9 {
        let drop = "DROP TABLE tournaments";
        sqlx::query(drop).execute(&mut conn).await.unwrap();
    }
    let out = downgrade(&mut conn, [done, live]).await;
    conn.close().await.unwrap();
    assert_eq!(schema_versions(&dir).await, versions.collect::<Vec<_>>());

    let args = base_args(dir.path());
    let server = Server::start_in(dir, args).await;
    assert_eq!(snapshot(&server, &alice, &bob, [done, live]).await, before);
    server.play(&bob, live, 2, 0, "O").await.expect(201);
    assert_eq!(server.match_(live).await["board"], "O---X----");
    let events = server
        .get(&format!("/api/matches/{live}/events"))
        .send()
        .await
        .expect(200)
        .clone();
    let last = events["events"].as_array().and_then(|e| e.last()).cloned();
    let last = last.map(|e| (e["kind"]["type"].clone(), e["kind"]["cell"].clone()));
    assert_eq!(last, Some(("moved".into(), 0.into())), "{events}");
    let dir = server.stop().await;
    assert_eq!(schema_versions(&dir).await, every_version());
    (dir, out)
}

#[tokio::test]
async fn a_version_3_database_is_rebuilt_around_its_keys_with_every_row_kept() {
    // Put the file back as version 3 left it: the same rows in the old tables.
    let (dir, counts) = upgraded(1..=3, async |conn, _| {
        let mut counts = Vec::new();
        for (table, columns, names) in V3_TABLES {
            let (sql, count) = layout(conn, table).await;
            assert!(
                sql.contains("INTEGER PRIMARY KEY") || sql.contains("WITHOUT ROWID"),
                "{sql}"
            );
            assert!(count > 0, "{table} has rows to carry over");
            counts.push(count);
            for statement in [
                format!("CREATE TABLE {table}_v3 ({columns})"),
                format!("INSERT INTO {table}_v3 ({names}) SELECT {names} FROM {table}"),
                format!("DROP TABLE {table}"),
                format!("ALTER TABLE {table}_v3 RENAME TO {table}"),
            ] {
                sqlx::query(sqlx::AssertSqlSafe(statement))
                    .execute(&mut *conn)
                    .await
                    .unwrap();
            }
            let (sql, _) = layout(conn, table).await;
            assert!(
                !sql.contains("INTEGER PRIMARY KEY") && !sql.contains("WITHOUT ROWID"),
                "{sql}"
            );
        }
        sqlx::query("CREATE INDEX match_players_by_match ON match_players (match_id)")
            .execute(&mut *conn)
            .await
            .unwrap();
        // (Version 5's column on `events` went with the copy, and version 8's index with
        // it: version 3 had neither.) Version 6's and 7's tables go too.
        for table in ["profiles", "heartbeat"] {
            sqlx::query(sqlx::AssertSqlSafe(format!("DROP TABLE {table}")))
                .execute(&mut *conn)
                .await
                .unwrap();
        }
        sqlx::query("DELETE FROM _sqlx_migrations WHERE version >= 4")
            .execute(&mut *conn)
            .await
            .unwrap();
        counts
    })
    .await;

    // Version 4 rebuilt the tables (5 added its column, 6 its table, ...), and every row
    // is still there.
    let mut conn = SqliteConnection::connect(&sqlite_url(&dir)).await.unwrap();
    for ((table, _, _), count) in V3_TABLES.iter().zip(counts) {
        let (sql, now) = layout(&mut conn, table).await;
        let keyed = if matches!(*table, "events" | "matches") {
            sql.contains("INTEGER PRIMARY KEY")
        } else {
            sql.contains("WITHOUT ROWID")
        };
        assert!(keyed, "{sql}");
        // The move after the upgrade added rows; nothing was lost (but the match topics'
        // rows, which version 8 derives instead: `a_version_7_database_...`).
        if *table != "event_topics" {
            assert!(now >= count, "{table}: {now} rows, {count} before");
        }
    }
    let integrity: String = sqlx::query("PRAGMA integrity_check")
        .fetch_one(&mut conn)
        .await
        .unwrap()
        .get(0);
    assert_eq!(integrity, "ok");
}

#[tokio::test]
async fn a_version_7_database_keeps_its_match_events_when_their_topics_become_derived() {
    // Put the file back as version 7 left it: a topic row for each event of a match, and
    // no index of the events by match.
    let (dir, ()) = upgraded(1..=7, async |conn, [done, live]| {
        assert_eq!(match_topic_rows(conn).await, 0);
        for statement in [
            "INSERT INTO event_topics (topic, seq) \
             SELECT 'match:' || match_id, seq FROM events WHERE match_id IS NOT NULL",
            "DROP INDEX events_by_match",
            "DELETE FROM _sqlx_migrations WHERE version >= 8",
        ] {
            sqlx::query(statement).execute(&mut *conn).await.unwrap();
        }
        let rows = match_topic_rows(conn).await;
        let events: i64 = sqlx::query("SELECT count(*) FROM events WHERE match_id IN ($1, $2)")
            .bind(i64::try_from(done).unwrap())
            .bind(i64::try_from(live).unwrap())
            .fetch_one(&mut *conn)
            .await
            .unwrap()
            .get(0);
        assert!(
            rows >= events && events > 10,
            "{rows} rows, {events} events"
        );
    })
    .await;

    // The rows went with the upgrade, and each match read back the same events, the live
    // one's next move included (`upgraded`).
    let mut conn = SqliteConnection::connect(&sqlite_url(&dir)).await.unwrap();
    assert_eq!(match_topic_rows(&mut conn).await, 0);
}

/// How many topic rows of matches the log stores (none since version 8).
async fn match_topic_rows(conn: &mut SqliteConnection) -> i64 {
    sqlx::query("SELECT count(*) FROM event_topics WHERE topic LIKE 'match:%'")
        .fetch_one(conn)
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn a_closed_store_refuses_to_commit_or_read_and_leaves_an_empty_wal() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&sqlite_url(&dir)).await.unwrap();
    store
        .commit(&triad_server::store::Commit::default())
        .await
        .expect("an open store commits");
    let read = store.topic_events("lobby", 0, 10).await;
    assert!(read.expect("an open store reads").is_empty());
    store.close().await;
    let error = store
        .commit(&triad_server::store::Commit::default())
        .await
        .expect_err("a closed store commits nothing");
    assert!(matches!(error, StoreError::Closed(_)), "{error}");
    assert!(error.to_string().contains("closed"), "{error}");
    // The subscriptions' catch-up reads (the read thread) end with the store too.
    let error = store
        .topic_events("lobby", 0, 10)
        .await
        .expect_err("a closed store reads nothing");
    assert!(matches!(error, StoreError::Closed(_)), "{error}");
    let wal = dir.path().join("t.db-wal");
    assert!(
        std::fs::metadata(&wal).map_or(true, |m| m.len() == 0),
        "the WAL was checkpointed"
    );
}

#[tokio::test]
async fn commits_reach_the_main_file_while_the_server_runs() {
    // The checkpoint thread copies the WAL into the main file soon after each commit
    // (the commit thread no longer does it, past 1,000 pages): a copy of the main file
    // alone, without its WAL, soon holds every deposit.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let mut args = base_args(&path);
    args.database = Some(path.join("t.db").display().to_string());
    let server = Server::start_in(dir, args).await;
    let alice = server.user().await;
    for _ in 0..20 {
        server.deposit(&alice, 1).await;
    }
    let main = path.join("t.db");
    eventually("the deposits to reach the main file", || async {
        let copy = tempfile::tempdir().unwrap();
        let file = copy.path().join("copy.db");
        std::fs::copy(&main, &file).unwrap();
        let Ok(mut conn) = SqliteConnection::connect(&format!("sqlite://{}", file.display())).await
        else {
            return false;
        };
        let n: Result<i64, _> =
            sqlx::query_scalar("SELECT count(*) FROM events WHERE kind = 'transferred'")
                .fetch_one(&mut conn)
                .await;
        n.is_ok_and(|n| n >= 20)
    })
    .await;
    server.stop().await;
}

/// The store's session upkeep, on either backend: `live_sessions` keeps only sessions that
/// exist and have not expired, and `purge_expired` deletes expired sessions in bounded
/// batches and leaves the live ones.
#[tokio::test]
async fn expired_sessions_are_purged_in_batches_and_live_ones_kept() {
    let server = Server::start().await;
    let store = &server.state().store;
    // Times past the server's clock, so that its own sweep leaves these rows alone.
    let t = server.now().await + 60_000;
    let someone = triad_engine::Address::from_bytes([9; 32]);
    for i in 0..5u64 {
        store
            .save_session(&format!("old{i}"), someone, "k", t, t + 1_000)
            .await
            .unwrap();
    }
    store
        .save_session("live", someone, "k", t, t + 10_000)
        .await
        .unwrap();
    let asked: Vec<std::sync::Arc<str>> = ["old0", "live", "nobody"]
        .into_iter()
        .map(std::sync::Arc::from)
        .collect();
    let live = store.live_sessions(&asked, t + 2_000).await.unwrap();
    assert_eq!(
        live.into_iter().collect::<Vec<_>>(),
        vec!["live".to_owned()]
    );
    assert_eq!(store.purge_expired(t + 2_000, 3).await.unwrap().0, 3);
    assert_eq!(store.purge_expired(t + 2_000, 3).await.unwrap().0, 2);
    assert_eq!(store.purge_expired(t + 2_000, 3).await.unwrap().0, 0);
    assert!(store.session("live").await.unwrap().is_some());
    store.delete_session("live").await.unwrap();
    assert!(store.session("live").await.unwrap().is_none());
}
