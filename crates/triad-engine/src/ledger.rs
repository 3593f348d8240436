//! The double-entry ledger. Money is integer minor units; every movement is a transfer
//! between two accounts, and the total held inside Triad changes only by deposits and
//! withdrawals.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Account, Transfer};

/// Balances of every account but [`Account::Outside`], plus the running totals that the
/// conservation checks compare against.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// Non-zero balances only.
    balances: BTreeMap<Account, u64>,
    /// Everything ever deposited.
    deposited: u128,
    /// Everything ever withdrawn.
    withdrawn: u128,
}

impl Ledger {
    /// The balance of an account ([`Account::Outside`] has none: it is the world).
    #[must_use]
    pub fn balance(&self, account: Account) -> u64 {
        self.balances.get(&account).copied().unwrap_or(0)
    }

    /// Everything ever deposited.
    #[must_use]
    pub fn deposited(&self) -> u128 {
        self.deposited
    }

    /// Everything ever withdrawn.
    #[must_use]
    pub fn withdrawn(&self) -> u128 {
        self.withdrawn
    }

    /// What Triad holds in total: deposits less withdrawals.
    #[must_use]
    pub fn total_held(&self) -> u128 {
        self.deposited - self.withdrawn
    }

    /// Every account with a non-zero balance.
    pub fn accounts(&self) -> impl Iterator<Item = (Account, u64)> + '_ {
        self.balances.iter().map(|(a, b)| (*a, *b))
    }

    /// Whether `amount` can be credited to `account` without overflowing it or the total.
    #[must_use]
    pub fn can_credit(&self, account: Account, amount: u64) -> bool {
        self.balance(account).checked_add(amount).is_some()
            && u64::try_from(self.total_held() + u128::from(amount)).is_ok()
    }

    fn set(&mut self, account: Account, balance: u64) {
        if balance == 0 {
            self.balances.remove(&account);
        } else {
            self.balances.insert(account, balance);
        }
    }

    /// Applies a transfer. The engine validates every command before it emits a transfer,
    /// so a transfer that would overdraw an account is a bug, and panics.
    pub(crate) fn apply(&mut self, t: &Transfer) {
        assert!(t.amount > 0, "a transfer moves a positive amount");
        assert_ne!(t.from, t.to, "a transfer moves between two accounts");
        let touched_before = self.inside_sum(t);
        match t.from {
            Account::Outside => self.deposited += u128::from(t.amount),
            from => {
                let balance = self.balance(from);
                assert!(balance >= t.amount, "transfer would overdraw {from:?}");
                self.set(from, balance - t.amount);
            }
        }
        match t.to {
            Account::Outside => self.withdrawn += u128::from(t.amount),
            to => {
                let balance = self.balance(to).checked_add(t.amount);
                self.set(to, balance.expect("balances fit in u64"));
            }
        }
        // Conservation, checked on the two accounts touched: an inside-to-inside transfer
        // leaves their sum unchanged; a deposit or withdrawal changes it by exactly the
        // amount, and the running total with it.
        let touched_after = self.inside_sum(t);
        let amount = u128::from(t.amount);
        match (t.from, t.to) {
            (Account::Outside, _) => assert_eq!(touched_after, touched_before + amount),
            (_, Account::Outside) => assert_eq!(touched_after + amount, touched_before),
            _ => assert_eq!(touched_after, touched_before),
        }
        assert!(
            self.withdrawn <= self.deposited,
            "more withdrawn than deposited"
        );
    }

    fn inside_sum(&self, t: &Transfer) -> u128 {
        [t.from, t.to]
            .iter()
            .filter(|a| **a != Account::Outside)
            .map(|a| u128::from(self.balance(*a)))
            .sum()
    }

    /// Checks the whole ledger: the balances sum to deposits less withdrawals. O(accounts).
    ///
    /// # Errors
    /// A description of the first broken invariant.
    pub fn audit(&self) -> Result<(), String> {
        let sum: u128 = self.balances.values().map(|b| u128::from(*b)).sum();
        if sum != self.total_held() {
            return Err(format!(
                "balances sum to {sum} but deposits less withdrawals are {}",
                self.total_held()
            ));
        }
        if let Some((a, _)) = self.balances.iter().find(|(_, b)| **b == 0) {
            return Err(format!("zero balance kept for {a:?}"));
        }
        Ok(())
    }
}
