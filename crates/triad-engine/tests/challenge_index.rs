//! The engine's index of open challenges: `incoming_challenges` (read from the index) and
//! `outgoing_challenges` (read from the registry of active matches) must agree with a scan
//! of the live matches after every command, and the index must survive a replay.

mod common;

use common::*;
use triad_engine::{Address, Command, EndReason, Engine, EventKind, MatchId, Phase, StartChoice};

/// The `i`-th player of this file.
fn player(i: u32) -> Address {
    let mut bytes = [0u8; 32];
    bytes[..4].copy_from_slice(b"ch-p");
    bytes[4..8].copy_from_slice(&i.to_be_bytes());
    Address::from_bytes(bytes)
}

const CLOCK: Address = named(b"clock");

/// The open challenges to `address`, by a scan of the live matches (the old code).
fn brute_incoming(engine: &Engine, address: Address) -> Vec<MatchId> {
    engine
        .live_matches()
        .filter(|m| m.phase == Phase::Waiting && m.challenge.is_some_and(|c| c.opponent == address))
        .map(|m| m.id)
        .collect()
}

/// The open challenges from `address`, by a scan of the live matches (the server's old
/// filter).
fn brute_outgoing(engine: &Engine, address: Address) -> Vec<MatchId> {
    engine
        .live_matches()
        .filter(|m| {
            m.phase == Phase::Waiting && m.challenge.is_some_and(|c| c.challenger == address)
        })
        .map(|m| m.id)
        .collect()
}

/// The three lists of every address in `who` agree with the scans, and the audit passes.
#[track_caller]
fn check(t: &Table, who: &[Address], step: &str) {
    for &address in who {
        let incoming: Vec<MatchId> = t
            .engine
            .incoming_challenges(address)
            .map(|m| m.id)
            .collect();
        assert_eq!(
            incoming,
            brute_incoming(&t.engine, address),
            "incoming challenges of {address:?} after {step}"
        );
        let outgoing: Vec<MatchId> = t
            .engine
            .outgoing_challenges(address)
            .map(|m| m.id)
            .collect();
        assert_eq!(
            outgoing,
            brute_outgoing(&t.engine, address),
            "outgoing challenges of {address:?} after {step}"
        );
        assert!(outgoing.len() <= 1, "one open challenge per challenger");
        let concerning: Vec<MatchId> = t
            .engine
            .live_matches_concerning(address)
            .map(|m| m.id)
            .collect();
        assert_eq!(
            concerning,
            live_matches_concerning_by_scan(&t.engine, address),
            "live matches concerning {address:?} after {step}"
        );
    }
    if let Err(e) = t.engine.audit() {
        panic!("audit after {step}: {e}");
    }
}

fn ids(it: impl Iterator<Item = MatchId>) -> Vec<MatchId> {
    it.collect()
}

/// A scripted walk through every way a challenge ends: accepted, declined, withdrawn,
/// expired by a tick, withdrawn by a crossed acceptance; several challenges to one player.
#[test]
fn scripted_challenges_agree_with_a_scan() {
    let mut t = Table::new();
    let p: Vec<Address> = (0..6).map(player).collect();
    for &a in &p {
        t.fund(a, tenths(10));
    }
    check(&t, &p, "funding");

    // Four challenges to p0, from p1..p4, one of them staked.
    let to0: Vec<MatchId> = (1..5)
        .map(|i| {
            let stake = if i == 2 { tenths(1) } else { 0 };
            t.challenge(p[i], p[0], TTT, stake, StartChoice::Challenger)
        })
        .collect();
    check(&t, &p, "four challenges to p0");
    assert_eq!(ids(t.engine.incoming_challenges(p[0]).map(|m| m.id)), to0);
    assert_eq!(
        ids(t.engine.outgoing_challenges(p[1]).map(|m| m.id)),
        vec![to0[0]]
    );
    assert_eq!(t.engine.outgoing_challenges(p[0]).count(), 0);

    // p0 declines p2's; p3 withdraws its own; p0 accepts p1's.
    t.advance(1_000);
    t.ok(p[0], Command::DeclineChallenge { match_id: to0[1] });
    check(&t, &p, "a decline");
    t.ok(p[3], Command::Cancel { match_id: to0[2] });
    check(&t, &p, "a withdrawal");
    t.ok(
        p[0],
        Command::AcceptChallenge {
            match_id: to0[0],
            terms: None,
        },
    );
    check(&t, &p, "an acceptance");
    assert_eq!(
        ids(t.engine.incoming_challenges(p[0]).map(|m| m.id)),
        vec![to0[3]]
    );
    assert_eq!(
        t.engine.outgoing_challenges(p[1]).count(),
        0,
        "p1 is playing"
    );

    // Crossed challenges: p5 challenges p3, p3 challenges p5; p5 accepts p3's, which
    // withdraws p5's own in the same batch.
    let from5 = t.challenge(p[5], p[3], SOS, 0, StartChoice::Opponent);
    let from3 = t.challenge(p[3], p[5], SOS, 0, StartChoice::Challenger);
    check(&t, &p, "crossed challenges");
    assert_eq!(
        ids(t.engine.incoming_challenges(p[3]).map(|m| m.id)),
        vec![from5]
    );
    t.ok(
        p[5],
        Command::AcceptChallenge {
            match_id: from3,
            terms: None,
        },
    );
    check(&t, &p, "a crossed acceptance");
    assert_eq!(t.phase(from5), Phase::Finished);
    assert_eq!(t.result(from5).reason, EndReason::Cancelled);
    assert_eq!(t.engine.incoming_challenges(p[3]).count(), 0);
    assert_eq!(t.engine.outgoing_challenges(p[5]).count(), 0);

    // The game of p0 and p1 ends by a forfeit; p4's challenge to p0 expires on a tick.
    t.ok(p[0], Command::Forfeit { match_id: to0[0] });
    check(&t, &p, "a forfeit");
    t.at(CHALLENGE_TTL_MS);
    t.ok(CLOCK, Command::Tick);
    check(&t, &p, "a tick");
    assert_eq!(t.result(to0[3]).reason, EndReason::Expired);
    assert_eq!(t.engine.incoming_challenges(p[0]).count(), 0);

    // A free match is free again to challenge; a replay rebuilds an equal engine.
    let again = t.challenge(p[0], p[1], TTT, 0, StartChoice::Random);
    check(&t, &p, "a second challenge");
    assert_eq!(
        ids(t.engine.outgoing_challenges(p[0]).map(|m| m.id)),
        vec![again]
    );
    t.check_replay();
}

/// A small deterministic generator (the test's own, seeded): xorshift64*.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Thousands of random commands among eight players (most of them about challenges),
/// checked against the scans after each one; the log must contain every way a challenge
/// ends, crossed acceptances included.
#[test]
fn random_challenges_agree_with_a_scan_after_every_command() {
    let mut t = Table::new();
    let p: Vec<Address> = (0..8).map(player).collect();
    for &a in &p {
        t.fund(a, tenths(10));
    }
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let mut crossed = 0;
    for step in 0..3_000 {
        let who = p[g.below(p.len() as u64) as usize];
        let incoming: Vec<MatchId> = t.engine.incoming_challenges(who).map(|m| m.id).collect();
        let pick = |g: &mut Gen, list: &[MatchId]| {
            list.get(g.below(list.len().max(1) as u64) as usize)
                .copied()
                .unwrap_or(MatchId(g.below(step + 2)))
        };
        let active = t.engine.active_match(who).unwrap_or(MatchId(0));
        let command = match g.below(10) {
            0..=2 => Command::Challenge {
                opponent: p[g.below(p.len() as u64) as usize],
                game: if g.below(2) == 0 { TTT } else { SOS },
                stake: if g.below(3) == 0 { tenths(1) / 10 } else { 0 },
                first: StartChoice::Challenger,
            },
            3 | 4 => Command::AcceptChallenge {
                match_id: pick(&mut g, &incoming),
                terms: None,
            },
            5 => Command::DeclineChallenge {
                match_id: pick(&mut g, &incoming),
            },
            6 => Command::Cancel { match_id: active },
            7 => Command::Forfeit { match_id: active },
            8 => Command::Tick,
            _ => {
                t.advance(g.below(150_000));
                continue;
            }
        };
        let receipt = t.run(who, command.clone());
        if let (Command::AcceptChallenge { match_id, .. }, Ok(r)) = (&command, &receipt) {
            crossed += r
                .events
                .iter()
                .filter(|e| {
                    matches!(e.kind, EventKind::GameEnded { match_id: other, reason: EndReason::Cancelled, .. } if other != *match_id)
                })
                .count();
        }
        check(&t, &p, &format!("step {step}: {command:?} -> {receipt:?}"));
    }
    let ended = |reason: EndReason| {
        t.engine
            .log_for_tests()
            .iter()
            .filter(|e| matches!(e.kind, EventKind::GameEnded { reason: r, .. } if r == reason))
            .count()
    };
    for reason in [
        EndReason::Declined,
        EndReason::Expired,
        EndReason::Cancelled,
        EndReason::Forfeit,
    ] {
        assert!(ended(reason) >= 5, "{reason:?}: {}", ended(reason));
    }
    let accepted = t
        .engine
        .log_for_tests()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ChallengeAccepted { .. }))
        .count();
    assert!(accepted >= 20, "{accepted} challenges accepted");
    assert!(crossed >= 1, "no crossed challenge was accepted");
    t.check_replay();
}
