//! `GET /api/analysis/{game}/{board}`: the solver's exact value of every legal move of a
//! position. Public and stateless: the web app's computer opponent uses it when nobody is
//! logged in (it picks among the moves by strength), and anyone may use it for hints.

use axum::{Json, extract::Path};
use serde::Serialize;
use triad_rules::{AnyGame, GameKind, Move};
use triad_solver::Value;
use utoipa::ToSchema;

use super::{
    error::{Api, ApiError, ErrorBody},
    views::player_name,
};

/// The value of a position or a move, for the player to move.
#[derive(Debug, Serialize, ToSchema)]
pub struct ValueView {
    /// `win`, `draw` or `loss` with best play on both sides.
    pub verdict: &'static str,
    /// Marks still to be placed until the game ends with best play (the move itself
    /// included, for a move).
    pub plies: u8,
}

impl From<Value> for ValueView {
    fn from(v: Value) -> Self {
        ValueView {
            verdict: v.verdict.name(),
            plies: v.plies,
        }
    }
}

/// A legal move and what it is worth to the player making it.
#[derive(Debug, Serialize, ToSchema)]
pub struct MoveValue {
    /// Cell 0-8, row-major from the top-left.
    pub cell: u8,
    /// The mark placed.
    pub mark: String,
    /// Its value for the player making it.
    #[serde(flatten)]
    pub value: ValueView,
}

/// A cell and a mark.
#[derive(Debug, Serialize, ToSchema)]
pub struct MoveRef {
    /// Cell 0-8.
    pub cell: u8,
    /// The mark.
    pub mark: String,
}

impl From<Move> for MoveRef {
    fn from(mv: Move) -> Self {
        MoveRef {
            cell: mv.cell.index(),
            mark: mv.mark.char().to_string(),
        }
    }
}

/// How an ended position ended.
#[derive(Debug, Serialize, ToSchema)]
pub struct AnalysisOutcome {
    /// `first`, `second`, or null for a draw.
    pub winner: Option<&'static str>,
    /// Every cell of every winning line.
    pub cells: Vec<u8>,
}

/// The analysis of a position.
#[derive(Debug, Serialize, ToSchema)]
pub struct Analysis {
    /// tic-tac-toe or sos.
    pub game: &'static str,
    /// The board as given, normalised (the 9-character state string of `GET /api/matches/{id}/state`).
    pub board: String,
    /// `first` or `second` to move; null when the game has ended.
    pub turn: Option<&'static str>,
    /// The position's value for the player to move (ended: `loss` or `draw` in 0 plies).
    pub value: ValueView,
    /// How the game ended, when it has.
    pub outcome: Option<AnalysisOutcome>,
    /// Every legal move with its value, lowest cell first (in SOS, S before O).
    pub moves: Vec<MoveValue>,
    /// The optimal moves: those whose value equals the position's.
    pub best: Vec<MoveRef>,
}

/// The exact value of every legal move of a position (the solver's tables), and the best
/// ones. `board` is the 9-character state string, `-` for an empty cell
/// (`X-O------`, or with S and O in SOS). An impossible board is refused with the rules'
/// reason.
#[utoipa::path(get, path = "/api/analysis/{game}/{board}", tag = "matches",
    params(("game" = String, Path, description = "tic-tac-toe or sos"),
           ("board" = String, Path, description = "9 characters: `-`, and X/O (tic-tac-toe) or S/O (SOS); cell 0 first")),
    responses((status = 200, body = Analysis), (status = "4XX", body = ErrorBody)))]
pub async fn analyze(
    Path((game, board)): Path<(String, String)>,
) -> Result<Json<Analysis>, ApiError> {
    let kind: GameKind = game.parse().map_err(|e: triad_rules::UnknownGame| {
        ApiError::with_message(Api::InvalidParameter, e.to_string())
    })?;
    let position = AnyGame::parse(kind, &board)
        .map_err(|e| ApiError::with_message(Api::InvalidParameter, e.to_string()))?;
    let table = triad_solver::table(kind);
    let value = table.value(&position).ok_or_else(|| {
        ApiError::with_message(
            Api::InvalidParameter,
            "this position cannot be reached from the empty board",
        )
    })?;
    let outcome = position.outcome().map(|o| AnalysisOutcome {
        winner: o.winner().map(player_name),
        cells: o.cells().iter().map(|c| c.index()).collect(),
    });
    Ok(Json(Analysis {
        game: kind.name(),
        board: position.to_string(),
        turn: (!position.is_over()).then(|| player_name(position.turn())),
        value: value.into(),
        outcome,
        moves: table
            .analyze(&position)
            .into_iter()
            .map(|(mv, v)| MoveValue {
                cell: mv.cell.index(),
                mark: mv.mark.char().to_string(),
                value: v.into(),
            })
            .collect(),
        best: table
            .best_moves(&position)
            .into_iter()
            .map(MoveRef::from)
            .collect(),
    }))
}
