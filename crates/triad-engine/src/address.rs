//! Player addresses and ids.

use core::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// A player's address: 32 bytes, written `0x` followed by 64 lower-case hex digits (the Sui
/// address format of the Sui contract). The server derives it from the player's Ed25519 key; the
/// engine only compares them.
///
/// ```
/// use triad_engine::Address;
/// let a: Address = "0x00000000000000000000000000000000000000000000000000000000000000ff".parse().unwrap();
/// assert_eq!(a.to_string().len(), 66);
/// assert!("0x12".parse::<Address>().is_err());
/// ```
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Address([u8; 32]);

/// As four words: hashers take words faster than a slice (the engine's key times hash an
/// address for each key of every command and event).
impl std::hash::Hash for Address {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for word in self.0.chunks_exact(8) {
            state.write_u64(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
    }
}

impl Address {
    /// The zero address (`0x000…0`), the SOS contract's "nobody".
    pub const ZERO: Address = Address([0; 32]);

    /// The address with these bytes.
    #[must_use]
    pub const fn from_bytes(bytes: [u8; 32]) -> Address {
        Address(bytes)
    }

    /// The raw bytes.
    #[must_use]
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Whether this is the zero address.
    #[must_use]
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 32]
    }
}

/// Why a string is not an address.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct InvalidAddress;

impl fmt::Display for InvalidAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an address is 0x followed by 64 hexadecimal digits")
    }
}

impl std::error::Error for InvalidAddress {}

impl FromStr for Address {
    type Err = InvalidAddress;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let digits = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .ok_or(InvalidAddress)?;
        if digits.len() != 64 {
            return Err(InvalidAddress);
        }
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(digits, &mut bytes).map_err(|_| InvalidAddress)?;
        Ok(Address(bytes))
    }
}

impl Address {
    /// `0x` and 64 lowercase hex digits, on the stack: the server formats ~180 addresses per
    /// game (views, events, stored rows), and `hex::encode` into a `String` made that 8% of
    /// its CPU in a callgrind profile of `triad serve` (`bench/callgrind.sh`).
    fn hex(&self) -> [u8; 66] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 66];
        text[..2].copy_from_slice(b"0x");
        for (pair, byte) in text[2..].chunks_exact_mut(2).zip(self.0) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 0x0f)];
        }
        text
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(core::str::from_utf8(&self.hex()).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Short form keeps test failures readable.
        write!(f, "0x{}…", hex::encode(&self.0[..4]))
    }
}

impl Serialize for Address {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // One string, not `collect_str`'s trip through `fmt`.
        let hex = self.hex();
        let text = core::str::from_utf8(&hex).map_err(serde::ser::Error::custom)?;
        s.serialize_str(text)
    }
}

impl<'de> Deserialize<'de> for Address {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A match's id, assigned by the engine in creation order starting at 1.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MatchId(pub u64);

impl fmt::Display for MatchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for MatchId {
    type Err = core::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(MatchId)
    }
}

/// A client-chosen idempotency key: a command resubmitted with the same key by the same
/// actor applies once.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct IdempotencyKey(pub u128);

#[cfg(test)]
mod tests {
    use super::Address;

    #[test]
    fn display_is_0x_and_64_lower_case_hex_digits_and_parses_back() {
        let mut bytes = [0u8; 32];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37).wrapping_add(0x0f);
        }
        let a = Address::from_bytes(bytes);
        let text = a.to_string();
        assert_eq!(text, format!("0x{}", hex::encode(bytes)));
        assert_eq!(text.parse::<Address>(), Ok(a));
        assert_eq!(Address::ZERO.to_string(), format!("0x{}", "0".repeat(64)));
        assert_eq!(serde_json::to_string(&a).unwrap(), format!("\"{text}\""));
    }
}
