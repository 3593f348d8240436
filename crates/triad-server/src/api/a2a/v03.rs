//! A2A 0.3: `message/send`, answered with an agent message whose data parts are the
//! computer's app actions.

use serde_json::{Value, json};
use triad_engine::Address;

use super::{
    game::{self, Ask, context_id},
    jsonrpc::{CONTENT_TYPE_NOT_SUPPORTED, INVALID_PARAMS, RpcError},
};
use crate::api::ApiState;

/// `message/send`: plays the message's app action; the answer is a 0.3 agent message.
///
/// # Errors
/// Bad params, no data part, or the game's refusal (with Triad's code).
pub async fn message_send(
    state: &ApiState,
    me: Address,
    params: &Value,
) -> Result<Value, RpcError> {
    let message = &params["message"];
    let parts = message.get("parts").and_then(Value::as_array);
    let Some(parts) = parts.filter(|_| message.is_object() && message["role"] == "user") else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "invalid params: params.message must be a user message with parts",
        ));
    };
    let Some(data) = parts
        .iter()
        .find(|p| p["kind"] == "data")
        .map(|p| &p["data"])
    else {
        return Err(RpcError::new(
            CONTENT_TYPE_NOT_SUPPORTED,
            "content type not supported: send a data part {appId, action, payload}",
        ));
    };
    let text = |key: &str| message.get(key).and_then(Value::as_str);
    let ask = Ask::read(
        data,
        message.get("metadata").and_then(|m| m.get("level")),
        text("contextId"),
        text("taskId"),
    )?;
    let (actions, m) = game::play(state, me, &ask).await?;
    let seq = state.core.read().await.next_seq();
    Ok(json!({
        "kind": "message",
        "role": "agent",
        "messageId": format!("triad-{}-{seq}", m.id.0),
        "contextId": context_id(m.id),
        "parts": actions.into_iter().map(|d| json!({"kind": "data", "data": d})).collect::<Vec<_>>(),
    }))
}
