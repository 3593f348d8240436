//! `AnyGame` behaves exactly like the concrete game it wraps, checked exhaustively; and
//! `GameKind`'s names and marks.

mod common;

use common::BOARDS;
use triad_rules::{AnyGame, Cell, Game, GameKind, Mark, Move, Player, Sos, TicTacToe};

/// Cell bytes to try: all of the board, just past it, and far past it.
const CELL_BYTES: [u8; 14] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 100, 254, 255];

fn any_game_mirrors<G: Game>()
where
    AnyGame: From<G>,
{
    let kind = G::KIND;
    assert_eq!(AnyGame::new(kind), AnyGame::from(G::default()));
    for (board, _) in common::reachable_sorted(kind) {
        let text = common::text(&board);
        let game: G = text.parse().unwrap();
        let any = AnyGame::from(game);
        assert_eq!(any.kind(), kind);
        assert_eq!(any.board(), game.board());
        assert_eq!(any.outcome(), game.outcome());
        assert_eq!(any.is_over(), game.is_over());
        assert_eq!(any.turn(), game.turn());
        assert_eq!(any.legal_moves(), game.legal_moves());
        assert_eq!(any.position_number(), game.position_number());
        assert_eq!(any.to_string(), game.to_string());
        assert_eq!(AnyGame::parse(kind, &text), Ok(any));
        assert_eq!(AnyGame::from_board(kind, game.board()), Ok(any));
        let number = u32::from(game.position_number());
        assert_eq!(AnyGame::from_position_number(kind, number), Ok(any));
        for by in common::PLAYERS {
            for cell in CELL_BYTES {
                for mark in common::ALL_MARKS {
                    assert_eq!(any.check(by, cell, mark), game.check(by, cell, mark));
                    let expected = game
                        .play_as(by, cell, mark)
                        .map(|(g, m)| (AnyGame::from(g), m));
                    assert_eq!(
                        any.play_as(by, cell, mark),
                        expected,
                        "{text} {by:?} {cell} {mark}"
                    );
                }
            }
        }
        for cell in Cell::ALL {
            for mark in common::ALL_MARKS {
                let mv = Move::new(cell, mark);
                assert_eq!(
                    any.play(mv),
                    game.play(mv).map(AnyGame::from),
                    "{text} {mv}"
                );
            }
        }
        for mv in game.legal_moves() {
            assert_eq!(
                any.play_unchecked(mv),
                AnyGame::from(game.play_unchecked(mv))
            );
        }
    }
    for n in (0..BOARDS).chain([BOARDS, BOARDS + 1, u32::MAX]) {
        let expected = G::from_position_number(n).map(AnyGame::from);
        assert_eq!(AnyGame::from_position_number(kind, n), expected, "{n}");
        if n < BOARDS {
            let board = common::to_board(&common::board_of_number(kind, n));
            assert_eq!(
                AnyGame::from_board(kind, board),
                G::from_board(board).map(AnyGame::from)
            );
        }
    }
    for bad in [
        "",
        "--------",
        "----------",
        "X-S------",
        "XX-------",
        "SOSSOS---",
        "?--------",
    ] {
        assert_eq!(
            AnyGame::parse(kind, bad),
            bad.parse::<G>().map(AnyGame::from),
            "{bad:?}"
        );
    }
}

#[test]
fn any_game_mirrors_tic_tac_toe_exhaustively() {
    any_game_mirrors::<TicTacToe>();
}

#[test]
fn any_game_mirrors_sos_exhaustively() {
    any_game_mirrors::<Sos>();
}

#[test]
fn game_kind_names_parse_back_and_print() {
    for kind in GameKind::ALL {
        assert_eq!(kind.name().parse::<GameKind>(), Ok(kind));
        assert_eq!(kind.to_string(), kind.name());
    }
    assert_eq!(GameKind::TicTacToe.name(), "tic-tac-toe");
    assert_eq!(GameKind::Sos.name(), "sos");
    assert_eq!(GameKind::ALL, common::KINDS);
    assert!("chess".parse::<GameKind>().is_err());
    assert!("".parse::<GameKind>().is_err());
}

#[test]
fn game_kind_marks() {
    assert_eq!(GameKind::TicTacToe.marks_for(Player::First), [Mark::X]);
    assert_eq!(GameKind::TicTacToe.marks_for(Player::Second), [Mark::O]);
    for player in common::PLAYERS {
        assert_eq!(GameKind::Sos.marks_for(player), [Mark::S, Mark::O]);
    }
    for kind in common::KINDS {
        for mark in common::ALL_MARKS {
            let expected = common::game_letters(kind).contains(&common::letter(mark));
            assert_eq!(kind.has_mark(mark), expected, "{kind} {mark}");
        }
    }
    assert_eq!(TicTacToe::KIND, GameKind::TicTacToe);
    assert_eq!(Sos::KIND, GameKind::Sos);
}
