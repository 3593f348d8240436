//! Commands per second through the engine on one core.
//!
//! `cargo bench -p triad-engine --bench engine`

use divan::{Bencher, counter::ItemsCount};
use triad_engine::{Address, Command, Config, Engine, Envelope, MatchId};
use triad_rules::{GameKind, Mark};

fn main() {
    divan::main();
}

fn addr(i: u32) -> Address {
    let mut b = [0u8; 32];
    b[..4].copy_from_slice(&i.to_le_bytes());
    b[31] = 1;
    Address::from_bytes(b)
}

/// An engine with `pairs` live tic-tac-toe matches from the queue, each staked and
/// waiting for its first move.
fn engine_with_matches(pairs: u32) -> (Engine, Vec<(MatchId, Address, Address)>) {
    let owner = Address::from_bytes([0xee; 32]);
    let mut engine = Engine::new(Config::new(owner));
    let run = |e: &mut Engine, who, command| e.execute(&Envelope::new(who, 1, command)).unwrap();
    let mut matches = Vec::new();
    for p in 0..pairs {
        let (a, b) = (addr(2 * p), addr(2 * p + 1));
        for who in [a, b] {
            run(
                &mut engine,
                owner,
                Command::Deposit {
                    to: who,
                    amount: 1_000_000,
                },
            );
        }
        let queued = run(
            &mut engine,
            a,
            Command::JoinQueue {
                game: GameKind::TicTacToe,
                stake: 1_000,
            },
        );
        let id = queued.events[0].match_id().unwrap();
        run(
            &mut engine,
            b,
            Command::JoinQueue {
                game: GameKind::TicTacToe,
                stake: 1_000,
            },
        );
        matches.push((id, a, b));
    }
    (engine, matches)
}

/// X wins with the seventh mark, on the diagonal 2-4-6.
const GAME: [(u8, Mark); 7] = [
    (4, Mark::X),
    (1, Mark::O),
    (0, Mark::X),
    (8, Mark::O),
    (6, Mark::X),
    (3, Mark::O),
    (2, Mark::X),
];

/// Plays one seven-move game (with its win and payout) in each of 1,000 live matches:
/// 7,000 move commands per iteration, interleaved across matches as a server sees them.
#[divan::bench(sample_count = 20)]
fn moves_across_1000_live_matches(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(7_000usize))
        .with_inputs(|| engine_with_matches(1_000))
        .bench_local_values(|(mut engine, matches)| {
            for (i, &(cell, mark)) in GAME.iter().enumerate() {
                for &(id, a, b) in &matches {
                    let who = if i % 2 == 0 { a } else { b };
                    let command = Command::Move {
                        match_id: id,
                        seq: i as u8 + 1,
                        cell,
                        mark,
                        signed: None,
                    };
                    engine.execute(&Envelope::new(who, 2, command)).unwrap();
                }
            }
            engine
        });
}

/// Refused commands cost a lookup and a check, and must stay cheap under attack.
#[divan::bench]
fn refused_move(bencher: Bencher) {
    let (mut engine, matches) = engine_with_matches(100);
    let (id, _, b) = matches[0];
    let command = Command::Move {
        match_id: id,
        seq: 1,
        cell: 4,
        mark: Mark::O,
        signed: None,
    };
    let envelope = Envelope::new(b, 2, command);
    bencher.bench_local(|| engine.execute(divan::black_box(&envelope)).unwrap_err());
}

/// The keys of a move (`Engine::keys`), which a partitioned core asks of every command
/// before it takes the keys' locks: a lookup of the match and a small set.
#[divan::bench]
fn keys_of_a_move(bencher: Bencher) {
    let (engine, matches) = engine_with_matches(1_000);
    let (id, a, _) = matches[500];
    let command = Command::Move {
        match_id: id,
        seq: 1,
        cell: 4,
        mark: Mark::X,
        signed: None,
    };
    let envelope = Envelope::new(a, 2, command);
    bencher.bench_local(|| engine.keys(divan::black_box(&envelope)));
}

/// A `Tick` over 1,000 live matches with nothing due.
#[divan::bench]
fn idle_tick_over_1000_live_matches(bencher: Bencher) {
    let (mut engine, _) = engine_with_matches(1_000);
    let envelope = Envelope::new(Address::from_bytes([0xee; 32]), 3, Command::Tick);
    bencher.bench_local(|| engine.execute(divan::black_box(&envelope)).unwrap());
}

/// A `Tick` over 10,000 live matches with nothing due: the clock's cost at a busy server.
#[divan::bench(sample_count = 20)]
fn idle_tick_over_10000_live_matches(bencher: Bencher) {
    let (mut engine, _) = engine_with_matches(10_000);
    let envelope = Envelope::new(Address::from_bytes([0xee; 32]), 3, Command::Tick);
    bencher.bench_local(|| engine.execute(divan::black_box(&envelope)).unwrap());
}

/// The server's ticker asks for the next deadline after every committed batch.
#[divan::bench(sample_count = 20)]
fn next_deadline_over_10000_live_matches(bencher: Bencher) {
    let (engine, _) = engine_with_matches(10_000);
    bencher.bench_local(|| divan::black_box(&engine).next_deadline_ms());
}
