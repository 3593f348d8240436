//! The engine's own rules (its issue's spec): active matches, challenges, the queue, the
//! computer, `seq`, forfeit, rematch, time, money, idempotency, stats and events.

mod common;

use std::num::NonZeroU16;

use common::*;
use triad_engine::{
    Account, Address, Command, Config, Duplicate, EndReason, Engine, EngineError, Envelope,
    EventKind, IdempotencyKey, Level, MatchId, Origin, Phase, Ranking, RematchStart, Seat,
    StartChoice, Terms, Transfer, TransferReason,
};
use triad_rules::{Mark, Player};

// ----- one active match per address, freed by every ending ----------------------------

/// Builds a scenario ending one way; returns the table, the match and who took part.
fn ending(reason: EndReason) -> (Table, MatchId, Vec<Address>) {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let id = match reason {
        EndReason::Win => {
            let id = t.queue_match(ALICE, BOB, TTT, ETHER);
            t.play_ttt(id, &[0, 3, 1, 4, 2]);
            id
        }
        EndReason::Draw => {
            let id = t.queue_match(ALICE, BOB, TTT, ETHER);
            t.play_ttt(id, &[0, 1, 2, 4, 3, 5, 7, 6, 8]);
            id
        }
        EndReason::Forfeit => {
            let id = t.queue_match(ALICE, BOB, TTT, ETHER);
            t.play_ttt(id, &[4]);
            t.ok(BOB, Command::Forfeit { match_id: id });
            id
        }
        EndReason::Timeout => {
            let id = t.queue_match(ALICE, BOB, TTT, ETHER);
            t.play_ttt(id, &[4]);
            t.advance(MOVE_TIMEOUT_MS + 1);
            t.ok(ALICE, Command::ClaimTimeout { match_id: id });
            id
        }
        EndReason::Cancelled => {
            let id = t.join(ALICE, TTT, ETHER);
            t.advance(WAIT_CANCEL_MS);
            t.ok(ALICE, Command::Cancel { match_id: id });
            return (t, id, vec![ALICE]);
        }
        EndReason::Aborted => {
            let id = t.queue_match(ALICE, BOB, TTT, ETHER);
            t.advance(MOVE_TIMEOUT_MS + 1);
            t.ok(ALICE, Command::ClaimTimeout { match_id: id });
            id
        }
        EndReason::Declined => {
            let id = t.challenge(ALICE, BOB, TTT, ETHER, StartChoice::Challenger);
            t.ok(BOB, Command::DeclineChallenge { match_id: id });
            id
        }
        EndReason::Expired => {
            let id = t.challenge(ALICE, BOB, TTT, ETHER, StartChoice::Challenger);
            t.advance(CHALLENGE_TTL_MS);
            t.ok(CAROL, Command::Tick);
            id
        }
    };
    (t, id, vec![ALICE, BOB])
}

const ALL_ENDINGS: [EndReason; 8] = [
    EndReason::Win,
    EndReason::Draw,
    EndReason::Forfeit,
    EndReason::Timeout,
    EndReason::Cancelled,
    EndReason::Aborted,
    EndReason::Declined,
    EndReason::Expired,
];

#[test]
fn every_kind_of_ending_frees_every_participant() {
    for reason in ALL_ENDINGS {
        let (t, id, people) = ending(reason);
        assert_eq!(t.result(id).reason, reason);
        assert_eq!(t.phase(id), Phase::Finished);
        for who in people {
            t.assert_free(who);
        }
        assert_eq!(t.engine.live_matches().count(), 0, "{reason:?}");
    }
}

#[test]
fn one_active_match_per_address_whatever_the_kind_of_match() {
    let mut t = Table::new();
    let computer = match_id(&t.ok(
        ALICE,
        Command::PlayComputer {
            game: SOS,
            level: Level::Random,
            side: Player::First,
        },
    ));
    assert_eq!(t.active(ALICE), Some(computer));
    t.expect_err(
        ALICE,
        Command::JoinQueue {
            game: TTT,
            stake: 0,
        },
        102,
    );
    let challenge = Command::Challenge {
        opponent: BOB,
        game: TTT,
        stake: 0,
        first: StartChoice::Challenger,
    };
    t.expect_err(ALICE, challenge, 102);
    let id = t.challenge(BOB, ALICE, TTT, 0, StartChoice::Challenger);
    t.expect_err(
        ALICE,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
        102,
    );
    t.ok(ALICE, Command::Forfeit { match_id: computer });
    t.ok(
        ALICE,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
    );
    assert_eq!(t.active(ALICE), Some(id));
}

// ----- direct challenges --------------------------------------------------------------

#[test]
fn challenge_escrows_the_challengers_stake_and_acceptance_the_opponents() {
    let mut t = Table::new();
    t.fund(ALICE, 2 * ETHER);
    t.fund(BOB, 2 * ETHER);
    let r = t.ok(
        ALICE,
        Command::Challenge {
            opponent: BOB,
            game: SOS,
            stake: ETHER,
            first: StartChoice::Opponent,
        },
    );
    let id = match_id(&r);
    assert_eq!(kinds(&r.events), ["challenge_issued", "transferred"]);
    assert_eq!(transfers(&r), vec![stake_in(id, ALICE, ETHER)]);
    match r.events[0].kind {
        EventKind::ChallengeIssued {
            challenger,
            opponent,
            game,
            stake,
            first,
            expires_at_ms,
            ..
        } => {
            assert_eq!(
                (challenger, opponent, game, stake),
                (ALICE, BOB, SOS, ETHER)
            );
            assert_eq!(first, StartChoice::Opponent);
            assert_eq!(expires_at_ms, CHALLENGE_TTL_MS, "ten minutes by default");
        }
        ref other => panic!("{other:?}"),
    }
    t.assert_balances(&[(ALICE, ETHER), (BOB, 2 * ETHER)]);
    let r = t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
    );
    assert_eq!(
        kinds(&r.events),
        ["challenge_accepted", "game_started", "transferred"]
    );
    assert_eq!(transfers(&r), vec![stake_in(id, BOB, ETHER)]);
    assert_eq!(started_seats(&r), [Seat::Human(BOB), Seat::Human(ALICE)]);
    t.assert_balances(&[(ALICE, ETHER), (BOB, ETHER)]);
    assert_eq!(t.escrow(id), 2 * ETHER);
    assert_eq!(t.m(id).origin, Origin::Challenge);
    assert_eq!(t.phase(id), Phase::Ready);
}

#[test]
fn challenge_start_choice_challenger_or_opponent() {
    let mut t = Table::new();
    let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
    );
    assert_eq!(t.mover(id), ALICE);
    t.ok(ALICE, Command::Forfeit { match_id: id });
    let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Opponent);
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
    );
    assert_eq!(t.mover(id), BOB);
    assert_eq!(t.seat(id, Player::First), BOB);
}

#[test]
fn challenge_random_start_comes_from_the_seeded_generator() {
    let starter = |seed: u64| {
        let mut t = Table::with(|c| c.seed = seed);
        let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Random);
        t.ok(
            BOB,
            Command::AcceptChallenge {
                match_id: id,
                terms: None,
            },
        );
        t.mover(id)
    };
    let starters: Vec<Address> = (0..16).map(starter).collect();
    assert!(
        starters.contains(&ALICE) && starters.contains(&BOB),
        "{starters:?}"
    );
    // The same seed, the same choice.
    for seed in 0..16 {
        assert_eq!(starter(seed), starters[seed as usize]);
    }
}

#[test]
fn declined_challenge_refunds_the_challenger_in_full() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    let id = t.challenge(ALICE, BOB, TTT, ETHER, StartChoice::Challenger);
    let r = t.ok(BOB, Command::DeclineChallenge { match_id: id });
    assert_eq!(
        kinds(&r.events),
        ["challenge_declined", "game_ended", "transferred"]
    );
    assert_eq!(
        transfers(&r),
        vec![from_escrow(
            id,
            Account::Player(ALICE),
            ETHER,
            TransferReason::Refund
        )]
    );
    assert_eq!(t.result(id).reason, EndReason::Declined);
    t.assert_balances(&[(ALICE, ETHER), (BOB, 0)]);
    t.assert_reserve(0);
    t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
        107,
    );
}

#[test]
fn crossed_challenges_accepting_one_withdraws_the_acceptors_own() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    // Each challenges the other before either answers: both stakes are in escrow.
    let alices = t.challenge(ALICE, BOB, TTT, ETHER, StartChoice::Challenger);
    let bobs = t.challenge(BOB, ALICE, SOS, ETHER, StartChoice::Challenger);
    t.assert_balances(&[(ALICE, 0), (BOB, 0)]);
    // Bob accepts Alice's: his own is withdrawn and refunded first, then escrowed again.
    let r = t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: alices,
            terms: None,
        },
    );
    assert_eq!(
        kinds(&r.events),
        [
            "game_ended",
            "transferred",
            "challenge_accepted",
            "game_started",
            "transferred"
        ]
    );
    assert_eq!(t.result(bobs).reason, EndReason::Cancelled);
    assert_eq!(t.phase(alices), Phase::Ready);
    assert_eq!(t.escrow(alices), 2 * ETHER);
    assert_eq!(t.escrow(bobs), 0);
    t.assert_balances(&[(ALICE, 0), (BOB, 0)]);
    // Alice's answer to Bob's withdrawn challenge is refused, and changes nothing.
    t.expect_err(
        ALICE,
        Command::AcceptChallenge {
            match_id: bobs,
            terms: None,
        },
        107,
    );
    t.check_replay();
}

#[test]
fn accepting_keeps_a_challenge_to_someone_else_and_refuses() {
    let mut t = Table::new();
    let alices = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    let bobs = t.challenge(BOB, CAROL, TTT, 0, StartChoice::Challenger);
    // Bob's open challenge is to Carol, not Alice: it is not withdrawn behind his back.
    let err = t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: alices,
            terms: None,
        },
        102,
    );
    assert_eq!(err, EngineError::AlreadyInMatch { match_id: bobs });
    assert_eq!(t.phase(bobs), Phase::Waiting);
}

#[test]
fn crossed_challenge_refund_counts_toward_the_stake_but_a_shortfall_refuses() {
    let mut t = Table::new();
    t.fund(ALICE, tenths(3));
    t.fund(BOB, tenths(2));
    let alices = t.challenge(ALICE, BOB, TTT, tenths(3), StartChoice::Challenger);
    let bobs = t.challenge(BOB, ALICE, TTT, tenths(1), StartChoice::Challenger);
    // Bob holds 0.1 and gets 0.1 back: 2 of the 3 needed. Refused, his challenge stands.
    let err = t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: alices,
            terms: None,
        },
        105,
    );
    assert_eq!(
        err,
        EngineError::InsufficientBalance {
            needed: tenths(3),
            available: tenths(2)
        }
    );
    assert_eq!(t.phase(bobs), Phase::Waiting);
    t.fund(BOB, tenths(1));
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: alices,
            terms: None,
        },
    );
    assert_eq!(t.result(bobs).reason, EndReason::Cancelled);
    t.assert_balances(&[(ALICE, 0), (BOB, 0)]);
    assert_eq!(t.escrow(alices), tenths(6));
}

#[test]
fn crossed_challenge_refund_is_the_cancel_refund_whatever_the_cancel_share() {
    // Half a stake back on a cancel: the withdrawn challenge refunds half, and the
    // acceptance counts exactly that toward the stake (it once counted the whole stake,
    // and the ledger's overdraw check panicked the engine).
    let mut t = Table::with(|c| c.payouts.cancel_bps_of_stake = 5_000);
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let alices = t.challenge(ALICE, BOB, TTT, ETHER, StartChoice::Challenger);
    let bobs = t.challenge(BOB, ALICE, TTT, ETHER, StartChoice::Challenger);
    // Bob holds nothing and gets half his stake back: short of the stake. Refused, and his
    // challenge stands.
    let err = t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: alices,
            terms: None,
        },
        105,
    );
    assert_eq!(
        err,
        EngineError::InsufficientBalance {
            needed: ETHER,
            available: ETHER / 2
        }
    );
    assert_eq!(t.phase(bobs), Phase::Waiting);
    t.fund(BOB, ETHER / 2);
    let r = t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: alices,
            terms: None,
        },
    );
    assert_eq!(
        transfers(&r)[..2],
        [
            from_escrow(
                bobs,
                Account::Player(BOB),
                ETHER / 2,
                TransferReason::Refund
            ),
            from_escrow(
                bobs,
                Account::Reserve,
                ETHER / 2,
                TransferReason::ReserveShare
            ),
        ]
    );
    assert_eq!(t.result(bobs).reason, EndReason::Cancelled);
    assert_eq!(t.escrow(alices), 2 * ETHER);
    t.assert_balances(&[(ALICE, 0), (BOB, 0)]);
    t.assert_reserve(ETHER / 2);
    t.check_replay();
}

#[test]
fn an_acceptance_binds_to_the_terms_it_states() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let id = t.challenge(ALICE, BOB, SOS, ETHER, StartChoice::Opponent);
    let seen = Terms {
        stake: Some(ETHER),
        game: Some(SOS),
        challenger: Some(ALICE),
        first: Some(StartChoice::Opponent),
    };
    // Each term that differs refuses the acceptance, naming it; nothing moves.
    for (terms, what) in [
        (
            Terms {
                stake: Some(0),
                ..seen
            },
            "stake",
        ),
        (
            Terms {
                stake: Some(ETHER - 1),
                ..seen
            },
            "stake",
        ),
        (
            Terms {
                game: Some(TTT),
                ..seen
            },
            "game",
        ),
        (
            Terms {
                challenger: Some(CAROL),
                ..seen
            },
            "challenger",
        ),
        (
            Terms {
                first: Some(StartChoice::Random),
                ..seen
            },
            "first mover",
        ),
    ] {
        let err = t.expect_err(
            BOB,
            Command::AcceptChallenge {
                match_id: id,
                terms: Some(terms),
            },
            128,
        );
        assert_eq!(err, EngineError::TermsDiffer { what });
    }
    t.assert_balances(&[(ALICE, 0), (BOB, ETHER)]);
    assert_eq!(t.phase(id), Phase::Waiting);
    // Only the stake stated, or every term as the challenge has them: accepted.
    let mut u = Table {
        engine: t.engine.clone(),
        now: t.now,
    };
    u.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: Some(Terms {
                stake: Some(ETHER),
                ..Terms::default()
            }),
        },
    );
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: Some(seen),
        },
    );
    assert_eq!(t.phase(id), Phase::Ready);
    t.assert_balances(&[(ALICE, 0), (BOB, 0)]);
    t.check_replay();
}

#[test]
fn a_refused_acceptance_does_not_withdraw_the_acceptors_crossed_challenge() {
    let mut t = Table::new();
    let alices = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    let bobs = t.challenge(BOB, ALICE, TTT, 0, StartChoice::Challenger);
    let staked = Terms {
        stake: Some(5),
        ..Terms::default()
    };
    t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: alices,
            terms: Some(staked),
        },
        128,
    );
    assert_eq!(t.phase(bobs), Phase::Waiting);
    assert_eq!(t.active(BOB), Some(bobs));
}

#[test]
fn a_keyed_resend_names_the_original_match_not_the_actors_current_one() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    let free = Command::Challenge {
        opponent: BOB,
        game: TTT,
        stake: 0,
        first: StartChoice::Challenger,
    };
    let first = match_id(&t.run_keyed(ALICE, 7, free.clone()).unwrap());
    t.ok(ALICE, Command::Cancel { match_id: first });
    // Alice now has a staked challenge to Bob; the free one's key still means the free one.
    let staked = t.challenge(ALICE, BOB, TTT, ETHER, StartChoice::Challenger);
    let again = t.run_keyed(ALICE, 7, free.clone()).unwrap();
    let Some(Duplicate::Command { match_id, .. }) = again.duplicate else {
        panic!("a duplicate: {again:?}");
    };
    assert_eq!(match_id, Some(first));
    assert_ne!(match_id, Some(staked));
    // The same after a replay, which rebuilds the keys from the log.
    let mut replayed = Engine::replay(t.engine.config().clone(), t.engine.log_for_tests());
    let envelope = Envelope::new(ALICE, t.now, free).with_key(IdempotencyKey(7));
    assert_eq!(
        replayed.execute(&envelope).unwrap().duplicate,
        Some(Duplicate::Command {
            first_seq: 2,
            last_seq: 2,
            match_id: Some(first)
        })
    );
    // Money with no match: no match.
    let deposit = Command::Deposit {
        to: ALICE,
        amount: 1,
    };
    t.run_keyed(OWNER, 8, deposit.clone()).unwrap();
    let dup = t.run_keyed(OWNER, 8, deposit).unwrap().duplicate;
    assert!(
        matches!(dup, Some(Duplicate::Command { match_id: None, .. })),
        "{dup:?}"
    );
}

#[test]
fn challenge_expires_on_the_tick_after_ten_minutes_with_a_full_refund() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.at(1_000);
    let id = t.challenge(ALICE, BOB, TTT, ETHER, StartChoice::Challenger);
    assert_eq!(t.engine.next_deadline_ms(), Some(1_000 + CHALLENGE_TTL_MS));
    t.at(1_000 + CHALLENGE_TTL_MS - 1);
    let r = t.ok(DAVE, Command::Tick);
    assert!(r.events.is_empty(), "nothing due yet");
    assert_eq!(t.phase(id), Phase::Waiting);
    t.at(1_000 + CHALLENGE_TTL_MS);
    let r = t.ok(DAVE, Command::Tick);
    assert_eq!(
        kinds(&r.events),
        ["challenge_expired", "game_ended", "transferred"]
    );
    assert_eq!(
        transfers(&r),
        vec![from_escrow(
            id,
            Account::Player(ALICE),
            ETHER,
            TransferReason::Refund
        )]
    );
    assert_eq!(t.result(id).reason, EndReason::Expired);
    t.assert_balances(&[(ALICE, ETHER)]);
    t.assert_free(ALICE);
    assert_eq!(t.engine.next_deadline_ms(), None);
    // Too late to accept: it says so.
    t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
        109,
    );
}

#[test]
fn challenge_cannot_be_accepted_after_its_expiry_even_before_the_tick() {
    let mut t = Table::new();
    let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    t.at(CHALLENGE_TTL_MS - 1);
    let mut early = t.engine.clone();
    early
        .execute(&Envelope::new(
            BOB,
            t.now,
            Command::AcceptChallenge {
                match_id: id,
                terms: None,
            },
        ))
        .expect("a millisecond before expiry it can be accepted");
    t.at(CHALLENGE_TTL_MS);
    t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
        109,
    );
    assert_eq!(t.phase(id), Phase::Waiting);
}

#[test]
fn challenge_ttl_is_configurable() {
    let mut t = Table::with(|c| c.challenge_ttl_ms = 5_000);
    let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    t.at(5_000);
    t.ok(ALICE, Command::Tick);
    assert_eq!(t.result(id).reason, EndReason::Expired);
}

#[test]
fn a_free_challenge_can_be_withdrawn_at_any_time() {
    let mut t = Table::new();
    let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    let r = t.ok(ALICE, Command::Cancel { match_id: id });
    assert_eq!(kinds(&r.events), ["game_ended"], "nothing to refund");
    assert_eq!(t.result(id).reason, EndReason::Cancelled);
    t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
        107,
    );
    t.assert_free(ALICE);
}

#[test]
fn a_staked_challenge_can_be_withdrawn_after_the_wait_with_a_full_refund() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    let id = t.challenge(ALICE, BOB, TTT, ETHER, StartChoice::Challenger);
    t.at(WAIT_CANCEL_MS - 1);
    t.expect_err(ALICE, Command::Cancel { match_id: id }, 106);
    t.at(WAIT_CANCEL_MS);
    let r = t.ok(ALICE, Command::Cancel { match_id: id });
    assert_eq!(
        transfers(&r),
        vec![from_escrow(
            id,
            Account::Player(ALICE),
            ETHER,
            TransferReason::Refund
        )]
    );
    t.assert_balances(&[(ALICE, ETHER)]);
}

#[test]
fn only_the_challenged_player_answers_and_only_the_challenger_withdraws() {
    let mut t = Table::new();
    let id = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    for who in [ALICE, CAROL] {
        t.expect_err(
            who,
            Command::AcceptChallenge {
                match_id: id,
                terms: None,
            },
            108,
        );
        t.expect_err(who, Command::DeclineChallenge { match_id: id }, 108);
    }
    t.expect_err(BOB, Command::Cancel { match_id: id }, 108);
    t.expect_err(CAROL, Command::Cancel { match_id: id }, 101);
    // A queue match is nobody's challenge.
    let queued = t.join(DAVE, TTT, 0);
    t.expect_err(
        ERIN,
        Command::AcceptChallenge {
            match_id: queued,
            terms: None,
        },
        108,
    );
}

#[test]
fn accepting_a_staked_challenge_needs_the_stake() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER / 2);
    let id = t.challenge(ALICE, BOB, SOS, ETHER, StartChoice::Challenger);
    let err = t.expect_err(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
        105,
    );
    assert_eq!(
        err,
        EngineError::InsufficientBalance {
            needed: ETHER,
            available: ETHER / 2
        }
    );
    // Declining costs nothing.
    t.ok(BOB, Command::DeclineChallenge { match_id: id });
    t.assert_balances(&[(ALICE, ETHER), (BOB, ETHER / 2)]);
}

// ----- the open queue -----------------------------------------------------------------

#[test]
fn queue_first_waits_the_next_is_matched_the_earlier_joiner_moves_first() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let r = t.ok(
        BOB,
        Command::JoinQueue {
            game: SOS,
            stake: ETHER,
        },
    );
    let id = match_id(&r);
    assert_eq!(kinds(&r.events), ["queued", "transferred"]);
    assert_eq!(t.engine.queue_len(SOS, ETHER), 1);
    assert_eq!(t.active(BOB), Some(id));
    let r = t.ok(
        ALICE,
        Command::JoinQueue {
            game: SOS,
            stake: ETHER,
        },
    );
    assert_eq!(kinds(&r.events), ["game_started", "transferred"]);
    assert_eq!(transfers(&r), vec![stake_in(id, ALICE, ETHER)]);
    assert_eq!(started_seats(&r), [Seat::Human(BOB), Seat::Human(ALICE)]);
    assert_eq!(t.mover(id), BOB, "Bob joined first");
    assert_eq!(t.engine.queue_len(SOS, ETHER), 0);
    assert_eq!(t.m(id).origin, Origin::Queue);
    // The next joiner waits afresh.
    let next = t.join(CAROL, SOS, 0);
    assert_ne!(next, id);
    assert_eq!(t.phase(next), Phase::Waiting);
}

#[test]
fn queue_never_matches_a_player_with_themselves() {
    let mut t = Table::new();
    let id = t.join(ALICE, TTT, 0);
    let err = t.expect_err(
        ALICE,
        Command::JoinQueue {
            game: TTT,
            stake: 0,
        },
        102,
    );
    assert_eq!(err, EngineError::AlreadyInMatch { match_id: id });
    assert_eq!(t.engine.queue_len(TTT, 0), 1);
    assert_eq!(t.phase(id), Phase::Waiting);
}

#[test]
fn queue_matches_only_the_same_game_and_stake() {
    let mut t = Table::new();
    for who in [ALICE, BOB, CAROL, DAVE] {
        t.fund(who, ETHER);
    }
    let a = t.join(ALICE, TTT, ETHER);
    let b = t.join(BOB, SOS, ETHER);
    let c = t.join(CAROL, TTT, 0);
    assert_eq!([a, b, c].map(|id| t.phase(id)), [Phase::Waiting; 3]);
    assert_eq!(t.join(DAVE, TTT, ETHER), a);
    assert_eq!(t.phase(a), Phase::Ready);
    assert_eq!([b, c].map(|id| t.phase(id)), [Phase::Waiting; 2]);
}

#[test]
fn queue_after_the_waiting_player_leaves_the_next_joiner_waits() {
    let mut t = Table::new();
    let id = t.join(ALICE, TTT, 0);
    t.ok(ALICE, Command::Cancel { match_id: id });
    assert_eq!(t.engine.queue_len(TTT, 0), 0);
    let next = t.join(BOB, TTT, 0);
    assert_ne!(next, id);
    assert_eq!(t.phase(next), Phase::Waiting);
    assert_eq!(t.join(ALICE, TTT, 0), next);
    assert_eq!(t.mover(next), BOB);
}

// ----- against the computer -----------------------------------------------------------

#[test]
fn against_the_computer_there_is_no_stake_and_it_replies_at_once() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    // The human moves first.
    let r = t.ok(
        ALICE,
        Command::PlayComputer {
            game: TTT,
            level: Level::Perfect,
            side: Player::First,
        },
    );
    let id = match_id(&r);
    assert_eq!(kinds(&r.events), ["game_started"]);
    assert_eq!(t.m(id).stake, 0);
    assert_eq!(t.m(id).origin, Origin::Computer);
    assert_eq!(
        t.m(id).seats,
        Some([Seat::Human(ALICE), Seat::Computer(Level::Perfect)])
    );
    let r = t.mv(ALICE, id, 4, Mark::X);
    assert_eq!(kinds(&r.events), ["moved", "moved"], "the computer replied");
    match r.events[1].kind {
        EventKind::Moved {
            seq, player, by, ..
        } => assert_eq!(
            (seq, player, by),
            (2, Player::Second, Seat::Computer(Level::Perfect))
        ),
        ref other => panic!("{other:?}"),
    }
    t.ok(ALICE, Command::Forfeit { match_id: id });
    // The computer moves first.
    let r = t.ok(
        ALICE,
        Command::PlayComputer {
            game: SOS,
            level: Level::Random,
            side: Player::Second,
        },
    );
    let id = match_id(&r);
    assert_eq!(kinds(&r.events), ["game_started", "moved"]);
    assert_eq!(t.m(id).seq(), 1);
    assert_eq!(t.mover(id), ALICE);
    assert!(
        transfers_of(t.engine.log_for_tests())
            .iter()
            .all(|x| x.reason == TransferReason::Deposit)
    );
    t.assert_balances(&[(ALICE, ETHER)]);
}

#[test]
fn against_the_computer_no_deadline_and_no_stats() {
    let mut t = Table::new();
    let id = match_id(&t.ok(
        ALICE,
        Command::PlayComputer {
            game: TTT,
            level: Level::Perfect,
            side: Player::First,
        },
    ));
    t.at(MOVE_TIMEOUT_MS * 100);
    t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 123);
    t.ok(ALICE, Command::Tick);
    assert_eq!(t.phase(id), Phase::Ready, "no abort against the computer");
    // Play it out: the perfect computer never loses.
    while t.phase(id) != Phase::Finished {
        let cell = t
            .m(id)
            .position
            .board()
            .empty_cells()
            .iter()
            .next()
            .unwrap();
        t.mv(ALICE, id, cell.index(), Mark::X);
    }
    assert_ne!(t.result(id).winner, Some(Player::First));
    assert_eq!(t.stats(ALICE), Default::default());
    assert_eq!(t.engine.all_stats().count(), 0);
}

#[test]
fn rematch_against_the_computer_starts_at_once() {
    let mut t = Table::with(|c| c.rematch_start = RematchStart::Alternate);
    let id = match_id(&t.ok(
        ALICE,
        Command::PlayComputer {
            game: TTT,
            level: Level::Random,
            side: Player::First,
        },
    ));
    t.ok(ALICE, Command::Forfeit { match_id: id });
    let r = t.ok(ALICE, Command::Rematch { match_id: id });
    let next = match_id(&r);
    assert_eq!(
        kinds(&r.events),
        ["game_started", "moved"],
        "the computer starts now"
    );
    assert_eq!(
        t.m(next).seats,
        Some([Seat::Computer(Level::Random), Seat::Human(ALICE)])
    );
    assert_eq!(t.m(next).origin, Origin::Rematch { of: id });
}

// ----- moves and seq ------------------------------------------------------------------

#[test]
fn a_moves_seq_is_the_number_of_marks_after_it() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    for (n, cell) in [4u8, 0, 8].into_iter().enumerate() {
        let r = t.play_ttt(id, &[cell]);
        match r.events[0].kind {
            EventKind::Moved { seq, .. } => assert_eq!(usize::from(seq), n + 1),
            ref other => panic!("{other:?}"),
        }
        assert_eq!(usize::from(t.m(id).seq()), n + 1);
        assert_eq!(t.m(id).position.board().len() as usize, n + 1);
    }
}

#[test]
fn a_repeated_move_against_the_computer_is_a_duplicate_too() {
    let mut t = Table::new();
    let id = match_id(&t.ok(
        ALICE,
        Command::PlayComputer {
            game: SOS,
            level: Level::Casual,
            side: Player::First,
        },
    ));
    let first = t.move_cmd(id, 4, Mark::O);
    let r = t.ok(ALICE, first.clone());
    assert_eq!(r.events.len(), 2, "the move and the computer's reply");
    let again = t.ok(ALICE, first);
    assert_eq!(
        again.duplicate,
        Some(Duplicate::Move {
            match_id: id,
            seq: 1
        })
    );
    assert_eq!(t.m(id).seq(), 2);
}

#[test]
fn a_repeated_move_returns_the_original_result_and_changes_nothing() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    let first = Command::Move {
        match_id: id,
        seq: 1,
        cell: 4,
        mark: Mark::X,
        signed: None,
    };
    let r = t.ok(ALICE, first.clone());
    assert_eq!(r.duplicate, None);
    assert_eq!(r.events.len(), 1);
    let again = t.ok(ALICE, first.clone());
    assert_eq!(
        again.duplicate,
        Some(Duplicate::Move {
            match_id: id,
            seq: 1
        })
    );
    assert!(again.events.is_empty());
    t.mv(BOB, id, 0, Mark::O);
    // Still a duplicate after the board has moved on.
    let again = t.ok(ALICE, first);
    assert_eq!(
        again.duplicate,
        Some(Duplicate::Move {
            match_id: id,
            seq: 1
        })
    );
    let bobs = Command::Move {
        match_id: id,
        seq: 2,
        cell: 0,
        mark: Mark::O,
        signed: None,
    };
    let again = t.ok(BOB, bobs.clone());
    assert_eq!(
        again.duplicate,
        Some(Duplicate::Move {
            match_id: id,
            seq: 2
        })
    );
    // The same content from the other player is not a repeat: it is stale.
    t.expect_err(ALICE, bobs, 113);
    assert_eq!(t.m(id).seq(), 2);
}

#[test]
fn repeating_the_winning_move_after_the_end_is_a_duplicate() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let id = t.queue_match(ALICE, BOB, TTT, ETHER);
    t.play_ttt(id, &[0, 3, 1, 4]);
    let winning = t.move_cmd(id, 2, Mark::X);
    t.ok(ALICE, winning.clone());
    let again = t.ok(ALICE, winning);
    assert_eq!(
        again.duplicate,
        Some(Duplicate::Move {
            match_id: id,
            seq: 5
        })
    );
    t.assert_balances(&[(ALICE, tenths(18)), (BOB, 0)]);
    assert_eq!(t.record(ALICE), (1, 1), "paid and counted once");
    // A new move after the end is refused.
    let more = Command::Move {
        match_id: id,
        seq: 6,
        cell: 8,
        mark: Mark::O,
        signed: None,
    };
    t.expect_err(BOB, more, 0);
}

#[test]
fn a_stale_seq_is_refused_with_113() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[4, 0]);
    for seq in [0, 1, 2] {
        let stale = Command::Move {
            match_id: id,
            seq,
            cell: 8,
            mark: Mark::X,
            signed: None,
        };
        let err = t.expect_err(ALICE, stale, 113);
        assert_eq!(err, EngineError::StaleSeq { expected: 3 });
    }
}

#[test]
fn a_skipped_seq_is_refused_with_114() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[4, 0]);
    for seq in [4, 9, 255] {
        let ahead = Command::Move {
            match_id: id,
            seq,
            cell: 8,
            mark: Mark::X,
            signed: None,
        };
        let err = t.expect_err(ALICE, ahead, 114);
        assert_eq!(err, EngineError::SeqAhead { expected: 3 });
    }
}

// ----- forfeit ------------------------------------------------------------------------

#[test]
fn forfeit_at_any_time_in_play_the_opponent_wins_and_is_paid() {
    // Before the first move, by the player not to move.
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let id = t.queue_match(ALICE, BOB, SOS, ETHER);
    let r = t.ok(BOB, Command::Forfeit { match_id: id });
    let (_, reason, winner, _) = ended(&r).unwrap();
    assert_eq!((reason, winner), (EndReason::Forfeit, Some(Player::First)));
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
    t.assert_balances(&[(ALICE, tenths(18)), (BOB, 0)]);
    // Mid-game, by the player to move.
    let id = t.queue_match(CAROL, DAVE, TTT, 0);
    t.play_ttt(id, &[4, 0, 8]);
    let r = t.ok(DAVE, Command::Forfeit { match_id: id });
    assert_eq!(ended(&r).unwrap().2, Some(Player::First));
    assert_eq!(t.record(CAROL), (1, 1));
    assert_eq!(t.record(DAVE), (0, 1));
}

#[test]
fn forfeit_only_in_play_and_only_by_a_player() {
    let mut t = Table::new();
    let waiting = t.join(ALICE, TTT, 0);
    t.expect_err(ALICE, Command::Forfeit { match_id: waiting }, 112);
    t.expect_err(BOB, Command::Forfeit { match_id: waiting }, 101);
    t.join(BOB, TTT, 0);
    t.expect_err(CAROL, Command::Forfeit { match_id: waiting }, 101);
    t.ok(ALICE, Command::Forfeit { match_id: waiting });
    t.expect_err(BOB, Command::Forfeit { match_id: waiting }, 0);
    t.expect_err(
        ALICE,
        Command::Forfeit {
            match_id: MatchId(99),
        },
        100,
    );
}

// ----- rematch ------------------------------------------------------------------------

#[test]
fn rematch_offered_then_accepted_starts_the_same_game_and_stake() {
    let mut t = Table::with(|c| c.rematch_start = RematchStart::Alternate);
    t.fund(ALICE, 2 * ETHER);
    t.fund(BOB, 2 * ETHER);
    let id = t.queue_match(ALICE, BOB, SOS, ETHER);
    t.play(id, &[(0, Mark::S), (1, Mark::O), (2, Mark::S)]);
    t.assert_balances(&[(ALICE, tenths(28)), (BOB, ETHER)]);
    let r = t.ok(BOB, Command::Rematch { match_id: id });
    assert_eq!(kinds(&r.events), ["rematch_offered"]);
    assert!(matches!(
        r.events[0].kind,
        EventKind::RematchOffered { match_id, by: Player::Second } if match_id == id
    ));
    assert_eq!(t.m(id).rematch_offer, Some(Player::Second));
    assert_eq!(t.active(BOB), None, "an offer locks nobody");
    let r = t.ok(ALICE, Command::Rematch { match_id: id });
    let next = match_id(&r);
    assert_eq!(
        kinds(&r.events),
        ["game_started", "transferred", "transferred"]
    );
    assert_eq!(
        transfers(&r),
        vec![stake_in(next, BOB, ETHER), stake_in(next, ALICE, ETHER)]
    );
    let m = t.m(next);
    assert_eq!((m.game(), m.stake), (SOS, ETHER));
    assert_eq!(m.origin, Origin::Rematch { of: id });
    assert_eq!(
        m.seats,
        Some([Seat::Human(BOB), Seat::Human(ALICE)]),
        "alternated"
    );
    assert_eq!(t.m(id).rematch, Some(next));
    assert_eq!(t.m(id).rematch_offer, None);
    t.assert_balances(&[(ALICE, tenths(18)), (BOB, 0)]);
    // And again: the start alternates back.
    t.ok(ALICE, Command::Forfeit { match_id: next });
    t.ok(ALICE, Command::Rematch { match_id: next });
    let r = t.ok(BOB, Command::Rematch { match_id: next });
    let third = match_id(&r);
    assert_eq!(t.mover(third), ALICE);
}

#[test]
fn rematch_start_by_the_seeded_generator() {
    let starter = |seed: u64| {
        let mut t = Table::with(|c| {
            c.seed = seed;
            c.rematch_start = RematchStart::Random;
        });
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        t.ok(ALICE, Command::Forfeit { match_id: id });
        t.ok(ALICE, Command::Rematch { match_id: id });
        let next = match_id(&t.ok(BOB, Command::Rematch { match_id: id }));
        t.mover(next)
    };
    let starters: Vec<Address> = (0..16).map(starter).collect();
    assert!(
        starters.contains(&ALICE) && starters.contains(&BOB),
        "{starters:?}"
    );
    assert_eq!(starter(3), starters[3]);
}

#[test]
fn rematch_is_refused_when_unavailable() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    // Not ended yet.
    t.expect_err(ALICE, Command::Rematch { match_id: id }, 117);
    t.ok(ALICE, Command::Forfeit { match_id: id });
    t.expect_err(CAROL, Command::Rematch { match_id: id }, 101);
    t.ok(ALICE, Command::Rematch { match_id: id });
    t.expect_err(ALICE, Command::Rematch { match_id: id }, 118);
    t.ok(BOB, Command::Rematch { match_id: id });
    // Already rematched.
    t.expect_err(ALICE, Command::Rematch { match_id: id }, 117);
    t.expect_err(BOB, Command::Rematch { match_id: id }, 117);
    // Never played: aborted, cancelled, declined.
    let (mut t2, aborted, _) = ending(EndReason::Aborted);
    t2.expect_err(ALICE, Command::Rematch { match_id: aborted }, 117);
    let (mut t3, cancelled, _) = ending(EndReason::Cancelled);
    t3.expect_err(
        ALICE,
        Command::Rematch {
            match_id: cancelled,
        },
        117,
    );
    let (mut t4, declined, _) = ending(EndReason::Declined);
    t4.expect_err(ALICE, Command::Rematch { match_id: declined }, 117);
    t4.expect_err(BOB, Command::Rematch { match_id: declined }, 117);
}

#[test]
fn rematch_needs_both_players_free_and_able_to_pay() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let id = t.queue_match(ALICE, BOB, TTT, ETHER / 2);
    t.ok(BOB, Command::Forfeit { match_id: id });
    t.assert_balances(&[(ALICE, tenths(14)), (BOB, ETHER / 2)]);
    t.ok(ALICE, Command::Rematch { match_id: id });
    // The offerer went into another match: she is busy.
    let other = t.join(ALICE, SOS, 0);
    t.expect_err(BOB, Command::Rematch { match_id: id }, 103);
    t.ok(ALICE, Command::Cancel { match_id: other });
    // The accepter is busy.
    let other = t.join(BOB, SOS, 0);
    t.expect_err(BOB, Command::Rematch { match_id: id }, 102);
    t.ok(BOB, Command::Cancel { match_id: other });
    // The offerer took her money out.
    t.ok(ALICE, Command::Withdraw { amount: tenths(14) });
    t.expect_err(BOB, Command::Rematch { match_id: id }, 124);
    t.fund(ALICE, ETHER);
    // The accepter cannot cover it.
    t.ok(BOB, Command::Withdraw { amount: 1 });
    t.expect_err(BOB, Command::Rematch { match_id: id }, 105);
    t.fund(BOB, 1);
    let next = match_id(&t.ok(BOB, Command::Rematch { match_id: id }));
    assert_eq!(t.escrow(next), ETHER);
}

// ----- time ---------------------------------------------------------------------------

#[test]
fn a_free_wait_may_be_left_at_any_time() {
    let mut t = Table::new();
    t.at(5_000);
    let id = t.join(ALICE, SOS, 0);
    let r = t.ok(ALICE, Command::Cancel { match_id: id });
    assert_eq!(kinds(&r.events), ["game_ended"]);
    assert_eq!(t.result(id).reason, EndReason::Cancelled);
}

#[test]
fn the_wait_before_cancelling_a_stake_is_configurable() {
    let mut t = Table::with(|c| c.wait_cancel_ms = 10);
    t.fund(ALICE, 5);
    let id = t.join(ALICE, SOS, 5);
    t.at(9);
    t.expect_err(ALICE, Command::Cancel { match_id: id }, 106);
    t.at(10);
    t.ok(ALICE, Command::Cancel { match_id: id });
    t.assert_balances(&[(ALICE, 5)]);
}

#[test]
fn claims_are_judged_against_the_commands_time() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.at(10_000);
    t.play_ttt(id, &[4]);
    // The SOS contract's "more than" the timeout: at exactly the timeout, still refused.
    t.at(10_000 + MOVE_TIMEOUT_MS);
    let err = t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 110);
    assert_eq!(
        err,
        EngineError::DeadlineNotReached {
            remaining_ms: 1,
            your_move: false
        }
    );
    // No tick is needed: the claim's own time is past the deadline.
    t.at(10_000 + MOVE_TIMEOUT_MS + 1);
    t.ok(ALICE, Command::ClaimTimeout { match_id: id });
    assert_eq!(t.result(id).reason, EndReason::Timeout);
    assert_eq!(t.result(id).ended_ms, 10_000 + MOVE_TIMEOUT_MS + 1);
}

#[test]
fn the_move_deadline_runs_from_the_opponents_last_move() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.at(1_000);
    t.play_ttt(id, &[4]);
    t.at(50_000);
    t.play_ttt(id, &[0]);
    // Alice is to move; Bob's clock started at 50 s.
    t.at(50_000 + MOVE_TIMEOUT_MS);
    t.expect_err(BOB, Command::ClaimTimeout { match_id: id }, 110);
    t.at(50_000 + MOVE_TIMEOUT_MS + 1);
    t.ok(BOB, Command::ClaimTimeout { match_id: id });
    assert_eq!(t.result(id).winner, Some(Player::Second));
}

/// Without automatic timeouts, nobody has to claim: a late move, made before any claim,
/// is accepted and restarts the clock.
#[test]
fn a_late_move_before_any_claim_is_accepted() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[4]);
    t.at(MOVE_TIMEOUT_MS * 3);
    t.play_ttt(id, &[0]);
    t.expect_err(BOB, Command::ClaimTimeout { match_id: id }, 110);
    t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 111);
}

#[test]
fn automatic_timeouts_fire_on_the_tick_at_the_deadline() {
    let mut t = Table::with(|c| c.automatic_timeouts = true);
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let id = t.queue_match(ALICE, BOB, TTT, ETHER);
    t.at(1_000);
    t.play_ttt(id, &[4]);
    assert_eq!(
        t.engine.next_deadline_ms(),
        Some(1_000 + MOVE_TIMEOUT_MS + 1)
    );
    t.at(1_000 + MOVE_TIMEOUT_MS);
    assert!(t.ok(CAROL, Command::Tick).events.is_empty());
    t.at(1_000 + MOVE_TIMEOUT_MS + 1);
    let r = t.ok(CAROL, Command::Tick);
    let (_, reason, winner, _) = ended(&r).unwrap();
    assert_eq!((reason, winner), (EndReason::Timeout, Some(Player::First)));
    t.assert_balances(&[(ALICE, tenths(19)), (BOB, 0)]);
    t.assert_reserve(tenths(1));
    assert_eq!(t.record(ALICE), (1, 1));
    assert_eq!(t.record(BOB), (0, 1));
}

#[test]
fn automatic_timeouts_still_let_the_last_mover_claim_before_the_tick() {
    let mut t = Table::with(|c| c.automatic_timeouts = true);
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[4, 0]);
    t.advance(MOVE_TIMEOUT_MS + 1);
    t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 111);
    let r = t.ok(BOB, Command::ClaimTimeout { match_id: id });
    assert_eq!(ended(&r).unwrap().2, Some(Player::Second));
    assert!(
        t.ok(CAROL, Command::Tick).events.is_empty(),
        "nothing left to fire"
    );
}

#[test]
fn without_automatic_timeouts_the_tick_leaves_a_slow_match_to_the_claim() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[4]);
    assert_eq!(
        t.engine.next_deadline_ms(),
        None,
        "nothing for the clock to do"
    );
    t.at(MOVE_TIMEOUT_MS * 100);
    assert!(t.ok(CAROL, Command::Tick).events.is_empty());
    assert_eq!(t.phase(id), Phase::InProgress);
    t.ok(ALICE, Command::ClaimTimeout { match_id: id });
}

#[test]
fn a_first_move_that_never_comes_aborts_on_the_tick_with_full_refunds() {
    for automatic in [false, true] {
        let mut t = Table::with(|c| c.automatic_timeouts = automatic);
        t.fund(ALICE, ETHER);
        t.fund(BOB, ETHER);
        t.at(1_000);
        let id = t.queue_match(ALICE, BOB, SOS, ETHER);
        assert_eq!(
            t.engine.next_deadline_ms(),
            Some(1_000 + MOVE_TIMEOUT_MS + 1)
        );
        t.at(1_000 + MOVE_TIMEOUT_MS);
        assert!(t.ok(CAROL, Command::Tick).events.is_empty());
        t.at(1_000 + MOVE_TIMEOUT_MS + 1);
        let r = t.ok(CAROL, Command::Tick);
        let (_, reason, winner, _) = ended(&r).unwrap();
        assert_eq!((reason, winner), (EndReason::Aborted, None));
        assert_eq!(
            transfers(&r),
            vec![
                from_escrow(id, Account::Player(ALICE), ETHER, TransferReason::Refund),
                from_escrow(id, Account::Player(BOB), ETHER, TransferReason::Refund),
            ]
        );
        t.assert_balances(&[(ALICE, ETHER), (BOB, ETHER)]);
        t.assert_reserve(0);
        assert_eq!(t.engine.all_stats().count(), 0, "an abort does not count");
    }
}

#[test]
fn either_player_may_abort_a_match_whose_first_move_never_came() {
    for who in [ALICE, BOB] {
        let mut t = Table::new();
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        t.at(MOVE_TIMEOUT_MS);
        t.expect_err(who, Command::ClaimTimeout { match_id: id }, 110);
        t.at(MOVE_TIMEOUT_MS + 1);
        t.ok(who, Command::ClaimTimeout { match_id: id });
        assert_eq!(t.result(id).reason, EndReason::Aborted);
    }
}

#[test]
fn a_tick_ends_every_due_match_in_one_batch() {
    let mut t = Table::with(|c| c.automatic_timeouts = true);
    let expiring = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    let aborting = t.queue_match(CAROL, DAVE, TTT, 0);
    let slow = t.queue_match(ERIN, FRANK, TTT, 0);
    t.play_ttt(slow, &[4]);
    t.at(CHALLENGE_TTL_MS);
    let r = t.ok(OWNER, Command::Tick);
    assert_eq!(
        kinds(&r.events),
        [
            "challenge_expired",
            "game_ended",
            "game_ended",
            "game_ended"
        ]
    );
    assert_eq!(t.result(expiring).reason, EndReason::Expired);
    assert_eq!(t.result(aborting).reason, EndReason::Aborted);
    assert_eq!(t.result(slow).reason, EndReason::Timeout);
    assert!(
        t.ok(OWNER, Command::Tick).events.is_empty(),
        "nothing is due twice"
    );
}

#[test]
fn time_earlier_than_the_last_event_under_a_commands_keys_is_clamped_to_it() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.at(200_000);
    let id = t.join(ALICE, SOS, ETHER);
    // A command under other keys keeps its own time, though a later event came before
    // it: the deposit to Bob shares no key with Alice's joining.
    t.at(100_000);
    let r = t.ok(OWNER, Command::Deposit { to: BOB, amount: 1 });
    assert_eq!(r.events[0].at_ms, 100_000);
    assert_eq!(
        t.engine.clock_ms(),
        200_000,
        "the latest event's, under any key"
    );
    // A command sent "earlier" than the last event under its keys happens at that
    // event's time: Bob's account's, 100 s…
    t.at(50_000);
    let r = t.ok(OWNER, Command::Deposit { to: BOB, amount: 1 });
    assert_eq!(r.events[0].at_ms, 100_000);
    // …and Alice's, 200 s; and is judged at that time.
    t.at(0);
    let err = t.expect_err(ALICE, Command::Cancel { match_id: id }, 106);
    assert_eq!(
        err,
        EngineError::WaitNotOver {
            remaining_ms: WAIT_CANCEL_MS
        }
    );
    t.at(200_000 + WAIT_CANCEL_MS);
    t.ok(ALICE, Command::Cancel { match_id: id });
    // A claim sent with an earlier time is judged at the clock too.
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[4]);
    t.at(1);
    let err = t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 110);
    assert_eq!(
        err,
        EngineError::DeadlineNotReached {
            remaining_ms: MOVE_TIMEOUT_MS + 1,
            your_move: false
        }
    );
    // The log's times go forwards under each key, not across keys.
    let log = t.engine.log_for_tests();
    assert!(log.windows(2).any(|w| w[0].at_ms > w[1].at_ms));
    let times: Vec<u64> = log
        .iter()
        .filter(|e| e.match_id() == Some(id))
        .map(|e| e.at_ms)
        .collect();
    assert!(times.len() > 2 && times.is_sorted(), "{times:?}");
}

// ----- money --------------------------------------------------------------------------

#[test]
fn the_owner_deposits_and_players_withdraw() {
    let mut t = Table::new();
    let r = t.ok(
        OWNER,
        Command::Deposit {
            to: ALICE,
            amount: ETHER,
        },
    );
    assert_eq!(
        transfers(&r),
        vec![Transfer {
            from: Account::Outside,
            to: Account::Player(ALICE),
            amount: ETHER,
            reason: TransferReason::Deposit,
        }]
    );
    assert_eq!(r.events[0].match_id(), None);
    t.expect_err(
        ALICE,
        Command::Deposit {
            to: ALICE,
            amount: 1,
        },
        115,
    );
    t.expect_err(ALICE, Command::Deposit { to: BOB, amount: 1 }, 115);
    let r = t.ok(ALICE, Command::Withdraw { amount: tenths(3) });
    assert_eq!(
        transfers(&r),
        vec![Transfer {
            from: Account::Player(ALICE),
            to: Account::Outside,
            amount: tenths(3),
            reason: TransferReason::Withdrawal,
        }]
    );
    t.assert_balances(&[(ALICE, tenths(7))]);
    let err = t.expect_err(ALICE, Command::Withdraw { amount: ETHER }, 105);
    assert_eq!(
        err,
        EngineError::InsufficientBalance {
            needed: ETHER,
            available: tenths(7)
        }
    );
    t.ok(ALICE, Command::Withdraw { amount: tenths(7) });
    assert_eq!(t.balance(ALICE), 0);
    let ledger = t.engine.ledger();
    assert_eq!(ledger.deposited(), ETHER);
    assert_eq!(ledger.withdrawn(), ETHER);
    assert_eq!(ledger.total_held(), 0);
    assert_eq!(ledger.accounts().count(), 0);
}

#[test]
fn money_is_double_entry_conserved_and_never_negative() {
    let mut t = Table::new();
    for who in [ALICE, BOB, CAROL, DAVE] {
        t.fund(who, 2 * ETHER);
    }
    let a = t.queue_match(ALICE, BOB, SOS, ETHER);
    let c = t.challenge_match(CAROL, DAVE, TTT, ETHER / 3);
    let sum = |t: &Table| -> u128 { t.engine.ledger().accounts().map(|(_, b)| b).sum() };
    assert_eq!(sum(&t), 8 * ETHER);
    t.play(a, &[(0, Mark::S), (1, Mark::O), (2, Mark::S)]);
    t.play_ttt(c, &[0, 1, 2, 4, 3, 5, 7, 6, 8]);
    assert_eq!(sum(&t), 8 * ETHER);
    t.ok(OWNER, Command::CollectReserve);
    t.ok(
        OWNER,
        Command::Withdraw {
            amount: t.balance(OWNER),
        },
    );
    let ledger = t.engine.ledger();
    assert_eq!(sum(&t), ledger.total_held());
    assert_eq!(ledger.deposited() - ledger.withdrawn(), ledger.total_held());
    ledger.audit().unwrap();
    // Every transfer in the log moved a positive amount between two different accounts.
    for x in transfers_of(t.engine.log_for_tests()) {
        assert!(x.amount > 0);
        assert_ne!(x.from, x.to);
    }
    // Exact: Alice 1 + 1.8, Bob 1, Carol and Dave 2 - 1/3 + 0.9 * 1/3 each.
    let third = ETHER / 3;
    let draw_refund = 299_999_999_999_999_999; // 0.9 * 333_333_333_333_333_333, rounded down
    assert_eq!(draw_refund, triad_engine::share(third, 9_000));
    t.assert_balances(&[
        (ALICE, tenths(28)),
        (BOB, ETHER),
        (CAROL, 2 * ETHER - third + draw_refund),
        (DAVE, 2 * ETHER - third + draw_refund),
    ]);
}

#[test]
fn odd_stakes_round_payouts_down_and_the_remainder_goes_to_the_reserve() {
    // Stake 7: pot 14. Win 90% = 12.6 -> 12; tie 90% of 7 = 6.3 -> 6 each; timeout 95% =
    // 13.3 -> 13; cancel 100%.
    let mut t = Table::new();
    for who in [ALICE, BOB] {
        t.fund(who, 100);
    }
    let id = t.queue_match(ALICE, BOB, TTT, 7);
    t.play_ttt(id, &[0, 3, 1, 4, 2]);
    t.assert_balances(&[(ALICE, 93 + 12), (BOB, 93)]);
    t.assert_reserve(2);
    let id = t.queue_match(ALICE, BOB, TTT, 7);
    t.play_ttt(id, &[0, 1, 2, 4, 3, 5, 7, 6, 8]);
    t.assert_balances(&[(ALICE, 105 - 7 + 6), (BOB, 93 - 7 + 6)]);
    t.assert_reserve(4);
    let id = t.queue_match(ALICE, BOB, TTT, 7);
    t.play_ttt(id, &[4]);
    t.advance(MOVE_TIMEOUT_MS + 1);
    t.ok(ALICE, Command::ClaimTimeout { match_id: id });
    t.assert_balances(&[(ALICE, 104 - 7 + 13), (BOB, 92 - 7)]);
    t.assert_reserve(5);
    let id = t.join(ALICE, TTT, 7);
    t.advance(WAIT_CANCEL_MS);
    t.ok(ALICE, Command::Cancel { match_id: id });
    t.assert_balances(&[(ALICE, 110)]);
    t.assert_reserve(5);
    assert_eq!(t.balance(ALICE) + t.balance(BOB) + t.reserve(), 200);
}

#[test]
fn stakes_above_the_limit_are_refused() {
    let mut t = Table::with(|c| c.max_stake = 10);
    t.fund(ALICE, 100);
    let err = t.expect_err(
        ALICE,
        Command::JoinQueue {
            game: TTT,
            stake: 11,
        },
        120,
    );
    assert_eq!(err, EngineError::StakeTooLarge { max: 10 });
    let challenge = Command::Challenge {
        opponent: BOB,
        game: TTT,
        stake: 11,
        first: StartChoice::Challenger,
    };
    t.expect_err(ALICE, challenge, 120);
    t.join(ALICE, TTT, 10);
}

/// The reserve is already inside the ledger, so collecting it cannot overflow anything;
/// the owner must be able to collect however much the ledger holds.
#[test]
fn the_owner_collects_even_when_the_ledger_is_nearly_full() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let id = t.queue_match(ALICE, BOB, TTT, ETHER);
    t.play_ttt(id, &[0, 3, 1, 4, 2]);
    t.assert_reserve(tenths(2));
    // Fill the ledger to its limit.
    t.fund(CAROL, u128::MAX - 2 * ETHER);
    assert_eq!(t.engine.ledger().total_held(), u128::MAX);
    t.expect_err(
        OWNER,
        Command::Deposit {
            to: DAVE,
            amount: 1,
        },
        122,
    );
    t.ok(OWNER, Command::CollectReserve);
    t.assert_balances(&[(OWNER, tenths(2))]);
    t.assert_reserve(0);
}

// ----- idempotency --------------------------------------------------------------------

#[test]
fn a_resubmitted_command_applies_once() {
    let mut t = Table::new();
    let deposit = Command::Deposit {
        to: ALICE,
        amount: ETHER,
    };
    let first = t.run_keyed(OWNER, 7, deposit.clone()).unwrap();
    assert_eq!(first.duplicate, None);
    let again = t.run_keyed(OWNER, 7, deposit.clone()).unwrap();
    let seq = first.events[0].seq;
    assert_eq!(
        again.duplicate,
        Some(Duplicate::Command {
            first_seq: seq,
            last_seq: seq,
            match_id: None
        })
    );
    assert!(again.events.is_empty());
    t.assert_balances(&[(ALICE, ETHER)]);
    // A command of several events: its whole batch is remembered.
    t.fund(BOB, ETHER);
    t.join(ALICE, SOS, ETHER);
    let join = Command::JoinQueue {
        game: SOS,
        stake: ETHER,
    };
    let first = t.run_keyed(BOB, 1, join.clone()).unwrap();
    assert_eq!(first.events.len(), 2);
    let again = t.run_keyed(BOB, 1, join).unwrap();
    assert_eq!(
        again.duplicate,
        Some(Duplicate::Command {
            first_seq: first.events[0].seq,
            last_seq: first.events[1].seq,
            match_id: Some(match_id(&first))
        })
    );
    assert_eq!(t.balance(BOB), 0);
    let applied = first.events[1].applied.as_ref().expect("the key is logged");
    assert_eq!(applied.batch_len, 2);
    assert_eq!(applied.actor, BOB);
    assert_eq!(first.events[0].applied, None);
    // A keyed move resubmitted is a duplicate of the command.
    let id = match_id(&first);
    let mv = t.move_cmd(id, 4, Mark::O);
    let r = t.run_keyed(ALICE, 2, mv.clone()).unwrap();
    let again = t.run_keyed(ALICE, 2, mv).unwrap();
    assert!(
        matches!(again.duplicate, Some(Duplicate::Command { first_seq, .. }) if first_seq == r.events[0].seq)
    );
    assert_eq!(t.m(id).seq(), 1);
}

#[test]
fn reusing_a_key_for_a_different_command_is_refused_with_119() {
    let mut t = Table::new();
    t.run_keyed(
        OWNER,
        7,
        Command::Deposit {
            to: ALICE,
            amount: ETHER,
        },
    )
    .unwrap();
    let err = t
        .run_keyed(
            OWNER,
            7,
            Command::Deposit {
                to: ALICE,
                amount: 2 * ETHER,
            },
        )
        .unwrap_err();
    assert_eq!(err.code(), 119);
    let err = t.run_keyed(OWNER, 7, Command::CollectReserve).unwrap_err();
    assert_eq!(err.code(), 119, "checked before the command itself");
    t.assert_balances(&[(ALICE, ETHER)]);
}

#[test]
fn idempotency_keys_belong_to_their_actor() {
    let mut t = Table::new();
    t.run_keyed(
        OWNER,
        7,
        Command::Deposit {
            to: ALICE,
            amount: ETHER,
        },
    )
    .unwrap();
    let r = t
        .run_keyed(ALICE, 7, Command::Withdraw { amount: 1 })
        .unwrap();
    assert_eq!(r.duplicate, None);
    assert_eq!(t.balance(ALICE), ETHER - 1);
}

#[test]
fn a_refused_command_does_not_use_up_its_key() {
    let mut t = Table::new();
    let withdraw = Command::Withdraw { amount: 5 };
    assert_eq!(
        t.run_keyed(ALICE, 3, withdraw.clone()).unwrap_err().code(),
        105
    );
    t.fund(ALICE, 5);
    assert_eq!(
        t.run_keyed(ALICE, 3, withdraw.clone()).unwrap().duplicate,
        None
    );
    assert!(t.run_keyed(ALICE, 3, withdraw).unwrap().duplicate.is_some());
    assert_eq!(t.balance(ALICE), 0);
}

#[test]
fn idempotency_keys_are_forgotten_after_the_window() {
    let mut t = Table::with(|c| c.idempotency_window_ms = 1_000);
    let deposit = Command::Deposit {
        to: ALICE,
        amount: 1,
    };
    t.run_keyed(OWNER, 7, deposit.clone()).unwrap();
    t.at(999);
    assert!(
        t.run_keyed(OWNER, 7, deposit.clone())
            .unwrap()
            .duplicate
            .is_some()
    );
    t.at(1_000);
    assert_eq!(
        t.run_keyed(OWNER, 7, deposit.clone()).unwrap().duplicate,
        None
    );
    assert_eq!(t.balance(ALICE), 2);
    // The key now stands for the second deposit; a different command may not reuse it.
    assert_eq!(
        t.run_keyed(OWNER, 7, Command::CollectReserve)
            .unwrap_err()
            .code(),
        119
    );
}

#[test]
fn idempotency_survives_a_replay() {
    let mut t = Table::new();
    let deposit = Command::Deposit {
        to: ALICE,
        amount: ETHER,
    };
    t.run_keyed(OWNER, 7, deposit.clone()).unwrap();
    let mut replayed = Engine::replay(t.engine.config().clone(), t.engine.log_for_tests());
    let envelope = Envelope::new(OWNER, t.now, deposit).with_key(IdempotencyKey(7));
    let r = replayed.execute(&envelope).unwrap();
    assert!(
        r.duplicate.is_some(),
        "the replayed engine remembers the key"
    );
    assert_eq!(replayed.balance(ALICE), ETHER);
}

// ----- stats and ratings --------------------------------------------------------------

#[test]
fn stats_after_each_kind_of_ending() {
    // (wins, games, draws) for Alice and Bob.
    let expected = [
        (EndReason::Win, (1, 1, 0), (0, 1, 0)),
        (EndReason::Draw, (0, 1, 1), (0, 1, 1)),
        (EndReason::Forfeit, (1, 1, 0), (0, 1, 0)),
        (EndReason::Timeout, (1, 1, 0), (0, 1, 0)),
        (EndReason::Cancelled, (0, 0, 0), (0, 0, 0)),
        (EndReason::Aborted, (0, 0, 0), (0, 0, 0)),
        (EndReason::Declined, (0, 0, 0), (0, 0, 0)),
        (EndReason::Expired, (0, 0, 0), (0, 0, 0)),
    ];
    for (reason, alice, bob) in expected {
        let (t, _, _) = ending(reason);
        let s = |who| {
            let s = t.stats(who);
            (s.wins, s.games, s.draws)
        };
        assert_eq!(s(ALICE), alice, "Alice after {reason:?}");
        assert_eq!(s(BOB), bob, "Bob after {reason:?}");
        let rated = reason.was_played();
        assert_eq!(
            t.engine.all_stats().count(),
            if rated { 2 } else { 0 },
            "{reason:?}"
        );
    }
}

#[test]
fn glicko2_ratings_update_at_every_rated_ending() {
    let start = triad_engine::Rating::default();
    assert_eq!(
        (start.rating, start.deviation, start.volatility),
        (1500.0, 350.0, 0.06)
    );
    for reason in ALL_ENDINGS {
        let (t, _, _) = ending(reason);
        let (a, b) = (t.stats(ALICE).rating, t.stats(BOB).rating);
        match reason {
            EndReason::Win | EndReason::Forfeit | EndReason::Timeout => {
                assert!(
                    a.rating > 1600.0 && b.rating < 1400.0,
                    "{reason:?}: {a:?} {b:?}"
                );
                assert!(
                    (a.rating - 1500.0 - (1500.0 - b.rating)).abs() < 1e-6,
                    "symmetric"
                );
                assert!(a.deviation < 350.0 && b.deviation < 350.0);
            }
            EndReason::Draw => {
                assert!((a.rating - 1500.0).abs() < 1e-9 && (b.rating - 1500.0).abs() < 1e-9);
                assert!(a.deviation < 350.0, "a draw is still information");
            }
            _ => assert_eq!((a, b), (start, start), "{reason:?} is not rated"),
        }
    }
    // A second win moves the rating further, by less.
    let (mut t, _, _) = ending(EndReason::Win);
    let once = t.stats(ALICE).rating.rating;
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.play_ttt(id, &[0, 3, 1, 4, 2]);
    let twice = t.stats(ALICE).rating.rating;
    assert!(twice > once && twice - once < once - 1500.0);
}

#[test]
fn leaderboards_by_rating_and_by_wins() {
    let mut t = Table::new();
    // Alice beats Bob twice; Erin beats Frank; Carol and Dave draw.
    for _ in 0..2 {
        let id = t.queue_match(ALICE, BOB, TTT, 0);
        t.play_ttt(id, &[0, 3, 1, 4, 2]);
    }
    let id = t.queue_match(ERIN, FRANK, TTT, 0);
    t.play_ttt(id, &[0, 3, 1, 4, 2]);
    let id = t.queue_match(CAROL, DAVE, TTT, 0);
    t.play_ttt(id, &[0, 1, 2, 4, 3, 5, 7, 6, 8]);
    let names = |rows: Vec<(Address, triad_engine::PlayerStats)>| -> Vec<Address> {
        rows.into_iter().map(|(a, _)| a).collect()
    };
    assert_eq!(
        names(t.engine.leaderboard(Ranking::Rating, 10)),
        vec![ALICE, ERIN, CAROL, DAVE, FRANK, BOB]
    );
    // Wins, then fewer games, then address.
    assert_eq!(
        names(t.engine.leaderboard(Ranking::Wins, 10)),
        vec![ALICE, ERIN, CAROL, DAVE, FRANK, BOB]
    );
    assert_eq!(
        names(t.engine.leaderboard(Ranking::Wins, 2)),
        vec![ALICE, ERIN]
    );
    assert_eq!(t.engine.leaderboard(Ranking::Rating, 0), vec![]);
    let rows = t.engine.leaderboard(Ranking::Wins, 1);
    assert_eq!((rows[0].1.wins, rows[0].1.games), (2, 2));
}

// ----- events -------------------------------------------------------------------------

#[test]
fn events_have_a_global_gapless_seq_and_a_time() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.at(10);
    let a = t.join(ALICE, TTT, 0);
    t.at(20);
    let b = t.challenge(BOB, CAROL, SOS, 0, StartChoice::Challenger);
    t.at(30);
    t.join(DAVE, TTT, 0);
    t.ok(
        CAROL,
        Command::AcceptChallenge {
            match_id: b,
            terms: None,
        },
    );
    t.at(40);
    t.play_ttt(a, &[4]);
    let log = t.engine.log_for_tests();
    let seqs: Vec<u64> = log.iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (1..=log.len() as u64).collect::<Vec<_>>(),
        "one sequence for all matches"
    );
    let times: Vec<u64> = log.iter().map(|e| e.at_ms).collect();
    assert_eq!(times, vec![0, 10, 20, 30, 30, 30, 40]);
}

#[test]
fn every_event_kind_is_recorded() {
    let mut t = Table::new();
    t.fund(ALICE, 2 * ETHER);
    t.fund(BOB, 2 * ETHER);
    let declined = t.challenge(ALICE, BOB, TTT, ETHER, StartChoice::Challenger);
    t.ok(BOB, Command::DeclineChallenge { match_id: declined });
    let expired = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    t.advance(CHALLENGE_TTL_MS);
    t.ok(BOB, Command::Tick);
    let id = t.challenge_match(ALICE, BOB, TTT, ETHER);
    t.play_ttt(id, &[0, 3, 1, 4, 2]);
    t.ok(BOB, Command::Rematch { match_id: id });
    let queued = t.join(CAROL, SOS, 0);
    t.ok(OWNER, Command::CollectReserve);
    t.ok(ALICE, Command::Withdraw { amount: 1 });
    let log = t.engine.log_for_tests();
    let all = kinds(log);
    for kind in [
        "challenge_issued",
        "challenge_accepted",
        "challenge_declined",
        "challenge_expired",
        "queued",
        "game_started",
        "moved",
        "game_ended",
        "rematch_offered",
        "transferred",
    ] {
        assert!(all.contains(&kind), "{kind} missing from {all:?}");
    }
    let reasons: Vec<TransferReason> = transfers_of(log).iter().map(|x| x.reason).collect();
    for reason in [
        TransferReason::Deposit,
        TransferReason::Stake,
        TransferReason::Refund,
        TransferReason::Payout,
        TransferReason::ReserveShare,
        TransferReason::Collect,
        TransferReason::Withdrawal,
    ] {
        assert!(reasons.contains(&reason), "{reason:?} missing");
    }
    // Every match event names its match; money outside a match names none.
    assert!(log.iter().any(|e| e.match_id() == Some(declined)));
    assert!(log.iter().any(|e| e.match_id() == Some(expired)));
    assert!(log.iter().any(|e| e.match_id() == Some(queued)));
    let ended: Vec<(MatchId, EndReason)> = log
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::GameEnded {
                match_id, reason, ..
            } => Some((match_id, reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        ended,
        vec![
            (declined, EndReason::Declined),
            (expired, EndReason::Expired),
            (id, EndReason::Win)
        ]
    );
}

#[test]
fn game_ended_carries_the_reason_and_the_winning_cells() {
    let mut t = Table::new();
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    let r = t.play_ttt(id, &[2, 0, 4, 1, 6]);
    assert_eq!(
        ended(&r),
        Some((id, EndReason::Win, Some(Player::First), cells(&[2, 4, 6])))
    );
    let result = t.result(id);
    assert_eq!(
        (result.reason, result.winner, result.cells),
        (EndReason::Win, Some(Player::First), cells(&[2, 4, 6]))
    );
    // Other endings carry no cells.
    for reason in ALL_ENDINGS.into_iter().filter(|r| *r != EndReason::Win) {
        let (t, id, _) = ending(reason);
        assert!(t.result(id).cells.is_empty(), "{reason:?}");
    }
}

// ----- refusals and replay ------------------------------------------------------------

#[test]
fn a_refused_command_changes_nothing() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let id = t.queue_match(ALICE, BOB, TTT, ETHER);
    t.play_ttt(id, &[4]);
    let before = t.engine.clone();
    let log_len = t.engine.log_for_tests().len();
    let refused = [
        (ALICE, t.move_cmd(id, 0, Mark::X)),
        (BOB, t.move_cmd(id, 4, Mark::O)),
        (BOB, Command::Withdraw { amount: 1 }),
        (ALICE, Command::CollectReserve),
        (BOB, Command::ClaimTimeout { match_id: id }),
        (ALICE, Command::ClaimTimeout { match_id: id }),
        (CAROL, Command::Forfeit { match_id: id }),
        (ALICE, Command::Rematch { match_id: id }),
        (
            ALICE,
            Command::JoinQueue {
                game: SOS,
                stake: 0,
            },
        ),
        (
            CAROL,
            Command::JoinQueue {
                game: SOS,
                stake: 1,
            },
        ),
    ];
    for (who, command) in refused {
        let shown = format!("{command:?}");
        let mut probe = t.engine.clone();
        assert!(
            probe
                .execute(&Envelope::new(who, t.now + 1, command))
                .is_err(),
            "{shown}"
        );
        assert_eq!(probe, before, "{shown} changed the state");
        assert_eq!(probe.log_for_tests().len(), log_len);
        assert_eq!(probe.clock_ms(), before.clock_ms(), "not even the clock");
    }
}

#[test]
fn a_replay_of_the_log_equals_the_engine_at_every_step() {
    let mut t = Table::with(|c| {
        c.seed = 42;
        c.automatic_timeouts = true;
    });
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    let id = t.challenge(ALICE, BOB, SOS, ETHER, StartChoice::Random);
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
    );
    t.check_replay();
    let mover = t.mover(id);
    t.mv(mover, id, 4, Mark::O);
    t.advance(MOVE_TIMEOUT_MS + 1);
    t.ok(CAROL, Command::Tick);
    t.check_replay();
    // Applying the events one by one to a fresh engine gives the same state.
    let mut stepwise = Engine::new(t.engine.config().clone());
    for event in t.engine.log_for_tests() {
        stepwise.apply(event);
    }
    assert_eq!(stepwise, t.engine);
    // The config is part of the state.
    let other = Config {
        seed: 43,
        ..t.engine.config().clone()
    };
    assert_ne!(Engine::replay(other, t.engine.log_for_tests()), t.engine);
}

// ----- match ids ----------------------------------------------------------------------

#[test]
fn match_ids_come_in_order_from_their_creators_stripe() {
    let play = |t: &mut Table, who: Address| {
        let id = match_id(&t.ok(
            who,
            Command::PlayComputer {
                game: TTT,
                level: Level::Random,
                side: Player::First,
            },
        ));
        t.ok(who, Command::Forfeit { match_id: id });
        id.0
    };
    let players = [ALICE, BOB, CAROL, DAVE, ERIN, FRANK];
    // One stripe, the default: 1, 2, 3, … whoever creates.
    let mut t = Table::new();
    let ids: Vec<u64> = players.iter().map(|&who| play(&mut t, who)).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);

    // Four: a name's first letter chooses its stripe (a = 1, b = 2, c = 3, d = 0, e = 1,
    // f = 2), and stripe s gives 4 + s, 8 + s, 12 + s, … in order.
    let mut t = Table::with(|c| c.match_id_stripes = NonZeroU16::new(4).expect("not zero"));
    let stripes: Vec<u16> = players
        .iter()
        .map(|&who| t.engine.config().match_id_stripe(who))
        .collect();
    assert_eq!(stripes, [1, 2, 3, 0, 1, 2]);
    let ids: Vec<u64> = (0..2)
        .flat_map(|_| players)
        .map(|who| play(&mut t, who))
        .collect();
    assert_eq!(ids, [5, 6, 7, 4, 9, 10, 13, 14, 11, 8, 17, 18]);
    // Once every match has left memory, the oldest id that can still have an event is
    // the smallest next id of a stripe: stripe 0's third, 12.
    assert_eq!(t.engine.oldest_match_id(), MatchId(4));
    t.advance(t.engine.config().finished_retention_ms + 1);
    assert_eq!(kinds(&t.ok(OWNER, Command::Tick).events), ["forgotten"]);
    assert_eq!(t.engine.matches().count(), 0);
    assert_eq!(t.engine.oldest_match_id(), MatchId(12));
    // An id of a stripe's not given yet is unknown; so is one below the stripe count,
    // which no stripe gives.
    for id in [MatchId(12), MatchId(2)] {
        t.expect_err(ALICE, Command::Forfeit { match_id: id }, 100);
    }

    // The count is fixed for the life of a log: with one stripe, this log's first id
    // (5) is out of order.
    let log = t.engine.log_for_tests().to_vec();
    let one = Config {
        match_id_stripes: NonZeroU16::MIN,
        ..t.engine.config().clone()
    };
    let refused = std::panic::catch_unwind(|| Engine::replay(one, &log))
        .expect_err("a log replays only with its count of stripes");
    let message = refused
        .downcast_ref::<String>()
        .expect("a formatted message");
    assert!(
        message.contains("match ids are given in order within their stripe"),
        "{message}"
    );
}

// ----- retention ----------------------------------------------------------------------

#[test]
fn a_log_written_before_the_clock_swept_replays_as_it_was_written() {
    let mut t = Table::with(|c| c.finished_retention_ms = 1_000);
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.ok(ALICE, Command::Forfeit { match_id: id });
    t.at(5_000);
    t.fund(CAROL, 1);
    assert!(t.engine.match_(id).is_some(), "the clock has not swept yet");
    let log = t.engine.log_for_tests().to_vec();
    let from = |seq: u64| Config {
        swept_by_clock_from_seq: seq,
        ..t.engine.config().clone()
    };
    // Swept by the clock from its first event: as live.
    assert_eq!(Engine::replay(from(1), &log), t.engine);
    // Written before the clock swept, every event swept memory as of its time: the
    // deposit at 5 s, past the match's retention, forgot it.
    let deposit = log.len() as u64;
    let old = Engine::replay(from(deposit + 1), &log);
    assert!(old.match_(id).is_none());
    old.audit().expect("a sound state");
    // The boundary between the two: the deposit swept by the clock, the forfeit before
    // it not (it swept nothing past its time).
    assert!(Engine::replay(from(deposit), &log).match_(id).is_some());
}

#[test]
fn finished_matches_stay_queryable_for_the_retention_window_then_live_in_the_log() {
    let mut t = Table::with(|c| c.finished_retention_ms = 1_000);
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.ok(ALICE, Command::Forfeit { match_id: id });
    t.at(1_000);
    t.fund(CAROL, 1);
    assert_eq!(
        t.result(id).reason,
        EndReason::Forfeit,
        "still within the window"
    );
    t.ok(BOB, Command::Rematch { match_id: id });
    // Past the window, commands know it no more…
    t.at(1_001);
    t.expect_err(ALICE, Command::Rematch { match_id: id }, 100);
    // …and the clock's next sweep forgets it, a minute after the last (the first: at 0).
    assert!(t.engine.match_(id).is_some(), "in memory until the sweep");
    assert_eq!(t.engine.next_sweep_ms(), Some(Engine::SWEEP_EVERY_MS));
    assert_eq!(t.engine.next_tick_ms(), Some(Engine::SWEEP_EVERY_MS));
    t.at(Engine::SWEEP_EVERY_MS - 1);
    assert!(t.ok(CAROL, Command::Tick).events.is_empty(), "not yet");
    t.at(Engine::SWEEP_EVERY_MS);
    assert_eq!(kinds(&t.ok(CAROL, Command::Tick).events), ["forgotten"]);
    assert!(t.engine.match_(id).is_none(), "forgotten by the state");
    assert!(
        t.engine
            .log_for_tests()
            .iter()
            .any(|e| e.match_id() == Some(id))
    );
    assert_eq!(t.engine.next_sweep_ms(), None, "nothing left to sweep");
    t.expect_err(ALICE, Command::Rematch { match_id: id }, 100);
    // The sweep, under every key, is the floor of every command's time from there on,
    // even under a key nothing had touched.
    t.at(1_500);
    let r = t.ok(
        OWNER,
        Command::Deposit {
            to: DAVE,
            amount: 1,
        },
    );
    assert_eq!(r.events[0].at_ms, Engine::SWEEP_EVERY_MS);
    // The stats stay.
    assert_eq!(t.record(BOB), (1, 1));
}
