//! The contents of the nine cells, with no judgement about legality.

use core::fmt;

use crate::{Cell, CellSet, Mark};

/// What stands in each of the nine cells. A `Board` is plain data: any combination of marks
/// can be represented. It becomes a legal position only through
/// [`Game::from_board`](crate::Game::from_board), which says why when it cannot.
///
/// The `Display` form is the SOS contract's 9-character state string, `-` for an empty cell:
///
/// ```
/// use triad_rules::{Board, Cell, Mark};
/// let board = Board::EMPTY
///     .with(Cell::new(0).unwrap(), Mark::O)
///     .with(Cell::new(2).unwrap(), Mark::S);
/// assert_eq!(board.to_string(), "O-S------");
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Board {
    x: CellSet,
    o: CellSet,
    s: CellSet,
}

impl Board {
    /// The board with nothing on it.
    pub const EMPTY: Board = Board {
        x: CellSet::EMPTY,
        o: CellSet::EMPTY,
        s: CellSet::EMPTY,
    };

    /// The mark in `cell`, if any.
    #[must_use]
    pub const fn get(&self, cell: Cell) -> Option<Mark> {
        if self.x.contains(cell) {
            Some(Mark::X)
        } else if self.o.contains(cell) {
            Some(Mark::O)
        } else if self.s.contains(cell) {
            Some(Mark::S)
        } else {
            None
        }
    }

    /// The board with `cell` set to `mark` (replacing whatever was there).
    #[must_use]
    pub const fn with(self, cell: Cell, mark: Mark) -> Board {
        let cleared = self.without(cell);
        match mark {
            Mark::X => Board {
                x: cleared.x.with(cell),
                ..cleared
            },
            Mark::O => Board {
                o: cleared.o.with(cell),
                ..cleared
            },
            Mark::S => Board {
                s: cleared.s.with(cell),
                ..cleared
            },
        }
    }

    /// The board with `cell` emptied.
    #[must_use]
    pub const fn without(self, cell: Cell) -> Board {
        Board {
            x: self.x.without(cell),
            o: self.o.without(cell),
            s: self.s.without(cell),
        }
    }

    /// The cells holding `mark`.
    #[must_use]
    pub const fn cells_of(&self, mark: Mark) -> CellSet {
        match mark {
            Mark::X => self.x,
            Mark::O => self.o,
            Mark::S => self.s,
        }
    }

    /// The cells holding any mark.
    #[must_use]
    pub const fn occupied(&self) -> CellSet {
        self.x.union(self.o).union(self.s)
    }

    /// The empty cells.
    #[must_use]
    pub const fn empty_cells(&self) -> CellSet {
        self.occupied().complement()
    }

    /// The number of marks on the board (the ply count).
    #[must_use]
    pub const fn len(&self) -> u32 {
        self.occupied().len()
    }

    /// Whether no mark is on the board.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.occupied().is_empty()
    }

    /// Whether every cell holds a mark.
    #[must_use]
    pub const fn is_full(&self) -> bool {
        self.len() == 9
    }

    /// The nine cells' contents, in cell order.
    #[must_use]
    pub fn cells(&self) -> [Option<Mark>; 9] {
        Cell::ALL.map(|c| self.get(c))
    }

    /// The state-string character of each cell: the mark's letter or `-`.
    #[must_use]
    pub fn chars(&self) -> [char; 9] {
        Cell::ALL.map(|c| self.get(c).map_or('-', Mark::char))
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.chars() {
            fmt::Write::write_char(f, c)?;
        }
        Ok(())
    }
}
