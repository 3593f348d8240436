//! The agent card, for A2A 1.0 clients and for 0.3 clients at once.
//!
//! 1.0 clients read `supportedInterfaces`: JSON-RPC at `/a2a` in protocol version 1.0, and
//! at the same URL in 0.3. A card with a non-empty `supportedInterfaces` is read as a 1.0
//! card by both official SDKs, which then ignore the 0.3 fields. Of two JSON-RPC entries
//! they take the one whose version is 1.0 (a2a-sdk 1.3.0's `ClientFactory`, @a2a-js/sdk
//! 1.3.0's `ClientFactory`); each uses its 0.3-compatibility transport (`message/send`)
//! when the entry it took says 0.3: a2a-sdk when that is the only JSON-RPC entry, @a2a-js
//! with `legacyCompat` enabled. 0.3 clients read the 0.3 fields the card keeps:
//! `protocolVersion`, `url`, `preferredTransport` and `security`. The bearer scheme is
//! written in both forms at once: 0.3's `{"type": "http", "scheme": "bearer"}` and 1.0's
//! `{"httpAuthSecurityScheme": {…}}` (each reader ignores the other's fields; a2a-sdk's
//! reader turns the first into the second).

use serde_json::{Value, json};
use triad_protocol::App;

use crate::api::ApiState;

/// The 1.0 protocol version, as the card and the `A2A-Version` header say it.
pub const V1: &str = "1.0";
/// The 0.3 protocol version, as the card's `supportedInterfaces` says it.
pub const V03: &str = "0.3";
/// The 0.3 protocol version, as a 0.3 card's `protocolVersion` says it.
pub const V03_CARD: &str = "0.3.0";

/// The server's public base URL (`--public-url`, else `http://` and the address it listens
/// on), without a trailing `/`. Never from the request: a forged `Host` or
/// `X-Forwarded-Proto` would make the card send agents (and their tokens) elsewhere.
pub fn base_url(state: &ApiState) -> String {
    if state.settings.public_url.is_empty() {
        format!("http://{}", state.settings.addr)
    } else {
        state.settings.public_url.trim_end_matches('/').to_owned()
    }
}

fn skill(app: App) -> Value {
    let example = |action: &str, payload: Value| {
        json!({"appId": app.id(), "action": action, "payload": payload}).to_string()
    };
    let (role, opening) = match app {
        App::TicTacToe => (
            "X",
            json!({"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}),
        ),
        App::Sos => (
            "first",
            json!({"seq":1,"replyTo":0,"position":4,"mark":"S","board":["","","","","S","","","",""]}),
        ),
    };
    let manifest = app.manifest();
    json!({
        "id": app.id(),
        "name": manifest.name,
        "description": format!(
            "{}. Send app actions as a data part {{appId, action, payload}}: propose \
             (claiming a role), then your moves; the computer answers with its accept, its moves \
             and the result. Triad's engine referees every move. metadata.level: perfect \
             (default), casual or random.",
            manifest.description
        ),
        "tags": ["game", app.id(), "app-actions", "refereed"],
        "examples": [example("propose", json!({"seq":0,"role":role})), example("move", opening)],
        "inputModes": ["application/json"],
        "outputModes": ["application/json"],
    })
}

/// The agent card of Triad's computer player.
pub fn card(state: &ApiState) -> Value {
    let base = base_url(state);
    let endpoint = format!("{base}/a2a");
    let login = "A Triad login token: POST /api/auth/challenge {public_key} with your \
        Ed25519 key, sign the message, POST /api/auth/login (or run `triad login`).";
    json!({
        "name": "Triad computer",
        "description": "Triad's built-in computer player for tic-tac-toe and SOS, over the A2A \
            tic-tac-toe protocol's app actions. It never loses at perfect strength; every game is \
            refereed by Triad's engine. A game is a task: your turn is input-required, the end \
            is completed (canceled when called off).",
        "supportedInterfaces": [
            {"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": V1},
            {"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": V03},
        ],
        "provider": {"organization": "Triad", "url": base},
        "version": env!("CARGO_PKG_VERSION"),
        "documentationUrl": format!("{base}/api/openapi.json"),
        "capabilities": {"streaming": true, "pushNotifications": false, "extendedAgentCard": false},
        "securitySchemes": {
            "bearer": {
                "httpAuthSecurityScheme": {"scheme": "bearer", "description": login},
                "type": "http",
                "scheme": "bearer",
                "description": login,
            }
        },
        "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": App::ALL.iter().map(|&a| skill(a)).collect::<Vec<_>>(),
        // For 0.3 clients.
        "protocolVersion": V03_CARD,
        "url": endpoint,
        "preferredTransport": "JSONRPC",
        "security": [{"bearer": []}],
    })
}
