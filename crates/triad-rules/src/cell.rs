//! Cells (0-8, row-major from the top-left) and sets of cells.

use core::fmt;

/// One of the nine cells of the board, numbered 0-8 row-major from the top-left:
///
/// ```text
/// 0 | 1 | 2
/// 3 | 4 | 5
/// 6 | 7 | 8
/// ```
///
/// The SOS contract numbers squares 1-9; use [`Cell::from_square`] and [`Cell::square`] at that
/// interface.
///
/// ```
/// use triad_rules::Cell;
/// let centre = Cell::new(4).unwrap();
/// assert_eq!(centre.square(), 5);
/// assert_eq!(Cell::from_square(5), Some(centre));
/// assert_eq!(Cell::new(9), None);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "u8", into = "u8"))]
pub struct Cell(u8);

impl Cell {
    /// All nine cells in order.
    pub const ALL: [Cell; 9] = [
        Cell(0),
        Cell(1),
        Cell(2),
        Cell(3),
        Cell(4),
        Cell(5),
        Cell(6),
        Cell(7),
        Cell(8),
    ];

    /// The cell with index `index` (0-8), or `None` when out of range.
    #[must_use]
    pub const fn new(index: u8) -> Option<Cell> {
        if index < 9 { Some(Cell(index)) } else { None }
    }

    /// The cell for the SOS contract's square number (1-9).
    #[must_use]
    pub const fn from_square(square: u8) -> Option<Cell> {
        if square >= 1 && square <= 9 {
            Some(Cell(square - 1))
        } else {
            None
        }
    }

    /// The index, 0-8.
    #[must_use]
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The SOS contract's square number, 1-9.
    #[must_use]
    pub const fn square(self) -> u8 {
        self.0 + 1
    }

    /// Row 0-2 from the top.
    #[must_use]
    pub const fn row(self) -> u8 {
        self.0 / 3
    }

    /// Column 0-2 from the left.
    #[must_use]
    pub const fn col(self) -> u8 {
        self.0 % 3
    }

    pub(crate) const fn bit(self) -> u16 {
        1 << self.0
    }
}

/// The error for a cell index outside 0-8.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct InvalidCell(pub u8);

impl fmt::Display for InvalidCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cell {} does not exist; cells go from 0 to 8", self.0)
    }
}

impl core::error::Error for InvalidCell {}

impl TryFrom<u8> for Cell {
    type Error = InvalidCell;
    fn try_from(index: u8) -> Result<Self, Self::Error> {
        Cell::new(index).ok_or(InvalidCell(index))
    }
}

impl From<Cell> for u8 {
    fn from(cell: Cell) -> u8 {
        cell.0
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A set of cells, as a 9-bit mask (bit `i` is cell `i`).
///
/// ```
/// use triad_rules::{Cell, CellSet};
/// let diagonal = CellSet::from_cells(&[0, 4, 8]);
/// assert!(diagonal.contains(Cell::new(4).unwrap()));
/// assert_eq!(diagonal.len(), 3);
/// assert_eq!(diagonal.iter().map(|c| c.index()).collect::<Vec<_>>(), [0, 4, 8]);
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct CellSet(u16);

impl CellSet {
    /// The empty set.
    pub const EMPTY: CellSet = CellSet(0);
    /// All nine cells.
    pub const FULL: CellSet = CellSet(0x1ff);

    /// The set with the given bits; bits above 8 are dropped.
    #[must_use]
    pub const fn from_bits(bits: u16) -> CellSet {
        CellSet(bits & 0x1ff)
    }

    /// The set of the given cell indices; indices above 8 are ignored.
    #[must_use]
    pub const fn from_cells(cells: &[u8]) -> CellSet {
        let mut bits = 0u16;
        let mut i = 0;
        while i < cells.len() {
            if cells[i] < 9 {
                bits |= 1 << cells[i];
            }
            i += 1;
        }
        CellSet(bits)
    }

    /// The bits, bit `i` for cell `i`.
    #[must_use]
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// Whether `cell` is in the set.
    #[must_use]
    pub const fn contains(self, cell: Cell) -> bool {
        self.0 & cell.bit() != 0
    }

    /// The set with `cell` added.
    #[must_use]
    pub const fn with(self, cell: Cell) -> CellSet {
        CellSet(self.0 | cell.bit())
    }

    /// The set with `cell` removed.
    #[must_use]
    pub const fn without(self, cell: Cell) -> CellSet {
        CellSet(self.0 & !cell.bit())
    }

    /// The union of two sets.
    #[must_use]
    pub const fn union(self, other: CellSet) -> CellSet {
        CellSet(self.0 | other.0)
    }

    /// The intersection of two sets.
    #[must_use]
    pub const fn intersection(self, other: CellSet) -> CellSet {
        CellSet(self.0 & other.0)
    }

    /// The cells not in this set.
    #[must_use]
    pub const fn complement(self) -> CellSet {
        CellSet(!self.0 & 0x1ff)
    }

    /// Whether every cell of `self` is in `other`.
    #[must_use]
    pub const fn is_subset(self, other: CellSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The number of cells in the set.
    #[must_use]
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// The cells in increasing order.
    pub fn iter(self) -> impl Iterator<Item = Cell> + Clone {
        Cell::ALL.into_iter().filter(move |c| self.contains(*c))
    }
}

impl FromIterator<Cell> for CellSet {
    fn from_iter<I: IntoIterator<Item = Cell>>(iter: I) -> Self {
        iter.into_iter().fold(CellSet::EMPTY, CellSet::with)
    }
}

/// The eight lines of three: rows, columns, diagonals. Each is ordered so that its middle
/// cell is in the middle, which is what SOS needs.
pub const LINES: [[Cell; 3]; 8] = [
    [Cell(0), Cell(1), Cell(2)],
    [Cell(3), Cell(4), Cell(5)],
    [Cell(6), Cell(7), Cell(8)],
    [Cell(0), Cell(3), Cell(6)],
    [Cell(1), Cell(4), Cell(7)],
    [Cell(2), Cell(5), Cell(8)],
    [Cell(0), Cell(4), Cell(8)],
    [Cell(2), Cell(4), Cell(6)],
];

/// `LINE_MASKS[i]` is the set of `LINES[i]`.
pub(crate) const LINE_MASKS: [u16; 8] = {
    let mut masks = [0u16; 8];
    let mut i = 0;
    while i < 8 {
        masks[i] = LINES[i][0].bit() | LINES[i][1].bit() | LINES[i][2].bit();
        i += 1;
    }
    masks
};
