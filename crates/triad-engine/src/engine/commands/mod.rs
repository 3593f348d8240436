//! The commands: each checks its preconditions against the state and either refuses with an
//! [`EngineError`](crate::EngineError), changing nothing, or emits the events it causes.
//! By family: how matches start (`start`), play and how matches end (`play`), money
//! (`money`), the clock (`clock`), the solver's puzzles (`puzzle`), tournaments
//! (`tournament`); `emit` writes events,
//! transfers and settlements.

mod clock;
mod emit;
mod money;
mod play;
mod puzzle;
mod start;
mod tournament;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::{Address, EngineError, Match, MatchId, Phase};

use super::Engine;

impl Engine {
    /// The match, as a command at `now` sees it: a finished match past the retention
    /// window is unknown whether or not an event has yet dropped it from memory, so the
    /// answer never depends on whether some other command came first
    /// ([`Engine::keys`](crate::Engine::keys)).
    pub(in crate::engine) fn get(&self, id: MatchId, now: u64) -> Result<&Match, EngineError> {
        self.matches
            .get(&id)
            .filter(|m| !self.past_retention(m, now))
            .ok_or(EngineError::UnknownMatch)
    }

    pub(in crate::engine) fn ensure_free(&self, address: Address) -> Result<(), EngineError> {
        match self.active.get(&address) {
            Some(&match_id) => Err(EngineError::AlreadyInMatch { match_id }),
            None => Ok(()),
        }
    }

    pub(in crate::engine) fn ensure_stake(
        &self,
        address: Address,
        stake: u128,
    ) -> Result<(), EngineError> {
        self.ensure_stake_after_refund(address, stake, 0)
    }

    /// [`Self::ensure_stake`] once `refund` more is back in the account.
    pub(in crate::engine) fn ensure_stake_after_refund(
        &self,
        address: Address,
        stake: u128,
        refund: u128,
    ) -> Result<(), EngineError> {
        if stake > self.config.max_stake {
            return Err(EngineError::StakeTooLarge {
                max: self.config.max_stake,
            });
        }
        let available = self.balance(address).saturating_add(refund);
        if available < stake {
            return Err(EngineError::InsufficientBalance {
                needed: stake,
                available,
            });
        }
        Ok(())
    }

    /// The challenge `actor` issued to `opponent` that is still waiting for an answer, if
    /// `actor`'s active match is one, with the stake it holds in escrow.
    pub(in crate::engine) fn crossed_challenge(
        &self,
        actor: Address,
        opponent: Address,
    ) -> Option<(MatchId, u128)> {
        let &own = self.active.get(&actor)?;
        let m = self.matches.get(&own)?;
        let challenge = m.challenge?;
        (m.phase == Phase::Waiting && m.host == actor && challenge.opponent == opponent)
            .then_some((own, m.stake))
    }

    /// The id of the next match `creator` creates: the next of its stripe
    /// ([`Config::match_id_stripe`](crate::Config::match_id_stripe)).
    pub(in crate::engine) fn new_match_id(&self, creator: Address) -> MatchId {
        self.next_in_stripe(self.config.match_id_stripe(creator))
    }

    /// A generator for one random decision about match `id` at its move `ply`, derived
    /// from the seed, the match and the move, so a replay needs no generator at all (the
    /// decision is in the event), and the decision does not depend on the log's other
    /// matches (which commands under other keys may have grown meanwhile).
    pub(in crate::engine) fn rng(&self, purpose: u8, id: MatchId, ply: usize) -> ChaCha8Rng {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&self.config.seed.to_le_bytes());
        seed[8..16].copy_from_slice(&id.0.to_le_bytes());
        seed[16..24].copy_from_slice(&(ply as u64).to_le_bytes());
        seed[24] = purpose;
        ChaCha8Rng::from_seed(seed)
    }
}
