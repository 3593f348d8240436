//! The invariant check of the whole state.

use std::collections::{BTreeMap, BTreeSet};

use triad_solver::puzzles::PuzzleId;

use crate::tournament::Tournament;
use crate::tournament::pairing::{DRAW, Entrant, WIN};
use crate::{Account, Address, MatchId, Origin, Phase, Seat};

use super::Engine;

impl Engine {
    /// Checks every invariant of the state, in O(state): money is conserved and no account
    /// overdrawn; every escrow holds exactly the stakes of a live match; the registry of
    /// active matches agrees with the matches (one per address); the queue holds only
    /// waiting queue matches; the deadline index holds exactly the clock deadline of each
    /// live match, and the index of open challenges exactly the waiting challenges; nobody
    /// won more games than they played; the puzzle records count every rated attempt once
    /// for its player and once for its puzzle.
    ///
    /// # Errors
    /// A description of the first broken invariant.
    pub fn audit(&self) -> Result<(), String> {
        self.ledger.audit()?;
        // Every key's time lies after the floor (an event under every key clears them) and
        // at or before the latest event's.
        if let Some((key, &ms)) = self
            .key_ms
            .iter()
            .find(|&(_, &ms)| ms < self.floor_ms || ms > self.clock_ms)
        {
            return Err(format!(
                "{key:?}'s time {ms} is outside {}..={}",
                self.floor_ms, self.clock_ms
            ));
        }
        for (&address, &id) in &self.active {
            let m = self
                .matches
                .get(&id)
                .ok_or(format!("{address:?} active in a forgotten match {id}"))?;
            if !self.live.contains(&id) || !m.participants().contains(&address) {
                return Err(format!(
                    "{address:?} registered in match {id}, which does not hold them"
                ));
            }
        }
        for &id in &self.live {
            let m = self
                .matches
                .get(&id)
                .ok_or(format!("live match {id} is missing"))?;
            if m.phase == Phase::Finished || m.result.is_some() {
                return Err(format!("live match {id} has finished"));
            }
            for address in m.participants() {
                if self.active.get(&address) != Some(&id) {
                    return Err(format!(
                        "match {id} holds {address:?}, the registry does not say so"
                    ));
                }
            }
            let staked = match m.seats {
                Some(seats) => seats.iter().filter(|s| s.address().is_some()).count() as u128,
                None => 1,
            };
            let escrow = self.ledger.balance(Account::Escrow(id));
            let stakes = m.stake.checked_mul(staked);
            if stakes != Some(escrow) {
                return Err(format!(
                    "match {id} escrows {escrow}, its stakes are {staked} x {}",
                    m.stake
                ));
            }
        }
        let deadlines: BTreeSet<(u64, MatchId)> = self
            .live
            .iter()
            .filter_map(|&id| Some((self.indexed_deadline(id)?, id)))
            .collect();
        if let Some(&(at_ms, id)) = deadlines.difference(&self.deadlines).next() {
            return Err(format!(
                "the deadline index misses match {id}, due at {at_ms}"
            ));
        }
        if let Some(&(at_ms, id)) = self.deadlines.difference(&deadlines).next() {
            return Err(format!(
                "the deadline index holds match {id} at {at_ms}, which is not its live deadline"
            ));
        }
        let challenges_to: BTreeSet<(Address, MatchId)> = self
            .live
            .iter()
            .filter_map(|&id| Some((self.indexed_challenge(id)?, id)))
            .collect();
        if let Some(&(opponent, id)) = challenges_to.difference(&self.challenges_to).next() {
            return Err(format!(
                "the challenge index misses match {id}, open to {opponent:?}"
            ));
        }
        if let Some(&(opponent, id)) = self.challenges_to.difference(&challenges_to).next() {
            return Err(format!(
                "the challenge index holds match {id} for {opponent:?}, which is not an open challenge to them"
            ));
        }
        for (account, _) in self.ledger.accounts() {
            if let Account::Escrow(id) = account
                && !self.live.contains(&id)
            {
                return Err(format!(
                    "money left in the escrow of match {id}, which is over"
                ));
            }
        }
        for (&(game, stake), queue) in &self.queue {
            for id in queue {
                let m = &self.matches[id];
                let ok = m.phase == Phase::Waiting
                    && m.origin == Origin::Queue
                    && (m.game(), m.stake) == (game, stake);
                if !ok {
                    return Err(format!("match {id} is queued but not waiting there"));
                }
            }
        }
        for (address, s) in &self.stats {
            if s.wins > s.games || s.draws > s.games {
                return Err(format!("{address:?} won or drew more games than played"));
            }
        }
        self.audit_puzzles()?;
        self.audit_tournaments()
    }

    /// Every tournament's pool holds exactly its fees while it is open and nothing after;
    /// the open set is the open tournaments; every game being played is a live match of the
    /// tournament's between its pairing's entrants, and nobody plays two at once; every
    /// game is on both players' records; and the Swiss scores sum to the games played
    /// (each game gives out two points, each bye two).
    fn audit_tournaments(&self) -> Result<(), String> {
        for (account, balance) in self.ledger.accounts() {
            // A forgotten tournament (ended, archived) has paid out or refunded its pool.
            if let Account::Pool(id) = account
                && self.tournaments.get(&id).map_or(0, Tournament::pool) != balance
            {
                return Err(format!(
                    "tournament {id}'s pool holds {balance}, not its fees"
                ));
            }
        }
        for &(ended_ms, id) in &self.ended_tournaments {
            if self.tournaments.get(&id).and_then(|t| t.ended_ms) != Some(ended_ms) {
                return Err(format!(
                    "tournament {id} is kept to be forgotten but did not end at {ended_ms}"
                ));
            }
        }
        for (&id, t) in &self.tournaments {
            if t.phase.is_open() != self.open_tournaments.contains(&id) {
                return Err(format!(
                    "tournament {id} is {} but the open set says otherwise",
                    t.phase.name()
                ));
            }
            let pool = self.ledger.balance(Account::Pool(id));
            if pool != t.pool() {
                return Err(format!(
                    "tournament {id}'s pool holds {pool}, its fees are {}",
                    t.pool()
                ));
            }
            let mut seated = BTreeSet::new();
            for (&match_id, p) in &t.playing {
                let m = self
                    .matches
                    .get(&match_id)
                    .filter(|_| self.live.contains(&match_id))
                    .ok_or(format!(
                        "tournament {id} plays match {match_id}, which is not live"
                    ))?;
                let seats = [p.first, p.second].map(|e| Seat::Human(t.info(e).address));
                if !matches!(m.origin, Origin::Tournament { tournament, .. } if tournament == id)
                    || m.seats != Some(seats)
                {
                    return Err(format!("match {match_id} is not tournament {id}'s pairing"));
                }
                if !seated.insert(p.first) || !seated.insert(p.second) {
                    return Err(format!(
                        "an entrant of tournament {id} plays two games at once"
                    ));
                }
            }
            let mut games: BTreeMap<(Entrant, Entrant), i64> = BTreeMap::new();
            let (mut points, mut played, mut byes) = (0u64, 0u64, 0u64);
            for (e, r) in (0..).zip(&t.records) {
                for g in &r.games {
                    *games
                        .entry((e.min(g.opponent), e.max(g.opponent)))
                        .or_default() += if e < g.opponent { 1 } else { -1 };
                }
                points += u64::from(r.swiss_score());
                played += r.games.len() as u64;
                byes += u64::from(r.byes);
            }
            if let Some(((a, b), _)) = games.iter().find(|(_, n)| **n != 0) {
                return Err(format!(
                    "tournament {id}: entrants {a} and {b} have different records of their games"
                ));
            }
            if points != played * u64::from(DRAW) + byes * u64::from(WIN) {
                return Err(format!(
                    "tournament {id}'s scores sum to {points}, not the games and byes it gave out"
                ));
            }
        }
        Ok(())
    }

    /// Every rated attempt is counted once for its player and once for its puzzle, and
    /// nobody, player or puzzle, has more solves than attempts.
    fn audit_puzzles(&self) -> Result<(), String> {
        let mut by_player: BTreeMap<Address, u32> = BTreeMap::new();
        let mut by_puzzle: BTreeMap<PuzzleId, u32> = BTreeMap::new();
        for &(address, puzzle) in &self.rated_attempts {
            *by_player.entry(address).or_default() += 1;
            *by_puzzle.entry(puzzle).or_default() += 1;
        }
        for (address, record) in &self.puzzlers {
            if record.solved > record.attempts {
                return Err(format!("{address:?} solved more puzzles than attempted"));
            }
            if by_player.remove(address) != Some(record.attempts) {
                return Err(format!(
                    "{address:?} has {} rated puzzle attempts on record, not the ones made",
                    record.attempts
                ));
            }
        }
        for (puzzle, record) in &self.puzzles {
            if record.solved > record.attempts {
                return Err(format!("puzzle {puzzle} solved more often than attempted"));
            }
            if by_puzzle.remove(puzzle) != Some(record.attempts) {
                return Err(format!(
                    "puzzle {puzzle} has {} rated attempts on record, not the ones made",
                    record.attempts
                ));
            }
        }
        if let Some((address, _)) = by_player.first_key_value() {
            return Err(format!(
                "{address:?} made rated puzzle attempts with no record"
            ));
        }
        if let Some((puzzle, _)) = by_puzzle.first_key_value() {
            return Err(format!("puzzle {puzzle} was attempted with no record"));
        }
        Ok(())
    }
}
