//! Property tests: round trips over random keys, messages and login messages, and
//! that no input makes a parser panic or accept a non-canonical spelling.

use proptest::prelude::*;
use triad_identity::{
    LoginMessage, MAX_CHALLENGE_LIFETIME_MS, MAX_TIMESTAMP_MS, Scheme, SigningKey, address_of,
    address_string, format_timestamp, parse_address, parse_public_key, parse_timestamp,
    public_key_hex, verify_ed25519, verify_sui_personal_message,
};

fn login_message() -> impl Strategy<Value = LoginMessage> {
    (
        "[A-Za-z0-9.:\\[\\]-]{1,253}",
        any::<[u8; 32]>(),
        "[A-Za-z0-9]{16,64}",
        0..=MAX_TIMESTAMP_MS - MAX_CHALLENGE_LIFETIME_MS,
        1..=MAX_CHALLENGE_LIFETIME_MS,
    )
        .prop_map(|(domain, address, nonce, issued_at_ms, lifetime)| {
            LoginMessage::new(
                domain,
                address,
                nonce,
                issued_at_ms,
                issued_at_ms + lifetime,
            )
            .unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn signatures_round_trip_in_both_schemes(
        secret in any::<[u8; 32]>(),
        message in proptest::collection::vec(any::<u8>(), 0..600),
        other in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        let key = SigningKey::from_bytes(&secret);
        let public_key = public_key_hex(&key.verifying_key());
        for scheme in Scheme::ALL {
            let signature = scheme.sign(&key, &message);
            prop_assert_eq!(
                scheme.verify(&public_key, &message, &signature),
                Ok(key.verifying_key())
            );
            if other != message {
                prop_assert!(scheme.verify(&public_key, &other, &signature).is_err());
            }
        }
    }

    #[test]
    fn addresses_are_66_lowercase_hex_characters(secret in any::<[u8; 32]>()) {
        let key = SigningKey::from_bytes(&secret).verifying_key();
        let text = address_string(&key);
        prop_assert_eq!(text.len(), 66);
        prop_assert!(text.starts_with("0x"));
        prop_assert!(text[2..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        prop_assert_eq!(parse_address(&text), Ok(address_of(&key)));
        prop_assert_eq!(parse_public_key(&public_key_hex(&key)), Ok(key));
    }

    #[test]
    fn login_messages_round_trip(message in login_message()) {
        let text = message.render();
        prop_assert_eq!(text.lines().count(), 9);
        prop_assert_eq!(LoginMessage::parse(&text), Ok(message));
    }

    #[test]
    fn a_changed_login_message_parses_only_to_its_own_text(
        message in login_message(),
        index in any::<proptest::sample::Index>(),
        replacement in any::<char>(),
    ) {
        let mut chars: Vec<char> = message.render().chars().collect();
        let position = index.index(chars.len());
        chars[position] = replacement;
        let changed: String = chars.into_iter().collect();
        if let Ok(parsed) = LoginMessage::parse(&changed) {
            prop_assert_eq!(parsed.render(), changed);
        }
    }

    #[test]
    fn timestamps_round_trip_and_sort_like_their_text(
        a in 0..=MAX_TIMESTAMP_MS,
        b in 0..=MAX_TIMESTAMP_MS,
    ) {
        let (text_a, text_b) = (format_timestamp(a).unwrap(), format_timestamp(b).unwrap());
        prop_assert_eq!(text_a.len(), 24);
        prop_assert_eq!(parse_timestamp(&text_a), Ok(a));
        prop_assert_eq!(a.cmp(&b), text_a.cmp(&text_b));
    }

    #[test]
    fn arbitrary_text_never_panics_and_only_canonical_text_parses(text in "\\PC{0,400}") {
        if let Ok(parsed) = LoginMessage::parse(&text) {
            prop_assert_eq!(parsed.render(), text.clone());
        }
        if let Ok(ms) = parse_timestamp(&text) {
            prop_assert_eq!(format_timestamp(ms).unwrap(), text.clone());
        }
        let _ = parse_public_key(&text);
        let _ = parse_address(&text);
        let key = SigningKey::from_bytes(&[1; 32]);
        let public_key = public_key_hex(&key.verifying_key());
        prop_assert!(verify_ed25519(&public_key, b"m", &text).is_err());
        prop_assert!(verify_sui_personal_message(&public_key, b"m", &text).is_err());
    }

    #[test]
    fn arbitrary_keys_and_signatures_never_panic(
        public_key in any::<[u8; 32]>(),
        signature in proptest::collection::vec(any::<u8>(), 64..=64),
        envelope in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        use base64::Engine as _;
        let public_key = hex::encode(public_key);
        // A random "signature" verifying would be a forgery.
        prop_assert!(verify_ed25519(&public_key, b"m", &hex::encode(&signature)).is_err());
        let envelope = base64::engine::general_purpose::STANDARD.encode(&envelope);
        prop_assert!(verify_sui_personal_message(&public_key, b"m", &envelope).is_err());
    }
}
