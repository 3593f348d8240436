//! The solver against an independent model, position by position, for both games.

mod reference;

use reference::{Minimax, RefValue, Rules, Status};
use triad_rules::{AnyGame, GameKind, Player};
use triad_solver::{Counts, POSITION_NUMBERS, Table, Value, Verdict, table};

/// Tic-tac-toe's well-known numbers.
const TIC_TAC_TOE: Counts = Counts {
    reachable: 5_478,
    first_player_wins: 626,
    second_player_wins: 316,
    draws: 16,
};

/// SOS on 3x3, counted by the independent model below (and by the solver).
const SOS: Counts = Counts {
    reachable: 19_416,
    first_player_wins: 2_148,
    second_player_wins: 2_148,
    draws: 218,
};

fn rules(kind: GameKind) -> Rules {
    match kind {
        GameKind::TicTacToe => Rules::TicTacToe,
        GameKind::Sos => Rules::Sos,
    }
}

fn expected_counts(kind: GameKind) -> Counts {
    match kind {
        GameKind::TicTacToe => TIC_TAC_TOE,
        GameKind::Sos => SOS,
    }
}

fn game(kind: GameKind, board: &reference::Board) -> AnyGame {
    AnyGame::parse(kind, &reference::to_string(board)).expect("a reachable board is legal")
}

fn from_reference(value: RefValue) -> Value {
    let verdict = match value.outcome {
        1 => Verdict::Win,
        0 => Verdict::Draw,
        _ => Verdict::Loss,
    };
    Value::new(verdict, value.plies)
}

#[test]
fn tic_tac_toe_counts_are_the_known_ones() {
    let counts = table(GameKind::TicTacToe).counts();
    assert_eq!(counts, TIC_TAC_TOE);
    assert_eq!(counts.terminal(), 958);
    assert_eq!(counts.non_terminal(), 4_520);
}

#[test]
fn the_model_counts_what_the_constants_say() {
    for kind in GameKind::ALL {
        let reachable = rules(kind).reachable();
        let mut counts = Counts {
            reachable: reachable.len() as u32,
            ..Counts::default()
        };
        for status in reachable.values() {
            match status {
                Status::Ongoing => {}
                Status::Won { first_player: true } => counts.first_player_wins += 1,
                Status::Won {
                    first_player: false,
                } => counts.second_player_wins += 1,
                Status::Drawn => counts.draws += 1,
            }
        }
        assert_eq!(counts, expected_counts(kind), "{kind}");
        assert_eq!(table(kind).counts(), expected_counts(kind), "{kind}");
    }
}

#[test]
fn the_solver_reaches_exactly_the_model_positions() {
    for kind in GameKind::ALL {
        let model: Vec<String> = rules(kind)
            .reachable()
            .keys()
            .map(reference::to_string)
            .collect();
        let mut solver: Vec<String> = table(kind)
            .reachable()
            .map(|(game, _)| game.to_string())
            .collect();
        solver.sort_unstable();
        assert_eq!(solver, model, "{kind}");
    }
}

#[test]
fn every_legal_position_is_reachable() {
    // `Table::value` documents that `None` cannot happen for a position `AnyGame` accepts.
    for kind in GameKind::ALL {
        let table = table(kind);
        let mut legal = 0;
        for number in 0..POSITION_NUMBERS as u32 {
            if let Ok(game) = AnyGame::from_position_number(kind, number) {
                legal += 1;
                assert!(
                    table.value(&game).is_some(),
                    "{kind} {game} is legal but unreached"
                );
            }
        }
        assert_eq!(legal, table.counts().reachable, "{kind}");
    }
}

#[test]
fn values_agree_with_an_independent_minimax() {
    for kind in GameKind::ALL {
        let table = table(kind);
        let mut minimax = Minimax::new(rules(kind));
        for board in rules(kind).reachable().keys() {
            let game = game(kind, board);
            let expected = from_reference(minimax.value(board));
            assert_eq!(table.value(&game), Some(expected), "{kind} {game}");
        }
    }
}

#[test]
fn analysis_and_best_moves_agree_with_an_independent_minimax() {
    for kind in GameKind::ALL {
        let table = table(kind);
        let mut minimax = Minimax::new(rules(kind));
        for board in rules(kind).reachable().keys() {
            let game = game(kind, board);
            let expected = minimax.move_values(board);
            let analysis = table.analyze(&game);
            assert_eq!(analysis.len(), expected.len(), "{kind} {game}");
            for (&(mv, value), &(cell, mark, ref_value)) in analysis.iter().zip(&expected) {
                assert_eq!(
                    (usize::from(mv.cell.index()), mv.mark.char()),
                    (cell, char::from(mark)),
                    "{kind} {game}: moves in legal-move order"
                );
                assert_eq!(value, from_reference(ref_value), "{kind} {game} {mv}");
            }
            let best: Vec<_> = expected
                .iter()
                .filter(|&&(_, _, v)| Minimax::is_best(&expected, v))
                .map(|&(cell, mark, _)| (cell, char::from(mark)))
                .collect();
            let best_moves: Vec<_> = table
                .best_moves(&game)
                .iter()
                .map(|mv| (usize::from(mv.cell.index()), mv.mark.char()))
                .collect();
            assert_eq!(best_moves, best, "{kind} {game}");
            assert_eq!(
                table.best_move(&game),
                table.best_moves(&game).first().copied(),
                "{kind} {game}: the stored move is the first optimal one"
            );
        }
    }
}

#[test]
fn ended_games_have_zero_plies_and_no_moves() {
    for kind in GameKind::ALL {
        let table = table(kind);
        for (game, value) in table.reachable().filter(|(game, _)| game.is_over()) {
            let expected = match game.outcome().and_then(|o| o.winner()) {
                Some(_) => Value::LOST,
                None => Value::DRAWN,
            };
            assert_eq!(value, expected, "{kind} {game}");
            assert_eq!(table.best_move(&game), None);
            assert!(table.best_moves(&game).is_empty());
            assert!(table.analyze(&game).is_empty());
        }
    }
}

#[test]
fn draws_last_until_the_board_is_full() {
    for kind in GameKind::ALL {
        for (game, value) in table(kind).reachable() {
            if value.verdict == Verdict::Draw {
                assert_eq!(u32::from(value.plies), game.board().empty_cells().len());
            }
        }
    }
}

#[test]
fn known_positions() {
    let ttt = table(GameKind::TicTacToe);
    let sos = table(GameKind::Sos);
    let at = |table: &Table, board: &str| {
        table
            .value(&AnyGame::parse(table.kind(), board).unwrap())
            .unwrap()
    };
    // Both empty boards are draws with best play.
    assert_eq!(at(ttt, "---------"), Value::new(Verdict::Draw, 9));
    assert_eq!(at(sos, "---------"), Value::new(Verdict::Draw, 9));
    // X in a corner, O on an adjacent edge: X forces a win, in three more X marks.
    assert_eq!(at(ttt, "XO-------"), Value::new(Verdict::Win, 5));
    // The HTML5 canvas game's example: O must block in cell 6, which draws.
    assert_eq!(at(ttt, "XO-XOO-XX"), Value::new(Verdict::Draw, 2));
    // The SOS contract's figure 1(b): S in square 7 wins at once.
    assert_eq!(at(sos, "O-SOOS--S"), Value::new(Verdict::Win, 1));
}

#[test]
fn the_player_to_move_never_has_lost_an_ongoing_sos_game() {
    // A property of 3x3 SOS found by the solver and confirmed by the model: whoever is to
    // move can always avoid handing the opponent an SOS, so no ongoing position is lost.
    let mut minimax = Minimax::new(Rules::Sos);
    for (game, value) in table(GameKind::Sos)
        .reachable()
        .filter(|(game, _)| !game.is_over())
    {
        assert_ne!(value.verdict, Verdict::Loss, "{game}");
        let board: reference::Board = game.to_string().into_bytes().try_into().unwrap();
        assert_ne!(minimax.value(&board).outcome, -1, "{game}");
    }
    // Tic-tac-toe is different: a player can be lost before the end.
    assert!(
        table(GameKind::TicTacToe)
            .reachable()
            .any(|(g, v)| !g.is_over() && g.turn() == Player::Second && v.verdict == Verdict::Loss)
    );
}
