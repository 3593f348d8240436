//! Arbitrary bytes as a signed agent message, as the relay receives one: a data part
//! `{"appId","action","payload"}` and a `signed` envelope `{"publicKey","signature"}`.
//! Nothing panics; an envelope verifies only for the sender whose key made it, for this
//! recipient and this exact message, and then only with the real signature; a message
//! signed with a fixed key verifies, and not for another sender or recipient.
//!
//! Input: line 1 the data part, line 2 the envelope's JSON, byte 0 of line 3 picks the
//! sender (the fixed key's address or another).
//! `cargo fuzz run envelope` (from crates/triad-protocol/fuzz).
#![no_main]

use libfuzzer_sys::fuzz_target;
use triad_identity::{SigningKey, address_of};
use triad_protocol::{Signed, decode_data_json, envelope};

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|&b| b == b'\n');
    let part = lines.next().unwrap_or_default();
    let signed = lines.next().unwrap_or_default();
    let pick = lines.next().and_then(|l| l.first().copied()).unwrap_or(0);
    let Ok((app, message)) = decode_data_json(part) else {
        return;
    };
    let key = SigningKey::from_bytes(&[9; 32]);
    let me = address_of(&key.verifying_key());
    let other = [pick; 32];
    let to = [0x42; 32];
    let from = if pick & 1 == 0 { me } else { other };

    // The fuzzed envelope.
    if let Ok(signed) = serde_json::from_slice::<Signed>(signed) {
        if envelope::verify(&signed, &from, &to, app, &message).is_ok() {
            // Only the fixed key's own, real signature can verify for its address (the
            // other addresses have no known key).
            assert_eq!(from, me, "an envelope verified for an address with no known key");
            let real = envelope::sign(&key, &to, app, &message);
            assert!(signed.signature.eq_ignore_ascii_case(&real.signature));
            assert!(signed.public_key.eq_ignore_ascii_case(&real.public_key));
        }
        // The same envelope never verifies for another recipient.
        if envelope::verify(&signed, &from, &to, app, &message).is_ok() {
            assert!(envelope::verify(&signed, &from, &[0x43; 32], app, &message).is_err());
        }
    }

    // A real envelope: verifies for its sender and recipient only.
    let real = envelope::sign(&key, &to, app, &message);
    assert!(envelope::verify(&real, &me, &to, app, &message).is_ok());
    if other != me {
        assert!(envelope::verify(&real, &other, &to, app, &message).is_err());
    }
    assert!(envelope::verify(&real, &me, &other, app, &message).is_err() || other == to);
    let text = envelope::signing_text(&me, &to, app, &message);
    assert!(text.starts_with(envelope::SIGNING_DOMAIN));
    assert_eq!(text.lines().count(), 6, "the payload is one line: {text}");
});
