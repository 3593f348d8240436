//! JSON-RPC 2.0 framing for `/a2a`: one request or a batch in, replies out, and the errors
//! in the two shapes the protocol versions use.
//!
//! - A request is an object with `"jsonrpc": "2.0"`, a string `method`, `params`, and an
//!   `id` (a string, a number or null). Without an `id` member it is a notification: it is
//!   carried out and gets no reply.
//! - A batch is an array of requests; its reply is the array of the replies to those that
//!   are not notifications, in order. An empty batch is an invalid request; a batch of
//!   notifications only gets no reply (HTTP 204).
//! - Errors: the JSON-RPC codes (-32700, -32600, -32601, -32602, -32603) and A2A's (-32001
//!   task not found, -32002 not cancelable, -32003 push notifications, -32004 unsupported
//!   operation, -32005 content type, -32007 no extended card, -32009 version), and Triad's
//!   -32050 (too many streams open). A 1.0 error's `data` is the list of
//!   typed details the official SDKs read: a `google.rpc.ErrorInfo` whose `reason` is
//!   Triad's error name in capitals, `domain` is `triad`, and `metadata` (strings, as the
//!   proto map is) holds Triad's stable `code`, its `error` name and the `message`. A 0.3
//!   error's `data` is Triad's error body itself, `{code, error, message}`.

use serde_json::{Value, json};

use crate::api::error::ApiError;

/// JSON-RPC: the body is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: not a request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: bad params, and every refusal of the game.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: the server failed.
pub const INTERNAL_ERROR: i64 = -32603;
/// Not logged in (the HTTP status is 401 as well).
pub const UNAUTHENTICATED: i64 = -32000;
/// A2A: no such task (or not yours).
pub const TASK_NOT_FOUND: i64 = -32001;
/// A2A: the task is over and cannot be canceled.
pub const TASK_NOT_CANCELABLE: i64 = -32002;
/// A2A: push notifications are not supported.
pub const PUSH_NOT_SUPPORTED: i64 = -32003;
/// A2A: the operation is not supported.
pub const UNSUPPORTED_OPERATION: i64 = -32004;
/// A2A: no part this agent reads.
pub const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
/// A2A: there is no extended agent card.
pub const EXTENDED_CARD_NOT_CONFIGURED: i64 = -32007;
/// A2A: the `A2A-Version` asked for is not spoken here.
pub const VERSION_NOT_SUPPORTED: i64 = -32009;

/// The protocol version a method belongs to, which decides the error shape.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Version {
    /// A2A 1.0 (`SendMessage`, …).
    V1,
    /// A2A 0.3 (`message/send`).
    V03,
}

/// Triad: the client has as many streams open as it may (`data` carries Triad's
/// `too_many_open`); close one, or retry later.
pub const TOO_MANY_STREAMS: i64 = -32050;

/// A JSON-RPC error.
#[derive(Clone, Debug)]
pub struct RpcError {
    /// The JSON-RPC code.
    pub code: i64,
    /// What happened and what to do.
    pub message: String,
    /// Triad's error, when the game or the API refused: its stable code and name.
    pub triad: Option<(u16, &'static str)>,
}

impl RpcError {
    /// An error with no Triad code.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            triad: None,
        }
    }

    /// A refusal by the game or the API, under the JSON-RPC code `code`.
    pub fn triad(code: i64, e: &ApiError) -> RpcError {
        RpcError {
            code,
            message: e.body.message.clone(),
            triad: Some((e.body.code, e.body.error)),
        }
    }

    /// The error object, with `data` in `version`'s shape.
    pub fn to_json(&self, version: Version) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some((code, name)) = self.triad {
            error["data"] = match version {
                Version::V03 => json!({"code": code, "error": name, "message": self.message}),
                Version::V1 => json!([{
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": name.to_ascii_uppercase(),
                    "domain": "triad",
                    "metadata": {"code": code.to_string(), "error": name, "message": self.message},
                }]),
            };
        }
        error
    }
}

impl From<ApiError> for RpcError {
    /// A refusal of the game: invalid params, with Triad's code.
    fn from(e: ApiError) -> RpcError {
        RpcError::triad(INVALID_PARAMS, &e)
    }
}

/// A reply: `{"jsonrpc":"2.0","id":…,"result":…}` or `…"error":…`.
pub fn reply(id: &Value, outcome: Result<Value, (RpcError, Version)>) -> Value {
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((e, version)) => json!({"jsonrpc": "2.0", "id": id, "error": e.to_json(version)}),
    }
}

/// One request of a body, checked.
#[derive(Debug)]
pub struct Request {
    /// Its id; `None` for a notification (no `id` member).
    pub id: Option<Value>,
    /// The method.
    pub method: String,
    /// The params (`null` when absent).
    pub params: Value,
}

impl Request {
    /// The id to answer with: the request's, or null.
    pub fn reply_id(&self) -> Value {
        self.id.clone().unwrap_or(Value::Null)
    }
}

/// Checks one element of a body. An invalid request is answered (with its id if it has a
/// usable one, else null), notification or not, as JSON-RPC 2.0 says.
///
/// # Errors
/// The id to answer with and the error.
pub fn request(value: Value) -> Result<Request, (Value, RpcError)> {
    let Value::Object(mut object) = value else {
        return Err((
            Value::Null,
            RpcError::new(
                INVALID_REQUEST,
                "invalid request: send a JSON-RPC 2.0 request object",
            ),
        ));
    };
    let id = object.remove("id");
    let valid_id = matches!(
        id,
        None | Some(Value::Null | Value::String(_) | Value::Number(_))
    );
    let answer_id = if valid_id {
        id.clone().unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    if object.get("jsonrpc") != Some(&json!("2.0")) || !valid_id {
        return Err((
            answer_id,
            RpcError::new(
                INVALID_REQUEST,
                "invalid request: send a JSON-RPC 2.0 request: \"jsonrpc\": \"2.0\", a method, and an id that is a string, a number or null",
            ),
        ));
    }
    let Some(Value::String(method)) = object.remove("method") else {
        return Err((
            answer_id,
            RpcError::new(INVALID_REQUEST, "invalid request: no method"),
        ));
    };
    Ok(Request {
        id,
        method,
        params: object.remove("params").unwrap_or(Value::Null),
    })
}

/// The schema of `/a2a`'s bodies in the OpenAPI document: one JSON-RPC 2.0 object, or a
/// batch (an array of them), as JSON-RPC allows both.
#[derive(Debug)]
pub struct RpcBody;

impl utoipa::PartialSchema for RpcBody {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Type};
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Object))
            .item(ArrayBuilder::new().items(ObjectBuilder::new().schema_type(Type::Object)))
            .description(Some(
                "One JSON-RPC 2.0 object, or a batch: an array of them",
            ))
            .into()
    }
}

impl utoipa::ToSchema for RpcBody {}
