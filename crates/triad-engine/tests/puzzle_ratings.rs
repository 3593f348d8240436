//! Puzzle attempts in the engine: the line is checked against the solver, a player's first
//! decided attempt at each puzzle moves both puzzle ratings (Glicko-2, the player against
//! the puzzle), later ones change nothing, and the state stays a fold of its log (the
//! harness replays and audits after every command).

mod common;

use common::*;
use triad_engine::{Command, Engine, EventKind, PuzzleRecord};
use triad_rules::Move;
use triad_solver::puzzles::{self, Goal, Puzzle};

fn puzzle(goal: Goal) -> &'static Puzzle {
    puzzles::all().iter().find(|p| p.goal() == goal).unwrap()
}

fn attempt(p: &Puzzle, line: Vec<Move>) -> Command {
    Command::AttemptPuzzle {
        puzzle: p.id(),
        line,
    }
}

/// A first move that loses the goal.
fn wrong(p: &Puzzle) -> Move {
    let correct = p.correct_moves();
    p.position()
        .legal_moves()
        .into_iter()
        .find(|m| !correct.contains(m))
        .unwrap()
}

#[test]
fn a_solved_first_attempt_raises_the_player_and_lowers_the_puzzle() {
    let mut t = Table::new();
    let p = puzzle(Goal::WinIn(2));
    let receipt = t.ok(ALICE, attempt(p, p.solution()));
    assert_eq!(receipt.events.len(), 1);
    assert_eq!(
        receipt.events[0].kind,
        EventKind::PuzzleAttempted {
            puzzle: p.id(),
            player: ALICE,
            solved: true
        }
    );
    let start = PuzzleRecord::default();
    let player = t.engine.puzzle_record_of_player(ALICE);
    let rated = t.engine.puzzle_record(p.id());
    assert!(player.rating.rating > start.rating.rating);
    assert!(rated.rating.rating < start.rating.rating);
    assert!(player.rating.deviation < start.rating.deviation);
    assert_eq!((player.attempts, player.solved), (1, 1));
    assert_eq!((rated.attempts, rated.solved), (1, 1));
    assert!(t.engine.puzzle_rated(ALICE, p.id()));
    // Playing games is another rating: the hall of fame does not see puzzles.
    assert_eq!(t.engine.stats(ALICE).games, 0);
    assert_eq!(t.engine.stats(ALICE).rating, start.rating);
}

#[test]
fn a_failed_attempt_lowers_the_player_and_raises_the_puzzle() {
    let mut t = Table::new();
    let p = puzzle(Goal::SaveTheDraw);
    t.ok(BOB, attempt(p, vec![wrong(p)]));
    let player = t.engine.puzzle_record_of_player(BOB);
    let rated = t.engine.puzzle_record(p.id());
    assert!(player.rating.rating < 1500.0);
    assert!(rated.rating.rating > 1500.0);
    assert_eq!((player.attempts, player.solved), (1, 0));
    assert_eq!((rated.attempts, rated.solved), (1, 0));
}

#[test]
fn only_the_first_decided_attempt_at_a_puzzle_is_rated() {
    let mut t = Table::new();
    let p = puzzle(Goal::WinIn(1));
    t.ok(ALICE, attempt(p, vec![wrong(p)]));
    let (player, rated) = (
        t.engine.puzzle_record_of_player(ALICE),
        t.engine.puzzle_record(p.id()),
    );
    // Solving it now changes nothing: no event, the same ratings.
    for _ in 0..3 {
        let again = t.ok(ALICE, attempt(p, p.solution()));
        assert!(again.events.is_empty());
    }
    assert_eq!(t.engine.puzzle_record_of_player(ALICE), player);
    assert_eq!(t.engine.puzzle_record(p.id()), rated);
    // Another player's first attempt, and Alice's first at another puzzle, are rated.
    assert_eq!(t.ok(CAROL, attempt(p, p.solution())).events.len(), 1);
    let other = puzzle(Goal::WinIn(3));
    assert_eq!(
        t.ok(ALICE, attempt(other, other.solution())).events.len(),
        1
    );
    assert_eq!(t.engine.puzzle_record(p.id()).attempts, 2);
    assert_eq!(t.engine.puzzle_record_of_player(ALICE).attempts, 2);
}

#[test]
fn ratings_fold_from_the_log_in_order() {
    let mut t = Table::new();
    let players = [ALICE, BOB, CAROL, DAVE, ERIN, FRANK];
    for (i, p) in puzzles::all().iter().step_by(97).take(12).enumerate() {
        let who = players[i % players.len()];
        let line = if i % 3 == 0 {
            vec![wrong(p)]
        } else {
            p.solution()
        };
        t.ok(who, attempt(p, line));
        t.advance(1_000);
    }
    let log = t.engine.log_for_tests().to_vec();
    assert_eq!(log.len(), 12);
    let replayed = Engine::replay(t.engine.config().clone(), &log);
    for who in players {
        assert_eq!(
            replayed.puzzle_record_of_player(who),
            t.engine.puzzle_record_of_player(who)
        );
    }
}

#[test]
fn the_audit_catches_puzzle_records_that_do_not_add_up() {
    let mut t = Table::new();
    let p = puzzle(Goal::WinIn(2));
    t.ok(ALICE, attempt(p, p.solution()));
    let state = serde_json::to_value(&t.engine).unwrap();
    let tampered = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut state = state.clone();
        edit(&mut state);
        serde_json::from_value::<Engine>(state).unwrap().audit()
    };
    assert_eq!(tampered(&|_| {}), Ok(()));
    let more_solved = tampered(&|s| {
        for record in s["puzzlers"].as_object_mut().unwrap().values_mut() {
            record["solved"] = 2.into();
        }
    });
    assert!(
        more_solved
            .unwrap_err()
            .contains("solved more puzzles than attempted")
    );
    let miscounted = tampered(&|s| {
        for record in s["puzzles"].as_object_mut().unwrap().values_mut() {
            record["attempts"] = 2.into();
            record["solved"] = 2.into();
        }
    });
    assert!(miscounted.unwrap_err().contains("rated attempts on record"));
    let unrecorded = tampered(&|s| s["puzzlers"] = serde_json::json!({}));
    assert!(unrecorded.unwrap_err().contains("with no record"));
}
