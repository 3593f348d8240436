//! Property tests: random legal games and random garbage input, checked move by move
//! against the independent reference in `common`.

mod common;

use common::{RefBoard, RefEnd};
use proptest::prelude::*;
use triad_rules::{AnyGame, Game, Mark, Player, Sos, TicTacToe};

/// Plays a random legal game: each pick chooses an empty cell and one of the mover's letters
/// (both from the reference). After `k` moves the board holds `k` marks, the turn has
/// alternated, and the outcome is the reference's at every step.
fn random_legal_game<G: Game>(picks: &[(usize, usize)]) -> Result<(), TestCaseError> {
    let mut game = G::default();
    let mut any = AnyGame::new(G::KIND);
    let mut board: RefBoard = common::EMPTY;
    let mut end: Option<RefEnd> = None;
    for (k, &(cell_pick, letter_pick)) in picks.iter().enumerate() {
        if end.is_some() {
            break;
        }
        let expected_turn = if k % 2 == 0 {
            Player::First
        } else {
            Player::Second
        };
        prop_assert_eq!(game.turn(), expected_turn);
        let empty: Vec<usize> = (0..9).filter(|&c| board[c] == b'-').collect();
        let cell = empty[cell_pick % empty.len()];
        let letters = common::letters_for(G::KIND, k % 2);
        let letter = letters[letter_pick % letters.len()];
        let mark = common::mark_of(letter).unwrap();

        let (next, played) = game
            .play_as(expected_turn, cell as u8, mark)
            .map_err(|e| TestCaseError::fail(format!("legal move refused: {e:?}")))?;
        let (next_any, _) = any
            .play_as(expected_turn, cell as u8, mark)
            .map_err(|e| TestCaseError::fail(format!("AnyGame refused: {e:?}")))?;
        prop_assert_eq!(game.play(played), Ok(next));

        board[cell] = letter;
        end = common::end_after_move(G::KIND, &board, k % 2);
        prop_assert_eq!(next.board().len(), k as u32 + 1);
        prop_assert_eq!(common::observe(&next), (board, end));
        prop_assert_eq!(next.is_over(), end.is_some());
        prop_assert_eq!(next_any.outcome(), next.outcome());
        prop_assert_eq!(next_any.board(), next.board());
        prop_assert_eq!(next.to_string().parse::<G>(), Ok(next));
        game = next;
        any = next_any;
    }
    if end.is_some() {
        prop_assert!(game.legal_moves().is_empty());
    }
    Ok(())
}

/// Feeds arbitrary (cell byte, mark, player) triples: nothing panics, each is accepted or
/// refused exactly as the reference says (first fault in the documented order), and a
/// refused move changes nothing.
fn arbitrary_input<G: Game>(inputs: &[(u8, Mark, Player)]) -> Result<(), TestCaseError> {
    let mut game = G::default();
    let mut any = AnyGame::new(G::KIND);
    let mut board: RefBoard = common::EMPTY;
    let mut end: Option<RefEnd> = None;
    for &(cell, mark, by) in inputs {
        let by_index = common::player_index(by);
        let faults = common::faults(G::KIND, &board, end, by_index, cell, mark);
        let result = game.play_as(by, cell, mark);
        prop_assert_eq!(
            any.play_as(by, cell, mark).map(|(g, m)| (g.board(), m)),
            result.map(|(g, m)| (g.board(), m))
        );
        match (faults.first(), result) {
            (Some(&first), Err(e)) => prop_assert_eq!(e, first),
            (None, Ok((next, _))) => {
                board[usize::from(cell)] = common::letter(mark);
                end = common::end_after_move(G::KIND, &board, by_index);
                prop_assert_eq!(common::observe(&next), (board, end));
                game = next;
                any = any.play_as(by, cell, mark).unwrap().0;
            }
            (first, result) => {
                return Err(TestCaseError::fail(format!(
                    "expected {first:?}, got {result:?}"
                )));
            }
        }
        prop_assert_eq!(common::observe(&game), (board, end));
    }
    Ok(())
}

fn mark() -> impl Strategy<Value = Mark> {
    prop_oneof![Just(Mark::X), Just(Mark::O), Just(Mark::S)]
}

fn player() -> impl Strategy<Value = Player> {
    prop_oneof![Just(Player::First), Just(Player::Second)]
}

/// Mostly cells on the board, so that games progress, with any byte now and then.
fn cell_byte() -> impl Strategy<Value = u8> {
    prop_oneof![4 => 0u8..9, 1 => any::<u8>()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn tic_tac_toe_random_legal_games_match_the_reference(
        picks in prop::collection::vec((0usize..9, 0usize..2), 0..=10)
    ) {
        random_legal_game::<TicTacToe>(&picks)?;
    }

    #[test]
    fn sos_random_legal_games_match_the_reference(
        picks in prop::collection::vec((0usize..9, 0usize..2), 0..=10)
    ) {
        random_legal_game::<Sos>(&picks)?;
    }

    #[test]
    fn tic_tac_toe_arbitrary_input_never_panics_and_matches_the_reference(
        inputs in prop::collection::vec((cell_byte(), mark(), player()), 0..64)
    ) {
        arbitrary_input::<TicTacToe>(&inputs)?;
    }

    #[test]
    fn sos_arbitrary_input_never_panics_and_matches_the_reference(
        inputs in prop::collection::vec((cell_byte(), mark(), player()), 0..64)
    ) {
        arbitrary_input::<Sos>(&inputs)?;
    }

    #[test]
    fn arbitrary_state_strings_never_panic_and_accepted_ones_round_trip(
        s in "[-.XOSxos]{9}|.{0,12}"
    ) {
        if let Ok(game) = s.parse::<TicTacToe>() {
            prop_assert_eq!(game.to_string().parse::<TicTacToe>(), Ok(game));
        }
        if let Ok(game) = s.parse::<Sos>() {
            prop_assert_eq!(game.to_string().parse::<Sos>(), Ok(game));
        }
    }

    #[test]
    fn arbitrary_numbers_never_panic_and_accepted_ones_round_trip(
        n in prop_oneof![0u32..20_000, any::<u32>()]
    ) {
        if let Ok(game) = TicTacToe::from_position_number(n) {
            prop_assert_eq!(u32::from(game.position_number()), n);
        }
        if let Ok(game) = Sos::from_position_number(n) {
            prop_assert_eq!(u32::from(game.position_number()), n);
        }
        let out_of_range = Some(triad_rules::PositionError::NumberOutOfRange { number: n });
        prop_assert_eq!(TicTacToe::from_position_number(n).err() == out_of_range, n >= 19_683);
        prop_assert_eq!(Sos::from_position_number(n).err() == out_of_range, n >= 19_683);
    }
}
