//! The signed envelope: a message signed with the sender's Ed25519 key, so that nobody —
//! not even the relay — can speak for another agent.
//!
//! The signature covers a fixed text naming the sender, the recipient, the app, the action
//! and the payload in its canonical form ([`Message::payload_json`]):
//!
//! ```text
//! triad-agent-message/v1
//! from: 0x…
//! to: 0x…
//! app: tic-tac-toe
//! action: move
//! payload: {"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}
//! ```
//!
//! On the wire the envelope travels beside the unsigned fields, which stay exactly the A2A
//! protocol's: `"signed": {"publicKey": "<64 hex>", "signature": "<128 hex>"}`. The public key's
//! address must be the sender's. Include a `gameId` in the payload to keep a signed message from
//! being replayed into a later game between the same two agents.

use serde::{Deserialize, Serialize};
use triad_identity::{SigningKey, address_of, format_address, parse_public_key, public_key_hex};

use crate::{App, Message, ProtocolError};

/// The first line of every signed text: the format and its version.
pub const SIGNING_DOMAIN: &str = "triad-agent-message/v1";

/// A message's signature, and the key that made it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Signed {
    /// The sender's Ed25519 public key, 64 hex digits.
    pub public_key: String,
    /// The Ed25519 signature of [`signing_text`], 128 hex digits.
    pub signature: String,
}

/// The exact text a signature covers.
#[must_use]
pub fn signing_text(from: &[u8; 32], to: &[u8; 32], app: App, message: &Message) -> String {
    format!(
        "{SIGNING_DOMAIN}\nfrom: {}\nto: {}\napp: {}\naction: {}\npayload: {}",
        format_address(from),
        format_address(to),
        app.id(),
        message.action().id(),
        message.payload_json(app),
    )
}

/// Signs a message from the key's address to `to`.
#[must_use]
pub fn sign(key: &SigningKey, to: &[u8; 32], app: App, message: &Message) -> Signed {
    let from = address_of(&key.verifying_key());
    let text = signing_text(&from, to, app, message);
    Signed {
        public_key: public_key_hex(&key.verifying_key()),
        signature: triad_identity::sign_ed25519(key, text.as_bytes()),
    }
}

/// Checks that `signed` is `from`'s signature of the message to `to`.
///
/// # Errors
/// [`ProtocolError::BadEnvelope`]: the key is malformed or weak, belongs to another
/// address, or the signature does not verify (strictly) for this exact message.
pub fn verify(
    signed: &Signed,
    from: &[u8; 32],
    to: &[u8; 32],
    app: App,
    message: &Message,
) -> Result<(), ProtocolError> {
    let bad = |problem: String| ProtocolError::BadEnvelope { problem };
    let key = parse_public_key(&signed.public_key).map_err(|e| bad(e.to_string()))?;
    if &address_of(&key) != from {
        return Err(bad(format!(
            "the public key belongs to {}, not to the sender {}",
            format_address(&address_of(&key)),
            format_address(from)
        )));
    }
    let text = signing_text(from, to, app, message);
    triad_identity::verify_ed25519(&signed.public_key, text.as_bytes(), &signed.signature)
        .map_err(|e| bad(e.to_string()))?;
    Ok(())
}
