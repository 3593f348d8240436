//! The rules of tic-tac-toe and SOS on a 3x3 board.
//!
//! This crate is pure: no I/O, no clock, no randomness, no `std` (so on-chain contracts
//! can use it). Untrusted input is parsed once into a checked position; moves are small
//! `Copy` values and [`Game::play`] returns the next position or a typed [`MoveError`] with
//! a stable numeric code.
//!
//! The doc comments name the designs Triad was first built against by what they are (the Sui
//! contract, the Shoehive tutorial, the SOS contract, the A2A protocol, the HTML5 canvas
//! game); `docs/origins.md` in the repository says what each was.
//!
//! ```
//! use triad_rules::{AnyGame, CellSet, GameKind, Mark, Outcome, Player};
//!
//! // The SOS contract's worked example: from `O-SOOS--S`, the player to move places S in
//! // square 7 (cell 6) and wins.
//! let game = AnyGame::parse(GameKind::Sos, "O-SOOS--S").unwrap();
//! let (game, _) = game.play_as(game.turn(), 6, Mark::S).unwrap();
//! assert_eq!(
//!     game.outcome(),
//!     Some(Outcome::Win { winner: Player::First, cells: CellSet::from_cells(&[2, 4, 6]) })
//! );
//! assert_eq!(game.to_string(), "O-SOOSS-S");
//! ```
#![no_std]

mod board;
mod cell;
mod error;
mod game;
mod mark;

pub use board::Board;
pub use cell::{Cell, CellSet, InvalidCell, LINES};
pub use error::{MoveError, PositionError};
pub use game::{AnyGame, Game, GameKind, Move, Moves, Outcome, Sos, TicTacToe, UnknownGame};
pub use mark::{Mark, Player};
