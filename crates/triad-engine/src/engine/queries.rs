//! Read-only queries of the state.

use std::collections::VecDeque;

use triad_rules::GameKind;

use triad_solver::puzzles::PuzzleId;

use crate::tournament::{Tournament, TournamentId};
use crate::{Account, Address, Config, Ledger, Match, MatchId, Phase, PlayerStats, PuzzleRecord};

use super::{Engine, Ranking};

impl Engine {
    /// A tournament in memory: open, or ended within the retention window (or before the
    /// store archived tournaments, [`Config::tournaments_archived_from_seq`]); the store's
    /// archive holds every tournament that ended since.
    #[must_use]
    pub fn tournament(&self, id: TournamentId) -> Option<&Tournament> {
        self.tournaments.get(&id)
    }

    /// The tournaments in memory ([`Engine::tournament`]), newest first.
    pub fn tournaments(&self) -> impl Iterator<Item = &Tournament> {
        self.tournaments.values().rev()
    }

    /// When the clock next moves tournament `id` on (its start, an arena's wave or end, a
    /// Swiss event's next round or end); `None` when it waits on its games or is over.
    #[must_use]
    pub fn tournament_next_ms(&self, id: TournamentId) -> Option<u64> {
        self.tournaments
            .get(&id)
            .and_then(|t| self.tournament_due_ms(t))
    }

    /// The tournaments upcoming or running, in id order.
    pub fn open_tournaments(&self) -> impl Iterator<Item = &Tournament> {
        self.open_tournaments.iter().map(|id| &self.tournaments[id])
    }

    /// The settings.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The sequence number the next event will get.
    #[must_use]
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The time of the latest event, under any key.
    #[must_use]
    pub fn clock_ms(&self) -> u64 {
        self.clock_ms
    }

    /// The smallest id of a match that can still have an event: the oldest match in
    /// memory, or the smallest next id of the stripes when that is smaller. A match leaves
    /// memory only for good (finished and past `finished_retention_ms`; a replay forgets
    /// at the same events), and each stripe's new matches take larger ids than its
    /// last, so no event after this point concerns a smaller id.
    #[must_use]
    pub fn oldest_match_id(&self) -> MatchId {
        let next = (0..self.config.match_id_stripes.get())
            .map(|stripe| self.next_in_stripe(stripe))
            .min()
            .expect("at least one stripe");
        self.matches
            .keys()
            .next()
            .map_or(next, |&oldest| oldest.min(next))
    }

    /// A match by id.
    #[must_use]
    pub fn match_(&self, id: MatchId) -> Option<&Match> {
        self.matches.get(&id)
    }

    /// Every match in memory, oldest first: the live ones and those finished within
    /// `finished_retention_ms` (older ones live only in the event log).
    pub fn matches(&self) -> impl Iterator<Item = &Match> {
        self.matches.values()
    }

    /// How many matches are not yet finished, in O(1).
    #[must_use]
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    /// The matches not yet finished.
    pub fn live_matches(&self) -> impl Iterator<Item = &Match> {
        self.live.iter().map(|id| &self.matches[id])
    }

    /// The live matches with ids below `before`, newest first (a range of the live set: a
    /// page of them costs O(log n + the page)).
    pub fn live_matches_before(&self, before: MatchId) -> impl Iterator<Item = &Match> {
        self.live.range(..before).rev().map(|id| &self.matches[id])
    }

    /// An address's active match (one at most, as in the Sui contract's registry).
    #[must_use]
    pub fn active_match(&self, address: Address) -> Option<MatchId> {
        self.active.get(&address).copied()
    }

    /// Open challenges addressed to `address`, by match id, from the index of open
    /// challenges (in O(log n + their number), not a scan of the live matches).
    pub fn incoming_challenges(&self, address: Address) -> impl Iterator<Item = &Match> {
        self.challenges_to
            .range((address, MatchId(0))..=(address, MatchId(u64::MAX)))
            .map(|(_, id)| &self.matches[id])
    }

    /// `address`'s own open challenge (none or one): a challenger has one active match,
    /// and an open challenge is its challenger's active match, so it is read from the
    /// registry of active matches in O(log n).
    pub fn outgoing_challenges(&self, address: Address) -> impl Iterator<Item = &Match> {
        self.active
            .get(&address)
            .map(|id| &self.matches[id])
            .filter(|m| {
                m.phase == Phase::Waiting && m.challenge.is_some_and(|c| c.challenger == address)
            })
            .into_iter()
    }

    /// The live matches that concern `address` (`Match::concerned`: its players and a
    /// challenge's opponent), newest first, from the indexes in O(log n + their number):
    /// its active match, which holds everything it plays or challenged with, and the open
    /// challenges addressed to it. A finished match concerns nobody here.
    pub fn live_matches_concerning(&self, address: Address) -> impl Iterator<Item = &Match> {
        let active = self.active_match(address);
        let incoming = self
            .incoming_challenges(address)
            .map(|m| m.id)
            .filter(|&id| Some(id) != active);
        let mut ids: Vec<MatchId> = active.into_iter().chain(incoming).collect();
        ids.sort_unstable_by_key(|&id| std::cmp::Reverse(id));
        ids.into_iter().map(|id| &self.matches[&id])
    }

    /// The ledger.
    #[must_use]
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// A player's spendable balance.
    #[must_use]
    pub fn balance(&self, address: Address) -> u128 {
        self.ledger.balance(Account::Player(address))
    }

    /// The house reserve.
    #[must_use]
    pub fn reserve(&self) -> u128 {
        self.ledger.balance(Account::Reserve)
    }

    /// A player's wins, games and rating (zeros and the starting rating for a newcomer).
    #[must_use]
    pub fn stats(&self, address: Address) -> PlayerStats {
        self.stats.get(&address).copied().unwrap_or_default()
    }

    /// A player's puzzle record: the default (1500, no attempts) before their first rated
    /// attempt.
    #[must_use]
    pub fn puzzle_record_of_player(&self, address: Address) -> PuzzleRecord {
        self.puzzlers.get(&address).copied().unwrap_or_default()
    }

    /// A puzzle's record: the default before its first rated attempt.
    #[must_use]
    pub fn puzzle_record(&self, puzzle: PuzzleId) -> PuzzleRecord {
        self.puzzles.get(&puzzle).copied().unwrap_or_default()
    }

    /// Whether the player's attempt at the puzzle was already rated (later ones are not).
    #[must_use]
    pub fn puzzle_rated(&self, address: Address, puzzle: PuzzleId) -> bool {
        self.rated_attempts.contains(&(address, puzzle))
    }

    /// Every player with a record.
    pub fn all_stats(&self) -> impl Iterator<Item = (Address, &PlayerStats)> {
        self.stats.iter().map(|(a, s)| (*a, s))
    }

    /// The top `limit` players by `ranking` (ties broken by address, for a stable order).
    #[must_use]
    pub fn leaderboard(&self, ranking: Ranking, limit: usize) -> Vec<(Address, PlayerStats)> {
        let mut rows: Vec<(Address, PlayerStats)> =
            self.stats.iter().map(|(a, s)| (*a, *s)).collect();
        match ranking {
            Ranking::Rating => rows.sort_by(|a, b| {
                b.1.rating
                    .rating
                    .total_cmp(&a.1.rating.rating)
                    .then(a.0.cmp(&b.0))
            }),
            Ranking::Wins => rows.sort_by(|a, b| {
                b.1.wins
                    .cmp(&a.1.wins)
                    .then(a.1.games.cmp(&b.1.games))
                    .then(a.0.cmp(&b.0))
            }),
            Ranking::TournamentWins => {
                rows.retain(|(_, s)| s.tournament_wins > 0);
                rows.sort_by(|a, b| {
                    b.1.tournament_wins
                        .cmp(&a.1.tournament_wins)
                        .then(b.1.wins.cmp(&a.1.wins))
                        .then(a.0.cmp(&b.0))
                });
            }
        }
        rows.truncate(limit);
        rows
    }

    /// How many players wait in the queue for a game and stake.
    #[must_use]
    pub fn queue_len(&self, game: GameKind, stake: u128) -> usize {
        self.queue.get(&(game, stake)).map_or(0, VecDeque::len)
    }

    /// The earliest pending deadline, if any: of a live match, or of a tournament's start,
    /// round, wave or end.
    #[must_use]
    pub fn next_deadline_ms(&self) -> Option<u64> {
        let matches = self.deadlines.first().map(|&(at_ms, _)| at_ms);
        let tournaments = self
            .open_tournaments()
            .filter_map(|t| self.tournament_due_ms(t));
        matches.into_iter().chain(tournaments).min()
    }

    /// When the server should next send a `Tick`: at the next deadline, or the next sweep
    /// of memory ([`next_sweep_ms`](Engine::next_sweep_ms)), whichever comes first.
    #[must_use]
    pub fn next_tick_ms(&self) -> Option<u64> {
        self.next_deadline_ms()
            .into_iter()
            .chain(self.next_sweep_ms())
            .min()
    }
}
