//! The schema versions: one migration per version for each backend, in
//! `migrations/<backend>/` (the same version numbers on both). A migration once released is
//! never edited (sqlx checks each one's checksum); a database written by a newer Triad, with
//! versions this binary does not know, is refused.

use std::borrow::Cow;

use sqlx::migrate::{Migrate, MigrateError, Migration, MigrationType, Migrator};

use super::{Backend, Store, StoreError};

/// The schema versions this binary knows: `(version, description, SQLite, PostgreSQL)`.
const MIGRATIONS: &[(i64, &str, &str, &str)] = &[
    (
        1,
        "events, projections, sessions",
        include_str!("../../migrations/sqlite/0001_init.sql"),
        include_str!("../../migrations/postgres/0001_init.sql"),
    ),
    (
        2,
        "the agents' relay: messages and games",
        include_str!("../../migrations/sqlite/0002_agents.sql"),
        include_str!("../../migrations/postgres/0002_agents.sql"),
    ),
    (
        3,
        "pending login challenges, shared by the nodes",
        include_str!("../../migrations/sqlite/0003_login_challenges.sql"),
        include_str!("../../migrations/postgres/0003_login_challenges.sql"),
    ),
    (
        4,
        "the log's tables keyed by rowid (SQLite); topics by seq (PostgreSQL)",
        include_str!("../../migrations/sqlite/0004_rowid_keys.sql"),
        include_str!("../../migrations/postgres/0004_rowid_keys.sql"),
    ),
    (
        5,
        "each event's oldest match that could still have events",
        include_str!("../../migrations/sqlite/0005_match_floor.sql"),
        include_str!("../../migrations/postgres/0005_match_floor.sql"),
    ),
    (
        6,
        "players' profiles: display names by skeleton, the bot mark",
        include_str!("../../migrations/sqlite/0006_profiles.sql"),
        include_str!("../../migrations/postgres/0006_profiles.sql"),
    ),
    (
        7,
        "the service's heartbeat, for the time an outage gives back",
        include_str!("../../migrations/sqlite/0007_heartbeat.sql"),
        include_str!("../../migrations/postgres/0007_heartbeat.sql"),
    ),
    (
        8,
        "a match's topic derived from its events, not stored",
        include_str!("../../migrations/sqlite/0008_match_topics.sql"),
        include_str!("../../migrations/postgres/0008_match_topics.sql"),
    ),
    (
        9,
        "the archive of the tournaments that ended",
        include_str!("../../migrations/sqlite/0009_tournaments.sql"),
        include_str!("../../migrations/postgres/0009_tournaments.sql"),
    ),
];

/// The latest schema version this binary writes.
pub const SCHEMA_VERSION: i64 = 9;

impl Store {
    pub(super) async fn migrate(&self) -> Result<(), StoreError> {
        let migrations = MIGRATIONS
            .iter()
            .map(|&(version, description, sqlite, postgres)| {
                let sql = match self.backend {
                    Backend::Sqlite => sqlite,
                    Backend::Postgres => postgres,
                };
                Migration::new(
                    version,
                    Cow::Borrowed(description),
                    MigrationType::Simple,
                    sqlx::SqlStr::from_static(sql),
                    false,
                )
            })
            .collect();
        let migrator = Migrator::with_migrations(migrations);
        let mut conn = self.pool.acquire().await?;
        // A database written by a newer Triad has migrations this binary does not know.
        conn.ensure_migrations_table("_sqlx_migrations")
            .await
            .map_err(schema_error)?;
        let applied = conn
            .list_applied_migrations("_sqlx_migrations")
            .await
            .map_err(schema_error)?;
        if let Some(newest) = applied.iter().map(|m| m.version).max()
            && newest > SCHEMA_VERSION
        {
            return Err(StoreError::Schema(format!(
                "this database was written by a newer version of Triad (schema version {newest}); \
                 this binary understands up to version {SCHEMA_VERSION}. Upgrade triad, or use another database."
            )));
        }
        drop(conn);
        migrator.run(&self.pool).await.map_err(schema_error)?;
        Ok(())
    }
}

fn schema_error(e: MigrateError) -> StoreError {
    StoreError::Schema(match e {
        MigrateError::VersionMissing(v) => format!(
            "this database has schema migration {v}, which this binary does not know: it was written by a newer \
             version of Triad. Upgrade triad, or use another database."
        ),
        other => format!("could not bring the database schema up to date: {other}"),
    })
}
