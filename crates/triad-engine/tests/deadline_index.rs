//! The engine's deadline index: `next_deadline_ms` and the due matches of a `Tick`, found
//! without a scan of the live matches, must agree with a scan of the live matches.

mod common;

use common::*;
use triad_engine::{
    Address, Command, DeadlineKind, Engine, EventKind, Level, MatchId, Phase, StartChoice,
};
use triad_rules::{Mark, Player};

/// The `i`-th player of this file.
fn player(i: u32) -> Address {
    let mut bytes = [0u8; 32];
    bytes[..4].copy_from_slice(b"dl-p");
    bytes[4..8].copy_from_slice(&i.to_be_bytes());
    Address::from_bytes(bytes)
}

const CLOCK: Address = named(b"clock");

/// The clock deadline of every live match, by a scan: what the `Tick` enforces.
fn scanned(engine: &Engine) -> Vec<(MatchId, u64)> {
    let config = engine.config();
    engine
        .live_matches()
        .filter_map(|m| {
            let d = m.deadline(config)?;
            (d.kind != DeadlineKind::Timeout || config.automatic_timeouts)
                .then_some((m.id, d.at_ms))
        })
        .collect()
}

fn brute_next_deadline(engine: &Engine) -> Option<u64> {
    scanned(engine).into_iter().map(|(_, at_ms)| at_ms).min()
}

/// The matches a scan says are due at `now`, in match order.
fn brute_due(engine: &Engine, now: u64) -> Vec<MatchId> {
    scanned(engine)
        .into_iter()
        .filter(|&(_, at_ms)| at_ms <= now)
        .map(|(id, _)| id)
        .collect()
}

/// Ticks at `now`; checks that exactly the matches a scan finds due end, in match order,
/// and that the next deadline is still the scan's. Returns the ended matches.
#[track_caller]
fn tick_and_check(t: &mut Table, now: u64) -> Vec<MatchId> {
    assert_eq!(
        t.engine.next_deadline_ms(),
        brute_next_deadline(&t.engine),
        "next deadline before the tick at {now}"
    );
    assert!(now >= t.engine.clock_ms(), "the test's clock goes forwards");
    let due = brute_due(&t.engine, now);
    let receipt = t.at(now).ok(CLOCK, Command::Tick);
    let ended: Vec<MatchId> = receipt
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::GameEnded { match_id, .. } => Some(match_id),
            _ => None,
        })
        .collect();
    assert_eq!(ended, due, "the tick at {now} ends exactly the due matches");
    for &id in &ended {
        assert_eq!(t.phase(id), Phase::Finished);
    }
    assert!(brute_due(&t.engine, now).is_empty(), "nothing left due");
    assert_eq!(
        t.engine.next_deadline_ms(),
        brute_next_deadline(&t.engine),
        "next deadline after the tick at {now}"
    );
    t.engine.audit().unwrap();
    ended
}

/// 50 live matches of every kind, created 20 s apart: challenges (due 600 s after), ready
/// queue matches (due 60 s after), matches in progress (timeout 60 s after the last move),
/// lone queue waiters and computer matches (no clock deadline). Their deadlines interleave
/// so that the order of the due matches by time is not their order by id.
fn fifty_live_matches(automatic_timeouts: bool) -> (Table, Vec<MatchId>) {
    let mut t = Table::with(|c| c.automatic_timeouts = automatic_timeouts);
    let mut ids = Vec::new();
    for i in 0..50u32 {
        let (a, b) = (player(2 * i), player(2 * i + 1));
        t.fund(a, tenths(1));
        t.fund(b, tenths(1));
        t.at(u64::from(i) * 20_000);
        let stake = if i % 2 == 0 { 0 } else { tenths(1) };
        let id = match i % 5 {
            0 => t.challenge(a, b, TTT, stake, StartChoice::Challenger),
            1 => t.queue_match(a, b, TTT, stake),
            2 => {
                let id = t.queue_match(a, b, SOS, stake);
                t.advance(5_000);
                t.play(id, &[(4, Mark::S)]);
                id
            }
            // A stake of its own, so that nobody joins the waiter.
            3 => t.join(a, SOS, 1_000 + u128::from(i)),
            _ => match_id(&t.ok(
                a,
                Command::PlayComputer {
                    game: TTT,
                    level: Level::Random,
                    side: Player::First,
                },
            )),
        };
        ids.push(id);
    }
    assert_eq!(t.engine.live_count(), 50);
    assert_eq!(t.engine.live_matches().count(), 50);
    (t, ids)
}

#[test]
fn next_deadline_and_ticks_agree_with_a_scan_of_the_live_matches() {
    let (mut t, ids) = fifty_live_matches(true);
    // The first ready match (id 2, ready at 20 s) holds the earliest deadline: 80 s and
    // 1 ms (a move deadline falls when *more than* the timeout has passed).
    assert_eq!(t.engine.next_deadline_ms(), Some(80_001));
    assert_eq!(t.engine.next_deadline_ms(), brute_next_deadline(&t.engine));

    // Changes that move deadlines, at 985 s: an accepted challenge (id 46) gets a move
    // deadline (1,045 s), a move (in id 48) restarts a timeout (1,045 s), a decline (id 41)
    // and a forfeit (id 43) leave the index.
    t.at(985_000);
    let (accepted, declined, moved, forfeited) = (ids[45], ids[40], ids[47], ids[42]);
    t.ok(
        player(91),
        Command::AcceptChallenge {
            match_id: accepted,
            terms: None,
        },
    );
    t.ok(player(81), Command::DeclineChallenge { match_id: declined });
    t.play(moved, &[(0, Mark::O)]);
    t.ok(
        player(84),
        Command::Forfeit {
            match_id: forfeited,
        },
    );
    assert_eq!(t.engine.next_deadline_ms(), Some(80_001));

    // At 985 s every ready and in-progress match but those two is overdue, and the
    // challenges of ids 1, 6, 11 and 16 (600 s to 900 s): by time, id 2 (80 s) comes before
    // id 1 (600 s); the tick ends them by id all the same.
    let ended = tick_and_check(&mut t, 985_000);
    assert!(ended.starts_with(&[ids[0], ids[1], ids[2]]), "{ended:?}");
    assert!(ended.contains(&ids[15]) && ended.contains(&ids[46]));
    for id in [ids[20], accepted, moved, declined, forfeited] {
        assert!(!ended.contains(&id), "{id} is not due at 985 s");
    }
    assert_eq!(ended.len(), 4 + 10 + 8, "{ended:?}");

    // Nothing more is due at the same time.
    assert!(tick_and_check(&mut t, 985_000).is_empty());
    assert_eq!(t.engine.next_deadline_ms(), Some(1_000_000));
    assert!(tick_and_check(&mut t, 999_999).is_empty());

    // The challenge of id 21 (1,000 s), then the two moved deadlines (1,045 s).
    assert_eq!(tick_and_check(&mut t, 1_000_000), vec![ids[20]]);
    assert_eq!(t.engine.next_deadline_ms(), Some(1_045_001));
    assert!(tick_and_check(&mut t, 1_045_000).is_empty());
    assert_eq!(tick_and_check(&mut t, 1_045_001), vec![accepted, moved]);

    // The last challenges; then only the matches without a clock deadline are live.
    assert_eq!(
        tick_and_check(&mut t, 10_000_000),
        vec![ids[25], ids[30], ids[35]]
    );
    assert_eq!(t.engine.next_deadline_ms(), None);
    for (i, &id) in ids.iter().enumerate() {
        let live = t.engine.live_matches().any(|m| m.id == id);
        assert_eq!(live, i % 5 >= 3, "match {id} (kind {})", i % 5);
    }
    assert_eq!(t.engine.live_count(), 20);
    t.check_replay();
}

#[test]
fn without_automatic_timeouts_matches_in_progress_are_not_indexed() {
    let (mut t, ids) = fifty_live_matches(false);
    assert_eq!(t.engine.next_deadline_ms(), brute_next_deadline(&t.engine));
    tick_and_check(&mut t, 10_000_000);
    for (i, &id) in ids.iter().enumerate() {
        let live = t.engine.live_matches().any(|m| m.id == id);
        assert_eq!(live, i % 5 >= 2, "match {id} (kind {})", i % 5);
    }
    // The last mover may still claim a timeout the clock does not enforce.
    let in_progress = ids[2];
    let last_mover = t.seat(in_progress, Player::First);
    t.ok(
        last_mover,
        Command::ClaimTimeout {
            match_id: in_progress,
        },
    );
    assert_eq!(t.engine.next_deadline_ms(), None);
    t.engine.audit().unwrap();
}

/// The index survives a replay and is equal to the live engine's (the engines compare equal).
#[test]
fn a_replay_rebuilds_the_index() {
    let (mut t, _) = fifty_live_matches(true);
    tick_and_check(&mut t, 985_000);
    let replayed = Engine::replay(t.engine.config().clone(), t.engine.log_for_tests());
    assert_eq!(replayed.next_deadline_ms(), t.engine.next_deadline_ms());
    assert_eq!(replayed, t.engine);
    replayed.audit().unwrap();
}
