//! The checked-in `ITicTacToe.sol` is the contract's interface: the same functions (with
//! the same mutability and return types), errors and events, with selectors and topics
//! computed from the file's own text.

mod common;

use std::{collections::BTreeSet, fmt};

use chain_host::{solidity::Interface, Chain};
use common::*;
use stylus_sdk::{
    abi::{GenerateAbi, Router},
    alloy_primitives::B256,
    alloy_sol_types::TopicList as _,
};
use tictactoe::TicTacToeContract;
use triad_rules::MoveError;

const FILE: &str = include_str!("../ITicTacToe.sol");

/// The Solidity interface the SDK generates from the contract (`cargo stylus export-abi`).
fn exported() -> String {
    struct Abi;
    impl fmt::Display for Abi {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            <TicTacToeContract as GenerateAbi>::fmt_abi(f)
        }
    }
    Abi.to_string()
}

fn file() -> Interface {
    Interface::parse(FILE).expect("ITicTacToe.sol parses")
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
    assert_eq!(file.structs, exported.structs, "exported:\n{text}");
    // The struct's fields, in order, as the SDK exports them.
    let fields = |text: &str| {
        let start = text.find("struct Board").expect("a Board struct");
        let open = start + text[start..].find('{').expect("a struct body");
        let close = open + text[open..].find('}').expect("a closed struct body");
        let body: String = text[open + 1..close]
            .lines()
            .filter(|l| !l.trim().starts_with("///"))
            .collect();
        body.split(';')
            .map(|f| f.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|f| !f.is_empty())
            .collect::<Vec<_>>()
    };
    assert_eq!(fields(FILE), fields(&text), "exported:\n{text}");
    let names: Vec<&str> = file.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "createBoard",
            "acceptBoard",
            "declineBoard",
            "playGame",
            "resign",
            "boardOf",
            "getBoard"
        ]
    );
}

#[test]
fn selectors_from_the_text_are_alloys_and_the_router_serves_exactly_them() {
    let file = file();
    let ours: BTreeSet<[u8; 4]> = file.functions.iter().map(|f| f.selector()).collect();
    let alloy: BTreeSet<[u8; 4]> = ITicTacToeCalls::SELECTORS.iter().copied().collect();
    assert_eq!(ours, alloy);
    let ours: BTreeSet<[u8; 4]> = file.errors.iter().map(|e| e.selector()).collect();
    let alloy: BTreeSet<[u8; 4]> = ITicTacToeErrors::SELECTORS.iter().copied().collect();
    assert_eq!(ours, alloy);

    let chain = Chain::new(CONTRACT, entry());
    let mut contract = TicTacToeContract::from(&chain);
    for f in &file.functions {
        let selector = u32::from_be_bytes(f.selector());
        assert!(
            <TicTacToeContract as Router<TicTacToeContract>>::route(&mut contract, selector, &[])
                .is_some(),
            "the router does not serve {}",
            f.signature()
        );
    }
    for signature in ["create_board(address)", "playGame(uint256)", "boardOf()"] {
        let selector = u32::from_be_bytes(chain_host::solidity::selector(signature));
        assert!(
            <TicTacToeContract as Router<TicTacToeContract>>::route(&mut contract, selector, &[])
                .is_none(),
            "the router serves {signature}, which the interface does not declare"
        );
    }
}

#[test]
fn event_topics_from_the_text_are_the_contracts() {
    use stylus_sdk::alloy_sol_types::SolEvent;
    let file = file();
    let contract: [(&str, B256, usize); 4] = [
        (
            tictactoe::BoardCreated::SIGNATURE,
            tictactoe::BoardCreated::SIGNATURE_HASH,
            <tictactoe::BoardCreated as SolEvent>::TopicList::COUNT,
        ),
        (
            tictactoe::BoardAccepted::SIGNATURE,
            tictactoe::BoardAccepted::SIGNATURE_HASH,
            <tictactoe::BoardAccepted as SolEvent>::TopicList::COUNT,
        ),
        (
            tictactoe::Played::SIGNATURE,
            tictactoe::Played::SIGNATURE_HASH,
            <tictactoe::Played as SolEvent>::TopicList::COUNT,
        ),
        (
            tictactoe::BoardClosed::SIGNATURE,
            tictactoe::BoardClosed::SIGNATURE_HASH,
            <tictactoe::BoardClosed as SolEvent>::TopicList::COUNT,
        ),
    ];
    assert_eq!(file.events.len(), contract.len());
    for (event, (signature, topic, topics)) in file.events.iter().zip(contract) {
        assert_eq!(event.signature(), signature);
        assert_eq!(event.topic(), topic, "{signature}");
        let indexed = event.indexed.iter().filter(|&&i| i).count();
        assert_eq!(indexed + 1, topics, "indexed fields of {signature}");
    }
}

#[test]
fn errors_0_to_3_are_the_sui_contracts_abort_codes_from_the_rules_crate() {
    let file = file();
    let mut codes = BTreeSet::new();
    for error in &file.errors {
        let code = error
            .code()
            .unwrap_or_else(|| panic!("{} documents no \"Code N:\"", error.name));
        assert!(codes.insert(code), "code {code} is used twice");
    }
    for rule in MoveError::ALL.into_iter().filter(|e| e.code() <= 3) {
        let error = file
            .errors
            .iter()
            .find(|e| e.snake_case_name() == rule.name())
            .unwrap_or_else(|| panic!("no error for {}", rule.name()));
        assert_eq!(error.code(), Some(rule.code()), "{}", error.name);
    }
    // The Sui contract's abort codes: 0 ended, 1 invalid position, 2 not your turn, 3 occupied.
    let first_four: Vec<&str> = file.errors[..4].iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        first_four,
        ["GameOver", "InvalidPosition", "NotYourTurn", "CellOccupied"]
    );
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
