//! The protocol's errors, each with a stable numeric code and snake_case name.

use core::fmt;

use triad_rules::MoveError;

/// Why a message was refused, or why it cannot be applied to a game.
///
/// Codes 220 and up are the protocol's; the server's API reports them with the same numbers
/// and names. A move that breaks a rule of the game reports the rules' own codes 0-5 (as
/// the Sui contract numbered them). Codes never change meaning; new errors get new codes.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtocolError {
    /// A move breaks a rule of the game (codes 0-5: game over, invalid position, not your
    /// turn, cell occupied, mark not in game, not your mark).
    IllegalMove(MoveError),
    /// 220: the `appId` is not one of Triad's apps.
    UnknownApp {
        /// The app id received (shortened).
        app_id: String,
    },
    /// 221: the action is not one of the app's actions.
    UnknownAction {
        /// The action received (shortened).
        action: String,
    },
    /// 222: the payload is not what the action requires.
    InvalidPayload {
        /// The field at fault (`payload` for the payload as a whole).
        field: &'static str,
        /// What is wrong with it, and what is expected.
        problem: String,
    },
    /// 223: the board sent is not the board before the move plus the move (the A2A protocol's
    /// `state-conflict`).
    StateConflict {
        /// The board the receiver expected, as 9 characters (`-` for empty).
        expected: String,
        /// The board received.
        received: String,
    },
    /// 224: the message is not allowed at this point of the game (a move before the
    /// acceptance, a move for the other player, a second proposal, …).
    OutOfTurn {
        /// What was out of place.
        problem: &'static str,
    },
    /// 225: the move's `seq` is not the number of marks after it.
    SeqMismatch {
        /// The `seq` the move must carry.
        expected: u8,
        /// The `seq` it carried.
        got: u8,
    },
    /// 226: the move's `replyTo` is not the `seq` of the opponent's last move.
    ReplyToMismatch {
        /// The `replyTo` the move must carry.
        expected: u8,
        /// The `replyTo` it carried.
        got: u8,
    },
    /// 227: the declared result is not the board's.
    ResultMismatch {
        /// What was declared.
        declared: String,
        /// What the board says.
        actual: String,
    },
    /// 228: the roles do not fit: an acceptance must take the role the proposal left.
    RoleConflict {
        /// The role the acceptance must take.
        expected: &'static str,
        /// The role it took.
        got: &'static str,
    },
    /// 229: the message belongs to another game (its `gameId` differs).
    GameIdMismatch {
        /// This game's id (`none` for a game without one).
        expected: String,
        /// The message's.
        got: String,
    },
    /// 230: the signed envelope does not verify.
    BadEnvelope {
        /// Why.
        problem: String,
    },
    /// 231: too many messages are held waiting for an earlier one.
    TooManyPending,
}

/// The longest piece of received text an error repeats.
const QUOTE: usize = 40;

pub(crate) fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

impl ProtocolError {
    /// One of each variant (with placeholder data), for tests and documentation.
    #[must_use]
    pub fn all() -> Vec<ProtocolError> {
        let mut all: Vec<ProtocolError> = MoveError::ALL
            .iter()
            .map(|&e| ProtocolError::IllegalMove(e))
            .collect();
        all.extend([
            ProtocolError::UnknownApp {
                app_id: "chess".into(),
            },
            ProtocolError::UnknownAction {
                action: "resign".into(),
            },
            ProtocolError::InvalidPayload {
                field: "seq",
                problem: "must be a whole number".into(),
            },
            ProtocolError::StateConflict {
                expected: "----X----".into(),
                received: "X--------".into(),
            },
            ProtocolError::OutOfTurn {
                problem: "a move before the game was accepted",
            },
            ProtocolError::SeqMismatch {
                expected: 3,
                got: 5,
            },
            ProtocolError::ReplyToMismatch {
                expected: 2,
                got: 0,
            },
            ProtocolError::ResultMismatch {
                declared: "win by X".into(),
                actual: "in play".into(),
            },
            ProtocolError::RoleConflict {
                expected: "O",
                got: "X",
            },
            ProtocolError::GameIdMismatch {
                expected: "g1".into(),
                got: "g2".into(),
            },
            ProtocolError::BadEnvelope {
                problem: "the signature does not verify".into(),
            },
            ProtocolError::TooManyPending,
        ]);
        all
    }

    /// The stable numeric code.
    #[must_use]
    pub fn code(&self) -> u16 {
        match self {
            ProtocolError::IllegalMove(e) => e.code(),
            ProtocolError::UnknownApp { .. } => 220,
            ProtocolError::UnknownAction { .. } => 221,
            ProtocolError::InvalidPayload { .. } => 222,
            ProtocolError::StateConflict { .. } => 223,
            ProtocolError::OutOfTurn { .. } => 224,
            ProtocolError::SeqMismatch { .. } => 225,
            ProtocolError::ReplyToMismatch { .. } => 226,
            ProtocolError::ResultMismatch { .. } => 227,
            ProtocolError::RoleConflict { .. } => 228,
            ProtocolError::GameIdMismatch { .. } => 229,
            ProtocolError::BadEnvelope { .. } => 230,
            ProtocolError::TooManyPending => 231,
        }
    }

    /// The stable snake_case name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            ProtocolError::IllegalMove(e) => e.name(),
            ProtocolError::UnknownApp { .. } => "unknown_app",
            ProtocolError::UnknownAction { .. } => "unknown_action",
            ProtocolError::InvalidPayload { .. } => "invalid_payload",
            ProtocolError::StateConflict { .. } => "state_conflict",
            ProtocolError::OutOfTurn { .. } => "out_of_turn",
            ProtocolError::SeqMismatch { .. } => "seq_mismatch",
            ProtocolError::ReplyToMismatch { .. } => "reply_to_mismatch",
            ProtocolError::ResultMismatch { .. } => "result_mismatch",
            ProtocolError::RoleConflict { .. } => "role_conflict",
            ProtocolError::GameIdMismatch { .. } => "game_id_mismatch",
            ProtocolError::BadEnvelope { .. } => "bad_envelope",
            ProtocolError::TooManyPending => "too_many_pending",
        }
    }

    /// Whether the error means the two sides no longer agree on the game, so that by seed
    /// 4's rule the receiver ends it with `result {"outcome":"abort","reason":"state-conflict"}`.
    /// Other errors concern only the one message, which is ignored.
    #[must_use]
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            ProtocolError::IllegalMove(_)
                | ProtocolError::StateConflict { .. }
                | ProtocolError::ReplyToMismatch { .. }
                | ProtocolError::RoleConflict { .. }
        )
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolError::IllegalMove(e) => write!(f, "{e}"),
            ProtocolError::UnknownApp { app_id } => write!(
                f,
                "unknown app {:?}; the apps are tic-tac-toe and sos",
                quote(app_id)
            ),
            ProtocolError::UnknownAction { action } => write!(
                f,
                "unknown action {:?}; the actions are propose, accept, move and result",
                quote(action)
            ),
            ProtocolError::InvalidPayload { field, problem } => {
                write!(f, "invalid payload: {field} {problem}")
            }
            ProtocolError::StateConflict { expected, received } => write!(
                f,
                "state conflict: the board sent ({received}) is not the board before the move plus the move ({expected})"
            ),
            ProtocolError::OutOfTurn { problem } => write!(f, "out of turn: {problem}"),
            ProtocolError::SeqMismatch { expected, got } => write!(
                f,
                "seq {got} is not the number of marks after this move; it must be {expected}"
            ),
            ProtocolError::ReplyToMismatch { expected, got } => write!(
                f,
                "replyTo {got} is not the seq of the opponent's last move; it must be {expected}"
            ),
            ProtocolError::ResultMismatch { declared, actual } => write!(
                f,
                "the declared result ({declared}) is not the board's ({actual})"
            ),
            ProtocolError::RoleConflict { expected, got } => write!(
                f,
                "role {got} is taken: the acceptance must take the remaining role, {expected}"
            ),
            ProtocolError::GameIdMismatch { expected, got } => write!(
                f,
                "this message is for game {got}, not game {expected}; send the gameId of the game you mean"
            ),
            ProtocolError::BadEnvelope { problem } => {
                write!(f, "the signed envelope does not verify: {problem}")
            }
            ProtocolError::TooManyPending => {
                f.write_str("too many messages are waiting for an earlier one that has not arrived")
            }
        }
    }
}

impl std::error::Error for ProtocolError {}

impl From<MoveError> for ProtocolError {
    fn from(e: MoveError) -> Self {
        ProtocolError::IllegalMove(e)
    }
}
