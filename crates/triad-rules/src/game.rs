//! The game abstraction, its two implementations, and the run-time choice between them.

use core::{fmt, str::FromStr};

use arrayvec::ArrayVec;

use crate::{
    Board, Cell, CellSet, Mark, MoveError, Player, PositionError,
    cell::{LINE_MASKS, LINES},
};

/// A move: a mark placed in a cell.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Move {
    /// Where the mark goes.
    pub cell: Cell,
    /// What is placed.
    pub mark: Mark,
}

impl Move {
    /// A move placing `mark` in `cell`.
    #[must_use]
    pub const fn new(cell: Cell, mark: Mark) -> Move {
        Move { cell, mark }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in cell {}", self.mark, self.cell)
    }
}

/// The legal moves of a position. At most 18: two marks in each of nine cells.
pub type Moves = ArrayVec<Move, 18>;

/// How a finished game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// `winner` completed one or more lines; `cells` holds every cell of every line formed by
    /// the winning move (one move can complete two lines).
    Win {
        /// Who won.
        winner: Player,
        /// The cells of every winning line.
        cells: CellSet,
    },
    /// The board filled with no line: a draw (the SOS contract calls it a tie).
    Draw,
}

impl Outcome {
    /// The winner, if any.
    #[must_use]
    pub const fn winner(self) -> Option<Player> {
        match self {
            Outcome::Win { winner, .. } => Some(winner),
            Outcome::Draw => None,
        }
    }

    /// The winning cells (empty for a draw).
    #[must_use]
    pub const fn cells(self) -> CellSet {
        match self {
            Outcome::Win { cells, .. } => cells,
            Outcome::Draw => CellSet::EMPTY,
        }
    }
}

/// Which game is played.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum GameKind {
    /// Tic-tac-toe: X and O, three in a row wins.
    TicTacToe,
    /// SOS: either player places S or O; whoever first spells S-O-S in a line wins.
    Sos,
}

impl GameKind {
    /// Both games.
    pub const ALL: [GameKind; 2] = [GameKind::TicTacToe, GameKind::Sos];

    /// The stable name used on the wire and on the command line.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            GameKind::TicTacToe => "tic-tac-toe",
            GameKind::Sos => "sos",
        }
    }

    /// The marks a player may place in this game.
    #[must_use]
    pub const fn marks_for(self, player: Player) -> &'static [Mark] {
        match (self, player) {
            (GameKind::TicTacToe, Player::First) => &[Mark::X],
            (GameKind::TicTacToe, Player::Second) => &[Mark::O],
            (GameKind::Sos, _) => &[Mark::S, Mark::O],
        }
    }

    /// Whether the game uses `mark` at all.
    #[must_use]
    pub const fn has_mark(self, mark: Mark) -> bool {
        match self {
            GameKind::TicTacToe => matches!(mark, Mark::X | Mark::O),
            GameKind::Sos => matches!(mark, Mark::S | Mark::O),
        }
    }

    /// The digit of `mark` in the position number: empty 0, O 1, and 2 for the other mark
    /// (X in tic-tac-toe as in the HTML5 canvas game, S in SOS).
    const fn digit(mark: Option<Mark>) -> u16 {
        match mark {
            None => 0,
            Some(Mark::O) => 1,
            Some(Mark::X | Mark::S) => 2,
        }
    }

    const fn mark_of_digit(self, digit: u16) -> Option<Mark> {
        match (digit, self) {
            (1, _) => Some(Mark::O),
            (2, GameKind::TicTacToe) => Some(Mark::X),
            (2, GameKind::Sos) => Some(Mark::S),
            _ => None,
        }
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error for an unknown game name.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UnknownGame;

impl fmt::Display for UnknownGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown game; use tic-tac-toe or sos")
    }
}

impl core::error::Error for UnknownGame {}

impl FromStr for GameKind {
    type Err = UnknownGame;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tic-tac-toe" | "tictactoe" | "ttt" => Ok(GameKind::TicTacToe),
            "sos" | "SOS" => Ok(GameKind::Sos),
            _ => Err(UnknownGame),
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A legal position of a game, with the player to move and the outcome once it has ended.
///
/// Implemented by [`TicTacToe`] and [`Sos`]; [`AnyGame`] chooses between them at run time.
/// Positions are small `Copy` values; [`play`](Game::play) returns the next position.
///
/// ```
/// use triad_rules::{Cell, Game, Mark, Move, Outcome, Player, TicTacToe};
/// let mut game = TicTacToe::default();
/// for (cell, mark) in [(4, Mark::X), (0, Mark::O), (2, Mark::X), (1, Mark::O), (6, Mark::X)] {
///     game = game.play(Move::new(Cell::new(cell).unwrap(), mark)).unwrap();
/// }
/// assert_eq!(game.outcome().and_then(Outcome::winner), Some(Player::First));
/// assert_eq!(game.to_string(), "OOX-X-X--");
/// ```
pub trait Game:
    sealed::Sealed
    + Copy
    + Eq
    + core::hash::Hash
    + fmt::Debug
    + fmt::Display
    + Default
    + FromStr<Err = PositionError>
{
    /// Which game this is.
    const KIND: GameKind;

    /// The marks on the board.
    fn board(&self) -> Board;

    /// How the game ended, or `None` while it goes on.
    fn outcome(&self) -> Option<Outcome>;

    /// Reads a board as a position of this game, refusing impossible ones with the reason.
    ///
    /// # Errors
    /// [`PositionError`] when the board holds a mark of another game, when the mark counts
    /// are impossible, or when play went on after the end.
    fn from_board(board: Board) -> Result<Self, PositionError>;

    /// Places the move without checking it. For solvers iterating over
    /// [`legal_moves`](Game::legal_moves); the move must be legal, which is asserted in
    /// debug builds.
    #[must_use]
    fn play_unchecked(self, mv: Move) -> Self;

    /// The player to move (meaningful only while the game goes on).
    fn turn(&self) -> Player {
        Player::to_move_after(self.board().len())
    }

    /// Whether the game has ended.
    fn is_over(&self) -> bool {
        self.outcome().is_some()
    }

    /// Checks a move by `by`, in the documented order (see [`MoveError`]), and returns it as
    /// a checked [`Move`].
    ///
    /// # Errors
    /// The first [`MoveError`] that applies.
    fn check(&self, by: Player, cell: u8, mark: Mark) -> Result<Move, MoveError> {
        if self.is_over() {
            return Err(MoveError::GameOver);
        }
        if by != self.turn() {
            return Err(MoveError::NotYourTurn);
        }
        let Some(cell) = Cell::new(cell) else {
            return Err(MoveError::InvalidPosition);
        };
        if !Self::KIND.has_mark(mark) {
            return Err(MoveError::MarkNotInGame);
        }
        if !Self::KIND.marks_for(by).contains(&mark) {
            return Err(MoveError::NotYourMark);
        }
        if self.board().get(cell).is_some() {
            return Err(MoveError::CellOccupied);
        }
        Ok(Move { cell, mark })
    }

    /// Plays `mv` for the player to move.
    ///
    /// # Errors
    /// [`MoveError`] when the move is illegal; `self` is unchanged (it is `Copy`).
    fn play(self, mv: Move) -> Result<Self, MoveError> {
        let checked = self.check(self.turn(), mv.cell.index(), mv.mark)?;
        Ok(self.play_unchecked(checked))
    }

    /// Plays a move for `by`, checking that it is `by`'s turn.
    ///
    /// # Errors
    /// [`MoveError`] when the move is illegal.
    fn play_as(self, by: Player, cell: u8, mark: Mark) -> Result<(Self, Move), MoveError> {
        let checked = self.check(by, cell, mark)?;
        Ok((self.play_unchecked(checked), checked))
    }

    /// Every legal move, cell by cell; in SOS, `S` before `O` in each cell. Empty once the
    /// game has ended.
    fn legal_moves(&self) -> Moves {
        let mut moves = Moves::new();
        if self.is_over() {
            return moves;
        }
        let marks = Self::KIND.marks_for(self.turn());
        for cell in self.board().empty_cells().iter() {
            for &mark in marks {
                moves.push(Move { cell, mark });
            }
        }
        moves
    }

    /// The HTML5 canvas game's position number: cell `i` contributes `digit * 3^i`, with empty 0,
    /// `O` 1, and 2 for `X` (tic-tac-toe) or `S` (SOS).
    ///
    /// ```
    /// use triad_rules::{Game, TicTacToe};
    /// // The HTML5 canvas game's example board: x O . / x O O / . x x
    /// let game: TicTacToe = "XO-XOO-XX".parse().unwrap();
    /// assert_eq!(game.position_number(), 17879);
    /// ```
    fn position_number(&self) -> u16 {
        position_number(&self.board())
    }

    /// The position with the given [position number](Game::position_number).
    ///
    /// # Errors
    /// [`PositionError`] when the number is out of range or the position impossible.
    fn from_position_number(number: u32) -> Result<Self, PositionError> {
        Self::from_board(board_from_number(Self::KIND, number)?)
    }
}

/// The 9-character state string parsed for a game: `-` (or `.`) for empty, the game's marks
/// in either case.
pub(crate) fn parse_board(kind: GameKind, s: &str) -> Result<Board, PositionError> {
    let len = s.chars().count();
    if len != 9 {
        return Err(PositionError::WrongLength { len });
    }
    let mut board = Board::EMPTY;
    for (index, (ch, cell)) in s.chars().zip(Cell::ALL).enumerate() {
        match ch {
            '-' | '.' => {}
            _ => match Mark::from_char(ch) {
                Some(mark) if kind.has_mark(mark) => board = board.with(cell, mark),
                _ => return Err(PositionError::InvalidChar { index, ch }),
            },
        }
    }
    Ok(board)
}

pub(crate) fn position_number(board: &Board) -> u16 {
    Cell::ALL
        .iter()
        .rev()
        .fold(0u16, |acc, &c| acc * 3 + GameKind::digit(board.get(c)))
}

pub(crate) fn board_from_number(kind: GameKind, number: u32) -> Result<Board, PositionError> {
    if number >= 19683 {
        return Err(PositionError::NumberOutOfRange { number });
    }
    let mut n = number as u16;
    let mut board = Board::EMPTY;
    for cell in Cell::ALL {
        if let Some(mark) = kind.mark_of_digit(n % 3) {
            board = board.with(cell, mark);
        }
        n /= 3;
    }
    Ok(board)
}

/// The indices of the lines through each cell.
const LINES_THROUGH: [&[u8]; 9] = [
    &[0, 3, 6],
    &[0, 4],
    &[0, 5, 7],
    &[1, 3],
    &[1, 4, 6, 7],
    &[1, 5],
    &[2, 3, 7],
    &[2, 4],
    &[2, 5, 6],
];

/// The lines (as masks) a board forms, by a per-line predicate.
fn lines_formed(pred: impl Fn(usize) -> bool) -> ArrayVec<u16, 8> {
    (0..8).filter(|&i| pred(i)).map(|i| LINE_MASKS[i]).collect()
}

/// Checks that every formed line shares a cell (the last move), and returns their union.
fn single_last_move(lines: &[u16]) -> Result<CellSet, PositionError> {
    let common = lines.iter().fold(0x1ff, |acc, m| acc & m);
    if common == 0 {
        return Err(PositionError::PlayAfterEnd);
    }
    Ok(CellSet::from_bits(lines.iter().fold(0, |acc, m| acc | m)))
}

macro_rules! position_type {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name {
            board: Board,
            outcome: Option<Outcome>,
        }

        impl sealed::Sealed for $name {}

        impl fmt::Display for $name {
            /// The 9-character state string.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.board, f)
            }
        }

        impl FromStr for $name {
            type Err = PositionError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::from_board(parse_board($kind, s)?)
            }
        }
    };
}

position_type!(
    /// A tic-tac-toe position. X moves first; three in a row wins; a full board with no line
    /// is a draw. A line completed by the ninth mark is a win, not a draw.
    TicTacToe,
    GameKind::TicTacToe
);

position_type!(
    /// An SOS position (as in the SOS contract). Each turn a player places `S` or `O` in an empty
    /// cell; whoever spells S-O-S along a row, column or diagonal wins at once. A full board with
    /// no SOS is a tie.
    Sos,
    GameKind::Sos
);

impl Game for TicTacToe {
    const KIND: GameKind = GameKind::TicTacToe;

    fn board(&self) -> Board {
        self.board
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn from_board(board: Board) -> Result<Self, PositionError> {
        if !board.cells_of(Mark::S).is_empty() {
            let cell = board
                .cells_of(Mark::S)
                .iter()
                .next()
                .map_or(0, |c| c.index());
            return Err(PositionError::InvalidChar {
                index: usize::from(cell),
                ch: 'S',
            });
        }
        let (xs, os) = (board.cells_of(Mark::X), board.cells_of(Mark::O));
        let (x, o) = (xs.len() as u8, os.len() as u8);
        if !(x == o || x == o + 1) {
            return Err(PositionError::MarkCounts { x, o });
        }
        let x_lines = lines_formed(|i| LINE_MASKS[i] & xs.bits() == LINE_MASKS[i]);
        let o_lines = lines_formed(|i| LINE_MASKS[i] & os.bits() == LINE_MASKS[i]);
        let outcome = match (x_lines.is_empty(), o_lines.is_empty()) {
            (false, false) => return Err(PositionError::TwoWinners),
            (false, true) => {
                // X's winning mark must have been the last one placed.
                if x != o + 1 {
                    return Err(PositionError::PlayAfterEnd);
                }
                Some(Outcome::Win {
                    winner: Player::First,
                    cells: single_last_move(&x_lines)?,
                })
            }
            (true, false) => {
                if x != o {
                    return Err(PositionError::PlayAfterEnd);
                }
                Some(Outcome::Win {
                    winner: Player::Second,
                    cells: single_last_move(&o_lines)?,
                })
            }
            (true, true) => board.is_full().then_some(Outcome::Draw),
        };
        Ok(TicTacToe { board, outcome })
    }

    fn play_unchecked(self, mv: Move) -> Self {
        debug_assert!(self.outcome.is_none(), "move after the end");
        debug_assert!(self.board.get(mv.cell).is_none(), "cell occupied");
        debug_assert!(
            Self::KIND.marks_for(self.turn()).contains(&mv.mark),
            "wrong mark"
        );
        let mover = self.turn();
        let board = self.board.with(mv.cell, mv.mark);
        let mine = board.cells_of(mv.mark).bits();
        let cells = LINES_THROUGH[usize::from(mv.cell.index())]
            .iter()
            .map(|&i| LINE_MASKS[usize::from(i)])
            .filter(|&m| mine & m == m)
            .fold(0, |acc, m| acc | m);
        let outcome = if cells != 0 {
            Some(Outcome::Win {
                winner: mover,
                cells: CellSet::from_bits(cells),
            })
        } else if board.is_full() {
            Some(Outcome::Draw)
        } else {
            None
        };
        TicTacToe { board, outcome }
    }
}

/// Whether line `i` spells S-O-S on `board`.
fn is_sos(board: &Board, i: usize) -> bool {
    let [a, b, c] = LINES[i];
    let (s, o) = (board.cells_of(Mark::S), board.cells_of(Mark::O));
    s.contains(a) && o.contains(b) && s.contains(c)
}

impl Game for Sos {
    const KIND: GameKind = GameKind::Sos;

    fn board(&self) -> Board {
        self.board
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn from_board(board: Board) -> Result<Self, PositionError> {
        if !board.cells_of(Mark::X).is_empty() {
            let cell = board
                .cells_of(Mark::X)
                .iter()
                .next()
                .map_or(0, |c| c.index());
            return Err(PositionError::InvalidChar {
                index: usize::from(cell),
                ch: 'X',
            });
        }
        let lines = lines_formed(|i| is_sos(&board, i));
        let outcome = if lines.is_empty() {
            board.is_full().then_some(Outcome::Draw)
        } else {
            // Every SOS must run through the last mark placed, by whoever moved last.
            let cells = single_last_move(&lines)?;
            let last_mover = Player::to_move_after(board.len() - 1);
            Some(Outcome::Win {
                winner: last_mover,
                cells,
            })
        };
        Ok(Sos { board, outcome })
    }

    fn play_unchecked(self, mv: Move) -> Self {
        debug_assert!(self.outcome.is_none(), "move after the end");
        debug_assert!(self.board.get(mv.cell).is_none(), "cell occupied");
        debug_assert!(Self::KIND.has_mark(mv.mark), "wrong mark");
        let mover = self.turn();
        let board = self.board.with(mv.cell, mv.mark);
        let cells = LINES_THROUGH[usize::from(mv.cell.index())]
            .iter()
            .map(|&i| usize::from(i))
            .filter(|&i| is_sos(&board, i))
            .fold(0, |acc, i| acc | LINE_MASKS[i]);
        let outcome = if cells != 0 {
            Some(Outcome::Win {
                winner: mover,
                cells: CellSet::from_bits(cells),
            })
        } else if board.is_full() {
            Some(Outcome::Draw)
        } else {
            None
        };
        Sos { board, outcome }
    }
}

/// A position of either game, chosen at run time.
///
/// ```
/// use triad_rules::{AnyGame, GameKind, Mark};
/// let game = AnyGame::new(GameKind::Sos);
/// let (game, _) = game.play_as(game.turn(), 4, Mark::O).unwrap();
/// assert_eq!(game.to_string(), "----O----");
/// assert_eq!(AnyGame::parse(GameKind::Sos, "----O----"), Ok(game));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AnyGame {
    /// A tic-tac-toe position.
    TicTacToe(TicTacToe),
    /// An SOS position.
    Sos(Sos),
}

macro_rules! dispatch {
    ($self:expr, $g:ident => $e:expr) => {
        match $self {
            AnyGame::TicTacToe($g) => $e,
            AnyGame::Sos($g) => $e,
        }
    };
}

macro_rules! dispatch_wrap {
    ($self:expr, $g:ident => $e:expr) => {
        match $self {
            AnyGame::TicTacToe($g) => $e.map(AnyGame::TicTacToe),
            AnyGame::Sos($g) => $e.map(AnyGame::Sos),
        }
    };
}

impl AnyGame {
    /// The empty board of `kind`.
    #[must_use]
    pub fn new(kind: GameKind) -> AnyGame {
        match kind {
            GameKind::TicTacToe => AnyGame::TicTacToe(TicTacToe::default()),
            GameKind::Sos => AnyGame::Sos(Sos::default()),
        }
    }

    /// Which game this is.
    #[must_use]
    pub fn kind(&self) -> GameKind {
        match self {
            AnyGame::TicTacToe(_) => GameKind::TicTacToe,
            AnyGame::Sos(_) => GameKind::Sos,
        }
    }

    /// Parses a 9-character state string of `kind`.
    ///
    /// # Errors
    /// [`PositionError`] when the string is malformed or the position impossible.
    pub fn parse(kind: GameKind, s: &str) -> Result<AnyGame, PositionError> {
        match kind {
            GameKind::TicTacToe => s.parse().map(AnyGame::TicTacToe),
            GameKind::Sos => s.parse().map(AnyGame::Sos),
        }
    }

    /// Reads a board of `kind`.
    ///
    /// # Errors
    /// As [`Game::from_board`].
    pub fn from_board(kind: GameKind, board: Board) -> Result<AnyGame, PositionError> {
        match kind {
            GameKind::TicTacToe => TicTacToe::from_board(board).map(AnyGame::TicTacToe),
            GameKind::Sos => Sos::from_board(board).map(AnyGame::Sos),
        }
    }

    /// The position of `kind` with the given position number.
    ///
    /// # Errors
    /// As [`Game::from_position_number`].
    pub fn from_position_number(kind: GameKind, number: u32) -> Result<AnyGame, PositionError> {
        AnyGame::from_board(kind, board_from_number(kind, number)?)
    }

    /// The marks on the board.
    #[must_use]
    pub fn board(&self) -> Board {
        dispatch!(self, g => g.board())
    }

    /// How the game ended, if it has.
    #[must_use]
    pub fn outcome(&self) -> Option<Outcome> {
        dispatch!(self, g => g.outcome())
    }

    /// Whether the game has ended.
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.outcome().is_some()
    }

    /// The player to move.
    #[must_use]
    pub fn turn(&self) -> Player {
        dispatch!(self, g => g.turn())
    }

    /// See [`Game::check`].
    ///
    /// # Errors
    /// The first [`MoveError`] that applies.
    pub fn check(&self, by: Player, cell: u8, mark: Mark) -> Result<Move, MoveError> {
        dispatch!(self, g => g.check(by, cell, mark))
    }

    /// See [`Game::play`].
    ///
    /// # Errors
    /// [`MoveError`] when the move is illegal.
    pub fn play(self, mv: Move) -> Result<AnyGame, MoveError> {
        dispatch_wrap!(self, g => g.play(mv))
    }

    /// See [`Game::play_as`].
    ///
    /// # Errors
    /// [`MoveError`] when the move is illegal.
    pub fn play_as(self, by: Player, cell: u8, mark: Mark) -> Result<(AnyGame, Move), MoveError> {
        match self {
            AnyGame::TicTacToe(g) => g
                .play_as(by, cell, mark)
                .map(|(g, m)| (AnyGame::TicTacToe(g), m)),
            AnyGame::Sos(g) => g.play_as(by, cell, mark).map(|(g, m)| (AnyGame::Sos(g), m)),
        }
    }

    /// See [`Game::play_unchecked`].
    #[must_use]
    pub fn play_unchecked(self, mv: Move) -> AnyGame {
        match self {
            AnyGame::TicTacToe(g) => AnyGame::TicTacToe(g.play_unchecked(mv)),
            AnyGame::Sos(g) => AnyGame::Sos(g.play_unchecked(mv)),
        }
    }

    /// See [`Game::legal_moves`].
    #[must_use]
    pub fn legal_moves(&self) -> Moves {
        dispatch!(self, g => g.legal_moves())
    }

    /// See [`Game::position_number`].
    #[must_use]
    pub fn position_number(&self) -> u16 {
        dispatch!(self, g => g.position_number())
    }
}

impl From<TicTacToe> for AnyGame {
    fn from(g: TicTacToe) -> Self {
        AnyGame::TicTacToe(g)
    }
}

impl From<Sos> for AnyGame {
    fn from(g: Sos) -> Self {
        AnyGame::Sos(g)
    }
}

impl fmt::Display for AnyGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        dispatch!(self, g => fmt::Display::fmt(g, f))
    }
}

/// Positions serialize as `{"game": "sos", "board": "O-SOOS--S"}` and are checked again
/// when deserialized, so a stored position is always legal.
#[cfg(feature = "serde")]
mod serde_impls {
    use super::{AnyGame, GameKind};
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

    #[derive(Serialize, Deserialize)]
    struct Repr<'a> {
        game: GameKind,
        #[serde(borrow)]
        board: alloc_free::Str<'a>,
    }

    mod alloc_free {
        use core::fmt;
        use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

        /// A state string: borrowed when deserializing, a fixed buffer when serializing.
        pub(super) enum Str<'a> {
            Borrowed(&'a str),
            Owned([u8; 36], usize),
        }

        impl Str<'_> {
            pub(super) fn as_str(&self) -> &str {
                match self {
                    Str::Borrowed(s) => s,
                    Str::Owned(buf, len) => core::str::from_utf8(&buf[..*len]).unwrap_or(""),
                }
            }
        }

        impl Serialize for Str<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = Str<'de>;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a 9-character board string")
                    }
                    fn visit_borrowed_str<E: de::Error>(
                        self,
                        v: &'de str,
                    ) -> Result<Self::Value, E> {
                        Ok(Str::Borrowed(v))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                        let mut buf = [0u8; 36];
                        if v.len() > buf.len() {
                            return Err(E::custom("a board string has 9 characters"));
                        }
                        buf[..v.len()].copy_from_slice(v.as_bytes());
                        Ok(Str::Owned(buf, v.len()))
                    }
                }
                d.deserialize_str(V)
            }
        }
    }

    impl Serialize for AnyGame {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut buf = [0u8; 36];
            let mut len = 0;
            for ch in self.board().chars() {
                len += ch.encode_utf8(&mut buf[len..]).len();
            }
            Repr {
                game: self.kind(),
                board: alloc_free::Str::Owned(buf, len),
            }
            .serialize(s)
        }
    }

    impl<'de> Deserialize<'de> for AnyGame {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let repr = Repr::deserialize(d)?;
            AnyGame::parse(repr.game, repr.board.as_str()).map_err(D::Error::custom)
        }
    }
}
