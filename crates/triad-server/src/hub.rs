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
//!
//! The hub also remembers the frames of the matches it saw begin ([`Recent`]), so that a
//! subscription to such a match catches up from memory instead of reading the log: a
//! match's page, or a player's client, subscribes to its match from the start, and on
//! PostgreSQL that read was a round trip and a query for every player of every game.

use std::{
    collections::{HashMap, HashSet, VecDeque},
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
    // The store derives this one from the event's match (`store::match_topic`).
    if let Some(id) = event.match_id() {
        out.push(crate::store::match_topic(id.0));
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
        // Memory swept: what left it is in the store, and no reader sees a difference.
        EventKind::Forgotten { .. } => {}
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
    recent: Recent,
}

/// The most bytes of frames [`Recent`] keeps; past it, the matches that began first are
/// forgotten (their catch-ups read the log again).
pub const RECENT_BYTES: usize = 8 << 20;

/// The most frames [`Recent`] keeps of one match; a match with more is forgotten. One
/// page of a catch-up, so a catch-up from memory is always whole.
pub const RECENT_FRAMES: usize = 256;

/// The frames of every match this node saw begin, while they fit in [`RECENT_BYTES`].
///
/// Invariant: a match's frames are kept from the event that created it
/// ([`Event::creates_match`], so no earlier event names it) and then every frame of its
/// topic, in the order published (the order of the log), or not at all. So the frames after
/// any `since` are exactly what the log holds on that topic after `since`, as far as this
/// node has published. Anything that could publish less than the log holds (a rebuild of
/// the engine from the log) forgets them all ([`Hub::forget_recent`]).
///
/// [`Event::creates_match`]: triad_engine::Event::creates_match
#[derive(Debug, Default)]
struct Recent {
    matches: HashMap<Arc<str>, Vec<(u64, Utf8Bytes)>>,
    /// The matches kept, oldest first (a forgotten one may linger here: skipped).
    order: VecDeque<Arc<str>>,
    bytes: usize,
}

impl Recent {
    /// Whether `topic`'s frames are kept, or begin with this event (which creates its
    /// match).
    fn keeps(&self, topic: &str, creates: bool) -> bool {
        creates || self.matches.contains_key(topic)
    }

    /// Keeps a frame of `topic`; `creates` starts the match's frames.
    fn push(&mut self, topic: &str, seq: u64, text: &Utf8Bytes, creates: bool) {
        let frames = match self.matches.get_mut(topic) {
            Some(frames) => frames,
            None if creates => {
                let topic: Arc<str> = Arc::from(topic);
                self.order.push_back(topic.clone());
                self.matches.entry(topic).or_default()
            }
            None => return,
        };
        if frames.len() >= RECENT_FRAMES {
            self.forget(topic);
            return;
        }
        frames.push((seq, text.clone()));
        self.bytes += text.len();
        while self.bytes > RECENT_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            self.forget(&oldest);
        }
    }

    fn forget(&mut self, topic: &str) {
        if let Some(frames) = self.matches.remove(topic) {
            self.bytes -= frames.iter().map(|(_, text)| text.len()).sum::<usize>();
        }
    }

    /// The frames of `topic` after `since`, when they are kept.
    fn after(&self, topic: &str, since: u64) -> Option<Vec<(u64, Utf8Bytes)>> {
        let frames = self.matches.get(topic)?;
        let from = frames.partition_point(|(seq, _)| *seq <= since);
        Some(frames[from..].to_vec())
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
        subscribe(&mut inner, id, topic);
    }

    /// Subscribes a connection to a topic and, when this node keeps the topic's frames
    /// (a match it saw begin: [`Recent`]), returns those after `since`, at most
    /// [`RECENT_FRAMES`]. At one instant: every frame published before is returned, every
    /// one after is queued. `None`: the catch-up must read the log.
    pub fn subscribe_from(
        &self,
        id: u64,
        topic: &str,
        since: u64,
    ) -> Option<Vec<(u64, Utf8Bytes)>> {
        let mut inner = self.lock();
        subscribe(&mut inner, id, topic);
        inner.recent.after(topic, since)
    }

    /// Forgets every match's frames: the engine was rebuilt from the log, and the log may
    /// hold events this node never published (a commit reported failed that was made).
    pub fn forget_recent(&self) {
        self.lock().recent = Recent::default();
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

    /// Sends committed events to their topics' subscribers, in the log's order, and keeps
    /// the frames of the matches it saw begin ([`Recent`]).
    pub fn publish(&self, events: &[Encoded<'_>]) {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let mut slow: Vec<ConnId> = Vec::new();
        for encoded in events {
            let created = encoded.event.creates_match();
            for topic in &encoded.topics {
                let subscribers = inner.topics.get(topic).filter(|s| !s.is_empty());
                let creates = created.is_some() && topic.starts_with("match:");
                let kept = topic.starts_with("match:") && inner.recent.keeps(topic, creates);
                if subscribers.is_none() && !kept {
                    continue;
                }
                let text = Utf8Bytes::from(frame_text(topic, &encoded.json));
                if kept {
                    inner.recent.push(topic, encoded.event.seq, &text, creates);
                }
                let Some(subscribers) = subscribers else {
                    continue;
                };
                let frame = Frame {
                    topic: Arc::from(topic.as_str()),
                    seq: encoded.event.seq,
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

fn subscribe(inner: &mut Inner, id: ConnId, topic: &str) {
    if let Some(conn) = inner.conns.get_mut(&id) {
        conn.topics.insert(topic.to_owned());
        inner.topics.entry(topic.to_owned()).or_default().insert(id);
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
    use triad_engine::{Address, Event, EventKind, MatchId};
    use triad_rules::GameKind;

    use super::{Hub, RECENT_BYTES, RECENT_FRAMES, frame_text};
    use crate::store::Encoded;

    /// An event on match `id`'s topic: the one that creates the match (a queue joined), or a
    /// later one (a challenge accepted: the hub does not look inside).
    fn event(seq: u64, id: u64, creates: bool) -> Event {
        let match_id = MatchId(id);
        let kind = if creates {
            EventKind::Queued {
                match_id,
                player: Address::from_bytes([7; 32]),
                game: GameKind::TicTacToe,
                stake: 0,
            }
        } else {
            EventKind::ChallengeAccepted { match_id }
        };
        Event {
            seq,
            at_ms: seq,
            kind,
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

    /// A connection's catch-up from the hub's memory: the seqs, or None (read the log).
    fn catch_up(hub: &Hub, topic: &str, since: u64) -> Option<Vec<u64>> {
        let id = hub.register(8).id;
        let frames = hub.subscribe_from(id, topic, since);
        hub.unregister(id);
        frames.map(|f| f.into_iter().map(|(seq, _)| seq).collect())
    }

    #[test]
    fn a_match_seen_from_its_start_is_caught_up_from_memory_and_no_other() {
        let hub = Hub::default();
        // Match 1 began before this node was there: only its later events are seen.
        publish(
            &hub,
            &[
                event(5, 1, false),
                event(6, 2, true),
                event(7, 1, false),
                event(8, 2, false),
            ],
        );
        assert_eq!(catch_up(&hub, "match:1", 0), None);
        assert_eq!(catch_up(&hub, "match:2", 0), Some(vec![6, 8]));
        assert_eq!(catch_up(&hub, "match:2", 6), Some(vec![8]));
        assert_eq!(catch_up(&hub, "match:2", 8), Some(vec![]));
        assert_eq!(catch_up(&hub, "match:3", 0), None);
        // The frames are those a subscriber gets live, byte for byte.
        let id = hub.register(8).id;
        let frames = hub.subscribe_from(id, "match:2", 0).unwrap();
        let expected = Encoded::new(&event(6, 2, true), vec![]).unwrap().json;
        assert_eq!(frames[0].1.as_str(), frame_text("match:2", &expected));
        // A rebuild of the engine forgets them all.
        hub.forget_recent();
        assert_eq!(catch_up(&hub, "match:2", 0), None);
    }

    #[test]
    fn a_subscription_gets_every_frame_once_whether_remembered_or_queued() {
        let hub = Hub::default();
        publish(&hub, &[event(1, 1, true), event(2, 1, false)]);
        let mut registration = hub.register(8);
        assert_eq!(
            hub.subscribe_from(registration.id, "match:1", 0)
                .map(|f| f.len()),
            Some(2)
        );
        publish(&hub, &[event(3, 1, false)]);
        assert_eq!(registration.frames.try_recv().map(|f| f.seq).ok(), Some(3));
        assert!(registration.frames.try_recv().is_err());
    }

    #[test]
    fn a_match_with_too_many_frames_is_forgotten() {
        let hub = Hub::default();
        let mut events = vec![event(1, 1, true)];
        events.extend((2..=RECENT_FRAMES as u64).map(|seq| event(seq, 1, false)));
        publish(&hub, &events);
        assert_eq!(
            catch_up(&hub, "match:1", 0).map(|s| s.len()),
            Some(RECENT_FRAMES)
        );
        publish(&hub, &[event(RECENT_FRAMES as u64 + 1, 1, false)]);
        assert_eq!(catch_up(&hub, "match:1", 0), None);
    }

    #[test]
    fn past_its_bytes_the_matches_that_began_first_are_forgotten_first() {
        let hub = Hub::default();
        let frame = frame_text(
            "match:1",
            &Encoded::new(&event(1, 1, true), vec![]).unwrap().json,
        )
        .len();
        // Enough matches of one frame each to pass the bound by a few.
        let count = RECENT_BYTES / frame + 3;
        let events: Vec<Event> = (1..=count as u64).map(|id| event(id, id, true)).collect();
        publish(&hub, &events);
        assert_eq!(catch_up(&hub, "match:1", 0), None);
        assert_eq!(
            catch_up(&hub, &format!("match:{count}"), 0),
            Some(vec![count as u64])
        );
        let inner = hub.lock();
        assert!(inner.recent.bytes <= RECENT_BYTES);
        assert_eq!(
            inner.recent.bytes,
            inner
                .recent
                .matches
                .values()
                .flatten()
                .map(|(_, t)| t.len())
                .sum::<usize>()
        );
    }

    proptest! {
        /// Whatever the order of matches and events, a catch-up from memory is exactly
        /// what the log holds on the topic after `since`.
        #[test]
        fn a_catch_up_from_memory_is_the_log_after_since(
            plan in proptest::collection::vec((0u64..6, any::<bool>()), 1..80),
            since in 0u64..90,
            forget_at in proptest::option::of(0usize..80),
        ) {
            let hub = Hub::default();
            // Match ids are given in order: the first event naming a new id creates it.
            let mut next = 1;
            let mut log: Vec<Event> = Vec::new();
            for (i, (pick, new)) in plan.into_iter().enumerate() {
                let seq = i as u64 + 1;
                let event = if new || next == 1 {
                    next += 1;
                    event(seq, next - 1, true)
                } else {
                    event(seq, 1 + pick % (next - 1), false)
                };
                publish(&hub, std::slice::from_ref(&event));
                log.push(event);
                if forget_at == Some(i) {
                    hub.forget_recent();
                }
            }
            for id in 1..next {
                let topic = format!("match:{id}");
                let expected: Vec<u64> = log.iter().filter(|e| e.match_id() == Some(MatchId(id)) && e.seq > since).map(|e| e.seq).collect();
                if let Some(got) = catch_up(&hub, &topic, since) {
                    prop_assert_eq!(got, expected);
                }
            }
        }
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
