//! Signed transcripts ([`crate::transcript`]): a finished match's, and the server's key
//! that signs them.

use axum::{
    Json,
    extract::{Path, State},
    http::header,
    response::{IntoResponse, Response},
};
use triad_engine::{MatchId, Phase};

use super::{
    ApiState,
    error::{Api, ApiError, ErrorBody},
};
use crate::transcript::{ClientMessage, Payouts, ServerKey, Transcript};

/// Events read per page while a transcript is gathered.
const PAGE: u32 = 1000;

/// A finished match's signed transcript: its events as a hash chain, with the server's
/// Ed25519 signature of the chain's head (the format: `docs/transcript.md`). The body is
/// the transcript file, byte for byte: save it as it comes and check it offline with
/// `triad verify`.
#[utoipa::path(get, path = "/api/matches/{id}/transcript", tag = "matches",
    params(("id" = u64, Path, description = "Match id")),
    responses(
        (status = 200, description = "The transcript file", content_type = "application/json", body = Transcript),
        (status = 404, description = "No such match (unknown_match)", body = ErrorBody),
        (status = 409, description = "The match is not finished (match_not_finished)", body = ErrorBody),
        (status = "4XX", body = ErrorBody),
    ))]
pub async fn transcript(
    State(state): State<ApiState>,
    Path(id): Path<u64>,
) -> Result<Response, ApiError> {
    // The stored row, not the engine's: it is written in the commit that ends the match,
    // so every event of the match is in the log once it says finished.
    let stored = state.store.match_(MatchId(id)).await?;
    let finished = match &stored {
        Some(m) => m.phase == Phase::Finished,
        None if state.match_view(MatchId(id)).await?.is_some() => false,
        None => return Err(ApiError::from(triad_engine::EngineError::UnknownMatch)),
    };
    if !finished {
        return Err(ApiError::new(Api::MatchNotFinished));
    }
    let topic = format!("match:{id}");
    let mut events = Vec::new();
    let mut since = 0;
    loop {
        let page = state.store.topic_events(&topic, since, PAGE).await?;
        let full = page.len() == PAGE as usize;
        if let Some(last) = page.last() {
            since = last.seq;
        }
        events.extend(page.into_iter().map(|e| e.body));
        if !full {
            break;
        }
    }
    let messages = signed_messages(&state, stored.as_ref()).await?;
    let payouts = Payouts::from(state.core.read().await.config().payouts);
    let body = Transcript::sign(&state.transcript_key, id, payouts, events, messages).render();
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// The signed envelopes of the agents' game a match referees, if it is one: the players'
/// own signatures of their moves.
async fn signed_messages(
    state: &ApiState,
    stored: Option<&triad_engine::Match>,
) -> Result<Vec<ClientMessage>, ApiError> {
    let Some(m) = stored else {
        return Ok(Vec::new());
    };
    let Some([a, b]) = m.seats.map(|s| s.map(|seat| seat.address())) else {
        return Ok(Vec::new());
    };
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(Vec::new());
    };
    let rows = state.store.signed_messages_of_match(m.id, [a, b]).await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            // A stored signature always parses: the relay stored it after checking it.
            let signed: triad_protocol::Signed = serde_json::from_str(&row.signed).ok()?;
            Some(ClientMessage {
                from: row.sender,
                to: row.recipient,
                app: row.app_id,
                action: row.action,
                payload: row.payload,
                public_key: signed.public_key,
                signature: signed.signature,
            })
        })
        .collect())
}

/// The server's transcript key: the Ed25519 public key whose signatures a transcript
/// carries. Keep it (or its key id) to check transcripts offline.
#[utoipa::path(get, path = "/.well-known/triad-transcript-key", tag = "system",
    responses((status = 200, body = ServerKey), (status = "4XX", body = ErrorBody)))]
pub async fn transcript_key(State(state): State<ApiState>) -> Json<ServerKey> {
    Json(ServerKey::of(&state.transcript_key.verifying_key()))
}
