//! A Stylus host for native contract tests: one contract, its storage, everybody's ether,
//! the block's time, and calls that behave as transactions do on chain.
//!
//! The SDK's own `TestVM` neither moves ether nor undoes a reverted call. [`Chain`] does
//! both, so a test can assert every payout as a balance change and every refusal as "nothing
//! happened":
//!
//! - a call carries a sender and a value; the value moves from the sender to the contract
//!   before the contract runs;
//! - the contract's ether transfers (`transfer_eth`) move balances and are recorded, and an
//!   address marked with [`Chain::refuse_ether`] makes them fail, as a contract without a
//!   `receive` function would;
//! - a call that reverts leaves storage, balances and logs exactly as they were.
//!
//! Calls enter through the contract's ABI router (`stylus_sdk::abi::router_entrypoint`), so
//! selectors, argument decoding, payable checks and custom errors behave as on chain.
//!
//! ```
//! use chain_host::{Chain, ether};
//! use stylus_sdk::alloy_primitives::Address;
//!
//! let alice = Address::repeat_byte(0xa1);
//! // A "contract" that accepts anything and returns its calldata.
//! let chain = Chain::new(Address::repeat_byte(0xc0), |input, _vm| Ok(input));
//! chain.set_balance(alice, ether(5));
//! let receipt = chain.call(alice, ether(1), vec![1, 2, 3]);
//! assert_eq!(receipt.result, Ok(vec![1, 2, 3]));
//! assert_eq!(chain.balance(alice), ether(4));
//! assert_eq!(chain.balance(chain.contract()), ether(1));
//! ```

pub mod solidity;

use std::{
    cell::RefCell,
    collections::{HashMap, HashSet},
    fmt,
    rc::Rc,
    slice,
};

use alloy_primitives::{keccak256, Address, B256, U256};
use alloy_sol_types::{SolError, SolEvent};
use stylus_sdk::{
    host::VM,
    stylus_core::{
        AccountAccess, BlockAccess, CalldataAccess, ChainAccess, CryptographyAccess, Host,
        MemoryAccess, MessageAccess, MeteringAccess, RawLogAccess, StorageAccess, UnsafeCallAccess,
        UnsafeDeploymentAccess,
    },
    ArbResult,
};

/// One ether in wei.
pub const ETHER: U256 = U256::from_limbs([1_000_000_000_000_000_000, 0, 0, 0]);

/// `n` ether in wei.
#[must_use]
pub fn ether(n: u64) -> U256 {
    ETHER * U256::from(n)
}

/// `n` thousandths of an ether in wei (the SOS contract's 0.9 ether is `milliether(900)`).
#[must_use]
pub fn milliether(n: u64) -> U256 {
    U256::from(n) * U256::from(1_000_000_000_000_000u64)
}

/// A contract's entry point: calldata in, return data or revert data out. For a Stylus
/// contract `C` this is `stylus_sdk::abi::router_entrypoint::<C, C>`.
pub type Entry = fn(Vec<u8>, VM) -> ArbResult;

/// An event log emitted by the contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Log {
    /// The topics, the event's signature hash first (for non-anonymous events).
    pub topics: Vec<B256>,
    /// The ABI-encoded non-indexed fields.
    pub data: Vec<u8>,
}

impl Log {
    /// Decodes the log as event `E`, or `None` if it is another event.
    #[must_use]
    pub fn decode<E: SolEvent>(&self) -> Option<E> {
        if self.topics.first() != Some(&E::SIGNATURE_HASH) {
            return None;
        }
        E::decode_raw_log(self.topics.iter().copied(), &self.data).ok()
    }
}

/// Ether the contract sent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The recipient.
    pub to: Address,
    /// The amount in wei.
    pub amount: U256,
}

/// What a call did.
#[derive(Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The return data, or the revert data if the call reverted.
    pub result: ArbResult,
    /// The logs emitted (none if the call reverted).
    pub logs: Vec<Log>,
    /// The ether the contract sent (none if the call reverted).
    pub transfers: Vec<Transfer>,
}

impl Receipt {
    /// Whether the call succeeded.
    #[must_use]
    pub fn succeeded(&self) -> bool {
        self.result.is_ok()
    }

    /// The return data; panics, showing the revert data, if the call reverted.
    #[track_caller]
    #[must_use]
    pub fn output(&self) -> &[u8] {
        match &self.result {
            Ok(data) => data,
            Err(data) => panic!("the call reverted with 0x{}", hex(data)),
        }
    }

    /// Panics, showing the revert data, if the call reverted.
    #[track_caller]
    pub fn assert_ok(&self) {
        let _ = self.output();
    }

    /// The revert data; panics if the call succeeded.
    #[track_caller]
    #[must_use]
    pub fn revert_data(&self) -> &[u8] {
        match &self.result {
            Ok(_) => panic!("the call succeeded; a revert was expected"),
            Err(data) => data,
        }
    }

    /// Whether the call reverted with exactly the custom error `error`.
    #[must_use]
    pub fn reverted_with<E: SolError>(&self, error: &E) -> bool {
        matches!(&self.result, Err(data) if *data == error.abi_encode())
    }

    /// Every log that is an `E` event, decoded, in order.
    #[must_use]
    pub fn events<E: SolEvent>(&self) -> Vec<E> {
        self.logs.iter().filter_map(Log::decode::<E>).collect()
    }
}

impl fmt::Debug for Receipt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (status, data) = match &self.result {
            Ok(data) => ("ok", data),
            Err(data) => ("reverted", data),
        };
        f.debug_struct("Receipt")
            .field("status", &status)
            .field("data", &format_args!("0x{}", hex(data)))
            .field("logs", &self.logs)
            .field("transfers", &self.transfers)
            .finish()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The world: one contract's storage and code, everybody's balances, the block.
#[derive(Clone, Debug, Default)]
struct World {
    storage: HashMap<U256, B256>,
    balances: HashMap<Address, U256>,
}

#[derive(Debug)]
struct State {
    entry: Entry,
    contract: Address,
    world: World,
    refusers: HashSet<Address>,
    timestamp: u64,
    block_number: u64,
    /// The call being executed.
    sender: Address,
    value: U256,
    calldata: Vec<u8>,
    logs: Vec<Log>,
    transfers: Vec<Transfer>,
    /// What the last outgoing call returned (always empty: recipients are plain accounts).
    return_data: Vec<u8>,
    /// What the contract wrote as its result.
    result: Vec<u8>,
    in_call: bool,
}

/// A one-contract chain. Cloning gives another handle to the same chain (the SDK's `VM`
/// holds one while the contract runs).
#[derive(Clone)]
pub struct Chain(Rc<RefCell<State>>);

impl fmt::Debug for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0.borrow();
        f.debug_struct("Chain")
            .field("contract", &s.contract)
            .field("timestamp", &s.timestamp)
            .field("balances", &s.world.balances)
            .finish_non_exhaustive()
    }
}

impl Chain {
    /// A chain holding one contract at `contract`, entered through `entry`, with empty
    /// storage, no balances and block time 0.
    #[must_use]
    pub fn new(contract: Address, entry: Entry) -> Chain {
        Chain(Rc::new(RefCell::new(State {
            entry,
            contract,
            world: World::default(),
            refusers: HashSet::new(),
            timestamp: 0,
            block_number: 0,
            sender: Address::ZERO,
            value: U256::ZERO,
            calldata: Vec::new(),
            logs: Vec::new(),
            transfers: Vec::new(),
            return_data: Vec::new(),
            result: Vec::new(),
            in_call: false,
        })))
    }

    /// The contract's address.
    #[must_use]
    pub fn contract(&self) -> Address {
        self.0.borrow().contract
    }

    /// Sets an account's balance.
    pub fn set_balance(&self, account: Address, amount: U256) {
        self.0.borrow_mut().world.balances.insert(account, amount);
    }

    /// An account's balance (the contract's included).
    #[must_use]
    pub fn balance(&self, account: Address) -> U256 {
        self.0
            .borrow()
            .world
            .balances
            .get(&account)
            .copied()
            .unwrap_or_default()
    }

    /// Makes `account` refuse (or accept again) ether sent by the contract, as a contract
    /// account whose `receive` reverts would.
    pub fn refuse_ether(&self, account: Address, refuse: bool) {
        let mut s = self.0.borrow_mut();
        if refuse {
            s.refusers.insert(account);
        } else {
            s.refusers.remove(&account);
        }
    }

    /// The block timestamp, in seconds.
    #[must_use]
    pub fn time(&self) -> u64 {
        self.0.borrow().timestamp
    }

    /// Sets the block timestamp (it may not go backwards) and moves to the next block.
    pub fn set_time(&self, timestamp: u64) {
        let mut s = self.0.borrow_mut();
        assert!(timestamp >= s.timestamp, "block time never goes backwards");
        s.timestamp = timestamp;
        s.block_number += 1;
    }

    /// Moves the block timestamp `seconds` ahead.
    pub fn advance(&self, seconds: u64) {
        let now = self.time();
        self.set_time(now + seconds);
    }

    /// A storage word of the contract (for tests that inspect the layout).
    #[must_use]
    pub fn storage(&self, key: U256) -> B256 {
        self.0
            .borrow()
            .world
            .storage
            .get(&key)
            .copied()
            .unwrap_or_default()
    }

    /// Runs the contract's constructor (the SDK's constructor selector, then `args`), sent
    /// by `deployer` with no value, as a deployment transaction would.
    pub fn deploy(&self, deployer: Address, args: &[u8]) -> Receipt {
        let mut calldata = stylus_sdk::abi::CONSTRUCTOR_SELECTOR.to_be_bytes().to_vec();
        calldata.extend_from_slice(args);
        self.call(deployer, U256::ZERO, calldata)
    }

    /// Sends a transaction from `sender` carrying `value` wei and `calldata` to the
    /// contract. If the contract reverts, nothing it did remains.
    ///
    /// # Panics
    /// If `sender` cannot pay `value` (a transaction that could not be sent), or if called
    /// from inside a call.
    pub fn call(&self, sender: Address, value: U256, calldata: Vec<u8>) -> Receipt {
        let (entry, before) = {
            let mut s = self.0.borrow_mut();
            assert!(!s.in_call, "chain-host runs one call at a time");
            let before = s.world.clone();
            let contract = s.contract;
            let balance = s.world.balances.get(&sender).copied().unwrap_or_default();
            assert!(
                balance >= value,
                "{sender} cannot send {value} wei: its balance is {balance}"
            );
            s.world.balances.insert(sender, balance - value);
            *s.world.balances.entry(contract).or_default() += value;
            s.sender = sender;
            s.value = value;
            s.calldata.clone_from(&calldata);
            s.logs.clear();
            s.transfers.clear();
            s.return_data.clear();
            s.result.clear();
            s.in_call = true;
            (s.entry, before)
        };
        let vm = VM {
            host: Box::new(self.clone()),
        };
        let result = entry(calldata, vm);
        let mut s = self.0.borrow_mut();
        s.in_call = false;
        if result.is_err() {
            s.world = before;
            s.logs.clear();
            s.transfers.clear();
        }
        Receipt {
            result,
            logs: std::mem::take(&mut s.logs),
            transfers: std::mem::take(&mut s.transfers),
        }
    }
}

impl Host for Chain {}

impl CryptographyAccess for Chain {
    fn native_keccak256(&self, input: &[u8]) -> B256 {
        keccak256(input)
    }
}

impl CalldataAccess for Chain {
    fn read_args(&self, len: usize) -> Vec<u8> {
        let s = self.0.borrow();
        s.calldata[..len.min(s.calldata.len())].to_vec()
    }

    fn read_return_data(&self, offset: usize, size: Option<usize>) -> Vec<u8> {
        let s = self.0.borrow();
        let data = &s.return_data;
        let start = offset.min(data.len());
        let end = size.map_or(data.len(), |size| (start + size).min(data.len()));
        data[start..end].to_vec()
    }

    fn return_data_size(&self) -> usize {
        self.0.borrow().return_data.len()
    }

    fn write_result(&self, data: &[u8]) {
        self.0.borrow_mut().result = data.to_vec();
    }
}

unsafe impl UnsafeDeploymentAccess for Chain {
    unsafe fn create1(
        &self,
        _code: *const u8,
        _code_len: usize,
        _endowment: *const u8,
        _contract: *mut u8,
        _revert_data_len: *mut usize,
    ) {
        panic!("chain-host: the contracts under test deploy no contracts");
    }

    unsafe fn create2(
        &self,
        _code: *const u8,
        _code_len: usize,
        _endowment: *const u8,
        _salt: *const u8,
        _contract: *mut u8,
        _revert_data_len: *mut usize,
    ) {
        panic!("chain-host: the contracts under test deploy no contracts");
    }
}

impl StorageAccess for Chain {
    fn storage_load_bytes32(&self, key: U256) -> B256 {
        self.storage(key)
    }

    unsafe fn storage_cache_bytes32(&self, key: U256, value: B256) {
        self.0.borrow_mut().world.storage.insert(key, value);
    }

    fn flush_cache(&self, _clear: bool) {}
}

unsafe impl UnsafeCallAccess for Chain {
    /// A plain ether transfer from the contract (no calldata): it succeeds unless the
    /// recipient refuses ether or the contract cannot pay.
    unsafe fn call_contract(
        &self,
        to: *const u8,
        data: *const u8,
        data_len: usize,
        value: *const u8,
        _gas: u64,
        outs_len: &mut usize,
    ) -> u8 {
        // SAFETY: the SDK passes a 20-byte address, `data_len` bytes of calldata and a
        // 32-byte big-endian value, all valid for the duration of the call.
        let (to, data, value) = unsafe {
            (
                Address::from_slice(slice::from_raw_parts(to, 20)),
                slice::from_raw_parts(data, data_len),
                U256::from_be_slice(slice::from_raw_parts(value, 32)),
            )
        };
        assert!(
            data.is_empty(),
            "chain-host: the contracts under test call no contracts, they only send ether"
        );
        let mut s = self.0.borrow_mut();
        s.return_data.clear();
        *outs_len = 0;
        let contract = s.contract;
        let available = s.world.balances.get(&contract).copied().unwrap_or_default();
        if s.refusers.contains(&to) || available < value {
            return 1;
        }
        s.world.balances.insert(contract, available - value);
        *s.world.balances.entry(to).or_default() += value;
        s.transfers.push(Transfer { to, amount: value });
        0
    }

    unsafe fn delegate_call_contract(
        &self,
        _to: *const u8,
        _data: *const u8,
        _data_len: usize,
        _gas: u64,
        _outs_len: &mut usize,
    ) -> u8 {
        panic!("chain-host: the contracts under test make no delegate calls");
    }

    unsafe fn static_call_contract(
        &self,
        _to: *const u8,
        _data: *const u8,
        _data_len: usize,
        _gas: u64,
        _outs_len: &mut usize,
    ) -> u8 {
        panic!("chain-host: the contracts under test make no static calls");
    }
}

impl BlockAccess for Chain {
    fn block_basefee(&self) -> U256 {
        U256::ZERO
    }

    fn block_coinbase(&self) -> Address {
        Address::ZERO
    }

    fn block_number(&self) -> u64 {
        self.0.borrow().block_number
    }

    fn block_timestamp(&self) -> u64 {
        self.0.borrow().timestamp
    }

    fn block_gas_limit(&self) -> u64 {
        30_000_000
    }
}

impl ChainAccess for Chain {
    fn chain_id(&self) -> u64 {
        // Arbitrum Sepolia.
        421_614
    }
}

impl AccountAccess for Chain {
    fn balance(&self, account: Address) -> U256 {
        Chain::balance(self, account)
    }

    fn contract_address(&self) -> Address {
        self.contract()
    }

    fn code(&self, _account: Address) -> Vec<u8> {
        Vec::new()
    }

    fn code_size(&self, _account: Address) -> usize {
        0
    }

    fn code_hash(&self, _account: Address) -> B256 {
        keccak256([])
    }
}

impl MemoryAccess for Chain {
    fn pay_for_memory_grow(&self, _pages: u16) {}
}

impl MessageAccess for Chain {
    fn msg_sender(&self) -> Address {
        self.0.borrow().sender
    }

    fn msg_reentrant(&self) -> bool {
        false
    }

    fn msg_value(&self) -> U256 {
        self.0.borrow().value
    }

    /// Every call is a transaction sent by an account, so the origin is the sender.
    fn tx_origin(&self) -> Address {
        self.0.borrow().sender
    }
}

impl MeteringAccess for Chain {
    fn evm_gas_left(&self) -> u64 {
        u64::MAX
    }

    fn evm_ink_left(&self) -> u64 {
        u64::MAX
    }

    fn tx_gas_price(&self) -> U256 {
        U256::ZERO
    }

    fn tx_ink_price(&self) -> u32 {
        1
    }
}

impl RawLogAccess for Chain {
    fn emit_log(&self, input: &[u8], num_topics: usize) {
        let (topics, data) = input.split_at(num_topics * 32);
        self.0.borrow_mut().logs.push(Log {
            topics: topics.chunks(32).map(B256::from_slice).collect(),
            data: data.to_vec(),
        });
    }

    fn raw_log(&self, topics: &[B256], data: &[u8]) -> Result<(), &'static str> {
        if topics.len() > 4 {
            return Err("a log has at most four topics");
        }
        self.0.borrow_mut().logs.push(Log {
            topics: topics.to_vec(),
            data: data.to_vec(),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stylus_sdk::call::transfer::transfer_eth;

    const ALICE: Address = Address::repeat_byte(0xa1);
    const BOB: Address = Address::repeat_byte(0xb0);

    /// A contract that pays 1 ether to the address in its calldata, logs, writes a storage
    /// word, and reverts if the calldata's last byte is 1 (after doing all of that).
    fn payer(input: Vec<u8>, vm: VM) -> ArbResult {
        let to = Address::from_slice(&input[..20]);
        unsafe { vm.storage_cache_bytes32(U256::from(7), B256::repeat_byte(9)) };
        vm.raw_log(&[B256::repeat_byte(1)], b"paid").unwrap();
        transfer_eth(&vm, to, ETHER)?;
        if input[20] == 1 {
            return Err(b"undo".to_vec());
        }
        Ok(Vec::new())
    }

    fn args(to: Address, revert: bool) -> Vec<u8> {
        let mut data = to.to_vec();
        data.push(u8::from(revert));
        data
    }

    fn chain() -> Chain {
        let chain = Chain::new(Address::repeat_byte(0xc0), payer);
        chain.set_balance(ALICE, ether(3));
        chain
    }

    #[test]
    fn a_call_moves_its_value_and_records_transfers_and_logs() {
        let chain = chain();
        let receipt = chain.call(ALICE, ether(2), args(BOB, false));
        assert!(receipt.succeeded());
        assert_eq!(chain.balance(ALICE), ether(1));
        assert_eq!(chain.balance(chain.contract()), ether(1));
        assert_eq!(chain.balance(BOB), ether(1));
        assert_eq!(
            receipt.transfers,
            [Transfer {
                to: BOB,
                amount: ETHER
            }]
        );
        assert_eq!(receipt.logs.len(), 1);
        assert_eq!(chain.storage(U256::from(7)), B256::repeat_byte(9));
    }

    #[test]
    fn a_reverted_call_leaves_nothing_behind() {
        let chain = chain();
        let receipt = chain.call(ALICE, ether(2), args(BOB, true));
        assert_eq!(receipt.result, Err(b"undo".to_vec()));
        assert!(receipt.logs.is_empty() && receipt.transfers.is_empty());
        assert_eq!(chain.balance(ALICE), ether(3));
        assert_eq!(chain.balance(BOB), U256::ZERO);
        assert_eq!(chain.balance(chain.contract()), U256::ZERO);
        assert_eq!(chain.storage(U256::from(7)), B256::ZERO);
    }

    #[test]
    fn a_refusing_recipient_makes_the_transfer_fail() {
        let chain = chain();
        chain.refuse_ether(BOB, true);
        let receipt = chain.call(ALICE, ether(1), args(BOB, false));
        assert!(!receipt.succeeded(), "transfer_eth's failure reverts");
        assert_eq!(chain.balance(ALICE), ether(3));
        chain.refuse_ether(BOB, false);
        assert!(chain.call(ALICE, ether(1), args(BOB, false)).succeeded());
        assert_eq!(chain.balance(BOB), ether(1));
    }

    #[test]
    fn the_contract_cannot_send_more_than_it_holds() {
        let chain = chain();
        let receipt = chain.call(ALICE, U256::ZERO, args(BOB, false));
        assert!(!receipt.succeeded());
        assert_eq!(chain.balance(BOB), U256::ZERO);
    }

    #[test]
    #[should_panic(expected = "cannot send")]
    fn a_sender_cannot_send_more_than_it_has() {
        let _ = chain().call(ALICE, ether(4), args(BOB, false));
    }

    #[test]
    fn time_moves_forward_only() {
        let chain = chain();
        chain.set_time(100);
        chain.advance(20);
        assert_eq!(chain.time(), 120);
        let back = std::panic::AssertUnwindSafe(|| chain.set_time(119));
        assert!(std::panic::catch_unwind(back).is_err());
    }
}
