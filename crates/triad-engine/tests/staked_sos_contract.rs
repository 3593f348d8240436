//! Staked SOS from the open queue behaves as the on-chain SOS contract (CryptoSOS) specifies
//! it: play(), placeS/placeO, getGameState, fees and payouts in wei, collectProfit, the three
//! contract events, cancel and ur2slow, and the hall of fame -- with the bugs of the
//! contract's reference solution fixed.

mod common;

use common::*;
use triad_engine::{
    Account, Address, Command, ContractEvent, EndReason, Phase, Transfer, TransferReason,
};
use triad_rules::{Mark, Player};

fn contract_events(t: &Table) -> Vec<ContractEvent> {
    t.engine
        .log_for_tests()
        .iter()
        .filter_map(|e| t.engine.contract_event(e))
        .collect()
}

/// Two players with one ether each, matched by play() with a one-ether fee.
fn staked_sos() -> (Table, triad_engine::MatchId) {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let id = t.queue_match(ALICE, BOB, SOS, ETHER);
    t.assert_balances(&[(ALICE, 0), (BOB, 0)]);
    assert_eq!(t.escrow(id), 2 * ETHER);
    (t, id)
}

/// Alice S in square 1, Bob O in square 2, Alice S in square 3: SOS in the top row.
fn alice_wins(t: &mut Table, id: triad_engine::MatchId) {
    t.mv(ALICE, id, 0, Mark::S);
    t.mv(BOB, id, 1, Mark::O);
    t.mv(ALICE, id, 2, Mark::S);
}

#[test]
fn play_first_waits_and_the_second_starts_the_game() {
    let mut t = Table::new();
    let id = t.join(ALICE, SOS, 0);
    assert_eq!(t.phase(id), Phase::Waiting);
    assert_eq!(
        contract_events(&t),
        vec![ContractEvent::StartGame(ALICE, Address::ZERO)]
    );
    assert_eq!(t.join(BOB, SOS, 0), id);
    assert_eq!(t.phase(id), Phase::Ready);
    assert_eq!(
        contract_events(&t),
        vec![
            ContractEvent::StartGame(ALICE, Address::ZERO),
            ContractEvent::StartGame(ALICE, BOB)
        ]
    );
    assert_eq!(t.mover(id), ALICE, "the earlier joiner moves first");
}

#[test]
fn a_player_cannot_play_against_themselves() {
    let mut t = Table::new();
    t.fund(ALICE, 2 * ETHER);
    let id = t.join(ALICE, SOS, ETHER);
    // Calling play() again does not match Alice with herself, nor take a second fee.
    t.expect_err(
        ALICE,
        Command::JoinQueue {
            game: SOS,
            stake: ETHER,
        },
        102,
    );
    assert_eq!(t.balance(ALICE), ETHER);
    assert_eq!(t.engine.queue_len(SOS, ETHER), 1);
    assert_eq!(t.phase(id), Phase::Waiting);
}

#[test]
fn play_needs_the_fee_in_the_balance() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER - 1);
    let err = t.expect_err(
        ALICE,
        Command::JoinQueue {
            game: SOS,
            stake: ETHER,
        },
        105,
    );
    assert_eq!(
        err,
        triad_engine::EngineError::InsufficientBalance {
            needed: ETHER,
            available: ETHER - 1
        }
    );
    t.fund(ALICE, 1);
    t.join(ALICE, SOS, ETHER);
    assert_eq!(t.balance(ALICE), 0);
}

/// The contract's worked example: from "O-SOOS--S", an S in square 7 spells SOS on the diagonal
/// 3-5-7.
#[test]
fn the_worked_example_place_s_and_o_and_get_game_state() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, SOS, 0);
    // Squares 1-9 are cells 0-8.
    t.play(
        id,
        &[
            (0, Mark::O),
            (2, Mark::S),
            (3, Mark::O),
            (5, Mark::S),
            (4, Mark::O),
            (8, Mark::S),
        ],
    );
    assert_eq!(t.m(id).game_state(), "O-SOOS--S", "figure 1(b)");
    assert_eq!(t.phase(id), Phase::InProgress);
    let r = t.play(id, &[(6, Mark::S)]);
    assert_eq!(t.m(id).game_state(), "O-SOOSS-S", "figure 1(c)");
    let (_, reason, winner, won) = ended(&r).unwrap();
    assert_eq!((reason, winner), (EndReason::Win, Some(Player::First)));
    assert_eq!(won, cells(&[2, 4, 6]), "squares 3, 5 and 7");
    let last = contract_events(&t);
    assert_eq!(
        &last[last.len() - 2..],
        &[ContractEvent::Move(7, 1, ALICE), ContractEvent::Win(ALICE)]
    );
}

#[test]
fn winner_is_paid_1_8_ether_and_the_reserve_keeps_0_2() {
    let (mut t, id) = staked_sos();
    t.mv(ALICE, id, 0, Mark::S);
    t.mv(BOB, id, 1, Mark::O);
    let r = t.mv(ALICE, id, 2, Mark::S);
    assert_eq!(
        transfers(&r),
        vec![
            from_escrow(
                id,
                Account::Player(ALICE),
                tenths(18),
                TransferReason::Payout
            ),
            from_escrow(
                id,
                Account::Reserve,
                tenths(2),
                TransferReason::ReserveShare
            ),
        ]
    );
    t.assert_balances(&[(ALICE, 1_800_000_000_000_000_000), (BOB, 0)]);
    t.assert_reserve(200_000_000_000_000_000);
    assert_eq!(t.escrow(id), 0);
    assert_eq!(t.engine.ledger().total_held(), 2 * ETHER);
}

#[test]
fn tie_refunds_0_9_ether_each_and_the_reserve_keeps_0_2() {
    let (mut t, id) = staked_sos();
    let all_o: Vec<(u8, Mark)> = (0..9).map(|c| (c, Mark::O)).collect();
    let r = t.play(id, &all_o);
    assert_eq!(ended(&r).unwrap().1, EndReason::Draw);
    assert_eq!(
        transfers(&r),
        vec![
            from_escrow(
                id,
                Account::Player(ALICE),
                tenths(9),
                TransferReason::Payout
            ),
            from_escrow(id, Account::Player(BOB), tenths(9), TransferReason::Payout),
            from_escrow(
                id,
                Account::Reserve,
                tenths(2),
                TransferReason::ReserveShare
            ),
        ]
    );
    t.assert_balances(&[
        (ALICE, 900_000_000_000_000_000),
        (BOB, 900_000_000_000_000_000),
    ]);
    t.assert_reserve(200_000_000_000_000_000);
}

/// The reference solution emitted nothing on a tie; the contract asks for `Win(0)`.
#[test]
fn regression_a_tie_emits_win_with_the_zero_address() {
    let (mut t, id) = staked_sos();
    let all_o: Vec<(u8, Mark)> = (0..9).map(|c| (c, Mark::O)).collect();
    t.play(id, &all_o);
    assert_eq!(
        contract_events(&t).last(),
        Some(&ContractEvent::Win(Address::ZERO))
    );
    // …and nobody is paid at the zero address for it.
    assert_eq!(t.balance(Address::ZERO), 0);
}

/// The reference solution's Move event always said 1 (S). It carries the real mark:
/// 1 for S, 2 for O, with the square 1-9 and the real mover.
#[test]
fn regression_move_event_carries_the_real_mark() {
    let (mut t, id) = staked_sos();
    alice_wins(&mut t, id);
    let moves: Vec<ContractEvent> = contract_events(&t)
        .into_iter()
        .filter(|e| matches!(e, ContractEvent::Move(..)))
        .collect();
    assert_eq!(
        moves,
        vec![
            ContractEvent::Move(1, 1, ALICE),
            ContractEvent::Move(2, 2, BOB),
            ContractEvent::Move(3, 1, ALICE),
        ]
    );
}

#[test]
fn the_three_events_are_derived_exactly() {
    let (mut t, id) = staked_sos();
    alice_wins(&mut t, id);
    assert_eq!(
        contract_events(&t),
        vec![
            ContractEvent::StartGame(ALICE, Address::ZERO),
            ContractEvent::StartGame(ALICE, BOB),
            ContractEvent::Move(1, 1, ALICE),
            ContractEvent::Move(2, 2, BOB),
            ContractEvent::Move(3, 1, ALICE),
            ContractEvent::Win(ALICE),
        ]
    );
    // Only queue SOS matches are the contract's: a challenge or tic-tac-toe emits none.
    let other = t.challenge_match(CAROL, DAVE, SOS, 0);
    t.mv(CAROL, other, 0, Mark::S);
    let ttt = t.queue_match(ERIN, FRANK, TTT, 0);
    t.play_ttt(ttt, &[0]);
    assert_eq!(contract_events(&t).len(), 6);
}

#[test]
fn cancel_after_two_minutes_refunds_the_full_ether() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.at(1_000);
    let id = t.join(ALICE, SOS, ETHER);
    t.at(1_000 + WAIT_CANCEL_MS - 1);
    let err = t.expect_err(ALICE, Command::Cancel { match_id: id }, 106);
    assert_eq!(
        err,
        triad_engine::EngineError::WaitNotOver { remaining_ms: 1 }
    );
    t.at(1_000 + WAIT_CANCEL_MS);
    let r = t.ok(ALICE, Command::Cancel { match_id: id });
    assert_eq!(ended(&r).unwrap().1, EndReason::Cancelled);
    assert_eq!(
        transfers(&r),
        vec![from_escrow(
            id,
            Account::Player(ALICE),
            ETHER,
            TransferReason::Refund
        )]
    );
    t.assert_balances(&[(ALICE, 1_000_000_000_000_000_000)]);
    t.assert_reserve(0);
    assert_eq!(t.engine.queue_len(SOS, ETHER), 0);
    // A cancel emits no contract event (the contract defines none for it).
    assert_eq!(
        contract_events(&t),
        vec![ContractEvent::StartGame(ALICE, Address::ZERO)]
    );
    t.assert_free(ALICE);
}

/// The reference solution let anyone call cancel() on a waiting player's game.
#[test]
fn regression_only_the_waiting_player_can_cancel() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    let id = t.join(ALICE, SOS, ETHER);
    t.at(WAIT_CANCEL_MS * 10);
    t.expect_err(BOB, Command::Cancel { match_id: id }, 101);
    t.expect_err(OWNER, Command::Cancel { match_id: id }, 101);
    assert_eq!(t.phase(id), Phase::Waiting);
    assert_eq!(t.escrow(id), ETHER);
    t.ok(ALICE, Command::Cancel { match_id: id });
    assert_eq!(t.balance(ALICE), ETHER);
}

#[test]
fn a_started_game_cannot_be_cancelled() {
    let (mut t, id) = staked_sos();
    t.at(WAIT_CANCEL_MS * 2);
    t.expect_err(ALICE, Command::Cancel { match_id: id }, 107);
    t.expect_err(BOB, Command::Cancel { match_id: id }, 101);
}

#[test]
fn ur2slow_pays_1_9_ether_and_the_reserve_keeps_0_1() {
    let (mut t, id) = staked_sos();
    t.at(5_000);
    t.mv(ALICE, id, 0, Mark::S);
    // "More than 1 minute": at exactly the minute the claim is refused, 1 ms later taken.
    t.at(5_000 + MOVE_TIMEOUT_MS);
    let err = t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 110);
    assert_eq!(
        err,
        triad_engine::EngineError::DeadlineNotReached {
            remaining_ms: 1,
            your_move: false
        }
    );
    t.at(5_000 + MOVE_TIMEOUT_MS + 1);
    let r = t.ok(ALICE, Command::ClaimTimeout { match_id: id });
    let (_, reason, winner, _) = ended(&r).unwrap();
    assert_eq!((reason, winner), (EndReason::Timeout, Some(Player::First)));
    assert_eq!(
        transfers(&r),
        vec![
            from_escrow(
                id,
                Account::Player(ALICE),
                tenths(19),
                TransferReason::Payout
            ),
            from_escrow(
                id,
                Account::Reserve,
                tenths(1),
                TransferReason::ReserveShare
            ),
        ]
    );
    t.assert_balances(&[(ALICE, 1_900_000_000_000_000_000), (BOB, 0)]);
    t.assert_reserve(100_000_000_000_000_000);
    assert_eq!(contract_events(&t).last(), Some(&ContractEvent::Win(ALICE)));
    t.assert_free(ALICE);
    t.assert_free(BOB);
}

/// The reference solution let anyone call ur2slow(). Only the player who moved last may,
/// and never the slow player.
#[test]
fn regression_only_the_last_mover_can_claim_the_timeout() {
    let (mut t, id) = staked_sos();
    t.mv(ALICE, id, 0, Mark::S);
    t.at(MOVE_TIMEOUT_MS * 5);
    t.expect_err(BOB, Command::ClaimTimeout { match_id: id }, 111);
    t.expect_err(CAROL, Command::ClaimTimeout { match_id: id }, 101);
    t.expect_err(OWNER, Command::ClaimTimeout { match_id: id }, 101);
    // Bob may still move (nobody claimed); then Alice is the slow one.
    t.mv(BOB, id, 8, Mark::O);
    t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 111);
    t.expect_err(BOB, Command::ClaimTimeout { match_id: id }, 110);
    t.advance(MOVE_TIMEOUT_MS + 1);
    t.ok(BOB, Command::ClaimTimeout { match_id: id });
    t.assert_balances(&[(ALICE, 0), (BOB, tenths(19))]);
    assert_eq!(t.record(BOB), (1, 1));
    assert_eq!(t.record(ALICE), (0, 1));
}

/// The reference solution, when the first move never came, "refunded" 1.9 ether to the
/// zero address. The match is aborted: each player gets their full ether back, nobody
/// else gets anything, no Win event, no stats.
#[test]
fn regression_an_abort_pays_nobody_at_the_zero_address() {
    let (mut t, id) = staked_sos();
    t.at(MOVE_TIMEOUT_MS);
    t.expect_err(BOB, Command::ClaimTimeout { match_id: id }, 110);
    t.at(MOVE_TIMEOUT_MS + 1);
    let r = t.ok(BOB, Command::ClaimTimeout { match_id: id });
    let (_, reason, winner, _) = ended(&r).unwrap();
    assert_eq!((reason, winner), (EndReason::Aborted, None));
    let paid = transfers(&r);
    assert_eq!(
        paid,
        vec![
            from_escrow(id, Account::Player(ALICE), ETHER, TransferReason::Refund),
            from_escrow(id, Account::Player(BOB), ETHER, TransferReason::Refund),
        ]
    );
    assert!(
        !paid
            .iter()
            .any(|p: &Transfer| p.to == Account::Player(Address::ZERO))
    );
    t.assert_balances(&[(ALICE, ETHER), (BOB, ETHER), (Address::ZERO, 0)]);
    t.assert_reserve(0);
    assert!(
        !contract_events(&t)
            .iter()
            .any(|e| matches!(e, ContractEvent::Win(_)))
    );
    assert_eq!(t.record(ALICE), (0, 0));
    assert_eq!(t.record(BOB), (0, 0));
}

#[test]
fn collect_profit_by_the_owner_takes_the_whole_reserve() {
    let (mut t, id) = staked_sos();
    alice_wins(&mut t, id);
    let id2 = {
        t.fund(CAROL, ETHER);
        t.fund(DAVE, ETHER);
        t.queue_match(CAROL, DAVE, SOS, ETHER)
    };
    let all_o: Vec<(u8, Mark)> = (0..9).map(|c| (c, Mark::O)).collect();
    t.play(id2, &all_o);
    t.assert_reserve(400_000_000_000_000_000);
    // Others are refused, clearly.
    for who in [ALICE, BOB, CAROL] {
        let err = t.expect_err(who, Command::CollectReserve, 115);
        assert_eq!(err.name(), "owner_only");
    }
    let r = t.ok(OWNER, Command::CollectReserve);
    assert_eq!(
        transfers(&r),
        vec![Transfer {
            from: Account::Reserve,
            to: Account::Player(OWNER),
            amount: tenths(4),
            reason: TransferReason::Collect,
        }]
    );
    t.assert_reserve(0);
    t.assert_balances(&[(OWNER, 400_000_000_000_000_000)]);
    t.expect_err(OWNER, Command::CollectReserve, 121);
    // The owner takes it out of Triad like anyone else.
    t.ok(OWNER, Command::Withdraw { amount: tenths(4) });
    assert_eq!(t.balance(OWNER), 0);
    assert_eq!(t.engine.ledger().withdrawn(), tenths(4));
}

#[test]
fn hall_of_fame_counts_wins_and_games_as_u32() {
    let mut t = Table::new();
    for who in [ALICE, BOB, CAROL] {
        t.fund(who, 3 * ETHER);
    }
    // A cancelled participation does not count.
    let waiting = t.join(CAROL, SOS, ETHER);
    t.at(WAIT_CANCEL_MS);
    t.ok(CAROL, Command::Cancel { match_id: waiting });
    assert_eq!(t.record(CAROL), (0, 0));
    // A win counts for both, as a win for the winner.
    let id = t.queue_match(ALICE, BOB, SOS, ETHER);
    alice_wins(&mut t, id);
    assert_eq!(t.record(ALICE), (1, 1));
    assert_eq!(t.record(BOB), (0, 1));
    // A ur2slow counts for both, as a win for the claimer.
    let id = t.queue_match(BOB, CAROL, SOS, ETHER);
    t.mv(BOB, id, 4, Mark::O);
    t.advance(MOVE_TIMEOUT_MS + 1);
    t.ok(BOB, Command::ClaimTimeout { match_id: id });
    assert_eq!(t.record(BOB), (1, 2));
    assert_eq!(t.record(CAROL), (0, 1));
    // A tie counts as a game for both.
    let id = t.queue_match(ALICE, CAROL, SOS, 0);
    let all_o: Vec<(u8, Mark)> = (0..9).map(|c| (c, Mark::O)).collect();
    t.play(id, &all_o);
    assert_eq!(t.record(ALICE), (1, 2));
    assert_eq!(t.record(CAROL), (0, 2));
    assert_eq!(t.stats(CAROL).draws, 1);
    // Somebody who never played has (0, 0).
    assert_eq!(t.record(DAVE), (0, 0));
    let stats = t.stats(ALICE);
    let (wins, games): (u32, u32) = (stats.wins, stats.games);
    assert_eq!((wins, games), (1, 2));
}

/// Every decided ending of a contract game emits `Win` with the winner's real address: a win,
/// a ur2slow, and Triad's forfeit (the opponent wins).
#[test]
fn a_forfeit_emits_win_for_the_opponent() {
    let (mut t, id) = staked_sos();
    t.mv(ALICE, id, 4, Mark::O);
    t.ok(ALICE, Command::Forfeit { match_id: id });
    assert_eq!(contract_events(&t).last(), Some(&ContractEvent::Win(BOB)));
    t.assert_balances(&[(ALICE, 0), (BOB, tenths(18))]);
    t.assert_reserve(tenths(2));
}
