//! The crate's two error types: [`AuthError`] for the pure login and signature
//! checks, [`KeyFileError`] for reading and writing key files.

use std::io;
use std::path::PathBuf;

/// Why a public key, signature, login message or timestamp was refused.
///
/// Every variant has a stable snake_case [`code`](AuthError::code) that a server can
/// put in an API error body, and a message (its `Display`) written for the person
/// holding the key: it says what was wrong and what to do about it. None of the
/// functions in this crate panic on bad input; they return one of these.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A hex field has the wrong length or a character that is not a hex digit.
    #[error("{field} must be exactly {expected_digits} hex digits (0-9, a-f): {problem}")]
    InvalidHex {
        /// The wire field: `public_key`, `signature`, `secret_key` or `address`.
        field: &'static str,
        /// How many hex digits the field must have.
        expected_digits: usize,
        /// What was wrong with the value.
        problem: String,
    },
    /// 32 bytes that do not decode to a point on the Ed25519 curve.
    #[error(
        "public_key is not a valid Ed25519 public key; send the 32-byte public key of the key pair that signs"
    )]
    InvalidPublicKey,
    /// A public key of small order, for which signatures can be forged without a
    /// secret key.
    #[error(
        "public_key is a small-order (weak) Ed25519 point that no honest key generator produces; generate a new key pair"
    )]
    WeakPublicKey,
    /// A signature that cannot be decoded (bad base64, wrong length).
    #[error("the signature is malformed: {problem}")]
    MalformedSignature {
        /// What was wrong with the value.
        problem: String,
    },
    /// A Sui signature made by a key type other than Ed25519.
    #[error(
        "the wallet signed with a {scheme} key (Sui signature flag 0x{flag:02x}); only Ed25519 accounts (flag 0x00) can log in, so choose an Ed25519 account in the wallet"
    )]
    UnsupportedSuiKeyScheme {
        /// The first byte of the Sui serialized signature.
        flag: u8,
        /// The name Sui gives that flag.
        scheme: &'static str,
    },
    /// The public key inside a Sui signature is not the `public_key` that was sent.
    #[error(
        "the public key inside the Sui signature is not public_key; send the public key of the account that signed"
    )]
    PublicKeyMismatch,
    /// The login message names another address than the one derived from the key.
    #[error(
        "the login message was issued for {expected}, but public_key belongs to {actual}; request a challenge for this key"
    )]
    AddressMismatch {
        /// The address in the message.
        expected: String,
        /// The address of the public key that was sent.
        actual: String,
    },
    /// A well-formed signature that does not verify.
    #[error(
        "the signature does not match this public key and message; sign the exact UTF-8 bytes of the challenge message, unchanged, with the key in public_key"
    )]
    BadSignature,
    /// A `scheme` value other than `ed25519` or `sui-personal-message`.
    #[error("unknown signature scheme {found:?}; use \"ed25519\" or \"sui-personal-message\"")]
    UnknownScheme {
        /// The value that was sent.
        found: String,
    },
    /// A login message (or one of its fields) that does not follow the format.
    #[error("invalid login message: {problem}")]
    InvalidLoginMessage {
        /// What was wrong.
        problem: String,
    },
    /// A timestamp that is not `YYYY-MM-DDTHH:MM:SS.sssZ` between 1970 and 9999.
    #[error("invalid timestamp: {problem}")]
    InvalidTimestamp {
        /// What was wrong.
        problem: String,
    },
    /// The login message's expiration time has passed.
    #[error(
        "the login challenge expired at {expired_at}; request a new challenge and sign it promptly"
    )]
    ChallengeExpired {
        /// The message's expiration time, RFC 3339.
        expired_at: String,
    },
    /// The login message was issued after the time it was checked at.
    #[error(
        "the login challenge is not valid before {issued_at}; check the clock of the machine that verifies it"
    )]
    ChallengeNotYetValid {
        /// The message's issue time, RFC 3339.
        issued_at: String,
    },
}

impl AuthError {
    /// The stable snake_case name of this error, for API responses and logs.
    ///
    /// ```
    /// # use triad_identity::verify_ed25519;
    /// let err = verify_ed25519("00", b"hi", "00").unwrap_err();
    /// assert_eq!(err.code(), "invalid_hex");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            AuthError::InvalidHex { .. } => "invalid_hex",
            AuthError::InvalidPublicKey => "invalid_public_key",
            AuthError::WeakPublicKey => "weak_public_key",
            AuthError::MalformedSignature { .. } => "malformed_signature",
            AuthError::UnsupportedSuiKeyScheme { .. } => "unsupported_sui_key_scheme",
            AuthError::PublicKeyMismatch => "public_key_mismatch",
            AuthError::AddressMismatch { .. } => "address_mismatch",
            AuthError::BadSignature => "bad_signature",
            AuthError::UnknownScheme { .. } => "unknown_scheme",
            AuthError::InvalidLoginMessage { .. } => "invalid_login_message",
            AuthError::InvalidTimestamp { .. } => "invalid_timestamp",
            AuthError::ChallengeExpired { .. } => "challenge_expired",
            AuthError::ChallengeNotYetValid { .. } => "challenge_not_yet_valid",
        }
    }

    pub(crate) fn login_message(problem: impl Into<String>) -> AuthError {
        AuthError::InvalidLoginMessage {
            problem: problem.into(),
        }
    }

    pub(crate) fn timestamp(problem: impl Into<String>) -> AuthError {
        AuthError::InvalidTimestamp {
            problem: problem.into(),
        }
    }
}

/// Why a key file could not be found, read, parsed or written.
///
/// Like [`AuthError`], every variant has a stable snake_case
/// [`code`](KeyFileError::code) and a message that says what to do. Messages name
/// the path but never include key material.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyFileError {
    /// Neither `$TRIAD_KEY_FILE` nor a user config directory is available.
    #[error(
        "cannot find a config directory for the key file (no $XDG_CONFIG_HOME or $HOME); set TRIAD_KEY_FILE to the key file's path"
    )]
    NoConfigDir,
    /// There is no file at the path.
    #[error("no key file at {path}; create one with `triad keygen`")]
    NotFound {
        /// The path that was looked up.
        path: PathBuf,
    },
    /// [`KeyFile::save`](crate::KeyFile::save) without `force` found a file there.
    #[error(
        "a key file already exists at {path}; refusing to overwrite it, because its key would be lost (replace it deliberately with `triad keygen --force`)"
    )]
    AlreadyExists {
        /// The path that already exists.
        path: PathBuf,
    },
    /// The file can be read or written by users other than its owner.
    #[error(
        "key file {path} is accessible by other users (mode {mode:03o}); run `chmod 600 {path}` and, if others could read it, treat the key as leaked and make a new one"
    )]
    InsecurePermissions {
        /// The key file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file is not a key file in the documented format.
    #[error("{path} is not a valid Triad key file: {problem}")]
    Malformed {
        /// The key file.
        path: PathBuf,
        /// What was wrong, without key material.
        problem: String,
    },
    /// An operating-system error while reading or writing.
    #[error("could not {action} {path}: {source}")]
    Io {
        /// What was being done, e.g. `read` or `create directory`.
        action: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl KeyFileError {
    /// The stable snake_case name of this error, for logs and scripts.
    pub fn code(&self) -> &'static str {
        match self {
            KeyFileError::NoConfigDir => "no_config_dir",
            KeyFileError::NotFound { .. } => "key_file_not_found",
            KeyFileError::AlreadyExists { .. } => "key_file_exists",
            KeyFileError::InsecurePermissions { .. } => "key_file_insecure_permissions",
            KeyFileError::Malformed { .. } => "key_file_malformed",
            KeyFileError::Io { .. } => "key_file_io",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_auth_errors() -> Vec<AuthError> {
        vec![
            AuthError::InvalidHex {
                field: "public_key",
                expected_digits: 64,
                problem: "got 3 characters".to_owned(),
            },
            AuthError::InvalidPublicKey,
            AuthError::WeakPublicKey,
            AuthError::MalformedSignature {
                problem: "the signature is empty".to_owned(),
            },
            AuthError::UnsupportedSuiKeyScheme {
                flag: 1,
                scheme: "Secp256k1",
            },
            AuthError::PublicKeyMismatch,
            AuthError::AddressMismatch {
                expected: "0x01".to_owned(),
                actual: "0x02".to_owned(),
            },
            AuthError::BadSignature,
            AuthError::UnknownScheme {
                found: "rsa".to_owned(),
            },
            AuthError::login_message("line 1 must be …"),
            AuthError::timestamp("\"x\" is not a UTC time"),
            AuthError::ChallengeExpired {
                expired_at: "2026-01-01T00:05:00.000Z".to_owned(),
            },
            AuthError::ChallengeNotYetValid {
                issued_at: "2026-01-01T00:00:00.000Z".to_owned(),
            },
        ]
    }

    fn all_key_file_errors() -> Vec<KeyFileError> {
        let path = PathBuf::from("/home/p/.config/triad/key.json");
        vec![
            KeyFileError::NoConfigDir,
            KeyFileError::NotFound { path: path.clone() },
            KeyFileError::AlreadyExists { path: path.clone() },
            KeyFileError::InsecurePermissions {
                path: path.clone(),
                mode: 0o644,
            },
            KeyFileError::Malformed {
                path: path.clone(),
                problem: "it is not UTF-8 text".to_owned(),
            },
            KeyFileError::Io {
                action: "read",
                path,
                source: io::Error::from(io::ErrorKind::PermissionDenied),
            },
        ]
    }

    fn assert_codes_are_distinct_snake_case(codes: &[&str]) {
        let mut seen = std::collections::HashSet::new();
        for code in codes {
            assert!(seen.insert(*code), "duplicate code {code}");
            assert!(
                code.split('_')
                    .all(|word| !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase())),
                "{code} is not snake_case"
            );
        }
    }

    #[test]
    fn codes_are_distinct_and_snake_case() {
        let auth: Vec<&str> = all_auth_errors().iter().map(AuthError::code).collect();
        assert_eq!(auth.len(), 13);
        assert_codes_are_distinct_snake_case(&auth);
        let key_file: Vec<&str> = all_key_file_errors()
            .iter()
            .map(KeyFileError::code)
            .collect();
        assert_eq!(key_file.len(), 6);
        assert_codes_are_distinct_snake_case(&key_file);
    }

    #[test]
    fn messages_name_the_problem_and_the_fix() {
        let insecure = all_key_file_errors().remove(3).to_string();
        assert_eq!(
            insecure,
            "key file /home/p/.config/triad/key.json is accessible by other users (mode 644); run `chmod 600 /home/p/.config/triad/key.json` and, if others could read it, treat the key as leaked and make a new one"
        );
        let unsupported = all_auth_errors().remove(4).to_string();
        assert!(
            unsupported.contains("Secp256k1 key (Sui signature flag 0x01)"),
            "{unsupported}"
        );
        for err in all_auth_errors() {
            assert!(
                err.to_string().len() > 20,
                "{err:?} has too short a message"
            );
        }
    }
}
