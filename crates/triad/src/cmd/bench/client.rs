//! One client of the server as `triad bench` drives it: its login, its WebSocket (the
//! token in the first message, subscriptions that follow the server's pages and replay
//! budget, moves answered by an `ack`), and its HTTP requests, which ask for the short
//! answer (`Prefer: return=minimal`) because the events come on the WebSocket.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rand::{rand_core::UnwrapErr, rngs::SysRng};
use serde_json::{Value, json};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, tungstenite::Message};
use triad_identity::KeyFile;

use crate::cmd::keys::log_in;

pub(super) type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// The server, or the nodes of a cluster, and the HTTP client every player shares.
pub(super) struct Servers {
    pub(super) http: reqwest::Client,
    nodes: Vec<Node>,
}

/// One node's base URLs.
struct Node {
    base: String,
    ws_base: String,
}

impl Servers {
    /// The nodes at `urls` (`http://` or `https://`), through `http`.
    pub(super) fn new(http: reqwest::Client, urls: &[String]) -> Servers {
        let nodes = urls
            .iter()
            .map(|url| {
                let base = url.trim_end_matches('/').to_owned();
                let ws_base = base
                    .replacen("https://", "wss://", 1)
                    .replacen("http://", "ws://", 1);
                Node { base, ws_base }
            })
            .collect();
        Servers { http, nodes }
    }

    /// The nodes of the two players of the `pair`-th pair to log in: consecutive nodes, so
    /// that every game crosses nodes when there are several.
    pub(super) fn nodes_of_pair(&self, pair: u64) -> [usize; 2] {
        let n = self.nodes.len() as u64;
        #[allow(clippy::cast_possible_truncation)]
        [(2 * pair) % n, (2 * pair + 1) % n].map(|i| i as usize)
    }
}

/// A failed game: the stage it failed at (the key of the error count) and the detail.
pub(super) struct Failure {
    pub(super) stage: &'static str,
    pub(super) detail: String,
}

/// Turns an error into the failure of `stage`.
pub(super) fn fail<E: std::fmt::Display>(stage: &'static str) -> impl FnOnce(E) -> Failure {
    move |e| Failure {
        stage,
        detail: format!("{e:#}"),
    }
}

/// A logged-in player.
pub(super) struct Session {
    /// The node it logged in at, which it uses for everything.
    pub(super) node: usize,
    pub(super) address: String,
    pub(super) token: String,
    /// The last event seen on this player's `inbox` topic: the next subscription starts
    /// after it, so that an old challenge is not sent again.
    pub(super) inbox_since: u64,
}

/// One client: its session and, between games unless --ws-per-game, its WebSocket.
pub(super) struct Client {
    pub(super) session: Session,
    pub(super) ws: Option<Ws>,
}

/// A client connected for a game: its session and its WebSocket.
pub(super) struct Player {
    pub(super) session: Session,
    pub(super) ws: Ws,
    /// Whether the WebSocket was opened for this game (its subscriptions start afresh).
    pub(super) new: bool,
}

/// A new key, logged in at `node`.
pub(super) async fn log_in_new(servers: &Servers, node: usize) -> Result<Session, Failure> {
    let key = KeyFile::generate(&mut UnwrapErr(SysRng));
    let token = log_in(&servers.http, &servers.nodes[node].base, &key, false)
        .await
        .map_err(fail("login"))?;
    Ok(Session {
        node,
        address: key.address_string(),
        token,
        inbox_since: 0,
    })
}

/// A client with its WebSocket: the one it kept from its last game, or a new one.
pub(super) async fn connect_client(servers: &Servers, client: Client) -> Result<Player, Failure> {
    let Client { session, ws } = client;
    if let Some(ws) = ws {
        return Ok(Player {
            session,
            ws,
            new: false,
        });
    }
    // The token goes in the first message, not the URL (proxies log URLs).
    let url = format!("{}/api/ws", servers.nodes[session.node].ws_base);
    // A small read buffer (the default is 128 KiB), so that 20,000 clients fit in memory.
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(4 * 1024);
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .map_err(fail("ws_connect"))?;
    authenticate(&mut ws, &session.token).await?;
    Ok(Player {
        session,
        ws,
        new: true,
    })
}

/// The next JSON text frame.
async fn next_frame(ws: &mut Ws) -> Result<Value, Failure> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => {
                return serde_json::from_str(&text).map_err(fail("ws_frame"));
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
            Some(Ok(Message::Binary(_))) => {
                return Err(Failure {
                    stage: "ws_frame",
                    detail: "a binary frame".into(),
                });
            }
            Some(Ok(Message::Close(close))) => {
                return Err(Failure {
                    stage: "ws_closed",
                    detail: format!("{close:?}"),
                });
            }
            Some(Err(e)) => return Err(fail("ws_read")(e)),
            None => {
                return Err(Failure {
                    stage: "ws_closed",
                    detail: "the stream ended".into(),
                });
            }
        }
    }
}

/// Sends one message on the socket.
async fn send_json(ws: &mut Ws, message: &Value) -> Result<(), Failure> {
    ws.send(Message::text(message.to_string()))
        .await
        .map_err(fail("ws_send"))
}

/// Logs the socket in with its first message and reads until `authed`.
async fn authenticate(ws: &mut Ws, token: &str) -> Result<(), Failure> {
    send_json(ws, &json!({ "type": "auth", "token": token })).await?;
    loop {
        let frame = next_frame(ws).await?;
        match frame["type"].as_str() {
            Some("authed") => return Ok(()),
            Some("error") => return Err(fail("ws_auth")(frame)),
            _ => {}
        }
    }
}

/// Subscribes to `topic` after event `since` and reads until `subscribed`, following the
/// server's pages (`more`: subscribe again from its `seq`) and its replay budget (an
/// `error` with `retry_after_s`: subscribe again after it).
pub(super) async fn subscribe(ws: &mut Ws, topic: &str, since: u64) -> Result<(), Failure> {
    let mut since = since;
    loop {
        send_json(
            ws,
            &json!({ "type": "subscribe", "topic": topic, "since": since }),
        )
        .await?;
        loop {
            let frame = next_frame(ws).await?;
            match frame["type"].as_str() {
                // The reply names the resolved topic (`inbox:0x…`); subscriptions are one at a time.
                Some("subscribed") => return Ok(()),
                Some("more") => {
                    since = frame["seq"].as_u64().unwrap_or(since);
                    break;
                }
                Some("error") => match frame["retry_after_s"].as_u64() {
                    Some(wait) if frame["topic"].is_string() => {
                        since = frame["seq"].as_u64().unwrap_or(since);
                        tokio::time::sleep(Duration::from_secs(wait)).await;
                        break;
                    }
                    _ => return Err(fail("ws_error")(frame)),
                },
                _ => {}
            }
        }
    }
}

/// Reads events until one of `kind` for `match_id` (and, when given, with move `seq`).
pub(super) async fn until_event(
    ws: &mut Ws,
    kind: &str,
    match_id: u64,
    seq: Option<u64>,
) -> Result<Value, Failure> {
    loop {
        let frame = next_frame(ws).await?;
        match frame["type"].as_str() {
            Some("event") => {
                let k = &frame["event"]["kind"];
                if k["type"] == kind
                    && k["match_id"].as_u64() == Some(match_id)
                    && (seq.is_none() || k["seq"].as_u64() == seq)
                {
                    return Ok(frame["event"].clone());
                }
            }
            Some("error") => return Err(fail("ws_error")(frame)),
            _ => {}
        }
    }
}

/// Sends a move on the mover's WebSocket and reads until its `ack` (past the move's own
/// events); a refusal fails at `move` with the server's error.
pub(super) async fn send_move(
    ws: &mut Ws,
    id: u64,
    seq: u64,
    cell: u8,
    mark: &str,
) -> Result<(), Failure> {
    let reference = seq.to_string();
    let message = json!({ "type": "move", "ref": reference, "match_id": id, "seq": seq, "cell": cell, "mark": mark });
    ws.send(Message::text(message.to_string()))
        .await
        .map_err(fail("ws_send"))?;
    loop {
        let frame = next_frame(ws).await?;
        match frame["type"].as_str() {
            Some("ack") if frame["ref"] == reference.as_str() => return Ok(()),
            Some("error") => return Err(fail("move")(frame)),
            _ => {}
        }
    }
}

/// A POST with the session to its node, asking for the short answer (`Prefer: return=minimal`); the
/// JSON answer, or a failure at `stage` with the server's error code.
pub(super) async fn post(
    servers: &Servers,
    session: &Session,
    path: &str,
    body: &Value,
    stage: &'static str,
) -> Result<Value, Failure> {
    let response = servers
        .http
        .post(format!("{}{path}", servers.nodes[session.node].base))
        .bearer_auth(&session.token)
        // The WebSocket brings the events: the short answer is enough (RFC 7240).
        .header("prefer", "return=minimal")
        .json(body)
        .send()
        .await
        .map_err(fail(stage))?;
    let status = response.status();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    if status.is_success() {
        Ok(answer)
    } else {
        Err(Failure {
            stage,
            detail: format!("HTTP {status}: {answer}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_players_of_a_pair_are_on_different_nodes_when_there_are_several() {
        let servers = |n: usize| {
            let urls: Vec<String> = (0..n).map(|i| format!("http://node{i}/")).collect();
            Servers::new(reqwest::Client::new(), &urls)
        };
        assert_eq!(servers(1).nodes_of_pair(7), [0, 0]);
        for n in 2..=5 {
            let servers = servers(n);
            let mut used = vec![0; n];
            for pair in 0..(10 * n as u64) {
                let [a, b] = servers.nodes_of_pair(pair);
                assert_ne!(a, b, "{n} nodes, pair {pair}");
                used[a] += 1;
                used[b] += 1;
            }
            assert!(used.iter().all(|&u| u == 20), "{n} nodes: {used:?}");
        }
        let one = servers(1);
        assert_eq!(
            (one.nodes[0].base.as_str(), one.nodes[0].ws_base.as_str()),
            ("http://node0", "ws://node0")
        );
    }
}
