//! The core: one task owns the engine, executes commands in batches, commits each batch's
//! events in one transaction (group commit) and only then answers and publishes them.
//!
//! A command is acknowledged only after its events are committed. While a batch commits,
//! new commands queue up and form the next batch, so one fsync serves many commands. If a
//! commit fails, the engine (which had already applied the batch in memory) is rebuilt from
//! the database, and every command of the batch gets a "storage unavailable" error: nothing
//! unacknowledged survives, nothing acknowledged is lost.
//!
//! On PostgreSQL several nodes may share one database: the database, not a process, is then
//! the one writer. Each node's engine is a cache of the event log. A batch first takes the
//! cluster-wide advisory lock (session-level, on a connection of the node's own, kept for
//! a stint of batches while commands keep coming: [`batch`]), applies the events other
//! nodes committed since this node last looked, executes, and writes and commits in one
//! statement that also announces the batch (`NOTIFY triad_events`, with its events). So
//! every command of the cluster runs against the latest state, one batch at a time: a
//! deadline fires once, two queued players are paired once, a conflicting command is
//! refused, never lost. Between batches, a node applies the events each announcement
//! carries ([`Core::apply_announced`]), reads the log when one carried none or was missed
//! (and every second in case), and follows the log before every read, so a read sees every
//! command that was acknowledged before it started, whichever node took it.
//!
//! The engine sits behind a read-write lock. Readers (queries) take it shared; the core
//! holds it exclusively from executing a batch until its commit is done, so a reader never
//! sees a state that is not yet durable.
//!
//! The core's parts: [`batch`] is the task and the phases of a batch (follow the log,
//! execute, choose the rows, commit, answer or recover); [`follow`] applies the events other
//! nodes committed and rebuilds the engine from the log; [`outage`] writes the service's
//! heartbeat and, at start, gives an outage of the whole service back to the clocks; this
//! module holds the handle the rest of the server uses, the clock, the core's errors and
//! health, and the deadline ticker.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use tokio::sync::{Notify, RwLock, mpsc, oneshot, watch};
use triad_engine::{Address, Command, Engine, EngineError, Envelope, Receipt};

use crate::{
    hub::Hub,
    store::{FollowConnection, Heartbeat, Store, StoreError},
};

mod batch;
mod follow;
pub mod outage;

pub(crate) use batch::describe_metrics;
use batch::{Batches, Job, JobBox};
use follow::{CATCH_UP_PAGE, apply_new, publish_read, reload};

/// Where the server gets the time: the one place it reads a clock.
#[derive(Debug)]
pub enum Clock {
    /// The system clock.
    System,
    /// A clock that moves only when told to (`--dev-clock`, for tests only).
    Manual(AtomicU64),
}

impl Clock {
    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        match self {
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            Clock::Manual(ms) => ms.load(Ordering::SeqCst),
        }
    }

    /// Moves a manual clock forward; `false` for the system clock.
    pub fn advance(&self, by_ms: u64) -> bool {
        match self {
            Clock::System => false,
            Clock::Manual(ms) => {
                ms.fetch_add(by_ms, Ordering::SeqCst);
                true
            }
        }
    }
}

/// Why a command got no receipt.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The engine refused it.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Its batch could not be stored; nothing of it was applied.
    #[error("storage unavailable: {0}")]
    Storage(String),
    /// Its batch could not be stored because the disk is full; nothing of it was applied.
    #[error("storage full: {0}")]
    StorageFull(String),
    /// The server is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// The engine panicked on it (a bug). It was not applied: the engine was rebuilt from
    /// the database, and the rest of its batch executed without it.
    #[error("internal fault: {0}")]
    Fault(String),
}

/// Why the storage failed at the last commit, until a commit (or a probe) succeeds again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageFault {
    /// The database refused or failed (`storage_unavailable`).
    Failing(String),
    /// The disk was full (`storage_full`).
    Full(String),
}

/// Whether the core can take commands, for `/healthz`: set by the core as it runs.
#[derive(Debug, Default)]
struct Health {
    /// The core task has ended: shut down, or stopped by a fault it could not contain.
    stopped: std::sync::atomic::AtomicBool,
    /// It ended by a panic.
    crashed: std::sync::atomic::AtomicBool,
    /// Wakes whoever waits for the core to end ([`Core::stopped`]).
    ended: Notify,
    /// The engine is being rebuilt from the database (after a failure): no command runs.
    rebuilding: std::sync::atomic::AtomicBool,
    /// The last commit's failure, while no commit has succeeded since.
    storage: std::sync::Mutex<Option<StorageFault>>,
    /// When the storage last took a write (a commit or `/healthz`'s probe).
    last_write: std::sync::Mutex<Option<Instant>>,
}

impl Health {
    /// Records the storage's state after a write: its fault, or (`None`) that it took it.
    fn set_storage(&self, fault: Option<StorageFault>) {
        if fault.is_none() {
            *self
                .last_write
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
        }
        *self
            .storage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = fault;
    }
}

/// Held by the core task while it runs; when the task ends, by returning or by a panic
/// that unwinds it, marks the core stopped (and crashed, for a panic) and says so.
struct Alive(Arc<Health>);

impl Drop for Alive {
    fn drop(&mut self) {
        let panicked = std::thread::panicking();
        self.0.crashed.store(panicked, Ordering::SeqCst);
        self.0.stopped.store(true, Ordering::SeqCst);
        self.0.ended.notify_waiters();
        if panicked {
            tracing::error!(
                "the core stopped on a panic (above): no command can be taken; the server stops"
            );
        }
    }
}

/// The reads of the log that [`Core::catch_up`] shares among its callers.
#[derive(Debug, Default)]
struct LogReads {
    /// How many reads began; the last one's number.
    begun: AtomicU64,
    /// The number of the last read that ended well, and the connection the reads are
    /// made on, locked while a read is under way.
    ended: tokio::sync::Mutex<Followed>,
    /// The queries those reads sent, a page each ([`Core::log_reads`]).
    queries: AtomicU64,
}

/// What [`LogReads::ended`] locks.
#[derive(Debug, Default)]
struct Followed {
    /// The number of the last read that ended well.
    read: u64,
    /// The log's own connection (PostgreSQL): a read outside the pool is one round trip.
    conn: FollowConnection,
}

/// The handle the rest of the server uses.
#[derive(Clone, Debug)]
pub struct Core {
    jobs: mpsc::Sender<JobBox>,
    engine: Arc<RwLock<Engine>>,
    store: Store,
    hub: Hub,
    clock: Arc<Clock>,
    wake_ticker: Arc<Notify>,
    /// Reads of the log outside the cluster lock, shared by the readers who wait for
    /// the same one ([`Core::catch_up`]).
    log_reads: Arc<LogReads>,
    stopping: Arc<Notify>,
    stopped: Arc<std::sync::atomic::AtomicBool>,
    health: Arc<Health>,
    /// Becomes true once an outage found at start was given back (or there was none).
    resumed: watch::Receiver<bool>,
    /// Cleared when the server stops serving: the heartbeat stops then (see [`outage`]).
    beating: Arc<std::sync::atomic::AtomicBool>,
}

impl Core {
    /// Starts the core task over a rebuilt engine; then, once the clocks were given back
    /// the outage since `heartbeat` (the service's heartbeat as found before this node
    /// beats, see [`outage`]), the heartbeat and the deadline ticker.
    pub fn start(
        engine: Engine,
        store: Store,
        hub: Hub,
        clock: Arc<Clock>,
        heartbeat: Option<Heartbeat>,
    ) -> (Core, tokio::task::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel::<JobBox>(16 * 1024);
        let (resumed, resumed_rx) = watch::channel(false);
        let engine = Arc::new(RwLock::new(engine));
        let wake_ticker = Arc::new(Notify::new());
        let core = Core {
            jobs: tx,
            engine: engine.clone(),
            store: store.clone(),
            hub: hub.clone(),
            clock: clock.clone(),
            wake_ticker: wake_ticker.clone(),
            log_reads: Arc::default(),
            stopping: Arc::new(Notify::new()),
            stopped: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            health: Arc::default(),
            resumed: resumed_rx,
            beating: Arc::new(std::sync::atomic::AtomicBool::new(true)),
        };
        let alive = Alive(core.health.clone());
        let batches = Batches {
            engine,
            store,
            hub,
            wake_ticker,
            health: core.health.clone(),
        };
        let task = tokio::spawn(async move {
            let _alive = alive;
            batches.run(rx).await;
        });
        let clocks = core.clone();
        tokio::spawn(async move {
            // No tick before the outage is given back: it would end the very games the
            // outage kept from being played.
            outage::resume_after(&clocks, heartbeat).await;
            resumed.send_replace(true);
            tokio::spawn(outage::beat(clocks.clone()));
            ticker(clocks).await;
        });
        (core, task)
    }

    /// Resolves once the outage found at start (if any) was given back to the clocks: the
    /// server serves only after it.
    pub async fn clocks_resumed(&self) {
        let mut resumed = self.resumed.clone();
        // An error means the task ended (a shutdown): nothing is left to wait for.
        let _ = resumed.wait_for(|&done| done).await;
    }

    /// The clock.
    #[must_use]
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Executes a command for `actor` now, returning once its events are durable.
    ///
    /// # Errors
    /// The engine's refusal, or a storage failure.
    pub async fn execute(
        &self,
        actor: Address,
        command: Command,
        key: Option<triad_engine::IdempotencyKey>,
    ) -> Result<Receipt, CoreError> {
        let envelope = Envelope {
            actor,
            now_ms: self.clock.now_ms(),
            idempotency_key: key,
            command,
        };
        if self.stopped.load(Ordering::SeqCst) && envelope.command != Command::Tick {
            return Err(CoreError::ShuttingDown);
        }
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(JobBox(Box::new(Job { envelope, reply })))
            .await
            .map_err(|_| CoreError::ShuttingDown)?;
        answer.await.map_err(|_| CoreError::ShuttingDown)?
    }

    /// Reads the engine's committed state (on a shared database, after following the log
    /// up to now).
    pub async fn read(&self) -> tokio::sync::RwLockReadGuard<'_, Engine> {
        if let Err(error) = self.catch_up().await {
            tracing::warn!(%error, "could not follow the event log; reading the local state");
        }
        self.engine.read().await
    }

    /// Whether this node's engine has applied the event `seq` (it committed it, or
    /// followed it from the log).
    pub async fn has_applied(&self, seq: u64) -> bool {
        self.engine.read().await.next_seq() > seq
    }

    /// How many times this node has read the log outside the cluster lock
    /// ([`catch_up`](Core::catch_up); `triad_cluster_log_reads_total` counts the process's).
    #[must_use]
    pub fn log_reads(&self) -> u64 {
        self.log_reads.queries.load(Ordering::Relaxed)
    }

    /// Whether other nodes may write to the database (PostgreSQL).
    #[must_use]
    pub fn is_shared(&self) -> bool {
        self.store.is_shared()
    }

    /// On a shared database: applies the events other nodes committed since this node last
    /// looked, and publishes them to this node's subscribers. Does nothing on SQLite.
    ///
    /// Callers at once share a read of the log: one read is under way at a time, and a
    /// caller is answered by the first read to end well that began after it called (a
    /// read that began before might not see what was acknowledged just before the call),
    /// so N readers at once cost the database about two reads, not N.
    ///
    /// # Errors
    /// On a database failure, or a log the engine cannot follow (then the engine is rebuilt).
    pub async fn catch_up(&self) -> Result<(), StoreError> {
        if !self.store.is_shared() {
            return Ok(());
        }
        let called = self.log_reads.begun.load(Ordering::SeqCst);
        let mut ended = self.log_reads.ended.lock().await;
        if ended.read > called {
            return Ok(());
        }
        let read = self.log_reads.begun.fetch_add(1, Ordering::SeqCst) + 1;
        self.follow_log(&mut ended.conn).await?;
        ended.read = read;
        Ok(())
    }

    /// One read of the log (more, a page each, while pages come back full), on `conn`, under
    /// [`LogReads::ended`].
    async fn follow_log(&self, conn: &mut FollowConnection) -> Result<(), StoreError> {
        loop {
            let after = self.engine.read().await.next_seq() - 1;
            metrics::counter!(follow::LOG_READS_TOTAL).increment(1);
            self.log_reads.queries.fetch_add(1, Ordering::Relaxed);
            let new = conn.events_after(&self.store, after, CATCH_UP_PAGE).await?;
            if new.is_empty() {
                return Ok(());
            }
            let mut guard = self.engine.write().await;
            self.apply_followed(&mut guard, &new, follow::From::Log)
                .await?;
            if new.len() < CATCH_UP_PAGE as usize {
                return Ok(());
            }
        }
    }

    /// On a shared database: applies the events another node announced with its batch
    /// (in order, ending at its last), if this node has every event before them, and
    /// publishes them to this node's subscribers, without reading the log. False when they
    /// cannot be applied so (none came with the announcement, this node missed some before
    /// them, or the log cannot be followed): then [`catch_up`](Core::catch_up) reads it.
    pub async fn apply_announced(&self, events: &[(triad_engine::Event, Vec<String>)]) -> bool {
        let Some((first, _)) = events.first() else {
            return false;
        };
        let mut guard = self.engine.write().await;
        if first.seq > guard.next_seq() {
            return false;
        }
        match self
            .apply_followed(&mut guard, events, follow::From::Announcement)
            .await
        {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(%error, "an announced batch does not follow; the engine was rebuilt");
                false
            }
        }
    }

    /// Applies other nodes' events that follow the engine's last one, counts them as had
    /// `from`, and publishes them; a batch that does not follow rebuilds the engine from
    /// the log and is returned as the error.
    async fn apply_followed(
        &self,
        engine: &mut Engine,
        events: &[(triad_engine::Event, Vec<String>)],
        from: follow::From,
    ) -> Result<(), StoreError> {
        match apply_new(engine, events) {
            Ok(range) if range.is_empty() => Ok(()),
            Ok(range) => {
                follow::count_followed(from, range.len());
                publish_read(&self.hub, &events[range]);
                self.wake_ticker.notify_one();
                Ok(())
            }
            Err(error) => {
                if let Err(corrupt) = reload(engine, &self.store, &self.health, &self.hub).await {
                    tracing::error!(error = %corrupt, "the event log cannot be replayed");
                }
                Err(error)
            }
        }
    }

    /// Stops taking commands: the core finishes what it has and ends once every handle is
    /// gone; the ticker ends at once.
    pub fn shut_down(&self) {
        self.stopping.notify_waiters();
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// The server stops serving (a shutdown began): the heartbeat stops now, so that the
    /// outage a restart gives back begins when players lost the server, not when its last
    /// connection drained.
    pub fn stop_heartbeat(&self) {
        self.beating.store(false, Ordering::SeqCst);
    }

    /// Whether the core task runs (it ends at shutdown, or on a fault it cannot contain).
    #[must_use]
    pub fn is_running(&self) -> bool {
        !self.health.stopped.load(Ordering::SeqCst)
    }

    /// Whether the core is rebuilding its engine from the database (after a failure).
    #[must_use]
    pub fn is_rebuilding(&self) -> bool {
        self.health.rebuilding.load(Ordering::SeqCst)
    }

    /// Whether the core task ended by a panic.
    #[must_use]
    pub fn crashed(&self) -> bool {
        self.health.crashed.load(Ordering::SeqCst)
    }

    /// Resolves once the core task has ended.
    pub async fn stopped(&self) {
        let ended = self.health.ended.notified();
        if self.health.stopped.load(Ordering::SeqCst) {
            return;
        }
        ended.await;
    }

    /// The last commit's failure, while no commit has succeeded since.
    #[must_use]
    pub fn storage_fault(&self) -> Option<StorageFault> {
        self.health
            .storage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Records what a write outside the core (`/healthz`'s probe) found: the storage took
    /// it (`None`), or this fault.
    pub fn report_storage(&self, fault: Option<StorageFault>) {
        self.health.set_storage(fault);
    }

    /// Whether the storage took a write (a commit, or a probe) within `period`.
    #[must_use]
    pub fn wrote_within(&self, period: Duration) -> bool {
        self.health
            .last_write
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() < period)
    }

    /// Asks the ticker to look at the deadlines now (after the clock moved).
    pub fn wake_ticker(&self) {
        self.wake_ticker.notify_one();
    }
}

/// Sends a `Tick` whenever a deadline is due (challenges expire, unplayed matches abort
/// and, with automatic timeouts, slow players lose) or memory is to be swept.
///
/// It reads the engine as this node has it, without following the log first
/// ([`Core::read`] would, on a shared database: a query at every wake, and every batch of
/// the cluster wakes it). A deadline another node moved and this node has not heard of yet
/// costs at most a `Tick` that finds nothing due (the `Tick` follows the log under the
/// cluster lock before it runs), or a wait until the batch that moved it is heard, which
/// wakes the ticker.
async fn ticker(core: Core) {
    loop {
        let next = core.engine.read().await.next_tick_ms();
        let now = core.clock.now_ms();
        match next {
            Some(at) if at <= now => {
                match core.execute(Address::ZERO, Command::Tick, None).await {
                    Err(CoreError::ShuttingDown) => return,
                    Err(e) => {
                        tracing::warn!(error = %e, "tick failed");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                    // Nothing fired (the deadline moved meanwhile): do not spin.
                    Ok(receipt) if receipt.events.is_empty() => {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Ok(_) => {}
                }
            }
            _ => {
                let wait = next.map_or(Duration::from_secs(1), |at| {
                    Duration::from_millis((at - now).min(1_000))
                });
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = core.wake_ticker.notified() => {}
                    () = core.stopping.notified() => return,
                }
                if core.stopped.load(Ordering::SeqCst) {
                    return;
                }
            }
        }
    }
}
