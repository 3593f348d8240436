//! The clock: a `Tick` ends every match whose clock deadline has passed, then moves the
//! tournaments on (starts, rounds and waves, ends).

use triad_rules::CellSet;

use crate::engine::{Batch, Engine};
use crate::{EndReason, EventKind, MatchId, matches::DeadlineKind};

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
}
