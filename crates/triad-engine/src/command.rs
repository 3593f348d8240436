//! Commands: what players, the owner and the server's clock ask the engine to do.

use serde::{Deserialize, Serialize};
use triad_rules::{GameKind, Mark, Move, Player};
use triad_solver::puzzles::PuzzleId;

use crate::tournament::{TournamentId, TournamentSpec};
use crate::{Address, IdempotencyKey, MatchId};

/// The computer's playing strength.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Never loses; wins whenever it can, as fast as it can.
    Perfect,
    /// Mostly sound, sometimes careless (see the solver's `Strength::Casual`).
    Casual,
    /// Uniformly random legal moves.
    Random,
}

/// Who moves first in a challenged match.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StartChoice {
    /// The challenger moves first.
    Challenger,
    /// The challenged player moves first.
    Opponent,
    /// Chosen by the seeded RNG when the challenge is accepted.
    Random,
}

/// A challenge's terms as the player accepting it saw them (see
/// [`Command::AcceptChallenge`]): each one stated must be the challenge's.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Terms {
    /// Each player's stake in minor units.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::amount::option_text"
    )]
    pub stake: Option<u128>,
    /// Which game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<GameKind>,
    /// Who challenged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenger: Option<Address>,
    /// Who moves first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<StartChoice>,
}

impl Terms {
    /// Whether no term is stated.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Terms::default()
    }

    /// The first stated term that a challenge of `game` at `stake` by `challenger`, with
    /// `first` to move first, does not have, by name; `None` when it has them all.
    #[must_use]
    pub fn differs_from(
        &self,
        stake: u128,
        game: GameKind,
        challenger: Address,
        first: StartChoice,
    ) -> Option<&'static str> {
        if self.stake.is_some_and(|s| s != stake) {
            Some("stake")
        } else if self.game.is_some_and(|g| g != game) {
            Some("game")
        } else if self.challenger.is_some_and(|c| c != challenger) {
            Some("challenger")
        } else if self.first.is_some_and(|f| f != first) {
            Some("first mover")
        } else {
            None
        }
    }
}

/// A command. Each comes in an [`Envelope`] with the acting address and the time.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Command {
    /// Challenge `opponent` to a match (as in the Sui contract, the Shoehive tutorial and the A2A
    /// protocol). The stake is escrowed at once; the opponent must accept before anything starts.
    Challenge {
        /// Who is challenged.
        opponent: Address,
        /// Which game.
        game: GameKind,
        /// Each player's stake in minor units (0 for free play).
        #[serde(with = "crate::amount::text")]
        stake: u128,
        /// Who moves first.
        first: StartChoice,
    },
    /// Accept a challenge addressed to the actor.
    AcceptChallenge {
        /// The challenge's match.
        match_id: MatchId,
        /// The terms the accepter saw, when it states them: the acceptance is refused
        /// ([`EngineError::TermsDiffer`](crate::EngineError::TermsDiffer)) unless the
        /// challenge has exactly these, so an id that came by a mapping (an agents' game, a
        /// resend) can never commit anyone to other terms than those shown.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        terms: Option<Terms>,
    },
    /// Decline a challenge addressed to the actor; the challenger is refunded.
    DeclineChallenge {
        /// The challenge's match.
        match_id: MatchId,
    },
    /// Join the open queue for a game and stake (the SOS contract's `play()`).
    JoinQueue {
        /// Which game.
        game: GameKind,
        /// The stake in minor units (0 for free play).
        #[serde(with = "crate::amount::text")]
        stake: u128,
    },
    /// Leave the queue or withdraw an unanswered challenge (the SOS contract's `cancel()`). With a
    /// stake this is allowed only after `wait_cancel_ms`, and refunds the stake.
    Cancel {
        /// The waiting match.
        match_id: MatchId,
    },
    /// Play the built-in solver (as the HTML5 canvas game's computer plays). No stake.
    PlayComputer {
        /// Which game.
        game: GameKind,
        /// The computer's strength.
        level: Level,
        /// The human's side: `First` moves first (X in tic-tac-toe).
        side: Player,
    },
    /// Place a mark.
    Move {
        /// The match.
        match_id: MatchId,
        /// The number of marks on the board after this move (the A2A protocol's `seq`).
        seq: u8,
        /// The cell, 0-8.
        cell: u8,
        /// The mark.
        mark: Mark,
        /// The player's own signature of the move, when the client signed it (checked by
        /// the server before the command is made): kept in the `Moved` event, so the
        /// match's transcript carries it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signed: Option<MoveSignature>,
    },
    /// Give up: the opponent wins (as in the Shoehive tutorial).
    Forfeit {
        /// The match.
        match_id: MatchId,
    },
    /// Claim the win because the opponent is too slow (the SOS contract's `ur2slow()`), or abort a
    /// match whose first move never came.
    ClaimTimeout {
        /// The match.
        match_id: MatchId,
    },
    /// Call off a free match in play with no result (the A2A protocol's
    /// `result {"outcome":"abort"}`, for a state conflict or another irrecoverable problem).
    /// Only a seated player may, and only when nothing is staked: a staked match can only be
    /// forfeited, so nobody takes their stake back from a losing position. Nobody wins, and
    /// the match counts in no stats.
    Abort {
        /// The match.
        match_id: MatchId,
    },
    /// Offer a rematch after a match ended, or accept the opponent's offer.
    Rematch {
        /// The ended match.
        match_id: MatchId,
    },
    /// The owner credits play money to a player.
    Deposit {
        /// Who receives it.
        to: Address,
        /// How much, in minor units.
        #[serde(with = "crate::amount::text")]
        amount: u128,
    },
    /// A player takes money out.
    Withdraw {
        /// How much, in minor units.
        #[serde(with = "crate::amount::text")]
        amount: u128,
    },
    /// The owner collects the whole house reserve (the SOS contract's `collectProfit()`).
    CollectReserve,
    /// The clock: expire challenges, abort matches whose first move never came and, with
    /// automatic timeouts, end matches whose player to move is too slow.
    Tick,
    /// A finished attempt at a solver's puzzle: the engine checks the line (the player's
    /// moves and the best defence's, alternately, up to the move that decided it) and rates
    /// the actor's first attempt at each puzzle against the puzzle (Glicko-2; solved, the
    /// player wins). A later attempt at the same puzzle is checked and changes nothing.
    AttemptPuzzle {
        /// The puzzle.
        puzzle: PuzzleId,
        /// The line, from the puzzle's position.
        line: Vec<Move>,
    },
    /// Create a tournament. The owner may create any; other players only free ones, and
    /// only when the rules let them ([`TournamentRules`](crate::TournamentRules)).
    CreateTournament {
        /// What it is.
        spec: TournamentSpec,
    },
    /// Enter a tournament, paying its entry fee into its pool (or come back to one after
    /// leaving it, without paying again). A Swiss event takes entries until it starts; an
    /// arena until its time is up.
    JoinTournament {
        /// The tournament.
        tournament: TournamentId,
        /// Whether the actor's account is a bot. The server sets it from the account (an
        /// agent says so when it logs in), never from what a request says.
        bot: bool,
    },
    /// Leave a tournament: before it starts, with the fee refunded; after, withdrawn from
    /// the pairings, keeping the score so far (the fee stays in the pool).
    LeaveTournament {
        /// The tournament.
        tournament: TournamentId,
    },
    /// Pause (not be paired until resumed) or resume in a running tournament.
    PauseTournament {
        /// The tournament.
        tournament: TournamentId,
        /// Pause or resume.
        paused: bool,
    },
    /// Call off a tournament that has not finished, refunding every fee. The owner or the
    /// tournament's organizer may.
    CancelTournament {
        /// The tournament.
        tournament: TournamentId,
    },
    /// The clock, after an outage (the server was down from `down_since_ms` until now):
    /// gives the time back, so nobody loses a game, a challenge or a tournament's time to
    /// it. Every clock running at the outage's start moves later by its length: the move
    /// deadline of each match in play (not against the computer) and the expiry of each
    /// open challenge, and a running tournament's arena end and round and wave gaps. What
    /// had already passed stays passed. An upcoming tournament's start stays where it was
    /// announced (it starts at the first tick after the outage), and so do the queue's
    /// cancel wait and the retention windows. Only the clock (the zero address) sends it.
    /// The outage starts no earlier than the last event (the engine was alive then), and
    /// it is given back once: a second resume of the same outage is refused.
    ResumeClocks {
        /// When the service was last known to be alive (the server's heartbeat).
        down_since_ms: u64,
    },
}

impl Command {
    /// The stable snake_case name of the command.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Command::Challenge { .. } => "challenge",
            Command::AcceptChallenge { .. } => "accept_challenge",
            Command::DeclineChallenge { .. } => "decline_challenge",
            Command::JoinQueue { .. } => "join_queue",
            Command::Cancel { .. } => "cancel",
            Command::PlayComputer { .. } => "play_computer",
            Command::Move { .. } => "move",
            Command::Forfeit { .. } => "forfeit",
            Command::ClaimTimeout { .. } => "claim_timeout",
            Command::Abort { .. } => "abort",
            Command::Rematch { .. } => "rematch",
            Command::Deposit { .. } => "deposit",
            Command::Withdraw { .. } => "withdraw",
            Command::CollectReserve => "collect_reserve",
            Command::Tick => "tick",
            Command::AttemptPuzzle { .. } => "attempt_puzzle",
            Command::CreateTournament { .. } => "create_tournament",
            Command::JoinTournament { .. } => "join_tournament",
            Command::LeaveTournament { .. } => "leave_tournament",
            Command::PauseTournament { .. } => "pause_tournament",
            Command::CancelTournament { .. } => "cancel_tournament",
            Command::ResumeClocks { .. } => "resume_clocks",
        }
    }

    /// The match the command names, for those that act on one.
    #[must_use]
    pub fn match_id(&self) -> Option<MatchId> {
        match *self {
            Command::AcceptChallenge { match_id, .. }
            | Command::DeclineChallenge { match_id }
            | Command::Cancel { match_id }
            | Command::Move { match_id, .. }
            | Command::Forfeit { match_id }
            | Command::ClaimTimeout { match_id }
            | Command::Abort { match_id }
            | Command::Rematch { match_id } => Some(match_id),
            _ => None,
        }
    }
}

/// A player's Ed25519 signature of one move: the public key (whose Sui address must be the
/// mover's) and the signature of `triad_identity::move_message` for the move. Written as
/// hex in JSON. The engine keeps it and never checks it: the server checks it before
/// making the command, and a transcript's verifier checks it again.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct MoveSignature {
    /// The Ed25519 public key.
    pub public_key: [u8; 32],
    /// The Ed25519 signature.
    pub signature: [u8; 64],
}

impl Serialize for MoveSignature {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut s = serializer.serialize_struct("MoveSignature", 2)?;
        s.serialize_field("public_key", &hex::encode(self.public_key))?;
        s.serialize_field("signature", &hex::encode(self.signature))?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for MoveSignature {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Hex {
            public_key: String,
            signature: String,
        }
        fn bytes<const N: usize, E: serde::de::Error>(
            text: &str,
            what: &str,
        ) -> Result<[u8; N], E> {
            hex::decode(text)
                .ok()
                .and_then(|b| <[u8; N]>::try_from(b).ok())
                .ok_or_else(|| E::custom(format!("{what} is not {} hex digits", 2 * N)))
        }
        let h = Hex::deserialize(deserializer)?;
        Ok(MoveSignature {
            public_key: bytes(&h.public_key, "public_key")?,
            signature: bytes(&h.signature, "signature")?,
        })
    }
}

/// A command with its context: who acts, when, and an optional idempotency key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// The acting address (authenticated by the server).
    pub actor: Address,
    /// The time in milliseconds since the Unix epoch. The engine never reads a clock; if
    /// this is earlier than the last event's time, the last event's time is used.
    pub now_ms: u64,
    /// When set, a resubmission of the same command with the same key applies once.
    pub idempotency_key: Option<IdempotencyKey>,
    /// What to do.
    pub command: Command,
}

impl Envelope {
    /// An envelope without an idempotency key.
    #[must_use]
    pub fn new(actor: Address, now_ms: u64, command: Command) -> Envelope {
        Envelope {
            actor,
            now_ms,
            idempotency_key: None,
            command,
        }
    }

    /// The same envelope with an idempotency key.
    #[must_use]
    pub fn with_key(mut self, key: IdempotencyKey) -> Envelope {
        self.idempotency_key = Some(key);
        self
    }
}
