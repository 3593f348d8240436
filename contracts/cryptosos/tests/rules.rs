//! Every rule of CryptoSOS and every error of the contract, through the ABI router, with every
//! payout asserted as a balance change.

mod common;

use common::*;

/// CryptoSOS's worked example (`O-SOOS--S`), then ALICE's S in square 7 spells S-O-S on the
/// diagonal 3-5-7.
const FIGURE_1: &[(u8, char)] = &[
    (1, 'O'),
    (3, 'S'),
    (4, 'O'),
    (5, 'O'),
    (6, 'S'),
    (9, 'S'),
    (7, 'S'),
];
/// BOB completes the top row on the fourth mark.
const BOB_WINS: &[(u8, char)] = &[(1, 'S'), (2, 'O'), (9, 'O'), (3, 'S')];
/// Nine O's: the board fills with no S-O-S.
const TIE: &[(u8, char)] = &[
    (1, 'O'),
    (2, 'O'),
    (3, 'O'),
    (4, 'O'),
    (5, 'O'),
    (6, 'O'),
    (7, 'O'),
    (8, 'O'),
    (9, 'O'),
];
/// Eight marks without S-O-S, then ALICE's ninth completes the top row.
const NINTH_MARK_WINS: &[(u8, char)] = &[
    (1, 'S'),
    (2, 'O'),
    (4, 'O'),
    (5, 'O'),
    (6, 'O'),
    (7, 'O'),
    (8, 'O'),
    (9, 'O'),
    (3, 'S'),
];

fn succeeded(receipts: &[Receipt]) -> bool {
    receipts.iter().all(Receipt::succeeded)
}

#[test]
fn the_first_player_waits_and_the_second_starts_the_game() {
    let t = Table::new();
    let w = t.watch();
    let first = t.play(ALICE);
    assert_eq!(
        events::<StartGame>(&first),
        [StartGame {
            _0: ALICE,
            _1: Address::ZERO
        }]
    );
    w.assert_changed(&[(ALICE, -milli(1000)), (CONTRACT, milli(1000))]);
    let second = t.play(BOB);
    assert_eq!(
        events::<StartGame>(&second),
        [StartGame { _0: ALICE, _1: BOB }]
    );
    w.assert_changed(&[
        (ALICE, -milli(1000)),
        (BOB, -milli(1000)),
        (CONTRACT, milli(2000)),
    ]);
    assert_eq!(t.state(ALICE), "---------");
    assert_eq!(t.state(BOB), "---------");
    // The first player moves first.
    assert_error(&t.place_s(BOB, 5), NotYourTurn {});
    assert!(t.place_s(ALICE, 5).succeeded());
}

#[test]
fn play_takes_exactly_one_ether() {
    let t = Table::new();
    let w = t.watch();
    let one_wei = U256::from(1);
    for value in [
        U256::ZERO,
        one_wei,
        ETHER - one_wei,
        ETHER + one_wei,
        ether(2),
    ] {
        let receipt = t.send(ALICE, value, playCall {});
        assert_error(&receipt, WrongStake { required: ETHER });
    }
    w.assert_unchanged();
    assert!(t.play(ALICE).succeeded());
}

#[test]
fn nobody_plays_against_themselves() {
    let t = Table::new();
    t.play(ALICE).assert_ok();
    let w = t.watch();
    assert_error(&t.play(ALICE), SelfPlay {});
    w.assert_unchanged();
    // The waiting slot is still ALICE's: BOB joins her.
    assert_eq!(
        events::<StartGame>(&t.play(BOB)),
        [StartGame { _0: ALICE, _1: BOB }]
    );
}

#[test]
fn a_player_in_a_game_cannot_play_another() {
    let t = Table::new();
    t.started();
    let w = t.watch();
    assert_error(&t.play(ALICE), AlreadyInGame { gameId: 1 });
    assert_error(&t.play(BOB), AlreadyInGame { gameId: 1 });
    w.assert_unchanged();
}

#[test]
fn moves_carry_the_square_the_real_mark_and_the_player() {
    let t = Table::new();
    t.started();
    let s = t.place_s(ALICE, 1);
    assert_eq!(
        events::<Move>(&s),
        [Move {
            _0: 1,
            _1: 1,
            _2: ALICE
        }]
    );
    let o = t.place_o(BOB, 9);
    assert_eq!(
        events::<Move>(&o),
        [Move {
            _0: 9,
            _1: 2,
            _2: BOB
        }]
    );
    assert!(s.transfers.is_empty() && o.transfers.is_empty());
    // Square 1 is the first character, square 9 the last; both players see the board.
    assert_eq!(t.state(ALICE), "S-------O");
    assert_eq!(t.state(BOB), "S-------O");
    // Someone else's view is their own (empty) board.
    assert_eq!(t.state(EVE), "---------");
}

#[test]
fn move_errors_follow_the_rules_crate_order() {
    let t = Table::new();
    // Never played.
    assert_error(&t.place_s(EVE, 5), NotAPlayer {});
    // Waiting for an opponent.
    t.play(ALICE).assert_ok();
    assert_error(&t.place_s(ALICE, 5), NotInPlay {});
    t.play(BOB).assert_ok();
    let w = t.watch();
    for square in [0, 10, 255] {
        assert_error(&t.place_s(ALICE, square), InvalidPosition {});
        assert_error(&t.place_o(ALICE, square), InvalidPosition {});
    }
    t.place_o(ALICE, 5).assert_ok();
    assert_error(&t.place_s(BOB, 5), CellOccupied {});
    assert_error(&t.place_o(BOB, 5), CellOccupied {});
    // The turn is checked before the square: out of turn, a bad square is not reported.
    assert_error(&t.place_s(ALICE, 0), NotYourTurn {});
    assert_error(&t.place_s(ALICE, 5), NotYourTurn {});
    w.assert_unchanged();
    assert_eq!(t.state(ALICE), "----O----", "refused moves change nothing");
}

#[test]
fn a_line_of_sos_wins_1_8_ether_and_counts_in_the_hall_of_fame() {
    let t = Table::new();
    t.started();
    let w = t.watch();
    let receipts = t.moves(FIGURE_1);
    assert!(succeeded(&receipts));
    let last = receipts.last().unwrap();
    assert_eq!(
        events::<Move>(last),
        [Move {
            _0: 7,
            _1: 1,
            _2: ALICE
        }]
    );
    assert_eq!(events::<Win>(last), [Win { _0: ALICE }]);
    assert_eq!(t.state(ALICE), "O-SOOSS-S");
    // The winner gets 1.8 of the 2 ether; 0.2 stays in the reserve.
    w.assert_changed(&[(ALICE, milli(1800)), (CONTRACT, -milli(1800))]);
    assert_eq!(t.balance(CONTRACT), milliether(200));
    assert_eq!(t.stats(ALICE), (1, 1));
    assert_eq!(t.stats(BOB), (0, 1));
    // The game is over for both, and both are free to play again.
    assert_error(&t.place_o(BOB, 2), GameOver {});
    assert_error(&t.ur2slow(ALICE), GameOver {});
    assert!(t.play(BOB).succeeded());
    assert!(t.play(ALICE).succeeded());
}

#[test]
fn the_second_player_can_win_too() {
    let t = Table::new();
    t.started();
    let w = t.watch();
    let receipts = t.moves(BOB_WINS);
    assert!(succeeded(&receipts));
    assert_eq!(events::<Win>(receipts.last().unwrap()), [Win { _0: BOB }]);
    w.assert_changed(&[(BOB, milli(1800)), (CONTRACT, -milli(1800))]);
    assert_eq!((t.stats(ALICE), t.stats(BOB)), ((0, 1), (1, 1)));
}

#[test]
fn a_win_on_the_ninth_mark_is_a_win() {
    let t = Table::new();
    t.started();
    let w = t.watch();
    let receipts = t.moves(NINTH_MARK_WINS);
    assert!(succeeded(&receipts));
    assert_eq!(events::<Win>(receipts.last().unwrap()), [Win { _0: ALICE }]);
    w.assert_changed(&[(ALICE, milli(1800)), (CONTRACT, -milli(1800))]);
    assert_eq!(t.state(BOB), "SOSOOOOOO");
}

#[test]
fn a_tie_refunds_0_9_each_and_announces_win_of_nobody() {
    let t = Table::new();
    t.started();
    let w = t.watch();
    let receipts = t.moves(TIE);
    assert!(succeeded(&receipts));
    let last = receipts.last().unwrap();
    assert_eq!(events::<Win>(last), [Win { _0: Address::ZERO }]);
    assert!(receipts[..8].iter().all(|r| events::<Win>(r).is_empty()));
    w.assert_changed(&[
        (ALICE, milli(900)),
        (BOB, milli(900)),
        (CONTRACT, -milli(1800)),
    ]);
    assert!(last.transfers.iter().all(|t| !t.to.is_zero()));
    assert_eq!((t.stats(ALICE), t.stats(BOB)), ((0, 1), (0, 1)));
    assert_error(&t.place_s(ALICE, 1), GameOver {});
}

#[test]
fn the_waiting_player_cancels_after_two_minutes() {
    let t = Table::new();
    t.play(ALICE).assert_ok();
    // Only the waiting player can cancel.
    assert_error(&t.cancel(BOB), NotWaiting {});
    assert_error(&t.cancel(EVE), NotWaiting {});
    t.chain.advance(119);
    assert_error(&t.cancel(ALICE), WaitNotOver { secondsLeft: 1 });
    t.chain.advance(1);
    let w = t.watch();
    let receipt = t.cancel(ALICE);
    assert!(receipt.succeeded());
    assert!(receipt.logs.is_empty(), "a cancel emits nothing");
    w.assert_changed(&[(ALICE, milli(1000)), (CONTRACT, -milli(1000))]);
    // Not counted, not waiting any more; the next player waits afresh.
    assert_eq!(t.stats(ALICE), (0, 0));
    assert_error(&t.cancel(ALICE), NotWaiting {});
    assert_eq!(
        events::<StartGame>(&t.play(BOB)),
        [StartGame {
            _0: BOB,
            _1: Address::ZERO
        }]
    );
    // ALICE may play again (she joins BOB).
    assert_eq!(
        events::<StartGame>(&t.play(ALICE)),
        [StartGame { _0: BOB, _1: ALICE }]
    );
}

#[test]
fn a_started_game_cannot_be_cancelled() {
    let t = Table::new();
    t.started();
    t.chain.advance(600);
    assert_error(&t.cancel(ALICE), NotWaiting {});
    assert_error(&t.cancel(BOB), NotWaiting {});
}

#[test]
fn the_last_mover_claims_1_9_ether_after_a_minute() {
    let t = Table::new();
    t.started();
    t.place_s(ALICE, 5).assert_ok();
    t.chain.advance(59);
    assert_error(&t.ur2slow(ALICE), DeadlineNotReached { secondsLeft: 1 });
    // Only the player who moved last may claim, whatever the time.
    assert_error(&t.ur2slow(BOB), NotLastMover {});
    t.chain.advance(1);
    assert_error(&t.ur2slow(BOB), NotLastMover {});
    assert_error(&t.ur2slow(EVE), NotAPlayer {});
    let w = t.watch();
    let receipt = t.ur2slow(ALICE);
    assert_eq!(events::<Win>(&receipt), [Win { _0: ALICE }]);
    w.assert_changed(&[(ALICE, milli(1900)), (CONTRACT, -milli(1900))]);
    assert_eq!(t.balance(CONTRACT), milliether(100));
    // Counted for both, a win for the claimer.
    assert_eq!((t.stats(ALICE), t.stats(BOB)), ((1, 1), (0, 1)));
    assert_error(&t.place_o(BOB, 1), GameOver {});
    assert_error(&t.ur2slow(ALICE), GameOver {});
}

#[test]
fn each_move_restarts_the_minute() {
    let t = Table::new();
    t.started();
    t.place_s(ALICE, 1).assert_ok();
    t.chain.advance(50);
    t.place_o(BOB, 2).assert_ok();
    t.chain.advance(50);
    // 100 s after ALICE's move but 50 s after BOB's: BOB must wait 10 more seconds.
    assert_error(&t.ur2slow(BOB), DeadlineNotReached { secondsLeft: 10 });
    t.chain.advance(10);
    assert_eq!(events::<Win>(&t.ur2slow(BOB)), [Win { _0: BOB }]);
}

#[test]
fn a_game_whose_first_move_never_comes_is_aborted_with_full_refunds() {
    for (aborter, other) in [(BOB, ALICE), (ALICE, BOB)] {
        let t = Table::new();
        t.started();
        t.chain.advance(59);
        assert_error(&t.ur2slow(aborter), DeadlineNotReached { secondsLeft: 1 });
        t.chain.advance(1);
        let w = t.watch();
        let receipt = t.ur2slow(aborter);
        assert!(receipt.succeeded());
        assert!(receipt.logs.is_empty(), "an abort emits nothing");
        w.assert_changed(&[
            (aborter, milli(1000)),
            (other, milli(1000)),
            (CONTRACT, -milli(2000)),
        ]);
        assert!(receipt.transfers.iter().all(|t| !t.to.is_zero()));
        assert_eq!((t.stats(ALICE), t.stats(BOB)), ((0, 0), (0, 0)));
        assert_error(&t.place_s(ALICE, 1), GameOver {});
        assert!(t.play(aborter).succeeded() && t.play(other).succeeded());
    }
}

#[test]
fn the_owner_collects_the_reserve_and_nothing_held_for_players() {
    let t = Table::new();
    assert_error(&t.collect(OWNER), NothingToCollect {});
    t.started();
    t.moves(FIGURE_1);
    // A second game in play holds 2 ether that are not profit.
    t.play(CAROL).assert_ok();
    t.play(DAVE).assert_ok();
    assert_error(&t.collect(ALICE), OwnerOnly {});
    let w = t.watch();
    let receipt = t.collect(OWNER);
    assert!(receipt.succeeded() && receipt.logs.is_empty());
    w.assert_changed(&[(OWNER, milli(200)), (CONTRACT, -milli(200))]);
    assert_eq!(t.balance(CONTRACT), ether(2));
    assert_error(&t.collect(OWNER), NothingToCollect {});
}

#[test]
fn the_constructor_runs_once() {
    let t = Table::new();
    // A second constructor call (here by ALICE, trying to become the owner) is refused.
    assert_eq!(t.chain.deploy(ALICE, &[]).result, Err(Vec::new()));
    t.started();
    t.moves(BOB_WINS);
    assert_error(&t.collect(ALICE), OwnerOnly {});
    assert!(t.collect(OWNER).succeeded());
}

#[test]
fn the_owner_can_play_too() {
    let t = Table::new();
    t.play(OWNER).assert_ok();
    t.play(ALICE).assert_ok();
    // The stakes of the owner's own game are not profit.
    assert_error(&t.collect(OWNER), NothingToCollect {});
}

#[test]
fn a_refused_payout_to_the_opponent_is_kept_for_them() {
    let t = Table::new();
    t.started();
    t.chain.refuse_ether(BOB, true);
    let w = t.watch();
    let receipts = t.moves(TIE);
    assert!(succeeded(&receipts), "BOB cannot block ALICE's last move");
    // ALICE gets her 0.9; BOB's 0.9 stays in the contract, kept for him.
    w.assert_changed(&[(ALICE, milli(900)), (CONTRACT, -milli(900))]);
    // The owner's profit is the reserve's 0.2, not what is kept for BOB.
    let w = t.watch();
    assert!(t.collect(OWNER).succeeded());
    w.assert_changed(&[(OWNER, milli(200)), (CONTRACT, -milli(200))]);
    // While his account still refuses ether, his withdrawal fails and changes nothing.
    assert_error(&t.withdraw(BOB), TransferFailed {});
    t.chain.refuse_ether(BOB, false);
    let w = t.watch();
    assert!(t.withdraw(BOB).succeeded());
    w.assert_changed(&[(BOB, milli(900)), (CONTRACT, -milli(900))]);
    assert_error(&t.withdraw(BOB), NothingToWithdraw {});
    assert_error(&t.withdraw(ALICE), NothingToWithdraw {});
    assert_eq!(t.balance(CONTRACT), U256::ZERO);
}

#[test]
fn a_refused_abort_refund_is_kept_too() {
    let t = Table::new();
    t.started();
    t.chain.refuse_ether(ALICE, true);
    t.chain.advance(60);
    let w = t.watch();
    assert!(t.ur2slow(BOB).succeeded());
    w.assert_changed(&[(BOB, milli(1000)), (CONTRACT, -milli(1000))]);
    t.chain.refuse_ether(ALICE, false);
    assert!(t.withdraw(ALICE).succeeded());
    assert_eq!(t.balance(CONTRACT), U256::ZERO);
}

#[test]
fn a_caller_whose_account_refuses_ether_only_blocks_themselves() {
    let t = Table::new();
    t.started();
    t.chain.refuse_ether(ALICE, true);
    let receipts = t.moves(&FIGURE_1[..6]);
    assert!(succeeded(&receipts));
    let w = t.watch();
    // ALICE's winning move would pay ALICE, who refuses: the move is refused whole.
    assert_error(&t.place_s(ALICE, 7), TransferFailed {});
    w.assert_unchanged();
    assert_eq!(t.state(ALICE), "O-SOOS--S");
    t.chain.refuse_ether(ALICE, false);
    assert_eq!(events::<Win>(&t.place_s(ALICE, 7)), [Win { _0: ALICE }]);
}

#[test]
fn a_refusing_waiting_player_cannot_cancel() {
    let t = Table::new();
    t.play(ALICE).assert_ok();
    t.chain.refuse_ether(ALICE, true);
    t.chain.advance(120);
    assert_error(&t.cancel(ALICE), TransferFailed {});
    // Still waiting: BOB can join.
    assert_eq!(
        events::<StartGame>(&t.play(BOB)),
        [StartGame { _0: ALICE, _1: BOB }]
    );
}

#[test]
fn functions_that_take_no_payment_refuse_ether() {
    let t = Table::new();
    t.started();
    t.place_s(ALICE, 1).assert_ok();
    t.chain.advance(120);
    let one_wei = U256::from(1);
    let calls: Vec<Vec<u8>> = vec![
        placeSCall { square: 2 }.abi_encode(),
        placeOCall { square: 2 }.abi_encode(),
        getGameStateCall {}.abi_encode(),
        cancelCall {}.abi_encode(),
        ur2slowCall {}.abi_encode(),
        collectProfitCall {}.abi_encode(),
        getPlayerStatsCall { player: ALICE }.abi_encode(),
        withdrawCall {}.abi_encode(),
    ];
    let w = t.watch();
    for data in calls {
        for who in [ALICE, BOB, OWNER] {
            let receipt = t.chain.call(who, one_wei, data.clone());
            assert_eq!(receipt.result, Err(Vec::new()), "{:02x?}", &data[..4]);
        }
    }
    w.assert_unchanged();
    // Without the wei, BOB's move goes through.
    assert!(t.place_o(BOB, 2).succeeded());
}

#[test]
fn unknown_calls_and_plain_ether_are_refused() {
    let t = Table::new();
    let w = t.watch();
    for data in [vec![], vec![0xde, 0xad], vec![0xde, 0xad, 0xbe, 0xef]] {
        assert_eq!(t.chain.call(ALICE, ETHER, data).result, Err(Vec::new()));
    }
    w.assert_unchanged();
}

#[test]
fn several_games_run_at_once_each_player_in_their_own() {
    let t = Table::new();
    t.play(ALICE).assert_ok();
    t.play(BOB).assert_ok();
    t.play(CAROL).assert_ok();
    assert_eq!(
        events::<StartGame>(&t.play(DAVE)),
        [StartGame {
            _0: CAROL,
            _1: DAVE
        }]
    );
    t.place_s(CAROL, 1).assert_ok();
    t.place_o(ALICE, 9).assert_ok();
    t.place_o(DAVE, 2).assert_ok();
    assert_eq!(t.state(ALICE), "--------O");
    assert_eq!(t.state(BOB), "--------O");
    assert_eq!(t.state(CAROL), "SO-------");
    assert_eq!(t.state(DAVE), "SO-------");
    // DAVE's game is not ALICE's: it is BOB's turn there, CAROL's here.
    assert_error(&t.place_s(ALICE, 1), NotYourTurn {});
    let w = t.watch();
    t.place_s(CAROL, 3).assert_ok();
    assert_eq!(t.state(CAROL), "SOS------");
    w.assert_changed(&[(CAROL, milli(1800)), (CONTRACT, -milli(1800))]);
    assert_eq!(t.stats(CAROL), (1, 1));
    assert_eq!(t.stats(ALICE), (0, 0), "ALICE's game is still going");
    assert!(t.place_s(BOB, 1).succeeded());
}

#[test]
fn the_hall_of_fame_adds_up_over_games() {
    let t = Table::new();
    // A win for ALICE, a tie, a claim by BOB, a cancel and an abort.
    t.started();
    t.moves(FIGURE_1);
    t.started();
    t.moves(TIE);
    t.started();
    t.place_s(ALICE, 1).assert_ok();
    t.place_o(BOB, 2).assert_ok();
    t.chain.advance(60);
    t.ur2slow(BOB).assert_ok();
    t.play(ALICE).assert_ok();
    t.chain.advance(120);
    t.cancel(ALICE).assert_ok();
    t.started();
    t.chain.advance(60);
    t.ur2slow(ALICE).assert_ok();
    assert_eq!(t.stats(ALICE), (1, 3));
    assert_eq!(t.stats(BOB), (1, 3));
    assert_eq!(t.stats(EVE), (0, 0));
    // 0.2 (win) + 0.2 (tie) + 0.1 (claim) in the reserve.
    assert_eq!(t.balance(CONTRACT), milliether(500));
}
