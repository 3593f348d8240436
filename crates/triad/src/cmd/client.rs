//! A logged-in client of a Triad server's agents' relay, shared by `triad apps` and
//! `triad agent`: send app actions (signed), read the inbox by long-poll, and keep
//! the inbox cursor on disk so that nothing is read twice or lost between runs.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::Duration,
};

use anyhow::Context;
use clap::Args;
use serde::Deserialize;
use serde_json::{Value, json};
use triad_identity::KeyFile;
use triad_protocol::{App, Message, Signed, envelope};

use super::keys::log_in;

/// Where the server is and which key to log in with.
#[derive(Clone, Debug, Args)]
pub(crate) struct Connection {
    /// The server.
    #[arg(long, env = "TRIAD_SERVER", default_value = "http://127.0.0.1:8080")]
    pub(crate) server: String,
    /// The key file [default: $TRIAD_KEY_FILE, else <config dir>/triad/key.json].
    #[arg(long)]
    pub(crate) key_file: Option<PathBuf>,
}

impl Connection {
    fn key_path(&self) -> anyhow::Result<PathBuf> {
        match &self.key_file {
            Some(p) => Ok(p.clone()),
            None => KeyFile::default_path().context("cannot find where the key is kept"),
        }
    }

    /// Loads the key (offering, at a terminal, to make a key file others can read private).
    pub(crate) fn load_key(&self) -> anyhow::Result<KeyFile> {
        super::keys::load_key(&self.key_path()?)
    }
}

/// A refusal by the server: its stable code and name, and what to do.
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) status: u16,
    pub(crate) code: u64,
    pub(crate) name: String,
    pub(crate) message: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}, HTTP {}): {}",
            self.name, self.code, self.status, self.message
        )
    }
}

impl std::error::Error for Refused {}

/// A message read from the inbox.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Incoming {
    pub(crate) id: u64,
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) app_id: String,
    pub(crate) action: String,
    pub(crate) payload: Value,
    #[serde(default)]
    pub(crate) signed: Option<Signed>,
    #[serde(default)]
    pub(crate) match_id: Option<u64>,
}

impl Incoming {
    /// The message, decoded, with whether its signature verifies (`None` when unsigned).
    pub(crate) fn decode(
        &self,
    ) -> Result<(App, Message, Option<bool>), triad_protocol::ProtocolError> {
        let app = App::from_id(&self.app_id)?;
        let message = Message::decode(app, &self.action, &self.payload)?;
        let verified = self.signed.as_ref().map(|signed| {
            let (Ok(from), Ok(to)) = (
                triad_identity::parse_address(&self.from),
                triad_identity::parse_address(&self.to),
            ) else {
                return false;
            };
            envelope::verify(signed, &from, &to, app, &message).is_ok()
        });
        Ok((app, message, verified))
    }
}

/// What a send did.
#[derive(Debug)]
pub(crate) struct SentReply {
    /// The message's number in the recipient's inbox.
    pub(crate) id: u64,
    /// Whether it had been relayed already.
    pub(crate) duplicate: bool,
    /// The match that referees the game.
    pub(crate) match_id: u64,
    /// The whole answer.
    pub(crate) body: Value,
}

/// A logged-in client.
#[derive(Debug)]
pub(crate) struct Client {
    http: reqwest::Client,
    server: String,
    key: KeyFile,
    key_path: PathBuf,
    token: String,
    /// Whether this client logs in as a bot (`triad agent` does).
    bot: bool,
}

/// How many times a send is retried after a failure that may be passing (no answer, the
/// server restarting, storage briefly unavailable, a rate limit): sends are idempotent.
const RETRIES: u32 = 8;

impl Client {
    /// Loads the key and logs in, as a bot when `bot` (an agent's account is marked one).
    pub(crate) async fn connect(connection: &Connection, bot: bool) -> anyhow::Result<Client> {
        let key_path = connection.key_path()?;
        let key = connection.load_key()?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(60))
            .build()?;
        let server = connection.server.trim_end_matches('/').to_owned();
        let token = log_in(&http, &server, &key, bot).await?;
        Ok(Client {
            http,
            server,
            key,
            key_path,
            token,
            bot,
        })
    }

    /// My address, `0x…`.
    pub(crate) fn address(&self) -> String {
        self.key.address_string()
    }

    /// The server's URL.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// The id of the server's transcript key (`/.well-known/triad-transcript-key`), which
    /// every move signature names.
    pub(crate) async fn transcript_key_id(&mut self) -> anyhow::Result<String> {
        let key = self.get("/.well-known/triad-transcript-key").await?;
        key["key_id"]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("{} publishes no transcript key id", self.server))
    }

    /// My signature of a move (`triad-move/v1`, docs/transcript.md), as the body's
    /// `signature`: the match's transcript then proves the move was mine.
    pub(crate) fn move_signature(
        &self,
        server_key_id: &str,
        match_id: u64,
        seq: u8,
        cell: u8,
        mark: char,
    ) -> Value {
        let text =
            triad_identity::move_message(server_key_id, match_id, seq, cell, mark, &self.address());
        json!({
            "public_key": self.key.public_key_hex(),
            "signature": triad_identity::sign_ed25519(self.key.signing_key(), text.as_bytes()),
        })
    }

    /// One request, with the JSON answer or the server's refusal. Logs in again once when
    /// the token has expired.
    async fn request(
        &mut self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> anyhow::Result<(u16, Value)> {
        for attempt in 0..2 {
            let mut request = self
                .http
                .request(method.clone(), format!("{}{path}", self.server))
                .bearer_auth(&self.token)
                .timeout(timeout);
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request
                .send()
                .await
                .with_context(|| format!("cannot reach {}", self.server))?;
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            if (200..300).contains(&status) {
                return Ok((status, body));
            }
            let refused = Refused {
                status,
                code: body["code"].as_u64().unwrap_or(0),
                name: body["error"].as_str().unwrap_or("error").to_owned(),
                message: body["message"].as_str().unwrap_or("no message").to_owned(),
            };
            // 202 invalid token, 203 expired: the session ended; log in again once.
            if attempt == 0 && matches!(refused.code, 202 | 203) {
                self.token = log_in(&self.http, &self.server, &self.key, self.bot).await?;
                continue;
            }
            return Err(refused.into());
        }
        unreachable!("the loop returns")
    }

    /// Whether an error may pass if the same request is sent again.
    pub(crate) fn passing(error: &anyhow::Error) -> bool {
        match error.downcast_ref::<Refused>() {
            // rate limited, storage unavailable, shutting down, busy, timed out, disk full,
            // too many open from this address
            Some(r) => matches!(r.code, 207 | 209 | 212 | 213 | 214 | 218 | 219),
            None => true,
        }
    }

    /// Sends an app action to `to`, signed with my key unless `unsigned`. Retried while the
    /// failure may pass (the relay recognises a resend).
    pub(crate) async fn send(
        &mut self,
        to: &str,
        app: App,
        message: &Message,
        unsigned: bool,
    ) -> anyhow::Result<SentReply> {
        self.send_for(to, app, message, unsigned, None).await
    }

    /// [`Client::send`] for the game of `match_id`, the match of the proposal an acceptance
    /// answers: the relay refuses the acceptance (128) if the pair's game is now another.
    pub(crate) async fn send_for(
        &mut self,
        to: &str,
        app: App,
        message: &Message,
        unsigned: bool,
        match_id: Option<u64>,
    ) -> anyhow::Result<SentReply> {
        let recipient = triad_identity::parse_address(to)
            .map_err(|e| anyhow::anyhow!("{to} is not an address: {e}"))?;
        let mut body = json!({
            "to": to,
            "appId": app.id(),
            "action": message.action().id(),
            "payload": message.payload(app),
        });
        if !unsigned {
            let signed = envelope::sign(self.key.signing_key(), &recipient, app, message);
            body["signed"] = serde_json::to_value(signed)?;
        }
        if let Some(id) = match_id {
            body["matchId"] = json!(id);
        }
        let mut wait = Duration::from_millis(100);
        let mut attempt = 0;
        loop {
            match self
                .request(
                    reqwest::Method::POST,
                    "/api/apps/messages",
                    Some(&body),
                    Duration::from_secs(30),
                )
                .await
            {
                Ok((_, answer)) => {
                    return Ok(SentReply {
                        id: answer["id"].as_u64().unwrap_or(0),
                        duplicate: answer["duplicate"].as_bool().unwrap_or(false),
                        match_id: answer["matchId"].as_u64().unwrap_or(0),
                        body: answer,
                    });
                }
                Err(e) if attempt < RETRIES && Client::passing(&e) => {
                    attempt += 1;
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The inbox after `after`, waiting up to `wait` for a message.
    pub(crate) async fn inbox(
        &mut self,
        after: u64,
        wait: Duration,
    ) -> anyhow::Result<(Vec<Incoming>, u64)> {
        let wait_ms = wait.as_millis().min(25_000);
        let path = format!("/api/apps/inbox?after={after}&wait_ms={wait_ms}");
        let (_, page) = self
            .request(
                reqwest::Method::GET,
                &path,
                None,
                wait + Duration::from_secs(15),
            )
            .await?;
        let messages: Vec<Incoming> = serde_json::from_value(page["messages"].clone())
            .context("the server sent an unreadable inbox")?;
        let next = page["nextAfter"].as_u64().unwrap_or(after);
        Ok((messages, next))
    }

    /// A POST of a JSON body to the API.
    pub(crate) async fn post(&mut self, path: &str, body: &Value) -> anyhow::Result<Value> {
        Ok(self
            .request(
                reqwest::Method::POST,
                path,
                Some(body),
                Duration::from_secs(30),
            )
            .await?
            .1)
    }

    /// The server's error code, when `error` is its refusal.
    pub(crate) fn refusal_code(error: &anyhow::Error) -> Option<u64> {
        error.downcast_ref::<Refused>().map(|r| r.code)
    }

    /// A GET of the API.
    pub(crate) async fn get(&mut self, path: &str) -> anyhow::Result<Value> {
        Ok(self
            .request(reqwest::Method::GET, path, None, Duration::from_secs(30))
            .await?
            .1)
    }

    /// The saved inbox cursor for this server (0 when none).
    pub(crate) fn saved_cursor(&self) -> u64 {
        cursors(&self.key_path)
            .get(&self.server)
            .copied()
            .unwrap_or(0)
    }

    /// Saves the inbox cursor for this server, beside the key file.
    pub(crate) fn save_cursor(&self, cursor: u64) -> anyhow::Result<()> {
        let mut all = cursors(&self.key_path);
        all.insert(self.server.clone(), cursor);
        let path = cursor_path(&self.key_path);
        let temporary = path.with_extension("tmp");
        std::fs::write(&temporary, serde_json::to_string_pretty(&all)?)
            .with_context(|| format!("cannot write {}", temporary.display()))?;
        std::fs::rename(&temporary, &path)
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// `key.json` → `key.json.inbox`: the cursors, per server.
fn cursor_path(key_path: &Path) -> PathBuf {
    let mut name = key_path.as_os_str().to_owned();
    name.push(".inbox");
    PathBuf::from(name)
}

fn cursors(key_path: &Path) -> BTreeMap<String, u64> {
    std::fs::read_to_string(cursor_path(key_path))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}
