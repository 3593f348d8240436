//! The core task: it drains the command queue into batches and takes each through its
//! phases, in this order:
//! 1. on a shared database, take the cluster lock ([`ClusterLock::take`]) unless this node
//!    still holds it, before the engine's lock so that local readers are not held up while
//!    it is awaited;
//! 2. under the engine's write lock, follow the log up to the last event other nodes
//!    committed ([`Batches::follow_log`]);
//! 3. execute the commands ([`execute_batch`]);
//! 4. choose the rows to write ([`rows`]);
//! 5. commit them ([`Batches::write`]);
//! 6. publish the events and answer ([`Batches::publish`]), or, when anything of 2 to 5
//!    failed, rebuild the engine from the database and refuse the batch
//!    ([`Batches::recover`]);
//! 7. on a shared database, keep the cluster lock for the next batch while commands wait,
//!    for at most a stint ([`LockConnection::STINT`]), else let go of it.
//!
//! The engine's write lock is held from step 2 until the batch is durable (or the engine
//! rebuilt), and every command is answered only after that: nothing unacknowledged
//! survives, nothing acknowledged is lost, and a reader never sees a state that is not yet
//! durable.
//!
//! The cluster lock is a session-level advisory lock on a connection of this node's own
//! ([`LockConnection`]). While a node holds it no other node writes, so a batch it writes
//! is one statement that commits by itself (one round trip), and the next batch needs
//! neither the lock nor the log's head again: the head is this node's last event. A
//! failure on that connection closes it, which lets go of the lock.

use std::{sync::Arc, time::Instant};

use tokio::sync::{Notify, RwLock, RwLockWriteGuard, mpsc, oneshot};
use triad_engine::{Engine, Envelope, Event, EventKind, MatchId, Receipt};

use super::{
    CoreError, Health, StorageFault,
    follow::{CATCH_UP_PAGE, apply_new, publish_read, rebuild},
};
use crate::{
    hub::Hub,
    store::{Commit, Encoded, LockConnection, Store, StoreError},
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
// and hold times and the batch sizes are what a cluster's capacity is made of: one node at
// a time holds the cluster lock, for a stint of one or more batches, so the share of time
// it is held (the hold's sum's rate over the nodes) nearing 1 is the ceiling (README,
// "Scale out").
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
        "Time to write and commit one batch (on PostgreSQL: its one statement under the cluster lock, sent to answered)."
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
        "PostgreSQL only: time from asking for the cluster lock (pg_advisory_lock, with the log's head) to its grant; grows as the nodes contend for it."
    );
    describe_histogram!(
        LOCK_HOLD,
        Unit::Seconds,
        "PostgreSQL only: time a node held the cluster lock, from taking it to letting go: a stint of one batch, or more while commands kept waiting (at most 20 ms and the batch that began in it). One node at a time holds it."
    );
    metrics::describe_counter!(
        super::follow::FOLLOWED_TOTAL,
        Unit::Count,
        "PostgreSQL only: events other nodes committed that this node applied, by where it had them from: their batch's announcement (from=\"announcement\", no read) or the log read back (from=\"log\": an event too large to announce, a missed announcement, or a batch's catch-up under the cluster lock)."
    );
    metrics::describe_counter!(
        super::follow::LOG_READS_TOTAL,
        Unit::Count,
        "PostgreSQL only: reads of the event log outside the cluster lock, one query each: before an API read (so that it sees every command acknowledged before it, on any node; the API reads waiting at once share one), after a missed announcement, and once a second. Every batch of the cluster asking for none, this grows with the API's reads, not with the cluster's batches."
    );
    describe_histogram!(
        FOLLOWED_EVENTS,
        Unit::Count,
        "PostgreSQL only: events other nodes committed that a batch applied under the cluster lock before its own commands (0 when this node wrote the last batch)."
    );
}

/// The cluster lock as this node's core task holds it: the connection, and since when it
/// has held the lock (the stint).
struct ClusterLock {
    conn: LockConnection,
    since: Option<Instant>,
}

impl ClusterLock {
    /// Takes the lock unless this node holds it: the log's head under a lock just taken,
    /// `None` when it was held already (then nobody wrote since this node's last batch).
    async fn take(&mut self, store: &Store) -> Result<Option<u64>, StoreError> {
        if self.conn.is_held() {
            return Ok(None);
        }
        let asked = Instant::now();
        let head = self.conn.lock(store).await?;
        metrics::histogram!(LOCK_WAIT).record(asked.elapsed().as_secs_f64());
        self.since = Some(Instant::now());
        Ok(Some(head))
    }

    /// Lets go of the lock (after the batch, so its answers went first) unless commands
    /// wait and the stint is not over.
    async fn after_batch(&mut self, waiting: bool) {
        let Some(since) = self.since else { return };
        if !self.conn.is_held() {
            // Lost with its connection, after a failure.
            self.ended(since);
            return;
        }
        if waiting && since.elapsed() < LockConnection::STINT {
            return;
        }
        if let Err(error) = self.conn.unlock().await {
            tracing::warn!(%error, "could not let go of the cluster lock; its connection is closed");
        }
        self.ended(since);
    }

    /// Closes the connection, letting go of the lock, after a failure under it.
    fn close(&mut self) {
        self.conn.close();
        if let Some(since) = self.since {
            self.ended(since);
        }
    }

    fn ended(&mut self, since: Instant) {
        metrics::histogram!(LOCK_HOLD).record(since.elapsed().as_secs_f64());
        self.since = None;
    }
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
        let mut lock = ClusterLock {
            conn: LockConnection::new(),
            since: None,
        };
        while let Some(JobBox(first)) = rx.recv().await {
            jobs.push(*first);
            while jobs.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(JobBox(job)) => jobs.push(*job),
                    Err(_) => break,
                }
            }
            self.batch(&mut jobs, &mut lock).await;
            if self.store.is_shared() {
                lock.after_batch(!rx.is_empty()).await;
            }
        }
        lock.close();
    }

    /// Takes one batch through its phases; every job is answered, and `jobs` left empty.
    async fn batch(&self, jobs: &mut Vec<Job>, lock: &mut ClusterLock) {
        let head = if self.store.is_shared() {
            match lock.take(&self.store).await {
                Ok(head) => head,
                Err(error) => {
                    tracing::error!(%error, "cannot take the cluster lock");
                    metrics::counter!("triad_commit_failures_total").increment(1);
                    let message = error.to_string();
                    self.health
                        .set_storage(Some(StorageFault::Failing(message.clone())));
                    refuse(jobs, || CoreError::Storage(message.clone()));
                    return;
                }
            }
        } else {
            None
        };
        let mut engine = self.engine.write().await;
        if self.store.is_shared()
            && let Err(error) = self.follow_log(lock, head, &mut engine).await
        {
            tracing::error!(%error, "cannot follow the event log; rebuilding the engine");
            self.health
                .set_storage(Some(StorageFault::Failing(error.to_string())));
            lock.close();
            rebuild(&mut engine, &self.store, &self.health, &self.hub).await;
            drop(engine);
            let message = error.to_string();
            refuse(jobs, || CoreError::Storage(message.clone()));
            return;
        }
        // Before the batch: no event of it, or after it, concerns an older match.
        let match_floor = engine.oldest_match_id().0;
        let results = execute_batch(&mut engine, jobs, &self.store, &self.health, &self.hub).await;
        let (commit, encoded) = rows(&engine, &results, match_floor);
        let written = match encoded {
            Ok(()) => self.write(lock, &commit, jobs.len()).await,
            Err(error) => Err(error),
        };
        match written {
            Ok(()) => {
                self.publish(engine, commit);
                for (job, result) in jobs.drain(..).zip(results) {
                    let _ = job.reply.send(result);
                }
                self.wake_ticker.notify_one();
            }
            Err(error) => {
                drop(commit);
                // Whatever this node assumed about the log under the lock is void.
                lock.close();
                self.recover(engine, jobs, error).await;
            }
        }
    }

    /// Under the cluster lock: applies the events other nodes committed since this node's
    /// last one, up to the log's head read with the lock, and publishes them to this node's
    /// subscribers. Nothing is read when the lock was held already (`head` is `None`:
    /// nobody wrote since), or when the head is this node's last event; otherwise reading
    /// stops at the head (no other node can commit past it while this one holds the lock).
    async fn follow_log(
        &self,
        lock: &mut ClusterLock,
        head: Option<u64>,
        engine: &mut Engine,
    ) -> Result<(), StoreError> {
        let mut followed: u32 = 0;
        let head = head.unwrap_or(engine.next_seq() - 1);
        if head < engine.next_seq() - 1 {
            return Err(StoreError::Corrupt(format!(
                "the event log ends at event {head}, before this node's last, {}",
                engine.next_seq() - 1
            )));
        }
        while engine.next_seq() <= head {
            let after = engine.next_seq() - 1;
            let new = lock.conn.events_after(after, CATCH_UP_PAGE).await?;
            followed = followed.saturating_add(u32::try_from(new.len()).unwrap_or(u32::MAX));
            let applied = apply_new(engine, &new)?;
            super::follow::count_followed(super::follow::From::Log, applied.len());
            // Under the lock every committed event is visible: a gap is corruption.
            if new.is_empty() || applied.end != new.len() {
                return Err(StoreError::Corrupt(format!(
                    "the event log has a gap after event {}, before its head {head}",
                    engine.next_seq() - 1
                )));
            }
            publish_read(&self.hub, &new[applied]);
        }
        metrics::histogram!(FOLLOWED_EVENTS).record(f64::from(followed));
        Ok(())
    }

    /// Commits the batch's rows, if it has any: on a shared database in one statement on
    /// the lock's connection, which commits by itself; on SQLite through the commit thread.
    async fn write(
        &self,
        lock: &mut ClusterLock,
        commit: &Commit<'_>,
        commands: usize,
    ) -> Result<(), StoreError> {
        if commit.events.is_empty() {
            return Ok(());
        }
        let started = Instant::now();
        let outcome = if self.store.is_shared() {
            lock.conn.commit(commit).await
        } else {
            self.store.commit(commit).await
        };
        metrics::histogram!(COMMIT_SECONDS).record(started.elapsed().as_secs_f64());
        metrics::histogram!(BATCH_COMMANDS).record(commands as f64);
        metrics::histogram!(BATCH_EVENTS).record(commit.events.len() as f64);
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
        rebuild(&mut engine, &self.store, &self.health, &self.hub).await;
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
    // The matches the store needs: a finished one's row (the archive of finished
    // matches), and who a new or newly seated match concerns (`Rows::of`). A move is
    // neither: the engine holds every live match, and a move that ends a game comes with
    // its `GameEnded`.
    let mut touched: Vec<MatchId> = events
        .iter()
        .map(|e| e.event)
        .filter(|e| !matches!(e.kind, EventKind::Moved { .. }))
        .filter_map(Event::match_id)
        .collect();
    touched.sort_unstable();
    touched.dedup();
    let matches = touched
        .iter()
        .filter_map(|id| engine.match_(*id).cloned())
        .collect();
    // The tournaments it ended: their rows of the archive, written once (nothing changes
    // a tournament after its end), before the engine may forget them.
    let tournaments = events
        .iter()
        .filter_map(|e| match e.event.kind {
            EventKind::TournamentFinished { tournament, .. }
            | EventKind::TournamentCancelled { tournament } => engine.tournament(tournament),
            _ => None,
        })
        .cloned()
        .collect();
    (
        Commit {
            events,
            matches,
            tournaments,
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
    hub: &Hub,
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
        rebuild(engine, store, health, hub).await;
    }
}
