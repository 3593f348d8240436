//! Game review: the solver's verdict on every move of a finished match or of any list of
//! moves (`triad_solver::Review`), the board as a picture, and the review page's link
//! preview.
//!
//! - `GET /api/matches/{id}/review`: a finished match's review (a match still in play has
//!   none: 238 `match_not_finished`, so a player cannot consult it mid-game).
//! - `GET /api/review/{game}?moves=X5,O1,…`: the review of any moves from the empty board
//!   (a local game, a shared link); each move is its mark and its square 1-9.
//! - `POST /api/review {notation}`: the review of a record in Triad's notation (an imported
//!   file).
//! - `GET /api/boards/{game}/{board}.svg` and `.png`: a position as a 1200 × 630 picture
//!   (`crate::picture`), with `?last=` the square of the last move.
//! - `GET /review/{id}?ply=N` (not in the OpenAPI document: a page): the web app's page with
//!   Open Graph tags that name the match and show the board after ply N.
//! - `GET /review?game=sos&moves=S5,O1&ply=N` (a page too): the same for any moves, the
//!   share link of a local game.

use axum::{
    Json,
    extract::{Path, Query, State},
    http::{HeaderMap, HeaderValue, Method, Uri, header},
    response::{IntoResponse, Response},
};
use serde::{Deserialize, Serialize};
use triad_engine::{EndReason, Match, MatchId, Phase, notation::move_text};
use triad_rules::{AnyGame, Cell, GameKind, Mark, Move, Outcome, Player};
use triad_solver::{Judgement, Review, Value, winner_with_best_play};
use utoipa::{IntoParams, ToSchema};

use super::{
    ApiJson, ApiState,
    analysis::MoveRef,
    error::{Api, ApiError, ErrorBody},
    views::{MatchView, player_name},
};
use crate::web::{self, Preview};

/// The value of a position with best play, said both ways: for the player to move, and as
/// who wins.
#[derive(Debug, Serialize, ToSchema)]
pub struct PositionValue {
    /// `win`, `draw` or `loss` for the player to move (`loss` or `draw` in 0 plies once the
    /// game has ended).
    pub verdict: &'static str,
    /// Marks still to be placed until the game ends with best play.
    pub plies: u8,
    /// Who wins with best play: `first`, `second`, or null for a draw.
    pub winner: Option<&'static str>,
}

impl PositionValue {
    fn new(turn: Player, value: Value) -> PositionValue {
        PositionValue {
            verdict: value.verdict.name(),
            plies: value.plies,
            winner: winner_with_best_play(turn, value).map(player_name),
        }
    }
}

/// A move's value for the player who made it.
#[derive(Debug, Serialize, ToSchema)]
pub struct MoveWorth {
    /// `win`, `draw` or `loss` for its player.
    pub verdict: &'static str,
    /// Marks to the end with best play, the move itself included.
    pub plies: u8,
}

impl From<Value> for MoveWorth {
    fn from(v: Value) -> MoveWorth {
        MoveWorth {
            verdict: v.verdict.name(),
            plies: v.plies,
        }
    }
}

/// One move of a review.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlyView {
    /// 1 for the first move.
    pub ply: u8,
    /// `first` or `second`.
    pub player: &'static str,
    /// Cell 0-8.
    pub cell: u8,
    /// Square 1-9 (cell + 1), as people read it.
    pub square: u8,
    /// The mark placed.
    pub mark: String,
    /// `best`, `inaccuracy` (the result kept, but a win takes longer or a loss comes
    /// sooner) or `mistake` (a win or a draw thrown away).
    pub judgement: &'static str,
    /// The best the player could get here.
    pub best_value: MoveWorth,
    /// What the move played is worth to its player.
    pub played_value: MoveWorth,
    /// Every optimal move of the position before it.
    pub best: Vec<MoveRef>,
    /// The board after it (the 9-character state string).
    pub board: String,
    /// The position after it, for the player to move there.
    pub value: PositionValue,
}

/// One player's record in a review.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccuracyView {
    /// Moves made.
    pub moves: u8,
    /// Moves that threw away a win or a draw.
    pub mistakes: u8,
    /// Moves that kept the result but not its distance.
    pub inaccuracies: u8,
    /// The share of moves that kept the position's value (verdict and distance: the best
    /// moves), in percent (one decimal); null with no moves.
    pub percent: Option<f64>,
}

/// Both players' records.
#[derive(Debug, Serialize, ToSchema)]
pub struct Accuracies {
    /// The first player's.
    pub first: AccuracyView,
    /// The second player's.
    pub second: AccuracyView,
}

/// A game's review: the solver's verdict on every move.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReviewView {
    /// tic-tac-toe or sos.
    pub game: &'static str,
    /// The empty board's value, for the first player.
    pub start: PositionValue,
    /// Every move, in order.
    pub plies: Vec<PlyView>,
    /// Each player's accuracy.
    pub accuracy: Accuracies,
    /// The match, for a match's review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#match: Option<MatchView>,
}

impl ReviewView {
    fn new(review: &Review, match_view: Option<MatchView>) -> ReviewView {
        let plies = review
            .plies
            .iter()
            .zip(1u8..)
            .map(|(p, n)| PlyView {
                ply: n,
                player: player_name(p.player),
                cell: p.mv.cell.index(),
                square: p.mv.cell.square(),
                mark: p.mv.mark.char().to_string(),
                judgement: p.judgement.name(),
                best_value: p.before.into(),
                played_value: p.played.into(),
                best: p.best.iter().copied().map(MoveRef::from).collect(),
                board: p.position.to_string(),
                value: PositionValue::new(p.player.other(), review.value_after(usize::from(n))),
            })
            .collect();
        let record = |player| {
            let moves = review.plies.iter().filter(|p| p.player == player).count();
            AccuracyView {
                moves: small(moves),
                mistakes: small(review.count(player, Judgement::Mistake)),
                inaccuracies: small(review.count(player, Judgement::Inaccuracy)),
                percent: review.accuracy(player).map(|a| (a * 1000.0).round() / 10.0),
            }
        };
        ReviewView {
            game: review.kind.name(),
            start: PositionValue::new(Player::First, review.start),
            plies,
            accuracy: Accuracies {
                first: record(Player::First),
                second: record(Player::Second),
            },
            r#match: match_view,
        }
    }
}

/// A count of at most nine moves.
fn small(n: usize) -> u8 {
    u8::try_from(n).unwrap_or(u8::MAX)
}

/// A finished match's review, or why not.
async fn match_review(state: &ApiState, id: u64) -> Result<(Match, Review), ApiError> {
    let m = state
        .match_record(MatchId(id))
        .await?
        .ok_or_else(|| ApiError::from(triad_engine::EngineError::UnknownMatch))?;
    if m.phase != Phase::Finished {
        return Err(ApiError::new(Api::MatchNotFinished));
    }
    let review = Review::of(m.game(), &m.moves)
        .map_err(|e| ApiError::with_message(Api::InternalError, e.to_string()))?;
    Ok((m, review))
}

/// A finished match's review: after each move, the solver's value of the position and the
/// best moves; each move judged (`best`, `inaccuracy`, `mistake`); each player's accuracy.
/// A match still in play has none yet (238).
#[utoipa::path(get, path = "/api/matches/{id}/review", tag = "review", params(("id" = u64, Path, description = "Match id")),
    responses((status = 200, body = ReviewView), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = "4XX", body = ErrorBody)))]
pub async fn review_match(
    State(state): State<ApiState>,
    Path(id): Path<u64>,
) -> Result<Json<ReviewView>, ApiError> {
    let (m, review) = match_review(&state, id).await?;
    let config = state.core.read().await.config().clone();
    Ok(Json(ReviewView::new(
        &review,
        Some(MatchView::new(&m, &config)),
    )))
}

/// The moves to review.
#[derive(Debug, Deserialize, IntoParams)]
pub struct MovesQuery {
    /// The moves from the empty board, comma-separated, each its mark and its square 1-9
    /// (`X5,O1,X9`; in SOS `S5,O1`). Empty or absent: the empty board.
    #[param(example = "X5,O1,X9")]
    pub moves: Option<String>,
}

/// Reads `X5,O1,…` into moves, or says which item is wrong.
fn parse_moves(text: &str) -> Result<Vec<Move>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let items: Vec<&str> = text.split(',').collect();
    if items.len() > 9 {
        return Err(format!("{} moves given; a game has at most 9", items.len()));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let item = item.trim();
            let mut chars = item.chars();
            let mark = chars
                .next()
                .and_then(|c| Mark::from_char(c.to_ascii_uppercase()));
            let square = chars
                .as_str()
                .parse::<u8>()
                .ok()
                .and_then(Cell::from_square);
            match (mark, square) {
                (Some(mark), Some(cell)) => Ok(Move::new(cell, mark)),
                _ => Err(format!(
                    "move {} ({item:?}) is not a mark and a square 1-9, such as X5 or S1",
                    i + 1
                )),
            }
        })
        .collect()
}

/// The review of any moves from the empty board: the same analysis as a match's review,
/// for a local game, an imported record or an agent's own game.
#[utoipa::path(get, path = "/api/review/{game}", tag = "review",
    params(("game" = String, Path, description = "tic-tac-toe or sos"), MovesQuery),
    responses((status = 200, body = ReviewView), (status = "4XX", body = ErrorBody)))]
pub async fn review_moves(
    Path(game): Path<String>,
    Query(query): Query<MovesQuery>,
) -> Result<Json<ReviewView>, ApiError> {
    let kind = game_kind(&game)?;
    let moves = parse_moves(query.moves.as_deref().unwrap_or_default())
        .map_err(|message| ApiError::with_message(Api::InvalidParameter, message))?;
    let review = Review::of(kind, &moves)
        .map_err(|e| ApiError::with_message(Api::InvalidParameter, e.to_string()))?;
    Ok(Json(ReviewView::new(&review, None)))
}

/// A record to review.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewRequest {
    /// A match in Triad's notation (`docs/notation.md`), as `GET /api/matches/{id}/notation`
    /// and `triad export` write it.
    pub notation: String,
}

/// The review of a record in Triad's notation: the same analysis as a match's review, for
/// a file someone exported or wrote. A record that is not one says where (235-237, with the
/// line and column).
#[utoipa::path(post, path = "/api/review", tag = "review", request_body = ReviewRequest,
    responses((status = 200, body = ReviewView), (status = 422, body = ErrorBody), (status = "4XX", body = ErrorBody)))]
pub async fn review_record(
    ApiJson(req): ApiJson<ReviewRequest>,
) -> Result<Json<ReviewView>, ApiError> {
    let record = triad_engine::notation::parse(&req.notation)?;
    let review = Review::of(record.game, &record.moves)
        .map_err(|e| ApiError::with_message(Api::InternalError, e.to_string()))?;
    Ok(Json(ReviewView::new(&review, None)))
}

fn game_kind(name: &str) -> Result<GameKind, ApiError> {
    name.parse().map_err(|e: triad_rules::UnknownGame| {
        ApiError::with_message(Api::InvalidParameter, e.to_string())
    })
}

/// Which square to mark as the last move.
#[derive(Debug, Deserialize, IntoParams)]
pub struct LastQuery {
    /// The square (1-9) of the last move, marked with a dot.
    pub last: Option<u8>,
}

/// A position as a picture: the board in a 1200 × 630 frame (the size of a link preview),
/// marks and the winning line drawn, the last move's square dotted. `image` is the
/// 9-character state string and `.svg` or `.png` (`X-O----X-.png`).
#[utoipa::path(get, path = "/api/boards/{game}/{image}", tag = "review",
    params(("game" = String, Path, description = "tic-tac-toe or sos"),
           ("image" = String, Path, description = "the board (9 characters: `-`, and X/O or S/O; cell 0 first) and `.svg` or `.png`"),
           LastQuery),
    responses((status = 200, description = "the picture", content((String = "image/svg+xml"), (Vec<u8> = "image/png"))),
              (status = "4XX", body = ErrorBody)))]
pub async fn board_image(
    Path((game, image)): Path<(String, String)>,
    Query(query): Query<LastQuery>,
) -> Result<Response, ApiError> {
    let kind = game_kind(&game)?;
    let (board, format) = image
        .rsplit_once('.')
        .filter(|(_, ext)| matches!(*ext, "svg" | "png"))
        .ok_or_else(|| {
            ApiError::with_message(
                Api::InvalidParameter,
                "name the picture as the board and .svg or .png, such as X-O------.png",
            )
        })?;
    let position = AnyGame::parse(kind, board)
        .map_err(|e| ApiError::with_message(Api::InvalidParameter, e.to_string()))?;
    let last = match query.last {
        None => None,
        Some(square) => Some(
            Cell::from_square(square)
                .filter(|&cell| position.board().get(cell).is_some())
                .ok_or_else(|| {
                    ApiError::with_message(
                        Api::InvalidParameter,
                        "last must be the square (1-9) of a mark on the board",
                    )
                })?,
        ),
    };
    Ok(picture(format, &position, last))
}

fn picture(format: &str, position: &AnyGame, last: Option<Cell>) -> Response {
    let (content_type, body) = if format == "png" {
        ("image/png", crate::picture::png(position, last))
    } else {
        (
            "image/svg+xml; charset=utf-8",
            crate::picture::svg(position, last).into_bytes(),
        )
    };
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body,
    )
        .into_response()
}

/// The ply to show.
#[derive(Debug, Deserialize)]
pub struct PlyQuery {
    /// The number of moves to show, from 0.
    pub ply: Option<String>,
}

/// `GET /review/{id}`: the web app's page, with a link preview (Open Graph and Twitter
/// card tags: the match, its result, and its board after the ply asked for). A match that
/// does not exist or is not over gets the plain page, which says so.
pub async fn review_page(
    State(state): State<ApiState>,
    Path(id): Path<String>,
    Query(query): Query<PlyQuery>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, web::NotServed> {
    let found = match id.parse::<u64>() {
        Ok(id) => match_review(&state, id).await.ok(),
        Err(_) => None,
    };
    let Some((m, review)) = found else {
        return web::serve(&method, &uri, &headers);
    };
    let ply = ply_of(query.ply.as_deref(), &review);
    let base = state.settings.public_url.trim_end_matches('/');
    let preview = Preview {
        title: format!("{} · match {} · Triad", game_title(review.kind), m.id.0),
        description: describe(ended(&m, &review), &review, ply),
        image: board_at(base, &review, ply),
        url: format!("{base}/review/{}?ply={ply}", m.id.0),
    };
    web::page_with_preview(&method, &headers, &preview)
}

/// The moves of a review link that is not a match's: a local game's, or any shared one's.
#[derive(Debug, Deserialize)]
pub struct MovesPageQuery {
    /// `tic-tac-toe` (when absent, as the page reads it) or `sos`.
    pub game: Option<String>,
    /// The moves from the empty board, as `GET /api/review/{game}` reads them; without
    /// them, the page has no preview.
    pub moves: Option<String>,
    /// The number of moves to show, from 0.
    pub ply: Option<String>,
}

/// `GET /review?game=…&moves=…&ply=N`: the web app's page, with a link preview of those
/// moves (a local game's share link): the board after ply N, the result, each side's
/// accuracy. Moves that are not a game get the plain page, which says what is wrong.
pub async fn moves_page(
    State(state): State<ApiState>,
    Query(query): Query<MovesPageQuery>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, web::NotServed> {
    // No moves at all is the page's own import screen, not a game to preview.
    let reviewed = query.moves.as_deref().and_then(|moves| {
        let kind = game_kind(query.game.as_deref().unwrap_or("tic-tac-toe")).ok()?;
        Review::of(kind, &parse_moves(moves).ok()?).ok()
    });
    let Some(review) = reviewed else {
        return web::serve(&method, &uri, &headers);
    };
    let ply = ply_of(query.ply.as_deref(), &review);
    let base = state.settings.public_url.trim_end_matches('/');
    let moves: Vec<String> = review.plies.iter().map(|p| move_text(p.mv)).collect();
    let preview = Preview {
        title: format!("{} · a game to review · Triad", game_title(review.kind)),
        description: describe(ended_by_rules(&review), &review, ply),
        image: board_at(base, &review, ply),
        url: format!(
            "{base}/review?game={}&moves={}&ply={ply}",
            review.kind.name(),
            moves.join(",")
        ),
    };
    web::page_with_preview(&method, &headers, &preview)
}

/// The ply a link asks for, within the game; the last when it asks for none (or nonsense).
fn ply_of(asked: Option<&str>, review: &Review) -> usize {
    asked
        .and_then(|p| p.parse::<usize>().ok())
        .map_or(review.plies.len(), |p| p.min(review.plies.len()))
}

/// The address of the picture of the board after `ply`, with its last move marked.
fn board_at(base: &str, review: &Review, ply: usize) -> String {
    let position = review.position(ply);
    let mut image = format!("{base}/api/boards/{}/{position}.png", review.kind.name());
    if let Some(i) = ply.checked_sub(1) {
        image.push_str(&format!("?last={}", review.plies[i].mv.cell.square()));
    }
    image
}

fn game_title(kind: GameKind) -> &'static str {
    match kind {
        GameKind::TicTacToe => "Tic-tac-toe",
        GameKind::Sos => "SOS",
    }
}

/// How a match ended, in a sentence (empty while it is in play).
fn ended(m: &Match, review: &Review) -> String {
    let n = review.plies.len();
    match m.result.as_ref().map(|r| (r.reason, r.winner)) {
        Some((EndReason::Win, Some(winner))) => {
            format!("{} won in {n} moves.", side(m.game(), winner))
        }
        Some((reason, Some(winner))) => {
            format!(
                "{} won by {} after {n} moves.",
                side(m.game(), winner),
                reason.name()
            )
        }
        Some((EndReason::Draw, None)) => format!("Drawn in {n} moves."),
        Some((reason, None)) => format!("Ended ({}) after {n} moves.", reason.name()),
        None => String::new(),
    }
}

/// How a list of moves ended by the rules alone.
fn ended_by_rules(review: &Review) -> String {
    let n = review.plies.len();
    match review.position(n).outcome() {
        Some(Outcome::Win { winner, .. }) => {
            format!("{} won in {n} moves.", side(review.kind, winner))
        }
        Some(Outcome::Draw) => format!("Drawn in {n} moves."),
        None => format!("{n} moves; the game goes on."),
    }
}

/// One line about a game for a link preview: how it ended, each side's accuracy and the
/// move shown.
fn describe(ended: String, review: &Review, ply: usize) -> String {
    let accuracy = [Player::First, Player::Second]
        .map(|p| match review.accuracy(p) {
            Some(a) => format!("{} {:.0}%", side(review.kind, p), a * 100.0),
            None => format!("{} -", side(review.kind, p)),
        })
        .join(", ");
    let shown = if ply == 0 {
        "The empty board".to_owned()
    } else {
        let p = &review.plies[ply - 1];
        format!("Move {ply}: {} ({})", move_text(p.mv), p.judgement)
    };
    format!("{ended} Accuracy: {accuracy}. {shown}.")
}

/// How people call a side: X and O in tic-tac-toe, first and second in SOS.
fn side(kind: GameKind, player: Player) -> &'static str {
    match (kind, player) {
        (GameKind::TicTacToe, Player::First) => "X",
        (GameKind::TicTacToe, Player::Second) => "O",
        (GameKind::Sos, Player::First) => "First player",
        (GameKind::Sos, Player::Second) => "Second player",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_are_read_from_marks_and_squares() {
        let moves = parse_moves("X5, o1,X9").unwrap();
        assert_eq!(moves.len(), 3);
        assert_eq!(moves[0], Move::new(Cell::from_square(5).unwrap(), Mark::X));
        assert_eq!(moves[1], Move::new(Cell::from_square(1).unwrap(), Mark::O));
        assert_eq!(parse_moves("").unwrap(), Vec::new());
        for bad in ["X0", "X10", "5X", "Q5", ",", "X5,,O1", "X"] {
            assert!(parse_moves(bad).is_err(), "{bad}");
        }
        assert!(
            parse_moves(&["X1"; 10].join(","))
                .unwrap_err()
                .contains("at most 9")
        );
    }
}
