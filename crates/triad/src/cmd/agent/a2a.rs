//! `triad agent --a2a`: games against another A2A agent, in the A2A tic-tac-toe protocol's
//! app actions, over the agent's own A2A endpoint instead of a Triad server's relay.
//!
//! A2A is request and answer: this agent proposes (claiming X or O), and each of its
//! messages (its proposal, its moves, its declared result) is answered by the other agent's
//! actions (its acceptance, its move, its result). Nobody referees the game but the two
//! players, so every answer is checked as a referee would: each data part must be a
//! message of the protocol ([`triad_protocol::decode_data`]), each move must be legal and
//! carry the board as it stands ([`Game::receive`], which runs
//! [`triad_protocol::check_move`]), and each declared win or draw must be what the board
//! shows ([`triad_protocol::check_result`]). The first breach ends the run with an error that
//! says what the other agent sent; the game is called off with `state-conflict` first.

use anyhow::{Context, anyhow, bail};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use triad_protocol::{App, Ending, Game, Message, Side, Step};
use triad_rules::Player;
use triad_solver::Strength;

use super::{Outcome, RoleArg, Tally, role_of_game};
use crate::cmd::a2a_client::{Outgoing, Peer, Refused, Reply};

/// What to play.
#[derive(Debug)]
pub(super) struct Plan {
    pub(super) app: App,
    pub(super) strength: Strength,
    pub(super) role: RoleArg,
    pub(super) games: u32,
    /// The strength asked of the other agent (`metadata.level`), if any.
    pub(super) level: Option<&'static str>,
}

/// The other agent broke the protocol: what it sent and what is wrong with it, and the
/// abort that the game already produced, if it did.
#[derive(Debug)]
struct Breach(String, Option<Message>);

/// One game in progress with the other agent.
struct Round<'a> {
    peer: &'a mut Peer,
    app: App,
    game: Game,
    context: Option<String>,
    task: Option<String>,
    metadata: Option<Value>,
    /// The text parts of the last answer, for errors.
    last_text: Vec<String>,
}

impl Round<'_> {
    /// Sends one of this agent's messages and takes in the answer.
    async fn say(&mut self, message: &Message) -> anyhow::Result<()> {
        let outgoing = Outgoing {
            data: message.data(self.app),
            context_id: self.context.as_deref(),
            task_id: self.task.as_deref(),
            metadata: self.metadata.clone(),
        };
        let reply = self.peer.send(&outgoing).await.map_err(|e| {
            let mine = format!("my {} {}", message.action(), message.payload_json(self.app));
            if e.downcast_ref::<Refused>().is_some() {
                e.context(format!("{} refused {mine}", self.peer.name))
            } else {
                e.context(format!("no answer from {} to {mine}", self.peer.name))
            }
        })?;
        self.last_text.clone_from(&reply.text);
        if let Some(context) = &reply.context_id {
            self.context = Some(context.clone());
        }
        if reply.task_finished() {
            self.task = None;
        } else if let Some(task) = &reply.task_id {
            self.task = Some(task.clone());
        }
        if let Err(Breach(problem, abort)) = self.take(&reply) {
            // Call the game off before reporting, so the other side is not left waiting.
            let abort = abort.or_else(|| self.game.abort(triad_protocol::STATE_CONFLICT).ok());
            if let Some(abort) = abort {
                let _ = self
                    .peer
                    .send(&Outgoing {
                        data: abort.data(self.app),
                        context_id: self.context.as_deref(),
                        task_id: self.task.as_deref(),
                        metadata: None,
                    })
                    .await;
            }
            bail!(
                "{} broke the A2A tic-tac-toe protocol: {problem}",
                self.peer.name
            );
        }
        Ok(())
    }

    /// Checks and applies each action of an answer, in order.
    fn take(&mut self, reply: &Reply) -> Result<(), Breach> {
        for data in &reply.data {
            let (app, message) = triad_protocol::decode_data(data).map_err(|e| {
                Breach(
                    format!("it answered {data}, which is not an action of the protocol: {e}"),
                    None,
                )
            })?;
            let said = || format!("{} {}", message.action(), message.payload_json(app));
            if app != self.app {
                return Err(Breach(
                    format!(
                        "it answered in another app ({app} {}) during a game of {}",
                        said(),
                        self.app
                    ),
                    None,
                ));
            }
            // A win or a draw must be the board's, even when this agent declared it first
            // (the game then ignores a second declaration).
            if let Message::Result(r) = &message
                && r.outcome != triad_protocol::Outcome::Abort
            {
                triad_protocol::check_result(app, self.game.position(), r).map_err(|e| {
                    Breach(format!("it declared {}, a false result: {e}", said()), None)
                })?;
            }
            let steps = self
                .game
                .receive(&message)
                .map_err(|e| Breach(format!("it sent {}: {e}", said()), None))?;
            for step in steps {
                if let Step::Conflict { error, abort } = step {
                    return Err(Breach(format!("it sent {}: {error}", said()), Some(abort)));
                }
            }
        }
        if self.game.pending() > 0 {
            return Err(Breach(
                format!(
                    "it sent actions ahead of the game (the board is {}, {})",
                    triad_protocol::board_string(&triad_protocol::board_of(self.game.position())),
                    triad_protocol::describe_position(self.app, self.game.position())
                ),
                None,
            ));
        }
        Ok(())
    }
}

/// A game played to its end.
struct Played {
    ending: Ending,
    /// The marks on the board.
    moves: u8,
    /// Whether the other agent made the last move and left the result undeclared.
    undeclared: bool,
    /// The conversation's `contextId`, as the other agent named it.
    context: Option<String>,
}

/// Plays one game, claiming `role`.
async fn play_one(
    peer: &mut Peer,
    plan: &Plan,
    role: Player,
    rng: &mut ChaCha8Rng,
) -> anyhow::Result<Played> {
    let (game, propose) = Game::propose(plan.app, role, None);
    let mut round = Round {
        peer,
        app: plan.app,
        game,
        context: None,
        task: None,
        metadata: plan.level.map(|level| json!({"level": level})),
        last_text: Vec::new(),
    };
    round.say(&propose).await?;
    if !round.game.is_accepted() && round.game.ending().is_none() {
        bail!(
            "{} did not accept the proposal: its answer held no accept{}",
            round.peer.name,
            said_text(&round)
        );
    }
    while round.game.ending().is_none() {
        if !round.game.my_turn() {
            bail!(
                "{} answered without its move; this agent expects each answer to carry the \
                 other agent's next action{}",
                round.peer.name,
                said_text(&round)
            );
        }
        let position = *round.game.position();
        let mv = triad_solver::table(position.kind())
            .choose(&position, plan.strength, rng)
            .ok_or_else(|| anyhow!("the solver has no move in a game in play"))?;
        let messages = round
            .game
            .play(mv.cell.index(), mv.mark)
            .map_err(|e| anyhow!("cannot play {mv:?}: {e}"))?;
        for message in &messages {
            round.say(message).await?;
        }
    }
    let ending = round
        .game
        .ending()
        .cloned()
        .expect("the loop ends on an ending");
    Ok(Played {
        undeclared: !round.game.is_settled(),
        moves: round.game.seq(),
        context: round.context,
        ending,
    })
}

/// The text the other agent said with its last answer, if any: `; it said "…"`.
fn said_text(round: &Round<'_>) -> String {
    if round.last_text.is_empty() {
        String::new()
    } else {
        format!("; it said {:?}", round.last_text.join(" "))
    }
}

/// Plays `plan.games` games against the other agent and prints one line per game.
///
/// # Errors
/// The first game the other agent broke the protocol in, refused a legal action in, or could
/// not be reached for.
pub(super) async fn run(mut peer: Peer, plan: Plan, mut rng: ChaCha8Rng) -> anyhow::Result<()> {
    let mut tally = Tally::default();
    for number in 1..=plan.games {
        let role = role_of_game(plan.role, number);
        let played = play_one(&mut peer, &plan, role, &mut rng)
            .await
            .with_context(|| {
                format!(
                    "game {number} ({} as {})",
                    plan.app,
                    plan.app.role_name(role)
                )
            })?;
        let outcome = match &played.ending {
            Ending::Win { winner } if *winner == role => Outcome::Won,
            Ending::Win { .. } => Outcome::Lost,
            Ending::Draw => Outcome::Drew,
            Ending::Aborted { .. } => Outcome::Aborted,
        };
        let by = match &played.ending {
            Ending::Aborted { by: Side::Me, .. } => " by me",
            Ending::Aborted {
                by: Side::Opponent, ..
            } => " by the opponent",
            _ => "",
        };
        let note = if played.undeclared {
            "; the opponent did not declare it"
        } else {
            ""
        };
        println!(
            "game {number}: {} over A2A {} as {} vs {} ({}): {} ({}{by} after {} moves{note}); \
             context {}",
            plan.app,
            peer.version,
            plan.app.role_name(role),
            peer.name,
            peer.endpoint,
            tally.count(outcome),
            played.ending.describe(plan.app),
            played.moves,
            played.context.as_deref().unwrap_or("none"),
        );
    }
    eprintln!(
        "triad agent: played {}: {} won, {} lost, {} drawn, {} aborted",
        plan.games, tally.won, tally.lost, tally.drew, tally.aborted
    );
    Ok(())
}
