//! Every error a command can produce, by its stable numeric code: one scenario each, and a
//! check that the scenarios cover every code the engine defines.
//!
//! Each scenario returns the errors it provoked; the harness has already checked that
//! every refusal changed nothing.

mod common;

use std::collections::BTreeSet;

use common::*;
use triad_engine::{
    Address, Command, EngineError, Entry, EventKind, Format, Level, MatchId, StartChoice, Terms,
    TournamentId, TournamentSpec,
};
use triad_rules::{Mark, MoveError, Player};
use triad_solver::puzzles::{self, Goal, PuzzleId};

macro_rules! code_tests {
    ($($code:literal $name:ident $body:block)*) => {
        $(
            #[test]
            fn $name() {
                let errors: Vec<EngineError> = $body;
                assert!(!errors.is_empty());
                for e in errors {
                    assert_eq!(e.code(), $code, "{e:?}");
                    assert!(!e.name().is_empty() && !e.to_string().is_empty());
                }
            }
        )*

        #[test]
        fn every_error_code_has_a_scenario() {
            let tested: BTreeSet<u16> = [$($code),*].into_iter().collect();
            let defined: BTreeSet<u16> = EngineError::ALL.iter().map(EngineError::code).collect();
            assert_eq!(defined.len(), EngineError::ALL.len(), "codes are unique");
            assert_eq!(tested, defined);
        }
    };
}

fn challenge(opponent: Address, stake: u128) -> Command {
    Command::Challenge {
        opponent,
        game: TTT,
        stake,
        first: StartChoice::Challenger,
    }
}

/// Every command that names a match.
fn match_commands(id: MatchId) -> Vec<Command> {
    vec![
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
        Command::DeclineChallenge { match_id: id },
        Command::Cancel { match_id: id },
        Command::Move {
            match_id: id,
            seq: 1,
            cell: 0,
            mark: Mark::X,
            signed: None,
        },
        Command::Forfeit { match_id: id },
        Command::ClaimTimeout { match_id: id },
        Command::Abort { match_id: id },
        Command::Rematch { match_id: id },
    ]
}

/// A free Swiss event of two rounds for at most `max` players, starting at 60 s.
fn cup(max: u32) -> TournamentSpec {
    TournamentSpec {
        name: "Cup".into(),
        game: TTT,
        format: Format::Swiss { rounds: 2 },
        starts_at_ms: 60_000,
        entry: Entry::Everyone,
        entry_fee: 0,
        prizes_bps: Vec::new(),
        max_players: max,
    }
}

/// Creates a tournament as the owner.
fn open_cup(t: &mut Table, spec: TournamentSpec) -> TournamentId {
    match t.ok(OWNER, Command::CreateTournament { spec }).events[0].kind {
        EventKind::TournamentCreated { tournament, .. } => tournament,
        ref other => panic!("{other:?}"),
    }
}

fn enter(tournament: TournamentId) -> Command {
    Command::JoinTournament {
        tournament,
        bot: false,
    }
}

/// A started two-player cup and its first game.
fn started_cup(t: &mut Table) -> (TournamentId, MatchId) {
    let id = open_cup(t, cup(2));
    t.ok(ALICE, enter(id));
    t.ok(BOB, enter(id));
    t.at(60_000);
    t.ok(OWNER, Command::Tick);
    let game = *t
        .engine
        .tournament(id)
        .unwrap()
        .playing
        .keys()
        .next()
        .unwrap();
    (id, game)
}

code_tests! {
    0 code_0_game_over {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        t.play_ttt(id, &[0, 3, 1, 4, 2]);
        let mv = t.move_cmd(id, 8, Mark::O);
        let e = t.expect_err(BOB, mv, 0);
        assert_eq!(e, EngineError::Move(MoveError::GameOver));
        vec![
            e,
            t.expect_err(BOB, Command::Forfeit { match_id: id }, 0),
            t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 0),
        ]
    }

    1 code_1_invalid_position {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, SOS, 0);
        let mv = t.move_cmd(id, 9, Mark::S);
        vec![t.expect_err(ALICE, mv, 1)]
    }

    2 code_2_not_your_turn {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, SOS, 0);
        let mv = t.move_cmd(id, 0, Mark::S);
        vec![t.expect_err(BOB, mv, 2)]
    }

    3 code_3_cell_occupied {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, SOS, 0);
        t.mv(ALICE, id, 0, Mark::S);
        let mv = t.move_cmd(id, 0, Mark::O);
        vec![t.expect_err(BOB, mv, 3)]
    }

    4 code_4_mark_not_in_game {
        let mut t = Table::new();
        let ttt = t.queue_match(ALICE, BOB, TTT, 0);
        let s = t.move_cmd(ttt, 0, Mark::S);
        let sos = t.queue_match(CAROL, DAVE, SOS, 0);
        let x = t.move_cmd(sos, 0, Mark::X);
        vec![t.expect_err(ALICE, s, 4), t.expect_err(CAROL, x, 4)]
    }

    5 code_5_not_your_mark {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        let o = t.move_cmd(id, 0, Mark::O);
        let e = t.expect_err(ALICE, o, 5);
        t.mv(ALICE, id, 0, Mark::X);
        let x = t.move_cmd(id, 1, Mark::X);
        vec![e, t.expect_err(BOB, x, 5)]
    }

    100 code_100_unknown_match {
        let mut t = Table::new();
        t.join(ALICE, TTT, 0);
        match_commands(MatchId(999))
            .into_iter()
            .map(|c| t.expect_err(ALICE, c, 100))
            .collect()
    }

    101 code_101_not_a_player {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        let waiting = t.join(DAVE, SOS, 0);
        let mut errors = vec![
            t.expect_err(CAROL, t.move_cmd(id, 0, Mark::X), 101),
            t.expect_err(CAROL, Command::Forfeit { match_id: id }, 101),
            t.expect_err(CAROL, Command::ClaimTimeout { match_id: id }, 101),
            t.expect_err(CAROL, Command::Cancel { match_id: id }, 101),
            t.expect_err(CAROL, Command::Cancel { match_id: waiting }, 101),
            t.expect_err(CAROL, Command::Forfeit { match_id: waiting }, 101),
        ];
        t.ok(ALICE, Command::Forfeit { match_id: id });
        errors.push(t.expect_err(CAROL, Command::Rematch { match_id: id }, 101));
        errors
    }

    102 code_102_already_in_match {
        let mut t = Table::new();
        let id = t.join(ALICE, TTT, 0);
        let other = t.challenge(BOB, ALICE, SOS, 0, StartChoice::Challenger);
        let errors = vec![
            t.expect_err(ALICE, Command::JoinQueue { game: SOS, stake: 0 }, 102),
            t.expect_err(ALICE, challenge(CAROL, 0), 102),
            t.expect_err(ALICE, Command::AcceptChallenge { match_id: other, terms: None }, 102),
            t.expect_err(
                ALICE,
                Command::PlayComputer { game: TTT, level: Level::Random, side: Player::First },
                102,
            ),
        ];
        for e in &errors {
            assert_eq!(*e, EngineError::AlreadyInMatch { match_id: id });
        }
        errors
    }

    103 code_103_opponent_busy {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        t.ok(ALICE, Command::Forfeit { match_id: id });
        t.ok(ALICE, Command::Rematch { match_id: id });
        t.join(ALICE, SOS, 0);
        vec![t.expect_err(BOB, Command::Rematch { match_id: id }, 103)]
    }

    104 code_104_self_play {
        let mut t = Table::new();
        vec![t.expect_err(ALICE, challenge(ALICE, 0), 104)]
    }

    105 code_105_insufficient_balance {
        let mut t = Table::new();
        t.fund(ALICE, 10);
        let id = t.challenge(ALICE, BOB, TTT, 10, StartChoice::Challenger);
        vec![
            t.expect_err(BOB, Command::JoinQueue { game: TTT, stake: 1 }, 105),
            t.expect_err(BOB, challenge(CAROL, 1), 105),
            t.expect_err(BOB, Command::AcceptChallenge { match_id: id, terms: None }, 105),
            t.expect_err(BOB, Command::Withdraw { amount: 1 }, 105),
            t.expect_err(ALICE, Command::Withdraw { amount: 1 }, 105),
        ]
    }

    106 code_106_wait_not_over {
        let mut t = Table::new();
        t.fund(ALICE, 1);
        t.fund(BOB, 1);
        let queued = t.join(ALICE, SOS, 1);
        let challenged = t.challenge(BOB, CAROL, SOS, 1, StartChoice::Challenger);
        t.at(WAIT_CANCEL_MS - 1);
        let errors = vec![
            t.expect_err(ALICE, Command::Cancel { match_id: queued }, 106),
            t.expect_err(BOB, Command::Cancel { match_id: challenged }, 106),
        ];
        assert_eq!(errors[0], EngineError::WaitNotOver { remaining_ms: 1 });
        errors
    }

    107 code_107_not_waiting {
        let mut t = Table::new();
        let id = t.challenge_match(ALICE, BOB, TTT, 0);
        let declined = t.challenge(CAROL, DAVE, TTT, 0, StartChoice::Challenger);
        t.ok(DAVE, Command::DeclineChallenge { match_id: declined });
        vec![
            t.expect_err(ALICE, Command::Cancel { match_id: id }, 107),
            t.expect_err(BOB, Command::AcceptChallenge { match_id: id, terms: None }, 107),
            t.expect_err(BOB, Command::DeclineChallenge { match_id: id }, 107),
            t.expect_err(DAVE, Command::AcceptChallenge { match_id: declined, terms: None }, 107),
            t.expect_err(CAROL, Command::Cancel { match_id: declined }, 107),
        ]
    }

    108 code_108_not_your_challenge {
        let mut t = Table::new();
        let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
        let queued = t.join(CAROL, TTT, 0);
        vec![
            t.expect_err(ALICE, Command::AcceptChallenge { match_id: id, terms: None }, 108),
            t.expect_err(DAVE, Command::AcceptChallenge { match_id: id, terms: None }, 108),
            t.expect_err(DAVE, Command::DeclineChallenge { match_id: id }, 108),
            t.expect_err(BOB, Command::Cancel { match_id: id }, 108),
            t.expect_err(DAVE, Command::AcceptChallenge { match_id: queued, terms: None }, 108),
        ]
    }

    109 code_109_challenge_expired {
        let mut t = Table::new();
        let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
        t.at(CHALLENGE_TTL_MS);
        let before_tick = t.expect_err(BOB, Command::AcceptChallenge { match_id: id, terms: None }, 109);
        let decline = t.expect_err(BOB, Command::DeclineChallenge { match_id: id }, 109);
        t.ok(CAROL, Command::Tick);
        let after_tick = t.expect_err(BOB, Command::AcceptChallenge { match_id: id, terms: None }, 109);
        vec![before_tick, decline, after_tick]
    }

    110 code_110_deadline_not_reached {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        let abort_early = t.expect_err(BOB, Command::ClaimTimeout { match_id: id }, 110);
        assert_eq!(
            abort_early,
            EngineError::DeadlineNotReached { remaining_ms: MOVE_TIMEOUT_MS + 1, your_move: false }
        );
        // The player whose first move is due is told the move is theirs.
        let first_mover = t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 110);
        assert_eq!(
            first_mover,
            EngineError::DeadlineNotReached { remaining_ms: MOVE_TIMEOUT_MS + 1, your_move: true }
        );
        assert!(first_mover.to_string().contains("the first move is yours"), "{first_mover}");
        t.play_ttt(id, &[4]);
        t.advance(MOVE_TIMEOUT_MS);
        vec![abort_early, t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 110)]
    }

    111 code_111_not_last_mover {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        t.play_ttt(id, &[4]);
        t.advance(MOVE_TIMEOUT_MS + 1);
        vec![t.expect_err(BOB, Command::ClaimTimeout { match_id: id }, 111)]
    }

    112 code_112_not_in_play {
        let mut t = Table::new();
        let id = t.join(ALICE, TTT, 0);
        let mv = t.move_cmd(id, 0, Mark::X);
        vec![
            t.expect_err(ALICE, mv, 112),
            t.expect_err(ALICE, Command::Forfeit { match_id: id }, 112),
            t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 112),
        ]
    }

    113 code_113_stale_seq {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        t.play_ttt(id, &[4, 0]);
        let stale = Command::Move { match_id: id, seq: 2, cell: 8, mark: Mark::X, signed: None };
        let e = t.expect_err(ALICE, stale, 113);
        assert_eq!(e, EngineError::StaleSeq { expected: 3 });
        assert_eq!(e.name(), "stale_seq");
        vec![e]
    }

    114 code_114_seq_ahead {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        let ahead = Command::Move { match_id: id, seq: 2, cell: 8, mark: Mark::X, signed: None };
        let e = t.expect_err(ALICE, ahead, 114);
        assert_eq!(e, EngineError::SeqAhead { expected: 1 });
        assert_eq!(e.name(), "seq_ahead");
        vec![e]
    }

    115 code_115_owner_only {
        let mut t = Table::new();
        vec![
            t.expect_err(ALICE, Command::Deposit { to: ALICE, amount: 1 }, 115),
            t.expect_err(ALICE, Command::CollectReserve, 115),
        ]
    }

    116 code_116_zero_amount {
        let mut t = Table::new();
        t.fund(ALICE, 1);
        vec![
            t.expect_err(OWNER, Command::Deposit { to: ALICE, amount: 0 }, 116),
            t.expect_err(ALICE, Command::Withdraw { amount: 0 }, 116),
        ]
    }

    117 code_117_rematch_unavailable {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        let in_play = t.expect_err(ALICE, Command::Rematch { match_id: id }, 117);
        t.advance(MOVE_TIMEOUT_MS + 1);
        t.ok(ALICE, Command::ClaimTimeout { match_id: id });
        let aborted = t.expect_err(ALICE, Command::Rematch { match_id: id }, 117);
        let cancelled = t.join(CAROL, TTT, 0);
        t.ok(CAROL, Command::Cancel { match_id: cancelled });
        let cancelled = t.expect_err(CAROL, Command::Rematch { match_id: cancelled }, 117);
        vec![in_play, aborted, cancelled]
    }

    118 code_118_rematch_already_offered {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        t.ok(ALICE, Command::Forfeit { match_id: id });
        t.ok(BOB, Command::Rematch { match_id: id });
        vec![t.expect_err(BOB, Command::Rematch { match_id: id }, 118)]
    }

    119 code_119_idempotency_key_reused {
        let mut t = Table::new();
        t.run_keyed(OWNER, 1, Command::Deposit { to: ALICE, amount: 5 }).unwrap();
        let e = t.run_keyed(OWNER, 1, Command::Deposit { to: ALICE, amount: 6 }).unwrap_err();
        assert_eq!(t.balance(ALICE), 5);
        vec![e]
    }

    120 code_120_stake_too_large {
        let mut t = Table::new();
        t.fund(ALICE, 2 * ETHER);
        let e = t.expect_err(ALICE, Command::JoinQueue { game: SOS, stake: ETHER + 1 }, 120);
        assert_eq!(e, EngineError::StakeTooLarge { max: ETHER });
        vec![e, t.expect_err(ALICE, challenge(BOB, ETHER + 1), 120)]
    }

    121 code_121_nothing_to_collect {
        let mut t = Table::new();
        vec![t.expect_err(OWNER, Command::CollectReserve, 121)]
    }

    122 code_122_amount_too_large {
        let mut t = Table::new();
        t.fund(ALICE, u128::MAX);
        vec![
            t.expect_err(OWNER, Command::Deposit { to: ALICE, amount: 1 }, 122),
            t.expect_err(OWNER, Command::Deposit { to: BOB, amount: 1 }, 122),
        ]
    }

    123 code_123_no_deadline {
        let mut t = Table::new();
        let id = match_id(&t.ok(
            ALICE,
            Command::PlayComputer { game: SOS, level: Level::Perfect, side: Player::First },
        ));
        t.advance(MOVE_TIMEOUT_MS * 10);
        vec![t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 123)]
    }

    124 code_124_opponent_cannot_afford {
        let mut t = Table::new();
        t.fund(ALICE, 10);
        t.fund(BOB, 10);
        let id = t.queue_match(ALICE, BOB, TTT, 10);
        t.ok(BOB, Command::Forfeit { match_id: id });
        t.ok(ALICE, Command::Rematch { match_id: id });
        t.ok(ALICE, Command::Withdraw { amount: 18 });
        t.fund(BOB, 10);
        vec![t.expect_err(BOB, Command::Rematch { match_id: id }, 124)]
    }

    125 code_125_zero_address {
        let mut t = Table::new();
        let zero = Address::ZERO;
        let id = t.join(ALICE, TTT, 0);
        vec![
            t.expect_err(ALICE, challenge(zero, 0), 125),
            t.expect_err(OWNER, Command::Deposit { to: zero, amount: 1 }, 125),
            // The zero address is nobody: it cannot act either.
            t.expect_err(zero, Command::JoinQueue { game: TTT, stake: 0 }, 125),
            t.expect_err(zero, Command::PlayComputer { game: TTT, level: Level::Random, side: Player::First }, 125),
            t.expect_err(zero, challenge(ALICE, 0), 125),
        ]
        .into_iter()
        .chain(match_commands(id).into_iter().map(|c| t.expect_err(zero, c, 125)))
        .collect()
    }

    126 code_126_staked_abort {
        let mut t = Table::new();
        t.fund(ALICE, 10);
        t.fund(BOB, 10);
        let id = t.challenge_match(ALICE, BOB, TTT, 10);
        let before_move = t.expect_err(BOB, Command::Abort { match_id: id }, 126);
        t.play_ttt(id, &[4]);
        vec![before_move, t.expect_err(ALICE, Command::Abort { match_id: id }, 126)]
    }

    127 code_127_clock_ran_out {
        // With automatic timeouts the deadline binds before the clock's tick arrives.
        let mut t = Table::with(|c| c.automatic_timeouts = true);
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        t.play_ttt(id, &[4]);
        t.advance(MOVE_TIMEOUT_MS + 1);
        let mv = t.move_cmd(id, 0, Mark::O);
        let late = t.expect_err(BOB, mv, 127);
        // Before the first move, the abort deadline binds whatever the setting.
        let mut u = Table::new();
        let ready = u.queue_match(ALICE, BOB, TTT, 0);
        u.advance(MOVE_TIMEOUT_MS + 1);
        let mv = u.move_cmd(ready, 4, Mark::X);
        let unstarted = u.expect_err(ALICE, mv, 127);
        // Without automatic timeouts, a late move stands until the last mover claims.
        let mut v = Table::new();
        let id = v.queue_match(ALICE, BOB, TTT, 0);
        v.play_ttt(id, &[4, 0]);
        v.advance(MOVE_TIMEOUT_MS * 2);
        v.play_ttt(id, &[8]);
        vec![late, unstarted]
    }

    128 code_128_terms_differ {
        let mut t = Table::new();
        t.fund(ALICE, 10);
        t.fund(BOB, 10);
        let id = t.challenge(ALICE, BOB, TTT, 10, StartChoice::Challenger);
        let free = Terms { stake: Some(0), ..Terms::default() };
        vec![t.expect_err(BOB, Command::AcceptChallenge { match_id: id, terms: Some(free) }, 128)]
    }

    129 code_129_unknown_puzzle {
        let mut t = Table::new();
        // The empty board is a position of every game but no puzzle.
        let empty = PuzzleId { game: TTT, number: 0 };
        vec![t.expect_err(ALICE, Command::AttemptPuzzle { puzzle: empty, line: Vec::new() }, 129)]
    }

    130 code_130_invalid_puzzle_line {
        let mut t = Table::new();
        let p = puzzles::all().iter().find(|p| p.goal() == Goal::WinIn(2)).unwrap();
        let first = p.correct_moves()[0];
        let attempt = |line| Command::AttemptPuzzle { puzzle: p.id(), line };
        // A move on an occupied cell; then the solution with a move after the end.
        let occupied = t.expect_err(ALICE, attempt(vec![first, first]), 130);
        let mut long = p.solution();
        long.push(first);
        vec![occupied, t.expect_err(ALICE, attempt(long), 130)]
    }

    131 code_131_puzzle_undecided {
        let mut t = Table::new();
        let p = puzzles::all().iter().find(|p| p.goal() == Goal::WinIn(2)).unwrap();
        let opening = p.solution()[..2].to_vec();
        vec![
            t.expect_err(ALICE, Command::AttemptPuzzle { puzzle: p.id(), line: Vec::new() }, 131),
            t.expect_err(ALICE, Command::AttemptPuzzle { puzzle: p.id(), line: opening }, 131),
        ]
    }

    132 code_132_unknown_tournament {
        let mut t = Table::new();
        let nowhere = TournamentId(9);
        vec![
            t.expect_err(ALICE, enter(nowhere), 132),
            t.expect_err(ALICE, Command::LeaveTournament { tournament: nowhere }, 132),
            t.expect_err(ALICE, Command::PauseTournament { tournament: nowhere, paused: true }, 132),
            t.expect_err(OWNER, Command::CancelTournament { tournament: nowhere }, 132),
        ]
    }

    133 code_133_tournament_closed {
        let mut t = Table::new();
        let id = open_cup(&mut t, cup(4));
        t.ok(OWNER, Command::CancelTournament { tournament: id });
        vec![
            t.expect_err(ALICE, enter(id), 133),
            t.expect_err(OWNER, Command::CancelTournament { tournament: id }, 133),
        ]
    }

    134 code_134_tournament_started {
        let mut t = Table::new();
        let (id, _) = started_cup(&mut t);
        vec![t.expect_err(CAROL, enter(id), 134)]
    }

    135 code_135_already_entered {
        let mut t = Table::new();
        let id = open_cup(&mut t, cup(4));
        t.ok(ALICE, enter(id));
        vec![t.expect_err(ALICE, enter(id), 135)]
    }

    136 code_136_not_entered {
        let mut t = Table::new();
        let id = open_cup(&mut t, cup(4));
        vec![
            t.expect_err(ALICE, Command::LeaveTournament { tournament: id }, 136),
            t.expect_err(ALICE, Command::PauseTournament { tournament: id, paused: true }, 136),
        ]
    }

    137 code_137_entry_restricted {
        let mut t = Table::new();
        let id = open_cup(&mut t, TournamentSpec { entry: Entry::People, ..cup(4) });
        let bots = open_cup(&mut t, TournamentSpec { entry: Entry::Bots, ..cup(4) });
        vec![
            t.expect_err(ALICE, Command::JoinTournament { tournament: id, bot: true }, 137),
            t.expect_err(ALICE, enter(bots), 137),
        ]
    }

    138 code_138_tournament_full {
        let mut t = Table::new();
        let id = open_cup(&mut t, cup(2));
        t.ok(ALICE, enter(id));
        t.ok(BOB, enter(id));
        vec![t.expect_err(CAROL, enter(id), 138)]
    }

    139 code_139_invalid_tournament {
        let mut t = Table::new();
        let unnamed = TournamentSpec { name: String::new(), ..cup(4) };
        let past = TournamentSpec { starts_at_ms: 0, ..cup(4) };
        // The standard payouts give a match's winner 90% of the pot: prizes may share out
        // as much of a pool, and no more.
        let greedy = TournamentSpec { entry_fee: 10, prizes_bps: vec![6_000, 3_001], ..cup(4) };
        let fair = TournamentSpec { entry_fee: 10, prizes_bps: vec![6_000, 3_000], ..cup(4) };
        t.at(1);
        t.ok(OWNER, Command::CreateTournament { spec: fair });
        vec![
            t.expect_err(OWNER, Command::CreateTournament { spec: unnamed }, 139),
            t.expect_err(OWNER, Command::CreateTournament { spec: past }, 139),
            t.expect_err(OWNER, Command::CreateTournament { spec: greedy }, 139),
        ]
    }

    140 code_140_creation_restricted {
        let mut t = Table::new();
        let mut u = Table::with(|c| c.tournaments.players_may_create = true);
        let staked = TournamentSpec { entry_fee: 1, ..cup(4) };
        vec![
            t.expect_err(ALICE, Command::CreateTournament { spec: cup(4) }, 140),
            u.expect_err(ALICE, Command::CreateTournament { spec: staked }, 140),
        ]
    }

    141 code_141_too_many_tournaments {
        let mut t = Table::with(|c| {
            c.tournaments.players_may_create = true;
            c.tournaments.max_open = 3;
        });
        t.ok(ALICE, Command::CreateTournament { spec: cup(4) });
        t.ok(ALICE, Command::CreateTournament { spec: cup(4) });
        let per_player = t.expect_err(ALICE, Command::CreateTournament { spec: cup(4) }, 141);
        t.ok(BOB, Command::CreateTournament { spec: cup(4) });
        let in_all = t.expect_err(OWNER, Command::CreateTournament { spec: cup(4) }, 141);
        vec![per_player, in_all]
    }

    142 code_142_tournament_game {
        let mut t = Table::new();
        let (_, game) = started_cup(&mut t);
        let abort = t.expect_err(ALICE, Command::Abort { match_id: game }, 142);
        t.ok(ALICE, Command::Forfeit { match_id: game });
        vec![abort, t.expect_err(BOB, Command::Rematch { match_id: game }, 142)]
    }

    143 code_143_not_organizer {
        let mut t = Table::new();
        let id = open_cup(&mut t, cup(4));
        t.ok(ALICE, enter(id));
        vec![t.expect_err(ALICE, Command::CancelTournament { tournament: id }, 143)]
    }

    144 code_144_nothing_to_pause {
        let mut t = Table::new();
        let (id, _) = started_cup(&mut t);
        vec![
            t.expect_err(ALICE, Command::PauseTournament { tournament: id, paused: false }, 144),
        ]
    }

    150 code_150_outage_in_future {
        let mut t = Table::new();
        t.queue_match(ALICE, BOB, TTT, 0);
        t.at(10_000);
        vec![t.expect_err(Address::ZERO, Command::ResumeClocks { down_since_ms: 10_001 }, 150)]
    }

    151 code_151_no_outage {
        let mut t = Table::new();
        t.queue_match(ALICE, BOB, TTT, 0);
        t.at(10_000);
        // Empty, and before the last event only up to it: the engine was alive at 10 s.
        let empty = t.expect_err(Address::ZERO, Command::ResumeClocks { down_since_ms: 10_000 }, 151);
        t.join(CAROL, TTT, 0);
        let alive = t.expect_err(Address::ZERO, Command::ResumeClocks { down_since_ms: 5_000 }, 151);
        vec![empty, alive]
    }

    152 code_152_outage_already_resumed {
        let mut t = Table::new();
        t.queue_match(ALICE, BOB, TTT, 0);
        t.at(100_000);
        t.ok(Address::ZERO, Command::ResumeClocks { down_since_ms: 10_000 });
        t.advance(1);
        vec![t.expect_err(Address::ZERO, Command::ResumeClocks { down_since_ms: 10_000 }, 152)]
    }

    153 code_153_clock_only {
        let mut t = Table::new();
        t.queue_match(ALICE, BOB, TTT, 0);
        t.at(100_000);
        vec![
            t.expect_err(ALICE, Command::ResumeClocks { down_since_ms: 10_000 }, 153),
            t.expect_err(OWNER, Command::ResumeClocks { down_since_ms: 10_000 }, 153),
        ]
    }
}
