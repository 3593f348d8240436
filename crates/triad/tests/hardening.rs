//! Hardening against a hostile internet: one module per class of attack (RELIABILITY.md,
//! "Threat model" and "Attacks, bounds and tests"). Each test drives the real `triad serve`
//! binary over real sockets, and each failed on the code before its fix.

#[path = "hardening/sessions.rs"]
mod sessions;
mod support;
