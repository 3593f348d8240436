//! JSON objects only. serde's derived structs also read a JSON array, taking their fields in
//! order, so `[1]` sent to `POST /api/ledger/withdraw` was a withdrawal of 1. Every request
//! body ([`super::ApiJson`]), every WebSocket message and the relay's nested objects are
//! read through [`Object`], which asks the deserializer for a map and nothing else: an
//! array, a string, a number, `true` or `null` is refused with serde's "invalid type"
//! (the API's `bad_request`, 200).

use serde::{Deserialize, Deserializer, de::Visitor, forward_to_deserialize_any};

/// A `T` read from a JSON object only.
#[derive(Debug)]
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(MapOnly(d)).map(Object)
    }
}

/// For `#[serde(deserialize_with = "object::optional")]` on a nested `Option<T>` field:
/// `null` (or absent, with `default`) or an object.
///
/// # Errors
/// Any other JSON value.
pub fn optional<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(Option::<Object<T>>::deserialize(d)?.map(|Object(v)| v))
}

/// Reads a `T` from JSON text that must be an object (a WebSocket message).
///
/// # Errors
/// serde_json's, for text that is not JSON, not an object, or not a `T`.
pub fn from_str<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, serde_json::Error> {
    serde_json::from_str::<Object<T>>(text).map(|Object(v)| v)
}

/// A deserializer that answers every request with the inner one's map: whatever `T` asks
/// for (a struct, an internally tagged enum's `any`), only a map is read.
struct MapOnly<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Withdraw {
        amount: u64,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Message {
        Subscribe { topic: String },
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        #[serde(default, deserialize_with = "optional")]
        inner: Option<Withdraw>,
    }

    #[test]
    fn objects_pass_and_nothing_else_does() {
        // What serde alone accepts: the reason for this module.
        assert_eq!(
            serde_json::from_str::<Withdraw>("[1]").unwrap(),
            Withdraw { amount: 1 }
        );
        assert_eq!(
            from_str::<Withdraw>(r#"{"amount":1}"#).unwrap(),
            Withdraw { amount: 1 }
        );
        assert_eq!(
            from_str::<Message>(r#"{"type":"subscribe","topic":"lobby"}"#).unwrap(),
            Message::Subscribe {
                topic: "lobby".into()
            }
        );
        for bad in ["[1]", "1", "\"x\"", "true", "null", "[]"] {
            let e = from_str::<Withdraw>(bad).unwrap_err();
            assert!(e.to_string().contains("invalid type"), "{bad}: {e}");
        }
        assert!(from_str::<Message>(r#"["subscribe","lobby"]"#).is_err());
        assert_eq!(
            from_str::<Outer>(r#"{"inner":{"amount":2}}"#).unwrap(),
            Outer {
                inner: Some(Withdraw { amount: 2 })
            }
        );
        assert_eq!(
            from_str::<Outer>(r#"{"inner":null}"#).unwrap(),
            Outer { inner: None }
        );
        assert_eq!(from_str::<Outer>("{}").unwrap(), Outer { inner: None });
        assert!(from_str::<Outer>(r#"{"inner":[2]}"#).is_err());
    }
}
