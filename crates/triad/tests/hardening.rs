//! Hardening against a hostile internet: one module per class of attack (RELIABILITY.md,
//! "Threat model" and "Attacks, bounds and tests"). Each test drives the real `triad serve`
//! binary over real sockets, and each failed on the code before its fix.

#[path = "hardening/bounds.rs"]
mod bounds;
#[path = "hardening/consent.rs"]
mod consent;
#[path = "hardening/engine.rs"]
mod engine;
#[path = "hardening/sessions.rs"]
mod sessions;
mod support;

#[path = "hardening/exactness.rs"]
mod exactness;
