//! The realtime WebSocket at `/api/ws`.
//!
//! Client messages (JSON text):
//! - `{"type":"auth","token":"…"}`, best as the first message (or pass `?token=` on the
//!   upgrade request, which proxies may log);
//! - `{"type":"subscribe","topic":"match:7" | "inbox" | "lobby","since":<seq>}`: the server
//!   first sends every event of the topic after `since` from the log, then live ones, with
//!   no gap and no duplicate, then `{"type":"subscribed","topic":…,"seq":…,"now_ms":…}` once
//!   caught up (`now_ms` is the server's clock, for showing deadlines). One `subscribe`
//!   replays at most [`CATCH_UP_PAGE`] events: a longer catch-up ends with
//!   `{"type":"more","topic":…,"seq":…}` instead, and the client subscribes again with
//!   `since` = that `seq` (live frames start with the last page). The events replayed count
//!   against the IP address's budget (`--replay-events-per-ip`): past it the answer is
//!   `{"type":"error","code":207,"topic":…,"seq":…,"retry_after_s":…}`, and the client
//!   subscribes again from `seq` after that many seconds;
//! - `{"type":"subscribe","topic":"apps","since":<id>}`: the agents' inbox (their application
//!   messages): every message after the cursor `since`, then live ones, each as
//!   `{"type":"app_message","topic":"apps:0x…","seq":<id>,"message":{…}}`;
//! - `{"type":"unsubscribe","topic":…}`; `{"type":"ping"}`;
//! - `{"type":"move","ref":"…","match_id":7,"seq":3,"cell":4,"mark":"X"}` (after `auth`):
//!   the same move as `POST /api/matches/7/moves`, with the same checks, rate limit and
//!   answer codes, without an HTTP request per move. The answer is
//!   `{"type":"ack","ref":…,"match_id":7,"event_seqs":[…],"duplicate":false}` (as with
//!   `Prefer: return=minimal`), after the move's events on the topics this socket follows,
//!   or an error carrying the same `ref`. `ref` is optional (at most 128 bytes) and is
//!   echoed as given.
//!
//! Server messages: `{"type":"event","topic":…,"event":{…,"seq":…}}`, `subscribed`,
//! `authed`, `ack`, `pong`, and errors as
//! `{"type":"error","code":…,"error":…,"message":…}` (with `ref` when answering a move).
//!
//! One IP address may have `--max-websockets-per-ip` sockets open at once; the next upgrade
//! is refused with `too_many_open` (429, code 219) and `Retry-After`.
//!
//! A connection whose queue fills (a slow reader) is closed with code 4000; it reconnects
//! and resubscribes with its last `seq`. On shutdown every socket gets a close frame (1001).
//!
//! Logging in: send `{"type":"auth","token":…}` as the first message. The token in the URL
//! (`?token=`) is still accepted, but proxies log URLs: Triad's own clients never use it.
//! A socket opened without a token must send its first message (`auth`, or a spectator's
//! `subscribe`) within 10 s, else it is closed with code 4002. When the socket's session
//! ends (a logout on any node, or its expiry) the socket is closed with code 4001, on this
//! node at once and on the others within 5 s; a `subscribe` or a `move` under an ended
//! session is refused (202 or 203) and the socket closed.

use std::{collections::HashMap, net::IpAddr, num::NonZeroU32, time::Duration};

use axum::{
    Extension,
    extract::{
        Query, State, WebSocketUpgrade,
        ws::{CloseFrame, Message, Utf8Bytes, WebSocket},
    },
    http::HeaderMap,
    response::{IntoResponse, Response},
};
use futures_util::SinkExt as _;
use governor::{Quota, RateLimiter};
use serde::{Deserialize, Serialize};
use triad_engine::{Address, Command, MatchId};
use triad_rules::Mark;

use super::{
    ApiState, ClientIp,
    error::{Api, ApiError},
};

use crate::{
    hub::{Frame, frame_text},
    listen::ConnectionSlot,
};

/// The upgrade request's query.
#[derive(Debug, Deserialize)]
pub struct WsQuery {
    /// A login token, for clients that cannot set headers (browsers).
    pub token: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ClientMessage {
    Auth {
        token: String,
    },
    Subscribe {
        topic: String,
        #[serde(default)]
        since: u64,
    },
    Unsubscribe {
        topic: String,
    },
    Ping,
    Move {
        #[serde(default, rename = "ref")]
        reference: Option<String>,
        match_id: u64,
        seq: u8,
        cell: u8,
        mark: Mark,
    },
}

/// The answer to a move sent on the socket: `{"type":"ack","ref":…}` and the
/// [`CommandAck`](super::games::CommandAck)'s fields.
#[derive(Serialize)]
struct Ack<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(rename = "ref")]
    reference: Option<&'a str>,
    #[serde(flatten)]
    ack: &'a super::games::CommandAck,
}

/// The end of a subscription's catch-up.
#[derive(Serialize)]
struct Subscribed<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    topic: &'a str,
    /// The last event delivered (or the `since` asked for).
    seq: u64,
    /// The server's time, so a client can show deadlines by the server's clock.
    now_ms: u64,
}

/// A catch-up that stopped after a page: subscribe again from `seq` for the rest.
#[derive(Serialize)]
struct More<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    topic: &'a str,
    /// The last event delivered: the `since` of the next `subscribe`.
    seq: u64,
}

/// What became of a client message.
enum Outcome {
    /// Handled; the socket stays open.
    Open,
    /// The socket is gone.
    Gone,
    /// Send this after the frames already queued, in one write.
    Reply(Utf8Bytes),
    /// The socket's session is no longer valid (this error says why): it is closed.
    SessionEnded(ApiError),
}

/// The longest `ref` a move may carry, in bytes.
const MAX_REF: usize = 128;

/// Upgrades to the realtime WebSocket.
#[utoipa::path(get, path = "/api/ws", tag = "realtime",
    params(("token" = Option<String>, Query, description = "A login token (or send an auth message)")),
    responses((status = 101, description = "Switching to the WebSocket protocol"),
        (status = 429, body = super::error::ErrorBody, description = "too_many_open (219): this IP address has --max-websockets-per-ip WebSockets open; with Retry-After"),
        (status = "4XX", body = super::error::ErrorBody)))]
pub async fn upgrade(
    State(state): State<ApiState>,
    ClientIp(client): ClientIp,
    connection_slot: Option<Extension<ConnectionSlot>>,
    Query(query): Query<WsQuery>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if state.hub.is_closing() {
        return ApiError::new(Api::ShuttingDown).into_response();
    }
    // At most `--max-websockets-per-ip` from one address, `--max-websockets` in all.
    let permit = match state.websockets.take(client) {
        Ok(permit) => (permit, connection_slot),
        Err(why) => return state.websockets.refusal(why).into_response(),
    };
    let token = query
        .token
        .or_else(|| super::bearer(&headers).map(str::to_owned));
    let session = match token {
        Some(t) => match state
            .sessions
            .authenticate(&t)
            .await
            .map_err(ApiError::from)
        {
            Ok(found) => Some(found),
            Err(e) => return e.into_response(),
        },
        None => None,
    };
    let max = state.settings.max_ws_message_bytes;
    ws.max_message_size(max)
        .max_frame_size(max)
        // The default 128 KiB read buffer per socket would cost 2.5 GiB at 20,000 sockets;
        // frames here are small (at most `max`), and the buffer grows when one is larger.
        .read_buffer_size(WS_READ_BUFFER)
        .on_upgrade(move |socket| async move {
            connection(socket, state, session, client).await;
            // The WebSocket's share, and its connection's slot, go back only now.
            drop(permit);
        })
}

/// Each WebSocket's initial read buffer, in bytes.
const WS_READ_BUFFER: usize = 4 * 1024;

/// How long a socket opened without a token may stay silent: its first message (`auth`,
/// or a spectator's `subscribe`) must come within this, else it is closed (4002).
pub const FIRST_MESSAGE_DEADLINE: Duration = Duration::from_secs(10);

/// The close code of a socket whose session ended (logout or expiry).
pub const CLOSE_SESSION_ENDED: u16 = 4001;
/// The close code of a socket that sent nothing within [`FIRST_MESSAGE_DEADLINE`].
pub const CLOSE_NO_FIRST_MESSAGE: u16 = 4002;

/// An error frame: `{"type":"error","code","error","message"}`, and the `extra` fields
/// of its kind of answer.
fn error_frame(e: &ApiError, extra: serde_json::Value) -> Utf8Bytes {
    let mut body = serde_json::json!({
        "type": "error", "code": e.body.code, "error": e.body.error, "message": e.body.message,
    });
    if let (Some(body), serde_json::Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    Utf8Bytes::from(body.to_string())
}

fn error_text(e: &ApiError) -> Utf8Bytes {
    error_frame(e, serde_json::Value::Null)
}

/// An error answering a move: as [`error_text`], with the move's `ref`, and how long to
/// wait when it says so (`Retry-After` over HTTP).
fn move_error_text(e: &ApiError, reference: Option<&str>) -> Utf8Bytes {
    error_frame(
        e,
        serde_json::json!({ "ref": reference, "retry_after_s": e.retry_after_s }),
    )
}

async fn send(socket: &mut WebSocket, text: Utf8Bytes) -> bool {
    socket.send(Message::Text(text)).await.is_ok()
}

/// Queues `first` and every frame already waiting, newer than what its topic delivered,
/// without flushing; false when the socket is gone.
async fn feed_queued(
    socket: &mut WebSocket,
    frames: &mut tokio::sync::mpsc::Receiver<Frame>,
    delivered: &mut HashMap<String, u64>,
    first: Option<Frame>,
) -> bool {
    let mut next = first.or_else(|| frames.try_recv().ok());
    while let Some(frame) = next {
        if fresh(delivered, &frame) && socket.feed(Message::Text(frame.text)).await.is_err() {
            return false;
        }
        next = frames.try_recv().ok();
    }
    true
}

/// Whether `frame` is newer than what its topic already delivered (the catch-up from the
/// log and the live queue overlap); records it if so. A frame of a topic the socket does
/// not follow (unsubscribed, or whose catch-up paused after a page) is dropped: the
/// client gets it from the log when it subscribes again.
fn fresh(delivered: &mut HashMap<String, u64>, frame: &Frame) -> bool {
    match delivered.get_mut(&*frame.topic) {
        Some(seen) if frame.seq > *seen => {
            *seen = frame.seq;
            true
        }
        _ => false,
    }
}

async fn close(socket: &mut WebSocket, code: u16, reason: &'static str) {
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from_static(reason),
        })))
        .await;
}

/// After a close frame sent to a client that is still sending: reads and drops what it
/// sends for up to 2 s, until its close frame. Dropping the socket at once, with its
/// frames unread, would reset the connection, and the client might never read the close
/// frame (nor the error before it) that says why.
async fn drain(socket: &mut WebSocket) {
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(Ok(m)) = socket.recv().await {
            if matches!(m, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

/// Who the socket is logged in as, and the hash of the token that says so
/// ([`token_hash`](crate::sessions::token_hash)), checked again at every move, so that a
/// logout ends what the socket may do.
type Session = Option<(Address, String)>;

async fn connection(
    mut socket: WebSocket,
    state: ApiState,
    opened_with: Option<(Address, String, u64)>,
    client: IpAddr,
) {
    let mut registration = state.hub.register(state.settings.ws_send_queue);
    let id = registration.id;
    let mut session: Session = opened_with.map(|(address, hash, expires)| {
        state.hub.set_session(id, &hash, expires);
        (address, hash)
    });
    // A socket opened without a token speaks first, soon: `auth`, or a spectator's
    // `subscribe`. One that stays silent holds a slot for nothing.
    let mut heard = session.is_some();
    let first_message = tokio::time::sleep(FIRST_MESSAGE_DEADLINE);
    tokio::pin!(first_message);
    let session_ended = registration.session_ended.clone();
    // The highest sequence number delivered per topic, to drop duplicates between the
    // catch-up from the log and the live frames.
    let mut delivered: HashMap<String, u64> = HashMap::new();
    let rate = state.settings.ws_rate;
    let limiter = RateLimiter::direct_with_clock(
        Quota::per_second(NonZeroU32::new(rate).unwrap_or(NonZeroU32::MIN))
            .allow_burst(NonZeroU32::new(rate.saturating_mul(2)).unwrap_or(NonZeroU32::MIN)),
        state.limits.clock.clone(),
    );
    let mut ping = tokio::time::interval(Duration::from_secs(25));
    ping.tick().await;
    let shutdown = registration.shutdown.clone();
    let kicked = registration.kicked.clone();
    // Made once, before the loop: `notify_waiters` reaches every `Notified` that exists when
    // it is called, even while this task is busy (sending a catch-up, say). One made afresh
    // each time round the loop would miss a shutdown that came in between, and the socket
    // would stay open, holding up the shutdown.
    let shutting_down = shutdown.notified();
    tokio::pin!(shutting_down);
    if state.hub.is_closing() {
        // The shutdown began before `shutting_down` existed.
        shutdown.notify_waiters();
    }
    loop {
        tokio::select! {
            biased;
            () = &mut shutting_down => {
                close(&mut socket, 1001, "server shutting down").await;
                break;
            }
            () = kicked.notified() => {
                close(&mut socket, 4000, "too slow: reconnect and resubscribe with your last seq").await;
                break;
            }
            () = session_ended.notified() => {
                // Logged out (here or on another node) or expired: nothing it opened
                // goes on.
                close(&mut socket, CLOSE_SESSION_ENDED, "session ended: logged out or expired; log in again").await;
                drain(&mut socket).await;
                break;
            }
            () = &mut first_message, if !heard => {
                close(&mut socket, CLOSE_NO_FIRST_MESSAGE, "no message within 10 s: send auth (or subscribe) first").await;
                drain(&mut socket).await;
                break;
            }
            frame = registration.frames.recv() => {
                let Some(frame) = frame else { break };
                // One write for every frame already queued (a move that ends a game
                // publishes several events at once): queue them all, then flush once.
                if !feed_queued(&mut socket, &mut registration.frames, &mut delivered, Some(frame)).await
                    || socket.flush().await.is_err()
                {
                    break;
                }
            }
            message = socket.recv() => {
                // Every frame a client sends counts against its rate, whatever its kind:
                // a flood of binary frames or pings is refused like one of text.
                if matches!(message, Some(Ok(Message::Text(_) | Message::Binary(_) | Message::Ping(_))))
                    && limiter.check().is_err()
                {
                    let e = ApiError::with_message(Api::RateLimited, format!("too many messages; at most {rate} a second"));
                    let _ = send(&mut socket, error_text(&e)).await;
                    close(&mut socket, 1008, "message flood").await;
                    drain(&mut socket).await;
                    break;
                }
                if matches!(message, Some(Ok(Message::Text(_) | Message::Binary(_)))) {
                    heard = true;
                }
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Binary(_))) => {
                        let e = ApiError::with_message(Api::BadRequest, "send JSON text messages");
                        if !send(&mut socket, error_text(&e)).await { break }
                        continue;
                    }
                    Some(Err(e)) => {
                        // Say why before going: a message over the limit (1009), or a
                        // frame that breaks the protocol (1002).
                        if e.to_string().contains("too long") {
                            close(&mut socket, 1009, "message too big: at most max_ws_message_bytes").await;
                        } else {
                            close(&mut socket, 1002, "protocol error").await;
                        }
                        drain(&mut socket).await;
                        break;
                    }
                    Some(Ok(Message::Close(_))) | None => break,
                    Some(Ok(_)) => continue,
                };
                let reply = handle(&state, &mut socket, &mut session, (id, client), &mut delivered, &text).await;
                match reply {
                    Ok(Outcome::Open) => {}
                    Ok(Outcome::SessionEnded(e)) => {
                        let _ = send(&mut socket, error_text(&e)).await;
                        close(&mut socket, CLOSE_SESSION_ENDED, "session ended: logged out or expired; log in again").await;
                        drain(&mut socket).await;
                        break;
                    }
                    Ok(Outcome::Gone) => break,
                    Ok(Outcome::Reply(text)) => {
                        // The move's own events are queued already (they are published
                        // before the command is answered): they go first, in the same write.
                        if !feed_queued(&mut socket, &mut registration.frames, &mut delivered, None).await
                            || socket.feed(Message::Text(text)).await.is_err()
                            || socket.flush().await.is_err()
                        {
                            break;
                        }
                    }
                    Err(e) => {
                        if !send(&mut socket, error_text(&e)).await { break }
                    }
                }
            }
            _ = ping.tick() => {
                if socket.send(Message::Ping(axum::body::Bytes::new())).await.is_err() {
                    break;
                }
            }
        }
    }
    state.hub.unregister(id);
}

/// Handles one client message.
async fn handle(
    state: &ApiState,
    socket: &mut WebSocket,
    session: &mut Session,
    (id, client): (u64, IpAddr),
    delivered: &mut HashMap<String, u64>,
    text: &str,
) -> Result<Outcome, ApiError> {
    let message: ClientMessage = super::object::from_str(text)
        .map_err(|e| ApiError::with_message(Api::BadRequest, format!("unreadable message: {e}")))?;
    let address = session.as_ref().map(|(a, _)| *a);
    let sent = |ok: bool| if ok { Outcome::Open } else { Outcome::Gone };
    match message {
        ClientMessage::Ping => Ok(sent(
            send(socket, Utf8Bytes::from_static(r#"{"type":"pong"}"#)).await,
        )),
        ClientMessage::Auth { token } => {
            let (a, hash, expires) = state.sessions.authenticate(&token).await?;
            state.hub.set_session(id, &hash, expires);
            *session = Some((a, hash));
            let reply = serde_json::json!({"type": "authed", "address": a.to_string()});
            Ok(sent(send(socket, Utf8Bytes::from(reply.to_string())).await))
        }
        ClientMessage::Move {
            reference,
            match_id,
            seq,
            cell,
            mark,
        } => {
            if reference.as_ref().is_some_and(|r| r.len() > MAX_REF) {
                let e =
                    ApiError::with_message(Api::BadRequest, "a move's ref is at most 128 bytes");
                return Ok(Outcome::Reply(move_error_text(&e, None)));
            }
            let answer = play(state, session.as_ref(), MatchId(match_id), seq, cell, mark).await;
            // The socket's moves, as `triad_http_requests_total` counts the posted ones.
            let code = answer.as_ref().map_or_else(|e| e.body.error, |_| "ok");
            metrics::counter!("triad_ws_moves_total", "outcome" => code).increment(1);
            Ok(Outcome::Reply(match answer {
                Ok(ack) => {
                    let body = Ack {
                        kind: "ack",
                        reference: reference.as_deref(),
                        ack: &ack,
                    };
                    Utf8Bytes::from(serde_json::to_string(&body).unwrap_or_default())
                }
                Err(e) => move_error_text(&e, reference.as_deref()),
            }))
        }
        ClientMessage::Unsubscribe { topic } => {
            let topic = resolve_topic(&topic, address)?;
            state.hub.unsubscribe(id, &topic);
            delivered.remove(&topic);
            Ok(Outcome::Open)
        }
        ClientMessage::Subscribe { topic, since } => {
            // A session that ended since the socket logged in subscribes to nothing more
            // (the sweep closes such a socket within seconds; this closes it now).
            if let Some((_, hash)) = session.as_ref()
                && let Err(e) = state.sessions.session(hash).await.map_err(ApiError::from)
            {
                // A failing database is not an ended session.
                if e.status != axum::http::StatusCode::UNAUTHORIZED {
                    return Err(e);
                }
                return Ok(Outcome::SessionEnded(e));
            }
            let topic = resolve_topic(&topic, address)?;
            subscribe(state, socket, (id, client), delivered, topic, since).await
        }
    }
}

/// The most events one `subscribe` replays from the log. A longer catch-up ends with
/// `{"type":"more","topic":…,"seq":…}` instead of `subscribed`: the client subscribes
/// again with that `seq` as `since` for the next page.
pub const CATCH_UP_PAGE: u32 = 256;

/// `triad_catch_ups_total{from}`: subscriptions' catch-ups, from the hub's memory of
/// recent matches (`memory`) or from the database (`log`: the event log, or an agents'
/// inbox table).
pub const CATCH_UPS: &str = "triad_catch_ups_total";

/// What a match topic's catch-up costs of the replay budget: about one game's events.
const MATCH_CATCH_UP_COST: u32 = 32;

/// The catch-up of a `subscribe` after `since`, at most one [page](CATCH_UP_PAGE), then
/// `subscribed` (and live frames from then on) or, with more to come, `more`. The events
/// replayed count against the client's budget (`--replay-events-per-ip`); a catch-up over
/// it is refused with `rate_limited` and `retry_after_s`, naming the topic and the `seq` to
/// subscribe from again.
async fn subscribe(
    state: &ApiState,
    socket: &mut WebSocket,
    (id, client): (u64, IpAddr),
    delivered: &mut HashMap<String, u64>,
    topic: String,
    since: u64,
) -> Result<Outcome, ApiError> {
    let last = since.max(delivered.get(&topic).copied().unwrap_or(0));
    // A page costs the client's budget up front, before the database is read: a whole
    // page for a topic that may be long, less for a match (one game's events).
    let cost = if topic.starts_with("match:") {
        MATCH_CATCH_UP_COST
    } else {
        CATCH_UP_PAGE
    };
    if let Err(e) = state.limits.check_replay(client, cost) {
        let extra =
            serde_json::json!({ "topic": topic, "seq": last, "retry_after_s": e.retry_after_s });
        return Ok(Outcome::Reply(error_frame(&e, extra)));
    }
    // Subscribe first, then read the log: live frames that arrive meanwhile wait in the
    // queue and are dropped as duplicates if the log already had them. A match this node
    // saw begin is caught up from the hub's memory instead, at the same instant.
    let remembered = state.hub.subscribe_from(id, &topic, last);
    metrics::counter!(CATCH_UPS, "from" => if remembered.is_some() { "memory" } else { "log" })
        .increment(1);
    // `apps:<address>` is the agents' inbox, numbered by message, not by event.
    let page: Result<Vec<(u64, Utf8Bytes)>, ApiError> = match remembered {
        Some(frames) => Ok(frames),
        None => match crate::relay::topic_owner(&topic) {
            Some(owner) => state
                .relay
                .frames(owner, last, CATCH_UP_PAGE)
                .await
                .map(|frames| {
                    frames
                        .into_iter()
                        .map(|(seq, text)| (seq, Utf8Bytes::from(text)))
                        .collect()
                })
                .map_err(ApiError::from),
            None => state
                .store
                .topic_events(&topic, last, CATCH_UP_PAGE)
                .await
                .map(|rows| {
                    rows.into_iter()
                        .map(|row| (row.seq, Utf8Bytes::from(frame_text(&topic, &row.body))))
                        .collect()
                })
                .map_err(ApiError::from),
        },
    };
    let page = page.inspect_err(|_| {
        // Not followed without its catch-up: the client subscribes again.
        state.hub.unsubscribe(id, &topic);
        delivered.remove(&topic);
    })?;
    let more = page.len() >= CATCH_UP_PAGE as usize;
    let mut last = last;
    for (seq, text) in page {
        last = seq;
        if socket.feed(Message::Text(text)).await.is_err() {
            return Ok(Outcome::Gone);
        }
    }
    let reply = if more {
        // Not following the topic until its catch-up is done: frames queued meanwhile are
        // dropped (`fresh`), and the next page reads them from the log.
        state.hub.unsubscribe(id, &topic);
        delivered.remove(&topic);
        serde_json::to_string(&More {
            kind: "more",
            topic: &topic,
            seq: last,
        })
    } else {
        delivered.insert(topic.clone(), last);
        serde_json::to_string(&Subscribed {
            kind: "subscribed",
            topic: &topic,
            seq: last,
            // The server's time, so a client can show deadlines by the server's clock.
            now_ms: state.core.clock().now_ms(),
        })
    };
    // The catch-up and this answer go out in one write.
    let reply = reply.unwrap_or_default();
    Ok(if send(socket, Utf8Bytes::from(reply)).await {
        Outcome::Open
    } else {
        Outcome::Gone
    })
}

/// A move sent on the socket: the session is checked again (a logout ends it), the
/// per-address rate limit applies, and the engine answers as for `POST …/moves`.
async fn play(
    state: &ApiState,
    session: Option<&(Address, String)>,
    match_id: MatchId,
    seq: u8,
    cell: u8,
    mark: Mark,
) -> Result<super::games::CommandAck, ApiError> {
    let Some((_, hash)) = session else {
        return Err(ApiError::with_message(
            Api::Unauthorized,
            "log in (send an auth message, or connect with ?token=) before sending a move",
        ));
    };
    let (me, _) = state.sessions.session(hash).await?;
    state.check_address_rate(me)?;
    let command = Command::Move {
        match_id,
        seq,
        cell,
        mark,
        signed: None,
    };
    super::games::execute_for_ack(state, me, command, Some(match_id)).await
}

fn resolve_topic(topic: &str, address: Option<Address>) -> Result<String, ApiError> {
    match topic {
        "lobby" => Ok("lobby".to_owned()),
        "tournaments" => Ok("tournaments".to_owned()),
        "inbox" => address.map(|a| format!("inbox:{a}")).ok_or_else(|| {
            ApiError::with_message(
                Api::Unauthorized,
                "log in (send an auth message) to follow your inbox",
            )
        }),
        "apps" => address.map(crate::relay::topic).ok_or_else(|| {
            ApiError::with_message(
                Api::Unauthorized,
                "log in (send an auth message) to follow your agents' inbox",
            )
        }),
        t => {
            let id = |prefix: &str| t.strip_prefix(prefix).and_then(|n| n.parse::<u64>().ok());
            match (id("match:"), id("tournament:")) {
                (Some(n), _) => Ok(format!("match:{n}")),
                (_, Some(n)) => Ok(format!("tournament:{n}")),
                _ => Err(ApiError::with_message(
                    Api::BadRequest,
                    "topics are match:<id>, tournament:<id>, tournaments, inbox, apps and lobby",
                )),
            }
        }
    }
}
