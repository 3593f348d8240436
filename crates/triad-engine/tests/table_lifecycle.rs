//! A match as the Shoehive tic-tac-toe tutorial's table: table states, move validation, win/draw
//! detection with winning cells, the current player, reset (rematch) and forfeit.

mod common;

use common::*;
use triad_engine::{Command, EndReason, Origin, Phase, RematchStart, Seat};
use triad_rules::{Mark, Player};

#[test]
fn setup_table_waits_for_players_with_an_empty_board() {
    let mut t = Table::new();
    let id = t.join(ALICE, TTT, 0);
    let m = t.m(id);
    assert_eq!(m.phase, Phase::Waiting);
    assert_eq!(m.phase.name(), "waiting");
    assert_eq!(m.game_state(), "---------");
    assert_eq!(m.seq(), 0, "moveCount 0");
    assert_eq!(m.turn(), None, "no current player yet");
    assert_eq!(m.result, None, "no winner, not over");
}

#[test]
fn lifecycle_waiting_ready_in_progress_finished_with_reason() {
    let mut t = Table::new();
    let id = t.join(ALICE, TTT, 0);
    assert_eq!(t.phase(id), Phase::Waiting);
    t.join(BOB, TTT, 0);
    assert_eq!(t.phase(id), Phase::Ready);
    assert_eq!(t.phase(id).name(), "ready");
    t.play_ttt(id, &[4]);
    assert_eq!(t.phase(id), Phase::InProgress);
    assert_eq!(t.phase(id).name(), "in_progress");
    t.play_ttt(id, &[0, 2, 1, 6]);
    assert_eq!(t.phase(id), Phase::Finished);
    assert_eq!(t.phase(id).name(), "finished");
    let result = t.result(id);
    assert_eq!(result.reason, EndReason::Win);
    assert_eq!(result.reason.name(), "win");
    assert_eq!(result.ended_ms, t.now);
}

#[test]
fn a_move_is_valid_only_while_the_game_is_in_progress() {
    let mut t = Table::new();
    let id = t.join(ALICE, TTT, 0);
    let first = t.move_cmd(id, 0, Mark::X);
    t.expect_err(ALICE, first.clone(), 112);
    t.join(BOB, TTT, 0);
    t.ok(ALICE, first);
    t.play_ttt(id, &[3, 1, 4, 2]);
    let after = t.move_cmd(id, 8, Mark::O);
    t.expect_err(BOB, after, 0);
}

#[test]
fn coordinates_must_be_on_the_board() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    let off = t.move_cmd(id, 9, Mark::X);
    t.expect_err(ALICE, off, 1);
}

#[test]
fn the_cell_must_be_empty() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[0]);
    let taken = t.move_cmd(id, 0, Mark::O);
    t.expect_err(BOB, taken, 3);
}

/// The tutorial's `makeMove(table, playerId, …)` ignored `playerId` and placed the current
/// player's symbol, and `isValidMove` never checked the turn: anyone could move for the
/// player to move. Here only the player to move moves, with their own mark.
#[test]
fn regression_only_the_current_player_moves_and_only_with_their_mark() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    // Bob may not move for Alice (with her mark or his).
    let x = t.move_cmd(id, 0, Mark::X);
    t.expect_err(BOB, x, 2);
    let o = t.move_cmd(id, 0, Mark::O);
    t.expect_err(BOB, o, 2);
    // A stranger may not move at all.
    let x = t.move_cmd(id, 0, Mark::X);
    t.expect_err(CAROL, x, 101);
    // Alice may not place Bob's mark, nor a mark of another game.
    let o = t.move_cmd(id, 0, Mark::O);
    t.expect_err(ALICE, o, 5);
    let s = t.move_cmd(id, 0, Mark::S);
    t.expect_err(ALICE, s, 4);
    t.mv(ALICE, id, 0, Mark::X);
}

#[test]
fn players_alternate_and_the_move_count_grows() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    for (i, cell) in [4u8, 0, 8].into_iter().enumerate() {
        let who = t.mover(id);
        assert_eq!(
            who,
            if i % 2 == 0 { ALICE } else { BOB },
            "getCurrentPlayer"
        );
        let turn = t.m(id).turn().unwrap();
        assert_eq!(
            turn,
            if i % 2 == 0 {
                Player::First
            } else {
                Player::Second
            }
        );
        t.play_ttt(id, &[cell]);
        assert_eq!(t.m(id).seq() as usize, i + 1, "moveCount");
    }
    assert_eq!(t.m(id).game_state(), "O---X---X");
}

#[test]
fn win_reports_the_winner_and_the_winning_cells() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    // X: 0, 1, 8; O: 3, 4, 5 -- O completes the middle row.
    let r = t.play_ttt(id, &[0, 3, 1, 4, 8, 5]);
    let (mid, reason, winner, won) = ended(&r).unwrap();
    assert_eq!(mid, id);
    assert_eq!(reason, EndReason::Win);
    assert_eq!(winner, Some(Player::Second));
    assert_eq!(t.m(id).seat(Player::Second), Some(Seat::Human(BOB)));
    assert_eq!(won, cells(&[3, 4, 5]));
    assert_eq!(t.result(id).cells, cells(&[3, 4, 5]));
}

#[test]
fn draw_when_the_board_fills_without_a_line() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    let r = t.play_ttt(id, &[0, 1, 2, 4, 3, 5, 7, 6, 8]);
    let (_, reason, winner, won) = ended(&r).unwrap();
    assert_eq!(reason, EndReason::Draw);
    assert_eq!(winner, None);
    assert!(won.is_empty(), "no winning cells on a draw");
    assert_eq!(t.m(id).seq(), 9);
}

/// The tutorial checks the lines before `moveCount >= 9`: a line made by the ninth mark is a
/// win, not a draw. Kept, for both games.
#[test]
fn ninth_mark_win_is_a_win_not_a_draw() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    let r = t.play_ttt(id, &[0, 1, 2, 4, 3, 5, 7, 8, 6]);
    let (_, reason, winner, won) = ended(&r).unwrap();
    assert_eq!(t.m(id).seq(), 9);
    assert_eq!(reason, EndReason::Win);
    assert_eq!(winner, Some(Player::First));
    assert_eq!(won, cells(&[0, 3, 6]));

    // SOS: S in 0, O everywhere else but 8; the ninth mark, S in 8, spells 0-4-8.
    let id = t.queue_match(CAROL, DAVE, SOS, 0);
    let mut moves = vec![(0, Mark::S)];
    moves.extend((1..8).map(|c| (c, Mark::O)));
    t.play(id, &moves);
    assert_eq!(t.phase(id), Phase::InProgress);
    let r = t.play(id, &[(8, Mark::S)]);
    let (_, reason, winner, won) = ended(&r).unwrap();
    assert_eq!((reason, winner), (EndReason::Win, Some(Player::First)));
    assert_eq!(won, cells(&[0, 4, 8]));
    assert_eq!(t.record(CAROL), (1, 1));
}

#[test]
fn one_move_completing_two_lines_reports_every_winning_cell() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    let r = t.play_ttt(id, &[1, 4, 2, 5, 3, 8, 6, 7, 0]);
    let (_, reason, winner, won) = ended(&r).unwrap();
    assert_eq!((reason, winner), (EndReason::Win, Some(Player::First)));
    assert_eq!(won, cells(&[0, 1, 2, 3, 6]), "row 0 and column 0");
}

/// The tutorial's `resetGame` starts a new round with a random first player: a rematch, whose
/// starter comes from the seeded generator (so a replay reproduces it).
#[test]
fn reset_is_a_rematch_with_a_seeded_random_starter() {
    let mut firsts = Vec::new();
    for seed in 0..16 {
        let mut t = Table::with(|c| {
            c.seed = seed;
            c.rematch_start = RematchStart::Random;
        });
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        t.play_ttt(id, &[0, 3, 1, 4, 2]);
        t.ok(BOB, Command::Rematch { match_id: id });
        let r = t.ok(ALICE, Command::Rematch { match_id: id });
        let next = match_id(&r);
        let m = t.m(next);
        assert_eq!(m.phase, Phase::Ready, "the new round is ready to start");
        assert_eq!(m.game_state(), "---------");
        assert_eq!(m.origin, Origin::Rematch { of: id });
        firsts.push(t.seat(next, Player::First));
    }
    assert!(
        firsts.contains(&ALICE) && firsts.contains(&BOB),
        "{firsts:?}"
    );
}

#[test]
fn forfeit_the_opponent_wins() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[4]);
    let r = t.ok(ALICE, Command::Forfeit { match_id: id });
    let (_, reason, winner, won) = ended(&r).unwrap();
    assert_eq!(reason, EndReason::Forfeit);
    assert_eq!(winner, Some(Player::Second));
    assert!(won.is_empty());
    assert_eq!(t.record(BOB), (1, 1));
    assert_eq!(t.record(ALICE), (0, 1));
}
