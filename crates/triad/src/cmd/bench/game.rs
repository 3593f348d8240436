//! One game, from the logins to the check of its ending, and what every game shares.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use futures_util::SinkExt;
use serde_json::json;
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;

use super::{
    client::{
        Client, Failure, Servers, connect_client, fail, log_in_new, post, send_move, subscribe,
        until_event,
    },
    scripts::{Ending, script_for},
};

/// What every game shares.
pub(super) struct Shared {
    pub(super) servers: Servers,
    pub(super) seed: u32,
    pub(super) think_ms: u64,
    pub(super) game_timeout: Duration,
    pub(super) setup_limit: Option<Arc<tokio::sync::Semaphore>>,
    pub(super) login_per_game: bool,
    /// Each game opens its own two WebSockets and closes them at its end: with
    /// --ws-per-game, or with --login-per-game (a fresh session has no socket yet).
    pub(super) socket_per_game: bool,
    pub(super) moves_over_http: bool,
    /// Logged-in pairs between games (and from the warmup to the measured games), with
    /// their WebSockets unless --ws-per-game: a slot takes one, or logs a new pair in, and
    /// puts it back when its games are done.
    pub(super) sessions: std::sync::Mutex<Vec<[Client; 2]>>,
    /// Pairs logged in so far, which spreads them over the nodes.
    pub(super) pairs: AtomicU64,
}

/// A game's measures.
#[derive(Default)]
pub(super) struct GameResult {
    pub(super) latencies_ms: Vec<f64>,
    pub(super) setup_ms: f64,
    pub(super) game_ms: f64,
    pub(super) moves: u64,
}

/// Counts the games that are set up (or failed before that); every game then waits for
/// all. Dropping an arrival that never arrived counts it, so a failure never blocks the rest.
pub(super) struct Gate {
    pub(super) arrived: watch::Sender<u64>,
    pub(super) expected: u64,
}

/// A game's place at the [`Gate`] (none without --hold).
pub(super) struct Arrival {
    pub(super) gate: Option<Arc<Gate>>,
}

impl Arrival {
    /// Counts this game as set up and waits for every other.
    async fn arrive(&mut self) {
        if let Some(gate) = self.gate.take() {
            gate.arrived.send_modify(|n| *n += 1);
            let mut rx = gate.arrived.subscribe();
            let expected = gate.expected;
            let _ = rx.wait_for(|n| *n >= expected).await;
        }
    }
}

impl Drop for Arrival {
    fn drop(&mut self) {
        if let Some(gate) = self.gate.take() {
            gate.arrived.send_modify(|n| *n += 1);
        }
    }
}

/// Plays game `index`: two logins and two WebSockets (unless `pair` holds a logged-in pair,
/// which is reused without --login-per-game, with its WebSockets without --ws-per-game), a
/// challenge, an acceptance, the scripted moves, and the check of how it ended. The pair is
/// left in `pair` for the slot's next game only when this one went well.
pub(super) async fn play_game(
    ctx: &Shared,
    index: u64,
    mut arrival: Arrival,
    pair: &mut Option<[Client; 2]>,
) -> Result<GameResult, Failure> {
    let permit = match &ctx.setup_limit {
        Some(limit) => Some(
            Arc::clone(limit)
                .acquire_owned()
                .await
                .map_err(fail("setup"))?,
        ),
        None => None,
    };
    let started = Instant::now();
    let script = script_for(ctx.seed, index);
    let [first, second] = match pair.take() {
        Some(clients) if !ctx.login_per_game => clients,
        _ => {
            let pair = ctx.pairs.fetch_add(1, Ordering::Relaxed);
            let [a, b] = ctx.servers.nodes_of_pair(pair);
            let (a, b) = tokio::join!(log_in_new(&ctx.servers, a), log_in_new(&ctx.servers, b));
            [a?, b?].map(|session| Client { session, ws: None })
        }
    };
    let (a, b) = tokio::join!(
        connect_client(&ctx.servers, first),
        connect_client(&ctx.servers, second)
    );
    let mut players = [a?, b?];
    // The challenged client follows its inbox from the moment its WebSocket opens.
    let inbox_since = players[1].session.inbox_since;
    if players[1].new {
        subscribe(&mut players[1].ws, "inbox", inbox_since).await?;
    }
    let issued = post(
        &ctx.servers,
        &players[0].session,
        "/api/challenges",
        &json!({ "opponent": players[1].session.address, "game": "tic-tac-toe", "first": "challenger" }),
        "challenge",
    )
    .await?;
    let id = issued["match_id"]
        .as_u64()
        .ok_or_else(|| fail("challenge")(format!("no match id in {issued}")))?;
    // The challenged client learns of the challenge as a person would: on its inbox.
    until_event(&mut players[1].ws, "challenge_issued", id, None).await?;
    // The terms the challenge was made with: the server refuses the acceptance otherwise.
    post(
        &ctx.servers,
        &players[1].session,
        &format!("/api/challenges/{id}/accept"),
        &json!({ "stake": "0", "game": "tic-tac-toe", "challenger": players[0].session.address, "first": "challenger" }),
        "accept",
    )
    .await?;
    let topic = format!("match:{id}");
    for p in &mut players {
        subscribe(&mut p.ws, &topic, 0).await?;
    }
    let mut result = GameResult {
        setup_ms: started.elapsed().as_secs_f64() * 1000.0,
        ..GameResult::default()
    };
    drop(permit);
    arrival.arrive().await;
    let playing = Instant::now();
    for (k, &cell) in script.cells.iter().enumerate() {
        let seq = k as u64 + 1;
        let (mover, mark) = if k % 2 == 0 { (0, "X") } else { (1, "O") };
        if ctx.think_ms > 0 {
            // Between half and one and a half times the pause, differing by game and move.
            let jitter = (index.wrapping_mul(2_654_435_761) ^ seq.wrapping_mul(40_503)) % 1000;
            let pause = ctx.think_ms / 2 + ctx.think_ms * jitter / 1000;
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
        let [first, second] = &mut players;
        let (me, opponent) = if mover == 0 {
            (first, second)
        } else {
            (second, first)
        };
        let sent = Instant::now();
        // A refused move fails the game at once: its opponent would wait for it forever.
        let (_, seen) = tokio::try_join!(
            async {
                if ctx.moves_over_http {
                    let body = json!({ "seq": seq, "cell": cell, "mark": mark });
                    let path = format!("/api/matches/{id}/moves");
                    post(&ctx.servers, &me.session, &path, &body, "move").await?;
                } else {
                    send_move(&mut me.ws, id, seq, cell, mark).await?;
                }
                Ok::<(), Failure>(())
            },
            async {
                until_event(&mut opponent.ws, "moved", id, Some(seq)).await?;
                Ok::<Instant, Failure>(Instant::now())
            }
        )?;
        result
            .latencies_ms
            .push((seen - sent).as_secs_f64() * 1000.0);
        result.moves += 1;
    }
    // The last move's opponent sees the end; it must be the script's.
    let last_opponent = if script.cells.len() % 2 == 1 { 1 } else { 0 };
    let ended = until_event(&mut players[last_opponent].ws, "game_ended", id, None).await?;
    let k = &ended["kind"];
    let expected = match script.ending {
        Ending::Winner(0) => ("win", "first"),
        Ending::Winner(_) => ("win", "second"),
        Ending::Draw => ("draw", ""),
    };
    let got = (
        k["reason"].as_str().unwrap_or(""),
        k["winner"].as_str().unwrap_or(""),
    );
    if got.0 != expected.0 || (expected.0 == "win" && got.1 != expected.1) {
        return Err(Failure {
            stage: "wrong_ending",
            detail: format!("game {index}: expected {expected:?}, the server said {k}"),
        });
    }
    result.game_ms = playing.elapsed().as_secs_f64() * 1000.0;
    // Every event of this game came before its end: the next game's inbox starts after it.
    let ended_seq = ended["seq"].as_u64().unwrap_or(inbox_since);
    let mut kept = Vec::with_capacity(2);
    for mut p in players {
        p.session.inbox_since = ended_seq;
        let ws = if ctx.socket_per_game {
            let _ = p.ws.close(None).await;
            None
        } else {
            // The client leaves the match, as the web app does when its game is over.
            let leave = json!({ "type": "unsubscribe", "topic": topic }).to_string();
            p.ws.send(Message::text(leave))
                .await
                .map_err(fail("ws_send"))?;
            Some(p.ws)
        };
        kept.push(Client {
            session: p.session,
            ws,
        });
    }
    *pair = <[Client; 2]>::try_from(kept).ok();
    Ok(result)
}
