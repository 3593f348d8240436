//! Triad player identity: Ed25519 keys, their Sui-style addresses, key files, and
//! the pure half of challenge-response login.
//!
//! A player *is* an Ed25519 key. Their address is the key's Sui address,
//! `0x` + hex(BLAKE2b-256(`0x00` || public key)) ([`address_of`]), so the same
//! key can hold a Sui account and a Triad seat. This crate does no I/O beyond
//! reading and writing key files: the server owns HTTP, storage and the clock and
//! passes the time in.
//!
//! # Logging in
//!
//! 1. The client sends `POST /api/auth/challenge {"public_key": "<64 hex>"}`. The
//!    server answers `{"challenge_id", "message", "expires_at"}`, where `message`
//!    is a rendered [`LoginMessage`] naming the server's domain, the key's
//!    address, a fresh [`generate_nonce`] and an expiry at most
//!    [`MAX_CHALLENGE_LIFETIME_MS`] ahead.
//! 2. The client signs the UTF-8 bytes of `message`, unchanged, either with plain
//!    Ed25519 ([`sign_ed25519`]) or with a Sui wallet's `signPersonalMessage`.
//! 3. The client sends `POST /api/auth/login {"challenge_id", "public_key",
//!    "signature", "scheme"}` with `scheme` `"ed25519"` (the default) or
//!    `"sui-personal-message"`; the server answers `{"token", "address",
//!    "expires_at"}`.
//!
//! The request and response bodies are the server's (`triad-server`'s `api::auth`, which
//! documents them in its OpenAPI document). A server handling step 3 should:
//!
//! * look the challenge up by id and check the request's `public_key` is the one
//!   the challenge was issued for;
//! * call [`LoginMessage::verify`], which checks the time window, that the key's
//!   address is the message's, and the signature ([`Scheme::verify`]);
//! * consume the challenge atomically, on any attempt and not only a successful
//!   one, so that a replay is refused;
//! * report failures with [`AuthError::code`] and the error's message.
//!
//! # Example
//!
//! ```
//! use rand::rand_core::UnwrapErr;
//! use rand::rngs::SysRng;
//! use triad_identity::{
//!     KeyFile, LoginMessage, MAX_CHALLENGE_LIFETIME_MS, Scheme, address_of, generate_nonce,
//!     parse_public_key, sign_ed25519,
//! };
//!
//! // The operating system's generator (rand's `sys_rng` feature); it panics in
//! // the unlikely event the OS cannot supply randomness.
//! let mut rng = UnwrapErr(SysRng);
//!
//! // Client: `triad keygen` (then `key.save(&KeyFile::default_path()?, false)`).
//! let key = KeyFile::generate(&mut rng);
//! let public_key = key.public_key_hex();
//!
//! // Server, on POST /api/auth/challenge.
//! let now_ms = 1_767_225_600_000;
//! let verifying_key = parse_public_key(&public_key)?;
//! let challenge = LoginMessage::new(
//!     "triad.example",
//!     address_of(&verifying_key),
//!     generate_nonce(&mut rng),
//!     now_ms,
//!     now_ms + MAX_CHALLENGE_LIFETIME_MS,
//! )?;
//! let message = challenge.render();
//!
//! // Client: sign the message exactly as received.
//! let signature = sign_ed25519(key.signing_key(), message.as_bytes());
//!
//! // Server, on POST /api/auth/login, two seconds later.
//! let signer = challenge.verify(Scheme::Ed25519, &public_key, &signature, now_ms + 2_000)?;
//! assert_eq!(address_of(&signer), key.address());
//!
//! // A wallet's signPersonalMessage signature, and a forgery.
//! let from_wallet = Scheme::SuiPersonalMessage.sign(key.signing_key(), message.as_bytes());
//! assert!(challenge.verify(Scheme::SuiPersonalMessage, &public_key, &from_wallet, now_ms).is_ok());
//! let err = challenge.verify(Scheme::Ed25519, &public_key, &"00".repeat(64), now_ms).unwrap_err();
//! assert_eq!(err.code(), "bad_signature");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Test vectors
//!
//! `tests/sui_vectors.json` holds addresses and signatures made by the official
//! Sui TypeScript SDK (`@mysten/sui`, pinned in `vectors/package.json`), and a
//! login message rendered by an independent JavaScript implementation of the
//! format. `tests/sui_vectors.rs` checks this crate against them. The generator is
//! deterministic; regenerate or check the file with
//!
//! ```sh
//! cd crates/triad-identity/vectors
//! npm ci
//! node generate.mjs > ../tests/sui_vectors.json           # regenerate
//! node generate.mjs | diff -u ../tests/sui_vectors.json - # check, no output if equal
//! ```
//!
//! # Why `verify_strict`
//!
//! Every signature check uses [`VerifyingKey::verify_strict`] rather than the
//! plain RFC 8032 `verify`, and public keys are parsed by [`parse_public_key`],
//! which refuses
//!
//! * small-order ("weak") public keys: anyone can forge signatures that verify
//!   under such a key for many messages, so its address would be an account with
//!   no owner that anyone could log in to;
//! * non-canonical encodings of a public key, which would give one key two
//!   spellings and so two addresses;
//!
//! and strict verification also refuses signatures whose `R` has small order or
//! whose `s` is not reduced, the encodings that make Ed25519 signatures
//! malleable. Honest signers (dalek, `@noble/curves` inside the Sui SDK and
//! wallets, WebCrypto, libsodium) never produce any of these, so strictness costs
//! no real client anything; the Sui vectors test checks that the SDK's signatures
//! pass.

mod address;
mod error;
mod keyfile;
mod message;
mod signature;
mod timestamp;

pub use ed25519_dalek::{Signature, SigningKey, VerifyingKey};

pub use crate::address::{
    ED25519_FLAG, address_of, address_string, format_address, hash256, parse_address,
};
pub use crate::error::{AuthError, KeyFileError};
pub use crate::keyfile::{KEY_FILE_ENV, KeyFile};
pub use crate::message::{LoginMessage, MAX_CHALLENGE_LIFETIME_MS, generate_nonce, move_message};
pub use crate::signature::{
    Scheme, parse_public_key, public_key_hex, sign_ed25519, sign_sui_personal_message,
    sui_personal_message_digest, verify_ed25519, verify_sui_personal_message,
};
pub use crate::timestamp::{MAX_TIMESTAMP_MS, format_timestamp, parse_timestamp};
