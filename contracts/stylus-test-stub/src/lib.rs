//! An empty stand-in for the `stylus-test` crate, wired in by `[patch.crates-io]` in
//! `contracts/Cargo.toml`.
//!
//! `stylus-sdk`'s `stylus-test` feature does two things: it makes the SDK's `VM` hold a
//! `Box<dyn Host>` (so a contract runs natively against any host), and it pulls in the
//! `stylus-test` crate, whose `TestVM` depends on `alloy-provider` and `tokio` (and through
//! them `reqwest`, `hyper`, `rustls` and `aws-lc-sys`, a large C build) to fork state from an
//! RPC node. The SDK itself uses nothing from that crate outside its own unit tests.
//!
//! Triad's contract tests run on `chain-host` instead (a host that also moves ether and
//! rolls back reverted calls, which `TestVM` does not), so this stub keeps the first half of
//! the feature and drops the second: about 130 crates fewer to compile.
