//! Tournaments: arenas and Swiss events, as engine state.
//!
//! A tournament is a fold of its events like a match is: the engine's commands
//! (`CreateTournament`, `JoinTournament`, …) check and emit, [`Engine::apply`] folds, and
//! the clock's `Tick` starts a tournament at its time, pairs its rounds (Swiss) or its
//! waves (arena), and ends it. Its games are ordinary matches ([`Origin::Tournament`]),
//! free of stakes: the money of a staked tournament is its entry fees, held in its pool
//! ([`Account::Pool`]) until the prizes are paid by final rank, or refunded in full if it
//! is cancelled. Who meets whom is the pure [`pairing`] code's answer.
//!
//! [`Engine::apply`]: crate::Engine::apply
//! [`Origin::Tournament`]: crate::Origin::Tournament
//! [`Account::Pool`]: crate::Account::Pool

pub mod pairing;

use core::fmt;
use core::str::FromStr;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use triad_rules::GameKind;

use crate::{Address, Bps, MatchId};

use pairing::{Entrant, Outcome, Pairing, Record, Standing};

/// A tournament's id, assigned by the engine in creation order starting at 1.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TournamentId(pub u64);

impl fmt::Display for TournamentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for TournamentId {
    type Err = core::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(TournamentId)
    }
}

/// How a tournament is played.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Format {
    /// Lichess's arena: for `duration_ms` from the start, a player who is free is paired
    /// again at once (at the clock's next tick) with a free player of similar score.
    /// Games still being played when the time is up do not count.
    Arena {
        /// How long it runs.
        duration_ms: u64,
    },
    /// A Swiss event: `rounds` rounds; everyone present plays each round, paired by score.
    Swiss {
        /// How many rounds.
        rounds: u8,
    },
}

/// Who may enter.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Entry {
    /// People only: no account marked as a bot.
    People,
    /// Bots only.
    Bots,
    /// People and bots; every bot is shown as one.
    Everyone,
}

impl Entry {
    /// Whether a player (a bot or not) may enter.
    #[must_use]
    pub fn admits(self, bot: bool) -> bool {
        match self {
            Entry::People => !bot,
            Entry::Bots => bot,
            Entry::Everyone => true,
        }
    }
}

/// What the organizer chose. Checked by [`TournamentSpec::check`] when it is created.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TournamentSpec {
    /// Its name, as shown: 1 to [`TournamentSpec::MAX_NAME_CHARS`] characters, no control
    /// characters.
    pub name: String,
    /// Which game.
    pub game: GameKind,
    /// Arena or Swiss.
    pub format: Format,
    /// When it starts (the clock's first tick from then).
    pub starts_at_ms: u64,
    /// Who may enter.
    pub entry: Entry,
    /// Each entrant's fee in minor units, into the pool (0 for a free tournament).
    #[serde(with = "crate::amount::text")]
    pub entry_fee: u128,
    /// The prizes: `prizes_bps[r]` is the share of the pool paid to rank `r + 1`. What the
    /// shares leave (and the rounding) goes to the house reserve. At most
    /// [`TournamentSpec::MAX_PRIZES`] places, summing to at most 100%.
    #[serde(default)]
    pub prizes_bps: Vec<Bps>,
    /// The most entrants it takes.
    pub max_players: u32,
}

impl TournamentSpec {
    /// The longest name, in characters.
    pub const MAX_NAME_CHARS: usize = 60;
    /// The most rounds of a Swiss event.
    pub const MAX_ROUNDS: u8 = 30;
    /// The most prize places.
    pub const MAX_PRIZES: usize = 10;

    /// The fewest entrants it starts with: two, and at least one per prize place, so every
    /// prize has a player. With fewer, it is cancelled at its start and every fee refunded.
    #[must_use]
    pub fn min_players(&self) -> u32 {
        u32::try_from(self.prizes_bps.len()).map_or(u32::MAX, |places| places.max(2))
    }

    /// Checks the spec against the rules and the time now; on failure, what is wrong, for
    /// the error message.
    ///
    /// # Errors
    /// What to change, as a phrase ("the name is empty").
    pub fn check(&self, rules: &TournamentRules, now_ms: u64) -> Result<(), &'static str> {
        let chars = self.name.chars().count();
        if self.name.trim().is_empty() {
            return Err("the name is empty");
        }
        if chars > Self::MAX_NAME_CHARS {
            return Err("the name is longer than 60 characters");
        }
        if self.name.chars().any(char::is_control) {
            return Err("the name has a control character");
        }
        if self.starts_at_ms < now_ms {
            return Err("the start time has passed");
        }
        if self.starts_at_ms - now_ms > rules.max_lead_ms {
            return Err("the start is too far ahead");
        }
        match self.format {
            Format::Arena { duration_ms } => {
                if !(rules.min_arena_ms..=rules.max_arena_ms).contains(&duration_ms) {
                    return Err("the arena's duration is out of bounds");
                }
            }
            Format::Swiss { rounds } => {
                if rounds == 0 || rounds > Self::MAX_ROUNDS {
                    return Err("a Swiss event has 1 to 30 rounds");
                }
            }
        }
        if self.max_players < 2 || self.max_players > rules.max_players {
            return Err("the player limit is out of bounds");
        }
        if self.prizes_bps.len() > Self::MAX_PRIZES {
            return Err("there are more than 10 prize places");
        }
        if self.min_players() > self.max_players {
            return Err("there are more prize places than players");
        }
        if self.prizes_bps.iter().map(|&b| u64::from(b)).sum::<u64>() > 10_000 {
            return Err("the prizes add up to more than 100% of the pool");
        }
        if self.entry_fee == 0 && self.prizes_bps.iter().any(|&b| b > 0) {
            return Err("a free tournament has no pool to share out");
        }
        Ok(())
    }
}

/// The engine's tournament settings (part of [`Config`](crate::Config)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TournamentRules {
    /// Whether any player may create free tournaments (the owner always may, and only
    /// the owner may create staked ones).
    pub players_may_create: bool,
    /// The most tournaments upcoming or running at once, over everyone.
    pub max_open: u32,
    /// The most upcoming or running tournaments one player (not the owner) has created.
    pub max_open_per_player: u32,
    /// The largest field a tournament may have.
    pub max_players: u32,
    /// The shortest arena.
    pub min_arena_ms: u64,
    /// The longest arena.
    pub max_arena_ms: u64,
    /// How far ahead a tournament may be scheduled.
    pub max_lead_ms: u64,
    /// The pause between a Swiss round's last game and the next round.
    pub round_gap_ms: u64,
    /// The least time between two arena waves, so that players who finish at about the
    /// same time are paired together, by score, rather than one by one as they come.
    pub wave_gap_ms: u64,
}

impl Default for TournamentRules {
    fn default() -> Self {
        TournamentRules {
            players_may_create: false,
            max_open: 100,
            max_open_per_player: 2,
            max_players: 10_000,
            min_arena_ms: 60_000,
            max_arena_ms: 24 * 60 * 60 * 1000,
            max_lead_ms: 30 * 24 * 60 * 60 * 1000,
            round_gap_ms: 10_000,
            wave_gap_ms: 2_000,
        }
    }
}

/// Where a tournament is in its life.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TournamentPhase {
    /// Taking entries; not started.
    Upcoming,
    /// Started: pairing and playing.
    Running,
    /// Over, with its final standings (and prizes paid).
    Finished,
    /// Called off; every fee was refunded.
    Cancelled,
}

impl TournamentPhase {
    /// The stable snake_case name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TournamentPhase::Upcoming => "upcoming",
            TournamentPhase::Running => "running",
            TournamentPhase::Finished => "finished",
            TournamentPhase::Cancelled => "cancelled",
        }
    }

    /// Whether it is upcoming or running.
    #[must_use]
    pub fn is_open(self) -> bool {
        matches!(self, TournamentPhase::Upcoming | TournamentPhase::Running)
    }
}

/// Where an entrant stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntrantStatus {
    /// In, and paired when free.
    Active,
    /// In, but not paired until they resume.
    Paused,
    /// Left after the start: keeps their score, not paired unless they join again.
    Withdrawn,
    /// Left before the start: refunded, and out of the standings unless they join again.
    Refunded,
}

/// One entrant.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntrantInfo {
    /// Who.
    pub address: Address,
    /// Whether the account is a bot (shown with every pairing and standing).
    pub bot: bool,
    /// Where they stand.
    pub status: EntrantStatus,
}

/// A prize paid at the end.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prize {
    /// The final rank, from 1.
    pub rank: u32,
    /// Who.
    pub address: Address,
    /// How much, in minor units.
    #[serde(with = "crate::amount::text")]
    pub amount: u128,
}

/// A tournament and everything about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tournament {
    /// Its id.
    pub id: TournamentId,
    /// What the organizer chose.
    pub spec: TournamentSpec,
    /// Who created it.
    pub organizer: Address,
    /// When it was created.
    pub created_ms: u64,
    /// Where it is in its life.
    pub phase: TournamentPhase,
    /// When it started.
    pub started_ms: Option<u64>,
    /// When it finished or was cancelled.
    pub ended_ms: Option<u64>,
    /// The entrants, by entrant number (the order they first joined).
    pub entrants: Vec<EntrantInfo>,
    /// Each entrant's games, byes and seeding rating, by entrant number.
    pub records: Vec<Record>,
    /// Entrant numbers by address.
    by_address: BTreeMap<Address, Entrant>,
    /// The Swiss rounds paired so far, or the arena's pairing waves.
    pub round: u32,
    /// The games being played, with their pairing.
    pub playing: BTreeMap<MatchId, Pairing>,
    /// When the last round was paired or the last game ended: a Swiss round is paired
    /// [`TournamentRules::round_gap_ms`] after this, once no game is being played.
    pub last_change_ms: u64,
    /// When the last round or wave was paired: an arena's next wave comes
    /// [`TournamentRules::wave_gap_ms`] after it at the soonest.
    #[serde(default)]
    pub last_round_ms: u64,
    /// The outages given back while it ran (`ClocksResumed`): an arena ends this much
    /// later than its start and length say.
    #[serde(default)]
    pub resumed_ms: u64,
    /// The prizes paid, by rank, once it has finished.
    pub prizes: Vec<Prize>,
}

impl Tournament {
    /// A new tournament, taking entries.
    #[must_use]
    pub fn new(id: TournamentId, spec: TournamentSpec, organizer: Address, now: u64) -> Self {
        Tournament {
            id,
            spec,
            organizer,
            created_ms: now,
            phase: TournamentPhase::Upcoming,
            started_ms: None,
            ended_ms: None,
            entrants: Vec::new(),
            records: Vec::new(),
            by_address: BTreeMap::new(),
            round: 0,
            playing: BTreeMap::new(),
            last_change_ms: now,
            last_round_ms: now,
            resumed_ms: 0,
            prizes: Vec::new(),
        }
    }

    /// Moves a running tournament's clock later by an outage's length (`ClocksResumed`):
    /// an arena's end, and the times its round and wave gaps run from. An upcoming
    /// tournament keeps the start it announced.
    pub(crate) fn give_back(&mut self, outage_ms: u64) {
        if self.phase == TournamentPhase::Running {
            self.resumed_ms = self.resumed_ms.saturating_add(outage_ms);
            self.last_change_ms = self.last_change_ms.saturating_add(outage_ms);
            self.last_round_ms = self.last_round_ms.saturating_add(outage_ms);
        }
    }

    /// The entrant number of `address`, if they ever entered.
    #[must_use]
    pub fn entrant(&self, address: Address) -> Option<Entrant> {
        self.by_address.get(&address).copied()
    }

    /// Where `address` stands, if they ever entered.
    #[must_use]
    pub fn status_of(&self, address: Address) -> Option<EntrantStatus> {
        self.entrant(address).map(|e| self.info(e).status)
    }

    /// The entrant `e`.
    ///
    /// # Panics
    /// When `e` is not an entrant number of this tournament.
    #[must_use]
    pub fn info(&self, e: Entrant) -> &EntrantInfo {
        &self.entrants[e as usize]
    }

    /// The entrants who are in: every one but those refunded before the start.
    pub fn standing_entrants(&self) -> impl Iterator<Item = Entrant> + '_ {
        (0..)
            .zip(&self.entrants)
            .filter(|(_, i)| i.status != EntrantStatus::Refunded)
            .map(|(e, _)| e)
    }

    /// How many entrants are in (not refunded).
    #[must_use]
    pub fn players(&self) -> u32 {
        u32::try_from(self.standing_entrants().count()).unwrap_or(u32::MAX)
    }

    /// How many fees the pool holds: one per entrant in.
    #[must_use]
    pub fn pool(&self) -> u128 {
        if self.phase.is_open() {
            self.spec.entry_fee * u128::from(self.players())
        } else {
            0
        }
    }

    /// When an arena's time is up.
    #[must_use]
    pub fn ends_at_ms(&self) -> Option<u64> {
        match (self.spec.format, self.started_ms) {
            (Format::Arena { duration_ms }, Some(start)) => Some(
                start
                    .saturating_add(duration_ms)
                    .saturating_add(self.resumed_ms),
            ),
            _ => None,
        }
    }

    /// Whether entrant `e` is in a game of this tournament now.
    #[must_use]
    pub fn is_playing(&self, e: Entrant) -> bool {
        self.playing.values().any(|p| p.first == e || p.second == e)
    }

    /// The standings now: arena or Swiss order, entrants who are in only, ranked from 1.
    #[must_use]
    pub fn standings(&self) -> Vec<Standing> {
        let all = match self.spec.format {
            Format::Arena { .. } => pairing::arena_standings(&self.records),
            Format::Swiss { .. } => pairing::swiss_standings(&self.records),
        };
        (1..)
            .zip(
                all.into_iter().filter(|s| {
                    self.entrants[s.entrant as usize].status != EntrantStatus::Refunded
                }),
            )
            .map(|(rank, s)| Standing { rank, ..s })
            .collect()
    }

    /// The prizes the pool pays for the standings now, by rank: the share of each place
    /// that has a player, rounded down.
    #[must_use]
    pub fn prizes_now(&self) -> Vec<Prize> {
        let pool = self.pool();
        self.standings()
            .iter()
            .zip(&self.spec.prizes_bps)
            .map(|(s, &bps)| Prize {
                rank: s.rank,
                address: self.entrants[s.entrant as usize].address,
                amount: crate::share(pool, bps),
            })
            .filter(|p| p.amount > 0)
            .collect()
    }

    // --- Folding (called by `Engine::apply` only) ---

    /// Enters `address` (or re-enters, keeping their entrant number and record).
    pub(crate) fn join(&mut self, address: Address, bot: bool, rating: u32) {
        match self.by_address.get(&address) {
            Some(&e) => {
                let info = &mut self.entrants[e as usize];
                info.status = EntrantStatus::Active;
                info.bot |= bot;
            }
            None => {
                let e = Entrant::try_from(self.entrants.len()).expect("fields are bounded");
                self.by_address.insert(address, e);
                self.entrants.push(EntrantInfo {
                    address,
                    bot,
                    status: EntrantStatus::Active,
                });
                self.records.push(Record {
                    rating,
                    ..Record::default()
                });
            }
        }
    }

    /// Sets an entrant's status.
    pub(crate) fn set_status(&mut self, address: Address, status: EntrantStatus) {
        let e = self.by_address[&address];
        self.entrants[e as usize].status = status;
    }

    /// Records a finished game of the tournament's: each player's outcome (`winner` is the
    /// pairing's first or second, or neither for a draw).
    pub(crate) fn record(&mut self, id: MatchId, first_won: Option<bool>, now: u64) {
        let Some(p) = self.playing.remove(&id) else {
            return;
        };
        let outcome = match first_won {
            Some(true) => Outcome::Win,
            Some(false) => Outcome::Loss,
            None => Outcome::Draw,
        };
        assert!(
            pairing::record_game(&mut self.records, p, outcome),
            "a pairing is of two entrants"
        );
        self.last_change_ms = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> TournamentSpec {
        TournamentSpec {
            name: "Friday arena".into(),
            game: GameKind::TicTacToe,
            format: Format::Arena {
                duration_ms: 600_000,
            },
            starts_at_ms: 1_000,
            entry: Entry::Everyone,
            entry_fee: 10,
            prizes_bps: vec![5_000, 3_000],
            max_players: 100,
        }
    }

    #[test]
    fn a_spec_is_checked_field_by_field() {
        let rules = TournamentRules::default();
        assert_eq!(spec().check(&rules, 0), Ok(()));
        type Case = (fn(&mut TournamentSpec), &'static str);
        let cases: [Case; 9] = [
            (|s| s.name = "  ".into(), "the name is empty"),
            (
                |s| s.name = "x".repeat(61),
                "the name is longer than 60 characters",
            ),
            (
                |s| s.name = "a\u{7}".into(),
                "the name has a control character",
            ),
            (
                |s| s.format = Format::Swiss { rounds: 0 },
                "a Swiss event has 1 to 30 rounds",
            ),
            (
                |s| s.format = Format::Arena { duration_ms: 1 },
                "the arena's duration is out of bounds",
            ),
            (|s| s.max_players = 1, "the player limit is out of bounds"),
            (
                |s| s.prizes_bps = vec![1; 11],
                "there are more than 10 prize places",
            ),
            (
                |s| s.prizes_bps = vec![6_000, 5_000],
                "the prizes add up to more than 100% of the pool",
            ),
            (
                |s| s.entry_fee = 0,
                "a free tournament has no pool to share out",
            ),
        ];
        for (change, why) in cases {
            let mut s = spec();
            change(&mut s);
            assert_eq!(s.check(&rules, 0), Err(why));
        }
        assert_eq!(
            spec().check(&rules, 1_001),
            Err("the start time has passed")
        );
        let mut few = spec();
        few.max_players = 2;
        few.prizes_bps = vec![3_000, 3_000, 3_000];
        assert_eq!(
            few.check(&rules, 0),
            Err("there are more prize places than players")
        );
    }

    #[test]
    fn entry_admits_by_kind() {
        assert!(Entry::People.admits(false) && !Entry::People.admits(true));
        assert!(Entry::Bots.admits(true) && !Entry::Bots.admits(false));
        assert!(Entry::Everyone.admits(true) && Entry::Everyone.admits(false));
    }
}
