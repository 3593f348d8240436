//! The game behind both protocol versions: an app action (the A2A tic-tac-toe protocol's
//! `{appId, action, payload}`) played against Triad's computer, and what the computer
//! answers, as app actions again.
//!
//! The game is an engine match against the computer, refereed like every other: each move
//! is checked with [`triad_protocol::check_move`] against the engine's board, and a declared
//! result must be the one the engine recorded.

use serde_json::Value;
use triad_engine::{Address, Command, EndReason, EngineError, Level, Match, MatchId, Seat};
use triad_protocol::{
    App, Ending, GameId, GameResult, Message, Outcome, ProtocolError, check_move,
};
use triad_rules::{AnyGame, Player};

use crate::api::{
    ApiState,
    error::{Api, ApiError},
};

/// The prefix of a game's `contextId`: `triad-match-<match id>`.
pub const CONTEXT_PREFIX: &str = "triad-match-";
/// The prefix of a game's task id (A2A 1.0): `triad-task-<match id>`.
pub const TASK_PREFIX: &str = "triad-task-";

/// A game's `contextId`.
pub fn context_id(id: MatchId) -> String {
    format!("{CONTEXT_PREFIX}{}", id.0)
}

/// A game's task id.
pub fn task_id(id: MatchId) -> String {
    format!("{TASK_PREFIX}{}", id.0)
}

/// The match a `contextId` or a task id names; `None` when it names none.
pub fn parse_id(text: &str, prefix: &str) -> Option<MatchId> {
    text.strip_prefix(prefix)?.parse().ok().map(MatchId)
}

/// What a message asks the computer: one app action, the computer's strength for a new
/// game, and the game it is about (from its `taskId` or `contextId`).
#[derive(Debug)]
pub struct Ask {
    /// The app.
    pub app: App,
    /// The action.
    pub message: Message,
    /// The computer's strength, for a `propose`.
    pub level: Level,
    /// The game named by the message, if it names one.
    pub game: Option<MatchId>,
}

impl Ask {
    /// Reads an app action, the `level` metadata and the game's ids.
    ///
    /// # Errors
    /// A refusal (Triad's stable code) when the action does not decode, the level is not one
    /// of the three, or the ids name no game (or two different ones).
    pub fn read(
        data: &Value,
        level: Option<&Value>,
        context: Option<&str>,
        task: Option<&str>,
    ) -> Result<Ask, ApiError> {
        let (app, message) =
            triad_protocol::decode_data(&triad_protocol::whole_numbers(data.clone()))?;
        let level = match level {
            None | Some(Value::Null) => Level::Perfect,
            Some(Value::String(l)) if l == "perfect" => Level::Perfect,
            Some(Value::String(l)) if l == "casual" => Level::Casual,
            Some(Value::String(l)) if l == "random" => Level::Random,
            Some(other) => {
                return Err(ApiError::with_message(
                    Api::BadRequest,
                    format!("metadata.level {other}: use perfect, casual or random"),
                ));
            }
        };
        let no_game = |what: &str, text: &str| {
            ApiError::with_message(
                Api::NoGame,
                format!(
                    "{what} {text:?} names no game here; send propose to start one, or the id the answer to your propose gave"
                ),
            )
        };
        let by_context = context
            .map(|c| parse_id(c, CONTEXT_PREFIX).ok_or_else(|| no_game("contextId", c)))
            .transpose()?;
        let by_task = task
            .map(|t| parse_id(t, TASK_PREFIX).ok_or_else(|| no_game("taskId", t)))
            .transpose()?;
        let game = match (by_context, by_task) {
            (Some(c), Some(t)) if c != t => {
                return Err(ApiError::with_message(
                    Api::NoGame,
                    "the contextId and the taskId name two different games; send the ids of one game",
                ));
            }
            (c, t) => t.or(c),
        };
        Ok(Ask {
            app,
            message,
            level,
            game,
        })
    }
}

fn part(app: App, message: &Message) -> Value {
    message.data(app)
}

/// The position after the first `plies` moves.
fn position_after(m: &Match, plies: usize) -> AnyGame {
    m.moves
        .iter()
        .take(plies)
        .fold(AnyGame::new(m.game()), |g, mv| g.play_unchecked(*mv))
}

/// Move `seq` of a match as a protocol message.
fn move_message(m: &Match, seq: usize, game_id: Option<&GameId>) -> Message {
    let mv = m.moves[seq - 1];
    Message::Move(triad_protocol::Move {
        seq: u8::try_from(seq).unwrap_or(9),
        reply_to: u8::try_from(seq - 1).unwrap_or(8),
        position: mv.cell,
        mark: mv.mark,
        board: triad_protocol::board_of(&position_after(m, seq)),
        game_id: game_id.cloned(),
    })
}

/// The result the engine recorded, in the protocol's words; `None` while the game is on.
pub fn recorded_result(m: &Match, game_id: Option<&GameId>) -> Option<GameResult> {
    let r = m.result?;
    Some(match (r.reason, r.winner) {
        (EndReason::Draw, _) => GameResult::draw(game_id.cloned()),
        (_, Some(w)) => Ending::Win { winner: w }.to_result(game_id.cloned()),
        (reason, None) => GameResult::abort(reason.name(), game_id.cloned()),
    })
}

/// The computer's moves from `from_seq` on, and the result once the match is over, as app
/// actions (`{appId, action, payload}`).
pub fn answer(app: App, m: &Match, from_seq: usize, game_id: Option<&GameId>) -> Vec<Value> {
    let mut parts: Vec<Value> = (from_seq.max(1)..=m.moves.len())
        .map(|s| part(app, &move_message(m, s, game_id)))
        .collect();
    if let Some(result) = recorded_result(m, game_id) {
        parts.push(part(app, &Message::Result(result)));
    }
    parts
}

/// The human's seat in a computer match.
pub fn human_seat(m: &Match, me: Address) -> Option<Player> {
    let seats = m.seats?;
    let computer = seats.iter().any(|s| matches!(s, Seat::Computer(_)));
    m.player_of(me).filter(|_| computer)
}

/// The computer match a message is about: the one it names, else my active one, else my
/// latest. Only the human player's: anyone else is told there is no game.
///
/// # Errors
/// `no_game` when there is none; a database failure.
pub async fn computer_match(
    state: &ApiState,
    me: Address,
    id: Option<MatchId>,
) -> Result<Match, ApiError> {
    let id = match id {
        Some(id) => Some(id),
        None => state.core.read().await.active_match(me),
    };
    let m = match id {
        Some(id) => match state.core.read().await.match_(id) {
            Some(m) => Some(m.clone()),
            None => state.store.match_(id).await?,
        },
        None => state
            .store
            .list_finished_matches(Some(me), None, 1)
            .await?
            .into_iter()
            .next(),
    };
    m.filter(|m| human_seat(m, me).is_some()).ok_or_else(|| {
        ApiError::with_message(
            Api::NoGame,
            "no game against the computer here; send propose first (or the ids of your game)",
        )
    })
}

/// What one app action asked for, played against the computer: the computer's answer (app
/// actions: its `accept`, its moves, the `result`) and the match after it.
///
/// # Errors
/// The refusal, with Triad's stable code; nothing changed on the server then.
pub async fn play(
    state: &ApiState,
    me: Address,
    ask: &Ask,
) -> Result<(Vec<Value>, Match), ApiError> {
    let Ask {
        app,
        ref message,
        level,
        game,
    } = *ask;
    let game_id = message.game_id();
    match message {
        Message::Propose(p) => {
            let receipt = state
                .core
                .execute(
                    me,
                    Command::PlayComputer {
                        game: app.game(),
                        level,
                        side: p.role,
                    },
                    None,
                )
                .await?;
            let id = receipt
                .events
                .iter()
                .find_map(triad_engine::Event::match_id)
                .ok_or(EngineError::UnknownMatch)?;
            let m = computer_match(state, me, Some(id)).await?;
            let accept = Message::Accept(triad_protocol::Accept {
                role: p.role.other(),
                game_id: game_id.cloned(),
            });
            let mut parts = vec![part(app, &accept)];
            parts.extend(answer(app, &m, 1, game_id));
            Ok((parts, m))
        }
        Message::Accept(_) => Err(ProtocolError::OutOfTurn {
            problem: "the computer does not propose games; send propose",
        }
        .into()),
        Message::Move(mv) => {
            let m = computer_match(state, me, game).await?;
            if m.game() != app.game() {
                return Err(ProtocolError::OutOfTurn {
                    problem: "this game is of the other app",
                }
                .into());
            }
            let player = human_seat(&m, me).ok_or(EngineError::NotAPlayer)?;
            let seq = usize::from(mv.seq);
            // A resend of a move already made: the same answer again.
            if (1..=m.moves.len()).contains(&seq)
                && m.moves[seq - 1].cell == mv.position
                && m.moves[seq - 1].mark == mv.mark
            {
                check_move(app, &position_after(&m, seq - 1), player, mv)?;
                return Ok((answer(app, &m, seq + 1, game_id), m));
            }
            check_move(app, &m.position, player, mv)?;
            state
                .core
                .execute(
                    me,
                    Command::Move {
                        match_id: m.id,
                        seq: mv.seq,
                        cell: mv.position.index(),
                        mark: mv.mark,
                        signed: None,
                    },
                    None,
                )
                .await?;
            let m = computer_match(state, me, Some(m.id)).await?;
            Ok((answer(app, &m, seq + 1, game_id), m))
        }
        Message::Result(r) => {
            let m = computer_match(state, me, game).await?;
            // A declaration names its app: it never ends the other app's game.
            if m.game() != app.game() {
                return Err(ProtocolError::OutOfTurn {
                    problem: "this game is of the other app",
                }
                .into());
            }
            match (r.outcome, recorded_result(&m, game_id)) {
                (Outcome::Abort, None) => {
                    state
                        .core
                        .execute(me, Command::Abort { match_id: m.id }, None)
                        .await?;
                    let m = computer_match(state, me, Some(m.id)).await?;
                    Ok((vec![part(app, message)], m))
                }
                (Outcome::Abort, Some(recorded)) => {
                    let mut e = ApiError::from(EngineError::Move(triad_rules::MoveError::GameOver));
                    e.body.message = format!(
                        "the game is over ({}); there is nothing to abort",
                        recorded.describe(app)
                    );
                    Err(e)
                }
                // The declaration must be the engine's record; the answer confirms it.
                (_, Some(recorded))
                    if (recorded.outcome, recorded.winner) == (r.outcome, r.winner) =>
                {
                    Ok((vec![part(app, &Message::Result(recorded))], m))
                }
                (_, recorded) => Err(ProtocolError::ResultMismatch {
                    declared: r.describe(app),
                    actual: recorded.map_or_else(|| "in play".to_owned(), |g| g.describe(app)),
                }
                .into()),
            }
        }
    }
}

/// The app a match is played in.
pub fn app_of(m: &Match) -> App {
    App::ALL
        .into_iter()
        .find(|a| a.game() == m.game())
        .unwrap_or(App::TicTacToe)
}

/// The computer's actions since the human's last move (all the moves when the human has not
/// moved), and the result once the match is over.
pub fn since_my_last_move(m: &Match, me: Address) -> Vec<Value> {
    let mine = human_seat(m, me).map_or(0, |p| usize::from(p == Player::Second));
    // Turns alternate: the first player made moves 1, 3, 5…, the second 2, 4, 6….
    let last_mine = (1..=m.moves.len()).rev().find(|s| (s - 1) % 2 == mine);
    answer(app_of(m), m, last_mine.map_or(1, |s| s + 1), None)
}

/// Calls off a game in play (the protocol's `result {"outcome":"abort"}`): nobody wins and
/// it counts in no stats. The match after it.
///
/// # Errors
/// When the game is over already, or the engine refuses.
pub async fn abort(state: &ApiState, me: Address, m: &Match) -> Result<Match, ApiError> {
    state
        .core
        .execute(me, Command::Abort { match_id: m.id }, None)
        .await?;
    computer_match(state, me, Some(m.id)).await
}

/// Whether a match was called off (aborted) rather than played out.
pub fn aborted(m: &Match) -> bool {
    m.result.is_some_and(|r| r.reason == EndReason::Aborted)
}
