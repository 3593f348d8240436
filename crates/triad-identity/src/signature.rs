//! Signing and verifying login messages: plain Ed25519 and Sui personal messages.
//!
//! Every check uses `verify_strict`; the crate documentation explains why.

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use blake2::Blake2b;
use blake2::Digest;
use blake2::digest::consts::U32;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::AuthError;
use crate::address::{ED25519_FLAG, decode_hex};

/// The intent prefix Sui puts in front of a personal message before hashing:
/// scope `PersonalMessage` (3), version `V0` (0), app `Sui` (0).
const PERSONAL_MESSAGE_INTENT: [u8; 3] = [3, 0, 0];

/// Bytes in a Sui serialized Ed25519 signature: flag, signature, public key.
const SUI_ED25519_SIGNATURE_LEN: usize = 1 + 64 + 32;

/// Characters in the base64 of a Sui serialized Ed25519 signature.
const SUI_ED25519_SIGNATURE_BASE64_LEN: usize = SUI_ED25519_SIGNATURE_LEN.div_ceil(3) * 4;

/// Longer base64 than any Sui signature scheme produces; refused before decoding.
const MAX_SUI_SIGNATURE_BASE64: usize = 16 * 1024;

/// Parses a public key sent as exactly 64 hex digits.
///
/// Refuses points that are not on the curve or not canonically encoded
/// ([`AuthError::InvalidPublicKey`]) and small-order points
/// ([`AuthError::WeakPublicKey`]).
pub fn parse_public_key(public_key_hex: &str) -> Result<VerifyingKey, AuthError> {
    public_key_from_bytes(&decode_hex::<32>("public_key", public_key_hex)?)
}

fn public_key_from_bytes(bytes: &[u8; 32]) -> Result<VerifyingKey, AuthError> {
    let key = VerifyingKey::from_bytes(bytes).map_err(|_| AuthError::InvalidPublicKey)?;
    if key.to_edwards().compress().as_bytes() != bytes {
        return Err(AuthError::InvalidPublicKey);
    }
    if key.is_weak() {
        return Err(AuthError::WeakPublicKey);
    }
    Ok(key)
}

/// The wire form of a public key: 64 lowercase hex digits.
pub fn public_key_hex(public_key: &VerifyingKey) -> String {
    hex::encode(public_key.as_bytes())
}

/// Signs `message` with plain Ed25519 (RFC 8032) and returns the 128 lowercase hex
/// digits to send as `signature` with scheme `ed25519`.
///
/// ```
/// use triad_identity::{SigningKey, public_key_hex, sign_ed25519, verify_ed25519};
///
/// let key = SigningKey::from_bytes(&[1; 32]);
/// let signature = sign_ed25519(&key, b"message");
/// assert_eq!(signature.len(), 128);
/// let public_key = public_key_hex(&key.verifying_key());
/// assert!(verify_ed25519(&public_key, b"message", &signature).is_ok());
/// ```
pub fn sign_ed25519(key: &SigningKey, message: &[u8]) -> String {
    hex::encode(key.sign(message).to_bytes())
}

/// Checks a plain Ed25519 signature (128 hex digits) over `message` by the key
/// `public_key_hex` (64 hex digits), and returns that key.
///
/// # Errors
///
/// [`AuthError::InvalidHex`] for a field that is not exactly the right number of hex
/// digits, [`AuthError::InvalidPublicKey`] / [`AuthError::WeakPublicKey`] for an
/// unusable key, and [`AuthError::BadSignature`] if the signature does not verify.
pub fn verify_ed25519(
    public_key_hex: &str,
    message: &[u8],
    signature_hex: &str,
) -> Result<VerifyingKey, AuthError> {
    let key = parse_public_key(public_key_hex)?;
    verify_ed25519_with(&key, message, signature_hex)?;
    Ok(key)
}

/// [`verify_ed25519`] with the key already parsed by [`parse_public_key`].
fn verify_ed25519_with(
    key: &VerifyingKey,
    message: &[u8],
    signature_hex: &str,
) -> Result<(), AuthError> {
    let signature = decode_hex::<64>("signature", signature_hex).map_err(|err| {
        match err {
            // A wallet's signature sent without its scheme: say so.
            AuthError::InvalidHex {
                field,
                expected_digits,
                problem,
            } if signature_hex.len() == SUI_ED25519_SIGNATURE_BASE64_LEN => AuthError::InvalidHex {
                field,
                expected_digits,
                problem: format!(
                    "{problem}; if this is a Sui wallet's signature, send it with \"scheme\": \"sui-personal-message\""
                ),
            },
            other => other,
        }
    })?;
    verify_strict(key, message, &signature)
}

/// The 32 bytes a Sui wallet's `signPersonalMessage` actually signs for `message`:
/// `BLAKE2b-256([3, 0, 0] || BCS(vector<u8>: message))`, where the BCS encoding is
/// the ULEB128 length of `message` followed by its bytes.
pub fn sui_personal_message_digest(message: &[u8]) -> [u8; 32] {
    let mut length = [0; 10];
    let length = uleb128(message.len() as u64, &mut length);
    let mut hasher = Blake2b::<U32>::new();
    hasher.update(PERSONAL_MESSAGE_INTENT);
    hasher.update(length);
    hasher.update(message);
    hasher.finalize().into()
}

/// Writes `value` as ULEB128 (the BCS length prefix) into `buffer` and returns the
/// used part.
fn uleb128(mut value: u64, buffer: &mut [u8; 10]) -> &[u8] {
    let mut len = 0;
    loop {
        // Truncation keeps the low seven bits, which is the point.
        let low = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            buffer[len] = low;
            return &buffer[..=len];
        }
        buffer[len] = low | 0x80;
        len += 1;
    }
}

/// Signs `message` the way a Sui wallet's `signPersonalMessage` does and returns
/// its `signature` string: base64 of `0x00 || signature || public key`.
///
/// Useful for Rust clients that want to log in with scheme `sui-personal-message`,
/// and for tests. The output is byte-for-byte what the Sui TypeScript SDK produces
/// for the same key and message.
pub fn sign_sui_personal_message(key: &SigningKey, message: &[u8]) -> String {
    let signature = key.sign(&sui_personal_message_digest(message));
    let mut serialized = [0; SUI_ED25519_SIGNATURE_LEN];
    serialized[0] = ED25519_FLAG;
    serialized[1..65].copy_from_slice(&signature.to_bytes());
    serialized[65..].copy_from_slice(key.verifying_key().as_bytes());
    BASE64.encode(serialized)
}

/// Checks the `signature` a Sui wallet's `signPersonalMessage` returned for
/// `message`, and that it was made by `public_key_hex`; returns that key.
///
/// `signature` is standard padded base64 of the Sui serialized signature
/// `flag || signature || public key`. Only Ed25519 (flag `0x00`) is accepted, since
/// a Triad address is the Sui address of an Ed25519 key.
///
/// # Errors
///
/// Besides those of [`verify_ed25519`]: [`AuthError::MalformedSignature`] for bad
/// base64 or length, [`AuthError::UnsupportedSuiKeyScheme`] for a non-Ed25519
/// account, and [`AuthError::PublicKeyMismatch`] when the signature carries another
/// public key.
pub fn verify_sui_personal_message(
    public_key_hex: &str,
    message: &[u8],
    signature: &str,
) -> Result<VerifyingKey, AuthError> {
    let key = parse_public_key(public_key_hex)?;
    verify_sui_personal_message_with(&key, message, signature)?;
    Ok(key)
}

/// [`verify_sui_personal_message`] with the key already parsed by [`parse_public_key`].
fn verify_sui_personal_message_with(
    key: &VerifyingKey,
    message: &[u8],
    signature: &str,
) -> Result<(), AuthError> {
    let (signature, signer) = decode_sui_signature(signature)?;
    if signer != *key.as_bytes() {
        return Err(AuthError::PublicKeyMismatch);
    }
    verify_strict(key, &sui_personal_message_digest(message), &signature)
}

/// Splits a base64 Sui serialized Ed25519 signature into signature and public key.
fn decode_sui_signature(text: &str) -> Result<([u8; 64], [u8; 32]), AuthError> {
    let malformed = |problem: String| AuthError::MalformedSignature { problem };
    if text.len() > MAX_SUI_SIGNATURE_BASE64 {
        return Err(malformed(format!(
            "{} characters is longer than any Sui signature",
            text.len()
        )));
    }
    // 128 hex digits are also valid base64; name the likelier mistake.
    if text.len() == 128 && text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return Err(malformed(
            "this looks like a plain Ed25519 signature in hex; send it with \"scheme\": \"ed25519\", or send the base64 signature signPersonalMessage returned".to_owned(),
        ));
    }
    let bytes = BASE64.decode(text).map_err(|err| {
        malformed(format!(
            "not standard padded base64 ({err}); send the `signature` string signPersonalMessage returned, unchanged"
        ))
    })?;
    let Some(&flag) = bytes.first() else {
        return Err(malformed("the signature is empty".to_owned()));
    };
    if flag != ED25519_FLAG {
        return Err(AuthError::UnsupportedSuiKeyScheme {
            flag,
            scheme: sui_scheme_name(flag),
        });
    }
    if bytes.len() != SUI_ED25519_SIGNATURE_LEN {
        return Err(malformed(format!(
            "a Sui Ed25519 signature is {SUI_ED25519_SIGNATURE_LEN} bytes (flag, 64-byte signature, 32-byte public key), this one is {}",
            bytes.len()
        )));
    }
    let mut signature = [0; 64];
    signature.copy_from_slice(&bytes[1..65]);
    let mut public_key = [0; 32];
    public_key.copy_from_slice(&bytes[65..]);
    Ok((signature, public_key))
}

/// The name the Sui SDK gives a signature flag.
fn sui_scheme_name(flag: u8) -> &'static str {
    match flag {
        0x00 => "ED25519",
        0x01 => "Secp256k1",
        0x02 => "Secp256r1",
        0x03 => "MultiSig",
        0x05 => "ZkLogin",
        0x06 => "Passkey",
        _ => "unknown",
    }
}

fn verify_strict(
    key: &VerifyingKey,
    message: &[u8],
    signature: &[u8; 64],
) -> Result<(), AuthError> {
    key.verify_strict(message, &Signature::from_bytes(signature))
        .map_err(|_| AuthError::BadSignature)
}

/// How a login signature was made: the `scheme` field of `POST /api/auth/login`.
///
/// Serialized as `"ed25519"` (the default when the field is absent) or
/// `"sui-personal-message"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Scheme {
    /// Plain Ed25519 over the message bytes; the signature is 128 hex digits.
    #[default]
    #[serde(rename = "ed25519")]
    Ed25519,
    /// What a Sui wallet's `signPersonalMessage` returns for the message bytes:
    /// base64 of `0x00 || signature || public key`.
    #[serde(rename = "sui-personal-message")]
    SuiPersonalMessage,
}

impl Scheme {
    /// Every scheme, in a fixed order.
    pub const ALL: [Scheme; 2] = [Scheme::Ed25519, Scheme::SuiPersonalMessage];

    /// The wire name: `ed25519` or `sui-personal-message`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scheme::Ed25519 => "ed25519",
            Scheme::SuiPersonalMessage => "sui-personal-message",
        }
    }

    /// Signs `message` in this scheme and returns the wire `signature` string.
    pub fn sign(self, key: &SigningKey, message: &[u8]) -> String {
        match self {
            Scheme::Ed25519 => sign_ed25519(key, message),
            Scheme::SuiPersonalMessage => sign_sui_personal_message(key, message),
        }
    }

    /// Verifies a wire `signature` in this scheme: [`verify_ed25519`] or
    /// [`verify_sui_personal_message`].
    pub fn verify(
        self,
        public_key_hex: &str,
        message: &[u8],
        signature: &str,
    ) -> Result<VerifyingKey, AuthError> {
        match self {
            Scheme::Ed25519 => verify_ed25519(public_key_hex, message, signature),
            Scheme::SuiPersonalMessage => {
                verify_sui_personal_message(public_key_hex, message, signature)
            }
        }
    }

    /// [`Scheme::verify`] with a key that [`parse_public_key`] returned (so already
    /// checked to be canonical, on the curve and not of small order): the same checks of
    /// the signature, without parsing the key again.
    pub(crate) fn verify_parsed(
        self,
        key: &VerifyingKey,
        message: &[u8],
        signature: &str,
    ) -> Result<(), AuthError> {
        match self {
            Scheme::Ed25519 => verify_ed25519_with(key, message, signature),
            Scheme::SuiPersonalMessage => verify_sui_personal_message_with(key, message, signature),
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scheme {
    type Err = AuthError;

    fn from_str(text: &str) -> Result<Scheme, AuthError> {
        Scheme::ALL
            .into_iter()
            .find(|scheme| scheme.as_str() == text)
            .ok_or_else(|| AuthError::UnknownScheme {
                found: text.to_owned(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uleb128_matches_bcs() {
        let encode = |value: u64| uleb128(value, &mut [0; 10]).to_vec();
        assert_eq!(encode(0), [0x00]);
        assert_eq!(encode(127), [0x7f]);
        assert_eq!(encode(128), [0x80, 0x01]);
        assert_eq!(encode(300), [0xac, 0x02]);
        assert_eq!(encode(16_383), [0xff, 0x7f]);
        assert_eq!(encode(16_384), [0x80, 0x80, 0x01]);
        assert_eq!(encode(u64::MAX).len(), 10);
    }

    #[test]
    fn scheme_names_round_trip_through_from_str_and_serde() {
        for scheme in Scheme::ALL {
            assert_eq!(scheme.as_str().parse::<Scheme>(), Ok(scheme));
            let json = serde_json::to_string(&scheme).unwrap();
            assert_eq!(json, format!("\"{scheme}\""));
            assert_eq!(serde_json::from_str::<Scheme>(&json).unwrap(), scheme);
        }
        let err = "Ed25519".parse::<Scheme>().unwrap_err();
        assert_eq!(err.code(), "unknown_scheme");
        assert!(serde_json::from_str::<Scheme>("\"sui\"").is_err());
    }

    #[test]
    fn small_order_and_non_canonical_keys_are_refused() {
        // The identity point (y = 1) has order 1.
        let mut identity = [0; 32];
        identity[0] = 1;
        assert_eq!(
            parse_public_key(&hex::encode(identity)),
            Err(AuthError::WeakPublicKey)
        );
        // y = p + 1 is a non-canonical spelling of the same point.
        let mut non_canonical = [0xff; 32];
        non_canonical[0] = 0xee;
        non_canonical[31] = 0x7f;
        assert_eq!(
            parse_public_key(&hex::encode(non_canonical)),
            Err(AuthError::InvalidPublicKey)
        );
        // y = 2 is not on the curve.
        let mut off_curve = [0; 32];
        off_curve[0] = 2;
        assert_eq!(
            parse_public_key(&hex::encode(off_curve)),
            Err(AuthError::InvalidPublicKey)
        );
    }

    #[test]
    fn sui_signatures_of_other_key_types_name_the_type() {
        let mut bytes = vec![0x05];
        bytes.extend_from_slice(&[0; 300]);
        let public_key = public_key_hex(&SigningKey::from_bytes(&[3; 32]).verifying_key());
        let err =
            verify_sui_personal_message(&public_key, b"m", &BASE64.encode(&bytes)).unwrap_err();
        assert_eq!(
            err,
            AuthError::UnsupportedSuiKeyScheme {
                flag: 5,
                scheme: "ZkLogin"
            }
        );
        assert!(err.to_string().contains("ZkLogin key"));
    }

    #[test]
    fn malformed_sui_signatures_are_refused_without_panicking() {
        let key = SigningKey::from_bytes(&[4; 32]);
        let public_key = public_key_hex(&key.verifying_key());
        let good = sign_sui_personal_message(&key, b"m");
        let truncated = BASE64.encode(&BASE64.decode(&good).unwrap()[..96]);
        let unpadded = good.trim_end_matches('=').to_owned();
        let too_long = "A".repeat(MAX_SUI_SIGNATURE_BASE64 + 4);
        for bad in [
            "",
            "!!!!",
            unpadded.as_str(),
            truncated.as_str(),
            too_long.as_str(),
        ] {
            let err = verify_sui_personal_message(&public_key, b"m", bad).unwrap_err();
            assert_eq!(err.code(), "malformed_signature", "{bad:?}: {err}");
        }
        assert!(verify_sui_personal_message(&public_key, b"m", &good).is_ok());
    }
}
