//! A match: its seats, board, lifecycle and deadlines.

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};
use triad_rules::{AnyGame, CellSet, GameKind, Move, Player};

use crate::{Address, Command, Config, EndReason, EngineError, MatchId, Origin, Seat, StartChoice};

/// Where a match is in its life (the Shoehive tutorial's table states).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// One player waits: in the queue, or with an unanswered challenge.
    Waiting,
    /// Both seats are filled; the first move has not been made.
    Ready,
    /// At least one move has been made.
    InProgress,
    /// Over, for the reason in [`Match::result`].
    Finished,
}

impl Phase {
    /// The stable snake_case name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Phase::Waiting => "waiting",
            Phase::Ready => "ready",
            Phase::InProgress => "in_progress",
            Phase::Finished => "finished",
        }
    }
}

/// An open challenge's terms.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenge {
    /// Who challenged.
    pub challenger: Address,
    /// Who was challenged; they must accept before anything starts.
    pub opponent: Address,
    /// Who will move first.
    pub first: StartChoice,
    /// When the challenge lapses.
    pub expires_at_ms: u64,
}

/// How a match ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchResult {
    /// Why.
    pub reason: EndReason,
    /// Who won, if anyone.
    pub winner: Option<Player>,
    /// Every cell of every winning line.
    pub cells: CellSet,
    /// When.
    pub ended_ms: u64,
    /// Each player's rating before and after the game, `[first, second]`, for a game that
    /// moved ratings (played between two people); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratings: Option<[RatingChange; 2]>,
}

/// A player's rating before and after one game, rounded to whole points as people read it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RatingChange {
    /// Before the game.
    pub before: i32,
    /// After it.
    pub after: i32,
}

impl RatingChange {
    /// The change from `before` to `after`, each rounded to whole points.
    #[must_use]
    pub fn new(before: f64, after: f64) -> RatingChange {
        // Ratings stay within a few thousand points: the casts cannot truncate.
        #[expect(
            clippy::cast_possible_truncation,
            reason = "ratings are far below i32::MAX"
        )]
        let round = |r: f64| r.round() as i32;
        RatingChange {
            before: round(before),
            after: round(after),
        }
    }
}

/// What a deadline does when it passes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeadlineKind {
    /// The challenge expires; the challenger is refunded.
    ChallengeExpires,
    /// The first move never came: the match is aborted with full refunds.
    Abort,
    /// The player to move is too slow: the last mover may claim the win (or, with
    /// automatic timeouts, wins at the deadline).
    Timeout,
}

/// A pending deadline.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deadline {
    /// When.
    pub at_ms: u64,
    /// What happens then.
    pub kind: DeadlineKind,
}

/// A match and everything about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Match {
    /// Its id.
    pub id: MatchId,
    /// How it came to be.
    pub origin: Origin,
    /// Each player's stake.
    #[serde(with = "crate::amount::text")]
    pub stake: u128,
    /// Where it is in its life.
    pub phase: Phase,
    /// Who created it: the queue joiner, the challenger, or the human against the computer.
    pub host: Address,
    /// The challenge's terms, for challenge matches.
    pub challenge: Option<Challenge>,
    /// `[first, second]` once both seats are filled.
    pub seats: Option<[Seat; 2]>,
    /// The position.
    pub position: AnyGame,
    /// The moves so far; `moves[i]` made the board have `i + 1` marks.
    pub moves: ArrayVec<Move, 9>,
    /// When it was created.
    pub created_ms: u64,
    /// When it started, or the last move was made: the move deadline runs from here. An
    /// outage moves it later by its length (`ClocksResumed`), as if the time had not passed.
    pub last_activity_ms: u64,
    /// A standing rematch offer, by whom.
    pub rematch_offer: Option<Player>,
    /// The rematch made from this match.
    pub rematch: Option<MatchId>,
    /// How it ended, once it has.
    pub result: Option<MatchResult>,
}

impl Match {
    /// Which game.
    #[must_use]
    pub fn game(&self) -> GameKind {
        self.position.kind()
    }

    /// The seat of `player`, once the match has started.
    #[must_use]
    pub fn seat(&self, player: Player) -> Option<Seat> {
        self.seats.map(|s| s[player.index()])
    }

    /// Which player `address` is, once the match has started.
    #[must_use]
    pub fn player_of(&self, address: Address) -> Option<Player> {
        let seats = self.seats?;
        Player::BOTH
            .into_iter()
            .find(|p| seats[p.index()] == Seat::Human(address))
    }

    /// The seat `actor` plays from, for a command that acts on a match being played
    /// (a forfeit, an abort, a timeout claim; a move, once it is not a repeat): refused while
    /// it waits for an opponent, to anyone not seated, and once it is over.
    ///
    /// # Errors
    /// [`NotInPlay`](EngineError::NotInPlay) to the waiting host,
    /// [`NotAPlayer`](EngineError::NotAPlayer) to anyone else not seated, and
    /// [`GameOver`](triad_rules::MoveError::GameOver) once it has ended.
    pub fn seat_in_play(&self, actor: Address) -> Result<Player, EngineError> {
        if self.phase == Phase::Waiting {
            return Err(if self.host == actor {
                EngineError::NotInPlay
            } else {
                EngineError::NotAPlayer
            });
        }
        let player = self.player_of(actor).ok_or(EngineError::NotAPlayer)?;
        if self.phase == Phase::Finished {
            return Err(triad_rules::MoveError::GameOver.into());
        }
        Ok(player)
    }

    /// The challenge `actor` may answer (accept or decline): one addressed to them, still
    /// waiting.
    ///
    /// # Errors
    /// [`NotYourChallenge`](EngineError::NotYourChallenge) when it is no challenge or not
    /// theirs; once it has ended, [`ChallengeExpired`](EngineError::ChallengeExpired) if it
    /// expired and [`NotWaiting`](EngineError::NotWaiting) otherwise.
    pub fn challenge_for(&self, actor: Address) -> Result<Challenge, EngineError> {
        let challenge = self
            .challenge
            .filter(|c| c.opponent == actor)
            .ok_or(EngineError::NotYourChallenge)?;
        if self.phase != Phase::Waiting {
            return Err(match self.result {
                Some(r) if r.reason == EndReason::Expired => EngineError::ChallengeExpired,
                _ => EngineError::NotWaiting,
            });
        }
        Ok(challenge)
    }

    /// Whether `actor` may cancel the match's wait (its deadline aside): its host, while it
    /// waits.
    ///
    /// # Errors
    /// [`NotYourChallenge`](EngineError::NotYourChallenge) to a challenge's opponent,
    /// [`NotAPlayer`](EngineError::NotAPlayer) to anyone else but the host, and
    /// [`NotWaiting`](EngineError::NotWaiting) once it no longer waits.
    pub fn cancellable_by(&self, actor: Address) -> Result<(), EngineError> {
        if self.host != actor {
            return Err(match self.challenge {
                Some(c) if c.opponent == actor => EngineError::NotYourChallenge,
                _ => EngineError::NotAPlayer,
            });
        }
        if self.phase != Phase::Waiting {
            return Err(EngineError::NotWaiting);
        }
        Ok(())
    }

    /// The seat `actor` would offer or accept a rematch from (what the rest of the engine
    /// holds aside: their own offer, both players' balances and other matches): a player of
    /// a match played to its end, not a tournament's, with no rematch made yet.
    ///
    /// # Errors
    /// [`RematchUnavailable`](EngineError::RematchUnavailable) to those it concerned when it
    /// never was played or has its rematch already, [`NotAPlayer`](EngineError::NotAPlayer)
    /// to anyone else, and [`TournamentGame`](EngineError::TournamentGame) for a
    /// tournament's game.
    pub fn rematch_seat(&self, actor: Address) -> Result<Player, EngineError> {
        let played = self.result.is_some_and(|r| r.reason.was_played());
        // The host of a wait or challenge that never started (and the challenged player)
        // took part: they learn there is no rematch, not that they are strangers.
        let invited = self.challenge.is_some_and(|c| c.opponent == actor);
        if !played && (self.involves(actor) || invited) {
            return Err(EngineError::RematchUnavailable);
        }
        let player = self.player_of(actor).ok_or(EngineError::NotAPlayer)?;
        if let Origin::Tournament { .. } = self.origin {
            return Err(EngineError::TournamentGame);
        }
        if !played || self.rematch.is_some() {
            return Err(EngineError::RematchUnavailable);
        }
        Ok(player)
    }

    /// What a command naming this match is told once the match has ended and left the
    /// engine's memory (past [`Config::finished_retention_ms`]; the server reads it back from
    /// its archive): what it was told while the match was in memory, but for the two
    /// answers that need the engine's memory of it. A repeat of the match's move is refused
    /// as [`GameOver`](triad_rules::MoveError::GameOver), no longer answered as the
    /// original (a retry's window is the retention's), and a rematch is
    /// [`RematchUnavailable`](EngineError::RematchUnavailable). `None` when the command does
    /// not name this match, or the match has not ended.
    #[must_use]
    pub fn refusal_once_forgotten(&self, actor: Address, command: &Command) -> Option<EngineError> {
        use Command as C;
        if self.phase != Phase::Finished || command.match_id() != Some(self.id) {
            return None;
        }
        let refusal = match command {
            C::Move { .. } | C::Forfeit { .. } | C::ClaimTimeout { .. } | C::Abort { .. } => {
                self.seat_in_play(actor).err()
            }
            C::AcceptChallenge { .. } | C::DeclineChallenge { .. } => {
                self.challenge_for(actor).err()
            }
            C::Cancel { .. } => self.cancellable_by(actor).err(),
            C::Rematch { .. } => Some(
                self.rematch_seat(actor)
                    .err()
                    .unwrap_or(EngineError::RematchUnavailable),
            ),
            _ => None,
        };
        debug_assert!(
            refusal.is_some(),
            "an ended match refuses every command on it"
        );
        refusal
    }

    /// Whether `address` takes part: seated, or the waiting host.
    #[must_use]
    pub fn involves(&self, address: Address) -> bool {
        match self.seats {
            Some(_) => self.player_of(address).is_some(),
            None => self.host == address,
        }
    }

    /// Everyone the match concerns: its [`participants`](Self::participants) and, for a
    /// challenge, both its parties (the opponent before accepting is not yet seated), each
    /// once. It is set when the match is created (a challenge, the first queued player) and
    /// grows only when the seats are filled (`GameStarted`); storage relies on that (the
    /// `match_players` rows, from which the server derives inboxes).
    #[must_use]
    pub fn concerned(&self) -> ArrayVec<Address, 4> {
        let mut out: ArrayVec<Address, 4> = self.participants().into_iter().collect();
        if let Some(c) = self.challenge {
            for a in [c.challenger, c.opponent] {
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
        out
    }

    /// The human addresses holding this match as their active match.
    #[must_use]
    pub fn participants(&self) -> ArrayVec<Address, 2> {
        match self.seats {
            Some(seats) => seats.iter().filter_map(Seat::address).collect(),
            None => [self.host].into_iter().collect(),
        }
    }

    /// Whether a seat is the computer.
    #[must_use]
    pub fn against_computer(&self) -> bool {
        self.seats
            .is_some_and(|s| s.iter().any(|seat| matches!(seat, Seat::Computer(_))))
    }

    /// The number of marks on the board: the `seq` of the last move.
    #[must_use]
    pub fn seq(&self) -> u8 {
        self.moves.len() as u8
    }

    /// The player to move, while the match is in play.
    #[must_use]
    pub fn turn(&self) -> Option<Player> {
        matches!(self.phase, Phase::Ready | Phase::InProgress).then(|| self.position.turn())
    }

    /// The SOS contract's `getGameState()`: the 9-character board string.
    #[must_use]
    pub fn game_state(&self) -> String {
        self.position.to_string()
    }

    /// The pending deadline, if any.
    #[must_use]
    pub fn deadline(&self, config: &Config) -> Option<Deadline> {
        match self.phase {
            Phase::Waiting => self.challenge.map(|c| Deadline {
                at_ms: c.expires_at_ms,
                kind: DeadlineKind::ChallengeExpires,
            }),
            _ if self.against_computer() => None,
            // A tournament game's first move is due like any other: the first player who
            // does not make it loses (the pairing stands; nothing is refunded).
            Phase::Ready if matches!(self.origin, Origin::Tournament { .. }) => Some(Deadline {
                at_ms: self.time_over_at_ms(config),
                kind: DeadlineKind::Timeout,
            }),
            Phase::Ready => Some(Deadline {
                at_ms: self.time_over_at_ms(config),
                kind: DeadlineKind::Abort,
            }),
            Phase::InProgress => Some(Deadline {
                at_ms: self.time_over_at_ms(config),
                kind: DeadlineKind::Timeout,
            }),
            Phase::Finished => None,
        }
    }

    /// The first instant at which the player to move has run out of time: the SOS contract's "more
    /// than" the move timeout after the last activity, so one millisecond after it. At
    /// exactly the timeout the player may still move and a claim is refused; from this
    /// instant on a move is refused and the claim (or the automatic timeout) is taken.
    fn time_over_at_ms(&self, config: &Config) -> u64 {
        self.last_activity_ms
            .saturating_add(config.move_timeout_ms)
            .saturating_add(1)
    }

    /// Moves the match's clock later by an outage's length (`ClocksResumed`): the move
    /// deadline of a match in play (from `last_activity_ms`), or an open challenge's
    /// expiry. A match against the computer has no clock, and a queue wait's cancel time
    /// is the waiting player's own, so neither moves.
    pub(crate) fn give_back(&mut self, outage_ms: u64) {
        match self.phase {
            Phase::Waiting => {
                if let Some(c) = &mut self.challenge {
                    c.expires_at_ms = c.expires_at_ms.saturating_add(outage_ms);
                }
            }
            Phase::Ready | Phase::InProgress if !self.against_computer() => {
                self.last_activity_ms = self.last_activity_ms.saturating_add(outage_ms);
            }
            Phase::Ready | Phase::InProgress | Phase::Finished => {}
        }
    }

    /// When the waiting host may cancel with a refund.
    #[must_use]
    pub fn cancel_allowed_at_ms(&self, config: &Config) -> u64 {
        if self.stake == 0 {
            self.created_ms
        } else {
            self.created_ms.saturating_add(config.wait_cancel_ms)
        }
    }
}
