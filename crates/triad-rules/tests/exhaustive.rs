//! Exhaustive cross-checks against the independent reference in `common`: every one of the
//! 3^9 boards of each game, and every move of every reachable position.

mod common;

use std::collections::{HashMap, VecDeque};

use common::{BOARDS, RefBoard, RefEnd};
use triad_rules::{Game, GameKind, Sos, TicTacToe};

/// `from_board` accepts a board iff it is reachable by legal play, and then reports the
/// reference's outcome and player to move; otherwise it refuses it with the expected reason.
fn from_board_accepts_exactly_the_reachable_boards<G: Game>() {
    let reachable = common::reachable(G::KIND);
    let mut accepted = 0;
    for n in 0..BOARDS {
        let board = common::board_of_number(G::KIND, n);
        let text = common::text(&board);
        match (
            reachable.get(&board),
            G::from_board(common::to_board(&board)),
        ) {
            (Some(&end), Ok(game)) => {
                accepted += 1;
                assert_eq!(common::observe(&game), (board, end), "{text}");
                if end.is_none() {
                    assert_eq!(
                        common::player_index(game.turn()),
                        common::mover(&board),
                        "{text}"
                    );
                }
            }
            (None, Err(e)) => assert_eq!(e, common::expected_refusal(G::KIND, &board), "{text}"),
            (Some(_), Err(e)) => panic!("{text} is reachable but was refused: {e:?}"),
            (None, Ok(game)) => panic!("{text} is unreachable but was accepted: {game:?}"),
        }
    }
    assert_eq!(accepted, reachable.len());
}

#[test]
fn tic_tac_toe_from_board_accepts_exactly_the_reachable_boards() {
    from_board_accepts_exactly_the_reachable_boards::<TicTacToe>();
}

#[test]
fn sos_from_board_accepts_exactly_the_reachable_boards() {
    from_board_accepts_exactly_the_reachable_boards::<Sos>();
}

/// Breadth-first search with the crate's own `legal_moves` and `play`: it reaches exactly
/// the reference's positions, and every move along the way (every edge of the game graph)
/// produces the reference's next position and outcome.
fn crate_play_reaches_the_reference_positions<G: Game>() {
    let reference = common::reachable(G::KIND);
    let mut seen: HashMap<RefBoard, Option<RefEnd>> = HashMap::new();
    let mut queue = VecDeque::from([G::default()]);
    seen.insert(common::EMPTY, None);
    while let Some(game) = queue.pop_front() {
        let (board, end) = common::observe(&game);
        assert_eq!(end, seen[&board]);
        let expected = match end {
            None => common::children(G::KIND, &board),
            Some(_) => Vec::new(),
        };
        let moves = game.legal_moves();
        assert_eq!(moves.len(), expected.len(), "{}", common::text(&board));
        for (mv, (cell, letter, next_board, next_end)) in moves.into_iter().zip(expected) {
            assert_eq!(usize::from(mv.cell.index()), cell);
            assert_eq!(common::letter(mv.mark), letter);
            let next = game.play(mv).expect("a legal move plays");
            assert_eq!(game.play_unchecked(mv), next);
            assert_eq!(common::observe(&next), (next_board, next_end));
            if seen.insert(next_board, next_end).is_none() {
                queue.push_back(next);
            }
        }
    }
    assert_eq!(&seen, reference);
}

#[test]
fn tic_tac_toe_play_reaches_exactly_the_reference_positions() {
    crate_play_reaches_the_reference_positions::<TicTacToe>();
}

#[test]
fn sos_play_reaches_exactly_the_reference_positions() {
    crate_play_reaches_the_reference_positions::<Sos>();
}

/// Counts of the positions `from_board` accepts: (all, finished, first wins, second wins,
/// draws).
fn accepted_counts<G: Game>() -> (usize, usize, usize, usize, usize) {
    let (mut all, mut over, mut first, mut second, mut draws) = (0, 0, 0, 0, 0);
    for n in 0..BOARDS {
        let board = common::board_of_number(G::KIND, n);
        let Ok(game) = G::from_board(common::to_board(&board)) else {
            continue;
        };
        all += 1;
        match game.outcome().map(common::to_ref_end) {
            None => {}
            Some(RefEnd::Win { player: 0, .. }) => (over, first) = (over + 1, first + 1),
            Some(RefEnd::Win { .. }) => (over, second) = (over + 1, second + 1),
            Some(RefEnd::Draw) => (over, draws) = (over + 1, draws + 1),
        }
    }
    (all, over, first, second, draws)
}

/// The reference's counts, as [`accepted_counts`].
fn reference_counts(kind: GameKind) -> (usize, usize, usize, usize, usize) {
    let ends: Vec<_> = common::reachable(kind).values().flatten().collect();
    let count = |f: fn(&RefEnd) -> bool| ends.iter().filter(|e| f(e)).count();
    (
        common::reachable(kind).len(),
        ends.len(),
        count(|e| matches!(e, RefEnd::Win { player: 0, .. })),
        count(|e| matches!(e, RefEnd::Win { player: 1, .. })),
        count(|e| matches!(e, RefEnd::Draw)),
    )
}

/// The well-known tic-tac-toe facts: 5,478 reachable positions (the empty board included),
/// 958 of them final: 626 won by X, 316 by O, 16 drawn.
#[test]
fn tic_tac_toe_has_5478_positions_958_final_626_x_wins_316_o_wins_16_draws() {
    let facts = (5478, 958, 626, 316, 16);
    assert_eq!(reference_counts(GameKind::TicTacToe), facts);
    assert_eq!(accepted_counts::<TicTacToe>(), facts);
}

/// The same counts for SOS, computed by a third, separate breadth-first search (a short
/// Python script) while these tests were written: 19,416 reachable boards of the 19,683,
/// 4,514 final: 2,148 won by each player, 218 ties.
#[test]
fn sos_has_19416_positions_4514_final_2148_wins_each_218_ties() {
    let facts = (19_416, 4514, 2148, 2148, 218);
    assert_eq!(reference_counts(GameKind::Sos), facts);
    assert_eq!(accepted_counts::<Sos>(), facts);
}
