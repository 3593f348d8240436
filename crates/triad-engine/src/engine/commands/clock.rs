//! The clock: a `Tick` ends every match whose clock deadline has passed, then moves the
//! tournaments on (starts, rounds and waves, ends); `ResumeClocks` gives an outage's time
//! back.

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
