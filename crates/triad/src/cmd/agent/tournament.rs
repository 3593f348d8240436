//! `triad agent --tournament ID`: enters a tournament as a bot and plays every game it is
//! paired for, until the tournament ends, then prints its final place (and prize).
//!
//! It follows the tournament through the API: its own row and game
//! (`GET /api/tournaments/{id}?player=…`), the game's position (`GET /api/matches/{id}`),
//! and a move whenever it is to move (`POST /api/matches/{id}/moves`, chosen by the solver
//! at the agent's strength, and signed with the agent's key so that the game's transcript
//! proves the move was its own). A move the server refuses because the board moved on (a stale
//! `seq`, the clock) is dropped: the next look at the game decides again.

use std::time::Duration;

use anyhow::{Context, bail};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use triad_rules::{AnyGame, GameKind};
use triad_solver::Strength;

use crate::cmd::client::Client;

/// How long to wait between looks at the tournament when there is nothing to do.
const POLL: Duration = Duration::from_millis(250);

/// Error codes of refusals that a later look at the game settles: the game is over
/// (0), a stale or early `seq` (113, 114), the clock ran out (127), not in play (112).
const SETTLED_LATER: [u64; 5] = [0, 112, 113, 114, 127];

/// Enters tournament `id` and plays its games to the end.
pub(super) async fn play(
    client: &mut Client,
    id: u64,
    strength: Strength,
    rng: &mut ChaCha8Rng,
) -> anyhow::Result<()> {
    let me = client.address();
    match client
        .post(&format!("/api/tournaments/{id}/join"), &json!({}))
        .await
    {
        Ok(_) => eprintln!("triad agent: entered tournament {id} as {me}"),
        // Already in it (a restarted agent): play on.
        Err(e) if Client::refusal_code(&e) == Some(135) => {
            eprintln!("triad agent: back in tournament {id} as {me}");
        }
        Err(e) => return Err(e).with_context(|| format!("cannot enter tournament {id}")),
    }
    // Every move is signed for this server's transcript key.
    let key_id = client.transcript_key_id().await?;
    let mut moves = 0u32;
    loop {
        let t = match client
            .get(&format!("/api/tournaments/{id}?player={me}&limit=1"))
            .await
        {
            Ok(t) => t,
            // Rate limited, the server restarting: look again a little later.
            Err(e) if Client::passing(&e) => {
                tokio::time::sleep(POLL * 4).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        match t["phase"].as_str() {
            Some("finished") => return report(&t, &me, moves),
            Some("cancelled") => {
                eprintln!("triad agent: tournament {id} was cancelled; the fee was refunded");
                return Ok(());
            }
            _ => {}
        }
        let game = t["me"]["match_id"].as_u64();
        let moved = match game {
            Some(match_id) => {
                move_if_my_turn(client, &key_id, match_id, &me, strength, rng).await?
            }
            None => false,
        };
        if moved {
            moves += 1;
        } else {
            tokio::time::sleep(POLL).await;
        }
    }
}

/// Makes a move in match `match_id` when it is `me`'s turn; whether one was made.
async fn move_if_my_turn(
    client: &mut Client,
    key_id: &str,
    match_id: u64,
    me: &str,
    strength: Strength,
    rng: &mut ChaCha8Rng,
) -> anyhow::Result<bool> {
    let m = match client.get(&format!("/api/matches/{match_id}")).await {
        Ok(m) => m,
        Err(e) if Client::passing(&e) => return Ok(false),
        Err(e) => return Err(e),
    };
    let in_play = matches!(m["phase"].as_str(), Some("ready" | "in_progress"));
    if !in_play || m["turn_address"].as_str() != Some(me) {
        return Ok(false);
    }
    let kind: GameKind = m["game"]
        .as_str()
        .unwrap_or_default()
        .parse()
        .map_err(|e| anyhow::anyhow!("match {match_id}: {e}"))?;
    let board = m["board"].as_str().unwrap_or_default();
    let position = AnyGame::parse(kind, board)
        .map_err(|e| anyhow::anyhow!("match {match_id}'s board {board:?}: {e}"))?;
    let Some(mv) = triad_solver::table(kind).choose(&position, strength, rng) else {
        return Ok(false);
    };
    let seq = m["seq"].as_u64().unwrap_or(0) + 1;
    let signature = client.move_signature(
        key_id,
        match_id,
        u8::try_from(seq).context("a match has at most nine moves")?,
        mv.cell.index(),
        mv.mark.char(),
    );
    let body = json!({
        "seq": seq,
        "cell": mv.cell.index(),
        "mark": mv.mark.char().to_string(),
        "signature": signature,
    });
    match client
        .post(&format!("/api/matches/{match_id}/moves"), &body)
        .await
    {
        Ok(_) => Ok(true),
        Err(e)
            if Client::passing(&e)
                || Client::refusal_code(&e).is_some_and(|c| SETTLED_LATER.contains(&c)) =>
        {
            Ok(false)
        }
        Err(e) => Err(e).with_context(|| format!("move {seq} of match {match_id}")),
    }
}

/// Prints the final place: rank, points, games and prize.
fn report(t: &Value, me: &str, moves: u32) -> anyhow::Result<()> {
    let Some(standing) = t["me"]["standing"].as_object() else {
        bail!(
            "tournament {} finished without {me} in its standings",
            t["id"]
        );
    };
    let prize = t["prizes"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["player"]["address"] == me))
        .and_then(|p| p["amount"].as_str())
        .unwrap_or("0");
    eprintln!(
        "triad agent: tournament {} finished: rank {} of {}, {} points ({} won, {} drawn, {} lost, {} moves), prize {prize}",
        t["id"],
        standing["rank"],
        t["players"],
        standing["score"],
        standing["wins"],
        standing["draws"],
        standing["losses"],
        moves,
    );
    Ok(())
}
