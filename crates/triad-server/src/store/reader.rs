//! The SQLite read thread: one read-only connection, owned by one OS thread, for the reads
//! on the hot path (a WebSocket subscription's catch-up from the log).
//!
//! Through the sqlx pool, each such read cost two round trips between the runtime and the
//! connection's worker thread: the query, then the ping sqlx sends every connection it takes
//! back (`return_to_pool`, not configurable). Here a read crosses once, with its prepared
//! statement cached on the connection. In WAL mode it never waits for the commit thread
//! (`writer`), and it sees every batch committed before it starts.
//!
//! The other reads (listings, history, the agents' relay) still go through the pool.

use std::{path::PathBuf, sync::mpsc, thread};

use rusqlite::{Connection, OpenFlags};
use tokio::sync::oneshot;

use super::StoreError;

/// How long a read waits for a lock (a checkpoint's, say), as the pool's connections do.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A read to run on the thread's connection (or the error that stopped it from opening);
/// it sends its own answer.
type Job = Box<dyn FnOnce(Result<&Connection, rusqlite::Error>) + Send>;

/// The handle to the read thread; the thread ends when the last handle is dropped, or at
/// [`Reader::close`].
pub(super) struct Reader {
    jobs: std::sync::Mutex<Option<mpsc::Sender<Job>>>,
    /// The thread, joined at [`Reader::close`].
    thread: std::sync::Mutex<Option<thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader").finish_non_exhaustive()
    }
}

impl Reader {
    /// Opens the connection (to check the file now, not at the first read) and starts the
    /// thread.
    pub(super) fn start(path: PathBuf) -> Result<Reader, StoreError> {
        let conn = open(&path).map_err(StoreError::Sqlite)?;
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = thread::Builder::new()
            .name("triad-read".into())
            .spawn(move || run(&path, Some(conn), &queue))
            .map_err(|_| StoreError::Closed("the read thread could not be started"))?;
        Ok(Reader {
            jobs: std::sync::Mutex::new(Some(jobs)),
            thread: std::sync::Mutex::new(Some(thread)),
        })
    }

    /// Runs `read` on the thread's connection and returns its answer.
    pub(super) async fn call<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |conn| {
            let _ = reply.send(conn.map_err(StoreError::Sqlite).and_then(read));
        });
        let sent = match self.jobs.lock() {
            Ok(jobs) => jobs.as_ref().is_some_and(|j| j.send(job).is_ok()),
            Err(_) => false,
        };
        if !sent {
            return Err(StoreError::Closed("the store is closed"));
        }
        answer
            .await
            .map_err(|_| StoreError::Closed("the read thread has stopped"))?
    }

    /// Ends the thread after the reads already sent and waits until it has closed its
    /// connection (so that no read holds a snapshot of the file when the store checkpoints
    /// it at close); a read after this fails with [`StoreError::Closed`].
    pub(super) async fn close(&self) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.take();
        }
        let thread = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(thread) = thread {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

fn open(path: &std::path::Path) -> Result<Connection, rusqlite::Error> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(8);
    Ok(conn)
}

fn run(path: &std::path::Path, mut conn: Option<Connection>, queue: &mpsc::Receiver<Job>) {
    while let Ok(job) = queue.recv() {
        // The connection is opened again after a failure to open it, not after a failed
        // read: SQLite resets a statement when it is dropped, so no read holds on to its
        // snapshot of the file.
        let c = match conn.take() {
            Some(c) => c,
            None => match open(path) {
                Ok(c) => c,
                // This read fails with the reason; the next one tries to open again.
                Err(e) => {
                    job(Err(e));
                    continue;
                }
            },
        };
        job(Ok(&c));
        conn = Some(c);
    }
}
