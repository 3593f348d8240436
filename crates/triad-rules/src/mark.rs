//! Marks placed on the board and the two players.

use core::fmt;

/// A mark on the board. Tic-tac-toe uses `X` and `O`; SOS uses `S` and `O`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Mark {
    /// A cross: tic-tac-toe's first player.
    X,
    /// A nought (tic-tac-toe's second player), or the middle letter of SOS.
    O,
    /// The outer letter of SOS.
    S,
}

impl Mark {
    /// The upper-case letter of the mark.
    #[must_use]
    pub const fn char(self) -> char {
        match self {
            Mark::X => 'X',
            Mark::O => 'O',
            Mark::S => 'S',
        }
    }

    /// The mark for a letter, in either case.
    ///
    /// ```
    /// use triad_rules::Mark;
    /// assert_eq!(Mark::from_char('s'), Some(Mark::S));
    /// assert_eq!(Mark::from_char('-'), None);
    /// ```
    #[must_use]
    pub const fn from_char(c: char) -> Option<Mark> {
        match c {
            'X' | 'x' => Some(Mark::X),
            'O' | 'o' => Some(Mark::O),
            'S' | 's' => Some(Mark::S),
            _ => None,
        }
    }
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.char())
    }
}

/// One of the two players. The first player moves first (`X` in tic-tac-toe).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Player {
    /// Moves on even plies (0, 2, ...): `X` in tic-tac-toe.
    First,
    /// Moves on odd plies: `O` in tic-tac-toe.
    Second,
}

impl Player {
    /// Both players, first first.
    pub const BOTH: [Player; 2] = [Player::First, Player::Second];

    /// The other player.
    #[must_use]
    pub const fn other(self) -> Player {
        match self {
            Player::First => Player::Second,
            Player::Second => Player::First,
        }
    }

    /// 0 for the first player, 1 for the second.
    #[must_use]
    pub const fn index(self) -> usize {
        match self {
            Player::First => 0,
            Player::Second => 1,
        }
    }

    /// The player who moves when `plies` marks are on the board.
    #[must_use]
    pub const fn to_move_after(plies: u32) -> Player {
        if plies.is_multiple_of(2) {
            Player::First
        } else {
            Player::Second
        }
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Player::First => "first player",
            Player::Second => "second player",
        })
    }
}
