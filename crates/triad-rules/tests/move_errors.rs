//! Move errors: stable codes, names and messages; the documented order of the checks; and
//! `legal_moves` against every possible (player, cell, mark) input on every reachable
//! position.

mod common;

use std::collections::BTreeSet;

use common::CHECK_ORDER;
use triad_rules::{Cell, Game, GameKind, Mark, Move, MoveError, Player, Sos, TicTacToe};

#[test]
fn codes_names_and_messages_are_stable() {
    let table = [
        (
            MoveError::GameOver,
            0,
            "game_over",
            "the game has already ended; start a new game to play again",
        ),
        (
            MoveError::InvalidPosition,
            1,
            "invalid_position",
            "that cell does not exist; choose a cell from 0 to 8 (squares 1 to 9)",
        ),
        (
            MoveError::NotYourTurn,
            2,
            "not_your_turn",
            "it is not your turn; wait for your opponent to move",
        ),
        (
            MoveError::CellOccupied,
            3,
            "cell_occupied",
            "that cell is already taken; choose an empty cell",
        ),
        (
            MoveError::MarkNotInGame,
            4,
            "mark_not_in_game",
            "this game has no such mark; tic-tac-toe uses X and O, SOS uses S and O",
        ),
        (
            MoveError::NotYourMark,
            5,
            "not_your_mark",
            "that mark is your opponent's; place your own mark",
        ),
    ];
    assert_eq!(MoveError::ALL.to_vec(), table.map(|row| row.0).to_vec());
    for (error, code, name, message) in table {
        assert_eq!(error.code(), code);
        assert_eq!(error.name(), name);
        assert_eq!(error.message(), message);
        assert_eq!(error.to_string(), message);
    }
}

/// The Sui contract's abort codes keep their meaning: 0 game ended, 1 invalid position, 2 not your
/// turn, 3 cell occupied.
#[test]
fn codes_0_to_3_mean_what_they_mean_in_the_sui_contract() {
    let x_won: TicTacToe = "XXXOO----".parse().unwrap();
    let fresh = TicTacToe::default();
    let x_played: TicTacToe = "X--------".parse().unwrap();
    let code = |r: Result<_, MoveError>| r.map(|_| ()).unwrap_err().code();
    assert_eq!(code(x_won.play_as(Player::Second, 8, Mark::O)), 0);
    assert_eq!(code(fresh.play_as(Player::First, 9, Mark::X)), 1);
    assert_eq!(code(fresh.play_as(Player::Second, 0, Mark::O)), 2);
    assert_eq!(code(x_played.play_as(Player::Second, 0, Mark::O)), 3);
}

/// One case per pair of faults that can occur together: the move has exactly these two
/// faults, and the one checked first is reported. Two pairs cannot occur together (a cell
/// outside the board is never occupied; a mark not in the game is nobody's mark).
#[test]
fn each_pair_of_faults_reports_the_one_checked_first() {
    use Mark::{O, S, X};
    use MoveError::*;
    use Player::{First, Second};
    let ttt = GameKind::TicTacToe;
    let sos = GameKind::Sos;
    // (game, position, acting player, cell, mark, [first fault, second fault])
    let cases = [
        (ttt, "XXXOO----", First, 8, X, [GameOver, NotYourTurn]),
        (ttt, "XXXOO----", Second, 9, O, [GameOver, InvalidPosition]),
        (ttt, "XXXOO----", Second, 8, S, [GameOver, MarkNotInGame]),
        (ttt, "XXXOO----", Second, 8, X, [GameOver, NotYourMark]),
        (ttt, "XXXOO----", Second, 0, O, [GameOver, CellOccupied]),
        (sos, "SOS------", First, 5, O, [GameOver, NotYourTurn]),
        (
            sos,
            "SOS------",
            Second,
            255,
            S,
            [GameOver, InvalidPosition],
        ),
        (sos, "SOS------", Second, 5, X, [GameOver, MarkNotInGame]),
        (sos, "SOS------", Second, 1, O, [GameOver, CellOccupied]),
        (
            ttt,
            "---------",
            Second,
            9,
            O,
            [NotYourTurn, InvalidPosition],
        ),
        (ttt, "---------", Second, 0, S, [NotYourTurn, MarkNotInGame]),
        (ttt, "---------", Second, 0, X, [NotYourTurn, NotYourMark]),
        (ttt, "X--------", First, 0, X, [NotYourTurn, CellOccupied]),
        (
            sos,
            "S--------",
            First,
            9,
            S,
            [NotYourTurn, InvalidPosition],
        ),
        (sos, "S--------", First, 1, X, [NotYourTurn, MarkNotInGame]),
        (sos, "S--------", First, 0, O, [NotYourTurn, CellOccupied]),
        (
            ttt,
            "---------",
            First,
            9,
            S,
            [InvalidPosition, MarkNotInGame],
        ),
        (
            ttt,
            "X--------",
            Second,
            100,
            X,
            [InvalidPosition, NotYourMark],
        ),
        (
            sos,
            "---------",
            First,
            9,
            X,
            [InvalidPosition, MarkNotInGame],
        ),
        (
            ttt,
            "X--------",
            Second,
            0,
            S,
            [MarkNotInGame, CellOccupied],
        ),
        (
            sos,
            "S--------",
            Second,
            0,
            X,
            [MarkNotInGame, CellOccupied],
        ),
        (ttt, "X--------", Second, 0, X, [NotYourMark, CellOccupied]),
        (ttt, "XO-------", First, 1, O, [NotYourMark, CellOccupied]),
    ];
    let mut pairs = BTreeSet::new();
    for (kind, text, by, cell, mark, expected) in cases {
        let board = common::from_text(text);
        let end = common::reachable(kind)[&board];
        let by_index = common::player_index(by);
        // The table itself is right: the move has exactly these faults.
        let faults = common::faults(kind, &board, end, by_index, cell, mark);
        assert_eq!(faults, expected, "{kind} {text} {by:?} {cell} {mark}");
        pairs.insert(expected.map(MoveError::code));
        let result = match kind {
            GameKind::TicTacToe => text.parse::<TicTacToe>().unwrap().check(by, cell, mark),
            GameKind::Sos => text.parse::<Sos>().unwrap().check(by, cell, mark),
        };
        assert_eq!(
            result,
            Err(expected[0]),
            "{kind} {text} {by:?} {cell} {mark}"
        );
    }
    // Every pair that can happen is covered: 15 pairs of 6 checks, less the 2 impossible.
    assert_eq!(pairs.len(), 13);
}

/// Which pairs of faults were seen together in [`check_agrees_with_the_reference_everywhere`].
type PairsSeen = BTreeSet<(u16, u16)>;

/// For every reachable position, both acting players, every cell byte 0-255 and every mark:
/// `check` and `play_as` report the first fault in the documented order, or accept the move;
/// the accepted moves are exactly `legal_moves` (for the player to move); `play` agrees for
/// every `Move` value; and an accepted move yields the reference's next position.
fn check_agrees_with_the_reference_everywhere<G: Game>(pairs: &mut PairsSeen) {
    for (board, end) in common::reachable_sorted(G::KIND) {
        let game: G = common::text(&board).parse().unwrap();
        let legal = game.legal_moves();
        let mut accepted = Vec::new();
        for by in common::PLAYERS {
            for cell in 0..=u8::MAX {
                for mark in common::ALL_MARKS {
                    let faults =
                        common::faults(G::KIND, &board, end, common::player_index(by), cell, mark);
                    for (i, a) in faults.iter().enumerate() {
                        for b in &faults[i + 1..] {
                            pairs.insert((a.code(), b.code()));
                        }
                    }
                    let context = || format!("{} {by:?} {cell} {mark}", common::text(&board));
                    let result = game.play_as(by, cell, mark);
                    assert_eq!(
                        result.map(|(_, m)| m),
                        game.check(by, cell, mark),
                        "{}",
                        context()
                    );
                    match (faults.first(), result) {
                        (Some(&first), Err(e)) => assert_eq!(e, first, "{}", context()),
                        (None, Ok((next, played))) => {
                            let expected = Move::new(Cell::new(cell).unwrap(), mark);
                            assert_eq!(played, expected, "{}", context());
                            let mut next_board = board;
                            next_board[usize::from(cell)] = common::letter(mark);
                            let next_end = common::reachable(G::KIND)[&next_board];
                            assert_eq!(common::observe(&next), (next_board, next_end));
                            accepted.push(played);
                        }
                        (Some(first), Ok(_)) => {
                            panic!("{}: accepted, expected {first:?}", context())
                        }
                        (None, Err(e)) => panic!("{}: refused with {e:?}, expected Ok", context()),
                    }
                }
            }
        }
        // Same set; the order of `legal_moves` is checked by the tests below.
        let key = |m: &Move| (m.cell.index(), common::letter(m.mark));
        let mut legal = legal.to_vec();
        accepted.sort_by_key(key);
        legal.sort_by_key(key);
        assert_eq!(accepted, legal, "{}", common::text(&board));
        for cell in Cell::ALL {
            for mark in common::ALL_MARKS {
                let mv = Move::new(cell, mark);
                let by_turn = game.play_as(game.turn(), cell.index(), mark);
                assert_eq!(game.play(mv), by_turn.map(|(g, _)| g));
            }
        }
    }
}

#[test]
fn check_play_and_legal_moves_agree_with_the_reference_on_every_input() {
    let mut pairs = PairsSeen::new();
    check_agrees_with_the_reference_everywhere::<TicTacToe>(&mut pairs);
    check_agrees_with_the_reference_everywhere::<Sos>(&mut pairs);
    // The sweep really did exercise every pair of faults that can happen together.
    let impossible = [
        (MoveError::InvalidPosition, MoveError::CellOccupied),
        (MoveError::MarkNotInGame, MoveError::NotYourMark),
    ];
    for (i, a) in CHECK_ORDER.iter().enumerate() {
        for b in &CHECK_ORDER[i + 1..] {
            let pair = (a.code(), b.code());
            assert_eq!(
                pairs.contains(&pair),
                !impossible.contains(&(*a, *b)),
                "{a:?} {b:?}"
            );
        }
    }
}

/// `legal_moves` lists the empty cells in order, each with the mover's marks (S before O in
/// SOS), and nothing once the game has ended.
fn legal_moves_are_the_empty_cells_times_the_movers_marks<G: Game>() {
    for (board, end) in common::reachable_sorted(G::KIND) {
        let game: G = common::text(&board).parse().unwrap();
        let expected: Vec<(usize, u8)> = match end {
            Some(_) => Vec::new(),
            None => (0..9)
                .filter(|&c| board[c] == b'-')
                .flat_map(|c| {
                    common::letters_for(G::KIND, common::mover(&board))
                        .iter()
                        .map(move |&l| (c, l))
                })
                .collect(),
        };
        let actual: Vec<(usize, u8)> = game
            .legal_moves()
            .iter()
            .map(|m| (usize::from(m.cell.index()), common::letter(m.mark)))
            .collect();
        assert_eq!(actual, expected, "{}", common::text(&board));
    }
}

#[test]
fn tic_tac_toe_legal_moves_are_the_empty_cells_with_the_movers_mark() {
    legal_moves_are_the_empty_cells_times_the_movers_marks::<TicTacToe>();
}

#[test]
fn sos_legal_moves_are_the_empty_cells_with_s_then_o() {
    legal_moves_are_the_empty_cells_times_the_movers_marks::<Sos>();
}

/// A refused move cannot change the position: `play` and `play_as` take the position by
/// value (positions are `Copy`) and the error carries only a `MoveError`. This pins that
/// contract (it stops compiling if positions stop being `Copy` or `play_as` starts returning
/// a different error) and checks the position plays on as if nothing happened.
#[test]
fn a_refused_move_leaves_the_position_unchanged() {
    fn assert_copy<T: Copy>() {}
    assert_copy::<TicTacToe>();
    assert_copy::<Sos>();
    assert_copy::<triad_rules::AnyGame>();
    let game: TicTacToe = "X---O----".parse().unwrap();
    for (by, cell, mark) in [
        (Player::Second, 1, Mark::O),
        (Player::First, 4, Mark::X),
        (Player::First, 9, Mark::X),
        (Player::First, 1, Mark::S),
        (Player::First, 1, Mark::O),
    ] {
        let refused: MoveError = game.play_as(by, cell, mark).unwrap_err();
        assert!(refused.code() <= 5);
        assert_eq!(game.to_string(), "X---O----");
        assert_eq!(game.turn(), Player::First);
        assert_eq!(game.legal_moves().len(), 7);
    }
    let (next, _) = game.play_as(Player::First, 8, Mark::X).unwrap();
    assert_eq!(next.to_string(), "X---O---X");
}
