//! The one error type of the API: every error body is
//! `{"code": <number>, "error": "<snake_case name>", "message": "<what to do>"}`, and the
//! HTTP status is chosen here, once.

use axum::{
    Json,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Serialize;
use triad_engine::EngineError;
use triad_rules::MoveError;

use crate::{
    bounds::{Refusal, Refused},
    core::CoreError,
    profiles::{ProfileError, RENAMES_PER_WINDOW, name::NameError},
    relay::RelayError,
    sessions::SessionError,
    store::StoreError,
    web::NotServed,
};

/// An error body.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Stable numeric code: 0-5 rules (0-3 as in the `tictactoe` contract), 100-199 engine, 200-299 API
    /// (220-233: the agents' protocol; 235-237: notation).
    pub code: u16,
    /// Stable snake_case name.
    pub error: &'static str,
    /// What happened and what to do, in plain words.
    pub message: String,
}

/// An API error.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body.
    pub body: ErrorBody,
    /// Seconds to wait before retrying, sent as `Retry-After`.
    pub retry_after_s: Option<u64>,
}

/// The API's own errors (codes 200+).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Api {
    /// 200: the request could not be read.
    BadRequest,
    /// 201: no token was given.
    Unauthorized,
    /// 202: the token is unknown, forged or revoked.
    InvalidToken,
    /// 203: the token has expired.
    TokenExpired,
    /// 204: the login challenge is unknown, expired or already used.
    UnknownChallenge,
    /// 205: the signature does not verify.
    BadSignature,
    /// 206: the public key is not 64 hex digits of a valid Ed25519 key.
    InvalidPublicKey,
    /// 207: too many requests.
    RateLimited,
    /// 208: the body is too large.
    PayloadTooLarge,
    /// 209: the database is unavailable.
    StorageUnavailable,
    /// 210: no such resource.
    NotFound,
    /// 211: not an address.
    InvalidAddress,
    /// 212: the server is shutting down.
    ShuttingDown,
    /// 213: too many connections.
    TooManyConnections,
    /// 214: the request took too long.
    Timeout,
    /// 215: a parameter is out of range.
    InvalidParameter,
    /// 216: an unknown signature scheme.
    UnknownScheme,
    /// 217: the path exists, but not with this method.
    MethodNotAllowed,
    /// 218: the server's disk is full; nothing was done.
    StorageFull,
    /// 219: this client (IP address) has as many connections, WebSockets or long-polls open
    /// as it may.
    TooManyOpen,
    /// 220: the `appId` is not one of Triad's apps (agents' relay).
    UnknownApp,
    /// 221: the action is not one of the app's.
    UnknownAction,
    /// 222: the payload is not what the action requires.
    InvalidPayload,
    /// 223: the move's board is not the board before it plus the move (the
    /// protocol's state conflict).
    StateConflict,
    /// 224: the message is not allowed at this point of the game.
    OutOfTurn,
    /// 225: the move's `seq` is not the number of marks after it.
    SeqMismatch,
    /// 226: the move's `replyTo` is not the `seq` of the opponent's last move.
    ReplyToMismatch,
    /// 227: the declared result is not the one the referee recorded.
    ResultMismatch,
    /// 228: the acceptance does not take the role the proposal left.
    RoleConflict,
    /// 229: the message's `gameId` is not its game's.
    GameIdMismatch,
    /// 230: the signed envelope does not verify.
    BadEnvelope,
    /// 231: too many messages wait for an earlier one (an agent's own state machine).
    TooManyPending,
    /// 232: there is no game with that agent (and gameId) for this message.
    NoGame,
    /// 233: the gameId already names another game of the two agents.
    GameIdTaken,
    /// 234: the server failed on the request (an internal fault, logged); nothing was done.
    InternalError,
    /// 238: the match is still in play; its review and transcript come when it ends.
    MatchNotFinished,
    /// 235: the text is not a record in Triad's notation (`docs/notation.md`).
    NotationInvalid,
    /// 236: a move of the record is one the rules refuse.
    NotationIllegalMove,
    /// 237: the record's headers disagree with its moves or with each other.
    NotationInconsistent,
    /// 242: the `after` of a puzzle page is not a puzzle's id.
    UnknownPuzzleCursor,
    /// 260: the display name is not one a player may take (length, characters,
    /// separators, an address's look).
    InvalidDisplayName,
    /// 261: the display name is reserved.
    DisplayNameReserved,
    /// 262: another player's display name is this one or looks like it.
    DisplayNameTaken,
    /// 263: too many renames in this window.
    TooManyRenames,
}

impl Api {
    /// Every API error.
    pub const ALL: [Api; 44] = [
        Api::BadRequest,
        Api::Unauthorized,
        Api::InvalidToken,
        Api::TokenExpired,
        Api::UnknownChallenge,
        Api::BadSignature,
        Api::InvalidPublicKey,
        Api::RateLimited,
        Api::PayloadTooLarge,
        Api::StorageUnavailable,
        Api::NotFound,
        Api::InvalidAddress,
        Api::ShuttingDown,
        Api::TooManyConnections,
        Api::Timeout,
        Api::InvalidParameter,
        Api::UnknownScheme,
        Api::MethodNotAllowed,
        Api::StorageFull,
        Api::TooManyOpen,
        Api::UnknownApp,
        Api::UnknownAction,
        Api::InvalidPayload,
        Api::StateConflict,
        Api::OutOfTurn,
        Api::SeqMismatch,
        Api::ReplyToMismatch,
        Api::ResultMismatch,
        Api::RoleConflict,
        Api::GameIdMismatch,
        Api::BadEnvelope,
        Api::TooManyPending,
        Api::NoGame,
        Api::GameIdTaken,
        Api::InternalError,
        Api::MatchNotFinished,
        Api::NotationInvalid,
        Api::NotationIllegalMove,
        Api::NotationInconsistent,
        Api::UnknownPuzzleCursor,
        Api::InvalidDisplayName,
        Api::DisplayNameReserved,
        Api::DisplayNameTaken,
        Api::TooManyRenames,
    ];

    /// Code, name, status and default message.
    #[must_use]
    pub fn describe(self) -> (u16, &'static str, StatusCode, &'static str) {
        use StatusCode as S;
        match self {
            Api::BadRequest => (
                200,
                "bad_request",
                S::BAD_REQUEST,
                "the request could not be read; check the JSON body against the API document at /api/openapi.json",
            ),
            Api::Unauthorized => (
                201,
                "unauthorized",
                S::UNAUTHORIZED,
                "log in first: send Authorization: Bearer <token>",
            ),
            Api::InvalidToken => (
                202,
                "invalid_token",
                S::UNAUTHORIZED,
                "this token is not valid; log in again",
            ),
            Api::TokenExpired => (
                203,
                "token_expired",
                S::UNAUTHORIZED,
                "this token has expired; log in again",
            ),
            Api::UnknownChallenge => (
                204,
                "unknown_challenge",
                S::UNAUTHORIZED,
                "this login challenge is unknown, expired or already used; ask for a new one",
            ),
            Api::BadSignature => (
                205,
                "bad_signature",
                S::UNAUTHORIZED,
                "the signature does not match the challenge and the key; sign the challenge's message bytes with this key",
            ),
            Api::InvalidPublicKey => (
                206,
                "invalid_public_key",
                S::BAD_REQUEST,
                "the public key must be 64 hex digits of an Ed25519 key",
            ),
            Api::RateLimited => (
                207,
                "rate_limited",
                S::TOO_MANY_REQUESTS,
                "too many requests; wait as Retry-After says",
            ),
            Api::PayloadTooLarge => (
                208,
                "payload_too_large",
                S::PAYLOAD_TOO_LARGE,
                "the request body is too large",
            ),
            Api::StorageUnavailable => (
                209,
                "storage_unavailable",
                S::SERVICE_UNAVAILABLE,
                "the database is unavailable and nothing was done; try again shortly",
            ),
            Api::StorageFull => (
                218,
                "storage_full",
                S::SERVICE_UNAVAILABLE,
                "the server's disk is full and nothing was done; try again later",
            ),
            Api::TooManyOpen => (
                219,
                "too_many_open",
                S::TOO_MANY_REQUESTS,
                "this IP address has as many connections, WebSockets or long-polls open as it may; close one, or wait as Retry-After says",
            ),
            Api::NotFound => (
                210,
                "not_found",
                S::NOT_FOUND,
                "there is nothing here; see /api/openapi.json for the API",
            ),
            Api::InvalidAddress => (
                211,
                "invalid_address",
                S::BAD_REQUEST,
                "an address is 0x followed by 64 hexadecimal digits",
            ),
            Api::ShuttingDown => (
                212,
                "shutting_down",
                S::SERVICE_UNAVAILABLE,
                "the server is shutting down; reconnect in a moment",
            ),
            Api::TooManyConnections => (
                213,
                "too_many_connections",
                S::SERVICE_UNAVAILABLE,
                "the server has too many connections; try again shortly",
            ),
            Api::Timeout => (
                214,
                "timeout",
                S::REQUEST_TIMEOUT,
                "the request took too long; try again",
            ),
            Api::InvalidParameter => (
                215,
                "invalid_parameter",
                S::BAD_REQUEST,
                "a parameter is out of range",
            ),
            Api::UnknownScheme => (
                216,
                "unknown_scheme",
                S::BAD_REQUEST,
                "unknown signature scheme; use ed25519 or sui-personal-message",
            ),
            Api::MethodNotAllowed => (
                217,
                "method_not_allowed",
                S::METHOD_NOT_ALLOWED,
                "this path does not take this method; the Allow header lists those it takes",
            ),
            Api::InternalError => (
                234,
                "internal_error",
                S::INTERNAL_SERVER_ERROR,
                "the server failed on this request (an internal fault, now in its log); nothing was done: report it to the operator with the time",
            ),
            Api::MatchNotFinished => (
                238,
                "match_not_finished",
                S::CONFLICT,
                "this match is still in play; its review and transcript are ready when it ends",
            ),
            Api::NotationInvalid => (
                235,
                "notation_invalid",
                S::UNPROCESSABLE_ENTITY,
                "the text is not a record in Triad's notation; see docs/notation.md",
            ),
            Api::NotationIllegalMove => (
                236,
                "notation_illegal_move",
                S::UNPROCESSABLE_ENTITY,
                "a move of the record is illegal; correct it at the line the message names",
            ),
            Api::NotationInconsistent => (
                237,
                "notation_inconsistent",
                S::UNPROCESSABLE_ENTITY,
                "the record's headers disagree with its moves; correct them at the line the message names",
            ),
            Api::UnknownApp => (
                220,
                "unknown_app",
                S::UNPROCESSABLE_ENTITY,
                "unknown app; the apps are tic-tac-toe and sos",
            ),
            Api::UnknownAction => (
                221,
                "unknown_action",
                S::UNPROCESSABLE_ENTITY,
                "unknown action; the actions are propose, accept, move and result",
            ),
            Api::InvalidPayload => (
                222,
                "invalid_payload",
                S::UNPROCESSABLE_ENTITY,
                "the payload is not what the action requires; see the app's manifest",
            ),
            Api::StateConflict => (
                223,
                "state_conflict",
                S::CONFLICT,
                "the board sent is not the board before the move plus the move",
            ),
            Api::OutOfTurn => (
                224,
                "out_of_turn",
                S::CONFLICT,
                "this message is not allowed at this point of the game",
            ),
            Api::SeqMismatch => (
                225,
                "seq_mismatch",
                S::CONFLICT,
                "the move's seq must be the number of marks on the board after it",
            ),
            Api::ReplyToMismatch => (
                226,
                "reply_to_mismatch",
                S::CONFLICT,
                "the move's replyTo must be the seq of the opponent's last move",
            ),
            Api::ResultMismatch => (
                227,
                "result_mismatch",
                S::CONFLICT,
                "the declared result is not the one the referee recorded",
            ),
            Api::RoleConflict => (
                228,
                "role_conflict",
                S::CONFLICT,
                "an acceptance must take the role the proposal left",
            ),
            Api::GameIdMismatch => (
                229,
                "game_id_mismatch",
                S::CONFLICT,
                "the message's gameId is not its game's; send the gameId of the game you mean",
            ),
            Api::BadEnvelope => (
                230,
                "bad_envelope",
                S::FORBIDDEN,
                "the signed envelope does not verify: sign the message with your own key",
            ),
            Api::TooManyPending => (
                231,
                "too_many_pending",
                S::CONFLICT,
                "too many messages wait for an earlier one",
            ),
            Api::NoGame => (
                232,
                "no_game",
                S::NOT_FOUND,
                "there is no game with that agent for this message; propose one first",
            ),
            Api::GameIdTaken => (
                233,
                "game_id_taken",
                S::CONFLICT,
                "that gameId already names another game of yours with this agent; choose a new one",
            ),
            Api::UnknownPuzzleCursor => (
                242,
                "unknown_puzzle_cursor",
                S::BAD_REQUEST,
                "after is not a puzzle's id; pass the next_after of the previous page, or leave it out for the first",
            ),
            Api::InvalidDisplayName => (
                260,
                "invalid_display_name",
                S::UNPROCESSABLE_ENTITY,
                "a display name has 3 to 20 of the letters A-Z and a-z, the digits 0-9, _ and -, starts and ends with a letter or a digit, and does not look like an address; choose another",
            ),
            Api::DisplayNameReserved => (
                261,
                "display_name_reserved",
                S::UNPROCESSABLE_ENTITY,
                "this display name is reserved; choose another",
            ),
            Api::DisplayNameTaken => (
                262,
                "display_name_taken",
                S::CONFLICT,
                "this is another player's name, or looks like one (case, 0/o, 1/l/i, 5/s, 2/z, 8/b, 3/e, 4/a, 7/t, rn/m, vv/w and -/_ count as alike); choose another",
            ),
            Api::TooManyRenames => (
                263,
                "too_many_renames",
                S::TOO_MANY_REQUESTS,
                "you have changed your display name as often as you may for now; try again as Retry-After says",
            ),
        }
    }
}

impl ApiError {
    /// An API error with its default message.
    #[must_use]
    pub fn new(kind: Api) -> ApiError {
        let (code, error, status, message) = kind.describe();
        ApiError {
            status,
            body: ErrorBody {
                code,
                error,
                message: message.to_owned(),
            },
            retry_after_s: None,
        }
    }

    /// An API error with a specific message.
    #[must_use]
    pub fn with_message(kind: Api, message: impl Into<String>) -> ApiError {
        let mut e = ApiError::new(kind);
        e.body.message = message.into();
        e
    }

    /// Adds a `Retry-After`.
    #[must_use]
    pub fn retry_after(mut self, seconds: u64) -> ApiError {
        self.retry_after_s = Some(seconds.max(1));
        self
    }
}

/// The HTTP status of an engine error.
#[must_use]
pub fn engine_status(e: &EngineError) -> StatusCode {
    use StatusCode as S;
    match e {
        EngineError::Move(
            MoveError::InvalidPosition | MoveError::MarkNotInGame | MoveError::NotYourMark,
        ) => S::UNPROCESSABLE_ENTITY,
        EngineError::Move(_) => S::CONFLICT,
        EngineError::UnknownMatch | EngineError::UnknownPuzzle | EngineError::UnknownTournament => {
            S::NOT_FOUND
        }
        EngineError::NotAPlayer
        | EngineError::NotYourChallenge
        | EngineError::NotLastMover
        | EngineError::OwnerOnly
        | EngineError::NotOrganizer
        | EngineError::CreationRestricted
        | EngineError::EntryRestricted { .. } => S::FORBIDDEN,
        EngineError::ChallengeExpired => S::GONE,
        EngineError::SelfPlay
        | EngineError::ZeroAmount
        | EngineError::IdempotencyKeyReused
        | EngineError::StakeTooLarge { .. }
        | EngineError::AmountTooLarge
        | EngineError::ZeroAddress
        | EngineError::InvalidPuzzleLine { .. }
        | EngineError::InvalidTournament { .. } => S::UNPROCESSABLE_ENTITY,
        _ => S::CONFLICT,
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        let retry = match e {
            EngineError::WaitNotOver { remaining_ms }
            | EngineError::DeadlineNotReached { remaining_ms, .. } => {
                Some(remaining_ms.div_ceil(1000))
            }
            _ => None,
        };
        ApiError {
            status: engine_status(&e),
            body: ErrorBody {
                code: e.code(),
                error: e.name(),
                message: e.to_string(),
            },
            retry_after_s: retry,
        }
    }
}

impl From<triad_protocol::ProtocolError> for ApiError {
    fn from(e: triad_protocol::ProtocolError) -> Self {
        use triad_protocol::ProtocolError as P;
        let kind = match &e {
            P::IllegalMove(m) => return EngineError::Move(*m).into(),
            P::UnknownApp { .. } => Api::UnknownApp,
            P::UnknownAction { .. } => Api::UnknownAction,
            P::InvalidPayload { .. } => Api::InvalidPayload,
            P::StateConflict { .. } => Api::StateConflict,
            P::OutOfTurn { .. } => Api::OutOfTurn,
            P::SeqMismatch { .. } => Api::SeqMismatch,
            P::ReplyToMismatch { .. } => Api::ReplyToMismatch,
            P::ResultMismatch { .. } => Api::ResultMismatch,
            P::RoleConflict { .. } => Api::RoleConflict,
            P::GameIdMismatch { .. } => Api::GameIdMismatch,
            P::BadEnvelope { .. } => Api::BadEnvelope,
            P::TooManyPending => Api::TooManyPending,
            // A newer protocol error gets an API error of its own code; a test checks that
            // every protocol error maps to the API error with the same code and name.
            _ => Api::BadRequest,
        };
        ApiError::with_message(kind, e.to_string())
    }
}

impl From<CoreError> for ApiError {
    fn from(e: CoreError) -> Self {
        match e {
            CoreError::Engine(e) => e.into(),
            CoreError::Storage(_) => ApiError::new(Api::StorageUnavailable).retry_after(1),
            CoreError::StorageFull(_) => ApiError::new(Api::StorageFull).retry_after(5),
            CoreError::ShuttingDown => ApiError::new(Api::ShuttingDown).retry_after(1),
            CoreError::Fault(_) => ApiError::new(Api::InternalError),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        tracing::error!(error = %e, "storage error");
        if e.is_full() {
            return ApiError::new(Api::StorageFull).retry_after(5);
        }
        ApiError::new(Api::StorageUnavailable).retry_after(1)
    }
}

impl From<RelayError> for ApiError {
    fn from(e: RelayError) -> Self {
        match e {
            RelayError::Engine(e) => e.into(),
            RelayError::Protocol(e) => e.into(),
            RelayError::Core(e) => e.into(),
            RelayError::Store(e) => e.into(),
            RelayError::NoGame(message) => ApiError::with_message(Api::NoGame, message),
            RelayError::GameIdTaken(message) => ApiError::with_message(Api::GameIdTaken, message),
            RelayError::GameOver(message) => {
                let mut e = ApiError::from(EngineError::Move(MoveError::GameOver));
                e.body.message = message;
                e
            }
        }
    }
}

impl From<triad_identity::AuthError> for ApiError {
    fn from(e: triad_identity::AuthError) -> Self {
        auth_error(&e)
    }
}

/// A login refusal: only a bad `public_key` is an invalid key; a signature of the wrong
/// length is a bad signature, like any other malformed one.
fn auth_error(e: &triad_identity::AuthError) -> ApiError {
    use triad_identity::AuthError as A;
    match e {
        A::InvalidHex {
            field: "public_key",
            ..
        }
        | A::InvalidPublicKey
        | A::WeakPublicKey => ApiError::with_message(Api::InvalidPublicKey, e.to_string()),
        A::UnknownScheme { .. } => ApiError::with_message(Api::UnknownScheme, e.to_string()),
        A::ChallengeExpired { .. } | A::ChallengeNotYetValid { .. } => {
            ApiError::with_message(Api::UnknownChallenge, e.to_string())
        }
        _ => ApiError::with_message(Api::BadSignature, e.to_string()),
    }
}

impl From<SessionError> for ApiError {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::InvalidToken => ApiError::new(Api::InvalidToken),
            SessionError::TokenExpired => ApiError::new(Api::TokenExpired),
            SessionError::UnknownChallenge => ApiError::new(Api::UnknownChallenge),
            SessionError::OtherKey => ApiError::with_message(Api::BadSignature, e.to_string()),
            SessionError::Auth(e) => auth_error(&e),
            SessionError::NoRandomness => {
                ApiError::with_message(Api::StorageUnavailable, e.to_string())
            }
            SessionError::Store(e) => e.into(),
        }
    }
}

impl From<ProfileError> for ApiError {
    fn from(e: ProfileError) -> Self {
        match e {
            ProfileError::Name(NameError::Reserved(_)) => {
                ApiError::with_message(Api::DisplayNameReserved, format!("{e}"))
            }
            ProfileError::Name(e) => ApiError::with_message(
                Api::InvalidDisplayName,
                format!("{e}; choose another"),
            ),
            ProfileError::Taken(name) => ApiError::with_message(
                Api::DisplayNameTaken,
                format!(
                    "{name:?} is another player's name, or looks like one (case, 0/o, 1/l/i, 5/s, 2/z, 8/b, 3/e, 4/a, 7/t, rn/m, vv/w and -/_ count as alike); choose another"
                ),
            ),
            ProfileError::TooFrequent { retry_after_s } => ApiError::with_message(
                Api::TooManyRenames,
                format!(
                    "you may change your display name {RENAMES_PER_WINDOW} times an hour; try again in {retry_after_s} s"
                ),
            )
            .retry_after(retry_after_s),
            ProfileError::Store(e) => e.into(),
        }
    }
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> Self {
        match r.why {
            Refused::Client => ApiError::with_message(
                Api::TooManyOpen,
                format!(
                    "this IP address has {} {} open, the most allowed; close one, or wait as Retry-After says",
                    r.limit, r.what
                ),
            )
            .retry_after(5),
            Refused::Server => ApiError::with_message(
                Api::TooManyConnections,
                format!(
                    "the server has {} {} open, the most it takes; try again shortly",
                    r.limit, r.what
                ),
            )
            .retry_after(5),
        }
    }
}

/// A connection, WebSocket or long-poll refused, in the API's error shape (the listener
/// answers a connection refused before its request is read with it too).
impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        ApiError::from(self).into_response()
    }
}

/// What the web app does not serve, in the API's error shape.
impl IntoResponse for NotServed {
    fn into_response(self) -> Response {
        match self {
            NotServed::ApiPath => ApiError::new(Api::NotFound).into_response(),
            NotServed::NoSuchFile => ApiError::with_message(
                Api::NotFound,
                "there is nothing here; the app is at / and the API is described at /api/openapi.json",
            )
            .into_response(),
            NotServed::MethodNotAllowed => {
                let mut response = ApiError::with_message(
                    Api::MethodNotAllowed,
                    "the web app's files and pages take GET and HEAD only",
                )
                .into_response();
                response
                    .headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
                response
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body)).into_response();
        if let Some(s) = self.retry_after_s
            && let Ok(v) = HeaderValue::from_str(&s.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        response
    }
}
