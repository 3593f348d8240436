//! A small typed client of another A2A agent, for `triad agent --a2a`: it reads the agent's
//! card, picks the newest A2A version both sides speak over JSON-RPC (1.0, else 0.3), logs in
//! when the card asks for a bearer token, and sends messages whose parts are data parts.
//!
//! Written here rather than taken from a crate: the A2A project publishes no official Rust
//! SDK, and the unofficial crates each speak one version, so none can fall back from 1.0 to
//! 0.3 as the official SDKs do. The wire forms are the official SDKs':
//!
//! - **1.0**: JSON-RPC `SendMessage` with the `A2A-Version: 1.0` header; the message is the
//!   protobuf `Message` in its JSON mapping (`messageId`, `contextId`, `taskId`,
//!   `role: "ROLE_USER"`, parts `{"data": …}`) beside an empty `configuration` (a blocking
//!   send, the default), and the result is `{"message": …}` or
//!   `{"task": …}` (task states `TASK_STATE_*`). Numbers inside a data part travel as
//!   protobuf doubles (`1.0`); whole ones are read back as integers.
//! - **0.3**: JSON-RPC `message/send` with `A2A-Version: 0.3`; the message has `kind:
//!   "message"`, `role: "user"` and parts `{"kind": "data", "data": …}`, and the result is a
//!   message or a task told apart by its `kind`.
//!
//! The card may be in either form: 1.0's `supportedInterfaces` (each with its URL, binding and
//! version) or 0.3's `url`, `preferredTransport`, `protocolVersion` and
//! `additionalInterfaces`, read as the official SDKs read them.

use std::{fmt, time::Duration};

use anyhow::{Context, bail};
use reqwest::{StatusCode, Url};
use serde_json::{Map, Value, json};
use triad_identity::KeyFile;

use super::keys::log_in;

/// Where agents publish their card, under their base URL.
pub(crate) const CARD_PATH: &str = "/.well-known/agent-card.json";

/// The most bytes read of a card or an answer: a game's answer is a few hundred, and another
/// agent may not make this one read without end.
const MAX_BODY_BYTES: usize = 1 << 20;

/// The body of a response, at most [`MAX_BODY_BYTES`].
async fn body(mut response: reqwest::Response, what: &str) -> anyhow::Result<Vec<u8>> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .with_context(|| format!("cannot read {what}"))?
    {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            bail!("{what} is over {MAX_BODY_BYTES} bytes");
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The A2A versions this client speaks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub(crate) enum Version {
    /// A2A 0.3: `message/send`.
    #[value(name = "0.3")]
    V0_3,
    /// A2A 1.0: `SendMessage`.
    #[value(name = "1.0")]
    V1_0,
}

impl Version {
    /// The version's `major.minor`, as the `A2A-Version` header and cards spell it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Version::V0_3 => "0.3",
            Version::V1_0 => "1.0",
        }
    }

    /// The version a card's `protocolVersion` names (`1.0`, `1.0.0`, `0.3.0`), if this client
    /// speaks it: patch versions do not matter.
    fn parse(text: &str) -> Option<Version> {
        let mut numbers = text.trim().trim_start_matches('v').split('.');
        let major = numbers.next()?.parse::<u32>().ok()?;
        let minor = numbers.next().map_or(Some(0), |m| m.parse::<u32>().ok())?;
        match (major, minor) {
            (1, 0) => Some(Version::V1_0),
            (0, 3) => Some(Version::V0_3),
            _ => None,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One way to reach the agent that its card offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Interface {
    pub(crate) url: String,
    pub(crate) binding: String,
    pub(crate) version: String,
}

/// What this client needs from an agent card.
#[derive(Clone, Debug)]
pub(crate) struct Card {
    /// The agent's name.
    pub(crate) name: String,
    /// Its interfaces, in the card's order.
    pub(crate) interfaces: Vec<Interface>,
    /// Whether every way the card allows in needs an HTTP bearer token.
    pub(crate) needs_bearer: bool,
}

impl Card {
    /// Reads a card in the 1.0 form or the 0.3 form.
    ///
    /// # Errors
    /// When it is not a JSON object or names no interface.
    pub(crate) fn parse(card: &Value) -> anyhow::Result<Card> {
        let object = card
            .as_object()
            .context("the agent card is not a JSON object")?;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let mut interfaces: Vec<Interface> = match object.get("supportedInterfaces") {
            Some(list) => list
                .as_array()
                .context("the agent card's supportedInterfaces is not a list")?
                .iter()
                .map(|i| Interface {
                    url: text(&i["url"]),
                    binding: text(&i["protocolBinding"]),
                    version: text(&i["protocolVersion"]),
                })
                .collect(),
            None => Vec::new(),
        };
        // The 0.3 form, as the official SDKs read it: the main URL with its transport, then
        // the additional interfaces, all at the card's protocolVersion.
        if interfaces.is_empty()
            && let Some(url) = object.get("url").and_then(Value::as_str)
        {
            let version = object
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("0.3.0")
                .to_owned();
            let binding = object
                .get("preferredTransport")
                .and_then(Value::as_str)
                .unwrap_or("JSONRPC")
                .to_owned();
            interfaces.push(Interface {
                url: url.to_owned(),
                binding,
                version: version.clone(),
            });
            for extra in object
                .get("additionalInterfaces")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                interfaces.push(Interface {
                    url: text(&extra["url"]),
                    binding: text(&extra["transport"]),
                    version: version.clone(),
                });
            }
        }
        interfaces.retain(|i| !i.url.is_empty());
        if interfaces.is_empty() {
            bail!("the agent card names no interface (no supportedInterfaces, no url)");
        }
        Ok(Card {
            name: object
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("the agent")
                .to_owned(),
            interfaces,
            needs_bearer: needs_bearer(object),
        })
    }

    /// The JSON-RPC interface to use: the one at `forced`, else the newest version both sides
    /// speak (1.0, else 0.3).
    ///
    /// # Errors
    /// When the card offers no JSON-RPC interface at a version this client speaks.
    pub(crate) fn choose(&self, forced: Option<Version>) -> anyhow::Result<(Interface, Version)> {
        let best = self
            .interfaces
            .iter()
            .filter(|i| i.binding.eq_ignore_ascii_case("JSONRPC"))
            .filter_map(|i| Some((i, Version::parse(&i.version)?)))
            .filter(|(_, v)| forced.is_none_or(|f| f == *v))
            .max_by_key(|(_, v)| *v);
        match best {
            Some((interface, version)) => Ok((interface.clone(), version)),
            None => {
                let offered: Vec<String> = self
                    .interfaces
                    .iter()
                    .map(|i| format!("{} {} at {}", i.binding, i.version, i.url))
                    .collect();
                let wanted = forced.map_or_else(
                    || "A2A 1.0 or 0.3 over JSON-RPC".to_owned(),
                    |v| format!("A2A {v} over JSON-RPC"),
                );
                bail!(
                    "{} offers {}; this agent speaks {wanted}",
                    self.name,
                    offered.join(", ")
                )
            }
        }
    }
}

/// Whether a card's security requirements all name an HTTP bearer scheme (1.0's
/// `securityRequirements` with `httpAuthSecurityScheme`, or 0.3's `security` with `type:
/// "http"`). An empty or missing list needs nothing.
fn needs_bearer(card: &Map<String, Value>) -> bool {
    let schemes = card.get("securitySchemes");
    let is_bearer = |name: &str| {
        let scheme = &schemes.unwrap_or(&Value::Null)[name];
        let http = if scheme["httpAuthSecurityScheme"].is_object() {
            &scheme["httpAuthSecurityScheme"]
        } else if scheme["type"] == "http" {
            scheme
        } else {
            return false;
        };
        http["scheme"]
            .as_str()
            .is_some_and(|s| s.eq_ignore_ascii_case("bearer"))
    };
    // Each requirement is one way in: a map of scheme names (1.0 wraps it in `schemes`).
    let requirements: Vec<Vec<String>> = match (
        card.get("securityRequirements").and_then(Value::as_array),
        card.get("security").and_then(Value::as_array),
    ) {
        (Some(list), _) => list
            .iter()
            .map(|r| r["schemes"].as_object().map_or_else(Vec::new, keys))
            .collect(),
        (None, Some(list)) => list
            .iter()
            .map(|r| r.as_object().map_or_else(Vec::new, keys))
            .collect(),
        (None, None) => Vec::new(),
    };
    !requirements.is_empty()
        && requirements
            .iter()
            .all(|names| !names.is_empty() && names.iter().any(|n| is_bearer(n)))
}

fn keys(map: &Map<String, Value>) -> Vec<String> {
    map.keys().cloned().collect()
}

/// The card's URL for an address the user gave: a card's URL (a path ending in `.json`) or
/// the agent's base URL.
///
/// # Errors
/// When it is not an `http(s)` URL.
pub(crate) fn card_url(address: &str) -> anyhow::Result<Url> {
    let url = Url::parse(address.trim()).with_context(|| {
        format!("--a2a {address}: not a URL (give the agent's card URL or base URL)")
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        bail!("--a2a {address}: use an http:// or https:// URL");
    }
    let path = url.path().trim_end_matches('/').to_owned();
    if path.ends_with(".json") {
        Ok(url)
    } else {
        let mut card = url;
        card.set_path(&format!("{path}{CARD_PATH}"));
        Ok(card)
    }
}

/// Where Triad's login is for an A2A endpoint: the endpoint's URL without its last segment
/// (`https://host/prefix/a2a` → `https://host/prefix`). The token is sent only to the
/// endpoint, so it is asked of the same server, whatever URL the card was read from.
///
/// # Errors
/// When the endpoint is not an `http(s)` URL.
pub(crate) fn login_base(endpoint: &str) -> anyhow::Result<String> {
    let mut url = Url::parse(endpoint)
        .with_context(|| format!("the card's A2A URL {endpoint:?} is not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") {
        bail!("the card's A2A URL {endpoint} is not http:// or https://");
    }
    let path = url.path().trim_end_matches('/');
    let parent = path
        .rsplit_once('/')
        .map_or("", |(parent, _)| parent)
        .to_owned();
    url.set_path(&parent);
    url.set_query(None);
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// A refusal from the other agent: a JSON-RPC error, with Triad's `{code, error}` when its
/// `data` carries them.
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Value,
}

impl Refused {
    /// Triad's stable error name and code, when the error carries them: 0.3's `data` is
    /// Triad's error body, 1.0's is a list of details whose `google.rpc.ErrorInfo` holds
    /// them in its `metadata` (as strings).
    pub(crate) fn triad_error(&self) -> Option<(String, u64)> {
        let body = match &self.data {
            Value::Array(details) => &details.iter().find(|d| {
                d["@type"]
                    .as_str()
                    .is_some_and(|t| t.ends_with("google.rpc.ErrorInfo"))
            })?["metadata"],
            data => data,
        };
        let code = match &body["code"] {
            Value::String(s) => s.parse().ok()?,
            n => n.as_u64()?,
        };
        Some((body["error"].as_str()?.to_owned(), code))
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)?;
        if let Some((name, code)) = self.triad_error() {
            write!(f, " ({name}, {code})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Refused {}

/// What the other agent answered: its data parts (each the object of one part's `data`), and
/// where the conversation goes on.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Reply {
    pub(crate) data: Vec<Value>,
    /// Text parts, said alongside (shown in errors).
    pub(crate) text: Vec<String>,
    pub(crate) context_id: Option<String>,
    /// The task, when the answer is a task.
    pub(crate) task_id: Option<String>,
    /// The task's state (`TASK_STATE_COMPLETED` in 1.0, `completed` in 0.3).
    pub(crate) task_state: Option<String>,
}

impl Reply {
    /// Whether the task is over and takes no more messages.
    pub(crate) fn task_finished(&self) -> bool {
        self.task_state.as_deref().is_some_and(|s| {
            let s = s.trim_start_matches("TASK_STATE_").to_ascii_lowercase();
            matches!(
                s.as_str(),
                "completed" | "failed" | "canceled" | "cancelled" | "rejected"
            )
        })
    }

    /// Reads a `message/send` or `SendMessage` result.
    ///
    /// # Errors
    /// When it is neither a message nor a task.
    pub(crate) fn parse(version: Version, result: &Value) -> anyhow::Result<Reply> {
        let (message, task) = match version {
            Version::V1_0 => (result.get("message"), result.get("task")),
            Version::V0_3 => match result["kind"].as_str() {
                Some("message") => (Some(result), None),
                Some("task") => (None, Some(result)),
                // Old servers leave `kind` out: a message has a role, a task a status.
                None if result.get("role").is_some() => (Some(result), None),
                None if result.get("status").is_some() => (None, Some(result)),
                _ => (None, None),
            },
        };
        let mut reply = Reply::default();
        if let Some(message) = message {
            reply.context_id = message["contextId"].as_str().map(str::to_owned);
            reply.task_id = message["taskId"].as_str().map(str::to_owned);
            reply.take_parts(&message["parts"]);
        } else if let Some(task) = task {
            reply.context_id = task["contextId"].as_str().map(str::to_owned);
            reply.task_id = task["id"].as_str().map(str::to_owned);
            reply.task_state = task["status"]["state"].as_str().map(str::to_owned);
            // The agent's answer is its status message. Only when that says nothing are the
            // task's artifacts read (an agent may answer through them alone); the history
            // repeats what both sides said before and is not read.
            reply.take_parts(&task["status"]["message"]["parts"]);
            if reply.data.is_empty() {
                for artifact in task["artifacts"].as_array().into_iter().flatten() {
                    reply.take_parts(&artifact["parts"]);
                }
            }
        } else {
            bail!(
                "the answer is neither a message nor a task: {}",
                clip(result)
            );
        }
        Ok(reply)
    }

    fn take_parts(&mut self, parts: &Value) {
        for part in parts.as_array().into_iter().flatten() {
            let kind = part["kind"].as_str();
            if let Some(data) = part
                .get("data")
                .filter(|_| kind.is_none_or(|k| k == "data"))
            {
                self.data.push(triad_protocol::whole_numbers(data.clone()));
            } else if let Some(text) = part["text"].as_str() {
                self.text.push(text.to_owned());
            }
        }
    }
}

/// At most 300 characters of a JSON value, for error messages.
fn clip(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 300 {
        format!("{}…", text.chars().take(300).collect::<String>())
    } else {
        text
    }
}

/// A message to send: one data part, and where it belongs.
#[derive(Clone, Debug)]
pub(crate) struct Outgoing<'a> {
    pub(crate) data: Value,
    pub(crate) context_id: Option<&'a str>,
    pub(crate) task_id: Option<&'a str>,
    pub(crate) metadata: Option<Value>,
}

/// How the client logs in when the card asks for a bearer token.
#[derive(Debug)]
pub(crate) enum Login {
    /// A token given on the command line, used as it is.
    Token(String),
    /// Triad's login (challenge, signature) with this key, at the server of the A2A
    /// endpoint ([`login_base`]).
    Key(KeyFile),
}

/// A client of one agent, at one interface and version.
#[derive(Debug)]
pub(crate) struct Peer {
    http: reqwest::Client,
    /// The card's name of the agent.
    pub(crate) name: String,
    /// The JSON-RPC endpoint.
    pub(crate) endpoint: String,
    pub(crate) version: Version,
    base: String,
    login: Option<Login>,
    token: Option<String>,
    /// Distinguishes this run's message and request ids from another run's.
    tag: String,
    sent: u64,
}

impl Peer {
    /// Reads the card at `address` (a card URL or a base URL), picks the interface (`forced`'s
    /// version, else the newest both speak) and logs in if the card asks for a bearer token:
    /// with `token` if given, else with the key `key` loads (Triad's login).
    ///
    /// # Errors
    /// When the card cannot be read, offers nothing this client speaks, or the login fails.
    pub(crate) async fn connect(
        address: &str,
        forced: Option<Version>,
        token: Option<String>,
        key: impl FnOnce() -> anyhow::Result<KeyFile>,
        tag: String,
    ) -> anyhow::Result<Peer> {
        let card_url = card_url(address)?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(60))
            .build()?;
        let response = http
            .get(card_url.clone())
            .send()
            .await
            .with_context(|| format!("cannot reach {card_url}"))?;
        if !response.status().is_success() {
            bail!(
                "no agent card at {card_url} (HTTP {}); give the agent's card URL or base URL",
                response.status().as_u16()
            );
        }
        let what = format!("the agent card at {card_url}");
        let card: Value = serde_json::from_slice(&body(response, &what).await?)
            .with_context(|| format!("{what} is not JSON"))?;
        let card = Card::parse(&card).with_context(|| format!("the agent card at {card_url}"))?;
        let (interface, version) = card.choose(forced)?;
        let login = match (card.needs_bearer, token) {
            (false, _) => None,
            (true, Some(token)) => Some(Login::Token(token)),
            (true, None) => Some(Login::Key(key().with_context(|| {
                format!(
                    "{} asks for a bearer token: log in with a key, or give --a2a-token",
                    card.name
                )
            })?)),
        };
        let mut peer = Peer {
            http,
            name: card.name,
            version,
            base: login_base(&interface.url)?,
            endpoint: interface.url,
            login,
            token: None,
            tag,
            sent: 0,
        };
        peer.log_in().await?;
        Ok(peer)
    }

    async fn log_in(&mut self) -> anyhow::Result<()> {
        self.token = match &self.login {
            None => None,
            Some(Login::Token(token)) => Some(token.clone()),
            Some(Login::Key(key)) => Some(
                log_in(&self.http, &self.base, key, true)
                    .await
                    .with_context(|| format!("cannot log in to {} at {}", self.name, self.base))?,
            ),
        };
        Ok(())
    }

    /// The JSON-RPC request of a message, in this version's form.
    pub(crate) fn request(&mut self, message: &Outgoing<'_>) -> Value {
        self.sent += 1;
        let message_id = format!("{}-{}", self.tag, self.sent);
        let mut body = match self.version {
            Version::V1_0 => json!({
                "messageId": message_id,
                "role": "ROLE_USER",
                "parts": [{"data": message.data}],
            }),
            Version::V0_3 => json!({
                "kind": "message",
                "messageId": message_id,
                "role": "user",
                "parts": [{"kind": "data", "data": message.data}],
            }),
        };
        if let Some(context) = message.context_id {
            body["contextId"] = json!(context);
        }
        if let Some(task) = message.task_id {
            body["taskId"] = json!(task);
        }
        if let Some(metadata) = &message.metadata {
            body["metadata"] = metadata.clone();
        }
        let method = match self.version {
            Version::V1_0 => "SendMessage",
            Version::V0_3 => "message/send",
        };
        let mut params = json!({"message": body});
        if self.version == Version::V1_0 {
            // The SDKs send the (empty) configuration: wait for the answer, as is the default.
            params["configuration"] = json!({});
        }
        json!({
            "jsonrpc": "2.0",
            "id": format!("{}-rpc-{}", self.tag, self.sent),
            "method": method,
            "params": params,
        })
    }

    /// Sends a message and reads the answer. Logs in again once when a Triad token has
    /// expired.
    ///
    /// # Errors
    /// [`Refused`] for a JSON-RPC error; otherwise when the agent cannot be reached or its
    /// answer is not a JSON-RPC response to this request.
    pub(crate) async fn send(&mut self, message: &Outgoing<'_>) -> anyhow::Result<Reply> {
        let request = self.request(message);
        for attempt in 0..2 {
            let mut post = self
                .http
                .post(&self.endpoint)
                .header("A2A-Version", self.version.name())
                .json(&request);
            if let Some(token) = &self.token {
                post = post.bearer_auth(token);
            }
            let response = post
                .send()
                .await
                .with_context(|| format!("cannot reach {}", self.endpoint))?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED
                && attempt == 0
                && matches!(self.login, Some(Login::Key(_)))
            {
                self.log_in().await?;
                continue;
            }
            let what = format!("the answer of {}", self.name);
            let bytes = body(response, &what).await?;
            let Ok(answer) = serde_json::from_slice::<Value>(&bytes) else {
                bail!(
                    "{} answered HTTP {} with no JSON-RPC response: {}",
                    self.name,
                    status.as_u16(),
                    String::from_utf8_lossy(&bytes)
                        .chars()
                        .take(300)
                        .collect::<String>()
                );
            };
            return self.answer(&request, &answer);
        }
        unreachable!("the loop returns")
    }

    fn answer(&self, request: &Value, body: &Value) -> anyhow::Result<Reply> {
        if body["jsonrpc"] != "2.0" || body["id"] != request["id"] {
            bail!(
                "{} did not answer this request in JSON-RPC 2.0 (id {}): {}",
                self.name,
                request["id"],
                clip(body)
            );
        }
        if let Some(error) = body.get("error") {
            return Err(Refused {
                code: error["code"].as_i64().unwrap_or(0),
                message: error["message"].as_str().unwrap_or("no message").to_owned(),
                data: error.get("data").cloned().unwrap_or(Value::Null),
            }
            .into());
        }
        let result = body
            .get("result")
            .with_context(|| format!("{} answered with neither result nor error", self.name))?;
        Reply::parse(self.version, result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_major_and_minor() {
        assert_eq!(Version::parse("1.0"), Some(Version::V1_0));
        assert_eq!(Version::parse("1.0.0"), Some(Version::V1_0));
        assert_eq!(Version::parse("0.3.0"), Some(Version::V0_3));
        assert_eq!(Version::parse("0.2.5"), None);
        assert_eq!(Version::parse("2.0"), None);
        assert_eq!(Version::parse("one"), None);
    }

    fn card_1_0() -> Value {
        json!({
            "name": "Both",
            "supportedInterfaces": [
                {"url": "http://h/a2a/v0", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                {"url": "http://h/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": "http://h/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            ],
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
        })
    }

    #[test]
    fn the_newest_common_version_is_chosen_unless_one_is_forced() {
        let card = Card::parse(&card_1_0()).unwrap();
        assert!(card.needs_bearer);
        let (interface, version) = card.choose(None).unwrap();
        assert_eq!(
            (interface.url.as_str(), version),
            ("http://h/a2a", Version::V1_0)
        );
        let (interface, version) = card.choose(Some(Version::V0_3)).unwrap();
        assert_eq!(
            (interface.url.as_str(), version),
            ("http://h/a2a/v0", Version::V0_3)
        );
    }

    #[test]
    fn a_0_3_card_is_read_as_the_official_sdks_read_it() {
        let card = Card::parse(&json!({
            "name": "Old",
            "protocolVersion": "0.3.0",
            "url": "http://h/a2a",
            "preferredTransport": "JSONRPC",
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "security": [{"bearer": []}],
        }))
        .unwrap();
        assert!(card.needs_bearer);
        assert_eq!(card.choose(None).unwrap().1, Version::V0_3);
        let error = card.choose(Some(Version::V1_0)).unwrap_err().to_string();
        assert!(error.contains("JSONRPC 0.3.0 at http://h/a2a"), "{error}");
        assert!(error.contains("A2A 1.0 over JSON-RPC"), "{error}");
        let open = Card::parse(&json!({"url": "http://h/a2a"})).unwrap();
        assert!(!open.needs_bearer);
        assert!(Card::parse(&json!({"name": "nothing"})).is_err());
        assert!(Card::parse(&json!([])).is_err());
    }

    #[test]
    fn a_card_or_base_url_is_accepted() {
        let card = card_url("http://h:8/").unwrap();
        assert_eq!(card.as_str(), "http://h:8/.well-known/agent-card.json");
        let card = card_url("https://h/x").unwrap();
        assert_eq!(card.as_str(), "https://h/x/.well-known/agent-card.json");
        let card = card_url("https://h/x/.well-known/agent-card.json").unwrap();
        assert_eq!(card.as_str(), "https://h/x/.well-known/agent-card.json");
        assert!(card_url("ftp://h").is_err());
        assert!(card_url("not a url").is_err());
    }

    #[test]
    fn the_login_is_asked_of_the_endpoints_server() {
        assert_eq!(login_base("http://h:8/a2a").unwrap(), "http://h:8");
        assert_eq!(
            login_base("https://h/prefix/a2a/").unwrap(),
            "https://h/prefix"
        );
        assert!(login_base("file:///a2a").is_err());
    }

    #[test]
    fn answers_of_both_versions_are_read() {
        let part =
            json!({"appId": "sos", "action": "move", "payload": {"seq": 2.0, "position": 4}});
        let reply = Reply::parse(
            Version::V1_0,
            &json!({"task": {"id": "t", "contextId": "c",
                "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                    "message": {"role": "ROLE_AGENT", "parts": [{"data": part}, {"text": "your turn"}]}},
                "artifacts": [{"artifactId": "record", "parts": [{"data": {"appId": "record"}}]}],
                "history": [{"role": "ROLE_USER", "parts": [{"data": {"appId": "x"}}]}]}}),
        )
        .unwrap();
        assert_eq!(
            reply.data,
            [json!({"appId": "sos", "action": "move", "payload": {"seq": 2, "position": 4}})]
        );
        assert_eq!(reply.text, ["your turn"]);
        assert_eq!(
            (reply.task_id.as_deref(), reply.context_id.as_deref()),
            (Some("t"), Some("c"))
        );
        assert!(!reply.task_finished());
        let reply = Reply::parse(
            Version::V0_3,
            &json!({"kind": "message", "role": "agent", "contextId": "triad-match-1",
                "parts": [{"kind": "data", "data": {"a": 1}}, {"kind": "text", "text": "hi"}]}),
        )
        .unwrap();
        assert_eq!(reply.data, [json!({"a": 1})]);
        assert_eq!(reply.context_id.as_deref(), Some("triad-match-1"));
        let done = Reply::parse(
            Version::V0_3,
            &json!({"kind": "task", "id": "t", "status": {"state": "completed"}}),
        )
        .unwrap();
        assert!(done.task_finished());
        let by_artifact = Reply::parse(
            Version::V1_0,
            &json!({"task": {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"parts": [{"data": {"b": 2.0}}]}]}}),
        )
        .unwrap();
        assert_eq!(by_artifact.data, [json!({"b": 2})]);
        assert!(by_artifact.task_finished());
        assert!(Reply::parse(Version::V1_0, &json!({"other": 1})).is_err());
    }

    #[test]
    fn triads_error_is_read_from_either_versions_data() {
        let v0_3 = Refused {
            code: -32602,
            message: "that cell is already taken".into(),
            data: json!({"code": 3, "error": "cell_occupied", "message": "…"}),
        };
        assert_eq!(
            v0_3.to_string(),
            "JSON-RPC error -32602: that cell is already taken (cell_occupied, 3)"
        );
        let v1_0 = Refused {
            code: -32602,
            message: "m".into(),
            data: json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "CELL_OCCUPIED",
                "domain": "triad", "metadata": {"code": "3", "error": "cell_occupied"}}]),
        };
        assert_eq!(v1_0.triad_error(), Some(("cell_occupied".into(), 3)));
        let other = Refused {
            code: 1,
            message: "m".into(),
            data: Value::Null,
        };
        assert_eq!(other.to_string(), "JSON-RPC error 1: m");
    }
}
