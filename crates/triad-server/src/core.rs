//! The core: one task owns the engine, executes commands in batches, commits each batch's
//! events in one transaction (group commit) and only then answers and publishes them.
//!
//! A command is acknowledged only after its events are committed. While a batch commits,
//! new commands queue up and form the next batch, so one fsync serves many commands. If a
//! commit fails, the engine (which had already applied the batch in memory) is rebuilt from
//! the database, and every command of the batch gets a "storage unavailable" error: nothing
//! unacknowledged survives, nothing acknowledged is lost.
//!
//! The engine sits behind a read-write lock. Readers (queries) take it shared; the core
//! holds it exclusively from executing a batch until its commit is done, so a reader never
//! sees a state that is not yet durable.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use tokio::sync::{Notify, RwLock, mpsc, oneshot};
use triad_engine::{Address, Command, Engine, EngineError, Envelope, Receipt};

use crate::{
    hub::Hub,
    store::{Commit, Store, StoreError},
};

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
}

struct Job {
    envelope: Envelope,
    reply: oneshot::Sender<Result<Receipt, CoreError>>,
}

/// The handle the rest of the server uses.
#[derive(Clone, Debug)]
pub struct Core {
    jobs: mpsc::Sender<JobBox>,
    engine: Arc<RwLock<Engine>>,
    clock: Arc<Clock>,
    wake_ticker: Arc<Notify>,
    stopping: Arc<Notify>,
    stopped: Arc<std::sync::atomic::AtomicBool>,
}

/// A boxed job, so the channel's items stay small.
#[derive(Debug)]
struct JobBox(Box<Job>);

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("envelope", &self.envelope)
            .finish_non_exhaustive()
    }
}

/// The most commands in one batch.
const MAX_BATCH: usize = 4096;

impl Core {
    /// Starts the core task and the deadline ticker over a rebuilt engine.
    pub fn start(
        engine: Engine,
        store: Store,
        hub: Hub,
        clock: Arc<Clock>,
    ) -> (Core, tokio::task::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel::<JobBox>(16 * 1024);
        let engine = Arc::new(RwLock::new(engine));
        let wake_ticker = Arc::new(Notify::new());
        let core = Core {
            jobs: tx,
            engine: engine.clone(),
            clock: clock.clone(),
            wake_ticker: wake_ticker.clone(),
            stopping: Arc::new(Notify::new()),
            stopped: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        };
        let task = tokio::spawn(run(rx, engine, store, hub, wake_ticker.clone()));
        tokio::spawn(ticker(core.clone()));
        (core, task)
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

    /// Reads the engine's committed state.
    pub async fn read(&self) -> tokio::sync::RwLockReadGuard<'_, Engine> {
        self.engine.read().await
    }

    /// Stops taking commands: the core finishes what it has and ends once every handle is
    /// gone; the ticker ends at once.
    pub fn shut_down(&self) {
        self.stopping.notify_waiters();
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// Asks the ticker to look at the deadlines now (after the clock moved).
    pub fn wake_ticker(&self) {
        self.wake_ticker.notify_one();
    }
}

async fn run(
    mut rx: mpsc::Receiver<JobBox>,
    engine: Arc<RwLock<Engine>>,
    store: Store,
    hub: Hub,
    wake_ticker: Arc<Notify>,
) {
    let mut jobs: Vec<Job> = Vec::with_capacity(64);
    while let Some(JobBox(first)) = rx.recv().await {
        jobs.push(*first);
        while jobs.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(JobBox(job)) => jobs.push(*job),
                Err(_) => break,
            }
        }
        let mut guard = engine.write().await;
        let results: Vec<Result<Receipt, EngineError>> = jobs
            .iter()
            .map(|job| guard.execute(&job.envelope))
            .collect();
        let published: Vec<(&triad_engine::Event, Vec<String>)> = results
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .flat_map(|r| r.events.iter())
            .map(|e| (e, crate::hub::topics(e, &guard)))
            .collect();
        let mut outcome: Result<(), StoreError> = Ok(());
        if !published.is_empty() {
            let mut touched: Vec<triad_engine::MatchId> =
                published.iter().filter_map(|(e, _)| e.match_id()).collect();
            touched.sort_unstable();
            touched.dedup();
            let commit = Commit {
                matches: touched
                    .iter()
                    .filter_map(|id| guard.match_(*id).cloned())
                    .collect(),
                events: published.clone(),
            };
            let started = Instant::now();
            outcome = store.commit(&commit).await;
            metrics::histogram!("triad_commit_seconds").record(started.elapsed().as_secs_f64());
            metrics::histogram!("triad_commit_batch_commands").record(jobs.len() as f64);
            metrics::histogram!("triad_commit_batch_events").record(published.len() as f64);
        }
        match outcome {
            Ok(()) => {
                hub.publish(&published);
                metrics::gauge!("triad_live_matches").set(guard.live_matches().count() as f64);
                drop(published);
                drop(guard);
                for (job, result) in jobs.drain(..).zip(results) {
                    let _ = job.reply.send(result.map_err(CoreError::from));
                }
                wake_ticker.notify_one();
            }
            Err(error) => {
                tracing::error!(%error, commands = jobs.len(), "commit failed; rebuilding the engine from the database");
                metrics::counter!("triad_commit_failures_total").increment(1);
                drop(published);
                let config = guard.config().clone();
                // The batch is in memory but not on disk: go back to what is on disk.
                loop {
                    match store.load_engine(config.clone()).await {
                        Ok(rebuilt) => {
                            *guard = rebuilt;
                            break;
                        }
                        Err(e) => {
                            tracing::error!(error = %e, "cannot reload the engine; retrying in 1 s");
                            tokio::time::sleep(Duration::from_secs(1)).await;
                        }
                    }
                }
                drop(guard);
                let (full, message) = (error.is_full(), error.to_string());
                for job in jobs.drain(..) {
                    let _ = job.reply.send(Err(if full {
                        CoreError::StorageFull(message.clone())
                    } else {
                        CoreError::Storage(message.clone())
                    }));
                }
            }
        }
    }
}

/// Sends a `Tick` whenever a deadline is due: challenges expire, unplayed matches abort
/// and, with automatic timeouts, slow players lose.
async fn ticker(core: Core) {
    loop {
        let next = core.read().await.next_deadline_ms();
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
