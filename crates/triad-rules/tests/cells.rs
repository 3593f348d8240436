//! Cells 0-8 row-major, the SOS contract's squares 1-9, cell sets, the eight lines, marks and
//! players.

mod common;

use std::collections::BTreeSet;

use triad_rules::{Board, Cell, CellSet, LINES, Mark, Player};

#[test]
fn cells_are_0_to_8_and_nothing_else() {
    for index in 0..=u8::MAX {
        let cell = Cell::new(index);
        assert_eq!(cell.is_some(), index < 9, "{index}");
        if let Some(cell) = cell {
            assert_eq!(cell.index(), index);
            assert_eq!(cell.to_string(), index.to_string());
            assert_eq!(Cell::ALL[usize::from(index)], cell);
        }
    }
}

#[test]
fn cells_are_numbered_row_major_from_the_top_left() {
    let grid = [[0, 1, 2], [3, 4, 5], [6, 7, 8]];
    for (row, cells) in grid.iter().enumerate() {
        for (col, &index) in cells.iter().enumerate() {
            let cell = Cell::new(index).unwrap();
            assert_eq!(
                (usize::from(cell.row()), usize::from(cell.col())),
                (row, col)
            );
        }
    }
}

#[test]
fn the_sos_contracts_squares_1_to_9_are_cells_0_to_8() {
    for square in 0..=u8::MAX {
        let cell = Cell::from_square(square);
        if (1..=9).contains(&square) {
            let cell = cell.unwrap();
            assert_eq!(cell.index(), square - 1);
            assert_eq!(cell.square(), square);
        } else {
            assert_eq!(cell, None, "{square}");
        }
    }
}

#[test]
fn lines_are_the_three_rows_three_columns_and_two_diagonals() {
    let crate_lines: BTreeSet<[usize; 3]> = LINES
        .iter()
        .map(|l| l.map(|c| usize::from(c.index())))
        .collect();
    let reference: BTreeSet<[usize; 3]> = common::lines().into_iter().collect();
    assert_eq!(LINES.len(), 8);
    assert_eq!(crate_lines, reference);
}

/// SOS reads a line as end, middle, end, so each line must list its middle cell second.
#[test]
fn each_line_lists_its_middle_cell_in_the_middle() {
    for [a, m, c] in LINES {
        assert_eq!(a.row() + c.row(), 2 * m.row(), "{a} {m} {c}");
        assert_eq!(a.col() + c.col(), 2 * m.col(), "{a} {m} {c}");
        assert_ne!(a, c);
    }
}

#[test]
fn cell_sets_agree_with_bit_arithmetic_for_all_512_sets() {
    for bits in 0..512u16 {
        let set = CellSet::from_bits(bits);
        assert_eq!(set.bits(), bits);
        let members: Vec<u8> = (0..9).filter(|i| bits & (1 << i) != 0).collect();
        assert_eq!(set.iter().map(Cell::index).collect::<Vec<_>>(), members);
        assert_eq!(CellSet::from_cells(&members), set);
        assert_eq!(set.iter().collect::<CellSet>(), set);
        assert_eq!(set.len(), members.len() as u32);
        assert_eq!(set.is_empty(), bits == 0);
        assert_eq!(set.complement().bits(), !bits & 0x1ff);
        for cell in Cell::ALL {
            let bit = 1 << cell.index();
            assert_eq!(set.contains(cell), bits & bit != 0);
            assert_eq!(set.with(cell).bits(), bits | bit);
            assert_eq!(set.without(cell).bits(), bits & !bit);
        }
        let other = CellSet::from_bits(bits.rotate_left(3) & 0x1ff);
        assert_eq!(set.union(other).bits(), bits | other.bits());
        assert_eq!(set.intersection(other).bits(), bits & other.bits());
        assert_eq!(set.is_subset(other), bits & !other.bits() == 0);
    }
    assert_eq!(CellSet::from_bits(0xffff), CellSet::FULL);
    assert_eq!(CellSet::from_cells(&[4, 9, 200]), CellSet::from_cells(&[4]));
    assert_eq!(CellSet::FULL.len(), 9);
    assert_eq!(CellSet::EMPTY.len(), 0);
}

#[test]
fn board_holds_one_mark_per_cell_and_prints_the_state_string() {
    let c = |i| Cell::new(i).unwrap();
    let board = Board::EMPTY
        .with(c(0), Mark::O)
        .with(c(2), Mark::S)
        .with(c(4), Mark::X)
        .with(c(4), Mark::O);
    assert_eq!(board.get(c(4)), Some(Mark::O));
    assert_eq!(board.cells_of(Mark::X), CellSet::EMPTY);
    assert_eq!(board.cells_of(Mark::O), CellSet::from_cells(&[0, 4]));
    assert_eq!(board.len(), 3);
    assert_eq!(board.to_string(), "O-S-O----");
    assert_eq!(board.without(c(0)).to_string(), "--S-O----");
    assert_eq!(
        board.empty_cells(),
        CellSet::from_cells(&[1, 3, 5, 6, 7, 8])
    );
    assert!(Board::EMPTY.is_empty());
    assert!(!board.is_full());
}

#[test]
fn marks_print_as_letters_and_parse_in_either_case() {
    for (mark, upper, lower) in [
        (Mark::X, 'X', 'x'),
        (Mark::O, 'O', 'o'),
        (Mark::S, 'S', 's'),
    ] {
        assert_eq!(mark.char(), upper);
        assert_eq!(mark.to_string(), upper.to_string());
        assert_eq!(Mark::from_char(upper), Some(mark));
        assert_eq!(Mark::from_char(lower), Some(mark));
    }
    for ch in ['-', '.', '0', ' ', 'Z'] {
        assert_eq!(Mark::from_char(ch), None);
    }
}

#[test]
fn players_alternate_by_ply() {
    assert_eq!(Player::BOTH, [Player::First, Player::Second]);
    assert_eq!(Player::First.other(), Player::Second);
    assert_eq!(Player::Second.other(), Player::First);
    assert_eq!(Player::First.index(), 0);
    assert_eq!(Player::Second.index(), 1);
    for plies in 0..10 {
        let expected = if plies % 2 == 0 {
            Player::First
        } else {
            Player::Second
        };
        assert_eq!(Player::to_move_after(plies), expected);
    }
}
