//! Realtime fan-out: which topics an event goes to, and the subscribers of each topic.
//!
//! Topics are `match:<id>` (everything about a match: players and spectators),
//! `inbox:<address>` (challenges, match starts and ends, money of that address) and
//! `lobby` (queue activity, starts and ends); and `apps:<address>`, the agents' messages to
//! that address, which the relay publishes itself ([`Hub::publish_frame`]). Each event comes
//! encoded ([`Encoded`]: the core encodes it once, for its stored row and here), its frame
//! is built once per topic, and the same bytes go to every subscriber. Every connection has a
//! bounded queue; a subscriber whose queue is full is too slow: it is dropped from every
//! topic and told to close, so it never slows the others. It reconnects and catches up from
//! its last sequence number.
//!
//! On a node of its own (SQLite), the hub also keeps the frames of recent matches
//! ([`Recent`]): every player subscribes to its match as the game starts, and that
//! catch-up is then answered from memory, in the same lock as the publishing, instead of
//! from the database.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::{Arc, Mutex},
};

use axum::extract::ws::Utf8Bytes;
use tokio::sync::{Notify, mpsc};
use triad_engine::{Account, Address, Engine, Event, EventKind, Seat};

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

/// Builds a frame's text from an event's JSON, in a string of exactly its length (the
/// hub may hold it a while, [`Recent`]).
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
        EventKind::Moved { .. } => {}
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
    topics: HashSet<String>,
}

#[derive(Debug, Default)]
struct Inner {
    topics: HashMap<String, HashSet<ConnId>>,
    conns: HashMap<ConnId, Conn>,
    next_id: ConnId,
    closing: bool,
    /// None when the node shares its database (a match's events may then come from
    /// another node, later than this node's own: the database is the one whole record).
    recent: Option<Recent>,
}

/// Every frame of `match:<id>` for each match from `floor` up, the oldest matches let go
/// first past `max_bytes`. A match at or above the floor with no entry has had no event
/// yet: its catch-up is empty. Fed only by [`Hub::publish`], with what was committed, so
/// it holds what the log holds for those matches.
#[derive(Debug)]
struct Recent {
    matches: BTreeMap<u64, Vec<(u64, Utf8Bytes)>>,
    /// Matches below it may have events not held here (from before the server started,
    /// or let go): their catch-up reads the database.
    floor: u64,
    bytes: usize,
    max_bytes: usize,
}

/// What one held frame is counted as, besides its text.
const RECENT_OVERHEAD: usize = 48;

impl Recent {
    fn push(&mut self, match_id: u64, seq: u64, text: &Utf8Bytes) {
        if match_id < self.floor {
            return;
        }
        self.matches
            .entry(match_id)
            .or_default()
            .push((seq, text.clone()));
        self.bytes += text.len() + RECENT_OVERHEAD;
        while self.bytes > self.max_bytes {
            let Some((id, frames)) = self.matches.pop_first() else {
                break;
            };
            self.floor = id + 1;
            self.bytes -= frames
                .iter()
                .map(|(_, t)| t.len() + RECENT_OVERHEAD)
                .sum::<usize>();
        }
    }

    /// The frames of `topic` after `since`, if it is a match held whole.
    fn after(&self, topic: &str, since: u64) -> Option<Vec<(u64, Utf8Bytes)>> {
        let id: u64 = topic.strip_prefix("match:")?.parse().ok()?;
        if id < self.floor {
            return None;
        }
        let frames = self.matches.get(&id).map_or(&[][..], Vec::as_slice);
        let start = frames.partition_point(|(seq, _)| *seq <= since);
        Some(frames[start..].to_vec())
    }
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
    /// Notified when the server shuts down.
    pub shutdown: Arc<Notify>,
}

/// The most bytes of frames [`Recent`] holds by default.
pub const RECENT_BYTES: usize = 4 << 20;

impl Hub {
    /// A hub that keeps the frames of the matches from `first_match` up (the engine's next
    /// match id when the server starts: older ones' events are in the database only), in
    /// at most `max_bytes`, to answer their catch-ups ([`Hub::subscribe`]). For a node
    /// that alone writes its database; a shared one uses [`Hub::default`].
    #[must_use]
    pub fn with_recent(first_match: u64, max_bytes: usize) -> Hub {
        let hub = Hub::default();
        hub.lock().recent = Some(Recent {
            matches: BTreeMap::new(),
            floor: first_match,
            bytes: 0,
            max_bytes,
        });
        hub
    }

    /// Lets go of every held frame: the engine was rebuilt from the database, whose log
    /// is then the record; matches from `first_match` up are held again as they happen.
    pub fn forget_recent(&self, first_match: u64) {
        if let Some(recent) = &mut self.lock().recent {
            recent.matches.clear();
            recent.bytes = 0;
            recent.floor = recent.floor.max(first_match);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a connection with a queue of `capacity` frames.
    pub fn register(&self, capacity: usize) -> Registration {
        let (tx, frames) = mpsc::channel(capacity);
        let kicked = Arc::new(Notify::new());
        let mut inner = self.lock();
        inner.next_id += 1;
        let id = inner.next_id;
        inner.conns.insert(
            id,
            Conn {
                tx,
                kicked: kicked.clone(),
                topics: HashSet::new(),
            },
        );
        metrics::gauge!("triad_open_websockets").set(inner.conns.len() as f64);
        Registration {
            id,
            frames,
            kicked,
            shutdown: self.shutdown.clone(),
        }
    }

    /// Subscribes a connection to a topic. Returns the topic's frames after `since` when
    /// the hub holds them all (a recent match, [`Hub::with_recent`]); otherwise the
    /// catch-up is the database's. Either way, frames published from here on are queued
    /// for the connection, and some may also be in the catch-up: the connection drops the
    /// duplicates by `seq`.
    pub fn subscribe(&self, id: u64, topic: &str, since: u64) -> Option<Vec<(u64, Utf8Bytes)>> {
        let mut inner = self.lock();
        if let Some(conn) = inner.conns.get_mut(&id) {
            conn.topics.insert(topic.to_owned());
            inner.topics.entry(topic.to_owned()).or_default().insert(id);
        }
        inner.recent.as_ref()?.after(topic, since)
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
        let mut guard = self.lock();
        let inner = &mut *guard;
        if inner.topics.is_empty() && inner.recent.is_none() {
            return;
        }
        let mut slow: Vec<ConnId> = Vec::new();
        for encoded in events {
            let seq = encoded.event.seq;
            for topic in &encoded.topics {
                let subscribers = inner.topics.get(topic).filter(|s| !s.is_empty());
                // A match's own topic (an event has at most one) is held for catch-ups.
                let held = match (&mut inner.recent, encoded.event.match_id()) {
                    (Some(recent), Some(id)) if topic.starts_with("match:") => Some((recent, id.0)),
                    _ => None,
                };
                if subscribers.is_none() && held.is_none() {
                    continue;
                }
                let text = Utf8Bytes::from(frame_text(topic, &encoded.json));
                if let Some((recent, id)) = held {
                    recent.push(id, seq, &text);
                }
                let Some(subscribers) = subscribers else {
                    continue;
                };
                let frame = Frame {
                    topic: Arc::from(topic.as_str()),
                    seq,
                    text,
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
            drop_conn(inner, id);
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
    use triad_engine::{Level, MatchId};
    use triad_rules::{Cell, Mark, Player};

    use super::*;

    /// A move of match `id` as event `seq`.
    fn moved(id: u64, seq: u64) -> Event {
        Event {
            seq,
            at_ms: seq,
            kind: EventKind::Moved {
                match_id: MatchId(id),
                seq: 1,
                player: Player::First,
                by: Seat::Computer(Level::Random),
                cell: Cell::new(4).unwrap(),
                mark: Mark::X,
            },
            applied: None,
        }
    }

    fn publish(hub: &Hub, events: &[Event]) {
        let encoded: Vec<Encoded<'_>> = events
            .iter()
            .map(|e| Encoded::new(e, vec![format!("match:{}", e.match_id().unwrap())]).unwrap())
            .collect();
        hub.publish(&encoded);
    }

    fn seqs(frames: Option<Vec<(u64, Utf8Bytes)>>) -> Option<Vec<u64>> {
        frames.map(|f| f.into_iter().map(|(seq, _)| seq).collect())
    }

    #[test]
    fn a_recent_match_is_caught_up_from_memory_and_an_older_one_from_the_log() {
        // Matches 1 and 2 were there when the server started: their events before it are
        // only in the log.
        let hub = Hub::with_recent(3, RECENT_BYTES);
        let id = hub.register(16).id;
        publish(
            &hub,
            &[moved(3, 10), moved(2, 11), moved(3, 12), moved(4, 13)],
        );
        assert_eq!(seqs(hub.subscribe(id, "match:3", 0)), Some(vec![10, 12]));
        assert_eq!(seqs(hub.subscribe(id, "match:3", 10)), Some(vec![12]));
        assert_eq!(seqs(hub.subscribe(id, "match:3", 12)), Some(vec![]));
        assert_eq!(seqs(hub.subscribe(id, "match:4", 0)), Some(vec![13]));
        // A match with no event yet has nothing to catch up.
        assert_eq!(seqs(hub.subscribe(id, "match:9", 0)), Some(vec![]));
        assert_eq!(seqs(hub.subscribe(id, "match:2", 0)), None);
        for topic in ["match:1", "inbox:0x00", "lobby", "match:x"] {
            assert_eq!(seqs(hub.subscribe(id, topic, 0)), None, "{topic}");
        }
        // The frames are those the subscribers get, and those the log's rows make.
        let (_, text) = &hub.subscribe(id, "match:4", 0).unwrap()[0];
        let event = serde_json::to_string(&moved(4, 13)).unwrap();
        assert_eq!(text.as_str(), frame_text("match:4", &event));
        // A shared database's hub holds nothing.
        let shared = Hub::default();
        let id = shared.register(16).id;
        publish(&shared, &[moved(5, 14)]);
        assert_eq!(seqs(shared.subscribe(id, "match:5", 0)), None);
    }

    #[test]
    fn past_its_bytes_the_hub_lets_the_oldest_matches_go_whole() {
        let frame = frame_text("match:1", &serde_json::to_string(&moved(1, 1)).unwrap());
        // Room for five frames.
        let hub = Hub::with_recent(1, 5 * (frame.len() + RECENT_OVERHEAD) + 10);
        let id = hub.register(16).id;
        publish(
            &hub,
            &[
                moved(1, 1),
                moved(2, 2),
                moved(1, 3),
                moved(3, 4),
                moved(2, 5),
            ],
        );
        assert_eq!(seqs(hub.subscribe(id, "match:1", 0)), Some(vec![1, 3]));
        // The sixth frame lets match 1 go, both its frames; a later event of it is not held.
        publish(&hub, &[moved(3, 6), moved(1, 7)]);
        assert_eq!(seqs(hub.subscribe(id, "match:1", 0)), None);
        assert_eq!(seqs(hub.subscribe(id, "match:2", 0)), Some(vec![2, 5]));
        assert_eq!(seqs(hub.subscribe(id, "match:3", 3)), Some(vec![4, 6]));
        // After the engine is rebuilt from the log, only matches from then on are held.
        hub.forget_recent(4);
        assert_eq!(seqs(hub.subscribe(id, "match:3", 0)), None);
        assert_eq!(seqs(hub.subscribe(id, "match:4", 0)), Some(vec![]));
        publish(&hub, &[moved(4, 8)]);
        assert_eq!(seqs(hub.subscribe(id, "match:4", 0)), Some(vec![8]));
    }

    #[test]
    fn a_subscriber_gets_the_frame_the_hub_holds() {
        let hub = Hub::with_recent(1, RECENT_BYTES);
        let mut registration = hub.register(16);
        assert_eq!(
            seqs(hub.subscribe(registration.id, "match:1", 0)),
            Some(vec![])
        );
        publish(&hub, &[moved(1, 1)]);
        let live = registration.frames.try_recv().unwrap();
        let held = hub.subscribe(registration.id, "match:1", 0).unwrap();
        assert_eq!((live.seq, &live.text), (held[0].0, &held[0].1));
        assert_eq!(&*live.topic, "match:1");
    }

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
