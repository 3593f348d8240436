//! The core task: it drains the command queue into batches and takes each through its
//! phases, in this order:
//! 1. on a shared database, take the cluster lock ([`Batches::lock`]), before the engine's
//!    lock so that local readers are not held up while it is awaited;
//! 2. under the engine's write lock, follow the log up to the last event other nodes
//!    committed ([`Batches::follow_log`]);
//! 3. execute the commands ([`execute_batch`]);
//! 4. choose the rows to write ([`rows`]);
//! 5. commit them ([`Batches::write`]);
//! 6. publish the events and answer ([`Batches::publish`]), or, when anything of 2 to 5
//!    failed, rebuild the engine from the database and refuse the batch
//!    ([`Batches::recover`]).
//!
//! The engine's write lock is held from step 2 until the batch is durable (or the engine
//! rebuilt), and every command is answered only after that: nothing unacknowledged
//! survives, nothing acknowledged is lost, and a reader never sees a state that is not yet
//! durable.
//!
//! On a shared database, when commands are already waiting as a batch goes to commit, the
//! next batch's lock is asked for at once, on another connection ([`Batches::prefetch`]):
//! its `BEGIN` and its wait overlap this batch's write and `COMMIT`, and PostgreSQL grants
//! it when this batch's commit lets go of the lock. So a busy node holds the lock almost
//! back to back instead of paying two round trips between batches. A lock is never asked
//! for ahead with nothing waiting: an idle node would hold up the others.

use std::{sync::Arc, time::Instant};

use tokio::sync::{Notify, RwLock, RwLockWriteGuard, mpsc, oneshot};
use triad_engine::{Engine, Envelope, Event, EventKind, MatchId, Receipt};

use super::{
    CoreError, Health, StorageFault,
    follow::{CATCH_UP_PAGE, apply_new, publish_read, rebuild},
};
use crate::{
    hub::Hub,
    store::{Commit, Encoded, Store, StoreError, Tx},
};

/// A command waiting for its batch, and where its answer goes.
pub(super) struct Job {
    pub(super) envelope: Envelope,
    pub(super) reply: oneshot::Sender<Result<Receipt, CoreError>>,
}

/// A boxed job, so the channel's items stay small.
#[derive(Debug)]
pub(super) struct JobBox(pub(super) Box<Job>);

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("envelope", &self.envelope)
            .finish_non_exhaustive()
    }
}

/// The most commands in one batch.
const MAX_BATCH: usize = 4096;

// The batches' metrics (`/metrics`), described in [`describe_metrics`]. The lock's wait
// and hold times and the batch sizes are what a cluster's capacity is made of: every
// batch of every node holds the one cluster lock for its hold time, so the cluster
// commits at most one batch per hold time (README, "Scale out").
const COMMIT_SECONDS: &str = "triad_commit_seconds";
const BATCH_COMMANDS: &str = "triad_commit_batch_commands";
const BATCH_EVENTS: &str = "triad_commit_batch_events";
const LOCK_WAIT: &str = "triad_cluster_lock_wait_seconds";
const LOCK_HOLD: &str = "triad_cluster_lock_hold_seconds";
const FOLLOWED_EVENTS: &str = "triad_cluster_followed_events";

/// Gives the batches' metrics their help text (once the recorder is installed).
pub(crate) fn describe_metrics() {
    use metrics::{Unit, describe_histogram};
    describe_histogram!(
        COMMIT_SECONDS,
        Unit::Seconds,
        "Time to write and commit one batch (on PostgreSQL: from the first write under the cluster lock to the commit's answer)."
    );
    describe_histogram!(
        BATCH_COMMANDS,
        Unit::Count,
        "Commands in one committed batch (group commit: one transaction each)."
    );
    describe_histogram!(
        BATCH_EVENTS,
        Unit::Count,
        "Events written by one committed batch."
    );
    describe_histogram!(
        LOCK_WAIT,
        Unit::Seconds,
        "PostgreSQL only: time from asking for the cluster lock (a connection, BEGIN, pg_advisory_xact_lock) to its grant; grows as the nodes contend for it. A busy node asks for the next batch's lock while the previous batch commits, so that wait overlaps the previous hold."
    );
    describe_histogram!(
        LOCK_HOLD,
        Unit::Seconds,
        "PostgreSQL only: time a batch held the cluster lock, from taking it to its commit or rollback; the cluster commits at most one batch per hold time."
    );
    describe_histogram!(
        FOLLOWED_EVENTS,
        Unit::Count,
        "PostgreSQL only: events other nodes committed that a batch applied under the cluster lock before its own commands (0 when this node wrote the last batch)."
    );
}

/// The next batch's cluster lock, asked for while this batch commits: the transaction
/// holding it, the log's head under it, when it was asked for and when granted.
type Prefetch = tokio::task::JoinHandle<Result<(Tx, u64, Instant, Instant), StoreError>>;

/// A transaction holding the cluster lock, the log's last `seq` when it was taken, and
/// since when.
struct Held {
    tx: Tx,
    head: u64,
    since: Instant,
}

/// The lock taken at `since` was let go (its transaction ended, however it ended):
/// records how long it was held, and passes on how it ended.
fn released<T>(since: Instant, ended: T) -> T {
    metrics::histogram!(LOCK_HOLD).record(since.elapsed().as_secs_f64());
    ended
}

/// What the core task owns besides its queue.
pub(super) struct Batches {
    pub(super) engine: Arc<RwLock<Engine>>,
    pub(super) store: Store,
    pub(super) hub: Hub,
    pub(super) wake_ticker: Arc<Notify>,
    pub(super) health: Arc<Health>,
}

impl Batches {
    /// Runs batches until every handle to the queue is gone.
    pub(super) async fn run(&self, mut rx: mpsc::Receiver<JobBox>) {
        let mut jobs: Vec<Job> = Vec::with_capacity(64);
        let mut next_lock = None;
        while let Some(JobBox(first)) = rx.recv().await {
            jobs.push(*first);
            while jobs.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(JobBox(job)) => jobs.push(*job),
                    Err(_) => break,
                }
            }
            next_lock = self.batch(&mut jobs, next_lock.take(), &rx).await;
        }
    }

    /// Takes one batch through its phases, under `prefetched` when the lock was asked for
    /// while the previous batch committed; every job is answered, and `jobs` left empty.
    /// Returns the next batch's lock when it was asked for ahead (commands wait in `rx`).
    async fn batch(
        &self,
        jobs: &mut Vec<Job>,
        prefetched: Option<Prefetch>,
        rx: &mpsc::Receiver<JobBox>,
    ) -> Option<Prefetch> {
        let locked = match prefetched {
            Some(handle) => match handle.await {
                Ok(locked) => locked.map(Some),
                Err(_) => Err(StoreError::Closed("the cluster lock's task ended")),
            },
            None => self.lock().await,
        };
        let mut tx = match locked {
            Ok(tx) => tx.map(|(tx, head, asked, granted)| {
                metrics::histogram!(LOCK_WAIT).record((granted - asked).as_secs_f64());
                Held {
                    tx,
                    head,
                    since: granted,
                }
            }),
            Err(error) => {
                tracing::error!(%error, "cannot take the cluster lock");
                metrics::counter!("triad_commit_failures_total").increment(1);
                let message = error.to_string();
                self.health
                    .set_storage(Some(StorageFault::Failing(message.clone())));
                refuse(jobs, || CoreError::Storage(message.clone()));
                return None;
            }
        };
        let mut engine = self.engine.write().await;
        if let Some(t) = tx.as_mut()
            && let Err(error) = self.follow_log(t, &mut engine).await
        {
            tracing::error!(%error, "cannot follow the event log; rebuilding the engine");
            self.health
                .set_storage(Some(StorageFault::Failing(error.to_string())));
            if let Some(t) = tx.take() {
                let _ = released(t.since, t.tx.rollback().await);
            }
            rebuild(&mut engine, &self.store, &self.health).await;
            drop(engine);
            let message = error.to_string();
            refuse(jobs, || CoreError::Storage(message.clone()));
            return None;
        }
        // Before the batch: no event of it, or after it, concerns an older match.
        let match_floor = engine.oldest_match_id().0;
        let results = execute_batch(&mut engine, jobs, &self.store, &self.health).await;
        let (commit, encoded) = rows(&engine, &results, match_floor);
        let next_lock = (tx.is_some() && !rx.is_empty()).then(|| self.prefetch());
        let written = self.write(tx, &commit, jobs.len()).await;
        match encoded.and(written) {
            Ok(()) => {
                self.publish(engine, commit);
                for (job, result) in jobs.drain(..).zip(results) {
                    let _ = job.reply.send(result);
                }
                self.wake_ticker.notify_one();
            }
            Err(error) => {
                drop(commit);
                self.recover(engine, jobs, error).await;
            }
        }
        next_lock
    }

    /// On a shared database: a transaction holding the cluster-wide command lock, which it
    /// keeps until it commits or rolls back, the log's last `seq` under it, and when it was
    /// asked for and granted. `None` on SQLite, whose one writer is this task.
    async fn lock(&self) -> Result<Option<(Tx, u64, Instant, Instant)>, StoreError> {
        if self.store.is_shared() {
            Self::take_lock(self.store.clone()).await.map(Some)
        } else {
            Ok(None)
        }
    }

    async fn take_lock(store: Store) -> Result<(Tx, u64, Instant, Instant), StoreError> {
        let asked = Instant::now();
        let (tx, head) = store.begin_serialised().await?;
        Ok((tx, head, asked, Instant::now()))
    }

    /// Asks for the next batch's lock now, on its own connection: granted once this
    /// batch's transaction ends (a rolled-back or failed batch lets go of it as well). The
    /// head it reads is then after this batch, so the next batch reads no log.
    fn prefetch(&self) -> Prefetch {
        tokio::spawn(Self::take_lock(self.store.clone()))
    }

    /// Under the cluster lock: applies the events other nodes committed since this node's
    /// last one, and publishes them to this node's subscribers. When the log's head, read
    /// with the lock, is this node's last event, nobody committed since: nothing is read.
    async fn follow_log(&self, held: &mut Held, engine: &mut Engine) -> Result<(), StoreError> {
        let mut followed: u32 = 0;
        if held.head == engine.next_seq() - 1 {
            metrics::histogram!(FOLLOWED_EVENTS).record(0.0);
            return Ok(());
        }
        let tx = &mut held.tx;
        loop {
            let after = engine.next_seq() - 1;
            let new = Store::events_after(tx, after, CATCH_UP_PAGE).await?;
            if new.is_empty() {
                metrics::histogram!(FOLLOWED_EVENTS).record(f64::from(followed));
                return Ok(());
            }
            followed = followed.saturating_add(u32::try_from(new.len()).unwrap_or(u32::MAX));
            let applied = apply_new(engine, &new)?;
            // Under the lock every committed event is visible: a gap is corruption.
            if applied.end != new.len() {
                return Err(StoreError::Corrupt(format!(
                    "the event log has a gap after event {}",
                    engine.next_seq() - 1
                )));
            }
            publish_read(&self.hub, &new[applied]);
        }
    }

    /// Commits the batch's rows, if it has any (in `tx` when it holds the cluster lock);
    /// then ends a transaction that wrote nothing, which lets go of the cluster lock.
    async fn write(
        &self,
        mut tx: Option<Held>,
        commit: &Commit<'_>,
        commands: usize,
    ) -> Result<(), StoreError> {
        let mut outcome = Ok(());
        if !commit.events.is_empty() {
            let started = Instant::now();
            outcome = match tx.take() {
                Some(t) => released(t.since, self.store.commit_in(t.tx, commit).await),
                None => self.store.commit(commit).await,
            };
            metrics::histogram!(COMMIT_SECONDS).record(started.elapsed().as_secs_f64());
            metrics::histogram!(BATCH_COMMANDS).record(commands as f64);
            metrics::histogram!(BATCH_EVENTS).record(commit.events.len() as f64);
        }
        if let Some(t) = tx
            && let Err(error) = released(t.since, t.tx.rollback().await)
        {
            tracing::warn!(%error, "could not end an empty transaction");
        }
        outcome
    }

    /// The batch is durable: publishes its events, then lets readers at the new state
    /// (the answers go after this).
    fn publish(&self, engine: RwLockWriteGuard<'_, Engine>, commit: Commit<'_>) {
        if !commit.events.is_empty() {
            self.health.set_storage(None);
        }
        self.hub.publish(&commit.events);
        metrics::gauge!("triad_live_matches").set(engine.live_count() as f64);
        drop(commit);
        drop(engine);
    }

    /// The batch could not be stored: it is in memory but not on disk, so the engine goes
    /// back to what is on disk, and every command of the batch is refused.
    async fn recover(
        &self,
        mut engine: RwLockWriteGuard<'_, Engine>,
        jobs: &mut Vec<Job>,
        error: StoreError,
    ) {
        tracing::error!(%error, commands = jobs.len(), "commit failed; rebuilding the engine from the database");
        metrics::counter!("triad_commit_failures_total").increment(1);
        let (full, message) = (error.is_full(), error.to_string());
        self.health.set_storage(Some(if full {
            StorageFault::Full(message.clone())
        } else {
            StorageFault::Failing(message.clone())
        }));
        rebuild(&mut engine, &self.store, &self.health).await;
        drop(engine);
        refuse(jobs, || {
            if full {
                CoreError::StorageFull(message.clone())
            } else {
                CoreError::Storage(message.clone())
            }
        });
    }
}

/// Answers every job with an error.
fn refuse(jobs: &mut Vec<Job>, error: impl Fn() -> CoreError) {
    for job in jobs.drain(..) {
        let _ = job.reply.send(Err(error()));
    }
}

/// The batch's rows: each event of its receipts encoded once (for its row and for every
/// subscriber) with the topics it is published on, and the matches whose row it changes.
/// An event that cannot be encoded leaves no rows to write, and the error.
fn rows<'a>(
    engine: &Engine,
    results: &'a [Result<Receipt, CoreError>],
    match_floor: u64,
) -> (Commit<'a>, Result<(), StoreError>) {
    let encoded: Result<Vec<Encoded<'a>>, StoreError> = results
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .flat_map(|r| r.events.iter())
        .map(|e| Encoded::new(e, crate::hub::topics(e, engine)))
        .collect();
    let (events, outcome) = match encoded {
        Ok(events) => (events, Ok(())),
        Err(error) => (Vec::new(), Err(error)),
    };
    // A match's row is written with the events that change more than its board: a move
    // after the first leaves it as it was (the engine holds every live match, and the
    // listings take live ones from it), which spares a ~1 KiB row rewrite per move. The
    // first move changes the phase (ready to in progress, which the listings filter on); a
    // move that ends a game comes with its `GameEnded`, which writes the row whole.
    let mut touched: Vec<MatchId> = events
        .iter()
        .map(|e| e.event)
        .filter(|e| !matches!(e.kind, EventKind::Moved { seq, .. } if seq > 1))
        .filter_map(Event::match_id)
        .collect();
    touched.sort_unstable();
    touched.dedup();
    let matches = touched
        .iter()
        .filter_map(|id| engine.match_(*id).cloned())
        .collect();
    (
        Commit {
            events,
            matches,
            match_floor,
        },
        outcome,
    )
}

/// The text of a panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Executes a batch's commands. A command on which the engine panics (a bug: the engine
/// refuses bad input with errors, and asserts its invariants) is contained: the engine,
/// which may hold part of that command, is rebuilt from the database (which has nothing
/// of this batch yet, so that is the state before it), the command is refused with
/// [`CoreError::Fault`] and logged, and the batch runs again without it. So one bad
/// command costs a rebuild, never the server; a panic while rebuilding (a corrupt log)
/// is not contained and stops the core.
async fn execute_batch(
    engine: &mut Engine,
    jobs: &[Job],
    store: &Store,
    health: &Health,
) -> Vec<Result<Receipt, CoreError>> {
    let mut faults: Vec<Option<String>> = vec![None; jobs.len()];
    loop {
        let mut results = Vec::with_capacity(jobs.len());
        let mut panicked = None;
        for (i, job) in jobs.iter().enumerate() {
            if let Some(fault) = &faults[i] {
                results.push(Err(CoreError::Fault(fault.clone())));
                continue;
            }
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                engine.execute(&job.envelope)
            }));
            match run {
                Ok(result) => results.push(result.map_err(CoreError::from)),
                Err(payload) => {
                    panicked = Some((i, panic_text(&*payload)));
                    break;
                }
            }
        }
        let Some((i, fault)) = panicked else {
            return results;
        };
        tracing::error!(
            command = ?jobs[i].envelope,
            panic = %fault,
            "the engine panicked on a command: refused, and the engine is rebuilt from the database"
        );
        metrics::counter!("triad_engine_panics_total").increment(1);
        faults[i] = Some(fault);
        rebuild(engine, store, health).await;
    }
}
