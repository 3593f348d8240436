//! Sui-style addresses of Ed25519 keys, and the strict hex decoding every wire
//! field shares.

use blake2::Blake2b;
use blake2::Digest;
use blake2::digest::consts::U32;
use ed25519_dalek::VerifyingKey;

use crate::AuthError;

/// The Sui signature-scheme flag for Ed25519: the byte hashed in front of the
/// public key to make an address, and the first byte of a Sui serialized signature.
pub const ED25519_FLAG: u8 = 0x00;

/// The address of an Ed25519 public key: `BLAKE2b-256(0x00 || public_key)`.
///
/// This is the key's Sui address, the same 32 bytes `Ed25519PublicKey.toSuiAddress()`
/// in the Sui SDK and `@0x…` in Move denote, so a player's Triad address is their
/// Sui address. Wrap the bytes in `triad_engine::Address::from_bytes` to use them in
/// the engine.
///
/// ```
/// use triad_identity::{SigningKey, address_of, format_address};
///
/// let key = SigningKey::from_bytes(&[7; 32]);
/// let address = address_of(&key.verifying_key());
/// assert_eq!(format_address(&address).len(), 66);
/// ```
pub fn address_of(public_key: &VerifyingKey) -> [u8; 32] {
    let mut hasher = Blake2b::<U32>::new();
    hasher.update([ED25519_FLAG]);
    hasher.update(public_key.as_bytes());
    hasher.finalize().into()
}

/// BLAKE2b-256 of `bytes`, the hash behind addresses. The server also uses it to keep only
/// digests of login tokens and idempotency keys.
///
/// ```
/// assert_eq!(triad_identity::hash256(b"").len(), 32);
/// ```
#[must_use]
pub fn hash256(bytes: &[u8]) -> [u8; 32] {
    Blake2b::<U32>::digest(bytes).into()
}

/// `0x` followed by the 64 lowercase hex digits of `address`: the form Sui wallets,
/// explorers and the Triad API show.
pub fn format_address(address: &[u8; 32]) -> String {
    format!("0x{}", hex::encode(address))
}

/// The formatted address of a public key: `format_address(&address_of(public_key))`.
pub fn address_string(public_key: &VerifyingKey) -> String {
    format_address(&address_of(public_key))
}

/// Parses an address written as `0x` and exactly 64 hex digits (either case).
///
/// Sui also accepts shortened addresses such as `0x2`; those are refused here,
/// because a player's address is never short and a client that sends one has a bug.
///
/// ```
/// use triad_identity::parse_address;
///
/// let text = "0x00000000000000000000000000000000000000000000000000000000000000ff";
/// assert_eq!(parse_address(text).unwrap()[31], 0xff);
/// assert_eq!(parse_address("0x2").unwrap_err().code(), "invalid_hex");
/// ```
pub fn parse_address(text: &str) -> Result<[u8; 32], AuthError> {
    let Some(digits) = text.strip_prefix("0x") else {
        return Err(AuthError::InvalidHex {
            field: "address",
            expected_digits: 64,
            problem: "write an address as 0x followed by the 64 digits".to_owned(),
        });
    };
    decode_hex("address", digits).map_err(|err| match err {
        AuthError::InvalidHex {
            field,
            expected_digits,
            problem,
        } => AuthError::InvalidHex {
            field,
            expected_digits,
            problem: format!("{problem} after the 0x prefix"),
        },
        other => other,
    })
}

/// Decodes exactly `2 * N` hex digits (either case) into `N` bytes.
///
/// Anything else (a `0x` prefix, whitespace, a wrong length, a non-hex character) is
/// an [`AuthError::InvalidHex`] naming `field`.
pub(crate) fn decode_hex<const N: usize>(
    field: &'static str,
    text: &str,
) -> Result<[u8; N], AuthError> {
    let expected_digits = 2 * N;
    let invalid = |problem: String| AuthError::InvalidHex {
        field,
        expected_digits,
        problem,
    };
    if text.len() != expected_digits {
        let problem = if text.starts_with("0x") || text.starts_with("0X") {
            "remove the 0x prefix".to_owned()
        } else {
            match text.chars().count() {
                1 => "got 1 character".to_owned(),
                count => format!("got {count} characters"),
            }
        };
        return Err(invalid(problem));
    }
    // Report the offending character itself (not a byte of its UTF-8 encoding).
    if let Some((position, c)) = text
        .chars()
        .enumerate()
        .find(|(_, c)| !c.is_ascii_hexdigit())
    {
        return Err(invalid(format!(
            "{c:?} at position {position} is not a hex digit"
        )));
    }
    let mut bytes = [0; N];
    hex::decode_to_slice(text, &mut bytes).map_err(|err| invalid(err.to_string()))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_hex_accepts_both_cases() {
        assert_eq!(decode_hex::<2>("f", "abCD"), Ok([0xab, 0xcd]));
    }

    #[test]
    fn decode_hex_explains_each_problem() {
        let problem = |text: &str| match decode_hex::<2>("f", text) {
            Err(AuthError::InvalidHex { problem, .. }) => problem,
            other => panic!("{text:?} gave {other:?}"),
        };
        assert_eq!(problem("abc"), "got 3 characters");
        assert_eq!(problem("0xabcd"), "remove the 0x prefix");
        assert_eq!(problem("ab g"), "' ' at position 2 is not a hex digit");
        // Four bytes, but two characters: counted as characters in the message.
        assert_eq!(problem("éé"), "'é' at position 0 is not a hex digit");
        assert_eq!(problem("ééé"), "got 3 characters");
    }

    #[test]
    fn parse_address_needs_the_prefix_and_full_length() {
        let digits = "ab".repeat(32);
        assert_eq!(parse_address(&format!("0x{digits}")), Ok([0xab; 32]));
        let err = parse_address(&digits).unwrap_err();
        assert!(err.to_string().contains("0x followed by"), "{err}");
        let err = parse_address("0x2").unwrap_err();
        assert_eq!(
            err.to_string(),
            "address must be exactly 64 hex digits (0-9, a-f): got 1 character after the 0x prefix"
        );
        assert!(parse_address(&format!("0X{digits}")).is_err());
        assert!(parse_address(&format!("0x{digits}0")).is_err());
        assert!(parse_address(&format!("0x{}", &digits[1..])).is_err());
    }
}
