//! The indexes kept beside the matches, so the clock and a player's challenges are found
//! without a scan of the live matches: the deadline index (the clock deadline of every live
//! match that has one) and the index of open challenges (by the address challenged). Only
//! [`Engine::apply`] moves their entries.

use std::collections::BTreeSet;

use crate::{
    Address, Config, Match, MatchId, Origin, Phase,
    matches::{Deadline, DeadlineKind},
};

use super::Engine;

/// The deadline the clock's `Tick` enforces on a match: every kind but the move timeout,
/// which only fires by itself with `automatic_timeouts` (otherwise the last mover claims it)
/// or in a tournament's game (whose round or wave must not wait on a claim).
pub(super) fn clock_deadline(config: &Config, m: &Match) -> Option<Deadline> {
    let automatic = config.automatic_timeouts || matches!(m.origin, Origin::Tournament { .. });
    m.deadline(config)
        .filter(|d| d.kind != DeadlineKind::Timeout || automatic)
}

/// Moves a match's entry in the deadline index from `before` to `after`.
pub(super) fn reindex(
    deadlines: &mut BTreeSet<(u64, MatchId)>,
    id: MatchId,
    before: Option<u64>,
    after: Option<u64>,
) {
    if before != after {
        if let Some(at_ms) = before {
            deadlines.remove(&(at_ms, id));
        }
        if let Some(at_ms) = after {
            deadlines.insert((at_ms, id));
        }
    }
}

/// Moves a match's entry in the index of open challenges from the opponent `before` to
/// the opponent `after`.
pub(super) fn reindex_challenge(
    challenges_to: &mut BTreeSet<(Address, MatchId)>,
    id: MatchId,
    before: Option<Address>,
    after: Option<Address>,
) {
    if before != after {
        if let Some(opponent) = before {
            challenges_to.remove(&(opponent, id));
        }
        if let Some(opponent) = after {
            challenges_to.insert((opponent, id));
        }
    }
}

impl Engine {
    /// The deadline the clock's `Tick` enforces on a match ([`clock_deadline`]).
    pub(super) fn clock_deadline(&self, m: &Match) -> Option<Deadline> {
        clock_deadline(&self.config, m)
    }

    /// When a match's clock deadline falls, as the deadline index holds it.
    pub(super) fn indexed_deadline(&self, id: MatchId) -> Option<u64> {
        let m = self.matches.get(&id)?;
        self.clock_deadline(m).map(|d| d.at_ms)
    }

    /// The address a match is an open challenge to, as the index of open challenges holds it.
    pub(super) fn indexed_challenge(&self, id: MatchId) -> Option<Address> {
        let m = self.matches.get(&id)?;
        let c = m.challenge?;
        (m.phase == Phase::Waiting).then_some(c.opponent)
    }
}
