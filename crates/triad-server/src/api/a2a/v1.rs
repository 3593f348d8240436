//! A2A 1.0: `SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask` and
//! `SubscribeToTask`, in the protobuf JSON form the official SDKs send and read.

use std::time::Duration;

use axum::response::sse::Event;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use triad_engine::{Address, Match, MatchId};

use super::{
    game::{self, Ask, TASK_PREFIX, app_of},
    jsonrpc::{
        CONTENT_TYPE_NOT_SUPPORTED, INVALID_PARAMS, RpcError, TASK_NOT_CANCELABLE, TASK_NOT_FOUND,
        UNSUPPORTED_OPERATION,
    },
    task,
};
use crate::api::ApiState;

/// A message id for an agent message of match `m`: unique, as the engine's next sequence
/// number is.
async fn message_id(state: &ApiState, m: &Match) -> String {
    let seq = state.core.read().await.next_seq();
    format!("triad-{}-{seq}", m.id.0)
}

/// The user message of a `SendMessage` or `SendStreamingMessage`, read into what it asks.
fn ask(params: &Value) -> Result<(Ask, Value), RpcError> {
    let message = &params["message"];
    let role_ok = matches!(message.get("role"), Some(r) if r == "ROLE_USER" || r == 1);
    let parts = message.get("parts").and_then(Value::as_array);
    let Some(parts) = parts.filter(|_| message.is_object() && role_ok) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "invalid params: params.message must be a message with \"role\": \"ROLE_USER\" and parts",
        ));
    };
    // A 1.0 data part is {"data": …}; a 0.3-shaped {"kind": "data", "data": …} reads too.
    let Some(data) = parts
        .iter()
        .find(|p| p.get("data").is_some() && p.get("kind").is_none_or(|k| k == "data"))
        .map(|p| &p["data"])
    else {
        return Err(RpcError::new(
            CONTENT_TYPE_NOT_SUPPORTED,
            "content type not supported: send a data part {\"data\": {appId, action, payload}}",
        ));
    };
    let text = |key: &str| message.get(key).and_then(Value::as_str);
    let level = message
        .get("metadata")
        .and_then(|m| m.get("level"))
        .or_else(|| params.get("metadata").and_then(|m| m.get("level")));
    let ask = Ask::read(data, level, text("contextId"), text("taskId"))?;
    Ok((ask, message.clone()))
}

/// `SendMessage`: plays the message's app action. The answer is `{"task": …}`: the game's
/// task, whose status message holds the computer's answer.
///
/// # Errors
/// Bad params, no data part, or the game's refusal (with Triad's code).
pub async fn send_message(
    state: &ApiState,
    me: Address,
    params: &Value,
) -> Result<Value, RpcError> {
    let (ask, _) = ask(params)?;
    let (actions, m) = game::play(state, me, &ask).await?;
    let id = message_id(state, &m).await;
    Ok(json!({"task": task::task(&m, me, id, actions)}))
}

/// `SendStreamingMessage`: plays the message's app action; the events of its stream. The
/// first is the task as it took the message (`TASK_STATE_WORKING`, the message in its
/// history), the second the status it came to, with the computer's answer.
///
/// # Errors
/// As [`send_message`], before any event: the answer is then a plain JSON-RPC error.
pub async fn send_streaming_message(
    state: &ApiState,
    me: Address,
    params: &Value,
) -> Result<Vec<Value>, RpcError> {
    let (ask, mut message) = ask(params)?;
    let (actions, m) = game::play(state, me, &ask).await?;
    message["taskId"] = json!(game::task_id(m.id));
    message["contextId"] = json!(game::context_id(m.id));
    let taken = json!({
        "task": {
            "id": game::task_id(m.id),
            "contextId": game::context_id(m.id),
            "status": {"state": task::WORKING},
            "history": [message],
        }
    });
    let id = message_id(state, &m).await;
    Ok(vec![taken, task::status_update(&m, me, id, actions)])
}

/// The game a task id names, if it is mine.
async fn my_task(state: &ApiState, me: Address, params: &Value) -> Result<Match, RpcError> {
    let text = params.get("id").and_then(Value::as_str).unwrap_or_default();
    let not_found = || {
        RpcError::new(
            TASK_NOT_FOUND,
            format!(
                "task {text:?} not found: a task id is {TASK_PREFIX}<match id>, from the answer to your propose, and only its player may read it"
            ),
        )
    };
    let id = game::parse_id(text, TASK_PREFIX).ok_or_else(not_found)?;
    game::computer_match(state, me, Some(id))
        .await
        .map_err(|_| not_found())
}

/// `GetTask`: the game's task, its status message holding the computer's moves since yours
/// (and the result once it is over).
///
/// # Errors
/// `TASK_NOT_FOUND` when the id names none of my games.
pub async fn get_task(state: &ApiState, me: Address, params: &Value) -> Result<Value, RpcError> {
    let m = my_task(state, me, params).await?;
    let id = message_id(state, &m).await;
    Ok(task::task(&m, me, id, game::since_my_last_move(&m, me)))
}

/// `CancelTask`: calls the game off, as the protocol's `result {"outcome":"abort"}` does:
/// nobody wins and it counts in no stats. The task comes back `TASK_STATE_CANCELED`.
///
/// # Errors
/// `TASK_NOT_FOUND`; `TASK_NOT_CANCELABLE` when the game is over already.
pub async fn cancel_task(state: &ApiState, me: Address, params: &Value) -> Result<Value, RpcError> {
    let m = my_task(state, me, params).await?;
    if m.result.is_some() {
        return Err(RpcError::new(
            TASK_NOT_CANCELABLE,
            format!(
                "the game of task {} is over ({}); there is nothing to cancel: GetTask reads how it ended",
                game::task_id(m.id),
                task::state(&m, me)
            ),
        ));
    }
    let m = game::abort(state, me, &m).await?;
    let id = message_id(state, &m).await;
    Ok(task::task(&m, me, id, game::since_my_last_move(&m, me)))
}

/// `SubscribeToTask`: checks the task; the match to follow.
///
/// # Errors
/// `TASK_NOT_FOUND`; `UNSUPPORTED_OPERATION` when the game is over (there is nothing more
/// to hear; `GetTask` reads its end).
pub async fn subscribe_check(
    state: &ApiState,
    me: Address,
    params: &Value,
) -> Result<MatchId, RpcError> {
    let m = my_task(state, me, params).await?;
    if m.result.is_some() {
        return Err(RpcError::new(
            UNSUPPORTED_OPERATION,
            format!(
                "the game of task {} is over; there is nothing to subscribe to: GetTask reads how it ended",
                game::task_id(m.id)
            ),
        ));
    }
    Ok(m.id)
}

/// How often a subscription that heard nothing checks that its game goes on (a game ended
/// by a timeout on another node publishes nothing here).
const RECHECK: Duration = Duration::from_secs(15);

/// Follows a game for `SubscribeToTask`: sends the task as it is, then a status update each
/// time the match changes (the human's move, the computer's, the end), until it is over,
/// the client goes, or the login `token` ends (a logout, or its expiry). `reply` wraps each
/// result in its JSON-RPC response.
pub async fn follow(
    state: ApiState,
    token: &str,
    me: Address,
    id: MatchId,
    tx: mpsc::Sender<Event>,
    reply: impl Fn(Value) -> Event + Send,
) {
    let mut hub = state.hub.register(64);
    state.hub.subscribe(hub.id, &format!("match:{}", id.0));
    match state.sessions.authenticate(token).await {
        Ok((_, hash, expires)) => state.hub.set_session(hub.id, &hash, expires),
        Err(_) => {
            // Logged out since the request was checked.
            state.hub.unregister(hub.id);
            return;
        }
    }
    // Registered first: no change between this read and the first frame is missed.
    let Ok(mut seen) = game::computer_match(&state, me, Some(id)).await else {
        state.hub.unregister(hub.id);
        return;
    };
    let first = task::task(
        &seen,
        me,
        message_id(&state, &seen).await,
        game::since_my_last_move(&seen, me),
    );
    let first = json!({"task": first});
    let mut open = tx.send(reply(first)).await.is_ok() && seen.result.is_none();
    while open {
        let heard = tokio::select! {
            frame = hub.frames.recv() => frame.is_some(),
            () = tokio::time::sleep(RECHECK) => true,
            () = hub.kicked.notified() => false,
            () = hub.session_ended.notified() => false,
            () = hub.shutdown.notified() => false,
            () = tx.closed() => false,
        };
        if !heard || state.hub.is_closing() {
            break;
        }
        let Ok(now) = game::computer_match(&state, me, Some(id)).await else {
            break;
        };
        if (now.moves.len(), now.result.is_some()) == (seen.moves.len(), seen.result.is_some()) {
            continue;
        }
        let actions = game::answer(app_of(&now), &now, seen.moves.len() + 1, None);
        let update = task::status_update(&now, me, message_id(&state, &now).await, actions);
        open = tx.send(reply(update)).await.is_ok() && now.result.is_none();
        seen = now;
    }
    state.hub.unregister(hub.id);
}
