//! Amounts of money: integer minor units held as `u128` (10^18 wei is one ether; `u128` holds
//! about 3.4 * 10^20 ether), written as canonical decimal text wherever they leave Rust.
//!
//! [`parse_amount`] is the one parser of an amount's text, for the API, the WebSocket, the
//! settings and the event log: digits only, no sign, no spaces, no decimal point, no leading
//! zero (but `"0"`). A JSON number cannot carry such an amount exactly past 2^53 in
//! JavaScript, so every amount is serialised as a JSON string ([`text`]); the decoder still
//! takes a whole JSON number, as logs written before amounts were strings hold them.

use core::fmt;

/// Why a text is not an amount.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AmountError {
    /// Not canonical decimal: empty, a sign, a space, a decimal point, a leading zero, or
    /// any other character than a digit.
    NotCanonical,
    /// More than `u128::MAX` (340282366920938463463374607431768211455) minor units.
    TooLarge,
}

impl fmt::Display for AmountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AmountError::NotCanonical => f.write_str(
                "an amount is a whole number of minor units written in decimal digits, with no \
                 sign, spaces, decimal point or leading zeros, such as \"1000000000000000000\"",
            ),
            AmountError::TooLarge => write!(f, "an amount is at most {} minor units", u128::MAX),
        }
    }
}

impl std::error::Error for AmountError {}

/// Parses an amount of minor units from canonical decimal text: one or more ASCII digits,
/// with no leading zero unless the whole text is `"0"`, at most `u128::MAX`.
///
/// # Errors
/// [`AmountError::NotCanonical`] for any other form (`"+5"`, `"05"`, `" 5"`, `"5."`,
/// `"-0"`, `""`, `"1e3"`), [`AmountError::TooLarge`] above `u128::MAX`.
pub fn parse_amount(text: &str) -> Result<u128, AmountError> {
    let digits = text.as_bytes();
    let canonical = match digits {
        [] => false,
        [b'0', _, ..] => false,
        _ => digits.iter().all(u8::is_ascii_digit),
    };
    if !canonical {
        return Err(AmountError::NotCanonical);
    }
    text.parse().map_err(|_| AmountError::TooLarge)
}

/// Serde for an amount field: written as a decimal string; read from a canonical decimal
/// string or a whole non-negative JSON number (what logs written before held). Use as
/// `#[serde(with = "triad_engine::amount::text")]`.
pub mod text {
    use core::fmt;

    use serde::{Deserializer, Serializer, de};

    /// Writes the amount as a decimal string.
    ///
    /// # Errors
    /// The serializer's.
    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's `with` passes a reference
    pub fn serialize<S: Serializer>(amount: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(amount)
    }

    /// Reads a canonical decimal string or a whole non-negative number.
    ///
    /// # Errors
    /// Any other JSON value, with [`super::AmountError`]'s message.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        d.deserialize_any(AmountVisitor)
    }

    /// Visits an amount: a string or a non-negative integer. A negative number, or any
    /// number with a fraction or an exponent (serde_json reads JSON's `-0` as a float), is
    /// refused.
    pub(crate) struct AmountVisitor;

    impl de::Visitor<'_> for AmountVisitor {
        type Value = u128;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(
                "an amount: a whole number of minor units as a decimal string (no sign, spaces, \
                 decimal point or leading zeros)",
            )
        }

        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u128, E> {
            Ok(u128::from(v))
        }

        fn visit_u128<E: de::Error>(self, v: u128) -> Result<u128, E> {
            Ok(v)
        }

        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u128, E> {
            // TOML reads every integer as an i64; serde_json only negative ones.
            u128::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
        }

        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u128, E> {
            Err(E::invalid_value(de::Unexpected::Float(v), &self))
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<u128, E> {
            super::parse_amount(v).map_err(E::custom)
        }
    }
}

/// [`text`] for an optional amount (`null` or absent is `None`).
pub mod option_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(transparent)]
    struct Amount(#[serde(with = "super::text")] u128);

    /// Writes the amount as a decimal string, or `null`.
    ///
    /// # Errors
    /// The serializer's.
    #[allow(clippy::ref_option)] // serde's `with` passes a reference
    pub fn serialize<S: Serializer>(amount: &Option<u128>, s: S) -> Result<S::Ok, S::Error> {
        amount.map(Amount).serialize(s)
    }

    /// Reads `null`, or an amount as [`super::text`] does.
    ///
    /// # Errors
    /// Any other JSON value.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u128>, D::Error> {
        Ok(Option::<Amount>::deserialize(d)?.map(|a| a.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_decimal_only() {
        assert_eq!(parse_amount("0"), Ok(0));
        assert_eq!(parse_amount("5"), Ok(5));
        assert_eq!(
            parse_amount("1000000000000000000"),
            Ok(1_000_000_000_000_000_000)
        );
        assert_eq!(parse_amount(&u128::MAX.to_string()), Ok(u128::MAX));
        for bad in [
            "", "+5", "05", "00", " 5", "5 ", "5.", "5.0", "-0", "-5", "1e3", "0x10", "５",
        ] {
            assert_eq!(parse_amount(bad), Err(AmountError::NotCanonical), "{bad:?}");
        }
        assert_eq!(
            parse_amount("340282366920938463463374607431768211456"),
            Err(AmountError::TooLarge)
        );
    }
}
