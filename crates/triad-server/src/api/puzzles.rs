//! `/api/puzzles`: the solver's puzzles ("win in N", "save the draw"), the daily one, and
//! attempts at them.
//!
//! An attempt is checked move by move: the client sends the line played so far (its own
//! moves and the defence's replies, alternately, from the puzzle's position), and the
//! answer says `going` with the defence's next reply, `solved` (with the reply, when the
//! defence's move fills a drawn board), or `failed` at the first wrong move. Only a decided line is an attempt: a logged-in player's first decided
//! attempt at each puzzle is rated (a [`Command::AttemptPuzzle`] through the engine, which
//! moves the player's and the puzzle's Glicko-2 puzzle ratings); later attempts, and
//! anonymous ones, are checked the same way and rate nothing.

use axum::{
    Json,
    extract::{FromRequestParts, Path, Query, State},
    http::request::Parts,
};
use serde::{Deserialize, Serialize};
use triad_engine::{Address, Command, PuzzleRecord};
use triad_rules::{Cell, Mark, Move};
use triad_solver::puzzles::{self, DAY_MS, Progress, Puzzle, PuzzleId};
use utoipa::{IntoParams, ToSchema};

use super::{
    ApiJson, ApiState,
    analysis::MoveRef,
    bearer,
    error::{Api, ApiError, ErrorBody},
    games::limit,
    views::player_name,
};

/// A request's login when it has one: no `Authorization` header is an anonymous request;
/// a header with a bad or expired token is refused, as on every authenticated endpoint.
#[derive(Copy, Clone, Debug)]
pub struct MaybeAuthed(pub Option<Address>);

impl FromRequestParts<ApiState> for MaybeAuthed {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &ApiState,
    ) -> Result<Self, Self::Rejection> {
        if parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .is_none()
        {
            return Ok(MaybeAuthed(None));
        }
        let token = bearer(&parts.headers).ok_or_else(|| ApiError::new(Api::Unauthorized))?;
        let address = state.authenticate(token).await?;
        state.check_address_rate(address)?;
        Ok(MaybeAuthed(Some(address)))
    }
}

/// A Glicko-2 puzzle rating and the rated attempts behind it.
#[derive(Debug, Serialize, ToSchema)]
pub struct PuzzleRecordView {
    /// The rating (1500 to start).
    pub rating: f64,
    /// The deviation (350 to start).
    pub deviation: f64,
    /// Rated attempts: a player's first at each puzzle.
    pub attempts: u32,
    /// Those that solved it.
    pub solved: u32,
}

impl From<PuzzleRecord> for PuzzleRecordView {
    fn from(r: PuzzleRecord) -> Self {
        PuzzleRecordView {
            rating: r.rating.rating,
            deviation: r.rating.deviation,
            attempts: r.attempts,
            solved: r.solved,
        }
    }
}

/// A puzzle, without its solution.
#[derive(Debug, Serialize, ToSchema)]
pub struct PuzzleView {
    /// The stable id: the game and the position number, `tic-tac-toe-1234` or `sos-1234`.
    #[schema(example = "tic-tac-toe-1234")]
    pub id: String,
    /// tic-tac-toe or sos.
    pub game: &'static str,
    /// The position: the 9-character state string of `GET /api/matches/{id}/state`, `-`
    /// for an empty cell, cell 0 first.
    pub board: String,
    /// The side to move, who solves it: `first` or `second`.
    pub turn: &'static str,
    /// The marks the side to move may place (`X` or `O` in tic-tac-toe; `S` and `O` in SOS).
    pub marks: Vec<String>,
    /// `win` (force a win in `moves` moves of one's own) or `draw` (hold the draw to the
    /// end: most moves lose).
    pub goal: &'static str,
    /// N: the moves of one's own the puzzle takes with the best defence.
    pub moves: u8,
    /// The goal in words: `win in 2`, `save the draw`.
    pub title: String,
    /// The puzzle's own rating, moved by every rated attempt.
    pub rating: PuzzleRecordView,
}

impl PuzzleView {
    fn new(puzzle: &Puzzle, record: PuzzleRecord) -> PuzzleView {
        let position = puzzle.position();
        PuzzleView {
            id: puzzle.id().to_string(),
            game: position.kind().name(),
            board: position.to_string(),
            turn: player_name(puzzle.side()),
            marks: position
                .kind()
                .marks_for(puzzle.side())
                .iter()
                .map(|m| m.char().to_string())
                .collect(),
            goal: puzzle.goal().kind(),
            moves: puzzle.moves(),
            title: puzzle.goal().to_string(),
            rating: record.into(),
        }
    }
}

/// The puzzle with `id`, or 404 (`unknown_puzzle`).
fn find(id: &str) -> Result<&'static Puzzle, ApiError> {
    id.parse::<PuzzleId>()
        .ok()
        .and_then(|id| puzzles::find(&id))
        .ok_or_else(|| triad_engine::EngineError::UnknownPuzzle.into())
}

/// Today's puzzle.
#[derive(Debug, Serialize, ToSchema)]
pub struct DailyPuzzle {
    /// The day: days since the Unix epoch, UTC, by the server's clock.
    pub day: u64,
    /// When the next puzzle comes (milliseconds since the Unix epoch: the next midnight UTC).
    pub next_at_ms: u64,
    /// The puzzle.
    pub puzzle: PuzzleView,
}

/// Today's puzzle, by the server's clock: a pure function of the day, cycling through every
/// puzzle before it repeats.
#[utoipa::path(get, path = "/api/puzzles/daily", tag = "puzzles",
    responses((status = 200, body = DailyPuzzle), (status = "4XX", body = ErrorBody)))]
pub async fn daily(State(state): State<ApiState>) -> Result<Json<DailyPuzzle>, ApiError> {
    let day = state.core.clock().now_ms() / DAY_MS;
    let puzzle = puzzles::daily(day);
    let record = state.core.read().await.puzzle_record(puzzle.id());
    Ok(Json(DailyPuzzle {
        day,
        next_at_ms: (day + 1).saturating_mul(DAY_MS),
        puzzle: PuzzleView::new(puzzle, record),
    }))
}

/// Which puzzles, and from where.
#[derive(Debug, Deserialize, IntoParams)]
pub struct PuzzleQuery {
    /// tic-tac-toe or sos (default: both).
    pub game: Option<String>,
    /// win or draw (default: both).
    pub kind: Option<String>,
    /// At most this many (1-100, default 20).
    pub limit: Option<u32>,
    /// The id of the last puzzle of the previous page: the page starts after it.
    pub after: Option<String>,
}

/// A page of puzzles.
#[derive(Debug, Serialize, ToSchema)]
pub struct PuzzlePage {
    /// In the set's order: tic-tac-toe then SOS, each by goal (win in 1, 2, 3, save the
    /// draw) and position number.
    pub puzzles: Vec<PuzzleView>,
    /// The `after` of the next page; null on the last.
    pub next_after: Option<String>,
}

/// The puzzles, a page at a time, filtered by game and kind.
#[utoipa::path(get, path = "/api/puzzles", tag = "puzzles", params(PuzzleQuery),
    responses((status = 200, body = PuzzlePage), (status = "4XX", body = ErrorBody)))]
pub async fn list(
    State(state): State<ApiState>,
    Query(q): Query<PuzzleQuery>,
) -> Result<Json<PuzzlePage>, ApiError> {
    let limit = limit(q.limit, 20, 100)? as usize;
    let game = q
        .game
        .as_deref()
        .map(str::parse::<triad_rules::GameKind>)
        .transpose()
        .map_err(|e| ApiError::with_message(Api::InvalidParameter, e.to_string()))?;
    let kind = match q.kind.as_deref() {
        None => None,
        Some(k @ ("win" | "draw")) => Some(k),
        Some(_) => {
            return Err(ApiError::with_message(
                Api::InvalidParameter,
                "kind is win or draw",
            ));
        }
    };
    let start = match q.after.as_deref() {
        None => 0,
        Some(after) => {
            let index = after
                .parse::<PuzzleId>()
                .ok()
                .and_then(|id| puzzles::index_of(&id))
                .ok_or_else(|| ApiError::new(Api::UnknownPuzzleCursor))?;
            index + 1
        }
    };
    let mut chosen = puzzles::all()[start..]
        .iter()
        .filter(|p| game.is_none_or(|g| p.id().game == g))
        .filter(|p| kind.is_none_or(|k| p.goal().kind() == k));
    let page: Vec<&Puzzle> = chosen.by_ref().take(limit).collect();
    let next_after = match (page.last(), chosen.next()) {
        (Some(last), Some(_)) => Some(last.id().to_string()),
        _ => None,
    };
    let engine = state.core.read().await;
    Ok(Json(PuzzlePage {
        puzzles: page
            .into_iter()
            .map(|p| PuzzleView::new(p, engine.puzzle_record(p.id())))
            .collect(),
        next_after,
    }))
}

/// One puzzle: the position, the side to move, the goal and N, and its rating; never the
/// solution.
#[utoipa::path(get, path = "/api/puzzles/{id}", tag = "puzzles",
    params(("id" = String, Path, description = "tic-tac-toe-1234 or sos-1234")),
    responses((status = 200, body = PuzzleView), (status = "4XX", body = ErrorBody)))]
pub async fn get(
    State(state): State<ApiState>,
    Path(id): Path<String>,
) -> Result<Json<PuzzleView>, ApiError> {
    let puzzle = find(&id)?;
    let record = state.core.read().await.puzzle_record(puzzle.id());
    Ok(Json(PuzzleView::new(puzzle, record)))
}

/// A move of a line.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LineMove {
    /// Cell 0-8, row-major from the top-left.
    pub cell: u8,
    /// The mark: X or O in tic-tac-toe, S or O in SOS.
    #[schema(example = "X")]
    pub mark: String,
}

/// The line played so far from the puzzle's position: the player's moves and the
/// defence's replies (as the server gave them, or any other best defence), alternately,
/// the player's first.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AttemptRequest {
    /// The moves, at most 9.
    pub moves: Vec<LineMove>,
}

/// A rating before and after an attempt.
#[derive(Debug, Serialize, ToSchema)]
pub struct RatingChange {
    /// Before.
    pub before: f64,
    /// After.
    pub after: f64,
}

/// Where an attempt stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptResult {
    /// `going` (every move kept the goal; play on), `solved` or `failed`.
    pub status: &'static str,
    /// After the player's move, the defence's reply: while `going`, to play and send with
    /// the next move; when `solved` by a board the reply filled (save the draw), the last
    /// move. Null otherwise.
    pub reply: Option<MoveRef>,
    /// When `failed`: the index in the line of the wrong move.
    pub wrong_move: Option<usize>,
    /// When decided: the correct first moves from the puzzle's position.
    pub correct_first_moves: Vec<MoveRef>,
    /// When decided: the solver's line from the puzzle's position, both sides' moves.
    pub solution: Vec<MoveRef>,
    /// Whether the attempt moved the ratings: a logged-in player's first decided attempt
    /// at this puzzle.
    pub rated: bool,
    /// The player's puzzle rating before and after, when rated.
    pub player_rating: Option<RatingChange>,
    /// The puzzle's rating before and after, when rated.
    pub puzzle_rating: Option<RatingChange>,
}

/// Checks an attempt's line so far. Logged in, a player's first decided attempt at the
/// puzzle is rated (one per player and puzzle, so ratings cannot be farmed); anonymous
/// attempts are checked the same way, unrated. A wrong move fails the attempt at once.
#[utoipa::path(post, path = "/api/puzzles/{id}/attempts", tag = "puzzles",
    params(("id" = String, Path, description = "tic-tac-toe-1234 or sos-1234")),
    request_body = AttemptRequest,
    responses((status = 200, body = AttemptResult), (status = "4XX", body = ErrorBody)),
    security((), ("bearer" = [])))]
pub async fn attempt(
    State(state): State<ApiState>,
    MaybeAuthed(me): MaybeAuthed,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<AttemptRequest>,
) -> Result<Json<AttemptResult>, ApiError> {
    let puzzle = find(&id)?;
    if req.moves.len() > 9 {
        return Err(ApiError::with_message(
            Api::InvalidParameter,
            "a line has at most 9 moves",
        ));
    }
    let mut line = req
        .moves
        .iter()
        .enumerate()
        .map(|(at, m)| line_move(at, m))
        .collect::<Result<Vec<Move>, ApiError>>()?;
    let check = |line: &[Move]| {
        puzzle.check(line).map_err(|e| {
            let at = u8::try_from(e.at()).unwrap_or(u8::MAX);
            ApiError::from(triad_engine::EngineError::InvalidPuzzleLine { at })
        })
    };
    let mut progress = check(&line)?;
    // A drawn board can fill with the defence's move: then its reply decides the attempt,
    // and the answer is `solved` with that reply, the line's last move.
    if let Progress::Going { reply: Some(reply) } = progress {
        let mut longer = line.clone();
        longer.push(reply);
        if check(&longer)? == Progress::Solved {
            (line, progress) = (longer, Progress::Solved);
        }
    }
    let (status, reply, wrong_move) = match progress {
        Progress::Going { reply } => ("going", reply, None),
        Progress::Solved if line.len() % 2 == 0 => ("solved", line.last().copied(), None),
        Progress::Solved => ("solved", None, None),
        Progress::Failed { at } => ("failed", None, Some(at)),
    };
    let mut result = AttemptResult {
        status,
        reply: reply.map(MoveRef::from),
        wrong_move,
        correct_first_moves: Vec::new(),
        solution: Vec::new(),
        rated: false,
        player_rating: None,
        puzzle_rating: None,
    };
    if status == "going" {
        return Ok(Json(result));
    }
    result.correct_first_moves = puzzle
        .correct_moves()
        .into_iter()
        .map(MoveRef::from)
        .collect();
    result.solution = puzzle.solution().into_iter().map(MoveRef::from).collect();
    if let Some(me) = me {
        // The ratings shown as "before" are read just before the command: another of this
        // player's attempts, or another player's at this puzzle, landing in between would
        // show in the difference (the records themselves are exact: the engine's).
        let (player_before, puzzle_before) = {
            let engine = state.core.read().await;
            (
                engine.puzzle_record_of_player(me),
                engine.puzzle_record(puzzle.id()),
            )
        };
        let command = Command::AttemptPuzzle {
            puzzle: puzzle.id(),
            line,
        };
        let receipt = state.core.execute(me, command, None).await?;
        if !receipt.events.is_empty() {
            let engine = state.core.read().await;
            let change = |before: PuzzleRecord, after: PuzzleRecord| RatingChange {
                before: before.rating.rating,
                after: after.rating.rating,
            };
            result.rated = true;
            result.player_rating = Some(change(player_before, engine.puzzle_record_of_player(me)));
            result.puzzle_rating = Some(change(puzzle_before, engine.puzzle_record(puzzle.id())));
        }
    }
    Ok(Json(result))
}

/// A line's move as the rules' move; a cell or mark that cannot exist is the line's fault
/// at that index.
fn line_move(at: usize, m: &LineMove) -> Result<Move, ApiError> {
    let mut chars = m.mark.chars();
    let mark = match (chars.next().and_then(Mark::from_char), chars.next()) {
        (Some(mark), None) => mark,
        _ => return Err(invalid_at(at)),
    };
    let cell = Cell::new(m.cell).ok_or_else(|| invalid_at(at))?;
    Ok(Move::new(cell, mark))
}

fn invalid_at(at: usize) -> ApiError {
    let at = u8::try_from(at).unwrap_or(u8::MAX);
    triad_engine::EngineError::InvalidPuzzleLine { at }.into()
}
