//! Exports of a solved table: the HTML5 canvas game's `moves.js` and one JSON object per line.
//!
//! Everything here is pure: functions return a `String` or write to a writer passed in.

use core::fmt::{self, Write as _};
use std::{collections::BTreeMap, io};

use serde::Serialize;
use triad_rules::{Cell, GameKind, Player};

use crate::Table;

const MOVES_JS_HEAD: &str = "function getMoves() { return {";
const MOVES_JS_TAIL: &str = "};}";

/// The error for exporting a table in a format its game does not have.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedGame {
    /// The game of the table.
    pub kind: GameKind,
}

impl fmt::Display for UnsupportedGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the moves.js format holds tic-tac-toe positions with O to move; {} cannot be written in it",
            self.kind
        )
    }
}

impl std::error::Error for UnsupportedGame {}

/// The HTML5 canvas game's `moves.js`: a JavaScript function returning, for every reachable
/// tic-tac-toe position where the game goes on and O is to move, the cell O should take.
///
/// Keys are [position numbers](triad_rules::Game::position_number) (empty 0, O 1, X 2,
/// cell `i` weighing 3^i) in increasing order; values are the table's
/// [`best_move`](Table::best_move) cells, 0-8. The text has the HTML5 canvas game's exact shape,
/// `function getMoves() { return {2:4,6:0,...,19570:0,};}`, with a comma after every entry
/// and no final newline. Unlike the HTML5 canvas game's file it lists no ended games (the game's
/// generator also emits a meaningless move 0 for each of the 642 ended positions with O to move).
///
/// # Errors
/// [`UnsupportedGame`] for an SOS table: the format is tic-tac-toe's.
///
/// ```
/// use triad_rules::GameKind;
/// use triad_solver::{moves_js, parse_moves_js, table};
///
/// let js = moves_js(table(GameKind::TicTacToe)).unwrap();
/// assert!(js.starts_with("function getMoves() { return {2:4,6:0,"));
/// assert!(js.ends_with(",};}"));
/// assert_eq!(parse_moves_js(&js).unwrap().len(), 2_097);
/// assert!(moves_js(table(GameKind::Sos)).is_err());
/// ```
pub fn moves_js(table: &Table) -> Result<String, UnsupportedGame> {
    if table.kind() != GameKind::TicTacToe {
        return Err(UnsupportedGame { kind: table.kind() });
    }
    let mut js = String::from(MOVES_JS_HEAD);
    for (game, _) in table.reachable() {
        if game.is_over() || game.turn() != Player::Second {
            continue;
        }
        let mv = table
            .best_move(&game)
            .expect("a game that goes on has a best move");
        write!(js, "{}:{},", game.position_number(), mv.cell.index())
            .expect("writing to a String cannot fail");
    }
    js.push_str(MOVES_JS_TAIL);
    Ok(js)
}

/// Why a text is not a `moves.js` move table.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MovesJsError {
    /// The text does not start with `function getMoves() { return {`.
    MissingHead,
    /// The text does not end with `};}` (trailing white space is allowed).
    MissingTail,
    /// An entry is not `position:cell` in decimal digits.
    BadEntry {
        /// The 0-based index of the entry.
        index: usize,
        /// The entry's text.
        text: String,
    },
    /// A position number is 3^9 = 19683 or more.
    PositionOutOfRange {
        /// The number given.
        position: u32,
    },
    /// A cell is not 0-8.
    CellOutOfRange {
        /// The position whose cell is wrong.
        position: u16,
        /// The cell given.
        cell: u32,
    },
    /// A position is listed twice.
    DuplicatePosition {
        /// The position number.
        position: u16,
    },
}

impl fmt::Display for MovesJsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MovesJsError::MissingHead => {
                write!(f, "a moves.js table starts with {MOVES_JS_HEAD:?}")
            }
            MovesJsError::MissingTail => write!(f, "a moves.js table ends with {MOVES_JS_TAIL:?}"),
            MovesJsError::BadEntry { index, text } => write!(
                f,
                "entry {index} is {text:?}; each entry is position:cell in decimal digits"
            ),
            MovesJsError::PositionOutOfRange { position } => write!(
                f,
                "position {position} is too large; position numbers go from 0 to 19682"
            ),
            MovesJsError::CellOutOfRange { position, cell } => {
                write!(
                    f,
                    "position {position} names cell {cell}; cells go from 0 to 8"
                )
            }
            MovesJsError::DuplicatePosition { position } => {
                write!(f, "position {position} is listed twice")
            }
        }
    }
}

impl std::error::Error for MovesJsError {}

/// Reads a table in the HTML5 canvas game's `moves.js` format (as written by [`moves_js`] or by
/// that game's generator, `TicTacToeGamePlan`) into a map from position number to cell. The final
/// comma is optional and trailing white space is ignored; anything else out of shape is refused
/// with the reason. Positions are not checked against the rules: the game's own file lists ended
/// games too.
///
/// # Errors
/// [`MovesJsError`] saying what is wrong.
///
/// ```
/// use triad_solver::{MovesJsError, parse_moves_js};
///
/// let moves = parse_moves_js("function getMoves() { return {2:4,6:0,};}\n").unwrap();
/// assert_eq!(moves.into_iter().map(|(p, c)| (p, c.index())).collect::<Vec<_>>(), [(2, 4), (6, 0)]);
/// assert_eq!(
///     parse_moves_js("function getMoves() { return {2:9,};}"),
///     Err(MovesJsError::CellOutOfRange { position: 2, cell: 9 })
/// );
/// ```
pub fn parse_moves_js(text: &str) -> Result<BTreeMap<u16, Cell>, MovesJsError> {
    let body = text
        .trim_end()
        .strip_prefix(MOVES_JS_HEAD)
        .ok_or(MovesJsError::MissingHead)?
        .strip_suffix(MOVES_JS_TAIL)
        .ok_or(MovesJsError::MissingTail)?;
    let body = body.strip_suffix(',').unwrap_or(body);
    let mut moves = BTreeMap::new();
    if body.is_empty() {
        return Ok(moves);
    }
    for (index, entry) in body.split(',').enumerate() {
        let bad = || MovesJsError::BadEntry {
            index,
            text: entry.to_owned(),
        };
        let (position, cell) = entry.split_once(':').ok_or_else(bad)?;
        let number = |digits: &str| {
            if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(bad());
            }
            digits.parse::<u32>().map_err(|_| bad())
        };
        let (position, cell) = (number(position)?, number(cell)?);
        let position = u16::try_from(position)
            .ok()
            .filter(|&p| usize::from(p) < crate::POSITION_NUMBERS)
            .ok_or(MovesJsError::PositionOutOfRange { position })?;
        let cell = u8::try_from(cell)
            .ok()
            .and_then(Cell::new)
            .ok_or(MovesJsError::CellOutOfRange { position, cell })?;
        if moves.insert(position, cell).is_some() {
            return Err(MovesJsError::DuplicatePosition { position });
        }
    }
    Ok(moves)
}

/// One line of the JSON Lines export.
#[derive(Serialize)]
struct JsonLine {
    board: String,
    value: &'static str,
    plies: u8,
    best: JsonMove,
}

#[derive(Serialize)]
struct JsonMove {
    cell: u8,
    mark: char,
}

/// Writes one JSON object per line for every reachable position where the game goes on, by
/// increasing position number:
///
/// ```json
/// {"board":"XX--O----","value":"draw","plies":6,"best":{"cell":2,"mark":"O"}}
/// ```
///
/// `board` is the 9-character state string (`-` for empty), `value` and `plies` the
/// position's [`Value`](crate::Value) for the player to move, and `best` its
/// [`best_move`](Table::best_move): cell 0-8 and the mark placed.
///
/// # Errors
/// Whatever error `out` returns.
pub fn write_jsonl<W: io::Write>(table: &Table, mut out: W) -> io::Result<()> {
    for (game, value) in table.reachable() {
        let Some(best) = table.best_move(&game) else {
            continue;
        };
        let line = JsonLine {
            board: game.to_string(),
            value: value.verdict.name(),
            plies: value.plies,
            best: JsonMove {
                cell: best.cell.index(),
                mark: best.mark.char(),
            },
        };
        serde_json::to_writer(&mut out, &line)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// [`write_jsonl`] into a `String`.
///
/// ```
/// use triad_rules::GameKind;
/// use triad_solver::{jsonl, table};
///
/// let text = jsonl(table(GameKind::TicTacToe));
/// assert_eq!(text.lines().count(), 4_520); // 5,478 reachable positions less 958 ended ones
/// assert_eq!(
///     text.lines().next(),
///     Some(r#"{"board":"---------","value":"draw","plies":9,"best":{"cell":0,"mark":"X"}}"#)
/// );
/// ```
#[must_use]
pub fn jsonl(table: &Table) -> String {
    let mut bytes = Vec::new();
    write_jsonl(table, &mut bytes).expect("writing to a Vec cannot fail");
    String::from_utf8(bytes).expect("serde_json writes UTF-8")
}
