//! Triad's match engine: the referee every other part trusts.
//!
//! A pure, deterministic state machine in the style of TigerBeetle's: no I/O, no clock, no
//! randomness but a configured seed. A [`Command`] comes in an [`Envelope`] with the acting
//! [`Address`] and the time; [`Engine::execute`] returns the [`Event`]s it caused, or an
//! [`EngineError`] with a stable code and nothing changed. The state is a fold of the events:
//! [`Engine::replay`] of the log equals the live engine.
//!
//! It covers how matches come to be (challenges with consent, the open queue, the
//! computer), play with the A2A protocol's `seq`, forfeits, aborts of free matches and
//! rematches, the on-chain SOS contract's timeouts, money in a double-entry [`Ledger`] with
//! that contract's payouts, and the hall of fame with Glicko-2 ratings.
//!
//! The doc comments name the designs Triad was first built against by what they are (the Sui
//! contract, the Shoehive tutorial, the SOS contract, the A2A protocol, the HTML5 canvas
//! game); `docs/origins.md` in the repository says what each was.
//!
//! ```
//! use triad_engine::{Address, Command, Config, Engine, Envelope};
//! use triad_rules::{GameKind, Mark};
//!
//! let owner = Address::from_bytes([9; 32]);
//! let (alice, bob) = (Address::from_bytes([1; 32]), Address::from_bytes([2; 32]));
//! let mut engine = Engine::new(Config::new(owner));
//! let mut run = |who, now, command| engine.execute(&Envelope::new(who, now, command)).unwrap();
//!
//! const ETHER: u128 = 1_000_000_000_000_000_000;
//! run(owner, 0, Command::Deposit { to: alice, amount: ETHER });
//! run(owner, 0, Command::Deposit { to: bob, amount: ETHER });
//! // The SOS contract's play(): the first player waits, the second starts the game.
//! let queued = run(alice, 1, Command::JoinQueue { game: GameKind::Sos, stake: ETHER });
//! let id = queued.events[0].match_id().unwrap();
//! run(bob, 2, Command::JoinQueue { game: GameKind::Sos, stake: ETHER });
//! for (seq, who, cell, mark) in [(1, alice, 0, Mark::S), (2, bob, 4, Mark::O)] {
//!     run(who, 3, Command::Move { match_id: id, seq, cell, mark, signed: None });
//! }
//! let last = run(alice, 4, Command::Move { match_id: id, seq: 3, cell: 8, mark: Mark::S, signed: None });
//! assert_eq!(engine.balance(alice), ETHER / 10 * 18); // 1.8 ether to the winner
//! assert_eq!(engine.reserve(), ETHER / 10 * 2);
//! ```
#![warn(missing_docs)]

mod address;
pub mod amount;
mod command;
mod config;
mod contract_event;
mod engine;
mod error;
mod event;
mod ledger;
mod matches;
pub mod notation;
mod stats;
pub mod tournament;

pub use address::{Address, IdempotencyKey, InvalidAddress, MatchId};
pub use amount::{AmountError, parse_amount};
pub use command::{Command, Envelope, Level, MoveSignature, StartChoice, Terms};
pub use config::{Bps, Config, PayoutRules, RematchStart, Settlement, share};
pub use contract_event::ContractEvent;
pub use engine::{Duplicate, Engine, Key, Keys, Ranking, Receipt};
pub use error::EngineError;
pub use event::{
    Account, Applied, EndReason, Event, EventKind, Origin, Seat, Transfer, TransferReason,
};
pub use ledger::Ledger;
pub use matches::{Challenge, Deadline, DeadlineKind, Match, MatchResult, Phase, RatingChange};
pub use stats::{PlayerStats, PuzzleRecord, Rating};
pub use tournament::{
    Entry, Format, Tournament, TournamentId, TournamentPhase, TournamentRules, TournamentSpec,
};
