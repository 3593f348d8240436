//! The engine's errors, each with a stable numeric code and a message that says what to do.

use core::fmt;

use triad_rules::MoveError;

use crate::MatchId;
use crate::tournament::TournamentPhase;

/// Why a command was refused. Nothing changed.
///
/// Codes 0-5 are the rules' [`MoveError`] codes (0-3 are the Sui contract's); the engine's own
/// codes start at 100. Codes never change meaning; new errors get new codes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineError {
    /// The move breaks a rule of the game (codes 0-5).
    Move(MoveError),
    /// 100: no match has that id.
    UnknownMatch,
    /// 101: only the match's players may do that.
    NotAPlayer,
    /// 102: the actor already has an active match (one per address, as in the Sui contract).
    AlreadyInMatch {
        /// The active match.
        match_id: MatchId,
    },
    /// 103: the opponent already has another active match.
    OpponentBusy,
    /// 104: a player cannot challenge or be matched with themselves.
    SelfPlay,
    /// 105: the balance does not cover the stake or the withdrawal.
    InsufficientBalance {
        /// What is needed.
        needed: u128,
        /// What the balance holds.
        available: u128,
    },
    /// 106: a staked wait can be cancelled only after the wait time.
    WaitNotOver {
        /// How long until it can.
        remaining_ms: u64,
    },
    /// 107: the match is not waiting for an opponent.
    NotWaiting,
    /// 108: the challenge is not addressed to the actor (or, to withdraw, not the actor's).
    NotYourChallenge,
    /// 109: the challenge has expired.
    ChallengeExpired,
    /// 110: the move deadline has not passed yet.
    DeadlineNotReached {
        /// How long until it does.
        remaining_ms: u64,
        /// Whether the claimer is the one to move (the first move, not yet made): the
        /// message then says the move is theirs, not that the opponent still has time.
        your_move: bool,
    },
    /// 111: only the player who moved last may claim the win.
    NotLastMover,
    /// 112: the match is not being played (still waiting for an opponent).
    NotInPlay,
    /// 113: the move's `seq` is behind the board and is not a repeat of the move made then.
    StaleSeq {
        /// The `seq` the next move must carry.
        expected: u8,
    },
    /// 114: the move's `seq` skips ahead of the board.
    SeqAhead {
        /// The `seq` the next move must carry.
        expected: u8,
    },
    /// 115: only the owner may do that.
    OwnerOnly,
    /// 116: the amount must be more than zero.
    ZeroAmount,
    /// 117: no rematch is possible for this match.
    RematchUnavailable,
    /// 118: the actor already offered a rematch.
    RematchAlreadyOffered,
    /// 119: the idempotency key was already used for a different command.
    IdempotencyKeyReused,
    /// 120: the stake is above the table's limit.
    StakeTooLarge {
        /// The largest stake allowed.
        max: u128,
    },
    /// 121: the reserve is empty.
    NothingToCollect,
    /// 122: the amount would overflow a balance.
    AmountTooLarge,
    /// 123: the match has no move deadline (games against the computer).
    NoDeadline,
    /// 124: the opponent's balance does not cover the rematch's stake.
    OpponentCannotAfford,
    /// 125: the zero address is nobody: it cannot play or receive money.
    ZeroAddress,
    /// 126: a staked match cannot be aborted, only forfeited.
    StakedAbort,
    /// 127: the match's clock ran out before this move; the clock's next tick ends it (by
    /// timeout, or abort before the first move).
    ClockRanOut,
    /// 128: the challenge's terms are not those the acceptance stated (it saw other ones).
    TermsDiffer {
        /// The first term that differs: `stake`, `game`, `challenger` or `first mover` (or,
        /// for an agents' acceptance that names the proposal's match, `match`).
        what: &'static str,
    },
    /// 129: no puzzle has that id.
    UnknownPuzzle,
    /// 130: a puzzle attempt's line is not one that can be played: an illegal move, a
    /// defence that is not a best move, or a move after the attempt was decided.
    InvalidPuzzleLine {
        /// The index of the move at fault.
        at: u8,
    },
    /// 131: the line neither solves nor fails the puzzle yet.
    PuzzleUndecided,
    /// 132: no tournament has that id.
    UnknownTournament,
    /// 133: the tournament has finished or was cancelled.
    TournamentClosed {
        /// Which.
        phase: TournamentPhase,
    },
    /// 134: a Swiss event takes entries only until it starts.
    TournamentStarted,
    /// 135: the actor is already entered (and not withdrawn).
    AlreadyEntered,
    /// 136: the actor is not entered in the tournament.
    NotEntered,
    /// 137: the tournament is for people only, or for bots only.
    EntryRestricted {
        /// Whether it is for bots only (else people only).
        bots_only: bool,
    },
    /// 138: the tournament has its most entrants.
    TournamentFull {
        /// Its limit.
        max: u32,
    },
    /// 139: the tournament's spec breaks a rule.
    InvalidTournament {
        /// What to change.
        why: &'static str,
    },
    /// 140: only the owner may create this tournament (a staked one, or any one when
    /// players may not create tournaments).
    CreationRestricted,
    /// 141: too many tournaments are upcoming or running (over everyone, or created by
    /// the actor).
    TooManyTournaments {
        /// The limit that was reached.
        limit: u32,
    },
    /// 142: a tournament's game cannot be aborted or rematched.
    TournamentGame,
    /// 143: only the owner or the tournament's organizer may cancel it.
    NotOrganizer,
    /// 144: pausing needs a running tournament, and a change (pausing a paused entrant, or
    /// resuming an active one, is refused).
    NothingToPause,
    /// 150: an outage cannot begin after the time the clocks resume.
    OutageInFuture,
    /// 151: there is no outage to give back: it is empty, or the engine recorded events
    /// since it began (it was alive then).
    NoOutage,
    /// 152: this outage was already given back (it began before the last resume).
    OutageAlreadyResumed,
    /// 153: only the server's clock (the zero address) may resume the clocks.
    ClockOnly,
}

impl From<MoveError> for EngineError {
    fn from(e: MoveError) -> Self {
        EngineError::Move(e)
    }
}

impl EngineError {
    /// One of each variant (with placeholder data), for tests and documentation.
    pub const ALL: [EngineError; 55] = [
        EngineError::Move(MoveError::GameOver),
        EngineError::Move(MoveError::InvalidPosition),
        EngineError::Move(MoveError::NotYourTurn),
        EngineError::Move(MoveError::CellOccupied),
        EngineError::Move(MoveError::MarkNotInGame),
        EngineError::Move(MoveError::NotYourMark),
        EngineError::UnknownMatch,
        EngineError::NotAPlayer,
        EngineError::AlreadyInMatch {
            match_id: MatchId(1),
        },
        EngineError::OpponentBusy,
        EngineError::SelfPlay,
        EngineError::InsufficientBalance {
            needed: 2,
            available: 1,
        },
        EngineError::WaitNotOver { remaining_ms: 1 },
        EngineError::NotWaiting,
        EngineError::NotYourChallenge,
        EngineError::ChallengeExpired,
        EngineError::DeadlineNotReached {
            remaining_ms: 1,
            your_move: false,
        },
        EngineError::NotLastMover,
        EngineError::NotInPlay,
        EngineError::StaleSeq { expected: 1 },
        EngineError::SeqAhead { expected: 1 },
        EngineError::OwnerOnly,
        EngineError::ZeroAmount,
        EngineError::RematchUnavailable,
        EngineError::RematchAlreadyOffered,
        EngineError::IdempotencyKeyReused,
        EngineError::StakeTooLarge { max: 1 },
        EngineError::NothingToCollect,
        EngineError::AmountTooLarge,
        EngineError::NoDeadline,
        EngineError::OpponentCannotAfford,
        EngineError::ZeroAddress,
        EngineError::StakedAbort,
        EngineError::ClockRanOut,
        EngineError::TermsDiffer { what: "stake" },
        EngineError::UnknownPuzzle,
        EngineError::InvalidPuzzleLine { at: 0 },
        EngineError::PuzzleUndecided,
        EngineError::UnknownTournament,
        EngineError::TournamentClosed {
            phase: TournamentPhase::Finished,
        },
        EngineError::TournamentStarted,
        EngineError::AlreadyEntered,
        EngineError::NotEntered,
        EngineError::EntryRestricted { bots_only: false },
        EngineError::TournamentFull { max: 2 },
        EngineError::InvalidTournament {
            why: "the name is empty",
        },
        EngineError::CreationRestricted,
        EngineError::TooManyTournaments { limit: 1 },
        EngineError::TournamentGame,
        EngineError::NotOrganizer,
        EngineError::NothingToPause,
        EngineError::OutageInFuture,
        EngineError::NoOutage,
        EngineError::OutageAlreadyResumed,
        EngineError::ClockOnly,
    ];

    /// The stable numeric code.
    #[must_use]
    pub fn code(&self) -> u16 {
        match self {
            EngineError::Move(e) => e.code(),
            EngineError::UnknownMatch => 100,
            EngineError::NotAPlayer => 101,
            EngineError::AlreadyInMatch { .. } => 102,
            EngineError::OpponentBusy => 103,
            EngineError::SelfPlay => 104,
            EngineError::InsufficientBalance { .. } => 105,
            EngineError::WaitNotOver { .. } => 106,
            EngineError::NotWaiting => 107,
            EngineError::NotYourChallenge => 108,
            EngineError::ChallengeExpired => 109,
            EngineError::DeadlineNotReached { .. } => 110,
            EngineError::NotLastMover => 111,
            EngineError::NotInPlay => 112,
            EngineError::StaleSeq { .. } => 113,
            EngineError::SeqAhead { .. } => 114,
            EngineError::OwnerOnly => 115,
            EngineError::ZeroAmount => 116,
            EngineError::RematchUnavailable => 117,
            EngineError::RematchAlreadyOffered => 118,
            EngineError::IdempotencyKeyReused => 119,
            EngineError::StakeTooLarge { .. } => 120,
            EngineError::NothingToCollect => 121,
            EngineError::AmountTooLarge => 122,
            EngineError::NoDeadline => 123,
            EngineError::OpponentCannotAfford => 124,
            EngineError::ZeroAddress => 125,
            EngineError::StakedAbort => 126,
            EngineError::ClockRanOut => 127,
            EngineError::TermsDiffer { .. } => 128,
            EngineError::UnknownPuzzle => 129,
            EngineError::InvalidPuzzleLine { .. } => 130,
            EngineError::PuzzleUndecided => 131,
            EngineError::UnknownTournament => 132,
            EngineError::TournamentClosed { .. } => 133,
            EngineError::TournamentStarted => 134,
            EngineError::AlreadyEntered => 135,
            EngineError::NotEntered => 136,
            EngineError::EntryRestricted { .. } => 137,
            EngineError::TournamentFull { .. } => 138,
            EngineError::InvalidTournament { .. } => 139,
            EngineError::CreationRestricted => 140,
            EngineError::TooManyTournaments { .. } => 141,
            EngineError::TournamentGame => 142,
            EngineError::NotOrganizer => 143,
            EngineError::NothingToPause => 144,
            EngineError::OutageInFuture => 150,
            EngineError::NoOutage => 151,
            EngineError::OutageAlreadyResumed => 152,
            EngineError::ClockOnly => 153,
        }
    }

    /// The stable snake_case name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            EngineError::Move(e) => e.name(),
            EngineError::UnknownMatch => "unknown_match",
            EngineError::NotAPlayer => "not_a_player",
            EngineError::AlreadyInMatch { .. } => "already_in_match",
            EngineError::OpponentBusy => "opponent_busy",
            EngineError::SelfPlay => "self_play",
            EngineError::InsufficientBalance { .. } => "insufficient_balance",
            EngineError::WaitNotOver { .. } => "wait_not_over",
            EngineError::NotWaiting => "not_waiting",
            EngineError::NotYourChallenge => "not_your_challenge",
            EngineError::ChallengeExpired => "challenge_expired",
            EngineError::DeadlineNotReached { .. } => "deadline_not_reached",
            EngineError::NotLastMover => "not_last_mover",
            EngineError::NotInPlay => "not_in_play",
            EngineError::StaleSeq { .. } => "stale_seq",
            EngineError::SeqAhead { .. } => "seq_ahead",
            EngineError::OwnerOnly => "owner_only",
            EngineError::ZeroAmount => "zero_amount",
            EngineError::RematchUnavailable => "rematch_unavailable",
            EngineError::RematchAlreadyOffered => "rematch_already_offered",
            EngineError::IdempotencyKeyReused => "idempotency_key_reused",
            EngineError::StakeTooLarge { .. } => "stake_too_large",
            EngineError::NothingToCollect => "nothing_to_collect",
            EngineError::AmountTooLarge => "amount_too_large",
            EngineError::NoDeadline => "no_deadline",
            EngineError::OpponentCannotAfford => "opponent_cannot_afford",
            EngineError::ZeroAddress => "zero_address",
            EngineError::StakedAbort => "staked_abort",
            EngineError::ClockRanOut => "clock_ran_out",
            EngineError::TermsDiffer { .. } => "terms_differ",
            EngineError::UnknownPuzzle => "unknown_puzzle",
            EngineError::InvalidPuzzleLine { .. } => "invalid_puzzle_line",
            EngineError::PuzzleUndecided => "puzzle_undecided",
            EngineError::UnknownTournament => "unknown_tournament",
            EngineError::TournamentClosed { .. } => "tournament_closed",
            EngineError::TournamentStarted => "tournament_started",
            EngineError::AlreadyEntered => "already_entered",
            EngineError::NotEntered => "not_entered",
            EngineError::EntryRestricted { .. } => "entry_restricted",
            EngineError::TournamentFull { .. } => "tournament_full",
            EngineError::InvalidTournament { .. } => "invalid_tournament",
            EngineError::CreationRestricted => "tournament_creation_restricted",
            EngineError::TooManyTournaments { .. } => "too_many_tournaments",
            EngineError::TournamentGame => "tournament_game",
            EngineError::NotOrganizer => "not_organizer",
            EngineError::NothingToPause => "nothing_to_pause",
            EngineError::OutageInFuture => "outage_in_future",
            EngineError::NoOutage => "no_outage",
            EngineError::OutageAlreadyResumed => "outage_already_resumed",
            EngineError::ClockOnly => "clock_only",
        }
    }
}

fn secs(ms: u64) -> u64 {
    ms.div_ceil(1000)
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EngineError::Move(e) => write!(f, "{e}"),
            EngineError::UnknownMatch => f.write_str("no match has that id; check the id"),
            EngineError::NotAPlayer => {
                f.write_str("only the two players of this match may do that")
            }
            EngineError::AlreadyInMatch { match_id } => write!(
                f,
                "you already have an active match ({match_id}); finish, forfeit or cancel it first"
            ),
            EngineError::OpponentBusy => f.write_str(
                "your opponent is in another match; try again when it has ended",
            ),
            EngineError::SelfPlay => f.write_str("you cannot play against yourself"),
            EngineError::InsufficientBalance { needed, available } => write!(
                f,
                "this needs {needed} but your balance is {available}; lower the amount or get a deposit first"
            ),
            EngineError::WaitNotOver { remaining_ms } => write!(
                f,
                "a staked wait can be cancelled after the wait time; try again in {} s",
                secs(remaining_ms)
            ),
            EngineError::NotWaiting => f.write_str(
                "this match is not waiting for an opponent; forfeit it instead if it has started",
            ),
            EngineError::NotYourChallenge => {
                f.write_str("this challenge is not yours to answer or withdraw")
            }
            EngineError::ChallengeExpired => {
                f.write_str("this challenge has expired; ask for a new one")
            }
            EngineError::DeadlineNotReached {
                remaining_ms,
                your_move: false,
            } => write!(
                f,
                "your opponent still has time to move; you can claim in {} s",
                secs(remaining_ms)
            ),
            EngineError::DeadlineNotReached {
                remaining_ms,
                your_move: true,
            } => write!(
                f,
                "the first move is yours: make it, or the match is called off with the stakes \
                 refunded in {} s",
                secs(remaining_ms)
            ),
            EngineError::NotLastMover => f.write_str(
                "only the player who moved last can claim a timeout; it is your move",
            ),
            EngineError::NotInPlay => f.write_str(
                "this match has not started; wait for an opponent or cancel the wait",
            ),
            EngineError::StaleSeq { expected } => write!(
                f,
                "that move is out of date: the board has moved on; the next move's seq is {expected}"
            ),
            EngineError::SeqAhead { expected } => write!(
                f,
                "that move's seq skips ahead; the next move's seq is {expected}"
            ),
            EngineError::OwnerOnly => f.write_str("only the owner may do that"),
            EngineError::ZeroAmount => f.write_str("the amount must be more than zero"),
            EngineError::RematchUnavailable => f.write_str(
                "no rematch is possible: the match has not ended, was never played, or already has a rematch",
            ),
            EngineError::RematchAlreadyOffered => {
                f.write_str("you already offered a rematch; wait for your opponent to accept")
            }
            EngineError::IdempotencyKeyReused => f.write_str(
                "that idempotency key was used for a different command; use a new key",
            ),
            EngineError::StakeTooLarge { max } => {
                write!(f, "the stake is above this table's limit of {max}")
            }
            EngineError::NothingToCollect => f.write_str("the reserve is empty"),
            EngineError::AmountTooLarge => {
                f.write_str("that amount is too large for a balance; use a smaller amount")
            }
            EngineError::NoDeadline => {
                f.write_str("games against the computer have no move deadline")
            }
            EngineError::OpponentCannotAfford => f.write_str(
                "your opponent's balance does not cover the stake; they need a deposit first",
            ),
            EngineError::ZeroAddress => {
                f.write_str("the zero address is nobody; use a real player's address")
            }
            EngineError::StakedAbort => f.write_str(
                "a staked match cannot be aborted; play it out or forfeit it",
            ),
            EngineError::ClockRanOut => f.write_str(
                "the move clock ran out before this move; the match is ending by timeout, so start a new one",
            ),
            EngineError::TermsDiffer { what } => write!(
                f,
                "this challenge's {what} is not the one you accepted; nothing was done: look at the challenge again and accept its terms if you want them"
            ),
            EngineError::UnknownPuzzle => {
                f.write_str("no puzzle has that id; list the puzzles for their ids")
            }
            EngineError::InvalidPuzzleLine { at } => write!(
                f,
                "move {} of the line cannot be played in this puzzle (illegal, a defence that is not a best move, or after the attempt was decided); send the line as played against the server's replies",
                u16::from(at) + 1
            ),
            EngineError::PuzzleUndecided => f.write_str(
                "the line neither solves nor fails the puzzle yet; play on until it is decided",
            ),
            EngineError::UnknownTournament => {
                f.write_str("no tournament has that id; list the tournaments for their ids")
            }
            EngineError::TournamentClosed { phase } => write!(
                f,
                "this tournament is {}; look for an upcoming or running one",
                phase.name()
            ),
            EngineError::TournamentStarted => f.write_str(
                "this Swiss event has started and takes no more entries; join an upcoming one",
            ),
            EngineError::AlreadyEntered => f.write_str("you are already in this tournament"),
            EngineError::NotEntered => f.write_str("you are not in this tournament; join it first"),
            EngineError::EntryRestricted { bots_only: true } => {
                f.write_str("this tournament is for bots only; enter with an agent's account")
            }
            EngineError::EntryRestricted { bots_only: false } => f.write_str(
                "this tournament is for people only; bots may enter the ones open to them",
            ),
            EngineError::TournamentFull { max } => write!(
                f,
                "this tournament has its {max} players; join another one"
            ),
            EngineError::InvalidTournament { why } => {
                write!(f, "the tournament cannot be created: {why}; change it and try again")
            }
            EngineError::CreationRestricted => f.write_str(
                "only the owner may create this tournament (staked ones always; free ones unless players may create them)",
            ),
            EngineError::TooManyTournaments { limit } => write!(
                f,
                "{limit} tournaments are already upcoming or running; wait for one to end"
            ),
            EngineError::TournamentGame => f.write_str(
                "a tournament game cannot be aborted or rematched; play it out or forfeit it",
            ),
            EngineError::NotOrganizer => {
                f.write_str("only the owner or the tournament's organizer may cancel it")
            }
            EngineError::NothingToPause => f.write_str(
                "nothing to change: pause a running tournament you are active in, or resume one you paused",
            ),
            EngineError::OutageInFuture => f.write_str(
                "the outage cannot begin in the future: give down_since_ms at or before now",
            ),
            EngineError::NoOutage => f.write_str(
                "no outage to give back: the engine recorded events since then, so it was alive",
            ),
            EngineError::OutageAlreadyResumed => f.write_str(
                "this outage was already given back: the clocks resumed after it began",
            ),
            EngineError::ClockOnly => {
                f.write_str("only the server's clock may resume the clocks after an outage")
            }
        }
    }
}

impl std::error::Error for EngineError {}
