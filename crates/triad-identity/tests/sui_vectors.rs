//! Checks this crate against vectors made by the official Sui TypeScript SDK.
//!
//! `sui_vectors.json` is the output of `vectors/generate.mjs`; see the crate
//! documentation for how to regenerate it.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;
use triad_identity::{
    AuthError, LoginMessage, Scheme, SigningKey, address_of, address_string, format_timestamp,
    parse_address, parse_public_key, parse_timestamp, public_key_hex, sign_ed25519,
    sign_sui_personal_message, sui_personal_message_digest, verify_ed25519,
    verify_sui_personal_message,
};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Vectors {
    generator: String,
    sdk: String,
    keys: Vec<KeyVector>,
    timestamps: Vec<TimestampVector>,
    login_messages: Vec<LoginVector>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyVector {
    name: String,
    secret_key: String,
    public_key: String,
    sui_address: String,
    signatures: Vec<SignatureVector>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureVector {
    name: String,
    message_hex: String,
    ed25519_signature: String,
    sui_personal_message_digest: String,
    sui_personal_message_signature: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TimestampVector {
    ms: u64,
    rfc3339: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginVector {
    key: String,
    domain: String,
    address: String,
    nonce: String,
    issued_at_ms: u64,
    expires_at_ms: u64,
    rendered: String,
}

impl SignatureVector {
    fn message(&self) -> Vec<u8> {
        hex::decode(&self.message_hex).unwrap()
    }
}

fn vectors() -> Vectors {
    serde_json::from_str(include_str!("sui_vectors.json")).unwrap()
}

fn signing_key(key: &KeyVector) -> SigningKey {
    SigningKey::from_bytes(&hex::decode(&key.secret_key).unwrap().try_into().unwrap())
}

/// Every way to change one byte that matters: every position of short inputs, and
/// the ends plus a stride through long ones.
fn positions(len: usize) -> Vec<usize> {
    if len <= 512 {
        (0..len).collect()
    } else {
        (0..len).step_by(61).chain([len - 1]).collect()
    }
}

fn flipped(bytes: &[u8], position: usize) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    bytes[position] ^= 0x01;
    bytes
}

#[test]
fn the_vectors_cover_what_they_should() {
    let vectors = vectors();
    assert_eq!(
        vectors.generator,
        "crates/triad-identity/vectors/generate.mjs"
    );
    assert_eq!(vectors.keys.len(), 3);
    let lengths: Vec<usize> = vectors
        .keys
        .iter()
        .flat_map(|key| key.signatures.iter().map(|s| s.message().len()))
        .collect();
    // ULEB128 length prefixes of one, two and three bytes, and an empty message.
    for len in [0, 127, 128, 16_384] {
        assert!(lengths.contains(&len), "no {len}-byte message");
    }
    let non_ascii = vectors.keys[0]
        .signatures
        .iter()
        .find(|s| s.name == "login-message-like-non-ascii")
        .unwrap();
    assert!(!non_ascii.message().is_ascii());
    assert_eq!(vectors.login_messages.len(), vectors.keys.len());
}

#[test]
fn the_sdk_version_is_the_one_pinned_in_package_json() {
    let package: serde_json::Value =
        serde_json::from_str(include_str!("../vectors/package.json")).unwrap();
    let pinned = package["dependencies"]["@mysten/sui"].as_str().unwrap();
    assert!(
        pinned.chars().all(|c| c.is_ascii_digit() || c == '.'),
        "pin an exact version, not {pinned:?}"
    );
    assert_eq!(vectors().sdk, format!("@mysten/sui@{pinned}"));
}

#[test]
fn addresses_match_the_sdk() {
    for key in vectors().keys {
        let signing_key = signing_key(&key);
        let public_key = parse_public_key(&key.public_key).unwrap();
        assert_eq!(public_key, signing_key.verifying_key(), "{}", key.name);
        assert_eq!(public_key_hex(&public_key), key.public_key);
        assert_eq!(address_string(&public_key), key.sui_address, "{}", key.name);
        assert_eq!(parse_address(&key.sui_address), Ok(address_of(&public_key)));
    }
}

#[test]
fn plain_signatures_match_and_verify() {
    for key in vectors().keys {
        let signing_key = signing_key(&key);
        for vector in &key.signatures {
            let message = vector.message();
            let context = format!("{}/{}", key.name, vector.name);
            // Ed25519 is deterministic, so our signature must be the SDK's.
            assert_eq!(
                sign_ed25519(&signing_key, &message),
                vector.ed25519_signature,
                "{context}"
            );
            let verified = verify_ed25519(&key.public_key, &message, &vector.ed25519_signature);
            assert_eq!(verified, Ok(signing_key.verifying_key()), "{context}");
            assert!(
                Scheme::Ed25519
                    .verify(&key.public_key, &message, &vector.ed25519_signature)
                    .is_ok()
            );
        }
    }
}

#[test]
fn personal_message_signatures_match_and_verify() {
    for key in vectors().keys {
        let signing_key = signing_key(&key);
        for vector in &key.signatures {
            let message = vector.message();
            let context = format!("{}/{}", key.name, vector.name);
            assert_eq!(
                hex::encode(sui_personal_message_digest(&message)),
                vector.sui_personal_message_digest,
                "{context}"
            );
            assert_eq!(
                sign_sui_personal_message(&signing_key, &message),
                vector.sui_personal_message_signature,
                "{context}"
            );
            let verified = verify_sui_personal_message(
                &key.public_key,
                &message,
                &vector.sui_personal_message_signature,
            );
            assert_eq!(verified, Ok(signing_key.verifying_key()), "{context}");
            assert!(
                Scheme::SuiPersonalMessage
                    .verify(
                        &key.public_key,
                        &message,
                        &vector.sui_personal_message_signature
                    )
                    .is_ok()
            );
        }
    }
}

#[test]
fn changing_any_byte_of_message_signature_or_key_is_refused() {
    for key in vectors().keys {
        let public_key = hex::decode(&key.public_key).unwrap();
        for vector in &key.signatures {
            let context = format!("{}/{}", key.name, vector.name);
            let message = vector.message();
            let plain = hex::decode(&vector.ed25519_signature).unwrap();
            let sui = BASE64
                .decode(&vector.sui_personal_message_signature)
                .unwrap();
            let verify_plain = |pk: &[u8], msg: &[u8], sig: &[u8]| {
                verify_ed25519(&hex::encode(pk), msg, &hex::encode(sig))
            };
            let verify_sui = |pk: &[u8], msg: &[u8], sig: &[u8]| {
                verify_sui_personal_message(&hex::encode(pk), msg, &BASE64.encode(sig))
            };

            for position in positions(message.len()) {
                let changed = flipped(&message, position);
                assert_eq!(
                    verify_plain(&public_key, &changed, &plain),
                    Err(AuthError::BadSignature),
                    "{context}: message byte {position}"
                );
                assert_eq!(
                    verify_sui(&public_key, &changed, &sui),
                    Err(AuthError::BadSignature),
                    "{context}: message byte {position}"
                );
            }
            // Appending or dropping a byte changes the message too.
            let mut longer = message.clone();
            longer.push(0);
            assert!(
                verify_plain(&public_key, &longer, &plain).is_err(),
                "{context}"
            );
            assert!(verify_sui(&public_key, &longer, &sui).is_err(), "{context}");
            if let Some((_, shorter)) = message.split_last() {
                assert!(
                    verify_plain(&public_key, shorter, &plain).is_err(),
                    "{context}"
                );
                assert!(verify_sui(&public_key, shorter, &sui).is_err(), "{context}");
            }

            for position in 0..plain.len() {
                let result = verify_plain(&public_key, &message, &flipped(&plain, position));
                assert!(result.is_err(), "{context}: signature byte {position}");
            }
            // The flag, the signature and the embedded public key.
            for position in 0..sui.len() {
                let result = verify_sui(&public_key, &message, &flipped(&sui, position));
                assert!(result.is_err(), "{context}: Sui signature byte {position}");
            }
            for position in 0..public_key.len() {
                let other_key = flipped(&public_key, position);
                let result = verify_plain(&other_key, &message, &plain);
                assert!(result.is_err(), "{context}: public key byte {position}");
                let result = verify_sui(&other_key, &message, &sui);
                assert!(result.is_err(), "{context}: public key byte {position}");
            }
        }
    }
}

#[test]
fn a_signature_in_one_scheme_is_refused_in_the_other() {
    for key in vectors().keys {
        let signing_key = signing_key(&key);
        for vector in &key.signatures {
            let context = format!("{}/{}", key.name, vector.name);
            let message = vector.message();
            let sui = BASE64
                .decode(&vector.sui_personal_message_signature)
                .unwrap();

            // The strings as sent, under the wrong scheme name.
            let err = Scheme::SuiPersonalMessage
                .verify(&key.public_key, &message, &vector.ed25519_signature)
                .unwrap_err();
            assert_eq!(err.code(), "malformed_signature", "{context}");
            assert!(
                err.to_string().contains("\"scheme\": \"ed25519\""),
                "{context}: {err}"
            );
            let err = Scheme::Ed25519
                .verify(
                    &key.public_key,
                    &message,
                    &vector.sui_personal_message_signature,
                )
                .unwrap_err();
            assert_eq!(err.code(), "invalid_hex", "{context}");
            assert!(
                err.to_string()
                    .contains("\"scheme\": \"sui-personal-message\""),
                "{context}: {err}"
            );

            // Re-encoded to look right: the wallet's raw signature (over the intent
            // digest) as a plain signature, and a plain signature in a Sui envelope.
            let raw_wallet_signature = hex::encode(&sui[1..65]);
            assert_eq!(
                verify_ed25519(&key.public_key, &message, &raw_wallet_signature),
                Err(AuthError::BadSignature),
                "{context}"
            );
            let mut envelope = sui.clone();
            envelope[1..65].copy_from_slice(&hex::decode(&vector.ed25519_signature).unwrap());
            assert_eq!(
                verify_sui_personal_message(&key.public_key, &message, &BASE64.encode(&envelope)),
                Err(AuthError::BadSignature),
                "{context}"
            );

            // Signing the digest with plain Ed25519 is a valid Sui signature only
            // because that is what the wallet does: the scheme is the digest.
            let digest = sui_personal_message_digest(&message);
            assert_eq!(
                sign_ed25519(&signing_key, &digest),
                hex::encode(&sui[1..65]),
                "{context}"
            );
        }
    }
}

#[test]
fn another_keys_personal_message_signature_is_refused() {
    let vectors = vectors();
    let (first, second) = (&vectors.keys[0], &vectors.keys[1]);
    let vector = &first.signatures[1];
    let err = verify_sui_personal_message(
        &second.public_key,
        &vector.message(),
        &vector.sui_personal_message_signature,
    )
    .unwrap_err();
    assert_eq!(err, AuthError::PublicKeyMismatch);
    let err = verify_ed25519(
        &second.public_key,
        &vector.message(),
        &vector.ed25519_signature,
    )
    .unwrap_err();
    assert_eq!(err, AuthError::BadSignature);
}

#[test]
fn timestamps_match_javascript_to_iso_string() {
    for vector in vectors().timestamps {
        assert_eq!(format_timestamp(vector.ms).unwrap(), vector.rfc3339);
        assert_eq!(parse_timestamp(&vector.rfc3339), Ok(vector.ms));
    }
}

#[test]
fn login_messages_rendered_in_javascript_match_and_verify() {
    let vectors = vectors();
    for login in &vectors.login_messages {
        let key = vectors
            .keys
            .iter()
            .find(|key| key.name == login.key)
            .unwrap();
        assert_eq!(login.address, key.sui_address);
        let message = LoginMessage::new(
            login.domain.clone(),
            parse_address(&login.address).unwrap(),
            login.nonce.clone(),
            login.issued_at_ms,
            login.expires_at_ms,
        )
        .unwrap();
        assert_eq!(message.render(), login.rendered, "{}", login.key);
        assert_eq!(LoginMessage::parse(&login.rendered), Ok(message.clone()));

        // The SDK's signatures of that text log in, inside the window only.
        let signed = key
            .signatures
            .iter()
            .find(|s| s.name == "login-message")
            .unwrap();
        assert_eq!(signed.message(), login.rendered.as_bytes());
        let now = login.issued_at_ms + 1_000;
        for (scheme, signature) in [
            (Scheme::Ed25519, &signed.ed25519_signature),
            (
                Scheme::SuiPersonalMessage,
                &signed.sui_personal_message_signature,
            ),
        ] {
            let verified = message
                .verify(scheme, &key.public_key, signature, now)
                .unwrap();
            assert_eq!(address_string(&verified), login.address);
            let late = message.verify(scheme, &key.public_key, signature, login.expires_at_ms);
            assert_eq!(late.unwrap_err().code(), "challenge_expired");
        }
    }
}
