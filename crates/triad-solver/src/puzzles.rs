//! Puzzles chosen by the solver: "win in N" and "save the draw" positions of both games, a
//! daily puzzle, and the check of a solving line.
//!
//! The set is a pure function of the rules: every reachable position of both games whose
//! [`Value`] and move values make an instructive exercise (see [`Goal`] for what each kind
//! asks and which positions qualify), one position per symmetry class (the one with the
//! lowest position number among its eight rotations and reflections). It is built once per
//! process, like the [tables](crate::table()), and ordered by game, goal (win in 1, 2, 3,
//! then save the draw) and position number.
//!
//! A puzzle is solved by a *line*: the player's move, the defence's reply, the player's next
//! move, and so on. The defence is always one of the solver's [best
//! moves](crate::Table::best_moves) (the longest loss, or a move that keeps the draw); a
//! player's move is correct while it keeps the goal, and the first wrong one ends the
//! attempt. [`Puzzle::check`] reads a line so far and says whether it is solved, failed, or
//! goes on with the defence's reply.
//!
//! ```
//! use triad_solver::puzzles::{self, Goal, Progress};
//!
//! let daily = puzzles::daily(20_000);
//! assert_eq!(puzzles::daily(20_000 + puzzles::all().len() as u64), daily);
//! let line = daily.solution();
//! assert_eq!(daily.check(&line), Ok(Progress::Solved));
//! let found = puzzles::find(&daily.id().to_string().parse().unwrap());
//! assert_eq!(found, Some(daily));
//! # let _ = Goal::SaveTheDraw;
//! ```

use core::{fmt, str::FromStr};
use std::sync::OnceLock;

use triad_rules::{AnyGame, GameKind, Move, Moves, Player};

use crate::{Value, Verdict, table};

/// The longest "win in N" puzzle, in the solver's own moves.
pub const MAX_WIN_IN: u8 = 3;

/// The most marks a "save the draw" puzzle leaves to place, both sides counted: at most
/// three moves of the player's own.
pub const MAX_DRAW_PLIES: u8 = 6;

/// Milliseconds in a day: the daily puzzle changes at midnight UTC.
pub const DAY_MS: u64 = 86_400_000;

/// What a puzzle asks of the side to move.
///
/// Tic-tac-toe has puzzles of every goal. SOS has only "win in 1" and "save the draw": a
/// won SOS position is always won at the next move (no position forces an S-O-S later).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Goal {
    /// Force a win in this many moves of one's own (1 to [`MAX_WIN_IN`]), against any
    /// defence. Chosen where the fastest win takes exactly that many moves, at least one
    /// legal move does not win at all, and at most half the legal moves win that fast.
    WinIn(u8),
    /// Hold the draw to the end of the game. Chosen where the game is a draw with best play,
    /// at most [`MAX_DRAW_PLIES`] marks remain, and more than half the legal moves lose.
    SaveTheDraw,
}

impl Goal {
    /// The stable name of the kind: `win` or `draw`.
    #[must_use]
    pub const fn kind(self) -> &'static str {
        match self {
            Goal::WinIn(_) => "win",
            Goal::SaveTheDraw => "draw",
        }
    }

    /// Whether a move worth `value` to the player, made as their `made`-th move of the
    /// puzzle (from 1), still reaches the goal.
    fn kept_by(self, value: Value, made: u8) -> bool {
        match self {
            // After the player's k-th move, N - k moves of theirs may remain, with the
            // defence's in between: the move itself and 2 (N - k) more plies.
            Goal::WinIn(n) => {
                value.verdict == Verdict::Win && value.plies < 2 * (n - made.min(n)) + 2
            }
            Goal::SaveTheDraw => value.verdict >= Verdict::Draw,
        }
    }
}

impl fmt::Display for Goal {
    /// `win in 2`, `save the draw`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Goal::WinIn(n) => write!(f, "win in {n}"),
            Goal::SaveTheDraw => f.write_str("save the draw"),
        }
    }
}

/// A puzzle's stable id: its game and its position number, written `tic-tac-toe-1234` or
/// `sos-1234`.
///
/// ```
/// use triad_rules::GameKind;
/// use triad_solver::puzzles::PuzzleId;
///
/// let id: PuzzleId = "sos-4321".parse().unwrap();
/// assert_eq!((id.game, id.number), (GameKind::Sos, 4321));
/// assert_eq!(id.to_string(), "sos-4321");
/// assert!("chess-1".parse::<PuzzleId>().is_err());
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PuzzleId {
    /// The game.
    pub game: GameKind,
    /// The position's [number](triad_rules::Game::position_number).
    pub number: u16,
}

impl fmt::Display for PuzzleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.game, self.number)
    }
}

/// The error for text that is not a puzzle id.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct InvalidPuzzleId;

impl fmt::Display for InvalidPuzzleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a puzzle id is the game and a position number, like tic-tac-toe-1234 or sos-1234",
        )
    }
}

impl std::error::Error for InvalidPuzzleId {}

impl FromStr for PuzzleId {
    type Err = InvalidPuzzleId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (game, number) = s.rsplit_once('-').ok_or(InvalidPuzzleId)?;
        let game = game.parse().map_err(|_| InvalidPuzzleId)?;
        // Digits only: no sign, no spaces, so each id has one spelling.
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return Err(InvalidPuzzleId);
        }
        let number = number.parse().map_err(|_| InvalidPuzzleId)?;
        Ok(PuzzleId { game, number })
    }
}

impl serde::Serialize for PuzzleId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for PuzzleId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One puzzle: a position, the side to move, and the goal.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Puzzle {
    position: AnyGame,
    goal: Goal,
}

/// Where a line stands (see [`Puzzle::check`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// The goal is reached: the player won, or the board filled in a draw.
    Solved,
    /// The player's move at this index of the line lost the goal.
    Failed {
        /// The index of the wrong move in the line.
        at: usize,
    },
    /// Every move so far keeps the goal and the game goes on.
    Going {
        /// The defence's reply to the line's last move, when that was the player's: the
        /// solver's [best move](crate::Table::best_move). `None` when the player is to move.
        reply: Option<Move>,
    },
}

/// Why a line cannot be read as an attempt at a puzzle. The index is the move's in the line.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LineError {
    /// The move breaks the rules (or comes after the game ended).
    Illegal {
        /// Its index.
        at: usize,
    },
    /// A defence's move that is not one of the solver's best moves.
    NotBestDefence {
        /// Its index.
        at: usize,
    },
    /// A move after the attempt was already decided (solved or failed).
    AfterTheEnd {
        /// Its index.
        at: usize,
    },
}

impl LineError {
    /// The index of the move at fault.
    #[must_use]
    pub const fn at(self) -> usize {
        match self {
            LineError::Illegal { at }
            | LineError::NotBestDefence { at }
            | LineError::AfterTheEnd { at } => at,
        }
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LineError::Illegal { at } => write!(f, "move {} of the line is not legal", at + 1),
            LineError::NotBestDefence { at } => write!(
                f,
                "move {} of the line is the defence's, and not one of its best moves; play the reply the server gave",
                at + 1
            ),
            LineError::AfterTheEnd { at } => write!(
                f,
                "the attempt was decided before move {} of the line; send the line up to the decisive move",
                at + 1
            ),
        }
    }
}

impl std::error::Error for LineError {}

impl Puzzle {
    /// The puzzle's id.
    #[must_use]
    pub fn id(&self) -> PuzzleId {
        PuzzleId {
            game: self.position.kind(),
            number: self.position.position_number(),
        }
    }

    /// The position to solve.
    #[must_use]
    pub fn position(&self) -> AnyGame {
        self.position
    }

    /// The side to move, who solves it.
    #[must_use]
    pub fn side(&self) -> Player {
        self.position.turn()
    }

    /// What the side to move must do.
    #[must_use]
    pub fn goal(&self) -> Goal {
        self.goal
    }

    /// How many moves of the player's own the puzzle takes with best defence: N for win in
    /// N; for save the draw, the player's moves until the board is full.
    #[must_use]
    pub fn moves(&self) -> u8 {
        match self.goal {
            Goal::WinIn(n) => n,
            Goal::SaveTheDraw => self.value().plies.div_ceil(2),
        }
    }

    fn value(&self) -> Value {
        table(self.position.kind())
            .value(&self.position)
            .expect("a puzzle is a reachable position")
    }

    /// The first moves that keep the goal, in legal-move order.
    #[must_use]
    pub fn correct_moves(&self) -> Moves {
        table(self.position.kind())
            .analyze(&self.position)
            .into_iter()
            .filter(|&(_, value)| self.goal.kept_by(value, 1))
            .map(|(mv, _)| mv)
            .collect()
    }

    /// The solver's line: its best move for each side in turn, to the end of the game.
    #[must_use]
    pub fn solution(&self) -> Vec<Move> {
        let table = table(self.position.kind());
        let mut game = self.position;
        let mut line = Vec::new();
        while let Some(mv) = table.best_move(&game) {
            game = game.play_unchecked(mv);
            line.push(mv);
        }
        line
    }

    /// Reads a line played from the puzzle's position: the player's moves at even indexes,
    /// the defence's at odd ones. The first player's move that loses the goal fails the
    /// attempt; a line that keeps it to the end of the game solves it.
    ///
    /// # Errors
    /// A [`LineError`] for an illegal move, a defence that is not a best move, or a move
    /// after the attempt was decided.
    pub fn check(&self, line: &[Move]) -> Result<Progress, LineError> {
        let table = table(self.position.kind());
        let mut game = self.position;
        for (at, &mv) in line.iter().enumerate() {
            if game.is_over() {
                return Err(LineError::AfterTheEnd { at });
            }
            let value = table
                .analyze(&game)
                .into_iter()
                .find_map(|(m, v)| (m == mv).then_some(v))
                .ok_or(LineError::Illegal { at })?;
            if at % 2 == 0 {
                let made = u8::try_from(at / 2 + 1).expect("a line is at most nine moves");
                if !self.goal.kept_by(value, made) {
                    return match at + 1 < line.len() {
                        true => Err(LineError::AfterTheEnd { at: at + 1 }),
                        false => Ok(Progress::Failed { at }),
                    };
                }
            } else if !table.best_moves(&game).contains(&mv) {
                return Err(LineError::NotBestDefence { at });
            }
            game = game.play_unchecked(mv);
        }
        Ok(if game.is_over() {
            Progress::Solved
        } else if line.len() % 2 == 1 {
            Progress::Going {
                reply: table.best_move(&game),
            }
        } else {
            Progress::Going { reply: None }
        })
    }

    /// The puzzle `position` makes, if it makes one.
    fn of(position: AnyGame) -> Option<Puzzle> {
        if position.is_over() || !is_canonical(&position) {
            return None;
        }
        let table = table(position.kind());
        let value = table.value(&position)?;
        let moves = table.analyze(&position);
        let goal = match value.verdict {
            Verdict::Win if value.plies < 2 * MAX_WIN_IN => {
                let n = value.plies.div_ceil(2);
                let fast = moves.iter().filter(|(_, v)| *v == value).count();
                let losing_the_win = moves.iter().any(|(_, v)| v.verdict != Verdict::Win);
                (losing_the_win && 2 * fast <= moves.len()).then_some(Goal::WinIn(n))?
            }
            Verdict::Draw if value.plies <= MAX_DRAW_PLIES => {
                let losing = moves
                    .iter()
                    .filter(|(_, v)| v.verdict == Verdict::Loss)
                    .count();
                (2 * losing > moves.len()).then_some(Goal::SaveTheDraw)?
            }
            _ => return None,
        };
        Some(Puzzle { position, goal })
    }
}

/// The eight symmetries of the board, each as the cell every cell's mark comes from.
const SYMMETRIES: [[usize; 9]; 8] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8],
    [6, 3, 0, 7, 4, 1, 8, 5, 2],
    [8, 7, 6, 5, 4, 3, 2, 1, 0],
    [2, 5, 8, 1, 4, 7, 0, 3, 6],
    [2, 1, 0, 5, 4, 3, 8, 7, 6],
    [6, 7, 8, 3, 4, 5, 0, 1, 2],
    [0, 3, 6, 1, 4, 7, 2, 5, 8],
    [8, 5, 2, 7, 4, 1, 6, 3, 0],
];

/// Whether `position` has the lowest position number of its symmetry class. The lines of
/// both games map onto lines under every symmetry, so the class shares one value.
fn is_canonical(position: &AnyGame) -> bool {
    let cells = position.board().cells();
    let number = |from: &[usize; 9]| {
        from.iter().rev().fold(0_u32, |n, &source| {
            let digit = match cells[source] {
                None => 0,
                Some(triad_rules::Mark::O) => 1,
                Some(_) => 2,
            };
            n * 3 + digit
        })
    };
    let own = u32::from(position.position_number());
    debug_assert_eq!(own, number(&SYMMETRIES[0]));
    SYMMETRIES.iter().all(|s| number(s) >= own)
}

/// Every puzzle of both games, in order: tic-tac-toe then SOS, each by goal (win in 1, 2,
/// 3, save the draw) and position number.
#[must_use]
pub fn all() -> &'static [Puzzle] {
    static ALL: OnceLock<Vec<Puzzle>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<Puzzle> = GameKind::ALL
            .into_iter()
            .flat_map(|kind| {
                table(kind)
                    .reachable()
                    .filter_map(|(game, _)| Puzzle::of(game))
            })
            .collect();
        all.sort_by_key(|p| (game_order(p.position.kind()), p.goal, p.id().number));
        all
    })
}

const fn game_order(kind: GameKind) -> u8 {
    match kind {
        GameKind::TicTacToe => 0,
        GameKind::Sos => 1,
    }
}

/// The puzzle with this id, if it is one.
#[must_use]
pub fn find(id: &PuzzleId) -> Option<&'static Puzzle> {
    all().iter().find(|p| p.id() == *id)
}

/// The index of the puzzle with this id in [`all`].
#[must_use]
pub fn index_of(id: &PuzzleId) -> Option<usize> {
    all().iter().position(|p| p.id() == *id)
}

/// The step of the daily cycle through [`all`]: the first number from about 0.618 of the
/// set's size (the golden ratio, so consecutive days land far apart) that shares no factor
/// with the size, so the cycle visits every puzzle once before it repeats.
fn daily_stride() -> usize {
    let len = all().len();
    let mut stride = (len * 618 / 1000).max(1);
    while gcd(stride, len) != 1 {
        stride += 1;
    }
    stride
}

const fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The puzzle of day `day` (days since the Unix epoch, UTC: `now_ms / DAY_MS`). A pure
/// cycle: every puzzle once in each run of `all().len()` days.
#[must_use]
pub fn daily(day: u64) -> &'static Puzzle {
    let all = all();
    let len = all.len() as u64;
    let index = (day % len) * (daily_stride() as u64) % len;
    &all[usize::try_from(index).expect("an index of the set")]
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn the_set_has_both_games_and_every_goal() {
        let all = all();
        let count = |kind, goal| {
            all.iter()
                .filter(|p| p.position.kind() == kind && p.goal == goal)
                .count()
        };
        let goals = [
            Goal::WinIn(1),
            Goal::WinIn(2),
            Goal::WinIn(3),
            Goal::SaveTheDraw,
        ];
        let tic_tac_toe = goals.map(|goal| count(GameKind::TicTacToe, goal));
        let sos = goals.map(|goal| count(GameKind::Sos, goal));
        assert_eq!(tic_tac_toe, [225, 51, 16, 67]);
        // In SOS every won position is won at once: a player who can spell S-O-S next
        // move wins then, and no position forces it later.
        assert_eq!(sos, [1_090, 0, 0, 25]);
        let ids: HashSet<PuzzleId> = all.iter().map(Puzzle::id).collect();
        assert_eq!(ids.len(), all.len(), "ids are unique");
        assert!(all.is_sorted_by_key(|p| (game_order(p.position.kind()), p.goal, p.id().number)));
    }

    /// Every puzzle's claim, checked against the solver directly.
    #[test]
    fn every_goal_is_true_and_every_puzzle_has_a_right_and_a_wrong_first_move() {
        for puzzle in all() {
            let table = table(puzzle.position.kind());
            let value = table.value(&puzzle.position).unwrap();
            let moves = table.analyze(&puzzle.position);
            match puzzle.goal {
                Goal::WinIn(n) => {
                    assert!((1..=MAX_WIN_IN).contains(&n));
                    assert_eq!(
                        value,
                        Value::new(Verdict::Win, 2 * n - 1),
                        "{}",
                        puzzle.id()
                    );
                }
                Goal::SaveTheDraw => {
                    assert_eq!(value.verdict, Verdict::Draw, "{}", puzzle.id());
                    let losing = moves.iter().filter(|(_, v)| v.verdict == Verdict::Loss);
                    assert!(2 * losing.count() > moves.len(), "{}", puzzle.id());
                }
            }
            let correct = puzzle.correct_moves();
            assert!(
                !correct.is_empty(),
                "{} has a correct first move",
                puzzle.id()
            );
            assert!(
                correct.len() < moves.len(),
                "{} has a wrong one",
                puzzle.id()
            );
            for (mv, _) in &moves {
                let progress = puzzle.check(&[*mv]).unwrap();
                let failed = progress == Progress::Failed { at: 0 };
                assert_eq!(failed, !correct.contains(mv), "{} {mv}", puzzle.id());
            }
            assert_eq!(puzzle.check(&puzzle.solution()), Ok(Progress::Solved));
            assert_eq!(
                puzzle.solution().len().div_ceil(2),
                usize::from(puzzle.moves())
            );
        }
    }

    /// Against every best defence, every correct line solves the puzzle in its N moves, and
    /// the first wrong move fails it: a walk of the whole tree of each puzzle.
    #[test]
    fn every_line_of_correct_moves_against_best_defence_solves() {
        fn walk(puzzle: &Puzzle, line: &mut Vec<Move>) {
            let mut game = puzzle.position;
            for &mv in line.iter() {
                game = game.play(mv).unwrap();
            }
            let table = table(game.kind());
            let candidates: Vec<Move> = match line.len() % 2 {
                0 => game.legal_moves().into_iter().collect(),
                _ => table.best_moves(&game).into_iter().collect(),
            };
            for mv in candidates {
                line.push(mv);
                match puzzle.check(line) {
                    Ok(Progress::Solved) => {
                        if let Goal::WinIn(_) = puzzle.goal {
                            assert_eq!(line.len() % 2, 1, "the player's move wins");
                        }
                        assert!(line.len().div_ceil(2) <= usize::from(puzzle.moves()));
                    }
                    Ok(Progress::Failed { at }) => assert_eq!(at, line.len() - 1),
                    Ok(Progress::Going { reply }) => {
                        if let Some(reply) = reply {
                            assert!(table.best_moves(&game.play(mv).unwrap()).contains(&reply));
                        }
                        walk(puzzle, line);
                    }
                    Err(e) => panic!("{}: {e}", puzzle.id()),
                }
                line.pop();
            }
        }
        for puzzle in all() {
            walk(puzzle, &mut Vec::new());
        }
    }

    #[test]
    fn bad_lines_are_refused_at_the_move_at_fault() {
        let puzzle = all().iter().find(|p| p.goal == Goal::WinIn(2)).unwrap();
        let right = puzzle.correct_moves()[0];
        let game = puzzle.position.play(right).unwrap();
        let table = table(game.kind());
        let best = table.best_moves(&game);
        if let Some(&weak) = game.legal_moves().iter().find(|m| !best.contains(m)) {
            assert_eq!(
                puzzle.check(&[right, weak]),
                Err(LineError::NotBestDefence { at: 1 })
            );
        }
        assert_eq!(
            puzzle.check(&[right, right]),
            Err(LineError::Illegal { at: 1 })
        );
        let wrong = puzzle
            .position
            .legal_moves()
            .into_iter()
            .find(|m| !puzzle.correct_moves().contains(m))
            .unwrap();
        assert_eq!(puzzle.check(&[wrong]), Ok(Progress::Failed { at: 0 }));
        let after = puzzle.position.play(wrong).unwrap();
        let reply = table.best_move(&after).unwrap();
        assert_eq!(
            puzzle.check(&[wrong, reply]),
            Err(LineError::AfterTheEnd { at: 1 })
        );
        let mut solved = puzzle.solution();
        assert_eq!(puzzle.check(&solved), Ok(Progress::Solved));
        if let Some(&extra) = puzzle.position.legal_moves().last() {
            solved.push(extra);
            assert!(matches!(
                puzzle.check(&solved),
                Err(LineError::AfterTheEnd { .. })
            ));
        }
        assert_eq!(puzzle.check(&[]), Ok(Progress::Going { reply: None }));
    }

    #[test]
    fn ids_round_trip_and_find_their_puzzle() {
        for (index, puzzle) in all().iter().enumerate() {
            let id: PuzzleId = puzzle.id().to_string().parse().unwrap();
            assert_eq!(id, puzzle.id());
            assert_eq!(find(&id), Some(puzzle));
            assert_eq!(index_of(&id), Some(index));
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(serde_json::from_str::<PuzzleId>(&json).unwrap(), id);
        }
        for bad in [
            "",
            "sos",
            "sos-",
            "sos-+1",
            "sos- 1",
            "sos-70000",
            "go-1",
            "1",
        ] {
            assert_eq!(bad.parse::<PuzzleId>(), Err(InvalidPuzzleId), "{bad}");
        }
        let empty = PuzzleId {
            game: GameKind::Sos,
            number: 0,
        };
        assert_eq!(find(&empty), None, "the empty board is no puzzle");
    }

    #[test]
    fn the_daily_puzzle_is_a_pure_cycle_over_the_set() {
        let len = all().len();
        let mut seen = HashSet::new();
        for day in 0..len as u64 {
            assert!(seen.insert(daily(day).id()), "day {day} repeats a puzzle");
            assert_eq!(daily(day + len as u64), daily(day));
        }
        assert_eq!(seen.len(), len);
        assert_ne!(daily(0).id(), daily(1).id());
        // Days far in the future stay in the set.
        let _ = daily(u64::MAX);
    }

    #[test]
    fn one_puzzle_per_symmetry_class() {
        for puzzle in all() {
            assert!(is_canonical(&puzzle.position));
        }
        // X in the centre, O in a corner: only the top-left corner is canonical.
        let game = AnyGame::parse(GameKind::TicTacToe, "----X---O").unwrap();
        assert!(!is_canonical(&game));
        let mirrored = AnyGame::parse(GameKind::TicTacToe, "O---X----").unwrap();
        assert!(is_canonical(&mirrored));
    }
}
