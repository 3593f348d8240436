//! Events: the facts the engine records. The state is a fold of them.

use serde::{Deserialize, Serialize};
use triad_rules::{Cell, CellSet, GameKind, Mark, Player};
use triad_solver::puzzles::PuzzleId;

use crate::tournament::{TournamentId, TournamentSpec};
use crate::{Address, Command, IdempotencyKey, Level, MatchId, MoveSignature, StartChoice};

/// One of the two seats of a match.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Seat {
    /// A person or an agent, by address.
    Human(Address),
    /// The built-in solver.
    Computer(Level),
}

impl Seat {
    /// The address, for a human seat.
    #[must_use]
    pub fn address(&self) -> Option<Address> {
        match self {
            Seat::Human(a) => Some(*a),
            Seat::Computer(_) => None,
        }
    }
}

/// How a match came to be.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// Matched from the open queue.
    Queue,
    /// A direct challenge.
    Challenge,
    /// Against the computer.
    Computer,
    /// A rematch of an ended match.
    Rematch {
        /// The match it follows.
        of: MatchId,
    },
    /// Paired by a tournament.
    Tournament {
        /// The tournament.
        tournament: TournamentId,
        /// The Swiss round, or the arena's pairing wave, from 1.
        round: u32,
    },
}

/// Why a match ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// A line of three (or an SOS) was formed.
    Win,
    /// The board filled with no line.
    Draw,
    /// A player gave up.
    Forfeit,
    /// The player to move was too slow; the last mover won.
    Timeout,
    /// The waiting player left the queue or withdrew the challenge.
    Cancelled,
    /// The challenged player declined.
    Declined,
    /// Nobody answered the challenge in time.
    Expired,
    /// Called off without a result: the first move never came, or a player of a free match
    /// aborted it (the A2A protocol's `abort`, after a [`EventKind::MatchAborted`]). Everyone was
    /// refunded; it counts in no stats.
    Aborted,
}

impl EndReason {
    /// Whether the match was played (counts in the stats and the ratings when both seats
    /// are human).
    #[must_use]
    pub fn was_played(self) -> bool {
        matches!(
            self,
            EndReason::Win | EndReason::Draw | EndReason::Forfeit | EndReason::Timeout
        )
    }

    /// The stable snake_case name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Win => "win",
            EndReason::Draw => "draw",
            EndReason::Forfeit => "forfeit",
            EndReason::Timeout => "timeout",
            EndReason::Cancelled => "cancelled",
            EndReason::Declined => "declined",
            EndReason::Expired => "expired",
            EndReason::Aborted => "aborted",
        }
    }
}

/// A ledger account. Money only moves between accounts, so the total never changes except
/// through [`Account::Outside`] (deposits and withdrawals).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum Account {
    /// The world outside Triad: the source of deposits and the sink of withdrawals.
    Outside,
    /// A player's spendable balance.
    Player(Address),
    /// A match's escrow: the stakes while it is undecided.
    Escrow(MatchId),
    /// The house reserve, collected by the owner.
    Reserve,
    /// A tournament's pool: its entry fees until the prizes are paid.
    Pool(TournamentId),
}

/// Why money moved.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransferReason {
    /// The owner credited play money.
    Deposit,
    /// A player took money out.
    Withdrawal,
    /// A stake went into a match's escrow.
    Stake,
    /// A winner's or a tied player's payout.
    Payout,
    /// A stake returned (cancel, decline, expiry, abort).
    Refund,
    /// The house's share of a pot.
    ReserveShare,
    /// The owner collected the reserve.
    Collect,
    /// A tournament's entry fee went into its pool.
    EntryFee,
    /// A tournament's prize for a final rank.
    Prize,
}

/// A double-entry transfer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Transfer {
    /// The account debited.
    pub from: Account,
    /// The account credited.
    pub to: Account,
    /// The amount in minor units, never zero.
    #[serde(with = "crate::amount::text")]
    pub amount: u128,
    /// Why.
    pub reason: TransferReason,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A challenge was issued; the match waits for the opponent.
    ChallengeIssued {
        /// The new match.
        match_id: MatchId,
        /// Who challenged.
        challenger: Address,
        /// Who was challenged.
        opponent: Address,
        /// Which game.
        game: GameKind,
        /// Each player's stake.
        #[serde(with = "crate::amount::text")]
        stake: u128,
        /// Who will move first.
        first: StartChoice,
        /// When the challenge lapses.
        expires_at_ms: u64,
    },
    /// The challenged player accepted.
    ChallengeAccepted {
        /// The match.
        match_id: MatchId,
    },
    /// The challenged player declined.
    ChallengeDeclined {
        /// The match.
        match_id: MatchId,
    },
    /// Nobody answered in time.
    ChallengeExpired {
        /// The match.
        match_id: MatchId,
    },
    /// A player joined the open queue and waits for an opponent.
    Queued {
        /// The new match.
        match_id: MatchId,
        /// Who waits.
        player: Address,
        /// Which game.
        game: GameKind,
        /// The stake.
        #[serde(with = "crate::amount::text")]
        stake: u128,
    },
    /// Both seats are filled; the first player is to move. For queue and challenge
    /// matches the match already exists; for computer matches and rematches it is created
    /// here.
    GameStarted {
        /// The match.
        match_id: MatchId,
        /// Which game.
        game: GameKind,
        /// Each player's stake.
        #[serde(with = "crate::amount::text")]
        stake: u128,
        /// `[first, second]`: who moves first.
        seats: [Seat; 2],
        /// How the match came to be.
        origin: Origin,
    },
    /// A mark was placed.
    Moved {
        /// The match.
        match_id: MatchId,
        /// The number of marks after the move.
        seq: u8,
        /// Which player moved.
        player: Player,
        /// Who sat there.
        by: Seat,
        /// Where.
        cell: Cell,
        /// What.
        mark: Mark,
        /// The mover's own signature of the move, when their client signed it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signed: Option<MoveSignature>,
    },
    /// A player called off a free match in play (the A2A protocol's `abort`); the match ends as
    /// [`EndReason::Aborted`] in the same command.
    MatchAborted {
        /// The match.
        match_id: MatchId,
        /// Who called it off.
        by: Player,
    },
    /// The match ended.
    GameEnded {
        /// The match.
        match_id: MatchId,
        /// Why.
        reason: EndReason,
        /// Who won, if anyone.
        winner: Option<Player>,
        /// Every cell of every winning line (empty unless `reason` is `Win`).
        cells: CellSet,
    },
    /// A player offered a rematch.
    RematchOffered {
        /// The ended match.
        match_id: MatchId,
        /// Who offered.
        by: Player,
    },
    /// Money moved.
    Transferred {
        /// The match it concerns, if any.
        match_id: Option<MatchId>,
        /// The transfer.
        transfer: Transfer,
    },
    /// A player's first attempt at a puzzle was decided: both puzzle ratings move, the
    /// player's and the puzzle's, as after a game between them.
    PuzzleAttempted {
        /// The puzzle.
        puzzle: PuzzleId,
        /// Who attempted it.
        player: Address,
        /// Whether the line solved it.
        solved: bool,
    },
    /// A tournament was created; it takes entries until it starts.
    TournamentCreated {
        /// The new tournament.
        tournament: TournamentId,
        /// Who created it.
        organizer: Address,
        /// What they chose.
        spec: TournamentSpec,
    },
    /// A player entered a tournament (or came back to it); the fee follows as a transfer
    /// into the pool, unless they had already paid it.
    TournamentJoined {
        /// The tournament.
        tournament: TournamentId,
        /// Who.
        player: Address,
        /// Whether the account is a bot.
        bot: bool,
    },
    /// A player left a tournament: before the start, refunded (a transfer follows); after,
    /// withdrawn, keeping their score.
    TournamentLeft {
        /// The tournament.
        tournament: TournamentId,
        /// Who.
        player: Address,
    },
    /// A player paused (is not paired) or resumed.
    TournamentPaused {
        /// The tournament.
        tournament: TournamentId,
        /// Who.
        player: Address,
        /// Paused or resumed.
        paused: bool,
    },
    /// A tournament started.
    TournamentStarted {
        /// The tournament.
        tournament: TournamentId,
    },
    /// A Swiss round or an arena wave was paired: its games follow as `GameStarted` events
    /// with [`Origin::Tournament`].
    TournamentRound {
        /// The tournament.
        tournament: TournamentId,
        /// The round or wave, from 1.
        round: u32,
        /// Who sits this Swiss round out with a bye (worth a win).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bye: Option<Address>,
    },
    /// A tournament ended: its standings are final, and its prizes follow as transfers
    /// from the pool, the rest to the reserve.
    TournamentFinished {
        /// The tournament.
        tournament: TournamentId,
        /// Who ranked first, if anyone played.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        winner: Option<Address>,
    },
    /// A tournament was called off: every fee is refunded by the transfers that follow.
    TournamentCancelled {
        /// The tournament.
        tournament: TournamentId,
    },
    /// The clocks were given back an outage of `resumed_ms - down_since_ms`: every clock
    /// running at `down_since_ms` (the move deadlines of the matches in play, the open
    /// challenges' expiry, the running tournaments' arena end and round and wave gaps)
    /// moved later by it (see [`Command::ResumeClocks`](crate::Command::ResumeClocks)).
    ClocksResumed {
        /// When the outage began: the last sign of life, or the last event if later.
        down_since_ms: u64,
        /// When the service came back: the event's own time.
        resumed_ms: u64,
    },
    /// The clock swept memory: every idempotency key whose window ended, and every finished
    /// match whose retention ended, by `before_ms` left the state (a match lives on in the
    /// log and the store), and every command from here on runs at `before_ms` or later.
    /// Sent by a `Tick` at most once per [`Engine::SWEEP_EVERY_MS`](crate::Engine::SWEEP_EVERY_MS)
    /// and only with something to sweep, so the state is the same whatever order commands
    /// under disjoint keys came in ([`Engine::keys`](crate::Engine::keys)).
    Forgotten {
        /// The time swept to: the event's own.
        before_ms: u64,
    },
}

impl EventKind {
    /// The stable snake_case name of the kind (the `type` of its JSON).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::ChallengeIssued { .. } => "challenge_issued",
            EventKind::ChallengeAccepted { .. } => "challenge_accepted",
            EventKind::ChallengeDeclined { .. } => "challenge_declined",
            EventKind::ChallengeExpired { .. } => "challenge_expired",
            EventKind::Queued { .. } => "queued",
            EventKind::GameStarted { .. } => "game_started",
            EventKind::Moved { .. } => "moved",
            EventKind::MatchAborted { .. } => "match_aborted",
            EventKind::GameEnded { .. } => "game_ended",
            EventKind::RematchOffered { .. } => "rematch_offered",
            EventKind::Transferred { .. } => "transferred",
            EventKind::PuzzleAttempted { .. } => "puzzle_attempted",
            EventKind::TournamentCreated { .. } => "tournament_created",
            EventKind::TournamentJoined { .. } => "tournament_joined",
            EventKind::TournamentLeft { .. } => "tournament_left",
            EventKind::TournamentPaused { .. } => "tournament_paused",
            EventKind::TournamentStarted { .. } => "tournament_started",
            EventKind::TournamentRound { .. } => "tournament_round",
            EventKind::TournamentFinished { .. } => "tournament_finished",
            EventKind::TournamentCancelled { .. } => "tournament_cancelled",
            EventKind::ClocksResumed { .. } => "clocks_resumed",
            EventKind::Forgotten { .. } => "forgotten",
        }
    }
}

/// The record that a command with an idempotency key was applied: attached to the last
/// event of the command's batch, so that a replay remembers the key too.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Who sent the command.
    pub actor: Address,
    /// The key.
    pub key: IdempotencyKey,
    /// The command, to tell a resubmission from a reuse of the key for something else.
    pub command: Command,
    /// How many events the command made (this one is the last).
    pub batch_len: u32,
}

/// An event with its global sequence number and time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// The global sequence number: 1, 2, 3, … with no gaps.
    pub seq: u64,
    /// When it happened: the command's `now_ms`, never earlier than the previous event
    /// under its keys ([`Engine::time_under`](crate::Engine::time_under)).
    pub at_ms: u64,
    /// What happened.
    pub kind: EventKind,
    /// Set on the last event of a command that carried an idempotency key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<Applied>,
}

impl Event {
    /// The match the event concerns, if any.
    #[must_use]
    pub fn match_id(&self) -> Option<MatchId> {
        match &self.kind {
            EventKind::ChallengeIssued { match_id, .. }
            | EventKind::ChallengeAccepted { match_id }
            | EventKind::ChallengeDeclined { match_id }
            | EventKind::ChallengeExpired { match_id }
            | EventKind::Queued { match_id, .. }
            | EventKind::GameStarted { match_id, .. }
            | EventKind::Moved { match_id, .. }
            | EventKind::MatchAborted { match_id, .. }
            | EventKind::GameEnded { match_id, .. }
            | EventKind::RematchOffered { match_id, .. } => Some(*match_id),
            EventKind::Transferred { match_id, .. } => *match_id,
            EventKind::PuzzleAttempted { .. }
            | EventKind::TournamentCreated { .. }
            | EventKind::TournamentJoined { .. }
            | EventKind::TournamentLeft { .. }
            | EventKind::TournamentPaused { .. }
            | EventKind::TournamentStarted { .. }
            | EventKind::TournamentRound { .. }
            | EventKind::TournamentFinished { .. }
            | EventKind::TournamentCancelled { .. }
            | EventKind::ClocksResumed { .. }
            | EventKind::Forgotten { .. } => None,
        }
    }

    /// The match the event brings into being, if it does: a challenge issued, a queue
    /// joined, or a game started that no challenge or queue came before (against the
    /// computer, a rematch, a tournament's pairing). No earlier event names that match, so
    /// a reader that has seen every event since this one knows all of the match's
    /// (the fan-out's catch-ups from memory rely on it). [`Engine::apply`] checks it.
    ///
    /// [`Engine::apply`]: crate::Engine::apply
    #[must_use]
    pub fn creates_match(&self) -> Option<MatchId> {
        match &self.kind {
            EventKind::ChallengeIssued { match_id, .. } | EventKind::Queued { match_id, .. } => {
                Some(*match_id)
            }
            EventKind::GameStarted {
                match_id,
                origin: Origin::Computer | Origin::Rematch { .. } | Origin::Tournament { .. },
                ..
            } => Some(*match_id),
            _ => None,
        }
    }

    /// The tournament the event concerns, if any: its own events, its games' starts and
    /// the transfers in and out of its pool. (A game's later events name only the match;
    /// its [`Origin`] names the tournament.)
    #[must_use]
    pub fn tournament_id(&self) -> Option<TournamentId> {
        match &self.kind {
            EventKind::TournamentCreated { tournament, .. }
            | EventKind::TournamentJoined { tournament, .. }
            | EventKind::TournamentLeft { tournament, .. }
            | EventKind::TournamentPaused { tournament, .. }
            | EventKind::TournamentStarted { tournament }
            | EventKind::TournamentRound { tournament, .. }
            | EventKind::TournamentFinished { tournament, .. }
            | EventKind::TournamentCancelled { tournament } => Some(*tournament),
            EventKind::GameStarted {
                origin: Origin::Tournament { tournament, .. },
                ..
            } => Some(*tournament),
            EventKind::Transferred { transfer, .. } => match (transfer.from, transfer.to) {
                (Account::Pool(t), _) | (_, Account::Pool(t)) => Some(t),
                _ => None,
            },
            _ => None,
        }
    }
}
