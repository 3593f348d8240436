//! Solver benchmarks: `cargo bench -p triad-solver --bench solver`.

use divan::{Bencher, black_box};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use triad_rules::{AnyGame, GameKind};
use triad_solver::{Strength, Table, table};

fn main() {
    divan::main();
}

/// A mid-game position of each game.
const POSITIONS: [(GameKind, &str); 2] = [
    (GameKind::TicTacToe, "X---O----"),
    (GameKind::Sos, "S---O----"),
];

/// A full solve from the rules: every reachable position's value and best move.
#[divan::bench(args = GameKind::ALL)]
fn solve(kind: GameKind) -> Table {
    Table::solve(black_box(kind))
}

/// One best-move lookup in a solved table: a single array read.
#[divan::bench(args = POSITIONS)]
fn best_move(bencher: Bencher, (kind, board): (GameKind, &str)) {
    let table = table(kind);
    let game = AnyGame::parse(kind, board).expect("a legal position");
    bencher.bench(|| table.best_move(black_box(&game)));
}

/// The value of every legal move, as for a hint.
#[divan::bench(args = POSITIONS)]
fn analyze(bencher: Bencher, (kind, board): (GameKind, &str)) {
    let table = table(kind);
    let game = AnyGame::parse(kind, board).expect("a legal position");
    bencher.bench(|| table.analyze(black_box(&game)));
}

/// A perfect player's move, ties broken by a seeded RNG.
#[divan::bench(args = POSITIONS)]
fn choose_perfect(bencher: Bencher, (kind, board): (GameKind, &str)) {
    let table = table(kind);
    let game = AnyGame::parse(kind, board).expect("a legal position");
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    bencher.bench_local(|| table.choose(black_box(&game), Strength::Perfect, &mut rng));
}
