//! Emitting: each event is applied as it is emitted; transfers, escrow and the settlement of
//! a finished match are events too.

use arrayvec::ArrayVec;
use triad_rules::{CellSet, Player};

use crate::engine::{Batch, Engine};
use crate::{Account, Address, EndReason, Event, EventKind, MatchId, Transfer, TransferReason};

impl Engine {
    pub(in crate::engine) fn emit(&mut self, b: &mut Batch, kind: EventKind) {
        let event = Event {
            seq: self.next_seq,
            at_ms: b.now,
            kind,
            applied: None,
        };
        self.apply(&event);
        b.events.push(event);
    }

    pub(in crate::engine) fn transfer(
        &mut self,
        b: &mut Batch,
        match_id: Option<MatchId>,
        from: Account,
        to: Account,
        amount: u128,
        reason: TransferReason,
    ) {
        if amount == 0 {
            return;
        }
        self.emit(
            b,
            EventKind::Transferred {
                match_id,
                transfer: Transfer {
                    from,
                    to,
                    amount,
                    reason,
                },
            },
        );
    }

    pub(in crate::engine) fn escrow(
        &mut self,
        b: &mut Batch,
        id: MatchId,
        from: Address,
        stake: u128,
    ) {
        self.transfer(
            b,
            Some(id),
            Account::Player(from),
            Account::Escrow(id),
            stake,
            TransferReason::Stake,
        );
    }

    /// Ends a match and settles its escrow by the payout rules.
    pub(in crate::engine) fn finish(
        &mut self,
        b: &mut Batch,
        id: MatchId,
        reason: EndReason,
        winner: Option<Player>,
        cells: CellSet,
    ) {
        self.emit(
            b,
            EventKind::GameEnded {
                match_id: id,
                reason,
                winner,
                cells,
            },
        );
        let m = &self.matches[&id];
        let escrow = Account::Escrow(id);
        let pot = self.ledger.balance(escrow);
        let humans: ArrayVec<Address, 2> = m.participants();
        let winner_address = winner.and_then(|p| m.seat(p)).and_then(|s| s.address());
        let settlement = self.config.payouts.settle(reason, m.stake, pot);
        let mut pay: ArrayVec<(Address, u128, TransferReason), 2> = ArrayVec::new();
        if reason.was_played() && reason != EndReason::Draw {
            if let Some(w) = winner_address {
                pay.push((w, settlement.to_winner, TransferReason::Payout));
            }
        } else {
            let why = if reason == EndReason::Draw {
                TransferReason::Payout
            } else {
                TransferReason::Refund
            };
            for &h in &humans {
                pay.push((h, settlement.to_each, why));
            }
        }
        let paid: u128 = pay.iter().map(|p| p.1).sum();
        assert!(
            paid <= pot,
            "match {id} pays out {paid} from a pot of {pot}"
        );
        for (to, amount, why) in pay {
            self.transfer(b, Some(id), escrow, Account::Player(to), amount, why);
        }
        self.transfer(
            b,
            Some(id),
            escrow,
            Account::Reserve,
            pot - paid,
            TransferReason::ReserveShare,
        );
        assert_eq!(self.ledger.balance(escrow), 0, "match {id} settled in full");
    }
}
