//! The server's tests, one module a capability, in one test binary: as a binary each, they
//! compiled the harness and linked the whole server eighteen times (92 s of a cold build on
//! two cores, against 50 s as one; ARCHITECTURE.md, "`xtask`"). Run one capability's with
//! its module as the filter: `cargo test -p triad-server --test server api::`.

mod common;

mod a2a;
mod api;
mod apps;
mod auth;
mod cluster;
mod errors;
mod layers;
mod mcp;
mod notation;
mod profiles;
mod puzzles;
mod review;
mod security;
mod storage;
mod system;
mod tournaments;
mod transcript;
mod web;
