//! The double-entry ledger. Money is integer minor units (`u128`); every movement is a
//! transfer between two accounts, and the total held inside Triad changes only by deposits
//! and withdrawals.
//!
//! Every sum is bounded by `u128::MAX`: a deposit is credited only if everything ever
//! deposited still fits ([`Ledger::can_credit`]), and since every balance and every sum of
//! balances is at most the total held, which is at most everything deposited, no balance,
//! pot or conservation sum can overflow. The checks use checked arithmetic anyway, and an
//! overflow there is a broken invariant (a panic), never a wrapped number.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Account, Transfer};

/// Balances of every account but [`Account::Outside`], plus the running totals that the
/// conservation checks compare against.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    /// Non-zero balances only.
    balances: BTreeMap<Account, u128>,
    /// Everything ever deposited.
    deposited: u128,
    /// Everything ever withdrawn.
    withdrawn: u128,
}

impl Ledger {
    /// The balance of an account ([`Account::Outside`] has none: it is the world).
    #[must_use]
    pub fn balance(&self, account: Account) -> u128 {
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
    pub fn accounts(&self) -> impl Iterator<Item = (Account, u128)> + '_ {
        self.balances.iter().map(|(a, b)| (*a, *b))
    }

    /// Whether `amount` can be deposited to `account`: the account, the total held and
    /// everything ever deposited all stay within `u128::MAX`. (The last implies the other
    /// two, as a balance is at most the total held, which is at most the deposits; each is
    /// checked so the answer does not rest on that.)
    #[must_use]
    pub fn can_credit(&self, account: Account, amount: u128) -> bool {
        self.balance(account).checked_add(amount).is_some()
            && self.total_held().checked_add(amount).is_some()
            && self.deposited.checked_add(amount).is_some()
    }

    fn set(&mut self, account: Account, balance: u128) {
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
            Account::Outside => {
                self.deposited = self
                    .deposited
                    .checked_add(t.amount)
                    .expect("deposits fit in u128 (checked by can_credit)");
            }
            from => {
                let balance = self.balance(from);
                assert!(balance >= t.amount, "transfer would overdraw {from:?}");
                self.set(from, balance - t.amount);
            }
        }
        match t.to {
            Account::Outside => {
                self.withdrawn = self
                    .withdrawn
                    .checked_add(t.amount)
                    .expect("withdrawals are at most deposits");
            }
            to => {
                let balance = self.balance(to).checked_add(t.amount);
                self.set(to, balance.expect("a balance is at most the total held"));
            }
        }
        // Conservation, checked on the two accounts touched: an inside-to-inside transfer
        // leaves their sum unchanged; a deposit or withdrawal changes it by exactly the
        // amount, and the running total with it.
        let touched_after = self.inside_sum(t);
        let amount = t.amount;
        match (t.from, t.to) {
            (Account::Outside, _) => {
                assert_eq!(Some(touched_after), touched_before.checked_add(amount));
            }
            (_, Account::Outside) => {
                assert_eq!(touched_after.checked_add(amount), Some(touched_before));
            }
            _ => assert_eq!(touched_after, touched_before),
        }
        assert!(
            self.withdrawn <= self.deposited,
            "more withdrawn than deposited"
        );
    }

    /// The sum of the transfer's inside accounts, which is at most the total held.
    fn inside_sum(&self, t: &Transfer) -> u128 {
        [t.from, t.to]
            .iter()
            .filter(|a| **a != Account::Outside)
            .try_fold(0u128, |sum, a| sum.checked_add(self.balance(*a)))
            .expect("two balances sum to at most the total held")
    }

    /// Checks the whole ledger: the balances sum to deposits less withdrawals. O(accounts).
    ///
    /// # Errors
    /// A description of the first broken invariant.
    pub fn audit(&self) -> Result<(), String> {
        let Some(sum) = self
            .balances
            .values()
            .try_fold(0u128, |sum, b| sum.checked_add(*b))
        else {
            return Err("balances sum to more than u128::MAX".to_owned());
        };
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
