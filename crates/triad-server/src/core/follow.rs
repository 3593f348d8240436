//! Following the event log: applying the events other nodes committed, and rebuilding the
//! engine from the log when its state can no longer be trusted (a failed commit, a panic
//! in the engine, a log it cannot follow).

use std::{sync::atomic::Ordering, time::Duration};

use triad_engine::Engine;

use super::Health;
use crate::{
    hub::Hub,
    store::{Encoded, Store, StoreError},
};

/// The most events read at once while following the log.
pub(super) const CATCH_UP_PAGE: u32 = 10_000;

/// Events other nodes committed that this node applied, by where it had them from
/// (described in [`describe_metrics`](super::batch::describe_metrics)).
pub(super) const FOLLOWED_TOTAL: &str = "triad_cluster_followed_events_total";

/// Reads of the log outside the cluster lock ([`Core::catch_up`](super::Core::catch_up)),
/// one query each (described in [`describe_metrics`](super::batch::describe_metrics)).
pub(super) const LOG_READS_TOTAL: &str = "triad_cluster_log_reads_total";

/// Where a node had another node's events from.
#[derive(Copy, Clone, Debug)]
pub(super) enum From {
    /// The batch's announcement ([`Core::apply_announced`](super::Core::apply_announced)).
    Announcement,
    /// The log, read back.
    Log,
}

/// Counts `count` events of other nodes applied from `from`.
pub(super) fn count_followed(from: From, count: usize) {
    let from = match from {
        From::Announcement => "announcement",
        From::Log => "log",
    };
    metrics::counter!(FOLLOWED_TOTAL, "from" => from).increment(count as u64);
}

/// Applies the events of `new` that follow the engine's last one, in order, stopping at a
/// gap (an event not yet visible); returns the range of `new` it applied.
pub(super) fn apply_new(
    engine: &mut Engine,
    new: &[(triad_engine::Event, Vec<String>)],
) -> Result<std::ops::Range<usize>, StoreError> {
    let mut start = 0;
    let mut end = 0;
    for (i, (event, _)) in new.iter().enumerate() {
        let next = engine.next_seq();
        if event.seq < next {
            start = i + 1;
            end = i + 1;
            continue;
        }
        if event.seq > next {
            break;
        }
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.apply(event)));
        if ok.is_err() {
            return Err(StoreError::Corrupt(format!(
                "event {} does not follow from the log before it",
                event.seq
            )));
        }
        end = i + 1;
    }
    Ok(start..end)
}

/// Publishes events read from the log (as the node that committed them published them).
pub(super) fn publish_read(hub: &Hub, events: &[(triad_engine::Event, Vec<String>)]) {
    let encoded: Result<Vec<Encoded<'_>>, StoreError> = events
        .iter()
        .map(|(e, t)| Encoded::new(e, t.clone()))
        .collect();
    match encoded {
        Ok(encoded) => hub.publish(&encoded),
        Err(error) => tracing::error!(%error, "cannot publish events read from the log"),
    }
}

/// Rebuilds the engine from the database, retrying while the database fails. A log that
/// cannot be replayed (corrupt) is returned instead: retrying cannot mend it. While it runs,
/// the core cannot take commands, and `/healthz` says so.
///
/// The hub forgets the matches' frames it kept: the log may hold events it never
/// published (a commit reported failed that was made), which a catch-up from its memory
/// would then leave out.
pub(super) async fn reload(
    engine: &mut Engine,
    store: &Store,
    health: &Health,
    hub: &Hub,
) -> Result<(), StoreError> {
    hub.forget_recent();
    let config = engine.config().clone();
    health.rebuilding.store(true, Ordering::SeqCst);
    let result = loop {
        match store.load_engine(config.clone()).await {
            Ok(rebuilt) => {
                *engine = rebuilt;
                break Ok(());
            }
            Err(e @ StoreError::Corrupt(_)) => break Err(e),
            Err(e) => {
                tracing::error!(error = %e, "cannot reload the engine; retrying in 1 s");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    };
    health.rebuilding.store(false, Ordering::SeqCst);
    result
}

/// [`reload`] in the core task: a log that cannot be replayed stops the core, loudly (the
/// server then stops, as it would refuse to start on that log).
pub(super) async fn rebuild(engine: &mut Engine, store: &Store, health: &Health, hub: &Hub) {
    if let Err(error) = reload(engine, store, health, hub).await {
        panic!("the event log cannot be replayed ({error}); the core stops");
    }
}
