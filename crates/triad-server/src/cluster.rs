//! Several nodes on one PostgreSQL database: how a node hears what the others committed.
//!
//! Each node listens on three channels. `triad_events` announces a batch another node
//! committed: its events with their topics, in one notification or several in a row, each
//! with its last sequence number ([`Announcement`]). A node that has every event before
//! them applies them and publishes them to its own WebSockets as heard
//! ([`Core::apply_announced`]); one that heard a number alone (an event too large to
//! announce), or missed an earlier announcement, reads the new events by sequence number
//! ([`Core::catch_up`]). `triad_apps` says "an agents' message
//! was stored" (`<node> <recipient> <id>`): the node reads it and delivers it to its own
//! subscribers of that inbox. `triad_sessions` says "this session was logged out" (its
//! token hash): the node drops it from its session cache and closes the sockets that act
//! under it. A notification can be missed (the listening connection drops, or the node is
//! busy): so the node also follows the log every second, and again whenever its listener
//! reconnects. Nothing is lost that way; a WebSocket client that reconnects also catches
//! up from its last sequence number.
//!
//! The session cache trusts this listener ([`Sessions::heard`]): every notification heard,
//! or a ping answered after a second with none, proves it still hears; a dropped or silent
//! connection empties the cache ([`Sessions::deaf`]) until a new one listens. A missed
//! logout's sockets are caught by the session sweep
//! ([`Sessions::sweep`](crate::sessions::Sessions::sweep)), which checks every socket's
//! session against the database every 5 s.

use std::{sync::Arc, time::Duration};

use sqlx::postgres::{PgListener, PgNotification};
use tokio::time::Instant;
use triad_engine::Address;

use crate::{
    core::Core,
    hub::Hub,
    relay::Relay,
    sessions::Sessions,
    store::{Announcement, EVENTS_CHANNEL, SESSIONS_CHANNEL, Store, relay::APPS_CHANNEL},
};

/// How often a node follows the log without being told to.
const POLL: Duration = Duration::from_secs(1);

/// What a node follows the others with: its engine, its database, its fan-out, its
/// agents' relay and its sessions.
#[derive(Clone, Debug)]
pub struct Node {
    /// The engine, which catches up with the log.
    pub core: Core,
    /// The shared database.
    pub store: Store,
    /// This node's subscribers.
    pub hub: Hub,
    /// This node's agents' relay.
    pub relay: Arc<Relay>,
    /// This node's sessions, whose cache hears the other nodes' logouts from here.
    pub sessions: Arc<Sessions>,
}

/// Follows the other nodes until the server stops. Only for a shared database.
pub async fn follow(state: Node) {
    loop {
        if state.hub.is_closing() {
            return;
        }
        let mut listener = match connect(state.store.url()).await {
            Ok(l) => l,
            Err(error) => {
                tracing::warn!(%error, "cannot listen for the other nodes; retrying in 1 s");
                tokio::time::sleep(POLL).await;
                continue;
            }
        };
        // Listening now: what the cache held may have missed a logout while nothing
        // listened, and from here on every logout is heard.
        state.sessions.deaf();
        state.sessions.heard(Instant::now());
        // Whether the log may hold events this node has not applied.
        let mut behind = true;
        loop {
            if state.hub.is_closing() {
                return;
            }
            if behind && let Err(error) = state.core.catch_up().await {
                tracing::warn!(%error, "could not follow the event log");
            }
            behind = true;
            match tokio::time::timeout(POLL, listener.try_recv()).await {
                // The poll interval passed with nothing heard: the listener proves it still
                // hears by answering a ping (whatever came before the answer is heard first).
                Err(_) => {
                    let ping = sqlx::query("SELECT 1").execute(&mut listener);
                    if !matches!(tokio::time::timeout(POLL, ping).await, Ok(Ok(_))) {
                        tracing::warn!("the listener connection does not answer; reconnecting");
                        state.sessions.deaf();
                        break;
                    }
                    while let Some(n) = listener.next_buffered() {
                        hear(&state, &n).await;
                    }
                    state.sessions.heard(Instant::now());
                }
                Ok(Ok(Some(first))) => {
                    // A batch's announcement, its last `seq`, that this node already has
                    // (its own batches, above all) asks for no read.
                    behind = hear(&state, &first).await;
                    while let Some(n) = listener.next_buffered() {
                        behind |= hear(&state, &n).await;
                    }
                    state.sessions.heard(Instant::now());
                }
                // The connection dropped: logouts may be missed until it is made again.
                Ok(Ok(None)) => {
                    tracing::warn!("lost the listener connection; reconnecting");
                    state.sessions.deaf();
                    break;
                }
                Ok(Err(error)) => {
                    tracing::warn!(%error, "lost the listener connection; reconnecting");
                    state.sessions.deaf();
                    break;
                }
            }
        }
    }
}

/// Acts on one notification; true when the log has grown past what this node applied
/// from it, so that it must be read.
async fn hear(state: &Node, n: &PgNotification) -> bool {
    if n.channel() == EVENTS_CHANNEL {
        let announced = match Announcement::parse(n.payload()) {
            Ok(announced) => announced,
            Err(error) => {
                tracing::warn!(%error, "an announcement that does not read; following the log");
                return true;
            }
        };
        // This node's own batches, above all, it has already.
        if state.core.has_applied(announced.last).await {
            return false;
        }
        return !state.core.apply_announced(&announced.events).await;
    }
    if n.channel() == APPS_CHANNEL {
        deliver(state, n.payload()).await;
    } else if n.channel() == SESSIONS_CHANNEL {
        // A logout on some node: forgotten here, and the sockets it opened here closed.
        state.sessions.logged_out_elsewhere(n.payload());
    }
    false
}

async fn connect(url: &str) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect(url).await?;
    listener
        .listen_all([EVENTS_CHANNEL, APPS_CHANNEL, SESSIONS_CHANNEL])
        .await?;
    Ok(listener)
}

/// Delivers another node's agents' message to this node's subscribers.
async fn deliver(state: &Node, payload: &str) {
    let mut parts = payload.split(' ');
    let (Some(node), Some(to), Some(id)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    if node == state.relay.node_id() {
        return;
    }
    let (Ok(to), Ok(id)) = (to.parse::<Address>(), id.parse::<u64>()) else {
        return;
    };
    match state.relay.inbox(to, id.saturating_sub(1), 1).await {
        Ok(items) => {
            for item in items.iter().filter(|i| i.id == id) {
                state.relay.publish(to, item);
            }
        }
        Err(error) => tracing::warn!(?error, "could not read another node's agents' message"),
    }
}
