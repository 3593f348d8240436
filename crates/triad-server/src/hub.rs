//! Realtime fan-out: which topics an event goes to, and the subscribers of each topic.
//!
//! Topics are `match:<id>` (everything about a match: players and spectators),
//! `inbox:<address>` (challenges, match starts and ends, money and rated puzzle attempts of
//! that address) and `lobby` (queue activity, starts and ends); and `apps:<address>`, the
//! agents' messages to that address, which the relay publishes itself
//! ([`Hub::publish_frame`]). Each event comes encoded ([`Encoded`]: the core encodes it
//! once, for its stored row and here), its frame is built once per topic, and the same
//! bytes go to every subscriber. Every connection has a bounded queue; a subscriber whose
//! queue is full is too slow: it is dropped from every topic and told to close, so it never
//! slows the others. It reconnects and catches up from its last sequence number.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
};

use axum::extract::ws::Utf8Bytes;
use tokio::sync::{Notify, mpsc};
use triad_engine::{Account, Address, Engine, Event, EventKind, Origin, Seat};

use crate::store::Encoded;

/// One encoded event for one topic.
#[derive(Clone, Debug)]
pub struct Frame {
    /// The topic it was published on.
    pub topic: Arc<str>,
    /// The event's sequence number.
    pub seq: u64,
    /// `{"type":"event","topic":…,"event":…}`.
    pub text: Utf8Bytes,
}

/// Builds a frame's text from an event's JSON, in one allocation of exactly its length.
#[must_use]
pub fn frame_text(topic: &str, event_json: &str) -> String {
    const HEAD: &str = r#"{"type":"event","topic":"#;
    const MIDDLE: &str = r#","event":"#;
    // Topics are plain ASCII (`match:7`, `inbox:0x…`): quoted as they are.
    let plain = topic
        .bytes()
        .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
    let quoted = if plain {
        None
    } else {
        Some(serde_json::to_string(topic).unwrap_or_default())
    };
    let topic_len = quoted.as_ref().map_or(topic.len() + 2, String::len);
    let mut text =
        String::with_capacity(HEAD.len() + topic_len + MIDDLE.len() + event_json.len() + 1);
    text.push_str(HEAD);
    match &quoted {
        Some(q) => text.push_str(q),
        None => {
            text.push('"');
            text.push_str(topic);
            text.push('"');
        }
    }
    text.push_str(MIDDLE);
    text.push_str(event_json);
    text.push('}');
    text
}

/// The topics an event is published on. Needs the engine after the event, for the seats of
/// the match it concerns.
#[must_use]
pub fn topics(event: &Event, engine: &Engine) -> Vec<String> {
    let mut out = Vec::with_capacity(4);
    let mut inbox: Vec<Address> = Vec::new();
    if let Some(id) = event.match_id() {
        out.push(format!("match:{id}"));
    }
    // A match's own events go to everyone it concerns, as `match_players` records them:
    // the store keeps no inbox rows for those and derives them from that table
    // (`store::inbox_is_derived`), so this set and that table must agree.
    // (A match the engine has already forgotten falls back on the event's own addresses.)
    let concerned = |inbox: &mut Vec<Address>| {
        if let Some(m) = event.match_id().and_then(|id| engine.match_(id)) {
            inbox.extend(m.concerned());
        } else if let EventKind::ChallengeIssued {
            challenger,
            opponent,
            ..
        } = &event.kind
        {
            inbox.extend([*challenger, *opponent]);
        } else if let EventKind::GameStarted { seats, .. } = &event.kind {
            inbox.extend(seats.iter().filter_map(Seat::address));
        }
    };
    match &event.kind {
        EventKind::ChallengeIssued { .. }
        | EventKind::ChallengeAccepted { .. }
        | EventKind::ChallengeDeclined { .. }
        | EventKind::ChallengeExpired { .. }
        | EventKind::MatchAborted { .. }
        | EventKind::RematchOffered { .. } => concerned(&mut inbox),
        EventKind::Queued { player, .. } => {
            inbox.push(*player);
            out.push("lobby".to_owned());
        }
        EventKind::GameStarted { .. } | EventKind::GameEnded { .. } => {
            concerned(&mut inbox);
            out.push("lobby".to_owned());
        }
        EventKind::Transferred { transfer, .. } => {
            for account in [transfer.from, transfer.to] {
                if let Account::Player(a) = account {
                    inbox.push(a);
                }
            }
        }
        EventKind::PuzzleAttempted { player, .. } => inbox.push(*player),
        EventKind::Moved { .. } => {}
        EventKind::TournamentJoined { player, .. }
        | EventKind::TournamentLeft { player, .. }
        | EventKind::TournamentPaused { player, .. } => inbox.push(*player),
        EventKind::TournamentRound { bye, .. } => inbox.extend(*bye),
        EventKind::TournamentCreated { .. }
        | EventKind::TournamentStarted { .. }
        | EventKind::TournamentFinished { .. }
        | EventKind::TournamentCancelled { .. } => out.push("tournaments".to_owned()),
        // Every clock moved: the lobby and the tournaments' list say so; a match's page
        // reads its new deadline when it reconnects (the service was down until now).
        EventKind::ClocksResumed { .. } => {
            out.push("lobby".to_owned());
            out.push("tournaments".to_owned());
        }
    }
    // A tournament's own events, its games' starts and ends, and its pool's transfers also
    // go to the tournament's topic.
    let tournament = event.tournament_id().or_else(|| match &event.kind {
        EventKind::GameEnded { match_id, .. } => match engine.match_(*match_id)?.origin {
            Origin::Tournament { tournament, .. } => Some(tournament),
            _ => None,
        },
        _ => None,
    });
    if let Some(t) = tournament {
        out.push(format!("tournament:{t}"));
    }
    let mut seen = HashSet::new();
    for a in inbox {
        if seen.insert(a) {
            out.push(format!("inbox:{a}"));
        }
    }
    out
}

type ConnId = u64;

#[derive(Debug)]
struct Conn {
    tx: mpsc::Sender<Frame>,
    kicked: Arc<Notify>,
    /// The login the connection acts under: its token's hash and expiry.
    session: Option<(Arc<str>, u64)>,
    /// Notified when that login ends (a logout, here or on another node, or its expiry).
    session_ended: Arc<Notify>,
    topics: HashSet<String>,
}

#[derive(Debug, Default)]
struct Inner {
    topics: HashMap<String, HashSet<ConnId>>,
    conns: HashMap<ConnId, Conn>,
    next_id: ConnId,
    closing: bool,
}

/// The subscribers of every topic.
#[derive(Clone, Debug, Default)]
pub struct Hub {
    inner: Arc<Mutex<Inner>>,
    shutdown: Arc<Notify>,
}

/// A connection's registration: its frames, and the signal that it must close.
#[derive(Debug)]
pub struct Registration {
    /// The connection's id in the hub.
    pub id: u64,
    /// Frames of the topics it subscribed to.
    pub frames: mpsc::Receiver<Frame>,
    /// Notified when the connection was too slow and was dropped.
    pub kicked: Arc<Notify>,
    /// Notified when the login the connection acts under ended ([`Hub::end_session`]).
    pub session_ended: Arc<Notify>,
    /// Notified when the server shuts down.
    pub shutdown: Arc<Notify>,
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a connection with a queue of `capacity` frames.
    pub fn register(&self, capacity: usize) -> Registration {
        let (tx, frames) = mpsc::channel(capacity);
        let kicked = Arc::new(Notify::new());
        let session_ended = Arc::new(Notify::new());
        let mut inner = self.lock();
        inner.next_id += 1;
        let id = inner.next_id;
        inner.conns.insert(
            id,
            Conn {
                tx,
                kicked: kicked.clone(),
                session: None,
                session_ended: session_ended.clone(),
                topics: HashSet::new(),
            },
        );
        metrics::gauge!("triad_open_websockets").set(inner.conns.len() as f64);
        Registration {
            id,
            frames,
            kicked,
            session_ended,
            shutdown: self.shutdown.clone(),
        }
    }

    /// Records the login a connection acts under (its token's hash and expiry), so that
    /// [`end_session`](Hub::end_session) and [`end_expired`](Hub::end_expired) reach it.
    pub fn set_session(&self, id: u64, token_hash: &str, expires_ms: u64) {
        if let Some(conn) = self.lock().conns.get_mut(&id) {
            conn.session = Some((Arc::from(token_hash), expires_ms));
        }
    }

    /// A login ended (logged out, here or on another node): every connection acting under
    /// it is told to close. Returns how many were.
    pub fn end_session(&self, token_hash: &str) -> usize {
        self.end_sessions(|hash, _| hash == token_hash)
    }

    /// Tells every connection whose login has expired by `now_ms` to close. Returns how
    /// many were.
    pub fn end_expired(&self, now_ms: u64) -> usize {
        self.end_sessions(|_, expires| now_ms >= expires)
    }

    /// Tells every connection whose login (token hash, expiry) is `ended` to close, in one
    /// pass over the connections. Returns how many were.
    pub fn end_sessions(&self, ended: impl Fn(&str, u64) -> bool) -> usize {
        let inner = self.lock();
        let mut count = 0;
        for conn in inner.conns.values() {
            if conn
                .session
                .as_ref()
                .is_some_and(|(hash, expires)| ended(hash, *expires))
            {
                conn.session_ended.notify_one();
                count += 1;
            }
        }
        count
    }

    /// The distinct logins the open connections act under (token hashes).
    #[must_use]
    pub fn sessions(&self) -> Vec<Arc<str>> {
        let inner = self.lock();
        let mut seen: HashSet<Arc<str>> = HashSet::new();
        for (hash, _) in inner.conns.values().filter_map(|c| c.session.as_ref()) {
            seen.insert(hash.clone());
        }
        seen.into_iter().collect()
    }

    /// Subscribes a connection to a topic.
    pub fn subscribe(&self, id: u64, topic: &str) {
        let mut inner = self.lock();
        if let Some(conn) = inner.conns.get_mut(&id) {
            conn.topics.insert(topic.to_owned());
            inner.topics.entry(topic.to_owned()).or_default().insert(id);
        }
    }

    /// Unsubscribes a connection from a topic.
    pub fn unsubscribe(&self, id: u64, topic: &str) {
        let mut inner = self.lock();
        if let Some(conn) = inner.conns.get_mut(&id) {
            conn.topics.remove(topic);
        }
        remove_from_topic(&mut inner, topic, id);
    }

    /// Forgets a connection.
    pub fn unregister(&self, id: u64) {
        let mut inner = self.lock();
        drop_conn(&mut inner, id);
        metrics::gauge!("triad_open_websockets").set(inner.conns.len() as f64);
    }

    /// Sends committed events to their topics' subscribers.
    pub fn publish(&self, events: &[Encoded<'_>]) {
        let mut inner = self.lock();
        if inner.topics.is_empty() {
            return;
        }
        let mut slow: Vec<ConnId> = Vec::new();
        for encoded in events {
            for topic in &encoded.topics {
                let Some(subscribers) = inner.topics.get(topic) else {
                    continue;
                };
                if subscribers.is_empty() {
                    continue;
                }
                let frame = Frame {
                    topic: Arc::from(topic.as_str()),
                    seq: encoded.event.seq,
                    text: Utf8Bytes::from(frame_text(topic, &encoded.json)),
                };
                for id in subscribers {
                    if let Some(conn) = inner.conns.get(id)
                        && conn.tx.try_send(frame.clone()).is_err()
                    {
                        slow.push(*id);
                    }
                }
            }
        }
        for id in slow {
            if let Some(conn) = inner.conns.get(&id) {
                conn.kicked.notify_one();
            }
            drop_conn(&mut inner, id);
            metrics::counter!("triad_slow_websockets_dropped_total").increment(1);
        }
    }

    /// Sends one frame, already encoded, to a topic's subscribers: for feeds that are not
    /// engine events (the agents' inbox, `apps:<address>`, numbered by message). A slow
    /// subscriber is dropped as in [`publish`](Hub::publish).
    pub fn publish_frame(&self, topic: &str, seq: u64, text: String) {
        let mut inner = self.lock();
        let Some(subscribers) = inner.topics.get(topic) else {
            return;
        };
        let frame = Frame {
            topic: Arc::from(topic),
            seq,
            text: Utf8Bytes::from(text),
        };
        let slow: Vec<ConnId> = subscribers
            .iter()
            .filter(|id| {
                inner
                    .conns
                    .get(id)
                    .is_some_and(|conn| conn.tx.try_send(frame.clone()).is_err())
            })
            .copied()
            .collect();
        for id in slow {
            if let Some(conn) = inner.conns.get(&id) {
                conn.kicked.notify_one();
            }
            drop_conn(&mut inner, id);
            metrics::counter!("triad_slow_websockets_dropped_total").increment(1);
        }
    }

    /// Tells every connection to close (graceful shutdown).
    pub fn close_all(&self) {
        self.lock().closing = true;
        self.shutdown.notify_waiters();
    }

    /// Whether the server is shutting down.
    #[must_use]
    pub fn is_closing(&self) -> bool {
        self.lock().closing
    }

    /// The number of open connections.
    #[must_use]
    pub fn connections(&self) -> usize {
        self.lock().conns.len()
    }
}

fn remove_from_topic(inner: &mut Inner, topic: &str, id: ConnId) {
    if let Some(set) = inner.topics.get_mut(topic) {
        set.remove(&id);
        if set.is_empty() {
            inner.topics.remove(topic);
        }
    }
}

fn drop_conn(inner: &mut Inner, id: ConnId) {
    if let Some(conn) = inner.conns.remove(&id) {
        for topic in &conn.topics {
            remove_from_topic(inner, topic, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::frame_text;

    proptest! {
        /// The frame is JSON whose topic is the topic, whatever its characters, and whose
        /// event is the event.
        #[test]
        fn a_frame_is_its_topic_and_event_as_json(topic in any::<String>(), n in any::<u64>()) {
            let event = serde_json::json!({"seq": n, "kind": {"type": "x"}}).to_string();
            let text = frame_text(&topic, &event);
            prop_assert_eq!(text.len(), text.capacity());
            let frame: serde_json::Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(frame["type"].as_str(), Some("event"));
            prop_assert_eq!(frame["topic"].as_str(), Some(topic.as_str()));
            prop_assert_eq!(frame["event"].to_string(), event);
        }
    }
}
