//! Rules benchmarks: `cargo bench -p triad-rules --bench rules`.

use divan::{Bencher, black_box};
use triad_rules::{AnyGame, Cell, GameKind, Mark, Move};

fn main() {
    divan::main();
}

/// A position and a move that wins it, for each game: the rules check the move, place it,
/// and find the line through its cell.
const WINNING_MOVES: [(GameKind, &str, u8, Mark); 2] = [
    (GameKind::TicTacToe, "XX-OO----", 2, Mark::X),
    (GameKind::Sos, "S-SO-----", 1, Mark::O),
];

/// A checked move ([`AnyGame::play`]).
#[divan::bench(args = WINNING_MOVES)]
fn play(bencher: Bencher, (kind, board, cell, mark): (GameKind, &str, u8, Mark)) {
    let game = AnyGame::parse(kind, board).expect("a legal position");
    let mv = Move::new(Cell::ALL[usize::from(cell)], mark);
    bencher.bench(|| black_box(game).play(black_box(mv)));
}

/// The same move unchecked ([`AnyGame::play_unchecked`]), as solvers play.
#[divan::bench(args = WINNING_MOVES)]
fn play_unchecked(bencher: Bencher, (kind, board, cell, mark): (GameKind, &str, u8, Mark)) {
    let game = AnyGame::parse(kind, board).expect("a legal position");
    let mv = Move::new(Cell::ALL[usize::from(cell)], mark);
    bencher.bench(|| black_box(game).play_unchecked(black_box(mv)));
}

/// Parsing and checking a state string, as at every untrusted boundary.
#[divan::bench(args = [(GameKind::TicTacToe, "XO-XOO-XX"), (GameKind::Sos, "O-SOOS--S")])]
fn parse(bencher: Bencher, (kind, board): (GameKind, &str)) {
    bencher.bench(|| AnyGame::parse(black_box(kind), black_box(board)));
}
