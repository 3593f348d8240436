//! The Sui contract's game and its fixes (consent, draws, resignation), and every error, through
//! the ABI router.

mod common;

use common::*;
use triad_rules::{Game, Mark, MoveError, Outcome, Player, TicTacToe};

/// Statuses, as the ABI numbers them.
const INVITED: u8 = 1;
const PLAYING: u8 = 2;
const WON: u8 = 3;
const DRAWN: u8 = 4;
const RESIGNED: u8 = 5;
const WITHDRAWN: u8 = 6;
const DECLINED: u8 = 7;

/// X completes the top row.
const X_WINS: &[u8] = &[0, 3, 1, 4, 2];
/// O completes the middle row.
const O_WINS: &[u8] = &[0, 3, 1, 4, 8, 5];
/// X O X / X O O / O X X.
const DRAW: &[u8] = &[0, 1, 2, 4, 3, 5, 7, 6, 8];
/// X's ninth mark completes the diagonal 0-4-8.
const NINTH_MARK_WINS: &[u8] = &[0, 1, 2, 3, 4, 5, 7, 6, 8];

fn closed(receipt: &Receipt) -> Vec<BoardClosed> {
    receipt.events::<BoardClosed>()
}

#[test]
fn an_invitation_binds_the_creator_but_not_the_opponent_until_accepted() {
    let b = Boards::new();
    let receipt = b.create(ALICE, BOB);
    assert_eq!(
        createBoardCall::abi_decode_returns(receipt.output()).unwrap(),
        1
    );
    assert_eq!(
        receipt.events::<BoardCreated>(),
        [BoardCreated {
            boardId: 1,
            creator: ALICE,
            opponent: BOB
        }]
    );
    let board = b.board(1);
    assert_eq!(
        (board.id, board.creator, board.opponent, board.status),
        (1, ALICE, BOB, INVITED)
    );
    assert_eq!(board.cells, "---------");
    assert_eq!(
        (board.nextPlayer, board.winner),
        (Address::ZERO, Address::ZERO)
    );
    assert_eq!(b.board_of(ALICE), board);
    assert_eq!(
        b.board_of(BOB).id,
        0,
        "an invitation does not bind the opponent"
    );
    // Nobody plays before the opponent accepts.
    assert_error(&b.play(ALICE, 4), NotInPlay {});
    assert_error(&b.play(BOB, 4), NotAPlayer {});

    let accepted = b.accept(BOB, 1);
    assert_eq!(
        accepted.events::<BoardAccepted>(),
        [BoardAccepted { boardId: 1 }]
    );
    let board = b.board(1);
    assert_eq!((board.status, board.nextPlayer), (PLAYING, ALICE));
    assert_eq!(b.board_of(BOB), board);
}

#[test]
fn creating_a_board_needs_a_real_opponent_and_a_free_creator() {
    let b = Boards::new();
    assert_error(&b.create(ALICE, Address::ZERO), ZeroAddress {});
    assert_error(&b.create(ALICE, ALICE), SelfPlay {});
    b.create(ALICE, BOB).assert_ok();
    assert_error(&b.create(ALICE, CAROL), AlreadyInGame { boardId: 1 });
    b.accept(BOB, 1).assert_ok();
    assert_error(&b.create(ALICE, CAROL), AlreadyInGame { boardId: 1 });
    assert_error(&b.create(BOB, CAROL), AlreadyInGame { boardId: 1 });
    assert_eq!(b.board_of(CAROL).id, 0);
}

#[test]
fn an_invited_player_may_be_busy_and_accepts_only_when_free() {
    let b = Boards::new();
    b.create(ALICE, BOB).assert_ok();
    // BOB is not locked in by ALICE's invitation: he starts a game with CAROL.
    b.create(BOB, CAROL).assert_ok();
    b.accept(CAROL, 2).assert_ok();
    assert_error(&b.accept(BOB, 1), AlreadyInGame { boardId: 2 });
    // Once that game is over, he may accept ALICE's.
    b.resign(CAROL).assert_ok();
    b.accept(BOB, 1).assert_ok();
    assert_eq!(b.board_of(BOB).id, 1);
}

#[test]
fn only_the_invited_player_accepts_and_only_once() {
    let b = Boards::new();
    b.create(ALICE, BOB).assert_ok();
    for id in [0, 2, u64::MAX] {
        assert_error(&b.accept(BOB, id), UnknownBoard {});
        assert_error(&b.decline(BOB, id), UnknownBoard {});
    }
    assert_error(&b.accept(CAROL, 1), NotInvited {});
    assert_error(&b.accept(ALICE, 1), NotInvited {});
    assert_error(&b.decline(CAROL, 1), NotInvited {});
    b.accept(BOB, 1).assert_ok();
    assert_error(&b.accept(BOB, 1), NotWaiting {});
    assert_error(&b.decline(BOB, 1), NotWaiting {});
}

#[test]
fn a_declined_invitation_frees_its_creator() {
    let b = Boards::new();
    b.create(ALICE, BOB).assert_ok();
    let receipt = b.decline(BOB, 1);
    assert_eq!(
        closed(&receipt),
        [BoardClosed {
            boardId: 1,
            winner: Address::ZERO,
            status: DECLINED
        }]
    );
    assert_eq!(b.board(1).status, DECLINED);
    assert_error(&b.accept(BOB, 1), NotWaiting {});
    assert_error(&b.play(ALICE, 0), GameOver {});
    b.create(ALICE, CAROL).assert_ok();
}

#[test]
fn the_creator_can_withdraw_an_invitation_by_resigning() {
    let b = Boards::new();
    b.create(ALICE, BOB).assert_ok();
    let receipt = b.resign(ALICE);
    assert_eq!(
        closed(&receipt),
        [BoardClosed {
            boardId: 1,
            winner: Address::ZERO,
            status: WITHDRAWN
        }]
    );
    assert_error(&b.accept(BOB, 1), NotWaiting {});
    b.create(ALICE, BOB).assert_ok();
}

#[test]
fn move_errors_keep_the_sui_contracts_codes_in_the_rules_crate_order() {
    let b = Boards::new();
    assert_error(&b.play(CAROL, 0), NotAPlayer {});
    b.started();
    // X moves first.
    assert_error(&b.play(BOB, 0), NotYourTurn {});
    for position in [9, 10, 255] {
        assert_error(&b.play(ALICE, position), InvalidPosition {});
    }
    b.play(ALICE, 4).assert_ok();
    assert_error(&b.play(BOB, 4), CellOccupied {});
    // The turn is checked before the cell (the Sui contract checked the cell first).
    assert_error(&b.play(ALICE, 4), NotYourTurn {});
    assert_error(&b.play(ALICE, 200), NotYourTurn {});
    assert_eq!(b.board(1).cells, "----X----");
}

#[test]
fn moves_alternate_and_are_announced() {
    let b = Boards::new();
    b.started();
    let x = b.play(ALICE, 4);
    assert_eq!(
        x.events::<Played>(),
        [Played {
            boardId: 1,
            player: ALICE,
            position: 4
        }]
    );
    assert_eq!(b.board(1).nextPlayer, BOB);
    b.play(BOB, 0).assert_ok();
    let board = b.board(1);
    assert_eq!(
        (board.cells.as_str(), board.nextPlayer),
        ("O---X----", ALICE)
    );
    assert!(closed(&x).is_empty());
}

#[test]
fn three_in_a_row_wins_and_frees_both_players() {
    for (cells, winner, loser, board) in [
        (X_WINS, ALICE, BOB, "XXXOO----"),
        (O_WINS, BOB, ALICE, "XX-OOO--X"),
    ] {
        let b = Boards::new();
        b.started();
        let receipts = b.moves(cells);
        assert!(receipts.iter().all(Receipt::succeeded));
        assert_eq!(
            closed(receipts.last().unwrap()),
            [BoardClosed {
                boardId: 1,
                winner,
                status: WON
            }]
        );
        let view = b.board(1);
        assert_eq!(
            (
                view.status,
                view.winner,
                view.nextPlayer,
                view.cells.as_str()
            ),
            (WON, winner, Address::ZERO, board)
        );
        assert_error(&b.play(loser, 8), GameOver {});
        assert_error(&b.resign(winner), GameOver {});
        b.create(winner, CAROL).assert_ok();
        b.create(loser, DAVE).assert_ok();
    }
}

#[test]
fn a_draw_ends_the_game_and_frees_both_players() {
    let b = Boards::new();
    b.started();
    let receipts = b.moves(DRAW);
    assert!(receipts.iter().all(Receipt::succeeded));
    assert!(receipts[..8].iter().all(|r| closed(r).is_empty()));
    assert_eq!(
        closed(receipts.last().unwrap()),
        [BoardClosed {
            boardId: 1,
            winner: Address::ZERO,
            status: DRAWN
        }]
    );
    let view = b.board(1);
    assert_eq!((view.status, view.cells.as_str()), (DRAWN, "XOXXOOOXX"));
    // The Sui contract left both players locked after a draw.
    b.create(ALICE, CAROL).assert_ok();
    b.create(BOB, DAVE).assert_ok();
}

#[test]
fn a_line_on_the_ninth_mark_is_a_win_not_a_draw() {
    let b = Boards::new();
    b.started();
    let receipts = b.moves(NINTH_MARK_WINS);
    assert_eq!(
        closed(receipts.last().unwrap()),
        [BoardClosed {
            boardId: 1,
            winner: ALICE,
            status: WON
        }]
    );
}

#[test]
fn resigning_gives_the_game_to_the_opponent() {
    for (resigner, winner) in [(ALICE, BOB), (BOB, ALICE)] {
        let b = Boards::new();
        b.started();
        b.play(ALICE, 4).assert_ok();
        let receipt = b.resign(resigner);
        assert_eq!(
            closed(&receipt),
            [BoardClosed {
                boardId: 1,
                winner,
                status: RESIGNED
            }]
        );
        let view = b.board(1);
        assert_eq!((view.status, view.winner), (RESIGNED, winner));
        assert_error(&b.resign(resigner), GameOver {});
        assert_error(&b.play(winner, 0), GameOver {});
        b.create(ALICE, BOB).assert_ok();
    }
    assert_error(&Boards::new().resign(CAROL), NotAPlayer {});
}

#[test]
fn lookups_by_address_and_by_id() {
    let b = Boards::new();
    let nobody = b.board_of(DAVE);
    assert_eq!(
        (nobody.id, nobody.status, nobody.cells.as_str()),
        (0, 0, "---------")
    );
    assert_error(&b.send(CAROL, getBoardCall { boardId: 0 }), UnknownBoard {});
    assert_error(&b.send(CAROL, getBoardCall { boardId: 1 }), UnknownBoard {});
    b.started();
    b.moves(X_WINS);
    b.create(ALICE, CAROL).assert_ok();
    // ALICE's current board is the new invitation; the old one is still there by id.
    assert_eq!(b.board_of(ALICE).id, 2);
    assert_eq!(b.board_of(BOB).id, 1);
    assert_eq!(b.board(1).status, WON);
    assert_error(&b.send(CAROL, getBoardCall { boardId: 3 }), UnknownBoard {});
}

#[test]
fn several_boards_at_once() {
    let b = Boards::new();
    b.started();
    b.create(CAROL, DAVE).assert_ok();
    b.accept(DAVE, 2).assert_ok();
    b.play(CAROL, 8).assert_ok();
    b.play(ALICE, 0).assert_ok();
    assert_eq!(b.board(1).cells, "X--------");
    assert_eq!(b.board(2).cells, "--------X");
    assert_error(&b.play(CAROL, 7), NotYourTurn {});
    b.play(DAVE, 7).assert_ok();
    assert_eq!(b.board(1).nextPlayer, BOB);
    assert_eq!(b.board(2).nextPlayer, CAROL);
}

#[test]
fn no_function_accepts_ether() {
    let b = Boards::new();
    b.create(ALICE, BOB).assert_ok();
    let calls = [
        createBoardCall { opponent: CAROL }.abi_encode(),
        acceptBoardCall { boardId: 1 }.abi_encode(),
        declineBoardCall { boardId: 1 }.abi_encode(),
        playGameCall { position: 0 }.abi_encode(),
        resignCall {}.abi_encode(),
        boardOfCall { player: ALICE }.abi_encode(),
        getBoardCall { boardId: 1 }.abi_encode(),
    ];
    for data in calls {
        for who in [ALICE, BOB, CAROL] {
            let receipt = b.chain.call(who, U256::from(1), data.clone());
            assert_eq!(receipt.result, Err(Vec::new()));
            assert_eq!(b.chain.balance(who), U256::from(1_000));
        }
    }
    assert_eq!(b.chain.balance(CONTRACT), U256::ZERO);
    assert_eq!(
        b.chain.call(ALICE, U256::from(1), Vec::new()).result,
        Err(Vec::new())
    );
    assert_eq!(b.board(1).status, INVITED, "nothing changed");
}

/// The contract's wiring (seats, marks, cells, endings, error mapping) against the rules
/// crate, on random attempts by either player, legal or not.
#[test]
fn random_games_follow_the_rules_crate() {
    let mut seed = 0x5eed_u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    for _ in 0..300 {
        let b = Boards::new();
        let id = b.started();
        let mut game = TicTacToe::default();
        while !game.is_over() {
            let player = if next(4) == 0 {
                game.turn().other()
            } else {
                game.turn()
            };
            let position = if next(10) == 0 {
                9 + next(247) as u8
            } else {
                next(9) as u8
            };
            let (who, mark) = match player {
                Player::First => (ALICE, Mark::X),
                Player::Second => (BOB, Mark::O),
            };
            let receipt = b.play(who, position);
            match game.play_as(player, position, mark) {
                Ok((next_game, _)) => {
                    receipt.assert_ok();
                    game = next_game;
                    assert_eq!(b.board(id).cells, game.to_string());
                }
                Err(error) => {
                    let expected = match error {
                        MoveError::NotYourTurn => NotYourTurn {}.abi_encode(),
                        MoveError::InvalidPosition => InvalidPosition {}.abi_encode(),
                        MoveError::CellOccupied => CellOccupied {}.abi_encode(),
                        other => panic!("the rules refused with {other:?}"),
                    };
                    assert_eq!(
                        receipt.result,
                        Err(expected),
                        "{who} at {position} on {game}"
                    );
                }
            }
        }
        let view = b.board(id);
        match game.outcome() {
            Some(Outcome::Win { winner, .. }) => {
                let address = if winner == Player::First { ALICE } else { BOB };
                assert_eq!((view.status, view.winner), (WON, address));
            }
            Some(Outcome::Draw) => assert_eq!((view.status, view.winner), (DRAWN, Address::ZERO)),
            None => unreachable!("the loop ends with the game"),
        }
    }
}
