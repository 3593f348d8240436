//! Outages: an outage of the whole service costs nobody time.
//!
//! Every node writes the service's heartbeat ([`Store::beat`]) every
//! [`HEARTBEAT_INTERVAL`] by its [`Clock`](super::Clock). A node that starts reads the
//! heartbeat before it beats itself; when the heartbeat is older than [`OUTAGE_GRACE_MS`]
//! and no other node still beats (on a shared database it watches the count of beats for
//! two intervals), every node was down: before it serves, and before its ticker may end a
//! match on time, it sends the engine `ResumeClocks` from the last beat, through the
//! ordinary command path. The engine moves every running clock later by the outage (see
//! `Command::ResumeClocks`), refuses the same outage twice (two nodes starting together),
//! and records nothing when no clock runs. A node that restarts while another lives finds
//! a fresh heartbeat, or a beating one, and gives nothing back.
//!
//! A restart within the grace period is not given back: its cost is at most that.

use std::{sync::atomic::Ordering, time::Duration};

use triad_engine::{Address, Command, EngineError};

use super::{Core, CoreError};
use crate::store::Heartbeat;

/// How often each node writes the heartbeat.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);

/// A heartbeat older than this at start means the whole service was down: three beats
/// missed, well above a beat's own delay, below what a player would notice on a clock.
pub const OUTAGE_GRACE_MS: u64 = 3_000;

/// At start, before serving: gives the clocks back the outage since `last` (the heartbeat
/// as the node found it before beating), if there was one. Never fails the start: a
/// refusal or a storage failure is logged, and the node serves.
pub(super) async fn resume_after(core: &Core, last: Option<Heartbeat>) {
    let Some(last) = last else {
        return;
    };
    let down_ms = core.clock.now_ms().saturating_sub(last.alive_ms);
    if down_ms <= OUTAGE_GRACE_MS {
        return;
    }
    if core.store.is_shared() && another_node_beats(core, last).await {
        tracing::info!(
            down_ms,
            "the heartbeat was old, but another node beats: no outage to give back"
        );
        return;
    }
    let command = Command::ResumeClocks {
        down_since_ms: last.alive_ms,
    };
    match core.execute(Address::ZERO, command, None).await {
        Ok(receipt) if receipt.events.is_empty() => {
            tracing::info!(down_ms, "the service was down; no clock was running");
        }
        Ok(_) => tracing::warn!(
            down_ms,
            down_since_ms = last.alive_ms,
            "the service was down: every running clock was given the time back"
        ),
        // Another node resumed this outage first, or the log shows the service was alive.
        Err(CoreError::Engine(e @ (EngineError::OutageAlreadyResumed | EngineError::NoOutage))) => {
            tracing::info!(down_ms, code = e.code(), "no outage to give back: {e}");
        }
        Err(error) => {
            tracing::error!(%error, down_ms, "could not give the outage back to the clocks");
        }
    }
}

/// Whether another node beats: the count of beats moves within two intervals of `last`.
/// Clocks are not compared, so a node whose clock lags (or stands still) still counts.
async fn another_node_beats(core: &Core, last: Heartbeat) -> bool {
    tokio::time::sleep(2 * HEARTBEAT_INTERVAL).await;
    match core.store.heartbeat().await {
        Ok(now) => now.is_some_and(|h| h.beats != last.beats),
        Err(error) => {
            tracing::warn!(%error, "could not read the heartbeat again; taking it as stopped");
            false
        }
    }
}

/// Writes the heartbeat every [`HEARTBEAT_INTERVAL`] until the server shuts down. A failed
/// write is logged and tried again at the next beat: the heartbeat only ever says when the
/// service was last alive, so a missed beat can only give back a little more time.
pub(super) async fn beat(core: Core) {
    let mut every = tokio::time::interval(HEARTBEAT_INTERVAL);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        tokio::select! {
            _ = every.tick() => {}
            () = core.stopping.notified() => return,
        }
        if core.stopped.load(Ordering::SeqCst) || !core.beating.load(Ordering::SeqCst) {
            return;
        }
        match core.store.beat(core.clock.now_ms()).await {
            Ok(()) => failing = false,
            Err(error) if !failing => {
                failing = true;
                tracing::warn!(%error, "could not write the heartbeat; trying every second");
            }
            Err(_) => {}
        }
    }
}
