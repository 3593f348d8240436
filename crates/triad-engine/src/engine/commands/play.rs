//! Play and how a match ends: moves, the computer's replies, forfeits, aborts, timeout
//! claims, and rematches.

use triad_rules::{CellSet, Move, Outcome, Player};
use triad_solver::Strength;

use crate::engine::{Batch, Duplicate, Engine};
use crate::{
    Address, EndReason, EngineError, EventKind, Level, Match, MatchId, MoveSignature, Origin, Seat,
    config::RematchStart, matches::DeadlineKind,
};

impl Engine {
    /// A move: `(seq, cell, mark)`, with the mover's signature when the client signed it.
    pub(in crate::engine) fn play_move(
        &mut self,
        actor: Address,
        id: MatchId,
        (seq, cell, mark): (u8, u8, triad_rules::Mark),
        signed: Option<MoveSignature>,
        b: &mut Batch,
    ) -> Result<Option<Duplicate>, EngineError> {
        let m = self.get(id, b.now)?;
        let plies = m.seq();
        // A repeat of a move already applied returns the original result, even once the
        // match has ended (a waiting match has no seats, so no repeats).
        if let Some(player) = m.player_of(actor)
            && (1..=plies).contains(&seq)
        {
            let earlier = m.moves[usize::from(seq - 1)];
            let earlier_player = Player::to_move_after(u32::from(seq - 1));
            if earlier.cell.index() == cell && earlier.mark == mark && earlier_player == player {
                return Ok(Some(Duplicate::Move { match_id: id, seq }));
            }
        }
        let player = m.seat_in_play(actor)?;
        let expected = plies + 1;
        if seq < expected {
            return Err(EngineError::StaleSeq { expected });
        }
        if seq > expected {
            return Err(EngineError::SeqAhead { expected });
        }
        // A deadline that has passed but not yet been ticked still binds: the tick that is
        // due would end this match, so a late move may not change the outcome.
        if self.clock_deadline(m).is_some_and(|d| b.now >= d.at_ms) {
            return Err(EngineError::ClockRanOut);
        }
        let checked = m.position.check(player, cell, mark)?;
        self.place(b, id, checked, signed);
        self.computer_replies(b, id);
        Ok(None)
    }

    /// Emits a move (with its mover's signature, if any), and the ending if it ends the
    /// game.
    fn place(&mut self, b: &mut Batch, id: MatchId, mv: Move, signed: Option<MoveSignature>) {
        let m = &self.matches[&id];
        let player = m.position.turn();
        let by = m.seat(player).expect("a match in play has seats");
        let seq = m.seq() + 1;
        self.emit(
            b,
            EventKind::Moved {
                match_id: id,
                seq,
                player,
                by,
                cell: mv.cell,
                mark: mv.mark,
                signed,
            },
        );
        match self.matches[&id].position.outcome() {
            Some(Outcome::Win { winner, cells }) => {
                self.finish(b, id, EndReason::Win, Some(winner), cells);
            }
            Some(Outcome::Draw) => self.finish(b, id, EndReason::Draw, None, CellSet::EMPTY),
            None => {}
        }
    }

    /// While the computer is to move, it moves.
    pub(in crate::engine) fn computer_replies(&mut self, b: &mut Batch, id: MatchId) {
        loop {
            let m = &self.matches[&id];
            let Some(turn) = m.turn() else { return };
            let Some(Seat::Computer(level)) = m.seat(turn) else {
                return;
            };
            let strength = match level {
                Level::Perfect => Strength::Perfect,
                Level::Casual => Strength::Casual,
                Level::Random => Strength::Random,
            };
            let (position, ply) = (m.position, m.moves.len());
            let mv = triad_solver::table(position.kind())
                .choose(&position, strength, &mut self.rng(2, id, ply))
                .expect("a game in play has a legal move");
            self.place(b, id, mv, None);
        }
    }

    fn seated(
        &self,
        actor: Address,
        id: MatchId,
        now: u64,
    ) -> Result<(&Match, Player), EngineError> {
        let m = self.get(id, now)?;
        Ok((m, m.seat_in_play(actor)?))
    }

    pub(in crate::engine) fn forfeit(
        &mut self,
        actor: Address,
        id: MatchId,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let (_, player) = self.seated(actor, id, b.now)?;
        self.finish(
            b,
            id,
            EndReason::Forfeit,
            Some(player.other()),
            CellSet::EMPTY,
        );
        Ok(())
    }

    pub(in crate::engine) fn abort(
        &mut self,
        actor: Address,
        id: MatchId,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let (m, player) = self.seated(actor, id, b.now)?;
        if m.stake > 0 {
            return Err(EngineError::StakedAbort);
        }
        if let Origin::Tournament { .. } = m.origin {
            return Err(EngineError::TournamentGame);
        }
        self.emit(
            b,
            EventKind::MatchAborted {
                match_id: id,
                by: player,
            },
        );
        self.finish(b, id, EndReason::Aborted, None, CellSet::EMPTY);
        Ok(())
    }

    pub(in crate::engine) fn claim_timeout(
        &mut self,
        actor: Address,
        id: MatchId,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let (m, player) = self.seated(actor, id, b.now)?;
        let deadline = m.deadline(&self.config).ok_or(EngineError::NoDeadline)?;
        if deadline.kind == DeadlineKind::Timeout && m.turn() == Some(player) {
            return Err(EngineError::NotLastMover);
        }
        if b.now < deadline.at_ms {
            return Err(EngineError::DeadlineNotReached {
                remaining_ms: deadline.at_ms - b.now,
                your_move: m.turn() == Some(player),
            });
        }
        match deadline.kind {
            DeadlineKind::Abort => self.finish(b, id, EndReason::Aborted, None, CellSet::EMPTY),
            DeadlineKind::Timeout => {
                self.finish(b, id, EndReason::Timeout, Some(player), CellSet::EMPTY);
            }
            DeadlineKind::ChallengeExpires => {
                unreachable!("a seated match has no challenge deadline")
            }
        }
        Ok(())
    }

    pub(in crate::engine) fn rematch(
        &mut self,
        actor: Address,
        id: MatchId,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let m = self.get(id, b.now)?;
        let player = m.rematch_seat(actor)?;
        if m.rematch_offer == Some(player) {
            return Err(EngineError::RematchAlreadyOffered);
        }
        let seats = m.seats.expect("a played match has seats");
        let other = seats[player.other().index()];
        let computer = matches!(other, Seat::Computer(_));
        if !computer && m.rematch_offer.is_none() {
            self.emit(
                b,
                EventKind::RematchOffered {
                    match_id: id,
                    by: player,
                },
            );
            return Ok(());
        }
        // The opponent offered (or is the computer, which always accepts): start it.
        let (stake, game) = (m.stake, m.game());
        self.ensure_free(actor)?;
        self.ensure_stake(actor, stake)?;
        if let Seat::Human(address) = other {
            if self.active.contains_key(&address) {
                return Err(EngineError::OpponentBusy);
            }
            if self.balance(address) < stake {
                return Err(EngineError::OpponentCannotAfford);
            }
        }
        let swap = match self.config.rematch_start {
            RematchStart::Alternate => true,
            RematchStart::Random => rand::RngExt::random_bool(&mut self.rng(3, id, 0), 0.5),
        };
        let new_seats = if swap { [seats[1], seats[0]] } else { seats };
        let match_id = self.new_match_id(actor);
        self.emit(
            b,
            EventKind::GameStarted {
                match_id,
                game,
                stake,
                seats: new_seats,
                origin: Origin::Rematch { of: id },
            },
        );
        for seat in new_seats {
            if let Seat::Human(address) = seat {
                self.escrow(b, match_id, address, stake);
            }
        }
        self.computer_replies(b, match_id);
        Ok(())
    }
}
