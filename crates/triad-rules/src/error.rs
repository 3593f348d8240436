//! Typed errors with stable numeric codes.

use core::fmt;

/// Why a move was refused. Each variant has a stable numeric [`code`](MoveError::code):
/// 0-3 are the Sui contract's abort codes with the same meaning, 4 and up are Triad's additions.
/// The numbers never change; new mistakes get new numbers.
///
/// # Order of the checks
///
/// When a move is wrong in several ways, the first failing check in this order is reported:
///
/// 1. [`GameOver`](MoveError::GameOver) (0): the game has already ended.
/// 2. [`NotYourTurn`](MoveError::NotYourTurn) (2): the acting player is not the player to
///    move. This comes before the checks of the move itself, so a player who is not to move
///    learns that first, whatever else is wrong with the move. (The Sui contract checked occupancy
///    before the turn, which told an out-of-turn player that a cell was taken.)
/// 3. [`InvalidPosition`](MoveError::InvalidPosition) (1): the cell is not 0-8.
/// 4. [`MarkNotInGame`](MoveError::MarkNotInGame) (4): the game has no such mark (`S` in
///    tic-tac-toe, `X` in SOS).
/// 5. [`NotYourMark`](MoveError::NotYourMark) (5): the mark belongs to the other player
///    (tic-tac-toe only: `O` may not place an `X`).
/// 6. [`CellOccupied`](MoveError::CellOccupied) (3): the cell already holds a mark.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MoveError {
    /// The game has already ended. Code 0.
    GameOver,
    /// The cell is not one of 0-8. Code 1.
    InvalidPosition,
    /// The acting player is not the player to move. Code 2.
    NotYourTurn,
    /// The cell already holds a mark. Code 3.
    CellOccupied,
    /// The game has no such mark. Code 4.
    MarkNotInGame,
    /// The mark belongs to the other player. Code 5.
    NotYourMark,
}

impl MoveError {
    /// Every variant, in code order.
    pub const ALL: [MoveError; 6] = [
        MoveError::GameOver,
        MoveError::InvalidPosition,
        MoveError::NotYourTurn,
        MoveError::CellOccupied,
        MoveError::MarkNotInGame,
        MoveError::NotYourMark,
    ];

    /// The stable numeric code.
    #[must_use]
    pub const fn code(self) -> u16 {
        match self {
            MoveError::GameOver => 0,
            MoveError::InvalidPosition => 1,
            MoveError::NotYourTurn => 2,
            MoveError::CellOccupied => 3,
            MoveError::MarkNotInGame => 4,
            MoveError::NotYourMark => 5,
        }
    }

    /// The stable snake_case name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            MoveError::GameOver => "game_over",
            MoveError::InvalidPosition => "invalid_position",
            MoveError::NotYourTurn => "not_your_turn",
            MoveError::CellOccupied => "cell_occupied",
            MoveError::MarkNotInGame => "mark_not_in_game",
            MoveError::NotYourMark => "not_your_mark",
        }
    }

    /// What happened and what to do about it, in plain words.
    #[must_use]
    pub const fn message(self) -> &'static str {
        match self {
            MoveError::GameOver => "the game has already ended; start a new game to play again",
            MoveError::InvalidPosition => {
                "that cell does not exist; choose a cell from 0 to 8 (squares 1 to 9)"
            }
            MoveError::NotYourTurn => "it is not your turn; wait for your opponent to move",
            MoveError::CellOccupied => "that cell is already taken; choose an empty cell",
            MoveError::MarkNotInGame => {
                "this game has no such mark; tic-tac-toe uses X and O, SOS uses S and O"
            }
            MoveError::NotYourMark => "that mark is your opponent's; place your own mark",
        }
    }
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl core::error::Error for MoveError {}

/// Why a board cannot be read as a legal position.
///
/// When a board is wrong in several ways, the first reason in this order is reported:
/// [`WrongLength`](PositionError::WrongLength), [`InvalidChar`](PositionError::InvalidChar)
/// (left to right), [`MarkCounts`](PositionError::MarkCounts),
/// [`TwoWinners`](PositionError::TwoWinners), [`PlayAfterEnd`](PositionError::PlayAfterEnd).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PositionError {
    /// A state string must have exactly nine characters.
    WrongLength {
        /// The number of characters found.
        len: usize,
    },
    /// A character is neither `-` nor a mark of this game.
    InvalidChar {
        /// The 0-based index of the character.
        index: usize,
        /// The character found.
        ch: char,
    },
    /// Tic-tac-toe: X moves first, so there must be as many X as O, or one more.
    MarkCounts {
        /// The number of X.
        x: u8,
        /// The number of O.
        o: u8,
    },
    /// Both players have a line of three: one of them must have played after the end.
    TwoWinners,
    /// A move was made after the game had ended.
    PlayAfterEnd,
    /// A position number must be below 3^9 = 19683.
    NumberOutOfRange {
        /// The number given.
        number: u32,
    },
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PositionError::WrongLength { len } => write!(
                f,
                "a board has 9 cells, but {len} were given; write one character per cell, such as X-O------"
            ),
            PositionError::InvalidChar { index, ch } => write!(
                f,
                "cell {index} holds {ch:?}, which is not a mark of this game; use '-' for an empty cell"
            ),
            PositionError::MarkCounts { x, o } => write!(
                f,
                "{x} X and {o} O cannot happen: X moves first, so X must equal O or be one more"
            ),
            PositionError::TwoWinners => {
                f.write_str("both players have a line of three, which cannot happen in one game")
            }
            PositionError::PlayAfterEnd => {
                f.write_str("a move was made after the game had already been won")
            }
            PositionError::NumberOutOfRange { number } => write!(
                f,
                "position number {number} is too large; position numbers go from 0 to 19682"
            ),
        }
    }
}

impl core::error::Error for PositionError {}
