//! The solved table of one game: a value and a best move for every reachable position.

use core::fmt;
use std::sync::OnceLock;

use triad_rules::{
    AnyGame, Cell, Game, GameKind, Mark, Move, Moves, Outcome, Player, Sos, TicTacToe,
};

use crate::{
    Value,
    packed::{self, BEFORE_MOVE, NO_MOVE, UNREACHED},
};

/// The number of position numbers: every board of three-valued cells, 3^9.
pub const POSITION_NUMBERS: usize = 19_683;

/// How many positions of a game can be reached from the empty board, and how the ended ones
/// ended.
///
/// ```
/// let counts = triad_solver::table(triad_rules::GameKind::TicTacToe).counts();
/// assert_eq!(counts.reachable, 5_478);
/// assert_eq!(counts.terminal(), 958);
/// assert_eq!((counts.first_player_wins, counts.second_player_wins, counts.draws), (626, 316, 16));
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counts {
    /// Distinct positions reachable from the empty board by legal play, the empty board and
    /// ended games included.
    pub reachable: u32,
    /// Ended games won by the first player (X in tic-tac-toe).
    pub first_player_wins: u32,
    /// Ended games won by the second player (O in tic-tac-toe).
    pub second_player_wins: u32,
    /// Full boards with no line.
    pub draws: u32,
}

impl Counts {
    /// Reachable positions where the game has ended.
    #[must_use]
    pub const fn terminal(&self) -> u32 {
        self.first_player_wins + self.second_player_wins + self.draws
    }

    /// Reachable positions where the game goes on.
    #[must_use]
    pub const fn non_terminal(&self) -> u32 {
        self.reachable - self.terminal()
    }
}

/// The exact value and a best move of every position of one game reachable from the empty
/// board, indexed by [position number](Game::position_number).
///
/// Build one with [`Table::solve`] (two bytes per position number, about 40 KB, computed
/// from the rules in about a millisecond at most), or borrow the process-wide one from
/// [`table`](crate::table()).
///
/// Every lookup takes an [`AnyGame`] of the table's own game and panics on a position of
/// the other game: that is a caller's bug, not a runtime condition.
///
/// ```
/// use triad_rules::{AnyGame, Cell, GameKind, Mark, Move};
/// use triad_solver::{Table, Value, Verdict};
///
/// let table = Table::solve(GameKind::TicTacToe);
/// // X threatens the top row; O must block in cell 2 or lose.
/// let game = AnyGame::parse(GameKind::TicTacToe, "XX--O----").unwrap();
/// assert_eq!(table.value(&game), Some(Value::new(Verdict::Draw, 6)));
/// assert_eq!(table.best_move(&game), Some(Move::new(Cell::new(2).unwrap(), Mark::O)));
/// ```
pub struct Table {
    kind: GameKind,
    /// Packed values by position number; [`UNREACHED`] for positions never reached.
    values: Box<[u8]>,
    /// Packed best moves by position number; [`NO_MOVE`] for ended games.
    best: Box<[u8]>,
    counts: Counts,
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("kind", &self.kind)
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

/// Depth-first search from the empty board with memoisation: each reachable position is
/// expanded once, its children first, so its value is the best of its moves' values. The
/// value array doubles as the visited set.
struct Solver {
    values: Box<[u8]>,
    best: Box<[u8]>,
    counts: Counts,
}

impl Solver {
    /// Solves `game`, not yet visited, and its unvisited descendants, and returns its packed
    /// value. `number` is `game`'s position number, carried along rather than recomputed.
    fn visit<G: Game>(&mut self, game: G, number: u16) -> u8 {
        debug_assert_eq!(number, game.position_number());
        debug_assert_eq!(self.values[usize::from(number)], UNREACHED);
        let (value, best) = match game.outcome() {
            Some(Outcome::Win { winner, .. }) => {
                match winner {
                    Player::First => self.counts.first_player_wins += 1,
                    Player::Second => self.counts.second_player_wins += 1,
                }
                (packed::pack(Value::LOST), None)
            }
            Some(Outcome::Draw) => {
                self.counts.draws += 1;
                (packed::pack(Value::DRAWN), None)
            }
            None => {
                let (mut value, mut best) = (UNREACHED, None);
                let marks = G::KIND.marks_for(game.turn());
                // The legal moves, in `legal_moves` order (cells upwards, then marks), without
                // building the list: this loop runs about 100,000 times in an SOS solve.
                let mut empty = game.board().empty_cells().bits();
                while empty != 0 {
                    let cell = Cell::ALL[empty.trailing_zeros() as usize];
                    empty &= empty - 1;
                    for &mark in marks {
                        let mv = Move::new(cell, mark);
                        // Most children were reached before by another order of the same
                        // moves: look them up before paying for the move.
                        let child = child_number(number, mv);
                        let mut child_value = self.values[usize::from(child)];
                        if child_value == UNREACHED {
                            child_value = self.visit(game.play_unchecked(mv), child);
                        }
                        // Strictly better only: the first best move in legal-move order is
                        // kept, which makes the stored move deterministic.
                        let move_value = BEFORE_MOVE[usize::from(child_value)];
                        if move_value > value {
                            (value, best) = (move_value, Some(mv));
                        }
                    }
                }
                debug_assert!(best.is_some(), "a game that goes on has a legal move");
                (value, best)
            }
        };
        self.values[usize::from(number)] = value;
        self.best[usize::from(number)] = packed::pack_move(best);
        self.counts.reachable += 1;
        value
    }
}

/// The position number after `mv` is played in the position numbered `number`: the cell's
/// ternary digit goes from 0 to the mark's digit (O 1, X or S 2; see
/// [`Game::position_number`]).
fn child_number(number: u16, mv: Move) -> u16 {
    const POWERS_OF_3: [u16; 9] = [1, 3, 9, 27, 81, 243, 729, 2187, 6561];
    let digit = match mv.mark {
        Mark::O => 1,
        Mark::X | Mark::S => 2,
    };
    number + digit * POWERS_OF_3[usize::from(mv.cell.index())]
}

impl Table {
    /// Solves `kind` from its rules: every position reachable from the empty board gets its
    /// exact [`Value`] and a best move (the first optimal one in
    /// [`legal_moves`](Game::legal_moves) order: lowest cell, and in SOS `S` before `O`).
    #[must_use]
    pub fn solve(kind: GameKind) -> Table {
        let mut solver = Solver {
            values: vec![UNREACHED; POSITION_NUMBERS].into_boxed_slice(),
            best: vec![NO_MOVE; POSITION_NUMBERS].into_boxed_slice(),
            counts: Counts::default(),
        };
        match kind {
            GameKind::TicTacToe => solver.visit(TicTacToe::default(), 0),
            GameKind::Sos => solver.visit(Sos::default(), 0),
        };
        let table = Table {
            kind,
            values: solver.values,
            best: solver.best,
            counts: solver.counts,
        };
        debug_assert_eq!(
            table.values.iter().filter(|&&v| v != UNREACHED).count(),
            table.counts.reachable as usize,
            "every reachable position is stored once"
        );
        table
    }

    /// The game this table solves.
    #[must_use]
    pub fn kind(&self) -> GameKind {
        self.kind
    }

    /// How many positions are reachable and how the ended ones ended.
    #[must_use]
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The index of `game` in the arrays.
    fn index(&self, game: &AnyGame) -> usize {
        assert_eq!(
            game.kind(),
            self.kind,
            "a {} position was looked up in the {} table",
            game.kind(),
            self.kind
        );
        usize::from(game.position_number())
    }

    /// The value of `game` for the player to move.
    ///
    /// An ended game is worth [`Value::LOST`] (the opponent has just won) or
    /// [`Value::DRAWN`]. `None` means the position cannot be reached from the empty board;
    /// with the current rules every position an [`AnyGame`] can hold is reachable (the
    /// test suite checks all 3^9 boards of both games), so `None` never happens in practice.
    ///
    /// # Panics
    /// When `game` is not of this table's game.
    ///
    /// ```
    /// use triad_rules::{AnyGame, GameKind};
    /// use triad_solver::{table, Value, Verdict};
    ///
    /// let table = table(GameKind::TicTacToe);
    /// let empty = AnyGame::new(GameKind::TicTacToe);
    /// assert_eq!(table.value(&empty), Some(Value::new(Verdict::Draw, 9)));
    /// let won = AnyGame::parse(GameKind::TicTacToe, "XXXOO----").unwrap();
    /// assert_eq!(table.value(&won), Some(Value::LOST));
    /// ```
    #[must_use]
    pub fn value(&self, game: &AnyGame) -> Option<Value> {
        packed::unpack(self.values[self.index(game)])
    }

    /// The precomputed best move: the first optimal move in legal-move order, the same one
    /// every time. `None` when the game has ended (or the position is unreachable, see
    /// [`value`](Table::value)). A single table read.
    ///
    /// # Panics
    /// When `game` is not of this table's game.
    #[must_use]
    pub fn best_move(&self, game: &AnyGame) -> Option<Move> {
        packed::unpack_move(self.best[self.index(game)])
    }

    /// Every legal move with its value for the player making it, that is, for the player to
    /// move in `game`: the verdict they get by playing it, and the plies to the end counting
    /// the move itself. The position's own value is the maximum of these. Moves come in
    /// legal-move order. Empty when the game has ended.
    ///
    /// # Panics
    /// When `game` is not of this table's game.
    ///
    /// ```
    /// use triad_rules::{AnyGame, GameKind};
    /// use triad_solver::{table, Value, Verdict};
    ///
    /// // The SOS contract's worked example, `O-SOOS--S`: S in square 7 (cell 6) wins at once.
    /// let game = AnyGame::parse(GameKind::Sos, "O-SOOS--S").unwrap();
    /// let analysis = table(GameKind::Sos).analyze(&game);
    /// assert_eq!(analysis.len(), 6); // three empty cells, S or O in each
    /// let best = analysis.iter().max_by_key(|(_, value)| *value).unwrap();
    /// assert_eq!(best.0.cell.square(), 7);
    /// assert_eq!(best.1, Value::new(Verdict::Win, 1));
    /// ```
    #[must_use]
    pub fn analyze(&self, game: &AnyGame) -> Vec<(Move, Value)> {
        let number = self.index(game);
        if self.values[number] == UNREACHED {
            return Vec::new();
        }
        let number = u16::try_from(number).expect("position numbers are below 3^9");
        game.legal_moves()
            .into_iter()
            .map(|mv| {
                let child = self.values[usize::from(child_number(number, mv))];
                let value = packed::unpack(BEFORE_MOVE[usize::from(child)])
                    .expect("a legal move from a reachable position reaches a reachable one");
                (mv, value)
            })
            .collect()
    }

    /// All optimal moves of `game` (those whose [`analyze`](Table::analyze) value equals the
    /// position's value), in legal-move order; the [`best_move`](Table::best_move) is the
    /// first. Empty when the game has ended.
    ///
    /// # Panics
    /// When `game` is not of this table's game.
    ///
    /// ```
    /// use triad_rules::{AnyGame, GameKind};
    /// use triad_solver::table;
    ///
    /// // Every first move of tic-tac-toe draws.
    /// let empty = AnyGame::new(GameKind::TicTacToe);
    /// assert_eq!(table(GameKind::TicTacToe).best_moves(&empty).len(), 9);
    /// ```
    #[must_use]
    pub fn best_moves(&self, game: &AnyGame) -> Moves {
        let Some(value) = self.value(game) else {
            return Moves::new();
        };
        self.analyze(game)
            .into_iter()
            .filter(|&(_, v)| v == value)
            .map(|(mv, _)| mv)
            .collect()
    }

    /// Every reachable position with its value, by increasing position number.
    ///
    /// ```
    /// use triad_rules::{GameKind, Player};
    /// use triad_solver::{table, Verdict};
    ///
    /// let table = table(GameKind::TicTacToe);
    /// assert_eq!(table.reachable().count(), 5_478);
    /// // Positions where X, to move, can force a win.
    /// let x_wins = table
    ///     .reachable()
    ///     .filter(|(game, value)| {
    ///         !game.is_over() && game.turn() == Player::First && value.verdict == Verdict::Win
    ///     })
    ///     .count();
    /// assert!(x_wins > 0);
    /// ```
    pub fn reachable(&self) -> impl Iterator<Item = (AnyGame, Value)> + '_ {
        self.values
            .iter()
            .enumerate()
            .filter_map(|(number, &value)| {
                let value = packed::unpack(value)?;
                let number = u32::try_from(number).expect("position numbers are below 3^9");
                let game = AnyGame::from_position_number(self.kind, number)
                    .expect("a position reached by legal play is legal");
                Some((game, value))
            })
    }
}

/// The process-wide table of `kind`, solved on first use and kept for the life of the
/// process.
///
/// ```
/// use triad_rules::GameKind;
/// let table = triad_solver::table(GameKind::Sos);
/// assert!(std::ptr::eq(table, triad_solver::table(GameKind::Sos)));
/// assert_eq!(table.kind(), GameKind::Sos);
/// ```
#[must_use]
pub fn table(kind: GameKind) -> &'static Table {
    static TABLES: [OnceLock<Table>; 2] = [OnceLock::new(), OnceLock::new()];
    let index = match kind {
        GameKind::TicTacToe => 0,
        GameKind::Sos => 1,
    };
    TABLES[index].get_or_init(|| Table::solve(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "a sos position was looked up in the tic-tac-toe table")]
    fn a_position_of_the_other_game_is_refused() {
        let _ = table(GameKind::TicTacToe).value(&AnyGame::new(GameKind::Sos));
    }
}
