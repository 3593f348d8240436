//! Money: the owner's deposits, players' withdrawals, and collecting the house reserve.

use crate::engine::{Batch, Engine};
use crate::{Account, Address, EngineError, TransferReason};

impl Engine {
    pub(in crate::engine) fn deposit(
        &mut self,
        actor: Address,
        to: Address,
        amount: u128,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        if actor != self.config.owner {
            return Err(EngineError::OwnerOnly);
        }
        if to.is_zero() {
            return Err(EngineError::ZeroAddress);
        }
        if amount == 0 {
            return Err(EngineError::ZeroAmount);
        }
        if !self.ledger.can_credit(Account::Player(to), amount) {
            return Err(EngineError::AmountTooLarge);
        }
        self.transfer(
            b,
            None,
            Account::Outside,
            Account::Player(to),
            amount,
            TransferReason::Deposit,
        );
        Ok(())
    }

    pub(in crate::engine) fn withdraw(
        &mut self,
        actor: Address,
        amount: u128,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        if amount == 0 {
            return Err(EngineError::ZeroAmount);
        }
        let available = self.balance(actor);
        if available < amount {
            return Err(EngineError::InsufficientBalance {
                needed: amount,
                available,
            });
        }
        self.transfer(
            b,
            None,
            Account::Player(actor),
            Account::Outside,
            amount,
            TransferReason::Withdrawal,
        );
        Ok(())
    }

    pub(in crate::engine) fn collect(
        &mut self,
        actor: Address,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        if actor != self.config.owner {
            return Err(EngineError::OwnerOnly);
        }
        let reserve = self.reserve();
        if reserve == 0 {
            return Err(EngineError::NothingToCollect);
        }
        // No overflow check: the reserve is already held inside, and any balance plus the
        // reserve is at most the total held, which fits in a u128.
        self.transfer(
            b,
            None,
            Account::Reserve,
            Account::Player(actor),
            reserve,
            TransferReason::Collect,
        );
        Ok(())
    }
}
