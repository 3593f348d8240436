//! The JSON bodies of the two login endpoints, for servers and Rust clients.
//!
//! ```text
//! POST /api/auth/challenge  ChallengeRequest  -> ChallengeResponse
//! POST /api/auth/login      LoginRequest      -> LoginResponse
//! ```
//!
//! Field names are exactly as shown in each type's example. Times are RFC 3339 UTC
//! strings in the one form [`format_timestamp`](crate::format_timestamp) writes.

use serde::{Deserialize, Serialize};

use crate::Scheme;

/// `POST /api/auth/challenge` request body.
///
/// ```
/// # use triad_identity::wire::ChallengeRequest;
/// let body = r#"{"public_key": "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8"}"#;
/// let request: ChallengeRequest = serde_json::from_str(body)?;
/// assert!(triad_identity::parse_public_key(&request.public_key).is_ok());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChallengeRequest {
    /// The player's Ed25519 public key, 64 hex digits.
    pub public_key: String,
}

/// `POST /api/auth/challenge` response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChallengeResponse {
    /// Opaque identifier to send back with the signature.
    pub challenge_id: String,
    /// The text to sign, a rendered [`LoginMessage`](crate::LoginMessage). Sign its
    /// UTF-8 bytes exactly as received.
    pub message: String,
    /// When the challenge expires, e.g. `2026-01-01T00:05:00.000Z`.
    pub expires_at: String,
}

/// `POST /api/auth/login` request body.
///
/// `scheme` may be omitted and then means `ed25519`.
///
/// ```
/// # use triad_identity::{Scheme, wire::LoginRequest};
/// let body = r#"{"challenge_id": "c1", "public_key": "ab", "signature": "cd"}"#;
/// let request: LoginRequest = serde_json::from_str(body)?;
/// assert_eq!(request.scheme, Scheme::Ed25519);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginRequest {
    /// The `challenge_id` from [`ChallengeResponse`].
    pub challenge_id: String,
    /// The same public key the challenge was requested for, 64 hex digits.
    pub public_key: String,
    /// For `ed25519`, 128 hex digits; for `sui-personal-message`, the base64
    /// `signature` string `signPersonalMessage` returned.
    pub signature: String,
    /// How `signature` was made.
    #[serde(default)]
    pub scheme: Scheme,
}

/// `POST /api/auth/login` response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginResponse {
    /// Bearer token for later requests.
    pub token: String,
    /// The player's address, `0x` and 64 lowercase hex digits.
    pub address: String,
    /// When the token expires, e.g. `2026-01-02T00:00:00.000Z`.
    pub expires_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_request_accepts_both_schemes_and_refuses_others() {
        let body = |scheme: &str| {
            format!(
                r#"{{"challenge_id":"c","public_key":"p","signature":"s","scheme":"{scheme}"}}"#
            )
        };
        let parse = |text: &str| serde_json::from_str::<LoginRequest>(text);
        assert_eq!(parse(&body("ed25519")).unwrap().scheme, Scheme::Ed25519);
        assert_eq!(
            parse(&body("sui-personal-message")).unwrap().scheme,
            Scheme::SuiPersonalMessage
        );
        assert!(parse(&body("ED25519")).is_err());
        let round_trip = parse(&body("sui-personal-message")).unwrap();
        assert_eq!(
            parse(&serde_json::to_string(&round_trip).unwrap()).unwrap(),
            round_trip
        );
    }
}
