//! The A2A tic-tac-toe protocol's messages: the four payloads, a strict decoder with typed errors,
//! and an encoder that writes exactly the protocol's JSON shapes.
//!
//! A message on the wire is an `appId`, an `action` and a `payload` (a JSON object):
//!
//! | action | payload |
//! |---|---|
//! | `propose` | `{"seq":0,"role":"X"}` |
//! | `accept` | `{"seq":0,"role":"O"}` |
//! | `move` | `{"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}` |
//! | `result` | `{"outcome":"win","winner":"X"}`, `{"outcome":"draw"}`, `{"outcome":"abort","reason":"state-conflict"}` |
//!
//! Every payload may also carry `"gameId"` (1-64 of `A-Z a-z 0-9 . _ : -`), so the same two
//! agents can tell several games apart; without it a message belongs to the one game the two
//! are playing, as in the protocol. Fields the decoder does not know are ignored, so newer
//! agents can add some without breaking older ones; fields it knows must be exactly right.

use serde::Serialize;
use serde_json::{Map, Value};
use triad_rules::{Cell, Mark, MoveError, Player};

use crate::{Action, App, ProtocolError, error::quote};

/// The largest payload (or data part) the decoder reads, in bytes of JSON.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// The reason of the A2A protocol's abort on a conflicting board.
pub const STATE_CONFLICT: &str = "state-conflict";

/// A board as the payload carries it: nine cells, row-major, empty or a mark.
pub type Board = [Option<Mark>; 9];

/// The empty board.
pub const EMPTY_BOARD: Board = [None; 9];

/// A board as 9 characters, `-` for an empty cell (the SOS contract's state string).
#[must_use]
pub fn board_string(board: &Board) -> String {
    board.iter().map(|c| c.map_or('-', Mark::char)).collect()
}

/// A game's id: 1 to 64 characters of `A-Z a-z 0-9 . _ : -`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct GameId(String);

impl GameId {
    /// The longest id.
    pub const MAX_LEN: usize = 64;

    /// Checks an id.
    ///
    /// # Errors
    /// [`ProtocolError::InvalidPayload`] for an empty, long or oddly spelled id.
    pub fn new(id: &str) -> Result<GameId, ProtocolError> {
        let ok = !id.is_empty()
            && id.len() <= GameId::MAX_LEN
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
        if ok {
            Ok(GameId(id.to_owned()))
        } else {
            Err(invalid(
                "gameId",
                format!(
                    "must be 1 to {} characters of A-Z a-z 0-9 . _ : - (got {:?})",
                    GameId::MAX_LEN,
                    quote(id)
                ),
            ))
        }
    }

    /// The id.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for GameId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `propose`: start a game, claiming a role (`seq` is always 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Propose {
    /// The proposer's role; the first player moves first.
    pub role: Player,
    /// The game's id, if the proposer gives one.
    pub game_id: Option<GameId>,
}

/// `accept`: accept a proposal, taking the remaining role (`seq` is always 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accept {
    /// The accepting player's role: the one the proposal left.
    pub role: Player,
    /// The proposal's game id.
    pub game_id: Option<GameId>,
}

/// `move`: place a mark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    /// The number of marks on the board after this move (1-9).
    pub seq: u8,
    /// The `seq` of the opponent's last move (0 for the first move, which answers the
    /// acceptance).
    pub reply_to: u8,
    /// The cell, 0-8, row-major from the top left.
    pub position: Cell,
    /// The mark placed.
    pub mark: Mark,
    /// The whole board after the move.
    pub board: Board,
    /// The game's id, if it has one.
    pub game_id: Option<GameId>,
}

/// How a `result` says the game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A player won.
    Win,
    /// The board filled with no winner.
    Draw,
    /// The game was called off (a state conflict or another irrecoverable problem).
    Abort,
}

impl Outcome {
    /// The name on the wire.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::Draw => "draw",
            Outcome::Abort => "abort",
        }
    }
}

/// `result`: the game's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameResult {
    /// Win, draw or abort.
    pub outcome: Outcome,
    /// The winner, for a win (and only then).
    pub winner: Option<Player>,
    /// Why (for example `state-conflict`); optional.
    pub reason: Option<String>,
    /// The game's id, if it has one.
    pub game_id: Option<GameId>,
}

impl GameResult {
    /// A win by `winner`.
    #[must_use]
    pub fn win(winner: Player, game_id: Option<GameId>) -> GameResult {
        GameResult {
            outcome: Outcome::Win,
            winner: Some(winner),
            reason: None,
            game_id,
        }
    }

    /// A draw.
    #[must_use]
    pub fn draw(game_id: Option<GameId>) -> GameResult {
        GameResult {
            outcome: Outcome::Draw,
            winner: None,
            reason: None,
            game_id,
        }
    }

    /// An abort with a reason.
    #[must_use]
    pub fn abort(reason: &str, game_id: Option<GameId>) -> GameResult {
        GameResult {
            outcome: Outcome::Abort,
            winner: None,
            reason: Some(reason.to_owned()),
            game_id,
        }
    }

    /// In words, for messages and logs: `win by X`, `draw`, `abort (state-conflict)`.
    #[must_use]
    pub fn describe(&self, app: App) -> String {
        match (self.outcome, self.winner, &self.reason) {
            (Outcome::Win, Some(w), _) => format!("win by {}", app.role_name(w)),
            (Outcome::Abort, _, Some(reason)) => format!("abort ({reason})"),
            (outcome, _, _) => outcome.name().to_owned(),
        }
    }
}

/// A message: one of the four actions with its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// `propose`.
    Propose(Propose),
    /// `accept`.
    Accept(Accept),
    /// `move`.
    Move(Move),
    /// `result`.
    Result(GameResult),
}

fn invalid(field: &'static str, problem: impl Into<String>) -> ProtocolError {
    ProtocolError::InvalidPayload {
        field,
        problem: problem.into(),
    }
}

/// The JSON type of a value, for error messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The fields of a payload, read one by one with precise errors.
struct Fields<'a>(&'a Map<String, Value>);

impl<'a> Fields<'a> {
    fn get(&self, name: &str) -> Option<&'a Value> {
        self.0.get(name).filter(|v| !v.is_null())
    }

    fn required(&self, name: &'static str) -> Result<&'a Value, ProtocolError> {
        self.get(name).ok_or_else(|| invalid(name, "is missing"))
    }

    fn number(
        &self,
        name: &'static str,
        range: std::ops::RangeInclusive<u8>,
    ) -> Result<u8, ProtocolError> {
        let value = self.required(name)?;
        let n = value
            .as_u64()
            .ok_or_else(|| invalid(name, format!("must be a whole number, not {}", kind(value))))?;
        u8::try_from(n)
            .ok()
            .filter(|n| range.contains(n))
            .ok_or_else(|| {
                let wanted = if range.start() == range.end() {
                    format!("must be {}", range.start())
                } else {
                    format!("must be from {} to {}", range.start(), range.end())
                };
                invalid(name, format!("{wanted} (got {n})"))
            })
    }

    fn string(&self, name: &'static str) -> Result<&'a str, ProtocolError> {
        let value = self.required(name)?;
        value
            .as_str()
            .ok_or_else(|| invalid(name, format!("must be a string, not {}", kind(value))))
    }

    fn game_id(&self) -> Result<Option<GameId>, ProtocolError> {
        match self.get("gameId") {
            None => Ok(None),
            Some(Value::String(s)) => GameId::new(s).map(Some),
            Some(other) => Err(invalid(
                "gameId",
                format!("must be a string, not {}", kind(other)),
            )),
        }
    }

    fn role(&self, app: App) -> Result<Player, ProtocolError> {
        let name = self.string("role")?;
        app.role(name).ok_or_else(|| {
            invalid(
                "role",
                format!(
                    "must be {:?} or {:?} in {} (got {:?})",
                    app.role_name(Player::First),
                    app.role_name(Player::Second),
                    app,
                    quote(name)
                ),
            )
        })
    }
}

/// A mark's letter in a payload: `X`, `O` or `S`, upper case, one of the app's.
fn parse_mark(app: App, field: &'static str, text: &str) -> Result<Mark, ProtocolError> {
    let mark = match text {
        "X" => Mark::X,
        "O" => Mark::O,
        "S" => Mark::S,
        _ => {
            return Err(invalid(
                field,
                format!(
                    "must be \"X\", \"O\" or \"S\" in upper case (got {:?})",
                    quote(text)
                ),
            ));
        }
    };
    if app.has_mark(mark) {
        Ok(mark)
    } else {
        Err(ProtocolError::IllegalMove(MoveError::MarkNotInGame))
    }
}

fn parse_board(app: App, value: &Value) -> Result<Board, ProtocolError> {
    let cells = value.as_array().ok_or_else(|| {
        invalid(
            "board",
            format!("must be an array of 9 strings, not {}", kind(value)),
        )
    })?;
    if cells.len() != 9 {
        return Err(invalid(
            "board",
            format!("must have 9 cells (got {})", cells.len()),
        ));
    }
    let mut board = EMPTY_BOARD;
    for (i, cell) in cells.iter().enumerate() {
        let text = cell.as_str().ok_or_else(|| {
            invalid(
                "board",
                format!("cell {i} must be a string, not {}", kind(cell)),
            )
        })?;
        board[i] = match text {
            "" => None,
            _ => {
                let mark = parse_mark(app, "board", text).map_err(|e| match e {
                    ProtocolError::IllegalMove(_) => invalid(
                        "board",
                        format!("cell {i} holds {text:?}, which is not a mark of {app}"),
                    ),
                    other => other,
                })?;
                Some(mark)
            }
        };
    }
    Ok(board)
}

impl Message {
    /// Decodes a payload for an app and an action.
    ///
    /// # Errors
    /// [`ProtocolError::UnknownAction`], [`ProtocolError::InvalidPayload`] (naming the
    /// field), or the rules' `invalid_position` (1) and `mark_not_in_game` (4) for a cell or
    /// mark that no game has. Never panics, whatever the input.
    pub fn decode(app: App, action: &str, payload: &Value) -> Result<Message, ProtocolError> {
        let action = Action::from_id(action)?;
        let object = payload.as_object().ok_or_else(|| {
            invalid(
                "payload",
                format!("must be a JSON object, not {}", kind(payload)),
            )
        })?;
        let fields = Fields(object);
        let game_id = fields.game_id()?;
        Ok(match action {
            Action::Propose | Action::Accept => {
                fields.number("seq", 0..=0)?;
                let role = fields.role(app)?;
                if action == Action::Propose {
                    Message::Propose(Propose { role, game_id })
                } else {
                    Message::Accept(Accept { role, game_id })
                }
            }
            Action::Move => {
                let seq = fields.number("seq", 1..=9)?;
                let reply_to = fields.number("replyTo", 0..=8)?;
                let position = fields.required("position")?;
                let index = position.as_u64().ok_or_else(|| {
                    invalid(
                        "position",
                        format!("must be a whole number 0-8, not {}", kind(position)),
                    )
                })?;
                let position = u8::try_from(index)
                    .ok()
                    .and_then(Cell::new)
                    .ok_or(ProtocolError::IllegalMove(MoveError::InvalidPosition))?;
                let mark = parse_mark(app, "mark", fields.string("mark")?)?;
                let board = parse_board(app, fields.required("board")?)?;
                Message::Move(Move {
                    seq,
                    reply_to,
                    position,
                    mark,
                    board,
                    game_id,
                })
            }
            Action::Result => {
                let outcome = match fields.string("outcome")? {
                    "win" => Outcome::Win,
                    "draw" => Outcome::Draw,
                    "abort" => Outcome::Abort,
                    other => {
                        return Err(invalid(
                            "outcome",
                            format!(
                                "must be \"win\", \"draw\" or \"abort\" (got {:?})",
                                quote(other)
                            ),
                        ));
                    }
                };
                let winner = match (outcome, fields.get("winner")) {
                    (Outcome::Win, Some(_)) => {
                        let name = fields.string("winner")?;
                        Some(app.role(name).ok_or_else(|| {
                            invalid(
                                "winner",
                                format!(
                                    "must be {:?} or {:?} (got {:?})",
                                    app.role_name(Player::First),
                                    app.role_name(Player::Second),
                                    quote(name)
                                ),
                            )
                        })?)
                    }
                    (Outcome::Win, None) => {
                        return Err(invalid("winner", "is missing: a win names its winner"));
                    }
                    (_, Some(_)) => {
                        return Err(invalid(
                            "winner",
                            format!("must be left out: a {} has no winner", outcome.name()),
                        ));
                    }
                    (_, None) => None,
                };
                let reason = match fields.get("reason") {
                    None => None,
                    Some(_) => {
                        let text = fields.string("reason")?;
                        let ok = (1..=200).contains(&text.chars().count())
                            && !text.chars().any(char::is_control);
                        if !ok {
                            return Err(invalid(
                                "reason",
                                "must be 1 to 200 characters of text, without control characters",
                            ));
                        }
                        Some(text.to_owned())
                    }
                };
                Message::Result(GameResult {
                    outcome,
                    winner,
                    reason,
                    game_id,
                })
            }
        })
    }

    /// Decodes a payload given as JSON text (at most [`MAX_MESSAGE_BYTES`]).
    ///
    /// # Errors
    /// As [`decode`](Message::decode), and [`ProtocolError::InvalidPayload`] for text that
    /// is not JSON or is too long.
    pub fn decode_json(app: App, action: &str, payload: &str) -> Result<Message, ProtocolError> {
        Message::decode(app, action, &parse_json(payload.as_bytes())?)
    }

    /// The action.
    #[must_use]
    pub fn action(&self) -> Action {
        match self {
            Message::Propose(_) => Action::Propose,
            Message::Accept(_) => Action::Accept,
            Message::Move(_) => Action::Move,
            Message::Result(_) => Action::Result,
        }
    }

    /// The game id it carries.
    #[must_use]
    pub fn game_id(&self) -> Option<&GameId> {
        match self {
            Message::Propose(p) => p.game_id.as_ref(),
            Message::Accept(a) => a.game_id.as_ref(),
            Message::Move(m) => m.game_id.as_ref(),
            Message::Result(r) => r.game_id.as_ref(),
        }
    }

    /// The `seq` it carries: 0 for a proposal or an acceptance, the move's for a move, and
    /// none for a result.
    #[must_use]
    pub fn seq(&self) -> Option<u8> {
        match self {
            Message::Propose(_) | Message::Accept(_) => Some(0),
            Message::Move(m) => Some(m.seq),
            Message::Result(_) => None,
        }
    }

    /// The payload as compact JSON in the protocol's field order (the canonical form, which
    /// signatures cover).
    #[must_use]
    pub fn payload_json(&self, app: App) -> String {
        serde_json::to_string(&Payload(app, self.clone())).expect("plain data serializes")
    }

    /// The payload as a JSON value.
    #[must_use]
    pub fn payload(&self, app: App) -> Value {
        serde_json::from_str(&self.payload_json(app)).expect("the encoder writes JSON")
    }

    /// The A2A data part's content, `{"appId", "action", "payload"}`.
    #[must_use]
    pub fn data(&self, app: App) -> Value {
        serde_json::json!({
            "appId": app.id(),
            "action": self.action().id(),
            "payload": self.payload(app),
        })
    }
}

/// A message's payload that serializes in the protocol's field order (`seq`, `replyTo`,
/// `position`, `mark`, `board`; `outcome`, `winner`, `reason`; then `gameId`), for embedding
/// in a larger JSON document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Payload(pub App, pub Message);

impl Serialize for Payload {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Opening<'a> {
            seq: u8,
            role: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            game_id: Option<&'a GameId>,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Moving<'a> {
            seq: u8,
            reply_to: u8,
            position: u8,
            mark: String,
            board: Vec<String>,
            #[serde(skip_serializing_if = "Option::is_none")]
            game_id: Option<&'a GameId>,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Ending<'a> {
            outcome: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            winner: Option<&'static str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            reason: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            game_id: Option<&'a GameId>,
        }
        let Payload(app, message) = self;
        match message {
            Message::Propose(Propose { role, game_id })
            | Message::Accept(Accept { role, game_id }) => Opening {
                seq: 0,
                role: app.role_name(*role),
                game_id: game_id.as_ref(),
            }
            .serialize(serializer),
            Message::Move(m) => Moving {
                seq: m.seq,
                reply_to: m.reply_to,
                position: m.position.index(),
                mark: m.mark.char().to_string(),
                board: m
                    .board
                    .iter()
                    .map(|c| c.map(|m| m.char().to_string()).unwrap_or_default())
                    .collect(),
                game_id: m.game_id.as_ref(),
            }
            .serialize(serializer),
            Message::Result(r) => Ending {
                outcome: r.outcome.name(),
                winner: r.winner.map(|w| app.role_name(w)),
                reason: r.reason.as_deref(),
                game_id: r.game_id.as_ref(),
            }
            .serialize(serializer),
        }
    }
}

fn parse_json(bytes: &[u8]) -> Result<Value, ProtocolError> {
    if bytes.len() > MAX_MESSAGE_BYTES {
        return Err(invalid(
            "payload",
            format!("is {} bytes; at most {MAX_MESSAGE_BYTES}", bytes.len()),
        ));
    }
    serde_json::from_slice(bytes).map_err(|e| invalid("payload", format!("is not JSON: {e}")))
}

/// Decodes an A2A data part (or any `{"appId", "action", "payload"}` object).
///
/// # Errors
/// As [`Message::decode`], and [`ProtocolError::UnknownApp`].
pub fn decode_data(data: &Value) -> Result<(App, Message), ProtocolError> {
    let object = data.as_object().ok_or_else(|| {
        invalid(
            "payload",
            format!(
                "the data must be an object with appId, action and payload, not {}",
                kind(data)
            ),
        )
    })?;
    let fields = Fields(object);
    let app = App::from_id(fields.string("appId")?)?;
    let action = fields.string("action")?;
    let payload = fields.required("payload")?;
    Ok((app, Message::decode(app, action, payload)?))
}

/// The data with every whole number written as an integer. A2A 1.0's official SDKs carry a
/// data part as a `google.protobuf.Value`, whose numbers are doubles, so `"seq": 0` arrives
/// as `"seq": 0.0`. A number with a fraction, or too large for a double to hold exactly,
/// stays as it is (and [`decode_data`] refuses it where the protocol wants an integer).
#[must_use]
pub fn whole_numbers(value: Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            // Exact: a double below 2^53 in magnitude is a whole number of i64.
            #[allow(clippy::cast_possible_truncation)]
            Some(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                Value::from(f as i64)
            }
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(whole_numbers).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, whole_numbers(v)))
                .collect::<Map<_, _>>(),
        ),
        other => other,
    }
}

/// Decodes an A2A data part given as JSON bytes (at most [`MAX_MESSAGE_BYTES`]): the
/// fuzzed entry point.
///
/// # Errors
/// As [`decode_data`], and [`ProtocolError::InvalidPayload`] for bytes that are not JSON.
pub fn decode_data_json(bytes: &[u8]) -> Result<(App, Message), ProtocolError> {
    decode_data(&parse_json(bytes)?)
}
