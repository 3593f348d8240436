//! The three events of the on-chain SOS contract (CryptoSOS) that Triad's staked SOS queue
//! reproduces, derived exactly from the engine's events.

use triad_rules::{GameKind, Mark};

use crate::{Address, EndReason, Engine, Event, EventKind, Origin, Seat};

/// One of CryptoSOS's events.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ContractEvent {
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
    /// The contract event an engine event corresponds to, for SOS matches from the queue
    /// (the contract's `play()`), or `None`. Unlike the contract's reference solution, `Move`
    /// carries the real mark, and a tie emits `Win(0)`. A cancel emits nothing, as in the
    /// contract.
    ///
    /// The match must be known to this engine (the event applied).
    #[must_use]
    pub fn contract_event(&self, event: &Event) -> Option<ContractEvent> {
        let m = self.match_(event.match_id()?)?;
        if m.game() != GameKind::Sos || m.origin != Origin::Queue {
            return None;
        }
        match event.kind {
            EventKind::Queued { player, .. } => {
                Some(ContractEvent::StartGame(player, Address::ZERO))
            }
            EventKind::GameStarted { seats, .. } => Some(ContractEvent::StartGame(
                address(seats[0]),
                address(seats[1]),
            )),
            EventKind::Moved { cell, mark, by, .. } => {
                let code = match mark {
                    Mark::S => 1,
                    Mark::O => 2,
                    Mark::X => unreachable!("SOS has no X"),
                };
                Some(ContractEvent::Move(cell.square(), code, address(by)))
            }
            EventKind::GameEnded { reason, winner, .. } => match reason {
                EndReason::Win | EndReason::Forfeit | EndReason::Timeout => {
                    let seat = m.seat(winner?)?;
                    Some(ContractEvent::Win(address(seat)))
                }
                EndReason::Draw => Some(ContractEvent::Win(Address::ZERO)),
                _ => None,
            },
            _ => None,
        }
    }
}
