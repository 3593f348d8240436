//! The state machine: commands in, events out; the state is a fold of the events.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use arrayvec::ArrayVec;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use triad_rules::{AnyGame, CellSet, GameKind, Move, Outcome, Player};
use triad_solver::Strength;

use crate::{
    Account, Address, Applied, Challenge, Command, Config, EndReason, EngineError, Envelope, Event,
    EventKind, IdempotencyKey, Ledger, Level, Match, MatchId, MatchResult, Origin, Phase,
    PlayerStats, Seat, StartChoice, Terms, Transfer, TransferReason,
    config::RematchStart,
    matches::{Deadline, DeadlineKind},
    stats::rate,
};

/// The deadline the clock's `Tick` enforces on a match: every kind but the move timeout,
/// which only fires by itself with `automatic_timeouts` (otherwise the last mover claims it).
fn clock_deadline(config: &Config, m: &Match) -> Option<Deadline> {
    m.deadline(config)
        .filter(|d| d.kind != DeadlineKind::Timeout || config.automatic_timeouts)
}

/// Moves a match's entry in the deadline index from `before` to `after`.
fn reindex(
    deadlines: &mut BTreeSet<(u64, MatchId)>,
    id: MatchId,
    before: Option<u64>,
    after: Option<u64>,
) {
    if before != after {
        if let Some(at_ms) = before {
            deadlines.remove(&(at_ms, id));
        }
        if let Some(at_ms) = after {
            deadlines.insert((at_ms, id));
        }
    }
}

/// Moves a match's entry in the index of open challenges from the opponent `before` to
/// the opponent `after`.
fn reindex_challenge(
    challenges_to: &mut BTreeSet<(Address, MatchId)>,
    id: MatchId,
    before: Option<Address>,
    after: Option<Address>,
) {
    if before != after {
        if let Some(opponent) = before {
            challenges_to.remove(&(opponent, id));
        }
        if let Some(opponent) = after {
            challenges_to.insert((opponent, id));
        }
    }
}

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
    /// Wins, most first (seed 3's hall of fame).
    Wins,
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
/// run(&mut engine, alice, 20, Command::Move { match_id: id, seq: 1, cell: 4, mark: Mark::X }).unwrap();
/// assert_eq!(engine.match_(id).unwrap().game_state(), "----X----");
///
/// let log: Vec<_> = engine.log_for_tests().to_vec();
/// assert_eq!(Engine::replay(Config::new(owner), &log), engine);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Engine {
    config: Config,
    next_seq: u64,
    next_match: u64,
    clock_ms: u64,
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
    idempotency_order: VecDeque<(u64, Address, IdempotencyKey)>,
    /// Finished matches by ending time, to drop them after the retention window.
    finished_order: VecDeque<(u64, MatchId)>,
    #[serde(skip)]
    log: KeptLog,
}

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
    /// An empty engine.
    ///
    /// # Panics
    /// When the payout rules pay out more than 100%.
    #[must_use]
    pub fn new(config: Config) -> Engine {
        assert!(config.payouts.is_valid(), "payout shares are at most 100%");
        Engine {
            config,
            next_seq: 1,
            next_match: 1,
            clock_ms: 0,
            matches: BTreeMap::new(),
            live: BTreeSet::new(),
            deadlines: BTreeSet::new(),
            challenges_to: BTreeSet::new(),
            active: BTreeMap::new(),
            queue: BTreeMap::new(),
            ledger: Ledger::default(),
            stats: BTreeMap::new(),
            idempotency: BTreeMap::new(),
            idempotency_order: VecDeque::new(),
            finished_order: VecDeque::new(),
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

    // ----- queries -------------------------------------------------------------------

    /// The settings.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The sequence number the next event will get.
    #[must_use]
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The time of the last event.
    #[must_use]
    pub fn clock_ms(&self) -> u64 {
        self.clock_ms
    }

    /// The smallest id of a match that can still have an event: the oldest match in
    /// memory, or the next id when none is. A match leaves memory only for good (finished
    /// and past `finished_retention_ms`; a replay forgets at the same events), and new
    /// matches take larger ids, so no event after this point concerns a smaller id.
    #[must_use]
    pub fn oldest_match_id(&self) -> MatchId {
        self.matches
            .keys()
            .next()
            .copied()
            .unwrap_or(MatchId(self.next_match))
    }

    /// A match by id.
    #[must_use]
    pub fn match_(&self, id: MatchId) -> Option<&Match> {
        self.matches.get(&id)
    }

    /// Every match in memory, oldest first: the live ones and those finished within
    /// `finished_retention_ms` (older ones live only in the event log).
    pub fn matches(&self) -> impl Iterator<Item = &Match> {
        self.matches.values()
    }

    /// How many matches are not yet finished, in O(1).
    #[must_use]
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    /// The matches not yet finished.
    pub fn live_matches(&self) -> impl Iterator<Item = &Match> {
        self.live.iter().map(|id| &self.matches[id])
    }

    /// An address's active match (one at most, as in seed 1's registry).
    #[must_use]
    pub fn active_match(&self, address: Address) -> Option<MatchId> {
        self.active.get(&address).copied()
    }

    /// Open challenges addressed to `address`, by match id, from the index of open
    /// challenges (in O(log n + their number), not a scan of the live matches).
    pub fn incoming_challenges(&self, address: Address) -> impl Iterator<Item = &Match> {
        self.challenges_to
            .range((address, MatchId(0))..=(address, MatchId(u64::MAX)))
            .map(|(_, id)| &self.matches[id])
    }

    /// `address`'s own open challenge (none or one): a challenger has one active match,
    /// and an open challenge is its challenger's active match, so it is read from the
    /// registry of active matches in O(log n).
    pub fn outgoing_challenges(&self, address: Address) -> impl Iterator<Item = &Match> {
        self.active
            .get(&address)
            .map(|id| &self.matches[id])
            .filter(|m| {
                m.phase == Phase::Waiting && m.challenge.is_some_and(|c| c.challenger == address)
            })
            .into_iter()
    }

    /// The ledger.
    #[must_use]
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// A player's spendable balance.
    #[must_use]
    pub fn balance(&self, address: Address) -> u128 {
        self.ledger.balance(Account::Player(address))
    }

    /// The house reserve.
    #[must_use]
    pub fn reserve(&self) -> u128 {
        self.ledger.balance(Account::Reserve)
    }

    /// A player's wins, games and rating (zeros and the starting rating for a newcomer).
    #[must_use]
    pub fn stats(&self, address: Address) -> PlayerStats {
        self.stats.get(&address).copied().unwrap_or_default()
    }

    /// Every player with a record.
    pub fn all_stats(&self) -> impl Iterator<Item = (Address, &PlayerStats)> {
        self.stats.iter().map(|(a, s)| (*a, s))
    }

    /// The top `limit` players by `ranking` (ties broken by address, for a stable order).
    #[must_use]
    pub fn leaderboard(&self, ranking: Ranking, limit: usize) -> Vec<(Address, PlayerStats)> {
        let mut rows: Vec<(Address, PlayerStats)> =
            self.stats.iter().map(|(a, s)| (*a, *s)).collect();
        match ranking {
            Ranking::Rating => rows.sort_by(|a, b| {
                b.1.rating
                    .rating
                    .total_cmp(&a.1.rating.rating)
                    .then(a.0.cmp(&b.0))
            }),
            Ranking::Wins => rows.sort_by(|a, b| {
                b.1.wins
                    .cmp(&a.1.wins)
                    .then(a.1.games.cmp(&b.1.games))
                    .then(a.0.cmp(&b.0))
            }),
        }
        rows.truncate(limit);
        rows
    }

    /// How many players wait in the queue for a game and stake.
    #[must_use]
    pub fn queue_len(&self, game: GameKind, stake: u128) -> usize {
        self.queue.get(&(game, stake)).map_or(0, VecDeque::len)
    }

    /// The earliest pending deadline of a live match, if any: when the server should next
    /// send a `Tick`.
    #[must_use]
    pub fn next_deadline_ms(&self) -> Option<u64> {
        self.deadlines.first().map(|&(at_ms, _)| at_ms)
    }

    /// The deadline the clock's `Tick` enforces on a match ([`clock_deadline`]).
    fn clock_deadline(&self, m: &Match) -> Option<Deadline> {
        clock_deadline(&self.config, m)
    }

    /// When a match's clock deadline falls, as the deadline index holds it.
    fn indexed_deadline(&self, id: MatchId) -> Option<u64> {
        let m = self.matches.get(&id)?;
        self.clock_deadline(m).map(|d| d.at_ms)
    }

    /// The address a match is an open challenge to, as the index of open challenges holds it.
    fn indexed_challenge(&self, id: MatchId) -> Option<Address> {
        let m = self.matches.get(&id)?;
        let c = m.challenge?;
        (m.phase == Phase::Waiting).then_some(c.opponent)
    }

    /// Checks every invariant of the state, in O(state): money is conserved and no account
    /// overdrawn; every escrow holds exactly the stakes of a live match; the registry of
    /// active matches agrees with the matches (one per address); the queue holds only
    /// waiting queue matches; the deadline index holds exactly the clock deadline of each
    /// live match, and the index of open challenges exactly the waiting challenges; nobody
    /// won more games than they played.
    ///
    /// # Errors
    /// A description of the first broken invariant.
    pub fn audit(&self) -> Result<(), String> {
        self.ledger.audit()?;
        for (&address, &id) in &self.active {
            let m = self
                .matches
                .get(&id)
                .ok_or(format!("{address:?} active in a forgotten match {id}"))?;
            if !self.live.contains(&id) || !m.participants().contains(&address) {
                return Err(format!(
                    "{address:?} registered in match {id}, which does not hold them"
                ));
            }
        }
        for &id in &self.live {
            let m = self
                .matches
                .get(&id)
                .ok_or(format!("live match {id} is missing"))?;
            if m.phase == Phase::Finished || m.result.is_some() {
                return Err(format!("live match {id} has finished"));
            }
            for address in m.participants() {
                if self.active.get(&address) != Some(&id) {
                    return Err(format!(
                        "match {id} holds {address:?}, the registry does not say so"
                    ));
                }
            }
            let staked = match m.seats {
                Some(seats) => seats.iter().filter(|s| s.address().is_some()).count() as u128,
                None => 1,
            };
            let escrow = self.ledger.balance(Account::Escrow(id));
            let stakes = m.stake.checked_mul(staked);
            if stakes != Some(escrow) {
                return Err(format!(
                    "match {id} escrows {escrow}, its stakes are {staked} x {}",
                    m.stake
                ));
            }
        }
        let deadlines: BTreeSet<(u64, MatchId)> = self
            .live
            .iter()
            .filter_map(|&id| Some((self.indexed_deadline(id)?, id)))
            .collect();
        if let Some(&(at_ms, id)) = deadlines.difference(&self.deadlines).next() {
            return Err(format!(
                "the deadline index misses match {id}, due at {at_ms}"
            ));
        }
        if let Some(&(at_ms, id)) = self.deadlines.difference(&deadlines).next() {
            return Err(format!(
                "the deadline index holds match {id} at {at_ms}, which is not its live deadline"
            ));
        }
        let challenges_to: BTreeSet<(Address, MatchId)> = self
            .live
            .iter()
            .filter_map(|&id| Some((self.indexed_challenge(id)?, id)))
            .collect();
        if let Some(&(opponent, id)) = challenges_to.difference(&self.challenges_to).next() {
            return Err(format!(
                "the challenge index misses match {id}, open to {opponent:?}"
            ));
        }
        if let Some(&(opponent, id)) = self.challenges_to.difference(&challenges_to).next() {
            return Err(format!(
                "the challenge index holds match {id} for {opponent:?}, which is not an open challenge to them"
            ));
        }
        for (account, _) in self.ledger.accounts() {
            if let Account::Escrow(id) = account
                && !self.live.contains(&id)
            {
                return Err(format!(
                    "money left in the escrow of match {id}, which is over"
                ));
            }
        }
        for (&(game, stake), queue) in &self.queue {
            for id in queue {
                let m = &self.matches[id];
                let ok = m.phase == Phase::Waiting
                    && m.origin == Origin::Queue
                    && (m.game(), m.stake) == (game, stake);
                if !ok {
                    return Err(format!("match {id} is queued but not waiting there"));
                }
            }
        }
        for (address, s) in &self.stats {
            if s.wins > s.games || s.draws > s.games {
                return Err(format!("{address:?} won or drew more games than played"));
            }
        }
        Ok(())
    }

    // ----- commands ------------------------------------------------------------------

    /// Executes a command: validates it and either refuses it (nothing changes) or applies
    /// the events it causes and returns them.
    ///
    /// # Errors
    /// An [`EngineError`] with a stable code; the state is unchanged.
    pub fn execute(&mut self, envelope: &Envelope) -> Result<Receipt, EngineError> {
        let now = envelope.now_ms.max(self.clock_ms);
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
            self.forget_old_keys(last.at_ms);
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
        // The zero address is nobody (seed 3's "no player", its tie's winner): it may not
        // act, or `Win(0)` would be ambiguous. The clock's `Tick` may come from anyone.
        if actor.is_zero() && *command != Command::Tick {
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
            } => return self.play_move(actor, match_id, seq, cell, mark, b),
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
        }
        .map(|()| None)
    }

    fn get(&self, id: MatchId) -> Result<&Match, EngineError> {
        self.matches.get(&id).ok_or(EngineError::UnknownMatch)
    }

    fn ensure_free(&self, address: Address) -> Result<(), EngineError> {
        match self.active.get(&address) {
            Some(&match_id) => Err(EngineError::AlreadyInMatch { match_id }),
            None => Ok(()),
        }
    }

    fn ensure_stake(&self, address: Address, stake: u128) -> Result<(), EngineError> {
        self.ensure_stake_after_refund(address, stake, 0)
    }

    /// [`Self::ensure_stake`] once `refund` more is back in the account.
    fn ensure_stake_after_refund(
        &self,
        address: Address,
        stake: u128,
        refund: u128,
    ) -> Result<(), EngineError> {
        if stake > self.config.max_stake {
            return Err(EngineError::StakeTooLarge {
                max: self.config.max_stake,
            });
        }
        let available = self.balance(address).saturating_add(refund);
        if available < stake {
            return Err(EngineError::InsufficientBalance {
                needed: stake,
                available,
            });
        }
        Ok(())
    }

    /// The challenge `actor` issued to `opponent` that is still waiting for an answer, if
    /// `actor`'s active match is one, with the stake it holds in escrow.
    fn crossed_challenge(&self, actor: Address, opponent: Address) -> Option<(MatchId, u128)> {
        let &own = self.active.get(&actor)?;
        let m = self.matches.get(&own)?;
        let challenge = m.challenge?;
        (m.phase == Phase::Waiting && m.host == actor && challenge.opponent == opponent)
            .then_some((own, m.stake))
    }

    fn new_match_id(&self) -> MatchId {
        MatchId(self.next_match)
    }

    /// A generator for one random decision, derived from the seed and the position in the
    /// log, so a replay needs no generator at all (the decision is in the event).
    fn rng(&self, purpose: u8) -> ChaCha8Rng {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&self.config.seed.to_le_bytes());
        seed[8..16].copy_from_slice(&self.next_seq.to_le_bytes());
        seed[16] = purpose;
        ChaCha8Rng::from_seed(seed)
    }

    fn challenge(
        &mut self,
        actor: Address,
        opponent: Address,
        game: GameKind,
        stake: u128,
        first: StartChoice,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        if opponent.is_zero() {
            return Err(EngineError::ZeroAddress);
        }
        if opponent == actor {
            return Err(EngineError::SelfPlay);
        }
        self.ensure_free(actor)?;
        self.ensure_stake(actor, stake)?;
        let match_id = self.new_match_id();
        self.emit(
            b,
            EventKind::ChallengeIssued {
                match_id,
                challenger: actor,
                opponent,
                game,
                stake,
                first,
                expires_at_ms: b.now.saturating_add(self.config.challenge_ttl_ms),
            },
        );
        self.escrow(b, match_id, actor, stake);
        Ok(())
    }

    fn open_challenge(
        &self,
        actor: Address,
        id: MatchId,
    ) -> Result<(&Match, Challenge), EngineError> {
        let m = self.get(id)?;
        let Some(challenge) = m.challenge else {
            return Err(EngineError::NotYourChallenge);
        };
        if challenge.opponent != actor {
            return Err(EngineError::NotYourChallenge);
        }
        if m.phase != Phase::Waiting {
            return Err(match m.result {
                Some(r) if r.reason == EndReason::Expired => EngineError::ChallengeExpired,
                _ => EngineError::NotWaiting,
            });
        }
        Ok((m, challenge))
    }

    fn accept(
        &mut self,
        actor: Address,
        id: MatchId,
        terms: Option<Terms>,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let (m, challenge) = self.open_challenge(actor, id)?;
        // What is accepted is what the accepter saw, or nothing.
        if let Some(what) = terms
            .and_then(|t| t.differs_from(m.stake, m.game(), challenge.challenger, challenge.first))
        {
            return Err(EngineError::TermsDiffer { what });
        }
        if b.now >= challenge.expires_at_ms {
            return Err(EngineError::ChallengeExpired);
        }
        let (stake, game) = (m.stake, m.game());
        // Crossed challenges: each challenged the other before either accepted. Accepting
        // one withdraws the acceptor's own (its stake comes back first), instead of each
        // challenge blocking the other until one of them is cancelled by hand.
        match self.crossed_challenge(actor, challenge.challenger) {
            Some((own, own_stake)) => {
                // The withdrawal is a cancel, refunded as a cancel is (the same settlement
                // `finish` makes below). The last check: nothing below can refuse once the
                // withdrawal is emitted.
                let refund = self
                    .config
                    .payouts
                    .settle(EndReason::Cancelled, own_stake, own_stake)
                    .to_each;
                self.ensure_stake_after_refund(actor, stake, refund)?;
                self.finish(b, own, EndReason::Cancelled, None, CellSet::EMPTY);
            }
            None => {
                self.ensure_free(actor)?;
                self.ensure_stake(actor, stake)?;
            }
        }
        let challenger_first = match challenge.first {
            StartChoice::Challenger => true,
            StartChoice::Opponent => false,
            StartChoice::Random => rand::RngExt::random_bool(&mut self.rng(1), 0.5),
        };
        let (c, o) = (Seat::Human(challenge.challenger), Seat::Human(actor));
        let seats = if challenger_first { [c, o] } else { [o, c] };
        self.emit(b, EventKind::ChallengeAccepted { match_id: id });
        self.emit(
            b,
            EventKind::GameStarted {
                match_id: id,
                game,
                stake,
                seats,
                origin: Origin::Challenge,
            },
        );
        self.escrow(b, id, actor, stake);
        Ok(())
    }

    fn decline(&mut self, actor: Address, id: MatchId, b: &mut Batch) -> Result<(), EngineError> {
        let (_, challenge) = self.open_challenge(actor, id)?;
        // Past its expiry the challenge is ending by itself (and refunding the challenger).
        if b.now >= challenge.expires_at_ms {
            return Err(EngineError::ChallengeExpired);
        }
        self.emit(b, EventKind::ChallengeDeclined { match_id: id });
        self.finish(b, id, EndReason::Declined, None, CellSet::EMPTY);
        Ok(())
    }

    fn join_queue(
        &mut self,
        actor: Address,
        game: GameKind,
        stake: u128,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        self.ensure_free(actor)?;
        self.ensure_stake(actor, stake)?;
        let waiting = self
            .queue
            .get(&(game, stake))
            .and_then(|q| q.front().copied());
        match waiting {
            Some(id) => {
                let host = self.matches[&id].host;
                // One active match per address keeps a player out of the queue twice, so
                // the waiting player is never the joiner.
                assert_ne!(host, actor, "a player is never matched with itself");
                self.emit(
                    b,
                    EventKind::GameStarted {
                        match_id: id,
                        game,
                        stake,
                        seats: [Seat::Human(host), Seat::Human(actor)],
                        origin: Origin::Queue,
                    },
                );
                self.escrow(b, id, actor, stake);
            }
            None => {
                let match_id = self.new_match_id();
                self.emit(
                    b,
                    EventKind::Queued {
                        match_id,
                        player: actor,
                        game,
                        stake,
                    },
                );
                self.escrow(b, match_id, actor, stake);
            }
        }
        Ok(())
    }

    fn cancel(&mut self, actor: Address, id: MatchId, b: &mut Batch) -> Result<(), EngineError> {
        let m = self.get(id)?;
        if m.host != actor {
            return Err(match m.challenge {
                Some(c) if c.opponent == actor => EngineError::NotYourChallenge,
                _ => EngineError::NotAPlayer,
            });
        }
        if m.phase != Phase::Waiting {
            return Err(EngineError::NotWaiting);
        }
        let allowed_at = m.cancel_allowed_at_ms(&self.config);
        if b.now < allowed_at {
            return Err(EngineError::WaitNotOver {
                remaining_ms: allowed_at - b.now,
            });
        }
        self.finish(b, id, EndReason::Cancelled, None, CellSet::EMPTY);
        Ok(())
    }

    fn play_computer(
        &mut self,
        actor: Address,
        game: GameKind,
        level: Level,
        side: Player,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        self.ensure_free(actor)?;
        let match_id = self.new_match_id();
        let mut seats = [Seat::Computer(level); 2];
        seats[side.index()] = Seat::Human(actor);
        self.emit(
            b,
            EventKind::GameStarted {
                match_id,
                game,
                stake: 0,
                seats,
                origin: Origin::Computer,
            },
        );
        self.computer_replies(b, match_id);
        Ok(())
    }

    fn play_move(
        &mut self,
        actor: Address,
        id: MatchId,
        seq: u8,
        cell: u8,
        mark: triad_rules::Mark,
        b: &mut Batch,
    ) -> Result<Option<Duplicate>, EngineError> {
        let m = self.get(id)?;
        if m.phase == Phase::Waiting {
            return Err(if m.host == actor {
                EngineError::NotInPlay
            } else {
                EngineError::NotAPlayer
            });
        }
        let player = m.player_of(actor).ok_or(EngineError::NotAPlayer)?;
        let plies = m.seq();
        // A repeat of a move already applied returns the original result.
        if (1..=plies).contains(&seq) {
            let earlier = m.moves[usize::from(seq - 1)];
            let earlier_player = Player::to_move_after(u32::from(seq - 1));
            if earlier.cell.index() == cell && earlier.mark == mark && earlier_player == player {
                return Ok(Some(Duplicate::Move { match_id: id, seq }));
            }
        }
        if m.phase == Phase::Finished {
            return Err(triad_rules::MoveError::GameOver.into());
        }
        let expected = plies + 1;
        if seq < expected {
            return Err(EngineError::StaleSeq { expected });
        }
        if seq > expected {
            return Err(EngineError::SeqAhead { expected });
        }
        // A deadline that has passed but not yet been ticked still binds: the tick that is
        // due would end this match, so a late move may not change the outcome.
        if self.clock_deadline(m).is_some_and(|d| b.now >= d.at_ms) {
            return Err(EngineError::ClockRanOut);
        }
        let checked = m.position.check(player, cell, mark)?;
        self.place(b, id, checked);
        self.computer_replies(b, id);
        Ok(None)
    }

    /// Emits a move, and the ending if it ends the game.
    fn place(&mut self, b: &mut Batch, id: MatchId, mv: Move) {
        let m = &self.matches[&id];
        let player = m.position.turn();
        let by = m.seat(player).expect("a match in play has seats");
        let seq = m.seq() + 1;
        self.emit(
            b,
            EventKind::Moved {
                match_id: id,
                seq,
                player,
                by,
                cell: mv.cell,
                mark: mv.mark,
            },
        );
        match self.matches[&id].position.outcome() {
            Some(Outcome::Win { winner, cells }) => {
                self.finish(b, id, EndReason::Win, Some(winner), cells);
            }
            Some(Outcome::Draw) => self.finish(b, id, EndReason::Draw, None, CellSet::EMPTY),
            None => {}
        }
    }

    /// While the computer is to move, it moves.
    fn computer_replies(&mut self, b: &mut Batch, id: MatchId) {
        loop {
            let m = &self.matches[&id];
            let Some(turn) = m.turn() else { return };
            let Some(Seat::Computer(level)) = m.seat(turn) else {
                return;
            };
            let strength = match level {
                Level::Perfect => Strength::Perfect,
                Level::Casual => Strength::Casual,
                Level::Random => Strength::Random,
            };
            let position = m.position;
            let mv = triad_solver::table(position.kind())
                .choose(&position, strength, &mut self.rng(2))
                .expect("a game in play has a legal move");
            self.place(b, id, mv);
        }
    }

    fn seated(&self, actor: Address, id: MatchId) -> Result<(&Match, Player), EngineError> {
        let m = self.get(id)?;
        if m.phase == Phase::Waiting {
            return Err(if m.host == actor {
                EngineError::NotInPlay
            } else {
                EngineError::NotAPlayer
            });
        }
        let player = m.player_of(actor).ok_or(EngineError::NotAPlayer)?;
        if m.phase == Phase::Finished {
            return Err(triad_rules::MoveError::GameOver.into());
        }
        Ok((m, player))
    }

    fn forfeit(&mut self, actor: Address, id: MatchId, b: &mut Batch) -> Result<(), EngineError> {
        let (_, player) = self.seated(actor, id)?;
        self.finish(
            b,
            id,
            EndReason::Forfeit,
            Some(player.other()),
            CellSet::EMPTY,
        );
        Ok(())
    }

    fn abort(&mut self, actor: Address, id: MatchId, b: &mut Batch) -> Result<(), EngineError> {
        let (m, player) = self.seated(actor, id)?;
        if m.stake > 0 {
            return Err(EngineError::StakedAbort);
        }
        self.emit(
            b,
            EventKind::MatchAborted {
                match_id: id,
                by: player,
            },
        );
        self.finish(b, id, EndReason::Aborted, None, CellSet::EMPTY);
        Ok(())
    }

    fn claim_timeout(
        &mut self,
        actor: Address,
        id: MatchId,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        let (m, player) = self.seated(actor, id)?;
        let deadline = m.deadline(&self.config).ok_or(EngineError::NoDeadline)?;
        if deadline.kind == DeadlineKind::Timeout && m.turn() == Some(player) {
            return Err(EngineError::NotLastMover);
        }
        if b.now < deadline.at_ms {
            return Err(EngineError::DeadlineNotReached {
                remaining_ms: deadline.at_ms - b.now,
                your_move: m.turn() == Some(player),
            });
        }
        match deadline.kind {
            DeadlineKind::Abort => self.finish(b, id, EndReason::Aborted, None, CellSet::EMPTY),
            DeadlineKind::Timeout => {
                self.finish(b, id, EndReason::Timeout, Some(player), CellSet::EMPTY);
            }
            DeadlineKind::ChallengeExpires => {
                unreachable!("a seated match has no challenge deadline")
            }
        }
        Ok(())
    }

    fn rematch(&mut self, actor: Address, id: MatchId, b: &mut Batch) -> Result<(), EngineError> {
        let m = self.get(id)?;
        let played = m.result.is_some_and(|r| r.reason.was_played());
        // The host of a wait or challenge that never started (and the challenged player)
        // took part: they learn there is no rematch, not that they are strangers.
        let invited = m.challenge.is_some_and(|c| c.opponent == actor);
        if !played && (m.involves(actor) || invited) {
            return Err(EngineError::RematchUnavailable);
        }
        let player = m.player_of(actor).ok_or(EngineError::NotAPlayer)?;
        if !played || m.rematch.is_some() {
            return Err(EngineError::RematchUnavailable);
        }
        if m.rematch_offer == Some(player) {
            return Err(EngineError::RematchAlreadyOffered);
        }
        let seats = m.seats.expect("a played match has seats");
        let other = seats[player.other().index()];
        let computer = matches!(other, Seat::Computer(_));
        if !computer && m.rematch_offer.is_none() {
            self.emit(
                b,
                EventKind::RematchOffered {
                    match_id: id,
                    by: player,
                },
            );
            return Ok(());
        }
        // The opponent offered (or is the computer, which always accepts): start it.
        let (stake, game) = (m.stake, m.game());
        self.ensure_free(actor)?;
        self.ensure_stake(actor, stake)?;
        if let Seat::Human(address) = other {
            if self.active.contains_key(&address) {
                return Err(EngineError::OpponentBusy);
            }
            if self.balance(address) < stake {
                return Err(EngineError::OpponentCannotAfford);
            }
        }
        let swap = match self.config.rematch_start {
            RematchStart::Alternate => true,
            RematchStart::Random => rand::RngExt::random_bool(&mut self.rng(3), 0.5),
        };
        let new_seats = if swap { [seats[1], seats[0]] } else { seats };
        let match_id = self.new_match_id();
        self.emit(
            b,
            EventKind::GameStarted {
                match_id,
                game,
                stake,
                seats: new_seats,
                origin: Origin::Rematch { of: id },
            },
        );
        for seat in new_seats {
            if let Seat::Human(address) = seat {
                self.escrow(b, match_id, address, stake);
            }
        }
        self.computer_replies(b, match_id);
        Ok(())
    }

    fn deposit(
        &mut self,
        actor: Address,
        to: Address,
        amount: u128,
        b: &mut Batch,
    ) -> Result<(), EngineError> {
        if actor != self.config.owner {
            return Err(EngineError::OwnerOnly);
        }
        if to.is_zero() {
            return Err(EngineError::ZeroAddress);
        }
        if amount == 0 {
            return Err(EngineError::ZeroAmount);
        }
        if !self.ledger.can_credit(Account::Player(to), amount) {
            return Err(EngineError::AmountTooLarge);
        }
        self.transfer(
            b,
            None,
            Account::Outside,
            Account::Player(to),
            amount,
            TransferReason::Deposit,
        );
        Ok(())
    }

    fn withdraw(&mut self, actor: Address, amount: u128, b: &mut Batch) -> Result<(), EngineError> {
        if amount == 0 {
            return Err(EngineError::ZeroAmount);
        }
        let available = self.balance(actor);
        if available < amount {
            return Err(EngineError::InsufficientBalance {
                needed: amount,
                available,
            });
        }
        self.transfer(
            b,
            None,
            Account::Player(actor),
            Account::Outside,
            amount,
            TransferReason::Withdrawal,
        );
        Ok(())
    }

    fn collect(&mut self, actor: Address, b: &mut Batch) -> Result<(), EngineError> {
        if actor != self.config.owner {
            return Err(EngineError::OwnerOnly);
        }
        let reserve = self.reserve();
        if reserve == 0 {
            return Err(EngineError::NothingToCollect);
        }
        // No overflow check: the reserve is already held inside, and any balance plus the
        // reserve is at most the total held, which fits in a u128.
        self.transfer(
            b,
            None,
            Account::Reserve,
            Account::Player(actor),
            reserve,
            TransferReason::Collect,
        );
        Ok(())
    }

    fn tick(&mut self, b: &mut Batch) {
        let mut due: Vec<(MatchId, DeadlineKind)> = self
            .deadlines
            .iter()
            .take_while(|&&(at_ms, _)| at_ms <= b.now)
            .map(|&(_, id)| {
                let d = self.clock_deadline(&self.matches[&id]);
                (id, d.expect("an indexed match has a deadline").kind)
            })
            .collect();
        // In match order, as they end in the log.
        due.sort_unstable_by_key(|&(id, _)| id);
        for (id, kind) in due {
            match kind {
                DeadlineKind::ChallengeExpires => {
                    self.emit(b, EventKind::ChallengeExpired { match_id: id });
                    self.finish(b, id, EndReason::Expired, None, CellSet::EMPTY);
                }
                DeadlineKind::Abort => self.finish(b, id, EndReason::Aborted, None, CellSet::EMPTY),
                DeadlineKind::Timeout => {
                    let last_mover = self.matches[&id].position.turn().other();
                    self.finish(b, id, EndReason::Timeout, Some(last_mover), CellSet::EMPTY);
                }
            }
        }
    }

    // ----- emitting ------------------------------------------------------------------

    fn emit(&mut self, b: &mut Batch, kind: EventKind) {
        let event = Event {
            seq: self.next_seq,
            at_ms: b.now,
            kind,
            applied: None,
        };
        self.apply(&event);
        b.events.push(event);
    }

    fn transfer(
        &mut self,
        b: &mut Batch,
        match_id: Option<MatchId>,
        from: Account,
        to: Account,
        amount: u128,
        reason: TransferReason,
    ) {
        if amount == 0 {
            return;
        }
        self.emit(
            b,
            EventKind::Transferred {
                match_id,
                transfer: Transfer {
                    from,
                    to,
                    amount,
                    reason,
                },
            },
        );
    }

    fn escrow(&mut self, b: &mut Batch, id: MatchId, from: Address, stake: u128) {
        self.transfer(
            b,
            Some(id),
            Account::Player(from),
            Account::Escrow(id),
            stake,
            TransferReason::Stake,
        );
    }

    /// Ends a match and settles its escrow by the payout rules.
    fn finish(
        &mut self,
        b: &mut Batch,
        id: MatchId,
        reason: EndReason,
        winner: Option<Player>,
        cells: CellSet,
    ) {
        self.emit(
            b,
            EventKind::GameEnded {
                match_id: id,
                reason,
                winner,
                cells,
            },
        );
        let m = &self.matches[&id];
        let escrow = Account::Escrow(id);
        let pot = self.ledger.balance(escrow);
        let humans: ArrayVec<Address, 2> = m.participants();
        let winner_address = winner.and_then(|p| m.seat(p)).and_then(|s| s.address());
        let settlement = self.config.payouts.settle(reason, m.stake, pot);
        let mut pay: ArrayVec<(Address, u128, TransferReason), 2> = ArrayVec::new();
        if reason.was_played() && reason != EndReason::Draw {
            if let Some(w) = winner_address {
                pay.push((w, settlement.to_winner, TransferReason::Payout));
            }
        } else {
            let why = if reason == EndReason::Draw {
                TransferReason::Payout
            } else {
                TransferReason::Refund
            };
            for &h in &humans {
                pay.push((h, settlement.to_each, why));
            }
        }
        let paid: u128 = pay.iter().map(|p| p.1).sum();
        assert!(
            paid <= pot,
            "match {id} pays out {paid} from a pot of {pot}"
        );
        for (to, amount, why) in pay {
            self.transfer(b, Some(id), escrow, Account::Player(to), amount, why);
        }
        self.transfer(
            b,
            Some(id),
            escrow,
            Account::Reserve,
            pot - paid,
            TransferReason::ReserveShare,
        );
        assert_eq!(self.ledger.balance(escrow), 0, "match {id} settled in full");
    }

    // ----- applying ------------------------------------------------------------------

    /// Applies one event: the only way the state changes. [`execute`](Engine::execute)
    /// calls it for the events it emits; [`replay`](Engine::replay) for a stored log.
    ///
    /// # Panics
    /// When the event does not follow from the state (a gap in the sequence numbers, time
    /// going backwards, a transfer that would overdraw an account, a move that breaks the
    /// rules): the log is corrupt.
    pub fn apply(&mut self, event: &Event) {
        assert_eq!(
            event.seq, self.next_seq,
            "events apply in sequence, without gaps"
        );
        assert!(event.at_ms >= self.clock_ms, "time does not go backwards");
        let now = event.at_ms;
        // The match the event concerns is the only one whose clock deadline or open
        // challenge can change (a rematch also marks the finished match it follows, which
        // has neither); a transfer changes no match, and a move, the commonest event,
        // updates the deadline index itself (a moving match is no open challenge).
        let touched = match event.kind {
            EventKind::Transferred { .. } | EventKind::Moved { .. } => None,
            _ => event.match_id(),
        };
        let deadline_before = touched.and_then(|id| self.indexed_deadline(id));
        let challenge_before = touched.and_then(|id| self.indexed_challenge(id));
        match &event.kind {
            &EventKind::ChallengeIssued {
                match_id,
                challenger,
                opponent,
                game,
                stake,
                first,
                expires_at_ms,
            } => {
                self.create(match_id, game, stake, challenger, Origin::Challenge, now);
                let m = self.matches.get_mut(&match_id).expect("just created");
                m.challenge = Some(Challenge {
                    challenger,
                    opponent,
                    first,
                    expires_at_ms,
                });
            }
            EventKind::ChallengeAccepted { match_id }
            | EventKind::ChallengeDeclined { match_id }
            | EventKind::ChallengeExpired { match_id } => {
                assert_eq!(self.matches[match_id].phase, Phase::Waiting);
            }
            &EventKind::Queued {
                match_id,
                player,
                game,
                stake,
            } => {
                self.create(match_id, game, stake, player, Origin::Queue, now);
                self.queue
                    .entry((game, stake))
                    .or_default()
                    .push_back(match_id);
            }
            &EventKind::GameStarted {
                match_id,
                game,
                stake,
                seats,
                origin,
            } => {
                if let Origin::Computer | Origin::Rematch { .. } = origin {
                    let host = seats.iter().find_map(Seat::address).expect("a human plays");
                    self.create(match_id, game, stake, host, origin, now);
                }
                if let Origin::Rematch { of } = origin {
                    let previous = self.matches.get_mut(&of).expect("rematch of a known match");
                    previous.rematch = Some(match_id);
                    previous.rematch_offer = None;
                }
                if origin == Origin::Queue {
                    let queue = self.queue.get_mut(&(game, stake)).expect("queued");
                    assert_eq!(
                        queue.pop_front(),
                        Some(match_id),
                        "the earliest joiner is matched"
                    );
                    if queue.is_empty() {
                        self.queue.remove(&(game, stake));
                    }
                }
                let m = self.matches.get_mut(&match_id).expect("the match exists");
                assert_eq!(m.phase, Phase::Waiting, "a match starts once");
                assert_eq!((m.game(), m.stake), (game, stake));
                m.seats = Some(seats);
                m.phase = Phase::Ready;
                m.last_activity_ms = now;
                for address in seats.iter().filter_map(Seat::address) {
                    let previous = self.active.insert(address, match_id);
                    assert!(
                        previous.is_none() || previous == Some(match_id),
                        "one active match per address"
                    );
                }
            }
            &EventKind::Moved {
                match_id,
                seq,
                player,
                by,
                cell,
                mark,
            } => {
                let m = self.matches.get_mut(&match_id).expect("the match exists");
                assert!(matches!(m.phase, Phase::Ready | Phase::InProgress));
                let deadline_before = clock_deadline(&self.config, m).map(|d| d.at_ms);
                assert_eq!(seq, m.seq() + 1);
                assert_eq!(m.seat(player), Some(by));
                let (position, mv) = m
                    .position
                    .play_as(player, cell.index(), mark)
                    .expect("a logged move is legal");
                m.position = position;
                m.moves.push(mv);
                m.phase = Phase::InProgress;
                m.last_activity_ms = now;
                let deadline_after = clock_deadline(&self.config, m).map(|d| d.at_ms);
                reindex(
                    &mut self.deadlines,
                    match_id,
                    deadline_before,
                    deadline_after,
                );
            }
            &EventKind::GameEnded {
                match_id,
                reason,
                winner,
                cells,
            } => self.end(match_id, reason, winner, cells, now),
            &EventKind::MatchAborted { match_id, by } => {
                let m = &self.matches[&match_id];
                assert!(matches!(m.phase, Phase::Ready | Phase::InProgress));
                assert_eq!(m.stake, 0, "only a free match is aborted");
                assert!(m.seat(by).is_some_and(|s| s.address().is_some()));
            }
            &EventKind::RematchOffered { match_id, by } => {
                let m = self.matches.get_mut(&match_id).expect("the match exists");
                assert_eq!(m.phase, Phase::Finished);
                m.rematch_offer = Some(by);
            }
            EventKind::Transferred { transfer, .. } => self.ledger.apply(transfer),
        }
        if let Some(id) = touched {
            let deadline_after = self.indexed_deadline(id);
            reindex(&mut self.deadlines, id, deadline_before, deadline_after);
            let challenge_after = self.indexed_challenge(id);
            reindex_challenge(
                &mut self.challenges_to,
                id,
                challenge_before,
                challenge_after,
            );
        }
        self.next_seq += 1;
        self.clock_ms = now;
        if let Some(applied) = &event.applied {
            self.remember(event.seq, now, event.match_id(), applied);
        }
        self.forget_old_keys(now);
        self.forget_old_matches(now);
        if let Some(log) = &mut self.log.0 {
            log.push(event.clone());
        }
    }

    fn create(
        &mut self,
        id: MatchId,
        game: GameKind,
        stake: u128,
        host: Address,
        origin: Origin,
        now: u64,
    ) {
        assert_eq!(id.0, self.next_match, "match ids are given in order");
        self.next_match += 1;
        let m = Match {
            id,
            origin,
            stake,
            phase: Phase::Waiting,
            host,
            challenge: None,
            seats: None,
            position: AnyGame::new(game),
            moves: ArrayVec::new(),
            created_ms: now,
            last_activity_ms: now,
            rematch_offer: None,
            rematch: None,
            result: None,
        };
        self.matches.insert(id, m);
        self.live.insert(id);
        if origin != Origin::Computer && !matches!(origin, Origin::Rematch { .. }) {
            let previous = self.active.insert(host, id);
            assert!(previous.is_none(), "one active match per address");
        }
    }

    fn end(
        &mut self,
        id: MatchId,
        reason: EndReason,
        winner: Option<Player>,
        cells: CellSet,
        now: u64,
    ) {
        let m = self.matches.get_mut(&id).expect("the match exists");
        assert_ne!(m.phase, Phase::Finished, "a match ends once");
        if m.phase == Phase::Waiting {
            let queued = self.queue.get_mut(&(m.position.kind(), m.stake));
            if let Some(queue) = queued {
                queue.retain(|q| *q != id);
                if queue.is_empty() {
                    self.queue.remove(&(m.position.kind(), m.stake));
                }
            }
        }
        m.phase = Phase::Finished;
        m.result = Some(MatchResult {
            reason,
            winner,
            cells,
            ended_ms: now,
        });
        for address in m.participants() {
            let removed = self.active.remove(&address);
            assert_eq!(removed, Some(id), "the ending frees every participant");
        }
        self.live.remove(&id);
        self.finished_order.push_back((now, id));
        let m = &self.matches[&id];
        // The hall of fame and the ratings count played games between two people.
        if let (true, Some([Seat::Human(a), Seat::Human(b)])) = (reason.was_played(), m.seats) {
            let (mut sa, mut sb) = (self.stats(a), self.stats(b));
            let first_won = winner.map(|w| w == Player::First);
            sa.count(first_won == Some(true), first_won.is_none());
            sb.count(first_won == Some(false), first_won.is_none());
            (sa.rating, sb.rating) = rate(sa.rating, sb.rating, first_won);
            self.stats.insert(a, sa);
            self.stats.insert(b, sb);
        }
    }

    /// Remembers a keyed command by its last event (at `last_seq`, of `match_id`): every
    /// command's last event belongs to the match it concerned (a challenge's escrow or
    /// issue, a start's last escrow or the computer's reply, a move's ending), or to none
    /// for money that is no match's.
    fn remember(
        &mut self,
        last_seq: u64,
        at_ms: u64,
        match_id: Option<MatchId>,
        applied: &Applied,
    ) {
        let first_seq = last_seq + 1 - u64::from(applied.batch_len);
        self.idempotency.insert(
            (applied.actor, applied.key),
            IdempotencyEntry {
                command: applied.command.clone(),
                first_seq,
                last_seq,
                at_ms,
                match_id,
            },
        );
        self.idempotency_order
            .push_back((at_ms, applied.actor, applied.key));
    }

    /// Drops finished matches older than the retention window. Strictly older: a match
    /// ended by the current command stays while the command settles it.
    fn forget_old_matches(&mut self, now: u64) {
        while let Some(&(ended_ms, id)) = self.finished_order.front() {
            if ended_ms.saturating_add(self.config.finished_retention_ms) >= now {
                break;
            }
            self.finished_order.pop_front();
            let removed = self.matches.remove(&id);
            assert!(
                removed.is_some_and(|m| m.phase == Phase::Finished),
                "only finished matches are forgotten"
            );
        }
    }

    fn forget_old_keys(&mut self, now: u64) {
        while let Some(&(at_ms, actor, key)) = self.idempotency_order.front() {
            if at_ms.saturating_add(self.config.idempotency_window_ms) > now {
                break;
            }
            self.idempotency_order.pop_front();
            if self
                .idempotency
                .get(&(actor, key))
                .is_some_and(|e| e.at_ms == at_ms)
            {
                self.idempotency.remove(&(actor, key));
            }
        }
    }
}
