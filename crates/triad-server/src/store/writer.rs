//! The SQLite commit thread: one connection, owned by one OS thread, that writes each
//! batch's rows in one transaction and answers once.
//!
//! sqlx runs every SQLite statement on its connection's worker thread and awaits the
//! answer, so a batch of one move (`BEGIN`, the event, its topics, the match, its players,
//! `COMMIT`: about nine statements) cost nine round trips between the runtime and that
//! thread, each a wake-up and two context switches. On a server pinned to one core that was
//! the largest single cost left per game.
//! Here the whole batch crosses once: the runtime sends owned [`Rows`], this thread runs the
//! prepared statements (cached on the connection) and `fsync`s, and one reply comes back.
//!
//! Everything else on SQLite (reads, sessions, the agents' relay, migrations) still goes
//! through the sqlx pool; SQLite's own locking (WAL, `busy_timeout`) orders the two.

use std::{path::PathBuf, sync::mpsc, thread};

use rusqlite::{Connection, OpenFlags, params};
use tokio::sync::oneshot;

use super::{
    StoreError,
    log::{
        INSERT_EVENT, INSERT_LEDGER, INSERT_PLAYER, INSERT_TOPIC, Rows, UPSERT_MATCH,
        UPSERT_TOURNAMENT,
    },
};

/// How long a writer waits for another connection's write lock (as the pool does).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Statements kept prepared on the connection: the five inserts, `BEGIN`, `COMMIT`.
const STATEMENT_CACHE: usize = 16;

/// How often the checkpoint thread copies the WAL into the main file while commits come.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(25);

/// The WAL's size (pages) past which the commit thread checkpoints by itself, as SQLite
/// does by default at 1,000: a safety net for a checkpoint thread that falls behind.
const WAL_SAFETY_NET_PAGES: u32 = 16_000;

enum Job {
    /// Commit these rows.
    Write {
        rows: Rows,
        reply: oneshot::Sender<Result<(), rusqlite::Error>>,
    },
    /// Close the connection and end the thread (the store is closing).
    Close { done: oneshot::Sender<()> },
}

/// The handle to the commit thread; the thread ends at [`Writer::close`], or when the last
/// handle is dropped.
#[derive(Debug)]
pub(super) struct Writer {
    jobs: mpsc::Sender<Job>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").finish_non_exhaustive()
    }
}

impl Writer {
    /// Opens the connection (to check the file now, not at the first commit) and starts the
    /// thread.
    pub(super) fn start(path: PathBuf) -> Result<Writer, StoreError> {
        let conn = open(&path).map_err(StoreError::Sqlite)?;
        let checkpointer = Checkpointer::start(open(&path).map_err(StoreError::Sqlite)?)?;
        let (jobs, queue) = mpsc::channel::<Job>();
        thread::Builder::new()
            .name("triad-commit".into())
            .spawn(move || run(&path, Some(conn), &queue, checkpointer))
            .map_err(|_| StoreError::Closed("the commit thread could not be started"))?;
        Ok(Writer { jobs })
    }

    /// Writes `rows` in one transaction, durably (`synchronous = FULL`).
    pub(super) async fn write(&self, rows: Rows) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job::Write { rows, reply })
            .map_err(|_| StoreError::Closed("the commit thread has stopped"))?;
        match answer.await {
            Ok(result) => result.map_err(StoreError::Sqlite),
            Err(_) => Err(StoreError::Closed("the commit thread has stopped")),
        }
    }

    /// Closes the connection and ends the thread, after the batches already sent; a commit
    /// after this fails.
    pub(super) async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.jobs.send(Job::Close { done }).is_ok() {
            let _ = closed.await;
        }
    }
}

fn open(path: &std::path::Path) -> Result<Connection, rusqlite::Error> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // The same settings as the pool's connections: WAL (already the file's mode), and FULL,
    // which makes every acknowledged commit survive a power cut, not only a crash.
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;",
    )?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // Checkpoints are the checkpoint thread's work ([`Checkpointer`]), so that no commit
    // waits for the main file's writes and `fsync`; this connection checkpoints only when
    // the WAL has grown far past what that thread leaves.
    conn.pragma_update(None, "wal_autocheckpoint", WAL_SAFETY_NET_PAGES)?;
    Ok(conn)
}

/// The checkpoint thread: its own connection, which copies the WAL into the main file
/// (`PRAGMA wal_checkpoint(PASSIVE)`: it never blocks the commit thread or a reader) at most
/// every [`CHECKPOINT_EVERY`] while commits come. With SQLite's default, the commit that
/// took the WAL past 1,000 pages did it inline, its `fsync` of the main file included, and
/// every command waiting for that batch waited for it, which made the tail of move latency.
struct Checkpointer {
    /// A commit happened (a full queue means one is already pending).
    kick: mpsc::SyncSender<()>,
    thread: thread::JoinHandle<()>,
}

impl Checkpointer {
    fn start(conn: Connection) -> Result<Checkpointer, StoreError> {
        let (kick, kicked) = mpsc::sync_channel::<()>(1);
        let thread = thread::Builder::new()
            .name("triad-checkpoint".into())
            .spawn(move || {
                while kicked.recv().is_ok() {
                    // PASSIVE: copies what no reader still needs, waits for nobody. A
                    // failure (the disk, say) leaves the WAL to the next attempt, and to the
                    // commit thread's own checkpoint past the safety net.
                    let done = conn
                        .prepare_cached("PRAGMA wal_checkpoint(PASSIVE)")
                        .and_then(|mut s| s.query_row([], |_| Ok(())));
                    if let Err(e) = done {
                        tracing::warn!(error = %e, "checkpoint failed; retrying later");
                    }
                    thread::sleep(CHECKPOINT_EVERY);
                }
            })
            .map_err(|_| StoreError::Closed("the checkpoint thread could not be started"))?;
        Ok(Checkpointer { kick, thread })
    }

    /// Asks for a checkpoint soon, without waiting.
    fn kick(&self) {
        let _ = self.kick.try_send(());
    }

    /// Ends the thread after its current checkpoint.
    fn stop(self) {
        drop(self.kick);
        let _ = self.thread.join();
    }
}

fn run(
    path: &std::path::Path,
    mut conn: Option<Connection>,
    queue: &mpsc::Receiver<Job>,
    checkpointer: Checkpointer,
) {
    let mut checkpointer = Some(checkpointer);
    while let Ok(job) = queue.recv() {
        let (rows, reply) = match job {
            Job::Write { rows, reply } => (rows, reply),
            Job::Close { done } => {
                drop(conn.take());
                if let Some(c) = checkpointer.take() {
                    c.stop();
                }
                let _ = done.send(());
                return;
            }
        };
        let result = match conn.as_mut() {
            Some(c) => Ok(c),
            None => open(path).map(|c| conn.insert(c)),
        }
        .and_then(|c| write(c, &rows));
        if result.is_err() {
            // A failed write can leave the connection inside its transaction, holding the
            // database's write lock (after SQLITE_FULL, say), which would stall every other
            // writer: roll back, and start the next batch on a fresh connection
            // (RELIABILITY.md, full disk).
            if let Some(c) = conn.take() {
                let _ = c.execute_batch("ROLLBACK");
                drop(c);
            }
        }
        if result.is_ok()
            && let Some(c) = &checkpointer
        {
            c.kick();
        }
        let _ = reply.send(result);
    }
    if let Some(c) = checkpointer.take() {
        c.stop();
    }
}

fn write(conn: &Connection, rows: &Rows) -> Result<(), rusqlite::Error> {
    // `BEGIN` and `COMMIT` are cached statements too: `Connection::transaction` parses their
    // text at every batch (about 1% of the server's instructions per game). A failure
    // midway leaves the transaction open; [`run`] rolls it back and drops the connection.
    conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    {
        let mut event = conn.prepare_cached(INSERT_EVENT)?;
        let mut topic = conn.prepare_cached(INSERT_TOPIC)?;
        let mut ledger = conn.prepare_cached(INSERT_LEDGER)?;
        for e in &rows.events {
            event.execute(params![
                e.seq,
                e.at_ms,
                e.match_id,
                e.kind,
                e.body,
                e.match_floor
            ])?;
            for t in &e.topics {
                topic.execute(params![t, e.seq])?;
            }
            for l in &e.ledger {
                ledger.execute(params![l.address, e.seq, l.amount, l.reason, l.match_id])?;
            }
        }
        let mut upsert = conn.prepare_cached(UPSERT_MATCH)?;
        let mut player = conn.prepare_cached(INSERT_PLAYER)?;
        for m in &rows.matches {
            upsert.execute(params![
                m.id,
                m.game,
                m.stake,
                m.origin,
                m.phase,
                m.reason,
                m.created_ms,
                m.updated_ms,
                m.body
            ])?;
        }
        for (address, match_id) in &rows.players {
            player.execute(params![address, match_id])?;
        }
        if !rows.tournaments.is_empty() {
            let mut tournament = conn.prepare_cached(UPSERT_TOURNAMENT)?;
            for t in &rows.tournaments {
                tournament.execute(params![t.id, t.phase, t.ended_ms, t.body])?;
            }
        }
    }
    conn.prepare_cached("COMMIT")?.execute([])?;
    Ok(())
}
