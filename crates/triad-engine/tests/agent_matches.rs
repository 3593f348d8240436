//! Games of the A2A tic-tac-toe protocol that Triad's agents speak, as engine matches: the server
//! relays agents' games as free challenges, so `propose` is a challenge with stake 0, `accept`
//! accepts it, each `move` is a move with the same `seq`, and `result {"outcome":"abort"}` is
//! [`Command::Abort`]. The engine referees; the ending and the hall of fame follow from the moves,
//! not from what an agent declares.

mod common;

use common::*;
use triad_engine::{Command, EndReason, Level, StartChoice};
use triad_rules::{Mark, Player};

/// The protocol's example game: Alice (X) challenges Bob (O); X wins with the diagonal 0-4-8.
#[test]
fn the_a2a_example_game_is_refereed_and_recorded() {
    let mut t = Table::new();
    let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
    );
    let boards = [
        "----X----",
        "-O--X----",
        "XO--X----",
        "XOO-X----",
        "XOO-X---X",
    ];
    for (n, (cell, board)) in [4, 1, 0, 2, 8].into_iter().zip(boards).enumerate() {
        let seq = n as u8 + 1;
        let (who, mark) = if seq % 2 == 1 {
            (ALICE, Mark::X)
        } else {
            (BOB, Mark::O)
        };
        t.ok(
            who,
            Command::Move {
                match_id: id,
                seq,
                cell,
                mark,
                signed: None,
            },
        );
        assert_eq!(t.m(id).game_state(), board, "after seq {seq}");
    }
    let result = t.result(id);
    assert_eq!(
        (result.reason, result.winner, result.cells),
        (EndReason::Win, Some(Player::First), cells(&[0, 4, 8]))
    );
    assert_eq!(t.record(ALICE), (1, 1));
    assert_eq!(t.record(BOB), (0, 1));
    assert!(t.stats(ALICE).rating.rating > t.stats(BOB).rating.rating);
}

#[test]
fn an_abort_in_play_ends_a_free_match_with_no_result_and_no_stats() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[4, 0, 8]);
    let receipt = t.ok(BOB, Command::Abort { match_id: id });
    assert_eq!(
        kinds(&receipt.events),
        ["match_aborted", "game_ended"],
        "stake 0: no money moves"
    );
    assert_eq!(
        ended(&receipt),
        Some((id, EndReason::Aborted, None, cells(&[])))
    );
    assert!(matches!(
        receipt.events[0].kind,
        triad_engine::EventKind::MatchAborted {
            by: Player::Second,
            ..
        }
    ));
    for who in [ALICE, BOB] {
        assert_eq!(t.record(who), (0, 0), "an aborted game counts in no stats");
        assert_eq!(t.stats(who).rating, Default::default());
        t.assert_free(who);
    }
    // An aborted match was not played: there is no rematch of it.
    t.expect_err(ALICE, Command::Rematch { match_id: id }, 117);
    // A second abort finds the match over.
    t.expect_err(ALICE, Command::Abort { match_id: id }, 0);
}

#[test]
fn either_player_may_abort_before_the_first_move() {
    for who in [ALICE, BOB] {
        let mut t = Table::new();
        let id = t.challenge_match(ALICE, BOB, SOS, 0);
        let receipt = t.ok(who, Command::Abort { match_id: id });
        assert_eq!(ended(&receipt).map(|e| e.1), Some(EndReason::Aborted));
        t.assert_free(ALICE);
        t.assert_free(BOB);
    }
}

#[test]
fn only_a_seated_player_of_a_match_in_play_may_abort() {
    let mut t = Table::new();
    // A challenge still waiting: the challenger withdraws instead, the challenged declines.
    let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Opponent);
    t.expect_err(ALICE, Command::Abort { match_id: id }, 112);
    t.expect_err(BOB, Command::Abort { match_id: id }, 101);
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
    );
    t.expect_err(CAROL, Command::Abort { match_id: id }, 101);
    t.expect_err(
        ALICE,
        Command::Abort {
            match_id: triad_engine::MatchId(99),
        },
        100,
    );
    // Bob moves first (the challenged player, as the challenge said).
    t.play_ttt(id, &[0, 3, 1, 4, 2]);
    assert_eq!(t.result(id).reason, EndReason::Win);
    assert_eq!(t.record(BOB), (1, 1));
    // A finished game cannot be aborted afterwards to undo the loss.
    t.expect_err(ALICE, Command::Abort { match_id: id }, 0);
    assert_eq!(t.record(ALICE), (0, 1));
}

#[test]
fn a_staked_match_cannot_be_aborted_but_can_be_forfeited() {
    let mut t = Table::new();
    t.fund(ALICE, 100);
    t.fund(BOB, 100);
    let id = t.queue_match(ALICE, BOB, TTT, 100);
    t.play_ttt(id, &[4, 0]);
    t.expect_err(ALICE, Command::Abort { match_id: id }, 126);
    assert_eq!(t.escrow(id), 200, "nothing moved");
    t.ok(ALICE, Command::Forfeit { match_id: id });
    assert_eq!(t.result(id).winner, Some(Player::Second));
}

#[test]
fn a_game_against_the_computer_can_be_aborted() {
    let mut t = Table::new();
    let id = match_id(&t.ok(
        ALICE,
        Command::PlayComputer {
            game: TTT,
            level: Level::Perfect,
            side: Player::Second,
        },
    ));
    assert_eq!(t.m(id).seq(), 1, "the computer opened");
    t.ok(ALICE, Command::Abort { match_id: id });
    assert_eq!(t.result(id).reason, EndReason::Aborted);
    t.assert_free(ALICE);
}

#[test]
fn a_resent_abort_with_its_idempotency_key_applies_once() {
    let mut t = Table::new();
    let id = t.challenge_match(ALICE, BOB, TTT, 0);
    let first = t
        .run_keyed(ALICE, 7, Command::Abort { match_id: id })
        .expect("applied");
    assert_eq!(kinds(&first.events), ["match_aborted", "game_ended"]);
    let again = t
        .run_keyed(ALICE, 7, Command::Abort { match_id: id })
        .expect("a duplicate");
    assert!(again.duplicate.is_some() && again.events.is_empty());
}

#[test]
fn the_same_two_agents_play_game_after_game() {
    // One active match per address: games follow one another, each a match of its own.
    let mut t = Table::new();
    let mut ids = Vec::new();
    for n in 0..4 {
        let (x, o) = if n % 2 == 0 {
            (ALICE, BOB)
        } else {
            (BOB, ALICE)
        };
        let id = t.challenge(x, o, TTT, 0, StartChoice::Challenger);
        t.ok(
            o,
            Command::AcceptChallenge {
                match_id: id,
                terms: None,
            },
        );
        // A second proposal while a game is on is refused: finish this one first.
        t.expect_err(
            x,
            Command::Challenge {
                opponent: o,
                game: TTT,
                stake: 0,
                first: StartChoice::Challenger,
            },
            102,
        );
        t.play_ttt(id, &[4, 0, 8, 2, 1, 7, 6, 3, 5]);
        assert_eq!(t.result(id).reason, EndReason::Draw);
        ids.push(id);
    }
    ids.dedup();
    assert_eq!(ids.len(), 4);
    assert_eq!(t.stats(ALICE).draws, 4);
    assert_eq!(t.stats(BOB).games, 4);
}
