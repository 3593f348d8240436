//! The login challenge message: a fixed, SIWE-like text that names the site, the
//! address, a one-time nonce and a short validity window.

use std::fmt;
use std::str::FromStr;

use ed25519_dalek::VerifyingKey;
use rand::CryptoRng;

use crate::address::{address_of, format_address, parse_address};
use crate::signature::parse_public_key;
use crate::timestamp::{MAX_TIMESTAMP_MS, format_timestamp, parse_timestamp};
use crate::{AuthError, Scheme};

/// The longest a challenge may stay valid: five minutes, in milliseconds.
pub const MAX_CHALLENGE_LIFETIME_MS: u64 = 5 * 60 * 1000;

/// Bounds on the nonce length, in characters.
const NONCE_LEN: std::ops::RangeInclusive<usize> = 16..=64;

/// Bounds on the domain length, in characters.
const DOMAIN_LEN: std::ops::RangeInclusive<usize> = 1..=253;

/// What follows the domain on the first line.
const HEADER_SUFFIX: &str = " wants you to sign in to Triad with your account:";

/// The fixed statement, shown to the person by their wallet.
const STATEMENT: &str = "Signing this message proves you control this account. It is not a transaction and costs nothing.";

/// The format version line.
const VERSION_LINE: &str = "Version: 1";

/// The number of lines in a rendered message.
const LINE_COUNT: usize = 9;

/// Longer than any valid message; longer input is refused before it is split.
const MAX_MESSAGE_LEN: usize = 1024;

/// A login challenge: what the server issues and the player signs.
///
/// # Format
///
/// [`render`](LoginMessage::render) produces nine lines joined by `\n` (LF, no
/// trailing newline), modelled on Sign-In with Ethereum (EIP-4361):
///
/// ```text
/// {domain} wants you to sign in to Triad with your account:
/// {address}
///
/// Signing this message proves you control this account. It is not a transaction and costs nothing.
///
/// Version: 1
/// Nonce: {nonce}
/// Issued At: {issued_at}
/// Expiration Time: {expires_at}
/// ```
///
/// * `domain`: the host (and port) of the Triad server, e.g. `triad.example` or
///   `127.0.0.1:8080`; 1 to 253 characters from `A-Z a-z 0-9 . - : [ ]`.
/// * `address`: `0x` and 64 lowercase hex digits, the Sui address of the key.
/// * `nonce`: 16 to 64 ASCII letters and digits, unique per challenge.
/// * `issued_at`, `expires_at`: UTC as `YYYY-MM-DDTHH:MM:SS.sssZ` (see
///   [`format_timestamp`]); `expires_at` is after `issued_at` by at most
///   [`MAX_CHALLENGE_LIFETIME_MS`].
///
/// The signed bytes are the UTF-8 of that text, exactly. Every field is validated
/// on construction, so a `LoginMessage` always renders to valid text, and
/// [`parse`](LoginMessage::parse) accepts exactly the texts `render` can produce:
/// `LoginMessage::parse(&m.render()) == Ok(m)` and, when `parse(s)` succeeds,
/// `parse(s)?.render() == s`.
///
/// ```
/// use triad_identity::{LoginMessage, MAX_CHALLENGE_LIFETIME_MS};
///
/// let issued_at_ms = 1_767_225_600_000; // 2026-01-01T00:00:00.000Z
/// let message = LoginMessage::new(
///     "triad.example",
///     [0xab; 32],
///     "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
///     issued_at_ms,
///     issued_at_ms + MAX_CHALLENGE_LIFETIME_MS,
/// )?;
/// let text = message.render();
/// assert!(text.starts_with("triad.example wants you to sign in to Triad with your account:\n0xabab"));
/// assert!(text.ends_with("\nExpiration Time: 2026-01-01T00:05:00.000Z"));
/// assert_eq!(LoginMessage::parse(&text)?, message);
/// # Ok::<(), triad_identity::AuthError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LoginMessage {
    domain: String,
    address: [u8; 32],
    nonce: String,
    issued_at_ms: u64,
    expires_at_ms: u64,
}

impl LoginMessage {
    /// Builds a login message after checking every field against the format.
    ///
    /// # Errors
    ///
    /// [`AuthError::InvalidLoginMessage`] for a bad domain or nonce, or a validity
    /// window that is empty, reversed or longer than [`MAX_CHALLENGE_LIFETIME_MS`];
    /// [`AuthError::InvalidTimestamp`] for a time after the year 9999.
    pub fn new(
        domain: impl Into<String>,
        address: [u8; 32],
        nonce: impl Into<String>,
        issued_at_ms: u64,
        expires_at_ms: u64,
    ) -> Result<LoginMessage, AuthError> {
        let domain = domain.into();
        let nonce = nonce.into();
        check_domain(&domain)?;
        check_nonce(&nonce)?;
        for ms in [issued_at_ms, expires_at_ms] {
            if ms > MAX_TIMESTAMP_MS {
                // Reuse the formatter's error message.
                format_timestamp(ms)?;
            }
        }
        if expires_at_ms <= issued_at_ms {
            return Err(AuthError::login_message(
                "the expiration time must be after the issue time",
            ));
        }
        if expires_at_ms - issued_at_ms > MAX_CHALLENGE_LIFETIME_MS {
            return Err(AuthError::login_message(format!(
                "a challenge may be valid for at most {} ms, this one for {} ms",
                MAX_CHALLENGE_LIFETIME_MS,
                expires_at_ms - issued_at_ms
            )));
        }
        Ok(LoginMessage {
            domain,
            address,
            nonce,
            issued_at_ms,
            expires_at_ms,
        })
    }

    /// The server's host (and port) the message is for.
    pub fn domain(&self) -> &str {
        &self.domain
    }

    /// The address being signed in.
    pub fn address(&self) -> [u8; 32] {
        self.address
    }

    /// The one-time nonce.
    pub fn nonce(&self) -> &str {
        &self.nonce
    }

    /// When the challenge was issued, in milliseconds since the Unix epoch.
    pub fn issued_at_ms(&self) -> u64 {
        self.issued_at_ms
    }

    /// When the challenge stops being valid, in milliseconds since the Unix epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.expires_at_ms
    }

    /// The message text, whose UTF-8 bytes are what the player signs. See the
    /// [type documentation](LoginMessage) for the format.
    pub fn render(&self) -> String {
        // Both times were checked on construction; the fallback is unreachable.
        let time = |ms| format_timestamp(ms).unwrap_or_default();
        format!(
            "{domain}{HEADER_SUFFIX}\n{address}\n\n{STATEMENT}\n\n{VERSION_LINE}\nNonce: {nonce}\nIssued At: {issued_at}\nExpiration Time: {expires_at}",
            domain = self.domain,
            address = format_address(&self.address),
            nonce = self.nonce,
            issued_at = time(self.issued_at_ms),
            expires_at = time(self.expires_at_ms),
        )
    }

    /// Parses a message in exactly the form [`render`](LoginMessage::render)
    /// produces.
    ///
    /// # Errors
    ///
    /// [`AuthError::InvalidLoginMessage`] naming the first line that does not fit,
    /// or [`AuthError::InvalidTimestamp`] for a badly written time.
    pub fn parse(text: &str) -> Result<LoginMessage, AuthError> {
        if text.len() > MAX_MESSAGE_LEN {
            return Err(AuthError::login_message(format!(
                "{} bytes is longer than any login message",
                text.len()
            )));
        }
        if text.contains('\r') {
            return Err(AuthError::login_message(
                "lines must end with \\n alone, not \\r\\n",
            ));
        }
        let lines: Vec<&str> = text.split('\n').collect();
        if lines.len() != LINE_COUNT {
            return Err(AuthError::login_message(format!(
                "expected {LINE_COUNT} lines separated by \\n (and no trailing newline), found {}",
                lines.len()
            )));
        }
        let line_error = |number: usize, expected: &str| {
            AuthError::login_message(format!("line {number} must be {expected}"))
        };
        let domain = lines[0]
            .strip_suffix(HEADER_SUFFIX)
            .ok_or_else(|| line_error(1, &format!("`<domain>{HEADER_SUFFIX}`")))?;
        let address = match parse_address(lines[1]) {
            // Only the lowercase spelling that `render` produces.
            Ok(address) if !lines[1].bytes().any(|byte| byte.is_ascii_uppercase()) => address,
            _ => return Err(line_error(2, "the address: 0x and 64 lowercase hex digits")),
        };
        for (index, expected) in [(2, ""), (3, STATEMENT), (4, ""), (5, VERSION_LINE)] {
            if lines[index] != expected {
                let expected = if expected.is_empty() {
                    "empty".to_owned()
                } else {
                    format!("`{expected}`")
                };
                return Err(line_error(index + 1, &expected));
            }
        }
        let nonce = lines[6]
            .strip_prefix("Nonce: ")
            .ok_or_else(|| line_error(7, "`Nonce: <nonce>`"))?;
        let issued_at = lines[7]
            .strip_prefix("Issued At: ")
            .ok_or_else(|| line_error(8, "`Issued At: <time>`"))?;
        let expires_at = lines[8]
            .strip_prefix("Expiration Time: ")
            .ok_or_else(|| line_error(9, "`Expiration Time: <time>`"))?;
        LoginMessage::new(
            domain,
            address,
            nonce,
            parse_timestamp(issued_at)?,
            parse_timestamp(expires_at)?,
        )
    }

    /// Checks that `now_ms` lies in the validity window
    /// `issued_at_ms <= now_ms < expires_at_ms`.
    ///
    /// # Errors
    ///
    /// [`AuthError::ChallengeExpired`] or [`AuthError::ChallengeNotYetValid`].
    pub fn check_time(&self, now_ms: u64) -> Result<(), AuthError> {
        if now_ms >= self.expires_at_ms {
            return Err(AuthError::ChallengeExpired {
                expired_at: format_timestamp(self.expires_at_ms).unwrap_or_default(),
            });
        }
        if now_ms < self.issued_at_ms {
            return Err(AuthError::ChallengeNotYetValid {
                issued_at: format_timestamp(self.issued_at_ms).unwrap_or_default(),
            });
        }
        Ok(())
    }

    /// Everything a server checks when a login arrives, except that the challenge
    /// is unused (that needs storage): the message is within its validity window at
    /// `now_ms`, `public_key_hex` is the key of the message's address, and
    /// `signature` in `scheme` verifies over [`render`](LoginMessage::render)'s
    /// bytes. Returns the verified key.
    ///
    /// # Errors
    ///
    /// The time errors of [`check_time`](LoginMessage::check_time),
    /// [`AuthError::AddressMismatch`], and the errors of [`Scheme::verify`].
    pub fn verify(
        &self,
        scheme: Scheme,
        public_key_hex: &str,
        signature: &str,
        now_ms: u64,
    ) -> Result<VerifyingKey, AuthError> {
        self.check_time(now_ms)?;
        let key = parse_public_key(public_key_hex)?;
        let address = address_of(&key);
        if address != self.address {
            return Err(AuthError::AddressMismatch {
                expected: format_address(&self.address),
                actual: format_address(&address),
            });
        }
        // The key is parsed (and checked) once, here, for the address and the signature.
        scheme.verify_parsed(&key, self.render().as_bytes(), signature)?;
        Ok(key)
    }
}

impl fmt::Display for LoginMessage {
    /// Writes [`render`](LoginMessage::render)'s text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl FromStr for LoginMessage {
    type Err = AuthError;

    /// Same as [`LoginMessage::parse`].
    fn from_str(text: &str) -> Result<LoginMessage, AuthError> {
        LoginMessage::parse(text)
    }
}

/// A fresh nonce for a login challenge: 32 lowercase hex digits (128 random bits).
///
/// Pass a cryptographically secure generator, such as
/// `rand::rand_core::UnwrapErr(rand::rngs::SysRng)` (rand's `sys_rng` feature).
pub fn generate_nonce<R: CryptoRng + ?Sized>(rng: &mut R) -> String {
    let mut bytes = [0; 16];
    rng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

fn check_domain(domain: &str) -> Result<(), AuthError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']');
    if !DOMAIN_LEN.contains(&domain.len()) || !domain.chars().all(allowed) {
        return Err(AuthError::login_message(format!(
            "the domain must be 1 to 253 characters from A-Z a-z 0-9 . - : [ ] (a host and optional port), got {domain:?}"
        )));
    }
    Ok(())
}

fn check_nonce(nonce: &str) -> Result<(), AuthError> {
    if !NONCE_LEN.contains(&nonce.len()) || !nonce.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(AuthError::login_message(format!(
            "the nonce must be 16 to 64 ASCII letters and digits, got {nonce:?}"
        )));
    }
    Ok(())
}

/// The text a player signs to put their name to one move, so that a match's transcript
/// proves the move was theirs (`docs/transcript.md`). Lines joined by `\n`, no final
/// newline:
///
/// ```text
/// triad-move/v1
/// server: <the server's transcript key id, 16 hex digits>
/// match: <match id>
/// seq: <marks on the board after the move>
/// cell: <0-8>
/// mark: <X, O or S>
/// by: <the mover's address>
/// ```
///
/// The key id binds the signature to one server's matches: the same words on another
/// server's match are another text.
///
/// ```
/// let text = triad_identity::move_message("00112233aabbccdd", 7, 1, 4, 'X', "0xab");
/// assert_eq!(text, "triad-move/v1\nserver: 00112233aabbccdd\nmatch: 7\nseq: 1\ncell: 4\nmark: X\nby: 0xab");
/// ```
#[must_use]
pub fn move_message(
    server_key_id: &str,
    match_id: u64,
    seq: u8,
    cell: u8,
    mark: char,
    by: &str,
) -> String {
    format!(
        "triad-move/v1\nserver: {server_key_id}\nmatch: {match_id}\nseq: {seq}\ncell: {cell}\nmark: {mark}\nby: {by}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SigningKey, sign_ed25519};

    const ISSUED: u64 = 1_767_225_600_000;
    const NONCE: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

    fn message() -> LoginMessage {
        LoginMessage::new("triad.example", [0x11; 32], NONCE, ISSUED, ISSUED + 60_000).unwrap()
    }

    #[test]
    fn renders_the_documented_text() {
        let expected = format!(
            "triad.example wants you to sign in to Triad with your account:\n\
             0x{}\n\
             \n\
             Signing this message proves you control this account. It is not a transaction and costs nothing.\n\
             \n\
             Version: 1\n\
             Nonce: {NONCE}\n\
             Issued At: 2026-01-01T00:00:00.000Z\n\
             Expiration Time: 2026-01-01T00:01:00.000Z",
            "11".repeat(32)
        );
        assert_eq!(message().render(), expected);
        assert_eq!(message().to_string(), expected);
        assert_eq!(expected.parse::<LoginMessage>(), Ok(message()));
    }

    #[test]
    fn construction_enforces_the_format() {
        let new = |domain: &str, nonce: &str, issued: u64, expires: u64| {
            LoginMessage::new(domain, [0; 32], nonce, issued, expires)
        };
        assert!(new("127.0.0.1:8080", NONCE, 0, 1).is_ok());
        assert!(new("[::1]:8080", NONCE, 0, MAX_CHALLENGE_LIFETIME_MS).is_ok());
        for (domain, nonce, issued, expires) in [
            ("", NONCE, 0, 1),
            ("evil.example\nNonce: x", NONCE, 0, 1),
            ("triad.example/path", NONCE, 0, 1),
            ("tríad.example", NONCE, 0, 1),
            ("triad.example", "short", 0, 1),
            ("triad.example", "0f1e2d3c4b5a6978-796a5b4c3d2e1f0", 0, 1),
            ("triad.example", NONCE, 1, 1),
            ("triad.example", NONCE, 2, 1),
            ("triad.example", NONCE, 0, MAX_CHALLENGE_LIFETIME_MS + 1),
        ] {
            let err = new(domain, nonce, issued, expires).unwrap_err();
            assert_eq!(err.code(), "invalid_login_message", "{domain:?} {nonce:?}");
        }
        assert!(new(&"a".repeat(253), NONCE, 0, 1).is_ok());
        assert!(new(&"a".repeat(254), NONCE, 0, 1).is_err());
        assert!(new("triad.example", &"a".repeat(64), 0, 1).is_ok());
        assert!(new("triad.example", &"a".repeat(65), 0, 1).is_err());
        let err = new(
            "triad.example",
            NONCE,
            MAX_TIMESTAMP_MS,
            MAX_TIMESTAMP_MS + 1,
        )
        .unwrap_err();
        assert_eq!(err.code(), "invalid_timestamp");
    }

    #[test]
    fn parse_names_the_line_that_is_wrong() {
        let text = message().render();
        let problem = |text: &str| match LoginMessage::parse(text) {
            Err(AuthError::InvalidLoginMessage { problem }) => problem,
            other => panic!("{text:?} gave {other:?}"),
        };
        assert!(problem(&text.replace("wants you", "wishes you")).starts_with("line 1 "));
        assert!(problem(&text.replace("0x1111", "0X1111")).starts_with("line 2 "));
        assert!(problem(&text.replace("0x1111", "0xAA11")).starts_with("line 2 "));
        assert!(problem(&text.replace("costs nothing.", "costs nothing")).starts_with("line 4 "));
        assert!(problem(&text.replace("Version: 1", "Version: 2")).starts_with("line 6 "));
        assert!(problem(&text.replace("Nonce: ", "Nonce:")).starts_with("line 7 "));
        assert!(problem(&text.replace("\n", "\r\n")).contains("\\r\\n"));
        assert!(problem(&format!("{text}\n")).starts_with("expected 9 lines"));
        assert!(problem(&"x".repeat(2000)).contains("longer than any"));
        let err = LoginMessage::parse(&text.replace(".000Z", "Z")).unwrap_err();
        assert_eq!(err.code(), "invalid_timestamp");
    }

    #[test]
    fn the_validity_window_is_half_open() {
        let message = message();
        assert!(message.check_time(ISSUED).is_ok());
        assert!(message.check_time(ISSUED + 59_999).is_ok());
        let expired = message.check_time(ISSUED + 60_000).unwrap_err();
        assert_eq!(
            expired,
            AuthError::ChallengeExpired {
                expired_at: "2026-01-01T00:01:00.000Z".to_owned()
            }
        );
        assert_eq!(
            message.check_time(ISSUED - 1).unwrap_err().code(),
            "challenge_not_yet_valid"
        );
    }

    /// A key, its public key in hex, and a message naming its address, valid for 1 s.
    fn signer_and_message() -> (SigningKey, String, LoginMessage) {
        let key = SigningKey::from_bytes(&[9; 32]);
        let public_key = crate::public_key_hex(&key.verifying_key());
        let message = LoginMessage::new(
            "triad.example",
            address_of(&key.verifying_key()),
            NONCE,
            ISSUED,
            ISSUED + 1_000,
        )
        .unwrap();
        (key, public_key, message)
    }

    #[test]
    fn verify_checks_time_address_and_signature() {
        let (key, public_key, message) = signer_and_message();
        for scheme in Scheme::ALL {
            let signature = scheme.sign(&key, message.render().as_bytes());
            let verified = message
                .verify(scheme, &public_key, &signature, ISSUED)
                .unwrap();
            assert_eq!(verified, key.verifying_key());
            let late = message.verify(scheme, &public_key, &signature, ISSUED + 1_000);
            assert_eq!(late.unwrap_err().code(), "challenge_expired");
        }

        // A valid signature by another key, over a message naming the first address.
        let other = SigningKey::from_bytes(&[10; 32]);
        let other_public = crate::public_key_hex(&other.verifying_key());
        let signature = sign_ed25519(&other, message.render().as_bytes());
        let err = message
            .verify(Scheme::Ed25519, &other_public, &signature, ISSUED)
            .unwrap_err();
        assert_eq!(err.code(), "address_mismatch");

        // A signature over a different message.
        let signature = sign_ed25519(&key, b"something else");
        let err = message
            .verify(Scheme::Ed25519, &public_key, &signature, ISSUED)
            .unwrap_err();
        assert_eq!(err, AuthError::BadSignature);
    }

    #[test]
    fn verify_refuses_what_scheme_verify_refuses() {
        // LoginMessage::verify parses the key once and checks the signature with it; each
        // bad key or signature must still get the error Scheme::verify gives on its own.
        let (key, public_key, message) = signer_and_message();
        let bytes = message.render();
        for scheme in Scheme::ALL {
            let good = scheme.sign(&key, bytes.as_bytes());
            let other = scheme.sign(&SigningKey::from_bytes(&[10; 32]), bytes.as_bytes());
            let cases = [
                (public_key.clone(), other),
                (public_key.clone(), good[..good.len() - 4].to_owned()),
                (public_key.clone(), "zz".repeat(64)),
                (
                    format!(
                        "{}{}",
                        if public_key.starts_with('0') { 1 } else { 0 },
                        &public_key[1..]
                    ),
                    good.clone(),
                ),
                ("ff".repeat(32), good.clone()),
                (format!("{public_key}00"), good.clone()),
                // The identity point: canonical, on the curve, of small order.
                (format!("01{}", "00".repeat(31)), good.clone()),
            ];
            for (public, signature) in cases {
                let alone = scheme.verify(&public, bytes.as_bytes(), &signature);
                let login = message.verify(scheme, &public, &signature, ISSUED);
                match alone {
                    Ok(_) => panic!("{scheme} accepted {public} {signature}"),
                    Err(e)
                        if login
                            .as_ref()
                            .is_err_and(|l| l.code() == "address_mismatch") =>
                    {
                        // A valid key of another address is refused before the signature.
                        assert_ne!(public, public_key, "{e}");
                    }
                    Err(e) => assert_eq!(login.unwrap_err(), e, "{scheme} {public} {signature}"),
                }
            }
        }
    }

    #[test]
    fn nonces_are_128_bit_hex_and_valid() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
        let first = generate_nonce(&mut rng);
        let second = generate_nonce(&mut rng);
        assert_eq!(first.len(), 32);
        assert_ne!(first, second);
        assert!(check_nonce(&first).is_ok());
    }
}
