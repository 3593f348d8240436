//! A game as an A2A 1.0 task: its state, its status message (the computer's latest app
//! actions), its artifact (the game's record), and the updates a subscriber hears.

use serde_json::{Value, json};
use triad_engine::{Address, Match};

use super::game::{self, app_of, context_id, task_id};

/// `TASK_STATE_INPUT_REQUIRED`: the game is on and it is your move.
pub const INPUT_REQUIRED: &str = "TASK_STATE_INPUT_REQUIRED";
/// `TASK_STATE_WORKING`: the game is on and the computer is to move (or your message is
/// being played).
pub const WORKING: &str = "TASK_STATE_WORKING";
/// `TASK_STATE_COMPLETED`: the game was played out (a win or a draw, or a forfeit or
/// timeout).
pub const COMPLETED: &str = "TASK_STATE_COMPLETED";
/// `TASK_STATE_CANCELED`: the game was called off (`CancelTask`, or the protocol's abort).
pub const CANCELED: &str = "TASK_STATE_CANCELED";

/// The task state that follows the match.
pub fn state(m: &Match, me: Address) -> &'static str {
    if m.result.is_some() {
        if game::aborted(m) {
            CANCELED
        } else {
            COMPLETED
        }
    } else if m.turn().is_some() && m.turn() == game::human_seat(m, me) {
        INPUT_REQUIRED
    } else {
        WORKING
    }
}

/// Whether a state is final: nothing more will happen in the task.
pub fn is_terminal(state: &str) -> bool {
    state == COMPLETED || state == CANCELED
}

/// A 1.0 data part.
pub fn data_part(data: Value) -> Value {
    json!({"data": data, "mediaType": "application/json"})
}

/// The agent's message of a status: the computer's app actions as data parts.
pub fn agent_message(m: &Match, message_id: String, actions: Vec<Value>) -> Value {
    json!({
        "messageId": message_id,
        "contextId": context_id(m.id),
        "taskId": task_id(m.id),
        "role": "ROLE_AGENT",
        "parts": actions.into_iter().map(data_part).collect::<Vec<_>>(),
    })
}

/// A status: the state, and the agent's message when there are actions to tell.
pub fn status(m: &Match, me: Address, message_id: String, actions: Vec<Value>) -> Value {
    let mut status = json!({"state": state(m, me)});
    if !actions.is_empty() {
        status["message"] = agent_message(m, message_id, actions);
    }
    status
}

/// The game's record: every move so far and the result once it is over, as app actions.
pub fn record(m: &Match) -> Value {
    json!({
        "artifactId": format!("{}-record", task_id(m.id)),
        "name": "record",
        "description": "Every move of the game so far, and the result once it is over, as the A2A tic-tac-toe protocol's app actions.",
        "parts": game::answer(app_of(m), m, 1, None).into_iter().map(data_part).collect::<Vec<_>>(),
    })
}

/// The task of a game. `actions` are the computer's app actions to tell in the status
/// message (its answer to the message just sent, or its latest moves).
pub fn task(m: &Match, me: Address, message_id: String, actions: Vec<Value>) -> Value {
    json!({
        "id": task_id(m.id),
        "contextId": context_id(m.id),
        "status": status(m, me, message_id, actions),
        "artifacts": [record(m)],
        "metadata": {"appId": app_of(m).id(), "matchId": m.id.0.to_string()},
    })
}

/// A status update of a stream.
pub fn status_update(m: &Match, me: Address, message_id: String, actions: Vec<Value>) -> Value {
    json!({
        "statusUpdate": {
            "taskId": task_id(m.id),
            "contextId": context_id(m.id),
            "status": status(m, me, message_id, actions),
        }
    })
}
