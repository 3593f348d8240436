//! The rules of one game as the A2A protocol states them, for an agent ([`Game`]) and for a referee
//! ([`check_move`], [`check_result`]).
//!
//! The A2A protocol's rules, and how they are applied:
//! - **A `seq` already seen is ignored silently** ([`Step::Ignored`]): a move whose `seq`
//!   is already on the board, a second `propose` or `accept`, a `result` after the result.
//! - **Never act out of turn**: [`Game::play`] refuses a move when it is not the agent's
//!   turn, before the game is accepted, or after it ended.
//! - **The board must be the local board plus the move**, else the receiver ends the game
//!   with `result {"outcome":"abort","reason":"state-conflict"}` ([`Step::Conflict`]). The
//!   same holds for a move that breaks a rule, a wrong `replyTo`, or an acceptance that
//!   takes the proposer's role: each means the two sides no longer agree.
//! - **Results**: whoever makes the last move declares the win or the draw
//!   ([`Game::play`] returns the `result` after the move); the other side checks the
//!   declaration against its own board. Either side may abort.
//!
//! Beyond the protocol, for transports that reorder: a message that is ahead of the local state
//! (a move with a later `seq`, a move before the acceptance, a result before the last move)
//! is held ([`Step::Held`]) and applied when the gap is filled. Over an in-order transport
//! (Triad's relay) nothing is ever held.

use triad_rules::{AnyGame, Mark, Player};

use crate::{
    App, Board, GameId, GameResult, Message, Move, Outcome, Propose, ProtocolError, STATE_CONFLICT,
    board_string,
};

/// The most messages a game holds while it waits for an earlier one.
pub const MAX_PENDING: usize = 16;

/// Who did something.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// This agent.
    Me,
    /// The other agent.
    Opponent,
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Three in a row (or an SOS) by `winner`.
    Win {
        /// The winner.
        winner: Player,
    },
    /// The board filled with no winner.
    Draw,
    /// Called off.
    Aborted {
        /// Who called it off.
        by: Side,
        /// Why, if said.
        reason: Option<String>,
    },
}

impl Ending {
    /// The ending of a finished board.
    #[must_use]
    pub fn of_board(outcome: triad_rules::Outcome) -> Ending {
        match outcome {
            triad_rules::Outcome::Win { winner, .. } => Ending::Win { winner },
            triad_rules::Outcome::Draw => Ending::Draw,
        }
    }

    /// The `result` message that declares it.
    #[must_use]
    pub fn to_result(&self, game_id: Option<GameId>) -> GameResult {
        match self {
            Ending::Win { winner } => GameResult::win(*winner, game_id),
            Ending::Draw => GameResult::draw(game_id),
            Ending::Aborted { reason, .. } => GameResult {
                outcome: Outcome::Abort,
                winner: None,
                reason: reason.clone(),
                game_id,
            },
        }
    }

    /// In words: `win by X`, `draw`, `abort (state-conflict)`.
    #[must_use]
    pub fn describe(&self, app: App) -> String {
        self.to_result(None).describe(app)
    }
}

/// What receiving a message did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A duplicate (a `seq` already seen, a result already known): ignored, as the A2A protocol
    /// says.
    Ignored,
    /// Ahead of the local state: kept, and applied when the message before it arrives.
    Held,
    /// The opponent accepted the proposal: the game is on.
    Accepted,
    /// The opponent placed `mark` in `cell`. If that ended the game, [`Game::ending`] says
    /// how; the opponent, who moved last, declares it.
    Moved {
        /// The cell, 0-8.
        cell: u8,
        /// The mark.
        mark: Mark,
    },
    /// The opponent declared the result, and it agrees with the board; or they aborted.
    Ended(Ending),
    /// The message contradicts the local state: the game is over, and `abort` (the A2A protocol's
    /// `state-conflict` result) must be sent to the opponent.
    Conflict {
        /// What contradicted the local state.
        error: ProtocolError,
        /// The `result` to send.
        abort: Message,
    },
}

/// The board of a position.
#[must_use]
pub fn board_of(position: &AnyGame) -> Board {
    position.board().cells()
}

/// How a position stands, in words: `win by X`, `draw`, or `in play`.
#[must_use]
pub fn describe_position(app: App, position: &AnyGame) -> String {
    match position.outcome() {
        Some(outcome) => Ending::of_board(outcome).describe(app),
        None => "in play".to_owned(),
    }
}

/// The referee's check of a move by `mover` on `position`: its `seq` is the number of marks
/// after it, it is legal (the rules' codes 0-5), the board it carries is the position plus
/// the move (the A2A protocol's state conflict), and its `replyTo` is the `seq` before it. Returns
/// the position after the move.
///
/// Agents ([`Game::receive`]) and Triad's relay run this same check.
///
/// # Errors
/// The first check that fails, in that order.
pub fn check_move(
    app: App,
    position: &AnyGame,
    mover: Player,
    m: &Move,
) -> Result<AnyGame, ProtocolError> {
    debug_assert_eq!(position.kind(), app.game(), "a position of the app's game");
    let marks = u8::try_from(position.board().len()).unwrap_or(9);
    let expected = marks + 1;
    if m.seq != expected {
        return Err(ProtocolError::SeqMismatch {
            expected,
            got: m.seq,
        });
    }
    let (next, _) = position.play_as(mover, m.position.index(), m.mark)?;
    let after = board_of(&next);
    if after != m.board {
        return Err(ProtocolError::StateConflict {
            expected: board_string(&after),
            received: board_string(&m.board),
        });
    }
    if m.reply_to != marks {
        return Err(ProtocolError::ReplyToMismatch {
            expected: marks,
            got: m.reply_to,
        });
    }
    Ok(next)
}

/// The referee's check of a declared result against the position: a win names the board's
/// winner, a draw is a full board without one, and an abort comes while the game is on.
///
/// # Errors
/// [`ProtocolError::ResultMismatch`], or the rules' `game_over` for an abort after the end.
pub fn check_result(
    app: App,
    position: &AnyGame,
    declared: &GameResult,
) -> Result<(), ProtocolError> {
    let actual = position.outcome().map(Ending::of_board);
    match (declared.outcome, &actual) {
        (Outcome::Abort, None) => Ok(()),
        (Outcome::Abort, Some(_)) => {
            Err(ProtocolError::IllegalMove(triad_rules::MoveError::GameOver))
        }
        (Outcome::Win, Some(Ending::Win { winner })) if declared.winner == Some(*winner) => Ok(()),
        (Outcome::Draw, Some(Ending::Draw)) => Ok(()),
        _ => Err(ProtocolError::ResultMismatch {
            declared: declared.describe(app),
            actual: describe_position(app, position),
        }),
    }
}

/// One game as one agent sees it.
///
/// ```
/// use triad_protocol::{App, Game, Message, Step};
/// use triad_rules::{Mark, Player};
///
/// // Alice proposes to play X; Bob accepts as O.
/// let (mut alice, propose) = Game::propose(App::TicTacToe, Player::First, None);
/// let Message::Propose(proposal) = &propose else { unreachable!() };
/// let (mut bob, accept) = Game::accept(App::TicTacToe, proposal);
/// assert_eq!(alice.receive(&accept).unwrap(), [Step::Accepted]);
///
/// // Alice opens in the centre; Bob sees the move, and a duplicate of it is ignored.
/// let sent = alice.play(4, Mark::X).unwrap();
/// assert_eq!(bob.receive(&sent[0]).unwrap(), [Step::Moved { cell: 4, mark: Mark::X }]);
/// assert_eq!(bob.receive(&sent[0]).unwrap(), [Step::Ignored]);
/// // It is Bob's turn, not Alice's.
/// assert!(alice.play(0, Mark::X).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    app: App,
    me: Player,
    game_id: Option<GameId>,
    proposer: bool,
    accepted: bool,
    position: AnyGame,
    ending: Option<Ending>,
    /// Whether the result is settled: declared by this agent, or received and confirmed.
    declared: bool,
    /// The highest move `seq` seen: played, received, or refused as a conflict.
    seen: u8,
    pending: Vec<Message>,
}

impl Game {
    /// Proposes a game, claiming `role`: the game, and the `propose` to send.
    #[must_use]
    pub fn propose(app: App, role: Player, game_id: Option<GameId>) -> (Game, Message) {
        let message = Message::Propose(Propose {
            role,
            game_id: game_id.clone(),
        });
        (Game::new(app, role, game_id, true), message)
    }

    /// Accepts a proposal, taking the remaining role: the game, and the `accept` to send.
    #[must_use]
    pub fn accept(app: App, proposal: &Propose) -> (Game, Message) {
        let role = proposal.role.other();
        let message = Message::Accept(crate::Accept {
            role,
            game_id: proposal.game_id.clone(),
        });
        (
            Game::new(app, role, proposal.game_id.clone(), false),
            message,
        )
    }

    fn new(app: App, me: Player, game_id: Option<GameId>, proposer: bool) -> Game {
        Game {
            app,
            me,
            game_id,
            proposer,
            accepted: !proposer,
            position: AnyGame::new(app.game()),
            ending: None,
            declared: false,
            seen: 0,
            pending: Vec::new(),
        }
    }

    /// The app.
    #[must_use]
    pub fn app(&self) -> App {
        self.app
    }

    /// This agent's role.
    #[must_use]
    pub fn me(&self) -> Player {
        self.me
    }

    /// The game's id, if it has one.
    #[must_use]
    pub fn game_id(&self) -> Option<&GameId> {
        self.game_id.as_ref()
    }

    /// Whether this agent proposed the game.
    #[must_use]
    pub fn is_proposer(&self) -> bool {
        self.proposer
    }

    /// Whether the proposal has been accepted.
    #[must_use]
    pub fn is_accepted(&self) -> bool {
        self.accepted
    }

    /// The position.
    #[must_use]
    pub fn position(&self) -> &AnyGame {
        &self.position
    }

    /// The number of marks on the board: the `seq` of the last move.
    #[must_use]
    pub fn seq(&self) -> u8 {
        u8::try_from(self.position.board().len()).unwrap_or(9)
    }

    /// How the game ended, once it has.
    #[must_use]
    pub fn ending(&self) -> Option<&Ending> {
        self.ending.as_ref()
    }

    /// Whether it is this agent's turn to move.
    #[must_use]
    pub fn my_turn(&self) -> bool {
        self.accepted && self.ending.is_none() && self.position.turn() == self.me
    }

    /// Whether the result is settled (declared, or received and confirmed).
    #[must_use]
    pub fn is_settled(&self) -> bool {
        self.declared
    }

    /// How many messages are held, waiting for an earlier one.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Places a mark: the `move` to send, followed by the `result` when the move ends the
    /// game (the player who detects the end declares it).
    ///
    /// # Errors
    /// The rules' codes (not your turn, cell occupied, …), `game_over` after the end, or
    /// [`ProtocolError::OutOfTurn`] before the proposal is accepted. Nothing changes.
    pub fn play(&mut self, cell: u8, mark: Mark) -> Result<Vec<Message>, ProtocolError> {
        if self.ending.is_some() {
            return Err(triad_rules::MoveError::GameOver.into());
        }
        if !self.accepted {
            return Err(ProtocolError::OutOfTurn {
                problem: "the proposal has not been accepted yet",
            });
        }
        let (next, mv) = self.position.play_as(self.me, cell, mark)?;
        let seq = self.seq() + 1;
        self.position = next;
        self.seen = seq;
        let mut out = vec![Message::Move(Move {
            seq,
            reply_to: seq - 1,
            position: mv.cell,
            mark: mv.mark,
            board: board_of(&next),
            game_id: self.game_id.clone(),
        })];
        if let Some(outcome) = next.outcome() {
            let ending = Ending::of_board(outcome);
            out.push(Message::Result(ending.to_result(self.game_id.clone())));
            self.ending = Some(ending);
            self.declared = true;
            self.pending.clear();
        }
        Ok(out)
    }

    /// Calls the game off: the `result` abort to send.
    ///
    /// # Errors
    /// `game_over` when the game already ended.
    pub fn abort(&mut self, reason: &str) -> Result<Message, ProtocolError> {
        if self.ending.is_some() {
            return Err(triad_rules::MoveError::GameOver.into());
        }
        let ending = Ending::Aborted {
            by: Side::Me,
            reason: Some(reason.to_owned()),
        };
        let message = Message::Result(ending.to_result(self.game_id.clone()));
        self.ending = Some(ending);
        self.declared = true;
        self.pending.clear();
        Ok(message)
    }

    /// Receives a message from the opponent: what it did, then what each message it
    /// released from the held ones did.
    ///
    /// # Errors
    /// The message concerns only itself and was ignored (nothing changed): it belongs to
    /// another game, is of a kind the game cannot take (a second proposal, an acceptance
    /// sent to the player who accepted, a move after the end), declares a result the board
    /// contradicts, or too many messages are held.
    pub fn receive(&mut self, message: &Message) -> Result<Vec<Step>, ProtocolError> {
        if message.game_id() != self.game_id.as_ref() {
            let name =
                |id: Option<&GameId>| id.map_or_else(|| "none".to_owned(), ToString::to_string);
            return Err(ProtocolError::GameIdMismatch {
                expected: name(self.game_id.as_ref()),
                got: name(message.game_id()),
            });
        }
        let step = self.apply(message)?;
        let progressed = !matches!(step, Step::Held | Step::Ignored);
        let mut steps = vec![step];
        if progressed {
            self.release(&mut steps);
        }
        Ok(steps)
    }

    /// Applies held messages that the state has caught up with, until none applies.
    fn release(&mut self, steps: &mut Vec<Step>) {
        loop {
            let mut progressed = false;
            for message in std::mem::take(&mut self.pending) {
                match self.apply(&message) {
                    Ok(Step::Held) => {}
                    Ok(step) => {
                        progressed = true;
                        steps.push(step);
                    }
                    // A held message that turns out wrong is dropped, as it would have been
                    // had it arrived in order.
                    Err(_) => progressed = true,
                }
            }
            if !progressed || self.pending.is_empty() {
                return;
            }
        }
    }

    fn hold(&mut self, message: &Message) -> Result<Step, ProtocolError> {
        if self.pending.contains(message) {
            return Ok(Step::Ignored);
        }
        if self.pending.len() >= MAX_PENDING {
            return Err(ProtocolError::TooManyPending);
        }
        self.pending.push(message.clone());
        Ok(Step::Held)
    }

    fn conflict(&mut self, error: ProtocolError) -> Step {
        let abort = self
            .abort(STATE_CONFLICT)
            .expect("a conflict arises only while the game is on");
        Step::Conflict { error, abort }
    }

    fn apply(&mut self, message: &Message) -> Result<Step, ProtocolError> {
        match message {
            Message::Propose(p) => {
                if !self.proposer && p.role == self.me.other() {
                    Ok(Step::Ignored)
                } else {
                    Err(ProtocolError::OutOfTurn {
                        problem: "a new proposal while this game is on; finish or abort it first",
                    })
                }
            }
            Message::Accept(a) => {
                if !self.proposer {
                    return Err(ProtocolError::OutOfTurn {
                        problem: "an acceptance sent to the player who accepted",
                    });
                }
                if self.accepted || self.ending.is_some() {
                    return Ok(Step::Ignored);
                }
                if a.role != self.me.other() {
                    return Ok(self.conflict(ProtocolError::RoleConflict {
                        expected: self.app.role_name(self.me.other()),
                        got: self.app.role_name(a.role),
                    }));
                }
                self.accepted = true;
                Ok(Step::Accepted)
            }
            Message::Move(m) => {
                let marks = self.seq();
                if m.seq <= marks.max(self.seen) {
                    return Ok(Step::Ignored);
                }
                if self.ending.is_some() {
                    return Err(triad_rules::MoveError::GameOver.into());
                }
                if !self.accepted || m.seq > marks + 1 {
                    return self.hold(message);
                }
                self.seen = m.seq;
                match check_move(self.app, &self.position, self.me.other(), m) {
                    Ok(next) => {
                        self.position = next;
                        if let Some(outcome) = next.outcome() {
                            self.ending = Some(Ending::of_board(outcome));
                        }
                        Ok(Step::Moved {
                            cell: m.position.index(),
                            mark: m.mark,
                        })
                    }
                    Err(error) => Ok(self.conflict(error)),
                }
            }
            Message::Result(r) => {
                if self.declared {
                    return Ok(Step::Ignored);
                }
                match (r.outcome, &self.ending) {
                    (Outcome::Abort, None) => {
                        let ending = Ending::Aborted {
                            by: Side::Opponent,
                            reason: r.reason.clone(),
                        };
                        self.ending = Some(ending.clone());
                        self.declared = true;
                        self.pending.clear();
                        Ok(Step::Ended(ending))
                    }
                    (_, None) => self.hold(message),
                    (_, Some(ending)) => {
                        check_result(self.app, &self.position, r)?;
                        let ending = ending.clone();
                        self.declared = true;
                        Ok(Step::Ended(ending))
                    }
                }
            }
        }
    }
}
