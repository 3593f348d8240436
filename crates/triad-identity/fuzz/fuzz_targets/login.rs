//! Arbitrary bytes as everything a login sends: the login message's text, the public key,
//! the signature (hex or a Sui wallet's base64) and the scheme's name, plus addresses and
//! timestamps. Nothing panics; every error has a code; a message that parses renders back
//! to the same text; and a signature of the fuzzed bytes made with a fixed key verifies in
//! both schemes, while the fuzzed signature verifies only if it really is that signature.
//!
//! Input: fields separated by `\x1f` (unit separator): message, public key, signature,
//! scheme, now (decimal ms).
//! `cargo fuzz run login` (from crates/triad-identity/fuzz).
#![no_main]

use libfuzzer_sys::fuzz_target;
use triad_identity::{
    LoginMessage, Scheme, SigningKey, format_timestamp, parse_address, parse_public_key,
    parse_timestamp, public_key_hex,
};

fuzz_target!(|data: &[u8]| {
    let mut fields = data.split(|&b| b == 0x1f);
    let message = fields.next().unwrap_or_default();
    let public_key = String::from_utf8_lossy(fields.next().unwrap_or_default());
    let signature = String::from_utf8_lossy(fields.next().unwrap_or_default());
    let scheme = String::from_utf8_lossy(fields.next().unwrap_or_default());
    let now: u64 = String::from_utf8_lossy(fields.next().unwrap_or_default())
        .trim()
        .parse()
        .unwrap_or(0);
    let text = String::from_utf8_lossy(message);

    // The message: parse exactly what render produces.
    match LoginMessage::parse(&text) {
        Ok(m) => {
            assert_eq!(m.render(), text, "a parsed message renders to its text");
            assert_eq!(LoginMessage::parse(&m.render()).as_ref(), Ok(&m));
            assert!(m.expires_at_ms() > m.issued_at_ms());
            let _ = m.check_time(now);
            for s in Scheme::ALL {
                let _ = m.verify(s, &public_key, &signature, now);
            }
        }
        Err(e) => assert!(!e.code().is_empty() && !e.to_string().is_empty()),
    }
    // The scheme's name.
    match scheme.parse::<Scheme>() {
        Ok(s) => assert_eq!(s.as_str(), scheme),
        Err(e) => assert!(!e.code().is_empty()),
    }
    // Keys, addresses, timestamps.
    if let Ok(key) = parse_public_key(&public_key) {
        assert_eq!(public_key_hex(&key), public_key.to_ascii_lowercase());
    }
    if let Ok(address) = parse_address(&public_key) {
        assert_eq!(triad_identity::format_address(&address), public_key.to_ascii_lowercase());
    }
    if let Ok(ms) = parse_timestamp(&signature) {
        assert_eq!(format_timestamp(ms).as_deref(), Ok(&*signature));
    }

    // The fuzzed signature against a fixed key, in both schemes: it verifies only if it is
    // the key's real signature of these bytes.
    let key = SigningKey::from_bytes(&[7; 32]);
    let key_hex = public_key_hex(&key.verifying_key());
    for s in Scheme::ALL {
        let real = s.sign(&key, message);
        assert!(s.verify(&key_hex, message, &real).is_ok(), "{s}: a real signature verifies");
        if s.verify(&key_hex, message, &signature).is_ok() {
            // Ed25519 signatures here are deterministic, and verification is strict: only the
            // real one (up to the case of hex digits) passes.
            assert!(
                signature.eq_ignore_ascii_case(&real),
                "{s}: a signature other than the real one verified"
            );
        }
        let _ = s.verify(&public_key, message, &signature);
    }
});
