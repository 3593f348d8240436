//! Prints the Solidity interface the SDK generates from the contract: what
//! `cargo stylus export-abi` runs, and `cargo run -p cryptosos --features export-abi` locally.
//! `tests/interface.rs` checks that `I*.sol` declares the same functions and errors.

fn main() {
    stylus_sdk::abi::export::print_from_args::<cryptosos::CryptoSos>();
}
