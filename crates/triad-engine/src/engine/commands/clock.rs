//! The clock: a `Tick` ends every match whose clock deadline has passed, moves the
//! tournaments on (starts, rounds and waves, ends) and now and then sweeps memory;
//! `ResumeClocks` gives an outage's time back.

use triad_rules::CellSet;

use crate::engine::{Batch, Engine};
use crate::{
    Address, EndReason, EngineError, EventKind, MatchId, TournamentPhase, matches::DeadlineKind,
};

impl Engine {
    pub(in crate::engine) fn tick(&mut self, b: &mut Batch) {
        let mut due: Vec<(MatchId, DeadlineKind)> = self
            .deadlines
            .iter()
            .take_while(|&&(at_ms, _)| at_ms <= b.now)
            .map(|&(_, id)| {
                let d = self.clock_deadline(&self.matches[&id]);
                (id, d.expect("an indexed match has a deadline").kind)
            })
            .collect();
        // In match order, as they end in the log.
        due.sort_unstable_by_key(|&(id, _)| id);
        for (id, kind) in due {
            match kind {
                DeadlineKind::ChallengeExpires => {
                    self.emit(b, EventKind::ChallengeExpired { match_id: id });
                    self.finish(b, id, EndReason::Expired, None, CellSet::EMPTY);
                }
                DeadlineKind::Abort => self.finish(b, id, EndReason::Aborted, None, CellSet::EMPTY),
                DeadlineKind::Timeout => {
                    let last_mover = self.matches[&id].position.turn().other();
                    self.finish(b, id, EndReason::Timeout, Some(last_mover), CellSet::EMPTY);
                }
            }
        }
        // After the games: a game that just ended frees its players for an arena's wave.
        self.tick_tournaments(b);
        if self.next_sweep_ms().is_some_and(|at| at <= b.now) {
            self.emit(b, EventKind::Forgotten { before_ms: b.now });
        }
    }

    /// When a `Tick` next sweeps memory ([`EventKind::Forgotten`]): once an idempotency
    /// key is past its window, or a finished match or an archived tournament that ended
    /// past its retention, and no sooner than
    /// [`Engine::SWEEP_EVERY_MS`] after the last sweep. Only the clock sweeps, under
    /// `Key::All`: an event under some keys sweeping as of its own time would forget what
    /// a command under others, at an earlier time, may still name. (The keys' times go at
    /// every sweep too; they need no sweep of their own, being one time per key in use,
    /// as accounts and records are.)
    #[must_use]
    pub fn next_sweep_ms(&self) -> Option<u64> {
        let idempotency = self
            .idempotency_order
            .first()
            .map(|&(at_ms, ..)| at_ms.saturating_add(self.config.idempotency_window_ms));
        // Strictly past the retention window: the first instant after it.
        let past_retention = |ended_ms: u64| {
            ended_ms
                .saturating_add(self.config.finished_retention_ms)
                .saturating_add(1)
        };
        let matches = self
            .finished_order
            .first()
            .map(|&(ended, _)| past_retention(ended));
        let tournaments = self
            .ended_tournaments
            .first()
            .map(|&(ended, _)| past_retention(ended));
        let earliest = idempotency
            .into_iter()
            .chain(matches)
            .chain(tournaments)
            .min()?;
        Some(earliest.max(self.floor_ms.saturating_add(Engine::SWEEP_EVERY_MS)))
    }

    /// Gives back the outage from `down_since_ms` to now (see
    /// [`Command::ResumeClocks`](crate::Command::ResumeClocks)). The outage begins no
    /// earlier than the last event, when the engine was evidently alive. Nothing is
    /// emitted when no clock runs (no match in play, no open challenge, no running
    /// tournament): there is nothing to give back to.
    pub(in crate::engine) fn resume_clocks(
        &mut self,
        actor: Address,
        down_since_ms: u64,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        if !actor.is_zero() {
            return Err(EngineError::ClockOnly);
        }
        if down_since_ms > b.now {
            return Err(EngineError::OutageInFuture);
        }
        if down_since_ms < self.last_resumed_ms {
            return Err(EngineError::OutageAlreadyResumed);
        }
        let since = down_since_ms.max(self.clock_ms);
        if since >= b.now {
            return Err(EngineError::NoOutage);
        }
        if self.clocks_running() {
            self.emit(
                b,
                EventKind::ClocksResumed {
                    down_since_ms: since,
                    resumed_ms: b.now,
                },
            );
        }
        Ok(())
    }

    /// Whether any clock runs that an outage would move: a live match's deadline (a move,
    /// a first move, a challenge's expiry) or a running tournament's. O(live matches), for
    /// a command that comes once per outage.
    fn clocks_running(&self) -> bool {
        self.live
            .iter()
            .any(|id| self.matches[id].deadline(&self.config).is_some())
            || self
                .open_tournaments
                .iter()
                .any(|id| self.tournaments[id].phase == TournamentPhase::Running)
    }
}
