//! The two notations: the SOS contract's 9-character state string and the HTML5 canvas game's
//! position number.

mod common;

use common::BOARDS;
use triad_rules::{AnyGame, Board, Cell, Game, GameKind, Mark, PositionError, Sos, TicTacToe};

/// Every reachable position prints as the reference's state string, and that string (and the
/// printed one) parses back to the same position, through the concrete type and `AnyGame`.
fn state_string_round_trips<G: Game>() {
    for (board, end) in common::reachable_sorted(G::KIND) {
        let text = common::text(&board);
        let game: G = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(common::observe(&game), (board, end), "{text}");
        assert_eq!(game.to_string(), text);
        assert_eq!(game.board().to_string(), text);
        assert_eq!(game.to_string().parse::<G>(), Ok(game));
        let any = AnyGame::parse(G::KIND, &text).map(|g| (g.board(), g.outcome()));
        assert_eq!(any, Ok((game.board(), game.outcome())));
    }
}

#[test]
fn tic_tac_toe_state_string_round_trips_over_every_reachable_position() {
    state_string_round_trips::<TicTacToe>();
}

#[test]
fn sos_state_string_round_trips_over_every_reachable_position() {
    state_string_round_trips::<Sos>();
}

/// Every reachable position's number is the reference's, and decodes back to the position.
fn position_number_round_trips<G: Game>() {
    for (board, _) in common::reachable_sorted(G::KIND) {
        let game: G = common::text(&board).parse().unwrap();
        let n = common::number(&board);
        assert_eq!(
            u32::from(game.position_number()),
            n,
            "{}",
            common::text(&board)
        );
        assert_eq!(G::from_position_number(n), Ok(game));
        assert_eq!(
            AnyGame::from_position_number(G::KIND, n).map(|g| g.board()),
            Ok(game.board())
        );
    }
}

#[test]
fn tic_tac_toe_position_number_round_trips_over_every_reachable_position() {
    position_number_round_trips::<TicTacToe>();
}

#[test]
fn sos_position_number_round_trips_over_every_reachable_position() {
    position_number_round_trips::<Sos>();
}

/// Every number below 3^9 decodes to the reference's board and either gives a position whose
/// number is itself, or is refused with the reason `from_board` gives for that board.
fn every_number_decodes_to_itself_or_is_refused<G: Game>() {
    let mut accepted = 0;
    for n in 0..BOARDS {
        let board = common::board_of_number(G::KIND, n);
        let decoded = G::from_position_number(n);
        assert_eq!(decoded, G::from_board(common::to_board(&board)), "{n}");
        match decoded {
            Ok(game) => {
                accepted += 1;
                assert_eq!(u32::from(game.position_number()), n);
                assert_eq!(common::from_board(&game.board()), board);
            }
            Err(e) => assert!(
                matches!(
                    e,
                    PositionError::MarkCounts { .. }
                        | PositionError::TwoWinners
                        | PositionError::PlayAfterEnd
                ),
                "{n}: {e:?}"
            ),
        }
    }
    assert_eq!(accepted, common::reachable(G::KIND).len());
}

#[test]
fn tic_tac_toe_every_number_below_19683_decodes_to_itself_or_is_refused() {
    every_number_decodes_to_itself_or_is_refused::<TicTacToe>();
}

#[test]
fn sos_every_number_below_19683_decodes_to_itself_or_is_refused() {
    every_number_decodes_to_itself_or_is_refused::<Sos>();
}

#[test]
fn numbers_from_19683_up_are_refused_as_out_of_range() {
    for number in [
        19_683,
        19_684,
        20_000,
        59_048,
        65_535,
        65_536,
        1 << 20,
        u32::MAX,
    ] {
        let refused = Some(PositionError::NumberOutOfRange { number });
        assert_eq!(TicTacToe::from_position_number(number).err(), refused);
        assert_eq!(Sos::from_position_number(number).err(), refused);
        for kind in common::KINDS {
            assert_eq!(AnyGame::from_position_number(kind, number).err(), refused);
        }
    }
    assert_eq!(
        PositionError::NumberOutOfRange { number: 19_683 }.to_string(),
        "position number 19683 is too large; position numbers go from 0 to 19682"
    );
}

#[test]
fn the_move_tables_example_board_is_position_17879() {
    // The HTML5 canvas game's example: "x O . / x O O / . x x" is the ternary number 220112012
    // (cell 8 first).
    assert_eq!(u32::from_str_radix("220112012", 3), Ok(17_879));
    let game: TicTacToe = "XO-XOO-XX".parse().unwrap();
    assert_eq!(game.position_number(), 17_879);
    assert_eq!(TicTacToe::from_position_number(17_879), Ok(game));
    // That game writes the board with lower-case x and dots; the parser accepts both.
    assert_eq!("xO.xOO.xx".parse::<TicTacToe>(), Ok(game));
    // The HTML5 canvas game's recommended reply, cell 6, blocks the column; the position goes on.
    let blocked = game
        .play(triad_rules::Move::new(Cell::new(6).unwrap(), Mark::O))
        .unwrap();
    assert_eq!(blocked.to_string(), "XO-XOOOXX");
    assert_eq!(blocked.outcome(), None);
}

#[test]
fn position_number_digits_are_empty_0_o_1_x_or_s_2_least_significant_first() {
    let ttt = |s: &str| s.parse::<TicTacToe>().unwrap().position_number();
    let sos = |s: &str| s.parse::<Sos>().unwrap().position_number();
    assert_eq!(ttt("---------"), 0);
    assert_eq!(ttt("X--------"), 2);
    assert_eq!(ttt("X-------O"), 2 + 6561);
    assert_eq!(ttt("XO-------"), 2 + 3);
    assert_eq!(sos("O--------"), 1);
    assert_eq!(sos("S--------"), 2);
    assert_eq!(sos("--------S"), 2 * 6561);
    assert_eq!(sos("SSSSSSSSS"), 19_682);
    assert_eq!(sos("OOOOOOOOO"), 19_682 / 2);
}

#[test]
fn the_sos_contracts_example_state_string_reads_square_by_square() {
    let game: Sos = "O-SOOS--S".parse().unwrap();
    assert_eq!(game.outcome(), None);
    let at = |square| game.board().get(Cell::from_square(square).unwrap());
    assert_eq!(at(1), Some(Mark::O));
    assert_eq!(at(2), None);
    assert_eq!(at(3), Some(Mark::S));
    assert_eq!(at(6), Some(Mark::S));
    assert_eq!(at(7), None);
    assert_eq!(at(9), Some(Mark::S));
    assert_eq!(game.to_string(), "O-SOOS--S");
}

#[test]
fn parser_accepts_lower_case_marks_and_dots_and_prints_upper_case_and_dashes() {
    assert_eq!(
        "x.o......".parse::<TicTacToe>().unwrap().to_string(),
        "X-O------"
    );
    assert_eq!("s.o......".parse::<Sos>().unwrap().to_string(), "S-O------");
}

#[test]
fn wrong_length_is_refused_with_the_number_of_characters() {
    for s in [
        "",
        "X",
        "O-SOOS--",
        "O-SOOS--S-",
        "-----------------",
        "é-------",
        "---------\n",
    ] {
        let len = s.chars().count();
        let refused = Some(PositionError::WrongLength { len });
        assert_eq!(s.parse::<TicTacToe>().err(), refused, "{s:?}");
        assert_eq!(s.parse::<Sos>().err(), refused, "{s:?}");
        for kind in common::KINDS {
            assert_eq!(AnyGame::parse(kind, s).err(), refused, "{s:?}");
        }
    }
    // Nine characters, more than nine bytes: the length is counted in characters.
    assert_eq!(
        "é--------".parse::<TicTacToe>(),
        Err(PositionError::InvalidChar { index: 0, ch: 'é' })
    );
}

#[test]
fn bad_character_is_refused_with_its_index() {
    let ttt = [
        ("S--------", 0, 'S'),
        ("X---s----", 4, 's'),
        ("XO------ ", 8, ' '),
        ("XO-0-----", 3, '0'),
        ("X_-------", 1, '_'),
    ];
    for (s, index, ch) in ttt {
        assert_eq!(
            s.parse::<TicTacToe>(),
            Err(PositionError::InvalidChar { index, ch }),
            "{s}"
        );
    }
    let sos = [
        ("X--------", 0, 'X'),
        ("SO---x---", 5, 'x'),
        ("SOS-OSO-Z", 8, 'Z'),
    ];
    for (s, index, ch) in sos {
        assert_eq!(
            s.parse::<Sos>(),
            Err(PositionError::InvalidChar { index, ch }),
            "{s}"
        );
    }
    // The first bad character is reported.
    assert_eq!(
        "-S--S--S-".parse::<TicTacToe>(),
        Err(PositionError::InvalidChar { index: 1, ch: 'S' })
    );
}

/// Every ASCII character and a few look-alikes: only `-`, `.` and the game's letters (either
/// case) are read; anything else is refused where it stands.
#[test]
fn only_dash_dot_and_the_games_letters_are_read() {
    let look_alikes = ['é', 'Ｘ', 'О', 'ѕ', '\u{2212}', '\u{00a0}', '\u{0}'];
    for ch in (0..=0x7f).map(char::from).chain(look_alikes) {
        let s = format!("----{ch}----");
        for (kind, readable) in [(GameKind::TicTacToe, "-.XOxo"), (GameKind::Sos, "-.SOso")] {
            let result = AnyGame::parse(kind, &s);
            if readable.contains(ch) {
                assert!(
                    !matches!(result, Err(PositionError::InvalidChar { .. })),
                    "{kind} {ch:?}"
                );
            } else {
                assert_eq!(
                    result,
                    Err(PositionError::InvalidChar { index: 4, ch }),
                    "{kind} {ch:?}"
                );
            }
        }
    }
}

#[test]
fn from_board_refuses_the_other_games_mark() {
    let with = |cell: u8, mark| Board::EMPTY.with(Cell::new(cell).unwrap(), mark);
    assert_eq!(
        TicTacToe::from_board(with(3, Mark::S)),
        Err(PositionError::InvalidChar { index: 3, ch: 'S' })
    );
    assert_eq!(
        Sos::from_board(with(7, Mark::X)),
        Err(PositionError::InvalidChar { index: 7, ch: 'X' })
    );
}

#[test]
fn wrong_mark_counts_are_refused() {
    for (s, x, o) in [
        ("O--------", 0, 1),
        ("XX-------", 2, 0),
        ("XXXO-----", 3, 1),
        ("OOXX-O---", 2, 3),
        ("XXXXXXXXX", 9, 0),
    ] {
        assert_eq!(
            s.parse::<TicTacToe>(),
            Err(PositionError::MarkCounts { x, o }),
            "{s}"
        );
    }
}

#[test]
fn two_winners_are_refused() {
    for s in ["XXXOOO---", "XO-XO-XO-", "OOO---XXX"] {
        assert_eq!(
            s.parse::<TicTacToe>(),
            Err(PositionError::TwoWinners),
            "{s}"
        );
    }
}

#[test]
fn play_after_a_finished_game_is_refused() {
    // X won, then O moved.
    assert_eq!(
        "XXXOO-O--".parse::<TicTacToe>(),
        Err(PositionError::PlayAfterEnd)
    );
    // O won, then X moved.
    assert_eq!(
        "OOOXX-XX-".parse::<TicTacToe>(),
        Err(PositionError::PlayAfterEnd)
    );
    // Two SOS that share no cell cannot come from one move.
    assert_eq!("SOSSOS---".parse::<Sos>(), Err(PositionError::PlayAfterEnd));
    assert_eq!("SOS---SOS".parse::<Sos>(), Err(PositionError::PlayAfterEnd));
    // But two SOS through one cell can.
    assert!("SOSO--S--".parse::<Sos>().is_ok());
}

#[test]
fn position_errors_explain_themselves() {
    let cases = [
        (PositionError::WrongLength { len: 8 }, "8"),
        (PositionError::InvalidChar { index: 4, ch: 'S' }, "'S'"),
        (PositionError::MarkCounts { x: 3, o: 1 }, "3 X and 1 O"),
        (PositionError::TwoWinners, "both players"),
        (PositionError::PlayAfterEnd, "after"),
        (PositionError::NumberOutOfRange { number: 20_000 }, "20000"),
    ];
    for (e, needle) in cases {
        assert!(e.to_string().contains(needle), "{e}");
    }
}

#[test]
fn any_game_parse_uses_the_games_own_letters() {
    assert!(AnyGame::parse(GameKind::TicTacToe, "X--------").is_ok());
    assert!(AnyGame::parse(GameKind::Sos, "X--------").is_err());
    assert!(AnyGame::parse(GameKind::Sos, "S--------").is_ok());
    assert!(AnyGame::parse(GameKind::TicTacToe, "S--------").is_err());
}
