//! Every key orders what it must: for each kind of key a command may share with another,
//! a pair of commands that share that key alone and whose order changes an answer or the
//! state. The commutation test (`tests/simulation.rs`, `commands_with_disjoint_keys_commute`)
//! shows that the keys are enough; these show that none of them is too much.
//!
//! `Key::All` orders the clock's commands by definition. `Key::Supply` is shared only by
//! deposits, which the owner alone makes, so two deposits also share the owner's address:
//! the supply bounds each of them (`amount_too_large`), and its key names that read.

mod common;

use std::collections::BTreeSet;
use std::num::NonZeroU16;

use common::*;
use triad_engine::{
    Address, Command, Engine, Entry, Envelope, EventKind, Format, Key, StartChoice, TournamentId,
    TournamentSpec,
};
use triad_solver::puzzles::{self, Goal};

/// The keys `a` and `b` share, from `engine`.
fn shared(engine: &Engine, a: &Envelope, b: &Envelope) -> BTreeSet<Key> {
    let of = |e: &Envelope| engine.keys(e).iter().collect::<BTreeSet<Key>>();
    of(a).intersection(&of(b)).copied().collect()
}

/// Whether `a` then `b` and `b` then `a`, from `engine`, differ in an answer or in the
/// state they leave (the places of events in the log aside).
fn order_matters(engine: &Engine, a: &Envelope, b: &Envelope) -> bool {
    let (mut ab, mut ba) = (engine.clone(), engine.clone());
    let (a_first, b_second) = (ab.execute(a), ab.execute(b));
    let (b_first, a_second) = (ba.execute(b), ba.execute(a));
    without_positions(a_first) != without_positions(a_second)
        || without_positions(b_first) != without_positions(b_second)
        || !ab.same_but_log_positions(&ba)
}

/// Checks that `a` and `b` share exactly `key` and that their order matters.
fn assert_ordered_by(
    engine: &Engine,
    key: Key,
    a: Command,
    by_a: Address,
    b: Command,
    by_b: Address,
) {
    let now = 1_000_000;
    let (a, b) = (Envelope::new(by_a, now, a), Envelope::new(by_b, now, b));
    assert_eq!(
        shared(engine, &a, &b),
        BTreeSet::from([key]),
        "{a:?} and {b:?}"
    );
    assert!(
        order_matters(engine, &a, &b),
        "{a:?} and {b:?} commute without {key:?}"
    );
}

fn challenge(opponent: Address) -> Command {
    Command::Challenge {
        opponent,
        game: TTT,
        stake: 0,
        first: StartChoice::Challenger,
    }
}

fn free_tournament(max_players: u32) -> TournamentSpec {
    TournamentSpec {
        name: "Keys cup".into(),
        game: TTT,
        format: Format::Swiss { rounds: 1 },
        starts_at_ms: 10_000_000,
        entry: Entry::Everyone,
        entry_fee: 0,
        prizes_bps: Vec::new(),
        max_players,
    }
}

fn created(receipt: &triad_engine::Receipt) -> TournamentId {
    match receipt.events[0].kind {
        EventKind::TournamentCreated { tournament, .. } => tournament,
        ref other => panic!("created {other:?}"),
    }
}

#[test]
fn a_stripe_of_match_ids_orders_the_matches_it_numbers() {
    // One stripe: Alice's and Carol's challenges take 1 and 2 in the order they come.
    let t = Table::new();
    let stripe = Key::MatchIds(0);
    assert_ordered_by(
        &t.engine,
        stripe,
        challenge(BOB),
        ALICE,
        challenge(DAVE),
        CAROL,
    );
}

#[test]
fn an_address_orders_what_touches_its_account() {
    // Bob's whole balance is a staked tournament's fee: calling it off refunds him, so his
    // withdrawal of that much is refused before and paid after.
    let mut t = Table::new();
    t.fund(BOB, ETHER);
    let spec = TournamentSpec {
        entry_fee: ETHER,
        prizes_bps: vec![5_000],
        ..free_tournament(8)
    };
    let id = created(&t.ok(OWNER, Command::CreateTournament { spec }));
    t.ok(
        BOB,
        Command::JoinTournament {
            tournament: id,
            bot: false,
        },
    );
    let withdraw = Command::Withdraw { amount: ETHER };
    let cancel = Command::CancelTournament { tournament: id };
    assert_ordered_by(&t.engine, Key::Address(BOB), cancel, OWNER, withdraw, BOB);
}

#[test]
fn a_queue_orders_who_waits_and_who_is_paired() {
    // With the match ids in stripes, two joins of one empty queue share the queue alone:
    // whoever comes first waits and hosts.
    let mut t = Table::with(|c| c.match_id_stripes = NonZeroU16::new(64).expect("not zero"));
    assert_ne!(
        t.engine.config().match_id_stripe(ALICE),
        t.engine.config().match_id_stripe(BOB)
    );
    t.at(0);
    let join = Command::JoinQueue {
        game: TTT,
        stake: 0,
    };
    assert_ordered_by(
        &t.engine,
        Key::Queue(TTT, 0),
        join.clone(),
        ALICE,
        join,
        BOB,
    );
}

#[test]
fn a_tournament_orders_its_entries() {
    // One place left: the first to join takes it, and the other is refused.
    let mut t = Table::new();
    let id = created(&t.ok(
        OWNER,
        Command::CreateTournament {
            spec: free_tournament(2),
        },
    ));
    t.ok(
        ALICE,
        Command::JoinTournament {
            tournament: id,
            bot: false,
        },
    );
    let join = Command::JoinTournament {
        tournament: id,
        bot: false,
    };
    assert_ordered_by(
        &t.engine,
        Key::Tournament(id),
        join.clone(),
        BOB,
        join,
        CAROL,
    );
}

#[test]
fn the_tournament_ids_order_creation() {
    // One open tournament at most: the first to create it does, and the other is refused.
    let t = Table::with(|c| {
        c.tournaments.players_may_create = true;
        c.tournaments.max_open = 1;
    });
    let create = Command::CreateTournament {
        spec: free_tournament(8),
    };
    assert_ordered_by(
        &t.engine,
        Key::TournamentIds,
        create.clone(),
        ALICE,
        create,
        BOB,
    );
}

#[test]
fn a_puzzle_orders_the_attempts_that_rate_it() {
    // Each first attempt rates the player against the puzzle as the puzzle is rated then.
    let t = Table::new();
    let p = puzzles::all()
        .iter()
        .find(|p| p.goal() == Goal::WinIn(2))
        .expect("a puzzle");
    let attempt = Command::AttemptPuzzle {
        puzzle: p.id(),
        line: p.solution(),
    };
    assert_ordered_by(
        &t.engine,
        Key::Puzzle(p.id()),
        attempt.clone(),
        ALICE,
        attempt,
        BOB,
    );
}
