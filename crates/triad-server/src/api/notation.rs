//! `GET /api/matches/{id}/notation`: a match in Triad's notation (`docs/notation.md`), the
//! PGN-like text `triad export` saves and `triad play --from` reads. Public, like the match.

use axum::{
    extract::{Path, State},
    http::{HeaderValue, header},
    response::{IntoResponse, Response},
};
use triad_engine::{
    EngineError, MatchId,
    notation::{self, NotationError, Record},
};

use super::{
    ApiState,
    error::{Api, ApiError, ErrorBody},
};

/// The media type of a record.
pub const CONTENT_TYPE: &str = "text/plain; charset=utf-8";

/// A match in notation: its headers (game, match, date and time of creation in UTC, the
/// seats, the stake, the result, how it ended) and its moves, as a plain-text file to keep
/// or to review elsewhere. A match in play gives its moves so far and the result `*`.
#[utoipa::path(get, path = "/api/matches/{id}/notation", tag = "matches", params(("id" = u64, Path, description = "Match id")),
    responses(
        (status = 200, description = "The match in Triad's notation (docs/notation.md)", content_type = "text/plain; charset=utf-8", body = String,
            headers(("Content-Disposition" = String, description = "attachment; filename=\"triad-<game>-<id>.txt\""))),
        (status = 404, body = ErrorBody, description = "no such match"),
        (status = "4XX", body = ErrorBody)))]
pub async fn match_notation(
    State(state): State<ApiState>,
    Path(id): Path<u64>,
) -> Result<Response, ApiError> {
    let m = state
        .match_record(MatchId(id))
        .await?
        .ok_or(EngineError::UnknownMatch)?;
    let mut record = Record::from_match(&m);
    if !state.settings.public_url.is_empty() {
        record.site = Some(state.settings.public_url.clone());
    }
    let disposition = format!("attachment; filename=\"{}\"", record.file_name());
    let mut response = notation::render(&record).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}

impl From<NotationError> for ApiError {
    fn from(e: NotationError) -> Self {
        let kind = match e.code() {
            236 => Api::NotationIllegalMove,
            237 => Api::NotationInconsistent,
            _ => Api::NotationInvalid,
        };
        ApiError::with_message(kind, e.to_string())
    }
}
