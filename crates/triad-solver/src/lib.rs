//! Exact solutions of tic-tac-toe and SOS, and computer players built on them.
//!
//! Both games are small enough to solve completely: [`Table::solve`] walks every position
//! reachable from the empty board (5,478 in tic-tac-toe, 19,416 in SOS) and records, for
//! the player to move, its [`Value`] (win, draw or loss under optimal play, and how many
//! plies until the end) and a best move. A solve takes a fraction of a millisecond for
//! tic-tac-toe and about a millisecond for SOS, so tables are computed from the rules of
//! [`triad_rules`] at run time and never stored; [`table`] keeps one per game for the life
//! of the process.
//!
//! On top of the table:
//! - lookups: [`Table::value`], [`Table::best_move`], [`Table::best_moves`],
//!   [`Table::analyze`] (every legal move's value, for hints and post-game review),
//!   [`Table::reachable`] and [`Table::counts`];
//! - [`puzzles`]: "win in N" and "save the draw" positions chosen from the tables, the
//!   daily puzzle, and the check of a solving line;
//! - computer players: [`Table::choose`] at a [`Strength`], with randomness only from the
//!   RNG the caller passes in;
//! - exports: the HTML5 canvas game's [`moves_js`] table (and its reader [`parse_moves_js`])
//!   and a JSON Lines dump, [`write_jsonl`]. `docs/origins.md` in the repository describes
//!   that game.
//!
//! The crate is pure: no I/O beyond the writers passed in, no clock, no global randomness.
//!
//! ```
//! use rand::SeedableRng;
//! use rand_chacha::ChaCha8Rng;
//! use triad_rules::{AnyGame, GameKind};
//! use triad_solver::{Strength, Value, Verdict, table};
//!
//! let table = table(GameKind::TicTacToe);
//! let mut game = AnyGame::new(GameKind::TicTacToe);
//! assert_eq!(table.value(&game), Some(Value::new(Verdict::Draw, 9)));
//!
//! // Two perfect players always draw.
//! let mut rng = ChaCha8Rng::seed_from_u64(42);
//! while let Some(mv) = table.choose(&game, Strength::Perfect, &mut rng) {
//!     game = game.play(mv).unwrap();
//! }
//! assert_eq!(game.outcome(), Some(triad_rules::Outcome::Draw));
//! ```

mod export;
mod packed;
pub mod puzzles;
mod review;
mod strength;
mod table;
mod value;

pub use export::{MovesJsError, UnsupportedGame, jsonl, moves_js, parse_moves_js, write_jsonl};
pub use review::{IllegalMove, Judgement, Ply, Review, winner_with_best_play};
pub use strength::{CASUAL_SLIP_PROBABILITY, Strength, UnknownStrength};
pub use table::{Counts, POSITION_NUMBERS, Table, table};
pub use value::{UnknownVerdict, Value, Verdict};
