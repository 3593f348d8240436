//! Tournament pairing, scoring and standings: pure functions of the players' records.
//!
//! Nothing here keeps state, reads a clock or draws a random number: the tournament's engine
//! state holds each entrant's [`Record`] and asks these functions for the next pairings and
//! the standings. Equal inputs give equal outputs, no input panics, and an entrant number
//! that does not index the `records` slice (in `present`, `waiting` or a game's opponent) is
//! ignored: it is never paired, and as an opponent it adds nothing to a tie-break.
//!
//! # Points
//!
//! Points are chess points doubled so they stay integers: [`WIN`] (2) for a win or a Swiss
//! bye, [`DRAW`] (1) for a draw, 0 for a loss.
//!
//! # Swiss ([`swiss`])
//!
//! Every present player plays every round, as in FIDE's Dutch system, simplified:
//!
//! - Players are ranked by Swiss score, then rating, then entrant number.
//! - With an odd count one player gets the **bye** (worth a win): the lowest-ranked who has
//!   not had one; if all have, the one with the fewest byes, lowest-ranked first. It passes
//!   to the next in that order only when the rest could not otherwise avoid a rematch.
//! - Players of equal score form a **score group**, paired top half against bottom half
//!   (the first of the top half meets the first of the bottom half, and so on); a player
//!   left over, or who cannot be paired in the group, floats down to the next group.
//! - No two players meet twice when the whole round can avoid it. The pairing is a
//!   depth-first search in that order of preference, the highest-ranked unpaired player
//!   first, which backtracks when a choice leaves the rest unpairable. It is complete (it
//!   finds a rematch-free round whenever one exists) within [`SEARCH_STEPS`] candidate
//!   looks; past that (only contrived histories get there) it keeps the deepest
//!   rematch-free start it found and completes it greedily, a rematch only where the
//!   next player has no one else left.
//! - Colours: of two paired players, the one who has moved first fewer times moves first;
//!   if equal, the one who moved second in their last game; if still equal, the
//!   higher-ranked. The search first looks for a round in which nobody would move first
//!   more than ⌈g/2⌉ + 1 times after g games (FIDE's absolute colour preference, in
//!   spirit), even if a player floats down for it; for each choice of the bye it gives
//!   that up before it gives up avoiding rematches.
//!
//! # Arena ([`arena`])
//!
//! Lichess's arenas: a player who is free is paired again at once. The players waiting
//! are ranked by arena score, then rating, then entrant number, and each is paired with
//! the nearest below them in that order who was not their last opponent (nor had them as
//! their last opponent), when the wave can avoid that; with an odd count the lowest-ranked
//! player whose leaving-out lets everyone else be paired waits for the next wave. Colours
//! as in Swiss.
//!
//! Arena scores have Lichess's streaks ([`Record::arena_score`]): after two wins in a row a
//! player is **on fire** and each game counts double until one that is not a win.
//!
//! # Standings
//!
//! Swiss standings ([`swiss_standings`]) order by score, then **Buchholz** (the sum of the
//! opponents' scores), then **Sonneborn–Berger** (the scores of the opponents beaten, plus
//! half of those drawn; here doubled), then rating, then entrant: FIDE's usual tie-breaks.
//! Arena standings ([`arena_standings`]) order by arena score, then wins, then rating,
//! then entrant, as Lichess's do. Ranks are 1..=n without ties.
//!
//! ```
//! use triad_engine::tournament::pairing::{Game, Outcome, Record, swiss, swiss_standings};
//!
//! // Five players, rated 1900 down to 1500, before the first round.
//! let mut records: Vec<Record> =
//!     (0..5).map(|i| Record { rating: 1900 - 100 * i, ..Record::default() }).collect();
//! let round = swiss(&records, &[0, 1, 2, 3, 4]);
//! assert_eq!(round.bye, Some(4)); // the lowest-ranked sits out, for a win's points
//! let boards: Vec<(u32, u32)> = round.pairings.iter().map(|p| (p.first, p.second)).collect();
//! assert_eq!(boards, [(0, 2), (1, 3)]); // top half against bottom half
//!
//! // Both higher-rated players win; the bye counts as a win.
//! for (winner, loser, first) in [(0, 2, true), (1, 3, true)] {
//!     records[winner].games.push(Game { opponent: loser as u32, first, outcome: Outcome::Win });
//!     records[loser].games.push(Game { opponent: winner as u32, first: !first, outcome: Outcome::Loss });
//! }
//! records[4].byes += 1;
//! let next = swiss(&records, &[0, 1, 2, 3, 4]);
//! // Of those without a bye, 3 is ranked lowest. The score group 0, 1, 4 pairs 0 with 1
//! // (0 moves first: equal firsts, both moved first last game, 0 ranked higher), and 4
//! // floats down to 2 (who moves first, having moved second last game).
//! assert_eq!(next.bye, Some(3));
//! let boards: Vec<(u32, u32)> = next.pairings.iter().map(|p| (p.first, p.second)).collect();
//! assert_eq!(boards, [(0, 1), (2, 4)]);
//!
//! // 0, 1 and 4 are equal on score and on tie-breaks (their opponents have no points), so
//! // their ratings decide; 2 and 3 the same.
//! let table = swiss_standings(&records);
//! assert_eq!(table.iter().map(|s| s.entrant).collect::<Vec<_>>(), [0, 1, 4, 2, 3]);
//! assert_eq!(table[3].tie_breaks.buchholz, 2); // 2 met 0, who has 2 points
//! ```

use serde::{Deserialize, Serialize};
use std::cmp::{Ordering, Reverse};

/// A player in a tournament, by their entry number (the order they joined, from 0).
pub type Entrant = u32;

/// A game's outcome for one player.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The player won.
    Win,
    /// Neither won.
    Draw,
    /// The player lost.
    Loss,
}

/// One pairing: `first` moves first.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Pairing {
    /// The entrant who moves first.
    pub first: Entrant,
    /// The entrant who moves second.
    pub second: Entrant,
}

/// Points for a win (and for a Swiss bye): chess points doubled, so they stay integers.
pub const WIN: u32 = 2;
/// Points for a draw.
pub const DRAW: u32 = 1;

/// The most candidate opponents one [`swiss`] or [`arena`] call looks at in its search
/// for a round without rematches (or repeated last opponents). A round at 10,000 players
/// without conflicts takes about as many looks as there are players; only contrived
/// histories need more, and past this bound the call completes the best start it found.
pub const SEARCH_STEPS: u64 = 400_000;

/// One game in a player's record.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Game {
    /// Who the player met.
    pub opponent: Entrant,
    /// Whether this player moved first.
    pub first: bool,
    /// The game's outcome for this player.
    pub outcome: Outcome,
}

/// What the pairing knows of one player.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The player's games, in the order played.
    pub games: Vec<Game>,
    /// Swiss byes received (each worth [`WIN`] points).
    pub byes: u32,
    /// The player's rating, rounded: orders players of equal score.
    pub rating: u32,
}

impl Record {
    /// Swiss score: [`WIN`] per win and per bye, [`DRAW`] per draw (saturating at
    /// `u32::MAX`, which no real tournament nears).
    pub fn swiss_score(&self) -> u32 {
        self.games
            .iter()
            .fold(self.byes.saturating_mul(WIN), |score, game| {
                score.saturating_add(points(game.outcome))
            })
    }

    /// Arena score with Lichess's streaks. Games count in the order played; each is worth
    /// its points ([`WIN`], [`DRAW`] or 0), doubled when the player was on fire as it
    /// began. A player is on fire after two wins in a row, and stays so while they win: the
    /// third win in a row and every win after it count 4. The first game that is not a win
    /// still counts double (a draw 2, a loss 0) and ends the streak; the next win counts 2
    /// again. So W W W D W L W W W scores 2 + 2 + 4 + 2 + 2 + 0 + 2 + 2 + 4 = 20. Byes
    /// play no part (arenas have none). Saturates at `u32::MAX`.
    pub fn arena_score(&self) -> u32 {
        let mut wins_in_a_row = 0u32;
        let mut score = 0u32;
        for game in &self.games {
            let factor = if wins_in_a_row >= 2 { 2 } else { 1 };
            score = score.saturating_add(points(game.outcome) * factor);
            wins_in_a_row = match game.outcome {
                Outcome::Win => wins_in_a_row.saturating_add(1),
                Outcome::Draw | Outcome::Loss => 0,
            };
        }
        score
    }

    /// Whether the player is on fire now (their last two games or more were wins, so their
    /// next game counts double).
    pub fn on_fire(&self) -> bool {
        matches!(
            self.games.as_slice(),
            [.., a, b] if a.outcome == Outcome::Win && b.outcome == Outcome::Win
        )
    }

    /// How many times this player moved first, and second.
    pub fn sides(&self) -> (u32, u32) {
        self.games.iter().fold((0u32, 0u32), |(first, second), g| {
            if g.first {
                (first.saturating_add(1), second)
            } else {
                (first, second.saturating_add(1))
            }
        })
    }

    /// How many games the player won.
    pub fn wins(&self) -> u32 {
        let wins = self.games.iter().filter(|g| g.outcome == Outcome::Win);
        u32::try_from(wins.count()).unwrap_or(u32::MAX)
    }
}

impl Outcome {
    /// The same game's outcome for the other player.
    pub fn reversed(self) -> Outcome {
        match self {
            Outcome::Win => Outcome::Loss,
            Outcome::Draw => Outcome::Draw,
            Outcome::Loss => Outcome::Win,
        }
    }
}

/// Adds a finished game to both players' records: `outcome` is the first mover's. Returns
/// false, changing nothing, when either entrant does not index `records` or they are the
/// same.
pub fn record_game(records: &mut [Record], pairing: Pairing, outcome: Outcome) -> bool {
    let (Ok(first), Ok(second)) = (
        usize::try_from(pairing.first),
        usize::try_from(pairing.second),
    ) else {
        return false;
    };
    if first == second || first >= records.len() || second >= records.len() {
        return false;
    }
    records[first].games.push(Game {
        opponent: pairing.second,
        first: true,
        outcome,
    });
    records[second].games.push(Game {
        opponent: pairing.first,
        first: false,
        outcome: outcome.reversed(),
    });
    true
}

fn points(outcome: Outcome) -> u32 {
    match outcome {
        Outcome::Win => WIN,
        Outcome::Draw => DRAW,
        Outcome::Loss => 0,
    }
}

/// One Swiss round's pairings: every present player is in exactly one pairing, or is the bye.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// The games, the highest-ranked player's first.
    pub pairings: Vec<Pairing>,
    /// The player who sits out this round for [`WIN`] points, when the count is odd.
    pub bye: Option<Entrant>,
}

/// Pairs a Swiss round. `records[e]` is entrant `e`'s record (indexed by Entrant; opponents in
/// `games` are entrant numbers into the same slice); `present` lists the entrants to pair this
/// round (the others are withdrawn or paused), in any order, without duplicates.
///
/// Rules: players are ranked by (swiss score desc, rating desc, entrant asc); equal scores are
/// paired together as far as possible (score groups, top half against bottom half as in the
/// Dutch system, with players floating down to the next group when a group cannot be paired);
/// no two players meet twice when that is avoidable for the whole round; with an odd count, the
/// bye goes to the lowest-ranked present player who has not had one (if all have, the
/// lowest-ranked of those with the fewest byes), passing up the order only when that avoids a
/// rematch; colours: the player who has moved first fewer times moves first, then the one who
/// moved second last game, then the higher-ranked. The module documentation says how.
///
/// An entrant in `present` that does not index `records`, or that is listed again, is ignored.
pub fn swiss(records: &[Record], present: &[Entrant]) -> Round {
    let field = Field::new(records, present, Kind::Swiss);
    let mut byes: Vec<usize> = Vec::new();
    if field.players.len() % 2 == 1 {
        byes = (0..field.players.len()).collect();
        // Fewest byes first, then the lowest-ranked: a stable sort of the reversed ranking.
        byes.reverse();
        byes.sort_by_key(|&i| field.players[i].byes);
    }
    let (pairs, bye) = field.pair(&byes);
    Round {
        pairings: pairs.iter().map(|&(a, b)| field.pairing(a, b)).collect(),
        bye: bye.map(|i| field.players[i].entrant),
    }
}

/// Pairs an arena wave: `waiting` are the entrants free to play now (not in a game, not paused).
/// Players are ranked by (arena score desc, rating desc, entrant asc) and paired with a neighbour
/// in that order, avoiding each player's last opponent when another choice exists; colours
/// balanced as in [`swiss`]. With an odd count, one player (the lowest-ranked who cannot be
/// paired) waits for the next wave.
///
/// "Last opponent" goes both ways: A and B are kept apart if either's last game was against
/// the other. An entrant in `waiting` that does not index `records`, or that is listed again,
/// is ignored.
pub fn arena(records: &[Record], waiting: &[Entrant]) -> Vec<Pairing> {
    let field = Field::new(records, waiting, Kind::Arena);
    let waits: Vec<usize> = if field.players.len() % 2 == 1 {
        (0..field.players.len()).rev().collect()
    } else {
        Vec::new()
    };
    let (pairs, _) = field.pair(&waits);
    pairs.iter().map(|&(a, b)| field.pairing(a, b)).collect()
}

/// Tie-breaks, as shown in the standings.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TieBreaks {
    /// Buchholz: the sum of the Swiss scores of every opponent met (byes add nothing).
    pub buchholz: u32,
    /// Sonneborn–Berger, doubled so it stays an integer: 2 × (sum of the scores of opponents
    /// beaten) + (sum of the scores of opponents drawn).
    pub sonneborn_berger_x2: u32,
}

impl TieBreaks {
    /// The tie-breaks of `records[entrant]`, counting each game (an opponent met twice counts
    /// twice); opponents outside `records` add nothing.
    pub fn of(records: &[Record], entrant: Entrant) -> TieBreaks {
        index(records, entrant).map_or_else(TieBreaks::default, |record| {
            TieBreaks::with_scores(record, |opponent| {
                index(records, opponent).map(Record::swiss_score)
            })
        })
    }

    /// The tie-breaks of `record`, with each opponent's Swiss score from `score_of`.
    fn with_scores(record: &Record, score_of: impl Fn(Entrant) -> Option<u32>) -> TieBreaks {
        let mut tie_breaks = TieBreaks::default();
        for game in &record.games {
            let Some(score) = score_of(game.opponent) else {
                continue;
            };
            tie_breaks.buchholz = tie_breaks.buchholz.saturating_add(score);
            let weighted = match game.outcome {
                Outcome::Win => score.saturating_mul(2),
                Outcome::Draw => score,
                Outcome::Loss => 0,
            };
            tie_breaks.sonneborn_berger_x2 =
                tie_breaks.sonneborn_berger_x2.saturating_add(weighted);
        }
        tie_breaks
    }
}

/// One row of the standings.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standing {
    /// Who.
    pub entrant: Entrant,
    /// Their place, from 1.
    pub rank: u32,
    /// Their Swiss or arena score.
    pub score: u32,
    /// Their tie-breaks.
    pub tie_breaks: TieBreaks,
}

/// Swiss standings: by score, then Buchholz, then Sonneborn–Berger, then rating, then entrant.
/// Every entrant of `records` appears once; ranks are 1..=n with no ties (the order decides).
pub fn swiss_standings(records: &[Record]) -> Vec<Standing> {
    standings(records, Record::swiss_score, |row, record| {
        (
            Reverse(row.score),
            Reverse(row.tie_breaks.buchholz),
            Reverse(row.tie_breaks.sonneborn_berger_x2),
            Reverse(record.rating),
            row.entrant,
        )
    })
}

/// Arena standings: by arena score, then wins, then rating, then entrant (tie_breaks computed
/// too).
pub fn arena_standings(records: &[Record]) -> Vec<Standing> {
    standings(records, Record::arena_score, |row, record| {
        (
            Reverse(row.score),
            Reverse(record.wins()),
            Reverse(record.rating),
            row.entrant,
        )
    })
}

fn standings<K: Ord>(
    records: &[Record],
    score: fn(&Record) -> u32,
    key: impl Fn(&Standing, &Record) -> K,
) -> Vec<Standing> {
    // Each player's Swiss score once, for their opponents' tie-breaks.
    let swiss_scores: Vec<u32> = records.iter().map(Record::swiss_score).collect();
    let score_of = |opponent: Entrant| {
        let position = usize::try_from(opponent).ok()?;
        swiss_scores.get(position).copied()
    };
    let mut rows: Vec<(K, Standing)> = records
        .iter()
        .zip(0..)
        .map(|(record, entrant)| {
            let row = Standing {
                entrant,
                rank: 0,
                score: score(record),
                tie_breaks: TieBreaks::with_scores(record, score_of),
            };
            (key(&row, record), row)
        })
        .collect();
    rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    rows.into_iter()
        .zip(1..)
        .map(|((_, row), rank)| Standing { rank, ..row })
        .collect()
}

fn index(records: &[Record], entrant: Entrant) -> Option<&Record> {
    records.get(usize::try_from(entrant).ok()?)
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Swiss,
    Arena,
}

/// What the search needs of one player to pair, in ranking order.
#[derive(Debug)]
struct Player {
    entrant: Entrant,
    byes: u32,
    games: u32,
    firsts: u32,
    second_last_game: bool,
    /// Their last game's opponent.
    last_opponent: Option<Entrant>,
    /// Swiss: where everyone they met is in [`Field::met`].
    met: std::ops::Range<usize>,
}

/// The players to pair, ranked, with their score groups.
#[derive(Debug)]
struct Field {
    kind: Kind,
    players: Vec<Player>,
    /// Swiss: each player's opponents met, sorted, one after the other (a slice per player
    /// rather than a vector each: one allocation for the field).
    met: Vec<Entrant>,
    /// For each ranked position, the end of its score group (exclusive). In an arena every
    /// player is a group of one: the nearest below comes first.
    group_end: Vec<usize>,
}

/// Why a search stopped without a whole round.
struct Failed {
    /// The deepest start found that met the constraints, as pairs of ranked positions.
    best: Vec<(usize, usize)>,
}

impl Field {
    fn new(records: &[Record], entrants: &[Entrant], kind: Kind) -> Field {
        let mut seen = vec![false; records.len()];
        let mut ranked: Vec<(Reverse<u32>, Reverse<u32>, Entrant)> = Vec::new();
        for &entrant in entrants {
            let Some(slot) = usize::try_from(entrant).ok().and_then(|i| seen.get_mut(i)) else {
                continue;
            };
            if std::mem::replace(slot, true) {
                continue;
            }
            let Some(record) = index(records, entrant) else {
                continue;
            };
            let score = match kind {
                Kind::Swiss => record.swiss_score(),
                Kind::Arena => record.arena_score(),
            };
            ranked.push((Reverse(score), Reverse(record.rating), entrant));
        }
        ranked.sort_unstable();
        let mut group_end = vec![0; ranked.len()];
        let mut end = ranked.len();
        for i in (0..ranked.len()).rev() {
            if kind == Kind::Arena || ranked.get(i + 1).is_none_or(|next| next.0 != ranked[i].0) {
                end = i + 1;
            }
            group_end[i] = end;
        }
        let mut met = Vec::new();
        let players = ranked
            .iter()
            .map(|&(_, _, entrant)| {
                let record = index(records, entrant).map_or(&EMPTY, |r| r);
                let (firsts, _) = record.sides();
                let start = met.len();
                if kind == Kind::Swiss {
                    met.extend(record.games.iter().map(|g| g.opponent));
                    met[start..].sort_unstable();
                }
                let last = record.games.last();
                Player {
                    entrant,
                    byes: record.byes,
                    games: u32::try_from(record.games.len()).unwrap_or(u32::MAX),
                    firsts,
                    second_last_game: last.is_some_and(|g| !g.first),
                    last_opponent: last.map(|g| g.opponent),
                    met: start..met.len(),
                }
            })
            .collect();
        Field {
            kind,
            players,
            met,
            group_end,
        }
    }

    /// Whether the players at ranked positions `a` and `b` should not meet: a rematch in
    /// Swiss, a last opponent in an arena.
    fn apart(&self, a: usize, b: usize) -> bool {
        let (pa, pb) = (&self.players[a], &self.players[b]);
        match self.kind {
            Kind::Swiss => self
                .met
                .get(pa.met.clone())
                .is_some_and(|met| met.binary_search(&pb.entrant).is_ok()),
            Kind::Arena => {
                pa.last_opponent == Some(pb.entrant) || pb.last_opponent == Some(pa.entrant)
            }
        }
    }

    /// Whether `a` moves first against `b`, `a` ranked higher.
    fn a_first(&self, a: usize, b: usize) -> bool {
        let (pa, pb) = (&self.players[a], &self.players[b]);
        match pa.firsts.cmp(&pb.firsts) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => pa.second_last_game || !pb.second_last_game,
        }
    }

    /// Whether the one who would move first stays within ⌈g/2⌉ + 1 firsts after g games.
    fn colours_fit(&self, a: usize, b: usize) -> bool {
        let first = &self.players[if self.a_first(a, b) { a } else { b }];
        // After this game: firsts + 1 ≤ ⌈(games + 1) / 2⌉ + 1.
        u64::from(first.firsts) <= (u64::from(first.games) + 2) / 2
    }

    fn pairing(&self, a: usize, b: usize) -> Pairing {
        let (first, second) = if self.a_first(a, b) { (a, b) } else { (b, a) };
        Pairing {
            first: self.players[first].entrant,
            second: self.players[second].entrant,
        }
    }

    /// Pairs everyone (as ranked positions, the higher-ranked first in each pair and the
    /// pairs in ranking order), leaving out one of `leave_out` in that order of preference
    /// when that list is not empty.
    fn pair(&self, leave_out: &[usize]) -> (Vec<(usize, usize)>, Option<usize>) {
        let choices: Vec<Option<usize>> = if leave_out.is_empty() {
            vec![None]
        } else {
            leave_out.iter().copied().map(Some).collect()
        };
        let mut steps = SEARCH_STEPS;
        let mut free = Free::full(self.players.len());
        let mut fallback: Vec<(usize, usize)> = Vec::new();
        'choices: for (nth, &out) in choices.iter().enumerate() {
            for colours in [true, false] {
                // The colour-strict pass may spend a quarter of what is left.
                let mut allowed = if colours { steps / 4 } else { steps };
                let spent_from = allowed;
                if let Some(out) = out {
                    free.remove(out);
                }
                let found = self.search(&mut free, colours, &mut allowed);
                steps -= spent_from - allowed;
                match found {
                    Ok(pairs) => return (pairs, out),
                    Err(failed) => {
                        if nth == 0 && failed.best.len() > fallback.len() {
                            fallback = failed.best;
                        }
                    }
                }
                if let Some(out) = out {
                    free.add(out);
                }
                if steps == 0 {
                    break 'choices;
                }
            }
        }
        let out = choices.first().copied().flatten();
        (self.complete(fallback, out), out)
    }

    /// Depth-first search for a whole round among the `free` players in which nobody is kept
    /// apart from their opponent (and, with `colours`, colours fit). Each look at a candidate
    /// costs a step. On failure `free` is as it was.
    fn search(
        &self,
        free: &mut Free,
        colours: bool,
        steps: &mut u64,
    ) -> Result<Vec<(usize, usize)>, Failed> {
        struct Frame {
            player: usize,
            group: usize,
            candidates: usize,
            next: usize,
            partner: Option<usize>,
        }
        let mut stack: Vec<Frame> = Vec::new();
        let mut best: Vec<(usize, usize)> = Vec::new();
        let pairs = |stack: &[Frame]| -> Vec<(usize, usize)> {
            stack
                .iter()
                .filter_map(|f| Some((f.player, f.partner?)))
                .collect()
        };
        loop {
            // Descend: the highest-ranked free player opens a frame.
            let left = free.len();
            if left == 0 {
                return Ok(pairs(&stack));
            }
            let player = free.nth(0);
            free.remove(player);
            let group = free.count_before(self.group_end[player]) + 1;
            stack.push(Frame {
                player,
                group,
                candidates: left - 1,
                next: 0,
                partner: None,
            });
            // Advance the top frame to its next acceptable candidate, backtracking as needed.
            loop {
                let Some(frame) = stack.last_mut() else {
                    return Err(Failed { best });
                };
                if let Some(partner) = frame.partner.take() {
                    free.add(partner);
                }
                let mut chosen = None;
                while frame.next < frame.candidates {
                    if *steps == 0 {
                        break;
                    }
                    *steps -= 1;
                    let candidate = free.nth(preference(frame.next, frame.group) - 1);
                    frame.next += 1;
                    if !self.apart(frame.player, candidate)
                        && (!colours || self.colours_fit(frame.player, candidate))
                    {
                        chosen = Some(candidate);
                        break;
                    }
                }
                if let Some(partner) = chosen {
                    free.remove(partner);
                    frame.partner = Some(partner);
                    break;
                }
                let made = stack.len() - 1;
                if made > best.len() {
                    best = pairs(&stack[..made]);
                }
                if *steps == 0 {
                    for frame in stack.drain(..) {
                        free.add(frame.player);
                        if let Some(partner) = frame.partner {
                            free.add(partner);
                        }
                    }
                    return Err(Failed { best });
                }
                if let Some(frame) = stack.pop() {
                    free.add(frame.player);
                }
            }
        }
    }

    /// Completes a start greedily: each highest-ranked free player takes their first
    /// preference they are not kept apart from, or their first preference if there is none.
    fn complete(&self, start: Vec<(usize, usize)>, out: Option<usize>) -> Vec<(usize, usize)> {
        let mut free = Free::full(self.players.len());
        for &(a, b) in &start {
            free.remove(a);
            free.remove(b);
        }
        if let Some(out) = out {
            free.remove(out);
        }
        let mut pairs = start;
        while free.len() >= 2 {
            let player = free.nth(0);
            free.remove(player);
            let group = free.count_before(self.group_end[player]) + 1;
            let candidates = free.len();
            let partner = (0..candidates)
                .map(|t| free.nth(preference(t, group) - 1))
                .find(|&candidate| !self.apart(player, candidate))
                .unwrap_or_else(|| free.nth(preference(0, group) - 1));
            free.remove(partner);
            pairs.push((player, partner));
        }
        pairs
    }
}

static EMPTY: Record = Record {
    games: Vec::new(),
    byes: 0,
    rating: 0,
};

/// The `t`-th preferred opponent (from 0) of the highest-ranked free player, as a position
/// among the free players in ranking order (the player is position 0), when `group` of
/// them (the player included) share the player's score: the bottom half of the group from
/// its top (the Dutch system's first choice), then the top half from its bottom, then
/// everyone below the group, in order (floating down).
fn preference(t: usize, group: usize) -> usize {
    let half = group / 2;
    if t + 1 >= group {
        t + 1
    } else if t < group - half {
        half + t
    } else {
        half - 1 - (t - (group - half))
    }
}

/// The free players, as a Fenwick tree over ranked positions: count, take out, put back
/// and find the n-th free one, each in O(log n).
#[derive(Debug)]
struct Free {
    tree: Vec<usize>,
    free: Vec<bool>,
    len: usize,
}

impl Free {
    fn full(n: usize) -> Free {
        let mut tree = vec![0; n + 1];
        for i in 1..=n {
            tree[i] += 1;
            let parent = i + (i & i.wrapping_neg());
            if parent <= n {
                tree[parent] += tree[i];
            }
        }
        Free {
            tree,
            free: vec![true; n],
            len: n,
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn change(&mut self, position: usize, free: bool) {
        if self.free[position] == free {
            return;
        }
        self.free[position] = free;
        let mut i = position + 1;
        while i < self.tree.len() {
            if free {
                self.tree[i] += 1;
            } else {
                self.tree[i] -= 1;
            }
            i += i & i.wrapping_neg();
        }
        if free {
            self.len += 1;
        } else {
            self.len -= 1;
        }
    }

    fn remove(&mut self, position: usize) {
        self.change(position, false);
    }

    fn add(&mut self, position: usize) {
        self.change(position, true);
    }

    /// How many free players are ranked before `end`.
    fn count_before(&self, end: usize) -> usize {
        let mut i = end.min(self.tree.len() - 1);
        let mut count = 0;
        while i > 0 {
            count += self.tree[i];
            i -= i & i.wrapping_neg();
        }
        count
    }

    /// The ranked position of the `n`-th free player (from 0); `n < len()`.
    fn nth(&self, n: usize) -> usize {
        debug_assert!(n < self.len);
        let mut position = 0;
        let mut rest = n;
        let mut step = (self.tree.len() - 1)
            .checked_ilog2()
            .map_or(0, |log| 1 << log);
        while step > 0 {
            let next = position + step;
            if next < self.tree.len() && self.tree[next] <= rest {
                position = next;
                rest -= self.tree[next];
            }
            step >>= 1;
        }
        position
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(opponent: Entrant, first: bool, outcome: Outcome) -> Game {
        Game {
            opponent,
            first,
            outcome,
        }
    }

    #[test]
    fn arena_streaks_worked_example() {
        use Outcome::{Draw as D, Loss as L, Win as W};
        // outcome, points, on fire after it, running score
        let table = [
            (W, 2, false, 2),
            (W, 2, true, 4),
            (W, 4, true, 8),
            (D, 2, false, 10),
            (W, 2, false, 12),
            (L, 0, false, 12),
            (W, 2, false, 14),
            (W, 2, true, 16),
            (L, 0, false, 16),
            (D, 1, false, 17),
            (W, 2, false, 19),
            (W, 2, true, 21),
            (W, 4, true, 25),
            (W, 4, true, 29),
        ];
        let mut record = Record::default();
        for (n, &(outcome, points, fire, total)) in table.iter().enumerate() {
            let before = record.arena_score();
            record.games.push(game(1, n % 2 == 0, outcome));
            assert_eq!(record.arena_score() - before, points, "game {n}");
            assert_eq!(record.arena_score(), total, "game {n}");
            assert_eq!(record.on_fire(), fire, "game {n}");
        }
        assert_eq!(record.sides(), (7, 7));
        assert_eq!(record.wins(), 10);
    }

    #[test]
    fn scores_saturate_rather_than_overflow() {
        let huge = Record {
            games: vec![game(1, true, Outcome::Win); 3],
            byes: u32::MAX,
            rating: u32::MAX,
        };
        assert_eq!(huge.swiss_score(), u32::MAX);
        let records = vec![huge.clone(), huge];
        let standings = swiss_standings(&records);
        assert_eq!(standings[0].tie_breaks.buchholz, u32::MAX);
        assert_eq!(standings[0].tie_breaks.sonneborn_berger_x2, u32::MAX);
        assert_eq!(swiss(&records, &[0, 1]).pairings.len(), 1);
    }

    #[test]
    fn preference_is_bottom_half_then_top_half_then_below() {
        let order =
            |group: usize, len: usize| (0..len).map(|t| preference(t, group)).collect::<Vec<_>>();
        // Group of 6 (positions 0-5), 3 more below.
        assert_eq!(order(6, 8), [3, 4, 5, 2, 1, 6, 7, 8]);
        assert_eq!(order(5, 6), [2, 3, 4, 1, 5, 6]);
        assert_eq!(order(2, 3), [1, 2, 3]);
        assert_eq!(order(1, 3), [1, 2, 3]);
    }

    #[test]
    fn free_players_count_and_select() {
        let mut free = Free::full(13);
        for p in [0, 3, 4, 12] {
            free.remove(p);
        }
        let expected: Vec<usize> = (0..13).filter(|p| ![0, 3, 4, 12].contains(p)).collect();
        assert_eq!(
            (0..free.len()).map(|n| free.nth(n)).collect::<Vec<_>>(),
            expected
        );
        assert_eq!(free.count_before(5), 2);
        free.add(3);
        assert_eq!(free.nth(1), 2);
        assert_eq!(free.nth(2), 3);
        assert_eq!(free.count_before(13), 10);
    }

    #[test]
    fn first_round_pairs_top_half_against_bottom_half() {
        let records: Vec<Record> = (0..7)
            .map(|i| Record {
                rating: 2000 - 10 * i,
                ..Record::default()
            })
            .collect();
        let round = swiss(&records, &[6, 5, 4, 3, 2, 1, 0]);
        assert_eq!(round.bye, Some(6));
        let pairs: Vec<(Entrant, Entrant)> =
            round.pairings.iter().map(|p| (p.first, p.second)).collect();
        assert_eq!(pairs, [(0, 3), (1, 4), (2, 5)]);
    }
}
