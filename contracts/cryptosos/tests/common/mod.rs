//! What the CryptoSOS tests share: the contract on a `chain-host` chain, players with
//! ether, and calls encoded from the checked-in interface file.
// Each test file uses a different part of this module.
#![allow(dead_code, unreachable_pub, unused_imports)]

use std::collections::HashMap;

pub use chain_host::{ether, milliether, Chain, Receipt, ETHER};
use cryptosos::CryptoSos;
pub use stylus_sdk::alloy_primitives::{Address, U256};
pub use stylus_sdk::alloy_sol_types::{SolCall, SolError, SolEvent};

// The calls, events and errors, generated from the interface file the contract is checked
// against (tests/interface.rs).
stylus_sdk::alloy_sol_types::sol!(
    #![sol(all_derives)]
    "ICryptoSOS.sol"
);
pub use ICryptoSOS::*;

/// The deployer.
pub const OWNER: Address = Address::repeat_byte(0x0e);
/// Players.
pub const ALICE: Address = Address::repeat_byte(0xa1);
pub const BOB: Address = Address::repeat_byte(0xb0);
pub const CAROL: Address = Address::repeat_byte(0xca);
pub const DAVE: Address = Address::repeat_byte(0xda);
/// Someone who never plays.
pub const EVE: Address = Address::repeat_byte(0xee);
/// Where the contract lives.
pub const CONTRACT: Address = Address::repeat_byte(0xc5);
/// The block time of the deployment.
pub const START: u64 = 1_700_000_000;

/// The contract's ABI entry point, as the chain calls it.
pub fn entry() -> chain_host::Entry {
    stylus_sdk::abi::router_entrypoint::<CryptoSos, CryptoSos>
}

/// A deployed CryptoSOS with everyone holding 100 ether.
pub struct Table {
    pub chain: Chain,
}

impl Table {
    pub fn new() -> Table {
        let chain = Chain::new(CONTRACT, entry());
        chain.set_time(START);
        for who in [OWNER, ALICE, BOB, CAROL, DAVE, EVE] {
            chain.set_balance(who, ether(100));
        }
        chain.deploy(OWNER, &[]).assert_ok();
        Table { chain }
    }

    /// Sends `call` from `from` with `value`.
    pub fn send<C: SolCall>(&self, from: Address, value: U256, call: C) -> Receipt {
        self.chain.call(from, value, call.abi_encode())
    }

    pub fn play(&self, who: Address) -> Receipt {
        self.send(who, ETHER, playCall {})
    }

    pub fn place_s(&self, who: Address, square: u8) -> Receipt {
        self.send(who, U256::ZERO, placeSCall { square })
    }

    pub fn place_o(&self, who: Address, square: u8) -> Receipt {
        self.send(who, U256::ZERO, placeOCall { square })
    }

    pub fn cancel(&self, who: Address) -> Receipt {
        self.send(who, U256::ZERO, cancelCall {})
    }

    pub fn ur2slow(&self, who: Address) -> Receipt {
        self.send(who, U256::ZERO, ur2slowCall {})
    }

    pub fn collect(&self, who: Address) -> Receipt {
        self.send(who, U256::ZERO, collectProfitCall {})
    }

    pub fn withdraw(&self, who: Address) -> Receipt {
        self.send(who, U256::ZERO, withdrawCall {})
    }

    /// `getGameState()` as `who` sees it.
    pub fn state(&self, who: Address) -> String {
        let receipt = self.send(who, U256::ZERO, getGameStateCall {});
        getGameStateCall::abi_decode_returns(receipt.output()).unwrap()
    }

    /// `getPlayerStats(player)`: (wins, games).
    pub fn stats(&self, player: Address) -> (u32, u32) {
        let receipt = self.send(EVE, U256::ZERO, getPlayerStatsCall { player });
        let r = getPlayerStatsCall::abi_decode_returns(receipt.output()).unwrap();
        (r.wins, r.games)
    }

    /// ALICE waits, BOB joins: a game in play, ALICE to move.
    pub fn started(&self) {
        self.play(ALICE).assert_ok();
        self.play(BOB).assert_ok();
    }

    /// Plays `moves` alternately, ALICE first: (square, 'S' or 'O').
    pub fn moves(&self, moves: &[(u8, char)]) -> Vec<Receipt> {
        moves
            .iter()
            .enumerate()
            .map(|(i, &(square, mark))| {
                let who = if i % 2 == 0 { ALICE } else { BOB };
                if mark == 'S' {
                    self.place_s(who, square)
                } else {
                    self.place_o(who, square)
                }
            })
            .collect()
    }

    pub fn balance(&self, who: Address) -> U256 {
        self.chain.balance(who)
    }

    /// Records balances, to assert how a call moved them.
    pub fn watch(&self) -> Watch<'_> {
        let accounts = [OWNER, ALICE, BOB, CAROL, DAVE, EVE, CONTRACT];
        Watch {
            table: self,
            before: accounts.iter().map(|&a| (a, self.balance(a))).collect(),
        }
    }
}

/// Balances at one moment.
pub struct Watch<'a> {
    table: &'a Table,
    before: HashMap<Address, U256>,
}

impl Watch<'_> {
    /// Asserts that the balances changed by exactly `changes` (in wei, signed), and the
    /// balances of every other account did not change.
    #[track_caller]
    pub fn assert_changed(&self, changes: &[(Address, i128)]) {
        for (&account, &before) in &self.before {
            let expected = changes
                .iter()
                .filter(|(a, _)| *a == account)
                .map(|(_, d)| *d)
                .sum::<i128>();
            let after = self.table.balance(account);
            let actual = if after >= before {
                i128::try_from(after - before).unwrap()
            } else {
                -i128::try_from(before - after).unwrap()
            };
            assert_eq!(
                actual, expected,
                "balance change of {account}: {actual} wei, expected {expected} wei"
            );
        }
    }

    /// Asserts that no balance changed.
    #[track_caller]
    pub fn assert_unchanged(&self) {
        self.assert_changed(&[]);
    }
}

/// `n` thousandths of an ether, as a signed wei amount.
pub fn milli(n: i64) -> i128 {
    i128::from(n) * 1_000_000_000_000_000
}

/// Asserts that `receipt` reverted with exactly `error`.
#[track_caller]
pub fn assert_error<E: SolError + std::fmt::Debug>(receipt: &Receipt, error: E) {
    assert!(
        receipt.reverted_with(&error),
        "expected {error:?} ({}), got {receipt:?}",
        E::SIGNATURE
    );
}

/// The decoded events of type `E`.
pub fn events<E: SolEvent>(receipt: &Receipt) -> Vec<E> {
    receipt.events::<E>()
}
