//! How matches come to be: challenges (and their answers), the open queue, the computer.

use triad_rules::{CellSet, GameKind, Player};

use crate::engine::{Batch, Engine};
use crate::{
    Address, Challenge, EndReason, EngineError, EventKind, Level, Match, MatchId, Origin, Seat,
    StartChoice, Terms,
};

impl Engine {
    pub(in crate::engine) fn challenge(
        &mut self,
        actor: Address,
        opponent: Address,
        game: GameKind,
        stake: u128,
        first: StartChoice,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        if opponent.is_zero() {
            return Err(EngineError::ZeroAddress);
        }
        if opponent == actor {
            return Err(EngineError::SelfPlay);
        }
        self.ensure_free(actor)?;
        self.ensure_stake(actor, stake)?;
        let match_id = self.new_match_id(actor);
        self.emit(
            b,
            EventKind::ChallengeIssued {
                match_id,
                challenger: actor,
                opponent,
                game,
                stake,
                first,
                expires_at_ms: b.now.saturating_add(self.config.challenge_ttl_ms),
            },
        );
        self.escrow(b, match_id, actor, stake);
        Ok(())
    }

    fn open_challenge(
        &self,
        actor: Address,
        id: MatchId,
        now: u64,
    ) -> Result<(&Match, Challenge), EngineError> {
        let m = self.get(id, now)?;
        let challenge = m.challenge_for(actor)?;
        Ok((m, challenge))
    }

    pub(in crate::engine) fn accept(
        &mut self,
        actor: Address,
        id: MatchId,
        terms: Option<Terms>,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let (m, challenge) = self.open_challenge(actor, id, b.now)?;
        // What is accepted is what the accepter saw, or nothing.
        if let Some(what) = terms
            .and_then(|t| t.differs_from(m.stake, m.game(), challenge.challenger, challenge.first))
        {
            return Err(EngineError::TermsDiffer { what });
        }
        if b.now >= challenge.expires_at_ms {
            return Err(EngineError::ChallengeExpired);
        }
        let (stake, game) = (m.stake, m.game());
        // Crossed challenges: each challenged the other before either accepted. Accepting
        // one withdraws the acceptor's own (its stake comes back first), instead of each
        // challenge blocking the other until one of them is cancelled by hand.
        match self.crossed_challenge(actor, challenge.challenger) {
            Some((own, own_stake)) => {
                // The withdrawal is a cancel, refunded as a cancel is (the same settlement
                // `finish` makes below). The last check: nothing below can refuse once the
                // withdrawal is emitted.
                let refund = self
                    .config
                    .payouts
                    .settle(EndReason::Cancelled, own_stake, own_stake)
                    .to_each;
                self.ensure_stake_after_refund(actor, stake, refund)?;
                self.finish(b, own, EndReason::Cancelled, None, CellSet::EMPTY);
            }
            None => {
                self.ensure_free(actor)?;
                self.ensure_stake(actor, stake)?;
            }
        }
        let challenger_first = match challenge.first {
            StartChoice::Challenger => true,
            StartChoice::Opponent => false,
            StartChoice::Random => rand::RngExt::random_bool(&mut self.rng(1, id, 0), 0.5),
        };
        let (c, o) = (Seat::Human(challenge.challenger), Seat::Human(actor));
        let seats = if challenger_first { [c, o] } else { [o, c] };
        self.emit(b, EventKind::ChallengeAccepted { match_id: id });
        self.emit(
            b,
            EventKind::GameStarted {
                match_id: id,
                game,
                stake,
                seats,
                origin: Origin::Challenge,
            },
        );
        self.escrow(b, id, actor, stake);
        Ok(())
    }

    pub(in crate::engine) fn decline(
        &mut self,
        actor: Address,
        id: MatchId,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let (_, challenge) = self.open_challenge(actor, id, b.now)?;
        // Past its expiry the challenge is ending by itself (and refunding the challenger).
        if b.now >= challenge.expires_at_ms {
            return Err(EngineError::ChallengeExpired);
        }
        self.emit(b, EventKind::ChallengeDeclined { match_id: id });
        self.finish(b, id, EndReason::Declined, None, CellSet::EMPTY);
        Ok(())
    }

    pub(in crate::engine) fn join_queue(
        &mut self,
        actor: Address,
        game: GameKind,
        stake: u128,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        self.ensure_free(actor)?;
        self.ensure_stake(actor, stake)?;
        let waiting = self
            .queue
            .get(&(game, stake))
            .and_then(|q| q.front().copied());
        match waiting {
            Some(id) => {
                let host = self.matches[&id].host;
                // One active match per address keeps a player out of the queue twice, so
                // the waiting player is never the joiner.
                assert_ne!(host, actor, "a player is never matched with itself");
                self.emit(
                    b,
                    EventKind::GameStarted {
                        match_id: id,
                        game,
                        stake,
                        seats: [Seat::Human(host), Seat::Human(actor)],
                        origin: Origin::Queue,
                    },
                );
                self.escrow(b, id, actor, stake);
            }
            None => {
                let match_id = self.new_match_id(actor);
                self.emit(
                    b,
                    EventKind::Queued {
                        match_id,
                        player: actor,
                        game,
                        stake,
                    },
                );
                self.escrow(b, match_id, actor, stake);
            }
        }
        Ok(())
    }

    pub(in crate::engine) fn cancel(
        &mut self,
        actor: Address,
        id: MatchId,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let m = self.get(id, b.now)?;
        m.cancellable_by(actor)?;
        let allowed_at = m.cancel_allowed_at_ms(&self.config);
        if b.now < allowed_at {
            return Err(EngineError::WaitNotOver {
                remaining_ms: allowed_at - b.now,
            });
        }
        self.finish(b, id, EndReason::Cancelled, None, CellSet::EMPTY);
        Ok(())
    }

    pub(in crate::engine) fn play_computer(
        &mut self,
        actor: Address,
        game: GameKind,
        level: Level,
        side: Player,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        self.ensure_free(actor)?;
        let match_id = self.new_match_id(actor);
        let mut seats = [Seat::Computer(level); 2];
        seats[side.index()] = Seat::Human(actor);
        self.emit(
            b,
            EventKind::GameStarted {
                match_id,
                game,
                stake: 0,
                seats,
                origin: Origin::Computer,
            },
        );
        self.computer_replies(b, match_id);
        Ok(())
    }
}
