//! Seed 3's three contract events, derived exactly from the engine's events.

use triad_rules::{GameKind, Mark};

use crate::{Address, EndReason, Engine, Event, EventKind, Origin, Seat};

/// One of CryptoSOS's events.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Seed3Event {
    /// `StartGame(p1, p2)`: with `p2` the zero address while `p1` waits.
    StartGame(Address, Address),
    /// `Move(square 1-9, 1 for S or 2 for O, player)`.
    Move(u8, u8, Address),
    /// `Win(winner)`, the zero address on a tie.
    Win(Address),
}

fn address(seat: Seat) -> Address {
    seat.address().unwrap_or(Address::ZERO)
}

impl Engine {
    /// The seed-3 event an engine event corresponds to, for SOS matches from the queue
    /// (seed 3's `play()`), or `None`. Unlike seed 3's reference solution, `Move` carries
    /// the real mark, and a tie emits `Win(0)`. A cancel emits nothing, as in seed 3.
    ///
    /// The match must be known to this engine (the event applied).
    #[must_use]
    pub fn seed3_event(&self, event: &Event) -> Option<Seed3Event> {
        let m = self.match_(event.match_id()?)?;
        if m.game() != GameKind::Sos || m.origin != Origin::Queue {
            return None;
        }
        match event.kind {
            EventKind::Queued { player, .. } => Some(Seed3Event::StartGame(player, Address::ZERO)),
            EventKind::GameStarted { seats, .. } => {
                Some(Seed3Event::StartGame(address(seats[0]), address(seats[1])))
            }
            EventKind::Moved { cell, mark, by, .. } => {
                let code = match mark {
                    Mark::S => 1,
                    Mark::O => 2,
                    Mark::X => unreachable!("SOS has no X"),
                };
                Some(Seed3Event::Move(cell.square(), code, address(by)))
            }
            EventKind::GameEnded { reason, winner, .. } => match reason {
                EndReason::Win | EndReason::Forfeit | EndReason::Timeout => {
                    let seat = m.seat(winner?)?;
                    Some(Seed3Event::Win(address(seat)))
                }
                EndReason::Draw => Some(Seed3Event::Win(Address::ZERO)),
                _ => None,
            },
            _ => None,
        }
    }
}
