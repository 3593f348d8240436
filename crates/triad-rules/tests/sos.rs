//! SOS's rules (as in the SOS contract), one test per rule, with concrete games.

mod common;

use common::{RefEnd, play_out, win};
use triad_rules::{Cell, CellSet, Game, Mark, Move, MoveError, Outcome, Player, Sos};

use Mark::{O, S};

#[test]
fn either_player_places_s_or_o_in_any_empty_cell() {
    let empty = Sos::default();
    assert_eq!(empty.turn(), Player::First);
    let expected: Vec<Move> = Cell::ALL
        .into_iter()
        .flat_map(|c| [Move::new(c, S), Move::new(c, O)])
        .collect();
    assert_eq!(empty.legal_moves().to_vec(), expected);
    // Both players may use both letters.
    let (after_o, _) = empty.play_as(Player::First, 0, O).unwrap();
    let (after_oo, _) = after_o.play_as(Player::Second, 8, O).unwrap();
    let (after_oos, _) = after_oo.play_as(Player::First, 4, S).unwrap();
    let (after_ooss, _) = after_oos.play_as(Player::Second, 2, S).unwrap();
    assert_eq!(after_ooss.to_string(), "O-S-S---O");
    assert_eq!(after_ooss.legal_moves().len(), 2 * 5);
    // But only on their turn.
    assert_eq!(
        empty.play_as(Player::Second, 0, S),
        Err(MoveError::NotYourTurn)
    );
}

/// Completing S-O-S on any line, with either letter, wins at once for whoever moves, even
/// when the other letters of the line were the opponent's.
#[test]
fn each_of_the_eight_lines_spelling_sos_wins_for_the_mover() {
    for line in common::lines() {
        let letters = [S, O, S];
        for completing in 0..3 {
            let others: Vec<(u8, Mark)> = (0..3)
                .filter(|&k| k != completing)
                .map(|k| (line[k] as u8, letters[k]))
                .collect();
            let last = (line[completing] as u8, letters[completing]);
            let filler = (0..9).find(|c| !line.contains(c)).unwrap() as u8;
            // The first player completes on the third mark, the second on the fourth.
            let first_wins = [others[0], others[1], last];
            let second_wins = [(filler, O), others[0], others[1], last];
            for (winner, seq) in [(0, &first_wins[..]), (1, &second_wins[..])] {
                let game: Sos = play_out(seq);
                assert_eq!(
                    game.outcome().map(common::to_ref_end),
                    Some(win(winner, &line)),
                    "{line:?} completed at {completing} by player {winner}"
                );
                assert!(game.legal_moves().is_empty());
            }
        }
    }
}

#[test]
fn oso_sss_and_ooo_are_not_sos_and_a_full_board_without_sos_is_a_tie() {
    // Rows OSO, SSS, OOO; every column and diagonal reads O-S-O, S-S-O or similar.
    let text = "OSOSSSOOO";
    let seq: Vec<(u8, Mark)> = text
        .bytes()
        .enumerate()
        .map(|(i, l)| (i as u8, common::mark_of(l).unwrap()))
        .collect();
    let game: Sos = play_out(&seq);
    assert_eq!(game.to_string(), text);
    assert_eq!(game.outcome(), Some(Outcome::Draw));
    assert_eq!(text.parse::<Sos>(), Ok(game));
}

#[test]
fn a_board_full_of_one_letter_is_a_tie() {
    for letter in [S, O] {
        let seq: Vec<(u8, Mark)> = (0..9).map(|c| (c, letter)).collect();
        let game: Sos = play_out(&seq);
        assert_eq!(game.outcome().map(common::to_ref_end), Some(RefEnd::Draw));
    }
}

#[test]
fn o_in_the_centre_between_two_s_pairs_forms_two_sos_and_reports_both() {
    let game: Sos = play_out(&[(3, S), (5, S), (1, S), (7, S), (4, O)]);
    assert_eq!(game.to_string(), "-S-SOS-S-");
    assert_eq!(
        game.outcome(),
        Some(Outcome::Win {
            winner: Player::First,
            cells: CellSet::from_cells(&[1, 3, 4, 5, 7]),
        })
    );
}

#[test]
fn s_in_a_corner_completing_a_row_and_a_column_reports_both() {
    let game: Sos = play_out(&[(1, O), (3, O), (2, S), (6, S), (0, S)]);
    assert_eq!(
        game.outcome().map(common::to_ref_end),
        Some(win(0, &[0, 1, 2, 3, 6]))
    );
}

#[test]
fn o_in_the_centre_of_eight_s_forms_four_sos_with_the_ninth_mark() {
    let mut seq: Vec<(u8, Mark)> = (0..9).filter(|&c| c != 4).map(|c| (c, S)).collect();
    seq.push((4, O));
    let game: Sos = play_out(&seq);
    assert!(game.board().is_full());
    assert_eq!(
        game.outcome(),
        Some(Outcome::Win {
            winner: Player::First,
            cells: CellSet::FULL,
        })
    );
}

#[test]
fn second_player_can_win_and_the_winner_is_whoever_moved() {
    let game: Sos = play_out(&[(0, S), (4, O), (2, O), (8, S)]);
    assert_eq!(
        game.outcome().map(common::to_ref_end),
        Some(win(1, &[0, 4, 8]))
    );
}

/// The SOS contract's figures 1(b) and 1(c): from `O-SOOS--S`, the current player places S in
/// square 7 and wins with the diagonal 3-5-7.
#[test]
fn the_sos_contracts_example_s_in_square_7_wins_with_the_diagonal() {
    let game: Sos = "O-SOOS--S".parse().unwrap();
    assert_eq!(game.turn(), Player::First);
    let square_7 = Cell::from_square(7).unwrap();
    assert_eq!(square_7.index(), 6);
    let (won, played) = game.play_as(Player::First, square_7.index(), S).unwrap();
    assert_eq!(played, Move::new(square_7, S));
    assert_eq!(won.to_string(), "O-SOOSS-S");
    let diagonal = [3, 5, 7].map(|sq| Cell::from_square(sq).unwrap());
    assert_eq!(
        won.outcome(),
        Some(Outcome::Win {
            winner: Player::First,
            cells: diagonal.into_iter().collect(),
        })
    );
    // Figure 1(c) read from its state string is the same finished game.
    assert_eq!("O-SOOSS-S".parse::<Sos>(), Ok(won));
    // An O there instead forms nothing.
    let (other, _) = game.play_as(Player::First, 6, O).unwrap();
    assert_eq!(other.outcome(), None);
}

#[test]
fn no_move_is_accepted_after_a_win_or_a_tie() {
    let won: Sos = "SOS------".parse().unwrap();
    let tied: Sos = "SSSSSSSSS".parse().unwrap();
    assert_eq!(
        won.outcome().map(common::to_ref_end),
        Some(win(0, &[0, 1, 2]))
    );
    assert_eq!(tied.outcome(), Some(Outcome::Draw));
    for game in [won, tied] {
        assert!(game.legal_moves().is_empty());
        for by in common::PLAYERS {
            for cell in 0..=255 {
                for mark in common::ALL_MARKS {
                    assert_eq!(game.play_as(by, cell, mark), Err(MoveError::GameOver));
                }
            }
        }
    }
}
