//! The cost of pairing one tournament round, and of the standings, at 1,000 and 10,000
//! players.
//!
//! `cargo bench -p triad-engine --bench pairing`

use divan::Bencher;
use triad_engine::tournament::pairing::{
    Entrant, Outcome, Pairing, Record, arena, arena_standings, record_game, swiss, swiss_standings,
};

fn main() {
    divan::main();
}

const PLAYERS: [u32; 2] = [1_000, 10_000];

/// A deterministic stream of numbers (SplitMix64), so every run measures the same events.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A game's outcome for the first mover: 45% wins, 20% draws, 35% losses.
    fn outcome(&mut self) -> Outcome {
        match self.next() % 20 {
            0..9 => Outcome::Win,
            9..13 => Outcome::Draw,
            _ => Outcome::Loss,
        }
    }
}

fn play(records: &mut [Record], pairing: Pairing, outcome: Outcome) {
    assert!(record_game(records, pairing, outcome));
}

fn field(n: u32, mix: &mut Mix) -> Vec<Record> {
    (0..n)
        .map(|_| Record {
            rating: 1000 + (mix.next() % 1500) as u32,
            ..Record::default()
        })
        .collect()
}

/// `n` players (one of them absent, so the count is odd and there is a bye) after
/// `rounds` Swiss rounds paired by `swiss` itself.
fn swiss_event(n: u32, rounds: u32) -> (Vec<Record>, Vec<Entrant>) {
    let mut mix = Mix(u64::from(n));
    let mut records = field(n, &mut mix);
    let present: Vec<Entrant> = (1..n).collect();
    for _ in 0..rounds {
        let round = swiss(&records, &present);
        for &p in &round.pairings {
            let outcome = mix.outcome();
            play(&mut records, p, outcome);
        }
        if let Some(bye) = round.bye {
            records[bye as usize].byes += 1;
        }
    }
    (records, present)
}

/// `n` players after `waves` arena waves in which about two thirds were free each time.
fn arena_event(n: u32, waves: u32) -> Vec<Record> {
    let mut mix = Mix(u64::from(n) + 1);
    let mut records = field(n, &mut mix);
    for _ in 0..waves {
        let waiting: Vec<Entrant> = (0..n).filter(|_| !mix.next().is_multiple_of(3)).collect();
        for p in arena(&records, &waiting) {
            let outcome = mix.outcome();
            play(&mut records, p, outcome);
        }
    }
    records
}

/// The eighth round of a Swiss event (seven played), with a bye.
#[divan::bench(args = PLAYERS, sample_count = 30)]
fn swiss_round_8(bencher: Bencher, n: u32) {
    let (records, present) = swiss_event(n, 7);
    bencher.bench(|| swiss(divan::black_box(&records), &present));
}

/// The first round: nobody has played, one big score group.
#[divan::bench(args = PLAYERS, sample_count = 30)]
fn swiss_round_1(bencher: Bencher, n: u32) {
    let (records, present) = swiss_event(n, 0);
    bencher.bench(|| swiss(divan::black_box(&records), &present));
}

/// A hard history: one score group (everyone drew 8 games), and everyone in its top half has
/// already met the 8 players of the bottom half the Dutch system would offer them first.
#[divan::bench(args = PLAYERS, sample_count = 30)]
fn swiss_round_first_choices_all_met(bencher: Bencher, n: u32) {
    let mut mix = Mix(7);
    let mut records = field(n, &mut mix);
    // Ratings decide the order: entrant i is ranked i-th.
    for (i, record) in (0..).zip(records.iter_mut()) {
        record.rating = 100_000 - i;
    }
    let half = n / 2;
    for i in 0..half {
        for d in 0..8 {
            let pairing = Pairing {
                first: i,
                second: half + (i + d) % half,
            };
            play(&mut records, pairing, Outcome::Draw);
        }
    }
    let present: Vec<Entrant> = (0..n).collect();
    bencher.bench(|| swiss(divan::black_box(&records), &present));
}

/// The worst case: no round without a rematch exists (the lowest-ranked player has met
/// everyone), but that shows only at the bottom of the search, which spends its whole
/// budget (`SEARCH_STEPS`) before it completes its deepest start with the one rematch.
#[divan::bench(args = PLAYERS, sample_count = 10)]
fn swiss_round_hopeless(bencher: Bencher, n: u32) {
    let mut mix = Mix(11);
    let mut records = field(n, &mut mix);
    for i in 0..n - 1 {
        let pairing = Pairing {
            first: i,
            second: n - 1,
        };
        play(&mut records, pairing, Outcome::Win);
    }
    let present: Vec<Entrant> = (0..n).collect();
    bencher.bench(|| swiss(divan::black_box(&records), &present));
}

/// One arena wave with every player free at once (the most a wave can pair), after 20 waves.
#[divan::bench(args = PLAYERS, sample_count = 30)]
fn arena_wave_everyone(bencher: Bencher, n: u32) {
    let records = arena_event(n, 20);
    let waiting: Vec<Entrant> = (0..n).collect();
    bencher.bench(|| arena(divan::black_box(&records), &waiting));
}

/// The Swiss standings after seven rounds.
#[divan::bench(args = PLAYERS, sample_count = 30)]
fn swiss_standings_after_7(bencher: Bencher, n: u32) {
    let (records, _) = swiss_event(n, 7);
    bencher.bench(|| swiss_standings(divan::black_box(&records)));
}

/// The arena standings after 20 waves.
#[divan::bench(args = PLAYERS, sample_count = 30)]
fn arena_standings_after_20_waves(bencher: Bencher, n: u32) {
    let records = arena_event(n, 20);
    bencher.bench(|| arena_standings(divan::black_box(&records)));
}
