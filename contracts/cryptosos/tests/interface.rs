//! The checked-in `ICryptoSOS.sol` is the contract's interface: the same functions (with
//! the same mutability and return types), errors and events, with selectors and topics
//! computed from the file's own text.

mod common;

use std::{collections::BTreeSet, fmt};

use chain_host::{solidity::Interface, Chain};
use common::*;
use cryptosos::CryptoSos;
use stylus_sdk::{
    abi::{GenerateAbi, Router},
    alloy_primitives::B256,
};
use triad_rules::MoveError;

const FILE: &str = include_str!("../ICryptoSOS.sol");

/// The Solidity interface the SDK generates from the contract (`cargo stylus export-abi`).
fn exported() -> String {
    struct Abi;
    impl fmt::Display for Abi {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            <CryptoSos as GenerateAbi>::fmt_abi(f)
        }
    }
    Abi.to_string()
}

fn file() -> Interface {
    Interface::parse(FILE).expect("ICryptoSOS.sol parses")
}

fn functions(i: &Interface) -> BTreeSet<String> {
    i.functions
        .iter()
        .map(|f| format!("{} {:?} -> {:?}", f.signature(), f.mutability, f.outputs))
        .collect()
}

fn errors(i: &Interface) -> BTreeSet<String> {
    i.errors.iter().map(|e| e.signature()).collect()
}

#[test]
fn the_file_declares_what_the_contract_exports() {
    let text = exported();
    let exported = Interface::parse(&text).expect("the exported interface parses");
    let file = file();
    assert_eq!(functions(&file), functions(&exported), "exported:\n{text}");
    assert_eq!(errors(&file), errors(&exported), "exported:\n{text}");
    // CryptoSOS's functions, and withdraw() for payouts an account refused.
    let names: Vec<&str> = file.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "play",
            "placeS",
            "placeO",
            "getGameState",
            "cancel",
            "ur2slow",
            "collectProfit",
            "getPlayerStats",
            "withdraw"
        ]
    );
}

#[test]
fn selectors_from_the_text_are_alloys_and_the_router_serves_exactly_them() {
    let file = file();
    let ours: BTreeSet<[u8; 4]> = file.functions.iter().map(|f| f.selector()).collect();
    let alloy: BTreeSet<[u8; 4]> = ICryptoSOSCalls::SELECTORS.iter().copied().collect();
    assert_eq!(ours, alloy);
    let ours: BTreeSet<[u8; 4]> = file.errors.iter().map(|e| e.selector()).collect();
    let alloy: BTreeSet<[u8; 4]> = ICryptoSOSErrors::SELECTORS.iter().copied().collect();
    assert_eq!(ours, alloy);

    let chain = Chain::new(CONTRACT, entry());
    let mut contract = CryptoSos::from(&chain);
    for f in &file.functions {
        let selector = u32::from_be_bytes(f.selector());
        assert!(
            <CryptoSos as Router<CryptoSos>>::route(&mut contract, selector, &[]).is_some(),
            "the router does not serve {}",
            f.signature()
        );
    }
    for signature in [
        "ur2Slow()",
        "place_s(uint8)",
        "getGameState(address)",
        "owner()",
    ] {
        let selector = u32::from_be_bytes(chain_host::solidity::selector(signature));
        assert!(
            <CryptoSos as Router<CryptoSos>>::route(&mut contract, selector, &[]).is_none(),
            "the router serves {signature}, which the interface does not declare"
        );
    }
}

#[test]
fn event_topics_from_the_text_are_the_contracts() {
    use stylus_sdk::alloy_sol_types::SolEvent;
    let file = file();
    let contract: [(&str, B256, usize); 3] = [
        (
            cryptosos::StartGame::SIGNATURE,
            cryptosos::StartGame::SIGNATURE_HASH,
            <cryptosos::StartGame as SolEvent>::TopicList::COUNT,
        ),
        (
            cryptosos::Move::SIGNATURE,
            cryptosos::Move::SIGNATURE_HASH,
            <cryptosos::Move as SolEvent>::TopicList::COUNT,
        ),
        (
            cryptosos::Win::SIGNATURE,
            cryptosos::Win::SIGNATURE_HASH,
            <cryptosos::Win as SolEvent>::TopicList::COUNT,
        ),
    ];
    use stylus_sdk::alloy_sol_types::TopicList as _;
    assert_eq!(file.events.len(), contract.len());
    for (event, (signature, topic, topics)) in file.events.iter().zip(contract) {
        assert_eq!(event.signature(), signature);
        assert_eq!(event.topic(), topic, "{signature}");
        let indexed = event.indexed.iter().filter(|&&i| i).count();
        assert_eq!(indexed + 1, topics, "indexed fields of {signature}");
    }
    // CryptoSOS's events exactly: no field is indexed.
    assert_eq!(
        file.events
            .iter()
            .map(|e| e.signature())
            .collect::<Vec<_>>(),
        [
            "StartGame(address,address)",
            "Move(uint8,uint8,address)",
            "Win(address)"
        ]
    );
    assert!(file.events.iter().all(|e| e.indexed.iter().all(|i| !i)));
}

#[test]
fn errors_carry_triads_stable_codes() {
    let file = file();
    let mut codes = BTreeSet::new();
    for error in &file.errors {
        let code = error
            .code()
            .unwrap_or_else(|| panic!("{} documents no \"Code N:\"", error.name));
        assert!(codes.insert(code), "code {code} is used twice");
    }
    // 0-3 are the Sui tic-tac-toe contract's move errors, decided by the rules crate.
    for rule in MoveError::ALL.into_iter().filter(|e| e.code() <= 3) {
        let error = file
            .errors
            .iter()
            .find(|e| e.snake_case_name() == rule.name())
            .unwrap_or_else(|| panic!("no error for {}", rule.name()));
        assert_eq!(error.code(), Some(rule.code()), "{}", error.name);
    }
}

#[test]
fn every_error_is_provoked_by_the_rules_tests() {
    let rules = include_str!("rules.rs");
    for error in file().errors {
        let name = &error.name;
        assert!(
            rules.contains(&format!("{name} {{")),
            "tests/rules.rs never expects {name}"
        );
    }
}
