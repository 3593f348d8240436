//! The rules of the Sui on-chain tic-tac-toe contract, kept, and its bugs, fixed: one active
//! game per address, the creator plays X and moves first, abort codes 0-3, win detection on
//! every line, and nobody put into a game without consent.

mod common;

use common::*;
use triad_engine::{Command, EndReason, Phase, Seat, StartChoice};
use triad_rules::{Cell, LINES, Mark, Player};

/// The cells of a line, as indices.
fn line(i: usize) -> [u8; 3] {
    LINES[i].map(Cell::index)
}

#[test]
fn single_active_game_per_address() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    assert_eq!(t.active(ALICE), Some(id));
    assert_eq!(t.active(BOB), Some(id));
    // Neither may start another game of any kind while this one is active.
    for who in [ALICE, BOB] {
        t.expect_err(
            who,
            Command::JoinQueue {
                game: TTT,
                stake: 0,
            },
            102,
        );
        let challenge = Command::Challenge {
            opponent: CAROL,
            game: TTT,
            stake: 0,
            first: StartChoice::Challenger,
        };
        t.expect_err(who, challenge, 102);
        let computer = Command::PlayComputer {
            game: TTT,
            level: triad_engine::Level::Random,
            side: Player::First,
        };
        t.expect_err(who, computer, 102);
    }
    let err = t.expect_err(
        ALICE,
        Command::JoinQueue {
            game: SOS,
            stake: 0,
        },
        102,
    );
    assert_eq!(
        err,
        triad_engine::EngineError::AlreadyInMatch { match_id: id }
    );
}

#[test]
fn creator_plays_x_and_moves_first() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    assert_eq!(t.m(id).seats, Some([Seat::Human(ALICE), Seat::Human(BOB)]));
    assert_eq!(t.mover(id), ALICE);
    t.mv(ALICE, id, 4, Mark::X);
    assert_eq!(t.mover(id), BOB);
    t.mv(BOB, id, 0, Mark::O);
    assert_eq!(t.mover(id), ALICE);
    assert_eq!(t.m(id).game_state(), "O---X----");
}

#[test]
fn abort_code_0_game_already_ended() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[0, 3, 1, 4, 2]);
    let next = t.move_cmd(id, 8, Mark::O);
    t.expect_err(BOB, next, 0);
}

#[test]
fn abort_code_1_position_must_be_0_to_8() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    for cell in [9, 10, 255] {
        let mv = t.move_cmd(id, cell, Mark::X);
        t.expect_err(ALICE, mv, 1);
    }
}

#[test]
fn abort_code_2_not_your_turn() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    let mv = t.move_cmd(id, 4, Mark::O);
    t.expect_err(BOB, mv, 2);
}

#[test]
fn abort_code_3_cell_occupied() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    t.mv(ALICE, id, 4, Mark::X);
    let mv = t.move_cmd(id, 4, Mark::O);
    t.expect_err(BOB, mv, 3);
}

/// The contract asserted the cell was empty before it asserted the turn, telling an out-of-turn
/// player that a cell was taken. The turn comes first.
#[test]
fn regression_turn_is_checked_before_occupancy() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    t.mv(ALICE, id, 4, Mark::X);
    // Alice, not to move, aims at an occupied cell: she is told it is not her turn.
    let mv = t.move_cmd(id, 4, Mark::X);
    t.expect_err(ALICE, mv, 2);
}

#[test]
fn win_detection_every_row_column_and_diagonal_for_x() {
    for i in 0..8 {
        let mut t = Table::new();
        let id = t.challenge_match(ALICE, BOB, TTT, 0);
        let [a, b, c] = line(i);
        // O plays the first two cells off the line: two marks cannot make a line.
        let off: Vec<u8> = (0..9).filter(|x| ![a, b, c].contains(x)).collect();
        let r = t.play_ttt(id, &[a, off[0], b, off[1], c]);
        let (_, reason, winner, won) = ended(&r).expect("X completed a line");
        assert_eq!(reason, EndReason::Win, "line {i}");
        assert_eq!(winner, Some(Player::First), "line {i}");
        assert_eq!(won, cells(&[a, b, c]), "line {i}");
        assert_eq!(t.m(id).seat(Player::First), Some(Seat::Human(ALICE)));
    }
}

#[test]
fn win_detection_every_row_column_and_diagonal_for_o() {
    for i in 0..8 {
        let mut t = Table::new();
        let id = t.challenge_match(ALICE, BOB, TTT, 0);
        let [a, b, c] = line(i);
        // X plays three cells off the line that are not themselves a line.
        let off: Vec<u8> = (0..9).filter(|x| ![a, b, c].contains(x)).collect();
        let mut xs = None;
        'search: for p in 0..off.len() {
            for q in p + 1..off.len() {
                for r in q + 1..off.len() {
                    let three = [off[p], off[q], off[r]];
                    if (0..8).all(|l| cells(&line(l)) != cells(&three)) {
                        xs = Some(three);
                        break 'search;
                    }
                }
            }
        }
        let xs = xs.expect("three cells off the line that are not a line");
        let r = t.play_ttt(id, &[xs[0], a, xs[1], b, xs[2], c]);
        let (_, reason, winner, won) = ended(&r).expect("O completed a line");
        assert_eq!(
            (reason, winner),
            (EndReason::Win, Some(Player::Second)),
            "line {i}"
        );
        assert_eq!(won, cells(&[a, b, c]), "line {i}");
    }
}

#[test]
fn win_sets_winner_ends_the_game_and_frees_both_players() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[0, 3, 1, 4, 2]);
    let result = t.result(id);
    assert_eq!(result.reason, EndReason::Win);
    assert_eq!(
        t.m(id).seat(result.winner.unwrap()),
        Some(Seat::Human(ALICE))
    );
    assert_eq!(t.phase(id), Phase::Finished);
    assert_eq!(t.m(id).game_state(), "XXXOO----");
    t.assert_free(ALICE);
    t.assert_free(BOB);
    // Both really can play again, each other or anyone.
    let again = t.challenge_match(BOB, ALICE, TTT, 0);
    assert_ne!(again, id);
}

/// The contract removed the players from its registry only on a win, so after a draw both were
/// locked out for good. Every ending frees them; a draw most of all.
#[test]
fn regression_draw_frees_both_players() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    let r = t.play_ttt(id, &[0, 1, 2, 4, 3, 5, 7, 6, 8]);
    let (_, reason, winner, won) = ended(&r).unwrap();
    assert_eq!((reason, winner, won), (EndReason::Draw, None, cells(&[])));
    assert_eq!(t.m(id).game_state(), "XOXXOOOXX");
    t.assert_free(ALICE);
    t.assert_free(BOB);
    t.challenge_match(ALICE, BOB, TTT, 0);
}

/// The contract's `create_board(player_with)` put the opponent into a game, and into the
/// registry, without asking. A challenge locks only the challenger; the opponent is free
/// until they accept.
#[test]
fn regression_nobody_is_put_in_a_game_without_consent() {
    let mut t = Table::new();
    t.fund(BOB, ETHER);
    let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    assert_eq!(t.phase(id), Phase::Waiting);
    assert_eq!(t.m(id).seats, None, "no seats until the opponent accepts");
    assert_eq!(t.active(ALICE), Some(id));
    assert_eq!(t.active(BOB), None, "the challenged player is not locked");
    assert_eq!(t.balance(BOB), ETHER, "nor charged");
    // Bob cannot be made to move in it either.
    let mv = Command::Move {
        match_id: id,
        seq: 1,
        cell: 0,
        mark: Mark::X,
        signed: None,
    };
    t.expect_err(BOB, mv, 101);
    // Bob is free to do anything else, e.g. play Carol from the queue.
    t.assert_free(BOB);
    let other = t.queue_match(CAROL, BOB, TTT, 0);
    assert_eq!(t.active(BOB), Some(other));
    // Only his acceptance would put him in Alice's game, and now he is busy.
    t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
        102,
    );
}

#[test]
fn regression_anyone_challenging_b_does_not_block_b() {
    let mut t = Table::new();
    let from_alice = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    let from_carol = t.challenge(CAROL, BOB, SOS, 0, StartChoice::Opponent);
    let from_dave = t.challenge(DAVE, BOB, TTT, 0, StartChoice::Random);
    let incoming: Vec<_> = t.engine.incoming_challenges(BOB).map(|m| m.id).collect();
    assert_eq!(incoming, vec![from_alice, from_carol, from_dave]);
    t.assert_free(BOB);
    // Bob picks Carol's; the others stay open for later.
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: from_carol,
            terms: None,
        },
    );
    assert_eq!(t.active(BOB), Some(from_carol));
    assert_eq!(
        t.mover(from_carol),
        BOB,
        "the challenger chose that Bob starts"
    );
    t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: from_alice,
            terms: None,
        },
        102,
    );
    t.ok(
        BOB,
        Command::Forfeit {
            match_id: from_carol,
        },
    );
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: from_alice,
            terms: None,
        },
    );
    t.ok(
        BOB,
        Command::Forfeit {
            match_id: from_alice,
        },
    );
    t.ok(
        BOB,
        Command::DeclineChallenge {
            match_id: from_dave,
        },
    );
    t.assert_free(BOB);
    for who in [ALICE, CAROL, DAVE] {
        t.assert_free(who);
    }
}

/// The contract could not create a game against a busy player; here the challenge may be sent
/// (it does not touch the opponent), and is accepted once they are free.
#[test]
fn challenging_a_busy_player_waits_for_their_consent() {
    let mut t = Table::new();
    let busy = t.challenge_match(BOB, CAROL, TTT, 0);
    let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
        102,
    );
    t.play_ttt(busy, &[0, 3, 1, 4, 2]);
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
    );
    assert_eq!(t.phase(id), Phase::Ready);
}

#[test]
fn board_cells_zero_to_eight_left_to_right_top_to_bottom() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[0, 8, 2]);
    assert_eq!(t.m(id).game_state(), "X-X-----O");
}
