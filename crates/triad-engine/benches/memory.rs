//! Resident heap bytes per live match, counted by a global allocator.
//!
//! `cargo bench -p triad-engine --bench memory`

// A counting allocator needs `unsafe impl GlobalAlloc`; it only forwards to `System`.
#![allow(unsafe_code)]

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::atomic::{AtomicIsize, Ordering},
};

use triad_engine::{Address, Command, Config, Engine, Envelope};
use triad_rules::{GameKind, Mark};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards every call unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn addr(i: u32) -> Address {
    let mut b = [0u8; 32];
    b[..4].copy_from_slice(&i.to_le_bytes());
    b[31] = 1;
    Address::from_bytes(b)
}

fn main() {
    const PAIRS: u32 = 10_000;
    let owner = Address::from_bytes([0xee; 32]);
    let mut engine = Engine::new(Config::new(owner));
    let run = |e: &mut Engine, who, command| {
        e.execute(&Envelope::new(who, 1, command)).unwrap();
    };
    // Players with balances and ratings exist before we start counting: the figure is
    // what one more live match costs.
    for p in 0..2 * PAIRS {
        run(
            &mut engine,
            owner,
            Command::Deposit {
                to: addr(p),
                amount: 1_000_000,
            },
        );
    }
    let before = LIVE.load(Ordering::Relaxed);
    for p in 0..PAIRS {
        let (a, b) = (addr(2 * p), addr(2 * p + 1));
        run(
            &mut engine,
            a,
            Command::JoinQueue {
                game: GameKind::Sos,
                stake: 1_000,
            },
        );
        run(
            &mut engine,
            b,
            Command::JoinQueue {
                game: GameKind::Sos,
                stake: 1_000,
            },
        );
        let id = engine.active_match(a).unwrap();
        // Three marks and no SOS yet: S in 0, S in 8, O in 1.
        for (seq, who, cell, mark) in [(1, a, 0, Mark::S), (2, b, 8, Mark::S), (3, a, 1, Mark::O)] {
            run(
                &mut engine,
                who,
                Command::Move {
                    match_id: id,
                    seq,
                    cell,
                    mark,
                    signed: None,
                },
            );
        }
    }
    let after = LIVE.load(Ordering::Relaxed);
    let live = engine.live_count();
    println!(
        "{live} live SOS matches (3 marks each, staked): {} heap bytes per live match \
         (match record, escrow account, registry entries), size_of::<Match>() = {} bytes",
        (after - before) / live as isize,
        std::mem::size_of::<triad_engine::Match>()
    );
}
