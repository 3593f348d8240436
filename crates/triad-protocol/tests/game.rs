//! The state machine: the A2A protocol's rules one by one, the referee's checks, and random games.

use proptest::prelude::*;
use triad_protocol::{
    App, Ending, Game, GameId, GameResult, Message, Move, Outcome, Propose, ProtocolError, Side,
    Step, board_of, check_move, check_result,
};
use triad_rules::{AnyGame, Cell, GameKind, Mark, MoveError, Player};

const TTT: App = App::TicTacToe;

/// Alice proposes `role`, Bob accepts; returns both after the acceptance arrived.
fn start(app: App, alice_role: Player, game_id: Option<&str>) -> (Game, Game) {
    let id = game_id.map(|g| GameId::new(g).unwrap());
    let (mut alice, propose) = Game::propose(app, alice_role, id);
    let Message::Propose(p) = &propose else {
        unreachable!()
    };
    let (bob, accept) = Game::accept(app, p);
    assert_eq!(alice.receive(&accept).unwrap(), [Step::Accepted]);
    (alice, bob)
}

/// `mover` plays and `other` receives everything sent; returns what was sent.
#[track_caller]
fn exchange(mover: &mut Game, other: &mut Game, cell: u8, mark: Mark) -> Vec<Message> {
    let sent = mover.play(cell, mark).unwrap();
    for m in &sent {
        let steps = other.receive(m).unwrap();
        assert!(!matches!(steps[0], Step::Conflict { .. }), "{steps:?}");
    }
    sent
}

fn tampered(m: &Message, f: impl FnOnce(&mut Move)) -> Message {
    let Message::Move(mv) = m else {
        panic!("a move")
    };
    let mut mv = mv.clone();
    f(&mut mv);
    Message::Move(mv)
}

#[track_caller]
fn expect_conflict(steps: &[Step], code: u16) -> Message {
    match steps {
        [Step::Conflict { error, abort }] => {
            assert_eq!(error.code(), code, "{error}");
            assert_eq!(
                abort.payload_json(TTT),
                r#"{"outcome":"abort","reason":"state-conflict"}"#
            );
            abort.clone()
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[test]
fn never_act_out_of_turn() {
    let (mut alice, propose) = Game::propose(TTT, Player::Second, None);
    // Before the acceptance nobody moves.
    let e = alice.play(4, Mark::O).unwrap_err();
    assert_eq!(e.code(), 224);
    let Message::Propose(p) = &propose else {
        unreachable!()
    };
    let (mut bob, accept) = Game::accept(TTT, p);
    assert_eq!(bob.me(), Player::First, "Bob takes the remaining role, X");
    alice.receive(&accept).unwrap();
    // O does not open; X may not play O's mark; nobody moves twice.
    assert_eq!(
        alice.play(4, Mark::O).unwrap_err(),
        ProtocolError::IllegalMove(MoveError::NotYourTurn)
    );
    assert_eq!(
        bob.play(4, Mark::O).unwrap_err(),
        ProtocolError::IllegalMove(MoveError::NotYourMark)
    );
    assert_eq!(
        bob.play(9, Mark::X).unwrap_err(),
        ProtocolError::IllegalMove(MoveError::InvalidPosition)
    );
    exchange(&mut bob, &mut alice, 4, Mark::X);
    assert_eq!(
        bob.play(0, Mark::X).unwrap_err(),
        ProtocolError::IllegalMove(MoveError::NotYourTurn)
    );
    assert_eq!(
        alice.play(4, Mark::O).unwrap_err(),
        ProtocolError::IllegalMove(MoveError::CellOccupied)
    );
    assert!(alice.my_turn() && !bob.my_turn());
}

#[test]
fn a_seq_already_seen_is_ignored_silently() {
    let (mut alice, mut bob) = start(TTT, Player::First, None);
    let first = exchange(&mut alice, &mut bob, 4, Mark::X);
    assert_eq!(bob.receive(&first[0]).unwrap(), [Step::Ignored]);
    // A stale move with a seq already seen is ignored even if its content differs.
    let other = tampered(&first[0], |m| m.position = Cell::new(0).unwrap());
    assert_eq!(bob.receive(&other).unwrap(), [Step::Ignored]);
    // A repeated acceptance and a repeated proposal are ignored too.
    let (_, accept) = Game::accept(
        TTT,
        &Propose {
            role: Player::First,
            game_id: None,
        },
    );
    assert_eq!(alice.receive(&accept).unwrap(), [Step::Ignored]);
    let propose = Message::Propose(Propose {
        role: Player::First,
        game_id: None,
    });
    assert_eq!(bob.receive(&propose).unwrap(), [Step::Ignored]);
    // Nothing changed.
    assert_eq!(board_of(bob.position()), board_of(alice.position()));
    assert!(bob.my_turn());
}

#[test]
fn a_board_that_is_not_the_local_board_plus_the_move_is_a_state_conflict() {
    let (mut alice, mut bob) = start(TTT, Player::First, None);
    exchange(&mut alice, &mut bob, 4, Mark::X);
    let sent = bob.play(0, Mark::O).unwrap();
    let bad = tampered(&sent[0], |m| m.board[8] = Some(Mark::X));
    let abort = expect_conflict(&alice.receive(&bad).unwrap(), 223);
    assert_eq!(
        alice.ending(),
        Some(&Ending::Aborted {
            by: Side::Me,
            reason: Some("state-conflict".into())
        })
    );
    // The game is over for Alice: no more moves, and the real move comes too late.
    assert_eq!(alice.play(1, Mark::X).unwrap_err().code(), 0);
    assert_eq!(
        alice.receive(&sent[0]).unwrap(),
        [Step::Ignored],
        "its seq was seen"
    );
    // Bob learns of the abort.
    assert_eq!(
        bob.receive(&abort).unwrap(),
        [Step::Ended(Ending::Aborted {
            by: Side::Opponent,
            reason: Some("state-conflict".into())
        })]
    );
    assert_eq!(bob.play(1, Mark::O).unwrap_err().code(), 0);
}

#[test]
fn every_disagreement_about_a_move_ends_the_game() {
    type Tamper = fn(&mut Move);
    let cases: [(Tamper, u16); 6] = [
        (|m| m.reply_to = 0, 226),
        (|m| m.mark = Mark::O, 5),
        (|m| m.position = Cell::new(4).unwrap(), 3),
        (|m| m.board = [None; 9], 223),
        (
            |m| m.board[usize::from(m.position.index())] = Some(Mark::O),
            223,
        ),
        (|m| m.mark = Mark::S, 4),
    ];
    for (f, code) in cases {
        let (mut alice, mut bob) = start(TTT, Player::First, None);
        exchange(&mut alice, &mut bob, 4, Mark::X);
        exchange(&mut bob, &mut alice, 0, Mark::O);
        let sent = alice.play(8, Mark::X).unwrap();
        expect_conflict(&bob.receive(&tampered(&sent[0], f)).unwrap(), code);
    }
    // A move for the other player's turn: the sender thinks it is its turn.
    let (mut alice, _bob) = start(TTT, Player::First, None);
    let fake = Message::Move(Move {
        seq: 1,
        reply_to: 0,
        position: Cell::new(0).unwrap(),
        mark: Mark::O,
        board: [
            Some(Mark::O),
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        ],
        game_id: None,
    });
    expect_conflict(&alice.receive(&fake).unwrap(), 2);
}

#[test]
fn an_acceptance_that_takes_the_proposers_role_is_a_conflict() {
    let (mut alice, _) = Game::propose(TTT, Player::First, None);
    let wrong = Message::Accept(triad_protocol::Accept {
        role: Player::First,
        game_id: None,
    });
    expect_conflict(&alice.receive(&wrong).unwrap(), 228);
}

#[test]
fn results_are_checked_against_the_board() {
    let (mut alice, mut bob) = start(TTT, Player::First, None);
    for (who, cell) in [(0, 4), (1, 1), (0, 0), (1, 2)] {
        let (m, o) = if who == 0 {
            (&mut alice, &mut bob)
        } else {
            (&mut bob, &mut alice)
        };
        let mark = if who == 0 { Mark::X } else { Mark::O };
        exchange(m, o, cell, mark);
    }
    let sent = alice.play(8, Mark::X).unwrap();
    assert_eq!(sent.len(), 2, "the winning move and its result");
    assert_eq!(
        sent[1].payload_json(TTT),
        r#"{"outcome":"win","winner":"X"}"#
    );
    assert_eq!(
        bob.receive(&sent[0]).unwrap(),
        [Step::Moved {
            cell: 8,
            mark: Mark::X
        }]
    );
    assert_eq!(
        bob.ending(),
        Some(&Ending::Win {
            winner: Player::First
        })
    );
    assert!(!bob.is_settled(), "Bob waits for Alice's declaration");
    // A wrong declaration is refused and changes nothing.
    for wrong in [
        GameResult::win(Player::Second, None),
        GameResult::draw(None),
    ] {
        let e = bob.receive(&Message::Result(wrong)).unwrap_err();
        assert_eq!(e.code(), 227, "{e}");
    }
    let e = bob
        .receive(&Message::Result(GameResult::abort("state-conflict", None)))
        .unwrap_err();
    assert_eq!(e.code(), 0, "an abort after the end: the game is over");
    assert_eq!(
        bob.receive(&sent[1]).unwrap(),
        [Step::Ended(Ending::Win {
            winner: Player::First
        })]
    );
    assert_eq!(bob.receive(&sent[1]).unwrap(), [Step::Ignored]);
    assert!(bob.is_settled());
}

#[test]
fn messages_ahead_of_the_state_are_held_until_the_gap_fills() {
    // O proposes, so X (the acceptor) moves right after accepting: the move can overtake
    // the acceptance.
    let (mut alice, propose) = Game::propose(TTT, Player::Second, Some(GameId::new("g1").unwrap()));
    let Message::Propose(p) = &propose else {
        unreachable!()
    };
    let (mut bob, accept) = Game::accept(TTT, p);
    let opening = bob.play(4, Mark::X).unwrap();
    assert_eq!(alice.receive(&opening[0]).unwrap(), [Step::Held]);
    assert_eq!(
        alice.receive(&opening[0]).unwrap(),
        [Step::Ignored],
        "held once"
    );
    assert_eq!(alice.pending(), 1);
    assert_eq!(
        alice.receive(&accept).unwrap(),
        [
            Step::Accepted,
            Step::Moved {
                cell: 4,
                mark: Mark::X
            }
        ]
    );
    assert_eq!(alice.pending(), 0);
    // The result can overtake the last move.
    for (who, cell) in [(1, 0), (0, 3), (1, 1), (0, 8)] {
        let (m, o, mark) = if who == 0 {
            (&mut bob, &mut alice, Mark::X)
        } else {
            (&mut alice, &mut bob, Mark::O)
        };
        exchange(m, o, cell, mark);
    }
    assert_eq!(board_of(alice.position()), board_of(bob.position()));
    let sent = alice.play(2, Mark::O).unwrap();
    assert_eq!(bob.receive(&sent[1]).unwrap(), [Step::Held]);
    assert_eq!(
        bob.receive(&sent[0]).unwrap(),
        [
            Step::Moved {
                cell: 2,
                mark: Mark::O
            },
            Step::Ended(Ending::Win {
                winner: Player::Second
            })
        ]
    );
}

#[test]
fn messages_of_another_game_or_out_of_place_are_refused_without_effect() {
    let (mut alice, mut bob) = start(TTT, Player::First, Some("g1"));
    let sent = alice.play(4, Mark::X).unwrap();
    let Message::Move(m) = &sent[0] else {
        unreachable!()
    };
    let mut other = m.clone();
    other.game_id = Some(GameId::new("g2").unwrap());
    let e = bob.receive(&Message::Move(other.clone())).unwrap_err();
    assert_eq!((e.code(), e.name()), (229, "game_id_mismatch"));
    other.game_id = None;
    assert_eq!(bob.receive(&Message::Move(other)).unwrap_err().code(), 229);
    assert!(!bob.my_turn(), "nothing applied");
    // A second proposal during the game, an acceptance sent to the acceptor.
    let propose = Message::Propose(Propose {
        role: Player::Second,
        game_id: Some(GameId::new("g1").unwrap()),
    });
    assert_eq!(bob.receive(&propose).unwrap_err().code(), 224);
    let (_, accept) = Game::accept(
        TTT,
        &Propose {
            role: Player::First,
            game_id: Some(GameId::new("g1").unwrap()),
        },
    );
    assert_eq!(bob.receive(&accept).unwrap_err().code(), 224);
    assert_eq!(alice.receive(&propose).unwrap_err().code(), 224);
}

#[test]
fn too_many_held_messages_are_refused() {
    let (mut alice, _) = Game::propose(App::Sos, Player::First, None);
    for seq in 1..=9 {
        let m = Message::Move(Move {
            seq,
            reply_to: seq - 1,
            position: Cell::new(seq - 1).unwrap(),
            mark: Mark::S,
            board: [None; 9],
            game_id: None,
        });
        assert_eq!(alice.receive(&m).unwrap(), [Step::Held]);
    }
    let win = Message::Result(GameResult::win(Player::First, None));
    assert_eq!(alice.receive(&win).unwrap(), [Step::Held]);
    assert_eq!(
        alice.receive(&win).unwrap(),
        [Step::Ignored],
        "an identical message is held once"
    );
    let mut held = alice.pending();
    let mut seq = 0;
    while held < triad_protocol::MAX_PENDING {
        seq += 1;
        let r = Message::Result(GameResult {
            outcome: Outcome::Draw,
            winner: None,
            reason: Some(format!("r{seq}")),
            game_id: None,
        });
        assert_eq!(alice.receive(&r).unwrap(), [Step::Held]);
        held += 1;
    }
    let r = Message::Result(GameResult {
        outcome: Outcome::Draw,
        winner: None,
        reason: Some("one more".into()),
        game_id: None,
    });
    assert_eq!(
        alice.receive(&r).unwrap_err(),
        ProtocolError::TooManyPending
    );
    // An abort is never held: the opponent declines the proposal.
    assert!(matches!(
        alice
            .receive(&Message::Result(GameResult::abort("busy", None)))
            .unwrap()[..],
        [Step::Ended(Ending::Aborted {
            by: Side::Opponent,
            ..
        })]
    ));
}

#[test]
fn aborting_ends_the_game_once() {
    let (mut alice, mut bob) = start(App::Sos, Player::First, None);
    exchange(&mut alice, &mut bob, 4, Mark::S);
    let abort = bob.abort("going home").unwrap();
    assert_eq!(
        abort.payload_json(App::Sos),
        r#"{"outcome":"abort","reason":"going home"}"#
    );
    assert_eq!(bob.abort("again").unwrap_err().code(), 0);
    assert_eq!(
        alice.receive(&abort).unwrap(),
        [Step::Ended(Ending::Aborted {
            by: Side::Opponent,
            reason: Some("going home".into())
        })]
    );
    assert_eq!(alice.receive(&abort).unwrap(), [Step::Ignored]);
}

#[test]
fn the_referee_checks_in_a_fixed_order() {
    let position = AnyGame::parse(GameKind::TicTacToe, "----X----").unwrap();
    let good = Move {
        seq: 2,
        reply_to: 1,
        position: Cell::new(0).unwrap(),
        mark: Mark::O,
        board: [
            Some(Mark::O),
            None,
            None,
            None,
            Some(Mark::X),
            None,
            None,
            None,
            None,
        ],
        game_id: None,
    };
    let next = check_move(TTT, &position, Player::Second, &good).unwrap();
    assert_eq!(next.to_string(), "O---X----");
    let with = |f: fn(&mut Move)| {
        let mut m = good.clone();
        f(&mut m);
        check_move(TTT, &position, Player::Second, &m)
            .unwrap_err()
            .code()
    };
    assert_eq!(with(|m| m.seq = 3), 225);
    assert_eq!(with(|m| m.seq = 1), 225);
    assert_eq!(with(|m| m.position = Cell::new(4).unwrap()), 3);
    assert_eq!(with(|m| m.board[8] = Some(Mark::O)), 223);
    assert_eq!(with(|m| m.reply_to = 0), 226);
    // Seq first, then the rules, then the board, then replyTo.
    assert_eq!(
        with(|m| {
            m.seq = 5;
            m.reply_to = 0;
        }),
        225
    );
    assert_eq!(
        with(|m| {
            m.mark = Mark::X;
            m.board = [None; 9];
        }),
        5
    );
    assert_eq!(
        check_move(TTT, &position, Player::First, &good)
            .unwrap_err()
            .code(),
        2
    );

    let won = AnyGame::parse(GameKind::TicTacToe, "XXXOO----").unwrap();
    assert!(check_result(TTT, &won, &GameResult::win(Player::First, None)).is_ok());
    let e = check_result(TTT, &won, &GameResult::win(Player::Second, None)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the declared result (win by O) is not the board's (win by X)"
    );
    assert_eq!(
        check_result(TTT, &won, &GameResult::draw(None))
            .unwrap_err()
            .code(),
        227
    );
    assert_eq!(
        check_result(TTT, &won, &GameResult::abort("x", None))
            .unwrap_err()
            .code(),
        0
    );
    let e = check_result(TTT, &position, &GameResult::win(Player::First, None)).unwrap_err();
    assert!(e.to_string().ends_with("(in play)"), "{e}");
    assert!(check_result(TTT, &position, &GameResult::abort("x", None)).is_ok());
    let drawn = AnyGame::parse(GameKind::TicTacToe, "XOXXOOOXX").unwrap();
    assert!(check_result(TTT, &drawn, &GameResult::draw(None)).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Two agents playing random legal moves agree on every board and on the ending, which is
    /// the rules' ending, declared by the last mover; the referee accepts every message.
    #[test]
    fn random_games_end_in_agreement(
        app in prop::sample::select(App::ALL.to_vec()),
        alice_role in prop::sample::select(Player::BOTH.to_vec()),
        picks in prop::collection::vec((0usize..9, any::<bool>()), 9),
    ) {
        let (mut alice, mut bob) = start(app, alice_role, Some("p"));
        let mut referee = AnyGame::new(app.game());
        let mut turn = 0;
        while alice.ending().is_none() {
            let (mover, other) = if alice.my_turn() { (&mut alice, &mut bob) } else { (&mut bob, &mut alice) };
            prop_assert!(mover.my_turn() && !other.my_turn());
            let legal = mover.position().legal_moves();
            let (i, letter) = picks[turn];
            let options: Vec<_> = legal.iter().filter(|m| app == App::TicTacToe || (m.mark == Mark::S) == letter).collect();
            let options = if options.is_empty() { legal.iter().collect() } else { options };
            let mv = options[i % options.len()];
            let sent = mover.play(mv.cell.index(), mv.mark).unwrap();
            let mover_role = mover.me();
            for m in &sent {
                match m {
                    Message::Move(m) => referee = check_move(app, &referee, mover_role, m).unwrap(),
                    Message::Result(r) => check_result(app, &referee, r).unwrap(),
                    _ => unreachable!(),
                }
                let steps = other.receive(m).unwrap();
                let progressed = matches!(steps[0], Step::Moved { .. } | Step::Ended(_));
                prop_assert!(progressed, "{:?}", steps);
            }
            prop_assert_eq!(board_of(alice.position()), board_of(bob.position()));
            turn += 1;
        }
        let expected = Ending::of_board(referee.outcome().unwrap());
        prop_assert_eq!(alice.ending(), Some(&expected));
        prop_assert_eq!(bob.ending(), Some(&expected));
        prop_assert!(alice.is_settled() && bob.is_settled());
    }
}
