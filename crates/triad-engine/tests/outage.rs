//! An outage costs nobody time: `ResumeClocks` moves every clock that ran when the service
//! went down later by the outage's length, so the player to move, the challenged player
//! and a tournament's games find the time they had, and what had already passed stays
//! passed. Every table replays its log on drop (`Table::check_replay`).

mod common;

use common::*;
use triad_engine::{
    Address, Command, EndReason, Entry, EventKind, Format, MatchId, StartChoice, TournamentId,
    TournamentSpec,
};
use triad_rules::{Mark, Player};

const HOUR_MS: u64 = 60 * 60 * 1000;

fn resume(down_since_ms: u64) -> Command {
    Command::ResumeClocks { down_since_ms }
}

/// The clock gives back an outage from `down_since_ms` to the table's time; returns the
/// length it gave back.
#[track_caller]
fn give_back(t: &mut Table, down_since_ms: u64) -> u64 {
    let r = t.ok(Address::ZERO, resume(down_since_ms));
    assert_eq!(kinds(&r.events), ["clocks_resumed"]);
    match r.events[0].kind {
        EventKind::ClocksResumed {
            down_since_ms,
            resumed_ms,
        } => {
            assert_eq!(resumed_ms, r.events[0].at_ms);
            resumed_ms - down_since_ms
        }
        ref other => panic!("{other:?}"),
    }
}

/// Alice (X) and Bob, Alice's first move made at 1 s.
fn game_in_progress(t: &mut Table) -> MatchId {
    let id = t.queue_match(ALICE, BOB, TTT, 0);
    t.at(1_000);
    t.mv(ALICE, id, 4, Mark::X);
    id
}

#[test]
fn the_player_to_move_keeps_the_time_they_had_when_the_service_went_down() {
    let mut t = Table::new();
    let id = game_in_progress(&mut t);
    let deadline = t.m(id).deadline(t.engine.config()).unwrap().at_ms;
    assert_eq!(deadline, 1_000 + MOVE_TIMEOUT_MS + 1);
    // Down at 21 s (40 s left to Bob), back two hours later.
    t.at(21_000 + 2 * HOUR_MS);
    assert_eq!(give_back(&mut t, 21_000), 2 * HOUR_MS);
    let moved = t.m(id).deadline(t.engine.config()).unwrap().at_ms;
    assert_eq!(moved, deadline + 2 * HOUR_MS);
    assert_eq!(moved - t.now, 40_001, "Bob has the 40 s he had");
    // Alice cannot claim, and Bob may still move.
    let e = t.expect_err(ALICE, Command::ClaimTimeout { match_id: id }, 110);
    assert!(e.to_string().contains("41 s"), "{e}");
    t.advance(40_000);
    t.mv(BOB, id, 0, Mark::O);
    // The clock runs again from Bob's move, as ever.
    t.advance(MOVE_TIMEOUT_MS + 1);
    t.ok(BOB, Command::ClaimTimeout { match_id: id });
    assert_eq!(t.result(id).reason, EndReason::Timeout);
    assert_eq!(t.result(id).winner, Some(Player::Second));
}

#[test]
fn without_it_the_outage_costs_the_player_to_move_the_game() {
    let mut t = Table::new();
    let id = game_in_progress(&mut t);
    t.at(21_000 + 2 * HOUR_MS);
    t.ok(ALICE, Command::ClaimTimeout { match_id: id });
    assert_eq!(t.result(id).winner, Some(Player::First));
}

#[test]
fn a_deadline_that_had_passed_before_the_outage_stays_passed() {
    let mut t = Table::new();
    let id = game_in_progress(&mut t);
    // Bob ran out of time at 61.001 s; the service went down at 90 s.
    t.at(90_000 + HOUR_MS);
    give_back(&mut t, 90_000);
    assert!(t.m(id).deadline(t.engine.config()).unwrap().at_ms <= t.now);
    t.ok(ALICE, Command::ClaimTimeout { match_id: id });
    assert_eq!(t.result(id).reason, EndReason::Timeout);
}

#[test]
fn the_outage_begins_no_earlier_than_the_last_event() {
    let mut t = Table::new();
    let id = game_in_progress(&mut t);
    // The heartbeat said 500 ms, but the engine recorded a move at 1 s: it was alive.
    t.at(1_000 + HOUR_MS);
    assert_eq!(give_back(&mut t, 500), HOUR_MS);
    assert_eq!(t.m(id).last_activity_ms, 1_000 + HOUR_MS);
    // Nothing to give back: the clocks just resumed, and again with no time passed.
    t.expect_err(Address::ZERO, resume(1_000 + HOUR_MS), 151);
}

#[test]
fn an_open_challenge_and_an_unplayed_first_move_get_their_time_back() {
    let mut t = Table::new();
    let challenge = t.challenge(ALICE, BOB, TTT, 0, StartChoice::Challenger);
    let ready = t.queue_match(CAROL, DAVE, SOS, 0);
    let computer = match_id(&t.ok(
        ERIN,
        Command::PlayComputer {
            game: TTT,
            level: triad_engine::Level::Perfect,
            side: Player::First,
        },
    ));
    let expires = t.m(challenge).challenge.unwrap().expires_at_ms;
    // Down at 1 s, back a day later.
    t.at(1_000 + 24 * HOUR_MS);
    give_back(&mut t, 1_000);
    assert_eq!(
        t.m(challenge).challenge.unwrap().expires_at_ms,
        expires + 24 * HOUR_MS
    );
    assert_eq!(t.m(ready).last_activity_ms, 24 * HOUR_MS);
    assert_eq!(
        t.m(computer).last_activity_ms,
        0,
        "the computer keeps no clock"
    );
    // Nothing expired or aborted at the next tick; the challenge can be accepted.
    assert!(t.ok(OWNER, Command::Tick).events.is_empty());
    t.ok(
        BOB,
        Command::AcceptChallenge {
            match_id: challenge,
            terms: None,
        },
    );
    t.mv(CAROL, ready, 0, Mark::S);
}

fn arena(minutes: u64) -> TournamentSpec {
    TournamentSpec {
        name: "Arena".into(),
        game: TTT,
        format: Format::Arena {
            duration_ms: minutes * 60_000,
        },
        starts_at_ms: 60_000,
        entry: Entry::Everyone,
        entry_fee: 0,
        prizes_bps: Vec::new(),
        max_players: 8,
    }
}

fn open(t: &mut Table, spec: TournamentSpec) -> TournamentId {
    match t.ok(OWNER, Command::CreateTournament { spec }).events[0].kind {
        EventKind::TournamentCreated { tournament, .. } => tournament,
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn a_tournament_game_that_could_not_be_played_is_not_forfeited() {
    let mut t = Table::new();
    let id = open(&mut t, arena(10));
    for who in [ALICE, BOB] {
        t.ok(
            who,
            Command::JoinTournament {
                tournament: id,
                bot: false,
            },
        );
    }
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
    let end = t.engine.tournament(id).unwrap().ends_at_ms().unwrap();
    assert_eq!(end, 60_000 + 10 * 60_000);
    // Down at 70 s, back an hour later: the arena's end is long past, and so is the
    // game's first-move deadline, which a tournament's clock enforces by itself.
    t.at(70_000 + HOUR_MS);
    give_back(&mut t, 70_000);
    assert_eq!(
        t.engine.tournament(id).unwrap().ends_at_ms(),
        Some(end + HOUR_MS)
    );
    assert!(
        t.ok(OWNER, Command::Tick).events.is_empty(),
        "nothing is due"
    );
    assert_eq!(t.engine.tournament(id).unwrap().phase.name(), "running");
    // The game is played and counts.
    let first = t.mover(game);
    t.mv(first, game, 4, Mark::X);
    let second = t.mover(game);
    t.ok(second, Command::Forfeit { match_id: game });
    let t2 = t.engine.tournament(id).unwrap();
    assert_eq!(t2.records.iter().map(|r| r.games.len()).sum::<usize>(), 2);
    // The arena ends an hour late, with the time it lost.
    t.at(end + HOUR_MS);
    t.ok(OWNER, Command::Tick);
    assert_eq!(t.engine.tournament(id).unwrap().phase.name(), "finished");
}

#[test]
fn without_it_the_tournament_game_is_lost_on_time_at_the_first_tick() {
    let mut t = Table::new();
    let id = open(&mut t, arena(10));
    for who in [ALICE, BOB] {
        t.ok(
            who,
            Command::JoinTournament {
                tournament: id,
                bot: false,
            },
        );
    }
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
    t.at(70_000 + HOUR_MS);
    t.ok(OWNER, Command::Tick);
    assert_eq!(t.result(game).reason, EndReason::Timeout);
}

#[test]
fn an_outage_is_given_back_once_and_only_by_the_clock() {
    let mut t = Table::new();
    let id = game_in_progress(&mut t);
    t.at(10_000 + HOUR_MS);
    t.expect_err(ALICE, resume(10_000), 153);
    t.expect_err(Address::ZERO, resume(t.now + 1), 150);
    give_back(&mut t, 10_000);
    let deadline = t.m(id).deadline(t.engine.config()).unwrap().at_ms;
    // A second node that read the same heartbeat resumes the same outage: refused.
    t.advance(5);
    t.expect_err(Address::ZERO, resume(10_000), 152);
    assert_eq!(t.m(id).deadline(t.engine.config()).unwrap().at_ms, deadline);
}

#[test]
fn with_no_clock_running_nothing_is_recorded() {
    let mut t = Table::new();
    t.join(BOB, TTT, 0);
    t.at(HOUR_MS);
    let r = t.ok(Address::ZERO, resume(1_000));
    assert!(r.events.is_empty(), "{r:?}");
}

#[test]
fn the_deadline_index_moves_with_the_clocks() {
    let mut t = Table::with(|c| c.automatic_timeouts = true);
    let a = t.queue_match(ALICE, BOB, TTT, 0);
    t.at(5_000);
    let b = t.queue_match(CAROL, DAVE, TTT, 0);
    t.mv(CAROL, b, 0, Mark::X);
    let c = t.challenge(ERIN, FRANK, SOS, 0, StartChoice::Opponent);
    let before = t.engine.next_deadline_ms().unwrap();
    t.at(6_000 + HOUR_MS);
    give_back(&mut t, 6_000);
    assert_eq!(t.engine.next_deadline_ms(), Some(before + HOUR_MS));
    // Each ends at its own moved deadline, in order, as if the hour had not been.
    t.at(MOVE_TIMEOUT_MS + 1 + HOUR_MS);
    let r = t.ok(OWNER, Command::Tick);
    assert_eq!(ended(&r).map(|(id, ..)| id), Some(a));
    t.at(5_000 + MOVE_TIMEOUT_MS + 1 + HOUR_MS);
    let r = t.ok(OWNER, Command::Tick);
    assert_eq!(
        ended(&r).map(|(id, reason, ..)| (id, reason)),
        Some((b, EndReason::Timeout))
    );
    t.at(5_000 + CHALLENGE_TTL_MS + HOUR_MS);
    let r = t.ok(OWNER, Command::Tick);
    assert_eq!(
        ended(&r).map(|(id, reason, ..)| (id, reason)),
        Some((c, EndReason::Expired))
    );
}
