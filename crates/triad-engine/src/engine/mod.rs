//! The state machine: commands in, events out; the state is a fold of the events.
//!
//! [`Engine::execute`] checks a command and emits its events; [`Engine::apply`] folds one
//! event into the state, live and on replay alike. By concern: the commands (`commands`),
//! applying events (`apply`), the read-only queries (`queries`), the indexes kept beside the
//! matches (`index`), and the invariant check (`audit`).

mod apply;
mod audit;
mod commands;
mod index;
mod keys;
mod queries;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use serde::{Deserialize, Serialize};
use triad_rules::GameKind;
use triad_solver::puzzles::PuzzleId;

use crate::tournament::{Tournament, TournamentId};
use crate::{
    Address, Applied, Command, Config, EngineError, Envelope, Event, IdempotencyKey, Ledger, Match,
    MatchId, PlayerStats, PuzzleRecord,
};

pub use keys::{Key, Keys};

/// What a command did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    /// The events it caused, in order, already applied. Empty for a duplicate, or for a
    /// `Tick` with nothing due.
    pub events: Vec<Event>,
    /// Set when the command repeated one already applied, which changed nothing.
    pub duplicate: Option<Duplicate>,
}

/// A command that had already been applied.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Duplicate {
    /// A resubmission with the same idempotency key: its events were `first_seq..=last_seq`.
    Command {
        /// The first event of the original.
        first_seq: u64,
        /// The last event of the original.
        last_seq: u64,
        /// The match the original concerned (the one it created, for a challenge, a queue
        /// entry, a game against the computer or a rematch), if any: a resend is answered
        /// with that match, never with whatever match the actor has now.
        match_id: Option<MatchId>,
    },
    /// A move already made (same `seq`, same cell and mark, same player).
    Move {
        /// The match.
        match_id: MatchId,
        /// The move's `seq`.
        seq: u8,
    },
}

/// What a leaderboard is sorted by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ranking {
    /// Glicko-2 rating, highest first.
    Rating,
    /// Wins, most first (the SOS contract's hall of fame).
    Wins,
    /// Tournament wins, most first; then game wins.
    TournamentWins,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct IdempotencyEntry {
    command: Command,
    first_seq: u64,
    last_seq: u64,
    at_ms: u64,
    /// The match of the command's last event (see [`Duplicate::Command`]).
    #[serde(default)]
    match_id: Option<MatchId>,
}

/// The match engine: the referee that every other part of Triad trusts.
///
/// Pure and deterministic: no I/O, no clock (each command brings `now_ms`), no randomness
/// but the configured seed. [`execute`](Engine::execute) validates a command and either
/// refuses it with an [`EngineError`], changing nothing, or returns the events it caused,
/// already applied through [`apply`](Engine::apply) — the same function that
/// [`replay`](Engine::replay) uses, so the live state is always the fold of its log.
///
/// ```
/// use triad_engine::{Address, Command, Config, Engine, Envelope, StartChoice};
/// use triad_rules::{GameKind, Mark};
///
/// let (owner, alice, bob) = (Address::from_bytes([9; 32]), Address::from_bytes([1; 32]), Address::from_bytes([2; 32]));
/// let mut engine = Engine::with_log(Config::new(owner));
/// let run = |e: &mut Engine, who, now, command| e.execute(&Envelope::new(who, now, command));
///
/// let challenge = Command::Challenge { opponent: bob, game: GameKind::TicTacToe, stake: 0, first: StartChoice::Challenger };
/// let receipt = run(&mut engine, alice, 0, challenge).unwrap();
/// let id = receipt.events[0].match_id().unwrap();
/// run(&mut engine, bob, 10, Command::AcceptChallenge { match_id: id, terms: None }).unwrap();
/// run(&mut engine, alice, 20, Command::Move { match_id: id, seq: 1, cell: 4, mark: Mark::X, signed: None }).unwrap();
/// assert_eq!(engine.match_(id).unwrap().game_state(), "----X----");
///
/// let log: Vec<_> = engine.log_for_tests().to_vec();
/// assert_eq!(Engine::replay(Config::new(owner), &log), engine);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Engine {
    config: Config,
    next_seq: u64,
    /// The next count of each stripe of match ids ([`Config::match_id_stripes`]): stripe
    /// `s`'s next id is `next_match[s] × stripes + s`.
    next_match: Vec<u64>,
    /// The time of the latest event: the clock's commands (`Key::All`) run at it or later.
    clock_ms: u64,
    /// The time of the latest event under each key ([`Engine::time_under`]), since the
    /// last event under [`Key::All`], which clears it.
    #[serde(default, with = "pairs")]
    key_ms: HashMap<Key, u64, KeyHasher>,
    /// The time of the last event under [`Key::All`] (an outage given back, memory swept):
    /// every command from there on runs at it or later.
    #[serde(default)]
    floor_ms: u64,
    matches: BTreeMap<MatchId, Match>,
    live: BTreeSet<MatchId>,
    /// The clock deadline ([`clock_deadline`](Engine::clock_deadline)) of every live match
    /// that has one, earliest first: kept by [`apply`](Engine::apply), so the next deadline
    /// and the due matches of a `Tick` are found without a scan of the live matches.
    deadlines: BTreeSet<(u64, MatchId)>,
    /// Every open challenge (a waiting match with a challenge) by the address it is
    /// addressed to: kept by [`apply`](Engine::apply), so a player's incoming challenges
    /// are found without a scan of the live matches.
    challenges_to: BTreeSet<(Address, MatchId)>,
    active: BTreeMap<Address, MatchId>,
    queue: BTreeMap<(GameKind, u128), VecDeque<MatchId>>,
    ledger: Ledger,
    stats: BTreeMap<Address, PlayerStats>,
    idempotency: BTreeMap<(Address, IdempotencyKey), IdempotencyEntry>,
    /// The keyed commands by time, to forget their keys after the window. A set, not a
    /// list in the order of the log, so that commands under other keys
    /// ([`Engine::keys`]) leave the same state in either order.
    idempotency_order: BTreeSet<(u64, Address, IdempotencyKey)>,
    /// Finished matches by ending time, to drop them after the retention window (a set,
    /// as `idempotency_order` is).
    finished_order: BTreeSet<(u64, MatchId)>,
    /// The puzzle record of every puzzle attempted with a rating.
    #[serde(default)]
    puzzles: BTreeMap<PuzzleId, PuzzleRecord>,
    /// The puzzle record of every player with a rated attempt.
    #[serde(default)]
    puzzlers: BTreeMap<Address, PuzzleRecord>,
    /// Every (player, puzzle) with its one rated attempt made.
    #[serde(default)]
    rated_attempts: BTreeSet<(Address, PuzzleId)>,
    /// The tournaments in memory, by id: the open ones (few: creating one is bounded per
    /// player and in all, see [`TournamentRules`](crate::TournamentRules)), and those that
    /// ended within the retention window (`ended_tournaments`).
    #[serde(default)]
    tournaments: BTreeMap<TournamentId, Tournament>,
    /// The tournaments upcoming or running, which the clock's `Tick` looks at.
    #[serde(default)]
    open_tournaments: BTreeSet<TournamentId>,
    /// The tournaments that ended (finished or cancelled) by ending time, to drop them
    /// after the retention window, when the store's archive holds them (from
    /// [`Config::tournaments_archived_from_seq`]; a set, as `finished_order` is).
    #[serde(default)]
    ended_tournaments: BTreeSet<(u64, TournamentId)>,
    #[serde(default = "first_id")]
    next_tournament: u64,
    /// When the clocks last resumed after an outage (`ClocksResumed`): an outage that
    /// began before it was already given back.
    #[serde(default)]
    last_resumed_ms: u64,
    #[serde(skip)]
    log: KeptLog,
}

fn first_id() -> u64 {
    1
}

/// A map whose keys are not strings, as a list of pairs in key order (JSON objects take
/// only strings).
mod pairs {
    use std::collections::HashMap;
    use std::hash::Hash;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer, K: Serialize + Ord, V: Serialize, H>(
        map: &HashMap<K, V, H>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut pairs: Vec<(&K, &V)> = map.iter().collect();
        pairs.sort_unstable_by(|a, b| a.0.cmp(b.0));
        serializer.collect_seq(pairs)
    }

    pub(super) fn deserialize<'de, D, K, V, H>(
        deserializer: D,
    ) -> Result<HashMap<K, V, H>, D::Error>
    where
        D: Deserializer<'de>,
        K: Deserialize<'de> + Eq + Hash,
        V: Deserialize<'de>,
        H: std::hash::BuildHasher + Default,
    {
        Vec::<(K, V)>::deserialize(deserializer).map(|pairs| pairs.into_iter().collect())
    }
}

/// The hash of the key times' map: fast, and seeded by the engine's own seed
/// ([`Config::seed`]), not the OS, so that the engine reads no randomness, while a player
/// who would grind addresses into one bucket does not know the hash.
type KeyHasher = foldhash::fast::FixedState;

/// The optional in-memory log of [`Engine::with_log`]. Not part of the state: it compares
/// equal to any other.
#[derive(Clone, Debug, Default)]
struct KeptLog(Option<Vec<Event>>);

impl PartialEq for KeptLog {
    fn eq(&self, _: &KeptLog) -> bool {
        true
    }
}

/// The events of the command being executed.
struct Batch {
    now: u64,
    events: Vec<Event>,
}

impl Engine {
    /// The least time between two sweeps of memory ([`EventKind::Forgotten`]), so that
    /// they cost the log one event a minute at most.
    ///
    /// [`EventKind::Forgotten`]: crate::EventKind::Forgotten
    pub const SWEEP_EVERY_MS: u64 = 60_000;

    /// An empty engine.
    ///
    /// # Panics
    /// When the payout rules pay out more than 100%.
    #[must_use]
    pub fn new(config: Config) -> Engine {
        assert!(config.payouts.is_valid(), "payout shares are at most 100%");
        let stripes = usize::from(config.match_id_stripes.get());
        let key_hasher = KeyHasher::with_seed(config.seed);
        Engine {
            config,
            next_seq: 1,
            next_match: vec![1; stripes],
            clock_ms: 0,
            key_ms: HashMap::with_hasher(key_hasher),
            floor_ms: 0,
            matches: BTreeMap::new(),
            live: BTreeSet::new(),
            deadlines: BTreeSet::new(),
            challenges_to: BTreeSet::new(),
            active: BTreeMap::new(),
            queue: BTreeMap::new(),
            ledger: Ledger::default(),
            stats: BTreeMap::new(),
            idempotency: BTreeMap::new(),
            idempotency_order: BTreeSet::new(),
            finished_order: BTreeSet::new(),
            puzzles: BTreeMap::new(),
            puzzlers: BTreeMap::new(),
            rated_attempts: BTreeSet::new(),
            tournaments: BTreeMap::new(),
            open_tournaments: BTreeSet::new(),
            ended_tournaments: BTreeSet::new(),
            next_tournament: first_id(),
            last_resumed_ms: 0,
            log: KeptLog(None),
        }
    }

    /// An empty engine that also keeps its own event log in memory, for tests and
    /// examples ([`log_for_tests`](Engine::log_for_tests)). The log is not part of the
    /// state: two engines compare equal whether or not they keep one.
    #[must_use]
    pub fn with_log(config: Config) -> Engine {
        let mut engine = Engine::new(config);
        engine.log = KeptLog(Some(Vec::new()));
        engine
    }

    /// The state rebuilt from an event log.
    ///
    /// # Panics
    /// When the log is not one this engine could have written (a gap in the sequence
    /// numbers, time going backwards, money that does not add up).
    #[must_use]
    pub fn replay<'a>(config: Config, events: impl IntoIterator<Item = &'a Event>) -> Engine {
        let mut engine = Engine::new(config);
        for event in events {
            engine.apply(event);
        }
        engine
    }

    /// The events applied so far, when made by [`with_log`](Engine::with_log); else empty.
    #[must_use]
    pub fn log_for_tests(&self) -> &[Event] {
        self.log.0.as_deref().unwrap_or(&[])
    }

    /// Executes a command: validates it and either refuses it (nothing changes) or applies
    /// the events it causes and returns them.
    ///
    /// # Errors
    /// An [`EngineError`] with a stable code; the state is unchanged.
    pub fn execute(&mut self, envelope: &Envelope) -> Result<Receipt, EngineError> {
        // Time never goes backwards under a key: a command runs no earlier than the latest
        // event under its keys, and keeps its own time from commands under others.
        let now = self.command_time(envelope);
        let actor = envelope.actor;
        if let Some(key) = envelope.idempotency_key
            && let Some(entry) = self.idempotency.get(&(actor, key))
            && entry
                .at_ms
                .saturating_add(self.config.idempotency_window_ms)
                > now
        {
            if entry.command != envelope.command {
                return Err(EngineError::IdempotencyKeyReused);
            }
            return Ok(Receipt {
                events: Vec::new(),
                duplicate: Some(Duplicate::Command {
                    first_seq: entry.first_seq,
                    last_seq: entry.last_seq,
                    match_id: entry.match_id,
                }),
            });
        }
        let mut batch = Batch {
            now,
            events: Vec::new(),
        };
        let result = self.dispatch(actor, &envelope.command, &mut batch);
        // Every handler validates before it emits: a refusal must leave nothing behind.
        assert!(
            result.is_ok() || batch.events.is_empty(),
            "{} refused after emitting events",
            envelope.command.name()
        );
        let duplicate = result?;
        let batch_len = u32::try_from(batch.events.len()).expect("a batch is small");
        if let (Some(key), Some(last)) = (envelope.idempotency_key, batch.events.last_mut()) {
            let applied = Applied {
                actor,
                key,
                command: envelope.command.clone(),
                batch_len,
            };
            self.remember(last.seq, last.at_ms, last.match_id(), &applied);
            if let Some(log) = &mut self.log.0 {
                log.last_mut().expect("the batch is logged").applied = Some(applied.clone());
            }
            last.applied = Some(applied);
        }
        Ok(Receipt {
            events: batch.events,
            duplicate,
        })
    }

    fn dispatch(
        &mut self,
        actor: Address,
        command: &Command,
        b: &mut Batch,
    ) -> Result<Option<Duplicate>, EngineError> {
        // The zero address is nobody (the SOS contract's "no player", its tie's winner): it may not
        // act, or `Win(0)` would be ambiguous. The clock's `Tick` may come from anyone; the
        // clock's `ResumeClocks` only from the zero address (see `resume_clocks`).
        if actor.is_zero() && !matches!(command, Command::Tick | Command::ResumeClocks { .. }) {
            return Err(EngineError::ZeroAddress);
        }
        match *command {
            Command::Challenge {
                opponent,
                game,
                stake,
                first,
            } => self.challenge(actor, opponent, game, stake, first, b),
            Command::AcceptChallenge { match_id, terms } => self.accept(actor, match_id, terms, b),
            Command::DeclineChallenge { match_id } => self.decline(actor, match_id, b),
            Command::JoinQueue { game, stake } => self.join_queue(actor, game, stake, b),
            Command::Cancel { match_id } => self.cancel(actor, match_id, b),
            Command::PlayComputer { game, level, side } => {
                self.play_computer(actor, game, level, side, b)
            }
            Command::Move {
                match_id,
                seq,
                cell,
                mark,
                signed,
            } => return self.play_move(actor, match_id, (seq, cell, mark), signed, b),
            Command::Forfeit { match_id } => self.forfeit(actor, match_id, b),
            Command::ClaimTimeout { match_id } => self.claim_timeout(actor, match_id, b),
            Command::Abort { match_id } => self.abort(actor, match_id, b),
            Command::Rematch { match_id } => self.rematch(actor, match_id, b),
            Command::Deposit { to, amount } => self.deposit(actor, to, amount, b),
            Command::Withdraw { amount } => self.withdraw(actor, amount, b),
            Command::CollectReserve => self.collect(actor, b),
            Command::Tick => {
                self.tick(b);
                Ok(())
            }
            Command::AttemptPuzzle { puzzle, ref line } => {
                self.attempt_puzzle(actor, puzzle, line, b)
            }
            Command::CreateTournament { ref spec } => self.create_tournament(actor, spec, b),
            Command::JoinTournament { tournament, bot } => {
                self.join_tournament(actor, tournament, bot, b)
            }
            Command::LeaveTournament { tournament } => self.leave_tournament(actor, tournament, b),
            Command::PauseTournament { tournament, paused } => {
                self.pause_tournament(actor, tournament, paused, b)
            }
            Command::CancelTournament { tournament } => {
                self.cancel_tournament(actor, tournament, b)
            }
            Command::ResumeClocks { down_since_ms } => self.resume_clocks(actor, down_since_ms, b),
        }
        .map(|()| None)
    }
}

/// Match ids, each from its stripe's counter ([`Config::match_id_stripes`]).
impl Engine {
    /// Stripe `stripe`'s next id.
    fn next_in_stripe(&self, stripe: u16) -> MatchId {
        let stripes = u64::from(self.config.match_id_stripes.get());
        MatchId(self.next_match[usize::from(stripe)] * stripes + u64::from(stripe))
    }

    /// A match id's stripe, and its count within the stripe.
    fn match_id_place(&self, id: MatchId) -> (u16, u64) {
        let stripes = u64::from(self.config.match_id_stripes.get());
        let stripe = u16::try_from(id.0 % stripes).expect("a stripe is below a u16 count");
        (stripe, id.0 / stripes)
    }

    /// Whether no match has had `id`, and one may still get it: its stripe's counter has
    /// not reached it. (Ids below the stripe count are never given.)
    fn is_new_match_id(&self, id: MatchId) -> bool {
        let (stripe, count) = self.match_id_place(id);
        count >= self.next_match[usize::from(stripe)]
    }
}
