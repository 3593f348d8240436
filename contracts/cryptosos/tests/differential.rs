//! The Stylus contract against an independent Solidity CryptoSOS (`reference/`), on
//! thousands of seeded random call sequences.
//!
//! The Solidity contract runs in revm from the bytecode solc compiled (`reference/build`,
//! reproduced byte for byte by the test command); the Stylus contract runs natively on
//! `chain-host`. Every step sends the same call, from the same account, with the same value,
//! at the same block time, to both, and requires the same success or failure, the same
//! return or revert data, the same events, and the same balance of every account afterwards.
//!
//! Two of the players are contract accounts (`Refuser`) that can refuse ether, so the
//! "payout kept for the opponent, withdrawn later" path is compared too. Calls include
//! malformed calldata, unknown selectors and ether sent to functions that take none.
//!
//! `TRIAD_DIFF_SEQUENCES` and `TRIAD_DIFF_SEED` override the number of sequences and the
//! seed; a mismatch prints the seed, the sequence and every step that led to it.

mod common;

use std::collections::{BTreeMap, HashMap};

use common::{
    entry, getGameStateCall, getPlayerStatsCall, placeOCall, placeSCall, Move as MoveEvent,
    SolCall, StartGame, Win, ETHER,
};
use revm::{
    context::TxEnv,
    context_interface::{
        result::{ExecutionResult, Output},
        ContextTr,
    },
    database::{CacheDB, EmptyDB},
    handler::{MainnetContext, MainnetEvm},
    primitives::{hardfork::SpecId, Address, Bytes, TxKind, B256, U256},
    state::AccountInfo,
    Context, DatabaseRef, ExecuteCommitEvm, MainBuilder, MainContext,
};
use stylus_sdk::alloy_sol_types::sol;

const CRYPTOSOS_BIN: &str = include_str!("../../reference/build/CryptoSOS.bin");
const REFUSER_BIN: &str = include_str!("../../reference/build/Refuser.bin");
const START: u64 = 1_700_000_000;

sol! {
    function forward(address target, bytes data, uint256 value) external;
    function setRefusing(bool refuse) external;
}

const OWNER: Address = Address::repeat_byte(0x0e);
/// Sends the transactions that drive the refusers in revm.
const DRIVER: Address = Address::repeat_byte(0xd0);
const EOAS: [Address; 6] = [
    Address::repeat_byte(0x11),
    Address::repeat_byte(0x22),
    Address::repeat_byte(0x33),
    Address::repeat_byte(0x44),
    Address::repeat_byte(0x55),
    Address::repeat_byte(0x66),
];

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize].clone()
    }
}

/// What a call did, in terms both sides can produce.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Outcome {
    ok: bool,
    data: Vec<u8>,
    logs: Vec<(Vec<B256>, Vec<u8>)>,
}

type Evm = MainnetEvm<MainnetContext<CacheDB<EmptyDB>>>;

/// The Solidity CryptoSOS in revm.
struct Solidity {
    evm: Evm,
    contract: Address,
}

impl Solidity {
    fn transact(
        &mut self,
        caller: Address,
        kind: TxKind,
        value: U256,
        data: Vec<u8>,
    ) -> ExecutionResult {
        let tx = TxEnv {
            caller,
            kind,
            value,
            data: Bytes::from(data),
            gas_limit: 10_000_000,
            gas_price: 0,
            ..TxEnv::default()
        };
        self.evm
            .transact_commit(tx)
            .expect("revm accepts the transaction")
    }

    fn deploy(&mut self, from: Address, hex_code: &str, value: U256) -> Address {
        let code = stylus_sdk::alloy_primitives::hex::decode(hex_code.trim())
            .expect("the .bin file is hex");
        match self.transact(from, TxKind::Create, value, code) {
            ExecutionResult::Success {
                output: Output::Create(_, Some(address)),
                ..
            } => address,
            other => panic!("deployment failed: {other:?}"),
        }
    }

    fn set_time(&mut self, time: u64) {
        self.evm.ctx.block.timestamp = U256::from(time);
        self.evm.ctx.block.number += U256::from(1);
    }

    fn balance(&self, account: Address) -> U256 {
        self.evm
            .ctx
            .db()
            .basic_ref(account)
            .expect("the in-memory database answers")
            .map_or(U256::ZERO, |info| info.balance)
    }

    /// Sends `data` with `value` to the contract from `actor`: directly from an account, or
    /// through `forward` for a refuser (which pays from its own balance).
    fn call(&mut self, actor: Actor, value: U256, data: Vec<u8>) -> Outcome {
        let result = match actor {
            Actor::Account(from) => self.transact(from, TxKind::Call(self.contract), value, data),
            Actor::Refuser(refuser) => {
                let call = forwardCall {
                    target: self.contract,
                    data: data.into(),
                    value,
                };
                self.transact(DRIVER, TxKind::Call(refuser), U256::ZERO, call.abi_encode())
            }
        };
        match result {
            ExecutionResult::Success {
                output: Output::Call(output),
                logs,
                ..
            } => Outcome {
                ok: true,
                data: output.to_vec(),
                logs: logs
                    .into_iter()
                    .map(|log| {
                        assert_eq!(log.address, self.contract, "only CryptoSOS logs");
                        (log.data.topics().to_vec(), log.data.data.to_vec())
                    })
                    .collect(),
            },
            ExecutionResult::Revert { output, .. } => Outcome {
                ok: false,
                data: output.to_vec(),
                logs: Vec::new(),
            },
            other => panic!("the Solidity contract halted: {other:?}"),
        }
    }
}

/// Who sends a call: an account, or a refuser contract account (driven through `forward`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Actor {
    Account(Address),
    Refuser(Address),
}

impl Actor {
    fn address(self) -> Address {
        match self {
            Actor::Account(a) | Actor::Refuser(a) => a,
        }
    }
}

/// Both contracts, with the same accounts and balances.
struct Pair {
    solidity: Solidity,
    stylus: chain_host::Chain,
    actors: Vec<Actor>,
    refusers: Vec<Address>,
    refusing: HashMap<Address, bool>,
    time: u64,
}

impl Pair {
    fn new() -> Pair {
        let mut db = CacheDB::new(EmptyDB::default());
        for account in EOAS.iter().chain([&OWNER]) {
            db.insert_account_info(*account, AccountInfo::from_balance(ETHER * U256::from(100)));
        }
        // The driver funds the refusers with 100 ether each.
        db.insert_account_info(DRIVER, AccountInfo::from_balance(ETHER * U256::from(200)));
        let evm = Context::mainnet()
            .with_db(db)
            .modify_cfg_chained(|cfg| {
                cfg.spec = SpecId::CANCUN;
                cfg.disable_nonce_check = true;
            })
            .modify_block_chained(|block| {
                block.basefee = 0;
                block.timestamp = U256::from(START);
            })
            .build_mainnet();
        let mut solidity = Solidity {
            evm,
            contract: Address::ZERO,
        };
        solidity.contract = solidity.deploy(OWNER, CRYPTOSOS_BIN, U256::ZERO);
        let refusers: Vec<Address> = (0..2)
            .map(|_| solidity.deploy(DRIVER, REFUSER_BIN, ETHER * U256::from(100)))
            .collect();

        let stylus = chain_host::Chain::new(solidity.contract, entry());
        stylus.set_time(START);
        let mut actors: Vec<Actor> = vec![Actor::Account(OWNER)];
        actors.extend(EOAS.iter().map(|&a| Actor::Account(a)));
        actors.extend(refusers.iter().map(|&r| Actor::Refuser(r)));
        for actor in &actors {
            stylus.set_balance(actor.address(), solidity.balance(actor.address()));
        }
        for &refuser in &refusers {
            stylus.refuse_ether(refuser, true);
        }
        stylus.deploy(OWNER, &[]).assert_ok();
        Pair {
            solidity,
            stylus,
            actors,
            refusing: refusers.iter().map(|&r| (r, true)).collect(),
            refusers,
            time: START,
        }
    }

    fn advance(&mut self, seconds: u64) {
        self.time += seconds;
        self.stylus.set_time(self.time);
        self.solidity.set_time(self.time);
    }

    /// Makes a refuser accept or refuse ether on both sides.
    fn set_refusing(&mut self, refuser: Address, refuse: bool) {
        let call = setRefusingCall { refuse }.abi_encode();
        match self
            .solidity
            .transact(DRIVER, TxKind::Call(refuser), U256::ZERO, call)
        {
            ExecutionResult::Success { .. } => {}
            other => panic!("setRefusing failed: {other:?}"),
        }
        self.stylus.refuse_ether(refuser, refuse);
        self.refusing.insert(refuser, refuse);
    }

    /// Sends the call to both sides and checks that they agree; returns the outcome and the
    /// Stylus receipt.
    fn call(
        &mut self,
        actor: Actor,
        value: U256,
        data: Vec<u8>,
    ) -> Result<(Outcome, chain_host::Receipt), String> {
        let expected = self.solidity.call(actor, value, data.clone());
        let receipt = self.stylus.call(actor.address(), value, data);
        let actual = Outcome {
            ok: receipt.succeeded(),
            data: match &receipt.result {
                Ok(d) | Err(d) => d.clone(),
            },
            logs: receipt
                .logs
                .iter()
                .map(|l| (l.topics.clone(), l.data.clone()))
                .collect(),
        };
        if actual != expected {
            return Err(format!(
                "outcomes differ\n  solidity: {}\n  stylus:   {}",
                show(&expected),
                show(&actual)
            ));
        }
        if let Some(t) = receipt.transfers.iter().find(|t| t.to.is_zero()) {
            return Err(format!("the Stylus contract paid the zero address: {t:?}"));
        }
        let mut accounts: Vec<Address> = self.actors.iter().map(|a| a.address()).collect();
        accounts.push(self.solidity.contract);
        for account in accounts {
            let (s, r) = (self.solidity.balance(account), self.stylus.balance(account));
            if s != r {
                return Err(format!(
                    "balances of {account} differ: solidity {s}, stylus {r}"
                ));
            }
        }
        Ok((expected, receipt))
    }
}

fn show(o: &Outcome) -> String {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let logs: Vec<String> = o
        .logs
        .iter()
        .map(|(t, d)| {
            format!(
                "[{} | {}]",
                t.iter()
                    .map(|t| hex(t.as_slice()))
                    .collect::<Vec<_>>()
                    .join(","),
                hex(d)
            )
        })
        .collect();
    format!(
        "{} 0x{} logs {}",
        if o.ok { "ok" } else { "reverted" },
        hex(&o.data),
        logs.join(" ")
    )
}

/// What the test knows about the games, learnt from the (compared) events, to aim most
/// calls at something that can succeed.
#[derive(Default)]
struct Model {
    games: Vec<ModelGame>,
    game_of: HashMap<Address, usize>,
}

#[derive(Clone)]
struct ModelGame {
    first: Address,
    second: Option<Address>,
    squares: [bool; 9],
    marks: u8,
    over: bool,
}

impl ModelGame {
    fn to_move(&self) -> Option<Address> {
        if self.marks.is_multiple_of(2) {
            Some(self.first)
        } else {
            self.second
        }
    }

    fn last_mover(&self) -> Option<Address> {
        if self.marks == 0 {
            None
        } else if self.marks % 2 == 1 {
            Some(self.first)
        } else {
            self.second
        }
    }
}

impl Model {
    fn playing(&self) -> Vec<&ModelGame> {
        self.games
            .iter()
            .filter(|g| !g.over && g.second.is_some())
            .collect()
    }

    fn waiting(&self) -> Option<&ModelGame> {
        self.games.iter().find(|g| !g.over && g.second.is_none())
    }

    fn busy(&self, who: Address) -> bool {
        self.game_of.get(&who).is_some_and(|&g| !self.games[g].over)
    }

    /// Learns from a successful call by `who`.
    fn learn(&mut self, who: Address, kind: Kind, receipt: &chain_host::Receipt) {
        for start in receipt.events::<StartGame>() {
            if start._1.is_zero() {
                self.game_of.insert(start._0, self.games.len());
                self.games.push(ModelGame {
                    first: start._0,
                    second: None,
                    squares: [false; 9],
                    marks: 0,
                    over: false,
                });
            } else {
                let g = self.game_of[&start._0];
                self.games[g].second = Some(start._1);
                self.game_of.insert(start._1, g);
            }
        }
        for m in receipt.events::<MoveEvent>() {
            let g = &mut self.games[self.game_of[&m._2]];
            g.squares[usize::from(m._0 - 1)] = true;
            g.marks += 1;
        }
        let ended =
            !receipt.events::<Win>().is_empty() || matches!(kind, Kind::Cancel | Kind::Ur2slow);
        if ended {
            let g = self.game_of[&who];
            self.games[g].over = true;
        }
    }
}

/// The kinds of call, for the tally.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    Play,
    PlaceS,
    PlaceO,
    Ur2slow,
    Cancel,
    Collect,
    Withdraw,
    State,
    Stats,
    Junk,
}

/// One step: a pause, then a call.
struct Step {
    wait: u64,
    actor: Actor,
    kind: Kind,
    value: U256,
    data: Vec<u8>,
    /// Flip a refuser between refusing and accepting ether before the call.
    toggle: Option<Address>,
}

fn selector_of<C: SolCall>() -> Vec<u8> {
    C::SELECTOR.to_vec()
}

fn generate(rng: &mut Rng, pair: &Pair, model: &Model) -> Step {
    let wait = match rng.below(100) {
        0..=39 => 0,
        40..=59 => rng.below(6),
        60..=74 => 55 + rng.below(11),
        75..=84 => 115 + rng.below(11),
        _ => rng.below(300),
    };
    let actors = &pair.actors;
    let mut actor = rng.pick(actors);
    let find = |a: Address| {
        *actors
            .iter()
            .find(|x| x.address() == a)
            .expect("a known actor")
    };
    let toggle = (rng.chance(3)).then(|| rng.pick(&pair.refusers));
    let (kind, value, data) = match rng.below(100) {
        0..=17 => {
            let free: Vec<Actor> = actors
                .iter()
                .copied()
                .filter(|a| !model.busy(a.address()))
                .collect();
            if !free.is_empty() && rng.chance(75) {
                actor = rng.pick(&free);
            }
            let value = if rng.chance(90) {
                ETHER
            } else {
                rng.pick(&[
                    U256::ZERO,
                    U256::from(1),
                    ETHER - U256::from(1),
                    ETHER + U256::from(1),
                    ETHER * U256::from(2),
                ])
            };
            (Kind::Play, value, common::playCall {}.abi_encode())
        }
        18..=57 => {
            let playing = model.playing();
            let mut square = if rng.chance(10) {
                rng.pick(&[0u8, 10, 255])
            } else {
                1 + rng.below(9) as u8
            };
            if !playing.is_empty() && rng.chance(80) {
                let game = rng.pick(&playing);
                if let Some(mover) = game.to_move() {
                    actor = find(mover);
                }
                let empty: Vec<u8> = (1..=9u8)
                    .filter(|&s| !game.squares[usize::from(s - 1)])
                    .collect();
                if !empty.is_empty() && rng.chance(92) {
                    square = rng.pick(&empty);
                }
            }
            if rng.chance(50) {
                (Kind::PlaceS, U256::ZERO, placeSCall { square }.abi_encode())
            } else {
                (Kind::PlaceO, U256::ZERO, placeOCall { square }.abi_encode())
            }
        }
        58..=66 => {
            let playing = model.playing();
            if !playing.is_empty() && rng.chance(70) {
                let game = rng.pick(&playing);
                let claimer = game.last_mover().unwrap_or(if rng.chance(50) {
                    game.first
                } else {
                    game.second.expect("playing")
                });
                actor = find(claimer);
            }
            (
                Kind::Ur2slow,
                U256::ZERO,
                common::ur2slowCall {}.abi_encode(),
            )
        }
        67..=72 => {
            if let Some(waiting) = model.waiting() {
                if rng.chance(70) {
                    actor = find(waiting.first);
                }
            }
            (Kind::Cancel, U256::ZERO, common::cancelCall {}.abi_encode())
        }
        73..=77 => {
            if rng.chance(70) {
                actor = Actor::Account(OWNER);
            }
            (
                Kind::Collect,
                U256::ZERO,
                common::collectProfitCall {}.abi_encode(),
            )
        }
        78..=82 => {
            if rng.chance(60) {
                actor = Actor::Refuser(rng.pick(&pair.refusers));
            }
            (
                Kind::Withdraw,
                U256::ZERO,
                common::withdrawCall {}.abi_encode(),
            )
        }
        83..=87 => (Kind::State, U256::ZERO, getGameStateCall {}.abi_encode()),
        88..=91 => {
            let player = if rng.chance(85) {
                rng.pick(actors).address()
            } else {
                Address::repeat_byte(0x99)
            };
            (
                Kind::Stats,
                U256::ZERO,
                getPlayerStatsCall { player }.abi_encode(),
            )
        }
        _ => {
            let (value, data) = junk(rng, actors);
            (Kind::Junk, value, data)
        }
    };
    Step {
        wait,
        actor,
        kind,
        value,
        data,
        toggle,
    }
}

/// Calldata and value that no honest client sends.
fn junk(rng: &mut Rng, actors: &[Actor]) -> (U256, Vec<u8>) {
    let word = |n: u64| U256::from(n).to_be_bytes::<32>().to_vec();
    match rng.below(8) {
        // A function that takes no payment, with a payment.
        0 => {
            let player = rng.pick(actors).address();
            let data = rng.pick(&[
                placeSCall { square: 5 }.abi_encode(),
                common::cancelCall {}.abi_encode(),
                common::ur2slowCall {}.abi_encode(),
                common::withdrawCall {}.abi_encode(),
                common::collectProfitCall {}.abi_encode(),
                getGameStateCall {}.abi_encode(),
                getPlayerStatsCall { player }.abi_encode(),
            ]);
            (U256::from(1 + rng.below(ETHER.to::<u64>())), data)
        }
        // An unknown selector, with or without arguments.
        1 => {
            let mut data = (rng.next() as u32).to_be_bytes().to_vec();
            if rng.chance(50) {
                data.extend(word(rng.below(10)));
            }
            (U256::ZERO, data)
        }
        // No calldata, or less than a selector, with or without ether.
        2 => {
            let data = vec![0xab; rng.below(4) as usize];
            (rng.pick(&[U256::ZERO, ETHER]), data)
        }
        // A move whose argument is cut short.
        3 => {
            let mut data = selector_of::<placeSCall>();
            data.extend(vec![0; rng.below(32) as usize]);
            (U256::ZERO, data)
        }
        // A move whose uint8 argument has high bits set.
        4 => {
            let mut data = selector_of::<placeOCall>();
            data.extend(word(rng.pick(&[256, 257, 261, 1 << 40])));
            (U256::ZERO, data)
        }
        // A valid call with trailing bytes.
        5 => {
            let square = 1 + rng.below(9) as u8;
            let mut data = rng.pick(&[
                common::playCall {}.abi_encode(),
                placeSCall { square }.abi_encode(),
                getGameStateCall {}.abi_encode(),
            ]);
            data.extend(vec![0x01; 1 + rng.below(40) as usize]);
            let value = if data.starts_with(&common::playCall::SELECTOR) {
                ETHER
            } else {
                U256::ZERO
            };
            (value, data)
        }
        // An address argument with dirty high bytes.
        6 => {
            let mut data = selector_of::<getPlayerStatsCall>();
            let mut arg = [0u8; 32];
            arg[12..].copy_from_slice(rng.pick(actors).address().as_slice());
            arg[0] = 1;
            data.extend(arg);
            (U256::ZERO, data)
        }
        // play() with a payment but calldata of another function's selector length only.
        _ => (ETHER, selector_of::<common::playCall>()),
    }
}

/// What every sequence together must have reached, so the generator cannot quietly stop
/// exercising a path.
#[derive(Default)]
struct Tally {
    calls: BTreeMap<(Kind, String), u64>,
}

impl Tally {
    fn record(&mut self, kind: Kind, outcome: &Outcome, receipt: &chain_host::Receipt) {
        let label = if outcome.ok {
            let wins = receipt.events::<Win>();
            match (kind, wins.first()) {
                (Kind::PlaceS | Kind::PlaceO, Some(w)) if w._0.is_zero() => "tie".to_string(),
                (Kind::PlaceS | Kind::PlaceO, Some(_)) => "win".to_string(),
                (Kind::Ur2slow, Some(_)) => "claim".to_string(),
                (Kind::Ur2slow, None) => "abort".to_string(),
                _ => "ok".to_string(),
            }
        } else if !outcome.data.is_empty() {
            error_name(&outcome.data)
        } else {
            "revert without data".to_string()
        };
        *self.calls.entry((kind, label)).or_default() += 1;
    }

    /// How many calls of any of `kinds` ended as `label`.
    fn count(&self, kinds: &[Kind], label: &str) -> u64 {
        kinds
            .iter()
            .filter_map(|&k| self.calls.get(&(k, label.to_string())))
            .sum()
    }
}

/// The name of the interface's custom error that `data` encodes.
fn error_name(data: &[u8]) -> String {
    use stylus_sdk::alloy_sol_types::SolInterface;
    match common::ICryptoSOS::ICryptoSOSErrors::abi_decode(data) {
        Ok(error) => format!("{error:?}")
            .split('(')
            .next()
            .unwrap_or_default()
            .to_string(),
        Err(_) => format!(
            "undecodable revert 0x{}",
            stylus_sdk::alloy_primitives::hex::encode(data)
        ),
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn stylus_and_solidity_agree_on_random_call_sequences() {
    let sequences = env_u64("TRIAD_DIFF_SEQUENCES", 2_000);
    let seed = env_u64("TRIAD_DIFF_SEED", 0x7121_ad05);
    let started = std::time::Instant::now();
    let mut tally = Tally::default();
    let mut steps_run = 0u64;
    for sequence in 0..sequences {
        let mut rng = Rng(seed ^ sequence.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let mut pair = Pair::new();
        let mut model = Model::default();
        let mut trace: Vec<String> = Vec::new();
        let steps = 60 + rng.below(80);
        let fail = |trace: &[String], step: u64, message: &str| -> ! {
            panic!(
                "sequence {sequence} (TRIAD_DIFF_SEED={seed}), step {step}: {message}\nsteps:\n  {}",
                trace.join("\n  ")
            )
        };
        for step in 0..steps {
            let s = generate(&mut rng, &pair, &model);
            if let Some(refuser) = s.toggle {
                let refuse = !pair.refusing[&refuser];
                pair.set_refusing(refuser, refuse);
                trace.push(format!("{refuser} refusing={refuse}"));
            }
            pair.advance(s.wait);
            trace.push(format!(
                "+{}s {:?} {:?} value {} data 0x{}",
                s.wait,
                s.actor,
                s.kind,
                s.value,
                s.data
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            ));
            match pair.call(s.actor, s.value, s.data) {
                Ok((outcome, receipt)) => {
                    tally.record(s.kind, &outcome, &receipt);
                    if outcome.ok {
                        model.learn(s.actor.address(), s.kind, &receipt);
                    }
                }
                Err(message) => fail(&trace, step, &message),
            }
            steps_run += 1;
        }
        // Every player's board and hall-of-fame entry, as each side reports them.
        for actor in pair.actors.clone() {
            for data in [
                getGameStateCall {}.abi_encode(),
                getPlayerStatsCall {
                    player: actor.address(),
                }
                .abi_encode(),
            ] {
                if let Err(message) = pair.call(actor, U256::ZERO, data) {
                    fail(&trace, steps, &format!("final views: {message}"));
                }
            }
        }
    }
    let elapsed = started.elapsed();
    println!(
        "{sequences} sequences, {steps_run} calls compared in {:.1} s",
        elapsed.as_secs_f64()
    );
    for ((kind, label), n) in &tally.calls {
        println!("{kind:>9?} {label:<22} {n:>7}");
    }
    if sequences >= 500 {
        // Every ending and every error a sequence can reach was reached.
        const PLACE: &[Kind] = &[Kind::PlaceS, Kind::PlaceO];
        for (kinds, label) in [
            (&[Kind::Play][..], "ok"),
            (PLACE, "win"),
            (PLACE, "tie"),
            (&[Kind::Ur2slow][..], "claim"),
            (&[Kind::Ur2slow][..], "abort"),
            (&[Kind::Cancel][..], "ok"),
            (&[Kind::Collect][..], "ok"),
            (&[Kind::Withdraw][..], "ok"),
            (&[Kind::Withdraw][..], "TransferFailed"),
            (&[Kind::Play][..], "WrongStake"),
            (&[Kind::Play][..], "SelfPlay"),
            (&[Kind::Play][..], "AlreadyInGame"),
            (PLACE, "NotYourTurn"),
            (PLACE, "InvalidPosition"),
            (PLACE, "CellOccupied"),
            (PLACE, "NotAPlayer"),
            (PLACE, "NotInPlay"),
            (PLACE, "GameOver"),
            (PLACE, "TransferFailed"),
            (&[Kind::Ur2slow][..], "NotLastMover"),
            (&[Kind::Ur2slow][..], "DeadlineNotReached"),
            (&[Kind::Cancel][..], "WaitNotOver"),
            (&[Kind::Cancel][..], "NotWaiting"),
            (&[Kind::Cancel][..], "TransferFailed"),
            (&[Kind::Collect][..], "OwnerOnly"),
            (&[Kind::Collect][..], "NothingToCollect"),
            (&[Kind::Withdraw][..], "NothingToWithdraw"),
            (&[Kind::Junk][..], "revert without data"),
        ] {
            assert!(
                tally.count(kinds, label) > 0,
                "no sequence reached {kinds:?} {label}; the generator needs attention"
            );
        }
    }
}
