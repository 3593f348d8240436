//! Tournaments: creating, entering, leaving and pausing; and the clock's part, which
//! starts them, pairs their rounds and waves, and ends them with their prizes.

use std::collections::BTreeSet;

use crate::engine::{Batch, Engine};
use crate::tournament::pairing::{self, Entrant, Pairing};
use crate::tournament::{
    EntrantStatus, Format, Tournament, TournamentId, TournamentPhase, TournamentSpec,
};
use crate::{Account, Address, EngineError, EventKind, Origin, Seat, TransferReason};

impl Engine {
    /// A tournament that is upcoming or running, for a command at `now`. One that ended
    /// and is past the retention window is unknown, whether or not the clock has swept it
    /// from memory yet (as a match is, `Engine::get`): the store's archive holds it.
    fn open(&self, id: TournamentId, now: u64) -> Result<&Tournament, EngineError> {
        let t = self
            .tournament(id)
            .filter(|t| !self.tournament_past_retention(t, now))
            .ok_or(EngineError::UnknownTournament)?;
        if t.phase.is_open() {
            Ok(t)
        } else {
            Err(EngineError::TournamentClosed { phase: t.phase })
        }
    }

    pub(in crate::engine) fn create_tournament(
        &mut self,
        actor: Address,
        spec: &TournamentSpec,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let rules = &self.config.tournaments;
        let owner = actor == self.config.owner;
        if !owner && (!rules.players_may_create || spec.entry_fee > 0) {
            return Err(EngineError::CreationRestricted);
        }
        spec.check(rules, b.now)
            .map_err(|why| EngineError::InvalidTournament { why })?;
        // The reserve takes its share of a pool as of a match's pot: the prizes share out
        // at most what a match's winner may take.
        let prizes: u64 = spec.prizes_bps.iter().map(|&b| u64::from(b)).sum();
        if prizes > u64::from(self.config.payouts.win_bps_of_pot) {
            return Err(EngineError::InvalidTournament {
                why: "the prizes add up to more than a match winner's share of a pot, which leaves the reserve less than its share",
            });
        }
        if spec.entry_fee > self.config.max_stake {
            return Err(EngineError::StakeTooLarge {
                max: self.config.max_stake,
            });
        }
        let open = u32::try_from(self.open_tournaments.len()).unwrap_or(u32::MAX);
        if open >= rules.max_open {
            return Err(EngineError::TooManyTournaments {
                limit: rules.max_open,
            });
        }
        if !owner {
            let own = self
                .open_tournaments
                .iter()
                .filter(|id| self.tournaments[id].organizer == actor)
                .count();
            if u32::try_from(own).unwrap_or(u32::MAX) >= rules.max_open_per_player {
                return Err(EngineError::TooManyTournaments {
                    limit: rules.max_open_per_player,
                });
            }
        }
        let tournament = TournamentId(self.next_tournament);
        self.emit(
            b,
            EventKind::TournamentCreated {
                tournament,
                organizer: actor,
                spec: spec.clone(),
            },
        );
        Ok(())
    }

    pub(in crate::engine) fn join_tournament(
        &mut self,
        actor: Address,
        id: TournamentId,
        bot: bool,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let t = self.open(id, b.now)?;
        let status = t.status_of(actor);
        if let Some(EntrantStatus::Active | EntrantStatus::Paused) = status {
            return Err(EngineError::AlreadyEntered);
        }
        match (t.spec.format, t.phase) {
            (Format::Swiss { .. }, TournamentPhase::Running)
                if status.is_none() || status == Some(EntrantStatus::Refunded) =>
            {
                return Err(EngineError::TournamentStarted);
            }
            (Format::Arena { .. }, TournamentPhase::Running)
                if t.ends_at_ms().is_some_and(|end| b.now >= end) =>
            {
                return Err(EngineError::TournamentClosed {
                    phase: TournamentPhase::Finished,
                });
            }
            _ => {}
        }
        if !t.spec.entry.admits(bot) {
            return Err(EngineError::EntryRestricted { bots_only: !bot });
        }
        // A withdrawn entrant comes back without paying again; anyone else pays the fee.
        let pays = status != Some(EntrantStatus::Withdrawn);
        if pays && t.players() >= t.spec.max_players {
            return Err(EngineError::TournamentFull {
                max: t.spec.max_players,
            });
        }
        let fee = if pays { t.spec.entry_fee } else { 0 };
        let available = self.balance(actor);
        if available < fee {
            return Err(EngineError::InsufficientBalance {
                needed: fee,
                available,
            });
        }
        self.emit(
            b,
            EventKind::TournamentJoined {
                tournament: id,
                player: actor,
                bot,
            },
        );
        self.transfer(
            b,
            None,
            Account::Player(actor),
            Account::Pool(id),
            fee,
            TransferReason::EntryFee,
        );
        Ok(())
    }

    pub(in crate::engine) fn leave_tournament(
        &mut self,
        actor: Address,
        id: TournamentId,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let t = self.open(id, b.now)?;
        let in_it = t
            .status_of(actor)
            .is_some_and(|s| matches!(s, EntrantStatus::Active | EntrantStatus::Paused));
        if !in_it {
            return Err(EngineError::NotEntered);
        }
        let refund = if t.phase == TournamentPhase::Upcoming {
            t.spec.entry_fee
        } else {
            0
        };
        self.emit(
            b,
            EventKind::TournamentLeft {
                tournament: id,
                player: actor,
            },
        );
        self.transfer(
            b,
            None,
            Account::Pool(id),
            Account::Player(actor),
            refund,
            TransferReason::Refund,
        );
        Ok(())
    }

    pub(in crate::engine) fn pause_tournament(
        &mut self,
        actor: Address,
        id: TournamentId,
        paused: bool,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let t = self.open(id, b.now)?;
        let status = t.status_of(actor).ok_or(EngineError::NotEntered)?;
        let from = if paused {
            EntrantStatus::Active
        } else {
            EntrantStatus::Paused
        };
        if status != from {
            return Err(match status {
                EntrantStatus::Withdrawn | EntrantStatus::Refunded => EngineError::NotEntered,
                _ => EngineError::NothingToPause,
            });
        }
        self.emit(
            b,
            EventKind::TournamentPaused {
                tournament: id,
                player: actor,
                paused,
            },
        );
        Ok(())
    }

    pub(in crate::engine) fn cancel_tournament(
        &mut self,
        actor: Address,
        id: TournamentId,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let t = self.open(id, b.now)?;
        if actor != self.config.owner && actor != t.organizer {
            return Err(EngineError::NotOrganizer);
        }
        self.call_off(b, id);
        Ok(())
    }

    /// Cancels a tournament and refunds every fee in its pool.
    fn call_off(&mut self, b: &mut Batch, id: TournamentId) {
        let t = &self.tournaments[&id];
        let fee = t.spec.entry_fee;
        let paid: Vec<Address> = t.standing_entrants().map(|e| t.info(e).address).collect();
        self.emit(b, EventKind::TournamentCancelled { tournament: id });
        for address in paid {
            self.transfer(
                b,
                None,
                Account::Pool(id),
                Account::Player(address),
                fee,
                TransferReason::Refund,
            );
        }
        debug_assert_eq!(self.ledger.balance(Account::Pool(id)), 0);
    }

    /// When the clock's part next has something to do for tournament `t`: its start, an
    /// arena's end or next wave (with two players free), a Swiss event's next round or end
    /// (once no game is being played).
    pub(in crate::engine) fn tournament_due_ms(&self, t: &Tournament) -> Option<u64> {
        let rules = &self.config.tournaments;
        match (t.phase, t.spec.format) {
            (TournamentPhase::Upcoming, _) => Some(t.spec.starts_at_ms),
            (TournamentPhase::Running, Format::Arena { .. }) => {
                let end = t.ends_at_ms();
                let wave = (self.free_entrants(t).len() >= 2)
                    .then(|| t.last_round_ms.saturating_add(rules.wave_gap_ms));
                end.into_iter().chain(wave).min()
            }
            (TournamentPhase::Running, Format::Swiss { .. }) => t
                .playing
                .is_empty()
                .then(|| t.last_change_ms.saturating_add(rules.round_gap_ms)),
            _ => None,
        }
    }

    /// The clock's part: starts each tournament due (or cancels it, short of players),
    /// pairs each running one whose round or wave is due, and ends each one whose time is
    /// up (an arena) or whose last round is over (Swiss). In tournament order.
    pub(in crate::engine) fn tick_tournaments(&mut self, b: &mut Batch) {
        let open: Vec<TournamentId> = self.open_tournaments.iter().copied().collect();
        for id in open {
            let t = &self.tournaments[&id];
            if self.tournament_due_ms(t).is_none_or(|due| due > b.now) {
                continue;
            }
            match (t.phase, t.spec.format) {
                (TournamentPhase::Upcoming, _) if t.players() < t.spec.min_players() => {
                    self.call_off(b, id);
                }
                (TournamentPhase::Upcoming, _) => {
                    self.emit(b, EventKind::TournamentStarted { tournament: id });
                    self.pair(b, id);
                }
                (TournamentPhase::Running, Format::Arena { .. })
                    if t.ends_at_ms().is_some_and(|end| b.now >= end) =>
                {
                    self.conclude(b, id);
                }
                (TournamentPhase::Running, Format::Swiss { rounds })
                    if t.round >= u32::from(rounds) =>
                {
                    self.conclude(b, id);
                }
                _ => self.pair(b, id),
            }
        }
    }

    /// The entrants of `t` who could be paired now: active, not in one of its games, and
    /// not in another match.
    fn free_entrants(&self, t: &Tournament) -> Vec<Entrant> {
        let busy: BTreeSet<Entrant> = t
            .playing
            .values()
            .flat_map(|p| [p.first, p.second])
            .collect();
        t.standing_entrants()
            .filter(|&e| {
                let info = t.info(e);
                info.status == EntrantStatus::Active
                    && !busy.contains(&e)
                    && !self.active.contains_key(&info.address)
            })
            .collect()
    }

    /// Pairs a Swiss round, or an arena wave when at least two entrants are free.
    fn pair(&mut self, b: &mut Batch, id: TournamentId) {
        let t = &self.tournaments[&id];
        let free = self.free_entrants(t);
        let (pairings, bye) = match t.spec.format {
            Format::Swiss { .. } => {
                let round = pairing::swiss(&t.records, &free);
                (round.pairings, round.bye)
            }
            Format::Arena { .. } if free.len() >= 2 => (pairing::arena(&t.records, &free), None),
            Format::Arena { .. } => return,
        };
        let game = t.spec.game;
        let round = t.round + 1;
        let players: Vec<[Address; 2]> = pairings
            .iter()
            .map(|&Pairing { first, second }| [first, second].map(|e| t.info(e).address))
            .collect();
        let bye = bye.map(|e| t.info(e).address);
        if players.is_empty() && bye.is_none() && matches!(t.spec.format, Format::Arena { .. }) {
            return;
        }
        self.emit(
            b,
            EventKind::TournamentRound {
                tournament: id,
                round,
                bye,
            },
        );
        for players in players {
            // The first seat creates the game, under the clock's `Key::All`.
            let match_id = self.new_match_id(players[0]);
            self.emit(
                b,
                EventKind::GameStarted {
                    match_id,
                    game,
                    stake: 0,
                    seats: players.map(Seat::Human),
                    origin: Origin::Tournament {
                        tournament: id,
                        round,
                    },
                },
            );
        }
    }

    /// Ends a running tournament: its standings are final, the pool pays the prizes by
    /// rank, and the reserve takes the rest.
    fn conclude(&mut self, b: &mut Batch, id: TournamentId) {
        let t = &self.tournaments[&id];
        let winner = t.standings().first().map(|s| t.info(s.entrant).address);
        let pool = self.ledger.balance(Account::Pool(id));
        assert_eq!(pool, t.pool(), "tournament {id}'s pool holds its fees");
        self.emit(
            b,
            EventKind::TournamentFinished {
                tournament: id,
                winner,
            },
        );
        let prizes = self.tournaments[&id].prizes.clone();
        let paid: u128 = prizes.iter().map(|p| p.amount).sum();
        assert!(
            paid <= pool,
            "tournament {id} pays {paid} from a pool of {pool}"
        );
        for prize in prizes {
            self.transfer(
                b,
                None,
                Account::Pool(id),
                Account::Player(prize.address),
                prize.amount,
                TransferReason::Prize,
            );
        }
        self.transfer(
            b,
            None,
            Account::Pool(id),
            Account::Reserve,
            pool - paid,
            TransferReason::ReserveShare,
        );
        assert_eq!(
            self.ledger.balance(Account::Pool(id)),
            0,
            "tournament {id} paid out in full"
        );
    }
}
