//! The A2A tic-tac-toe protocol that Triad's agents speak, with its rules made real.
//!
//! In that protocol, two AI agents play tic-tac-toe by sending each other app actions —
//! `propose`, `accept`, `move`, `result` — and the rules are enforced only by each agent reading
//! markdown; the winner declares the result. This crate keeps that wire format exactly and
//! gives it teeth:
//!
//! - [`App`] and [`Manifest`]: the app `tic-tac-toe` at version 0.3.0 with its four
//!   [`Action`]s (the A2A protocol's front matter), and an `sos` app on the same protocol
//!   (roles `first` and `second`, marks `S` and `O`).
//! - [`Message`]: the four payloads — `seq`, `replyTo`, `position`, `mark`, a 9-string
//!   `board`, `outcome`, `winner`, `reason` — decoded strictly ([`Message::decode`],
//!   [`decode_data`]) into typed values with a typed [`ProtocolError`] for anything
//!   malformed (stable codes 220+, or the rules' 0-5; never a panic), and encoded in the
//!   protocol's JSON shapes ([`Message::payload_json`]). An optional `gameId` lets the same two
//!   agents play several games.
//! - [`Game`]: one game as one agent sees it, applying the A2A protocol's rules: a `seq`
//!   already seen is ignored; nobody acts out of turn; a board that is not the local board plus
//!   the move ends the game with `result {"outcome":"abort","reason":"state-conflict"}`;
//!   whoever makes the last move declares the win or draw, and the other side checks it.
//! - [`check_move`] and [`check_result`]: the same checks for a referee. Triad's server
//!   runs them on every message it relays, against its engine's board.
//! - [`envelope`]: a signature over each message with the sender's Ed25519 key
//!   (triad-identity), so nobody can speak for another agent.
//!
//! The crate is pure: no I/O, no clock, no randomness.
//!
//! ```
//! use triad_protocol::{App, Ending, Game, Message, Step};
//! use triad_rules::{Mark, Player};
//!
//! // The protocol's example game: Alice (X) challenges Bob (O); X wins with the diagonal 0-4-8.
//! let (mut alice, propose) = Game::propose(App::TicTacToe, Player::First, None);
//! assert_eq!(propose.payload_json(App::TicTacToe), r#"{"seq":0,"role":"X"}"#);
//! let Message::Propose(proposal) = &propose else { unreachable!() };
//! let (mut bob, accept) = Game::accept(App::TicTacToe, proposal);
//! assert_eq!(accept.payload_json(App::TicTacToe), r#"{"seq":0,"role":"O"}"#);
//! alice.receive(&accept).unwrap();
//!
//! let mut last = Vec::new();
//! for (cell, mark) in [(4, Mark::X), (1, Mark::O), (0, Mark::X), (2, Mark::O), (8, Mark::X)] {
//!     let (mover, other) = if mark == Mark::X { (&mut alice, &mut bob) } else { (&mut bob, &mut alice) };
//!     last = mover.play(cell, mark).unwrap();
//!     for message in &last {
//!         other.receive(message).unwrap();
//!     }
//! }
//! assert_eq!(
//!     last[0].payload_json(App::TicTacToe),
//!     r#"{"seq":5,"replyTo":4,"position":8,"mark":"X","board":["X","O","O","","X","","","","X"]}"#
//! );
//! assert_eq!(last[1].payload_json(App::TicTacToe), r#"{"outcome":"win","winner":"X"}"#);
//! assert_eq!(bob.ending(), Some(&Ending::Win { winner: Player::First }));
//! ```
#![warn(missing_docs)]

mod app;
pub mod envelope;
mod error;
mod game;
mod message;

pub use app::{Action, ActionInfo, App, Manifest, PROTOCOL_VERSION};
pub use envelope::Signed;
pub use error::ProtocolError;
pub use game::{
    Ending, Game, MAX_PENDING, Side, Step, board_of, check_move, check_result, describe_position,
};
pub use message::{
    Accept, Board, EMPTY_BOARD, GameId, GameResult, MAX_MESSAGE_BYTES, Message, Move, Outcome,
    Payload, Propose, STATE_CONFLICT, board_string, decode_data, decode_data_json, whole_numbers,
};
