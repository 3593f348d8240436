//! Tic-tac-toe's rules, one test per rule, with concrete games.

mod common;

use common::{RefEnd, play_out, win};
use triad_rules::{Cell, CellSet, Game, Mark, Move, MoveError, Outcome, Player, TicTacToe};

use Mark::{O, X};

fn mv(cell: u8, mark: Mark) -> Move {
    Move::new(Cell::new(cell).unwrap(), mark)
}

#[test]
fn x_moves_first() {
    let game = TicTacToe::default();
    assert_eq!(game.turn(), Player::First);
    assert_eq!(game.outcome(), None);
    let moves = game.legal_moves();
    assert_eq!(moves.len(), 9);
    assert!(moves.iter().all(|m| m.mark == X));
    assert_eq!(game.play(mv(4, O)), Err(MoveError::NotYourMark));
    assert_eq!(
        game.play_as(Player::Second, 4, O),
        Err(MoveError::NotYourTurn)
    );
    let (after, played) = game.play_as(Player::First, 4, X).unwrap();
    assert_eq!(played, mv(4, X));
    assert_eq!(after.to_string(), "----X----");
}

#[test]
fn x_and_o_alternate() {
    let moves = [(4, X), (0, O), (8, X), (2, O), (1, X), (7, O)];
    let mut game = TicTacToe::default();
    for (k, &(cell, mark)) in moves.iter().enumerate() {
        let expected = if k % 2 == 0 {
            Player::First
        } else {
            Player::Second
        };
        assert_eq!(game.turn(), expected);
        assert!(game.legal_moves().iter().all(|m| m.mark == mark));
        game = game.play(mv(cell, mark)).unwrap();
        assert_eq!(game.board().len(), k as u32 + 1);
    }
    assert_eq!(game.to_string(), "OXO-X--OX");
    assert_eq!(game.outcome(), None);
}

/// Three cells outside `line` that hold no line among themselves: X's harmless marks while
/// O completes `line`.
fn three_harmless_cells(line: [usize; 3]) -> [usize; 3] {
    let outside: Vec<usize> = (0..9).filter(|c| !line.contains(c)).collect();
    for (i, &a) in outside.iter().enumerate() {
        for (j, &b) in outside.iter().enumerate().skip(i + 1) {
            for &c in &outside[j + 1..] {
                let mut board = common::EMPTY;
                for k in [a, b, c] {
                    board[k] = b'X';
                }
                if common::lines_of(b'X', &board).is_empty() {
                    return [a, b, c];
                }
            }
        }
    }
    unreachable!("every line leaves three cells without a line")
}

#[test]
fn each_of_the_eight_lines_wins_for_x() {
    for line in common::lines() {
        let outside: Vec<usize> = (0..9).filter(|c| !line.contains(c)).collect();
        let seq = [
            (line[0], X),
            (outside[0], O),
            (line[1], X),
            (outside[1], O),
            (line[2], X),
        ];
        let seq: Vec<(u8, Mark)> = seq.iter().map(|&(c, m)| (c as u8, m)).collect();
        let game: TicTacToe = play_out(&seq);
        assert_eq!(
            game.outcome().map(common::to_ref_end),
            Some(win(0, &line)),
            "{line:?}"
        );
        assert_eq!(
            game.outcome().and_then(Outcome::winner),
            Some(Player::First)
        );
    }
}

#[test]
fn each_of_the_eight_lines_wins_for_o() {
    for line in common::lines() {
        let xs = three_harmless_cells(line);
        let seq = [
            (xs[0], X),
            (line[0], O),
            (xs[1], X),
            (line[1], O),
            (xs[2], X),
            (line[2], O),
        ];
        let seq: Vec<(u8, Mark)> = seq.iter().map(|&(c, m)| (c as u8, m)).collect();
        let game: TicTacToe = play_out(&seq);
        assert_eq!(
            game.outcome().map(common::to_ref_end),
            Some(win(1, &line)),
            "{line:?}"
        );
    }
}

#[test]
fn full_board_without_a_line_is_a_draw() {
    let seq = [
        (0, X),
        (4, O),
        (8, X),
        (2, O),
        (6, X),
        (3, O),
        (5, X),
        (7, O),
        (1, X),
    ];
    let game: TicTacToe = play_out(&seq);
    assert_eq!(game.to_string(), "XXOOOXXOX");
    assert_eq!(game.outcome(), Some(Outcome::Draw));
    assert_eq!(game.outcome().map(Outcome::cells), Some(CellSet::EMPTY));
    assert!(game.legal_moves().is_empty());
    assert_eq!("XXOOOXXOX".parse::<TicTacToe>(), Ok(game));
}

/// Regression for the HTML5 canvas game, whose page announced a full board as a draw even when the
/// ninth mark completed a line.
#[test]
fn ninth_mark_completing_a_line_wins_rather_than_draws() {
    let seq = [
        (0, X),
        (1, O),
        (2, X),
        (3, O),
        (4, X),
        (5, O),
        (7, X),
        (6, O),
        (8, X),
    ];
    let game: TicTacToe = play_out(&seq);
    assert_eq!(game.to_string(), "XOXOXOOXX");
    assert!(game.board().is_full());
    let expected = Outcome::Win {
        winner: Player::First,
        cells: CellSet::from_cells(&[0, 4, 8]),
    };
    assert_eq!(game.outcome(), Some(expected));
    assert_eq!(
        "XOXOXOOXX".parse::<TicTacToe>().map(|g| g.outcome()),
        Ok(Some(expected))
    );
}

#[test]
fn one_move_completing_a_row_and_a_column_reports_both() {
    // X's fifth mark in the corner completes the top row and the left column.
    let seq = [
        (1, X),
        (4, O),
        (2, X),
        (5, O),
        (3, X),
        (7, O),
        (6, X),
        (8, O),
        (0, X),
    ];
    let game: TicTacToe = play_out(&seq);
    assert_eq!(game.to_string(), "XXXXOOXOO");
    let expected = Outcome::Win {
        winner: Player::First,
        cells: CellSet::from_cells(&[0, 1, 2, 3, 6]),
    };
    assert_eq!(game.outcome(), Some(expected));
    assert_eq!(
        "XXXXOOXOO".parse::<TicTacToe>().map(|g| g.outcome()),
        Ok(Some(expected))
    );
}

#[test]
fn one_move_in_the_centre_completing_both_diagonals_reports_both() {
    let seq = [
        (0, X),
        (1, O),
        (8, X),
        (3, O),
        (2, X),
        (5, O),
        (6, X),
        (7, O),
        (4, X),
    ];
    let game: TicTacToe = play_out(&seq);
    assert_eq!(
        game.outcome().map(common::to_ref_end),
        Some(win(0, &[0, 2, 4, 6, 8]))
    );
}

#[test]
fn no_move_is_accepted_after_a_win_or_a_draw() {
    let won: TicTacToe = "XXXOO----".parse().unwrap();
    let drawn: TicTacToe = "XXOOOXXOX".parse().unwrap();
    assert_eq!(
        won.outcome().map(common::to_ref_end),
        Some(win(0, &[0, 1, 2]))
    );
    assert_eq!(drawn.outcome().map(common::to_ref_end), Some(RefEnd::Draw));
    for game in [won, drawn] {
        assert!(game.legal_moves().is_empty());
        for by in common::PLAYERS {
            for cell in 0..=255 {
                for mark in common::ALL_MARKS {
                    assert_eq!(game.check(by, cell, mark), Err(MoveError::GameOver));
                    assert_eq!(game.play_as(by, cell, mark), Err(MoveError::GameOver));
                }
            }
        }
    }
}
