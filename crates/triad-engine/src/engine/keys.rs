//! What a command may read or write, named by keys: the footing of partitioned ordering
//! (ARCHITECTURE.md, "Partitioned ordering"), where commands under disjoint keys run
//! side by side instead of one after another.
//!
//! [`Engine::keys`] names, from the state before a command, every part of the state the
//! command may read or change: the addresses it concerns (each address's account,
//! registry slot, idempotency keys, ratings and the matches it plays), the queue it joins,
//! the tournament or the puzzle it touches, and the few counters and totals that are
//! shared. The property that makes keys worth having, tested by the simulation
//! (`tests/simulation.rs`, `commands_with_disjoint_keys_commute`): two commands whose keys
//! do not [`overlap`](Keys::overlap), executed at the same instant, give the same
//! answers and the same state in either order, but for their places in the log.

use std::collections::BTreeSet;

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};
use triad_rules::GameKind;
use triad_solver::puzzles::PuzzleId;

use super::Engine;
use crate::{
    Account, Address, Command, Envelope, Event, EventKind, Match, MatchId, Origin, Phase,
    TournamentId, TransferReason,
};

/// One part of the engine's state that commands share.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Key {
    /// Everything: the clock's commands (`Tick`, `ResumeClocks`), which may end any match
    /// or pair any tournament, and the owner's collection of the reserve, which every
    /// ending pays into.
    All,
    /// One stripe's counter of match ids
    /// ([`Config::match_id_stripes`](crate::Config::match_id_stripes)): a command that may
    /// create a match in it (the actor's stripe,
    /// [`Config::match_id_stripe`](crate::Config::match_id_stripe)), or that names one of
    /// its ids not given yet (whose answer, "unknown match", a new match would change).
    MatchIds(u16),
    /// The counter of tournament ids and the count of open tournaments, which bounds
    /// creation.
    TournamentIds,
    /// The ledger's total of everything ever deposited, which bounds a deposit.
    Supply,
    /// One address: its account, registry slot (its one active match), idempotency keys,
    /// ratings and puzzle record, and the matches it plays.
    Address(Address),
    /// The queue for one game and stake.
    Queue(GameKind, u128),
    /// One tournament: its entrants, standings, pool and pairings.
    Tournament(TournamentId),
    /// One puzzle's rating.
    Puzzle(PuzzleId),
}

/// The keys of one command ([`Engine::keys`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keys(BTreeSet<Key>);

impl Keys {
    /// Whether two commands with these keys must be ordered: they share a key, or either
    /// holds [`Key::All`].
    #[must_use]
    pub fn overlap(&self, other: &Keys) -> bool {
        self.0.contains(&Key::All) || other.0.contains(&Key::All) || !self.0.is_disjoint(&other.0)
    }

    /// The keys, in order (the order in which locks on them are taken, so that two commands
    /// never wait for each other in a circle).
    pub fn iter(&self) -> impl Iterator<Item = Key> + '_ {
        self.0.iter().copied()
    }
}

/// Where a command's or an event's keys are named, one by one: a set of them ([`Keys`]), a
/// short list (an event's, in `apply`), or the latest time among them ([`Latest`]), so
/// that the hot path allocates nothing.
pub(super) trait KeySink {
    fn add(&mut self, key: Key);
}

impl KeySink for Keys {
    fn add(&mut self, key: Key) {
        self.0.insert(key);
    }
}

/// An event's keys: at most 8 (a transfer between a match's escrow, which names the up to
/// four addresses it concerns, and an account; a match's event: its four and its queue).
pub(super) type EventKeys = ArrayVec<Key, 8>;

impl KeySink for EventKeys {
    fn add(&mut self, key: Key) {
        self.push(key);
    }
}

/// The latest time under the keys named: never before the floor, and for [`Key::All`],
/// the latest of all ([`Engine::time_under`]).
struct Latest<'a> {
    engine: &'a Engine,
    ms: u64,
    /// The first key named: a command's actor, whom its match's keys often name again.
    first: Option<Key>,
}

impl<'a> Latest<'a> {
    fn new(engine: &'a Engine) -> Latest<'a> {
        Latest {
            engine,
            ms: engine.floor_ms,
            first: None,
        }
    }
}

impl KeySink for Latest<'_> {
    fn add(&mut self, key: Key) {
        match self.first {
            None => self.first = Some(key),
            Some(first) if first == key => return,
            Some(_) => {}
        }
        let ms = match key {
            Key::All => self.engine.clock_ms,
            key => self.engine.key_ms.get(&key).copied().unwrap_or(0),
        };
        self.ms = self.ms.max(ms);
    }
}

impl Engine {
    /// The keys of `envelope`'s command, from the state now: every part of the state it
    /// may read or change. A command may be refused; its keys still cover what the refusal
    /// read.
    ///
    /// ```
    /// use triad_engine::{Address, Command, Config, Engine, Envelope, Key, StartChoice};
    /// use triad_rules::GameKind;
    ///
    /// let [owner, a, b, c, d] = [9, 1, 2, 3, 4].map(|i| Address::from_bytes([i; 32]));
    /// let engine = Engine::new(Config::new(owner));
    /// let challenge = |who, opponent| {
    ///     let first = StartChoice::Challenger;
    ///     Envelope::new(who, 0, Command::Challenge { opponent, game: GameKind::Sos, stake: 0, first })
    /// };
    /// let deposit = |to| Envelope::new(owner, 0, Command::Deposit { to, amount: 5 });
    /// let keys = |envelope: &Envelope| engine.keys(envelope);
    /// // Two challenges both take a match id from the one counter: ordered.
    /// assert!(keys(&challenge(a, b)).overlap(&keys(&challenge(c, d))));
    /// // With the ids in stripes, challengers of two stripes create side by side.
    /// let mut striped = Config::new(owner);
    /// striped.match_id_stripes = std::num::NonZeroU16::new(16).unwrap();
    /// assert_ne!(striped.match_id_stripe(a), striped.match_id_stripe(c));
    /// let striped = Engine::new(striped);
    /// assert!(!striped.keys(&challenge(a, b)).overlap(&striped.keys(&challenge(c, d))));
    /// // A deposit to a third player and a challenge between two others: side by side.
    /// assert!(!keys(&deposit(c)).overlap(&keys(&challenge(a, b))));
    /// assert!(keys(&deposit(a)).overlap(&keys(&challenge(a, b))));
    /// // The clock orders itself after everything.
    /// let tick = Envelope::new(owner, 0, Command::Tick);
    /// assert!(keys(&tick).iter().any(|k| k == Key::All));
    /// assert!(keys(&tick).overlap(&keys(&deposit(c))));
    /// ```
    #[must_use]
    pub fn keys(&self, envelope: &Envelope) -> Keys {
        let mut keys = Keys::default();
        self.name_keys(envelope, &mut keys);
        keys
    }

    /// The time `envelope`'s command runs at: its own, raised to the latest event under
    /// its keys ([`time_under`](Engine::time_under)), found without collecting them. No
    /// key's time is later than the latest event's, so a command sent at or after it (as
    /// one node's commands are, its clock never going back) runs at its own time without
    /// a look at its keys.
    pub(super) fn command_time(&self, envelope: &Envelope) -> u64 {
        if envelope.now_ms >= self.clock_ms {
            return envelope.now_ms;
        }
        let mut latest = Latest::new(self);
        self.name_keys(envelope, &mut latest);
        envelope.now_ms.max(latest.ms)
    }

    fn name_keys(&self, envelope: &Envelope, keys: &mut impl KeySink) {
        // Every command reads the actor's idempotency keys and registry slot.
        keys.add(Key::Address(envelope.actor));
        match envelope.command {
            Command::Tick | Command::ResumeClocks { .. } | Command::CollectReserve => {
                keys.add(Key::All);
            }
            Command::Challenge { opponent, .. } => {
                keys.add(Key::Address(opponent));
                keys.add(self.creates_in(envelope.actor));
            }
            // A crossed challenge, which accepting withdraws, is between the same two
            // players; any other match of the acceptor's refuses the acceptance, which
            // reads only the acceptor's registry slot.
            Command::AcceptChallenge { match_id, .. } => self.match_keys(match_id, keys),
            // A game's ending in a tournament scores it in its two entrants' records,
            // under their addresses' keys: a tournament's key is for what concerns all of
            // its entrants (joining, leaving, pairing, calling it off).
            Command::DeclineChallenge { match_id }
            | Command::Move { match_id, .. }
            | Command::Forfeit { match_id }
            | Command::ClaimTimeout { match_id }
            | Command::Abort { match_id } => self.match_keys(match_id, keys),
            Command::Cancel { match_id } => {
                self.match_keys(match_id, keys);
                if let Some(m) = self.matches.get(&match_id)
                    && m.origin == Origin::Queue
                {
                    keys.add(Key::Queue(m.game(), m.stake));
                }
            }
            Command::Rematch { match_id } => {
                self.match_keys(match_id, keys);
                keys.add(self.creates_in(envelope.actor));
            }
            Command::JoinQueue { game, stake } => {
                keys.add(Key::Queue(game, stake));
                // The player who waits there, whose match the joiner would start; or, with
                // nobody waiting, the match the joiner would wait in.
                match self.queue.get(&(game, stake)).and_then(|q| q.front()) {
                    Some(&waiting) => self.match_keys(waiting, keys),
                    None => keys.add(self.creates_in(envelope.actor)),
                }
            }
            Command::PlayComputer { .. } => keys.add(self.creates_in(envelope.actor)),
            Command::Deposit { to, .. } => {
                keys.add(Key::Address(to));
                keys.add(Key::Supply);
            }
            // A withdrawal reads its own account only: it adds to the total withdrawn,
            // which no command reads (a deposit is bounded by what was ever deposited).
            Command::Withdraw { .. } => {}
            Command::AttemptPuzzle { puzzle, .. } => keys.add(Key::Puzzle(puzzle)),
            Command::CreateTournament { .. } => keys.add(Key::TournamentIds),
            Command::JoinTournament { tournament, .. }
            | Command::LeaveTournament { tournament }
            | Command::PauseTournament { tournament, .. } => {
                self.tournament_keys(tournament, false, keys);
            }
            Command::CancelTournament { tournament } => {
                // Calling one off refunds every entrant and frees a place among the open
                // tournaments.
                self.tournament_keys(tournament, true, keys);
                keys.add(Key::TournamentIds);
            }
        }
    }

    /// The time a command under `keys` runs at, at the earliest: the latest event's under
    /// any of them, never before the last event under [`Key::All`]; for the clock's
    /// commands, which hold `Key::All`, the latest event's of all. So time never goes
    /// backwards under one key, and commands under disjoint keys keep their own times.
    ///
    /// ```
    /// use triad_engine::{Address, Command, Config, Engine, Envelope};
    ///
    /// let [owner, a, b] = [9, 1, 2].map(|i| Address::from_bytes([i; 32]));
    /// let mut engine = Engine::new(Config::new(owner));
    /// let deposit = |to, now_ms| Envelope::new(owner, now_ms, Command::Deposit { to, amount: 5 });
    /// engine.execute(&deposit(a, 100)).unwrap();
    /// engine.execute(&Envelope::new(a, 300, Command::Withdraw { amount: 1 })).unwrap();
    /// // A withdrawal by b shares no key with a's: its own time stands.
    /// let under = |who| engine.time_under(&engine.keys(&Envelope::new(who, 0, Command::Withdraw { amount: 1 })));
    /// assert_eq!((under(a), under(b)), (300, 0));
    /// // The owner's deposits share the owner's key and the supply: the first one's time.
    /// assert_eq!(engine.time_under(&engine.keys(&deposit(b, 0))), 100);
    /// ```
    #[must_use]
    pub fn time_under(&self, keys: &Keys) -> u64 {
        let mut latest = Latest::new(self);
        keys.iter().for_each(|key| latest.add(key));
        latest.ms
    }

    /// The keys whose state `event` changes, from the state before it: a part of the keys
    /// of the command that caused it, so that the command's time, raised to its keys'
    /// ([`time_under`](Engine::time_under)), is not before theirs. The clock's own events
    /// (an outage given back, memory swept) hold [`Key::All`].
    pub(super) fn event_keys(&self, event: &Event) -> EventKeys {
        let mut keys = EventKeys::new();
        let stripe = |id: MatchId| Key::MatchIds(self.match_id_place(id).0);
        match &event.kind {
            &EventKind::ChallengeIssued {
                match_id,
                challenger,
                opponent,
                ..
            } => {
                keys.add(Key::Address(challenger));
                keys.add(Key::Address(opponent));
                keys.add(stripe(match_id));
            }
            &EventKind::Queued {
                match_id,
                player,
                game,
                stake,
            } => {
                keys.add(Key::Address(player));
                keys.add(Key::Queue(game, stake));
                keys.add(stripe(match_id));
            }
            EventKind::GameStarted {
                match_id, seats, ..
            } if event.creates_match().is_some() => {
                for address in seats.iter().filter_map(|seat| seat.address()) {
                    keys.add(Key::Address(address));
                }
                keys.add(stripe(*match_id));
            }
            EventKind::ChallengeAccepted { match_id }
            | EventKind::ChallengeDeclined { match_id }
            | EventKind::ChallengeExpired { match_id }
            | EventKind::GameStarted { match_id, .. }
            | EventKind::Moved { match_id, .. }
            | EventKind::MatchAborted { match_id, .. }
            | EventKind::GameEnded { match_id, .. }
            | EventKind::RematchOffered { match_id, .. } => {
                let m = self.event_match(*match_id);
                concerned_keys(m, &mut keys);
                // A pairing starts a waiting queue entry, and a cancel ends one: both take
                // it out of its queue.
                if m.origin == Origin::Queue && m.phase == Phase::Waiting {
                    keys.add(Key::Queue(m.game(), m.stake));
                }
            }
            EventKind::Transferred { transfer, .. } => {
                for account in [transfer.from, transfer.to] {
                    match account {
                        Account::Player(address) => keys.add(Key::Address(address)),
                        Account::Escrow(id) => concerned_keys(self.event_match(id), &mut keys),
                        Account::Pool(id) => keys.add(Key::Tournament(id)),
                        Account::Outside if transfer.reason == TransferReason::Deposit => {
                            keys.add(Key::Supply);
                        }
                        // The reserve takes a share of every ending and pays out only to
                        // the owner's collection, under the clock's key; the total
                        // withdrawn (a withdrawal's outside side), no command reads.
                        Account::Outside | Account::Reserve => {}
                    }
                }
            }
            &EventKind::PuzzleAttempted { puzzle, player, .. } => {
                keys.add(Key::Puzzle(puzzle));
                keys.add(Key::Address(player));
            }
            &EventKind::TournamentCreated {
                tournament,
                organizer,
                ..
            } => {
                keys.add(Key::TournamentIds);
                keys.add(Key::Tournament(tournament));
                keys.add(Key::Address(organizer));
            }
            &EventKind::TournamentJoined { tournament, .. }
            | &EventKind::TournamentLeft { tournament, .. }
            | &EventKind::TournamentPaused { tournament, .. }
            | &EventKind::TournamentStarted { tournament }
            | &EventKind::TournamentRound { tournament, .. } => {
                keys.add(Key::Tournament(tournament));
            }
            &EventKind::TournamentFinished { tournament, .. }
            | &EventKind::TournamentCancelled { tournament } => {
                keys.add(Key::Tournament(tournament));
                keys.add(Key::TournamentIds);
            }
            EventKind::ClocksResumed { .. } | EventKind::Forgotten { .. } => keys.add(Key::All),
        }
        keys
    }

    /// The match an event names, which is known (an event creating one names its
    /// players itself).
    fn event_match(&self, id: MatchId) -> &Match {
        self.matches.get(&id).expect("an event's match is known")
    }

    /// Whether `self` and `other` hold the same state but for the places of their events
    /// in the log (the next sequence number, and the events each remembered command
    /// caused): the equality under which commands with disjoint keys commute.
    #[must_use]
    pub fn same_but_log_positions(&self, other: &Engine) -> bool {
        fn without_positions(engine: &Engine) -> Engine {
            let mut engine = engine.clone();
            engine.next_seq = 0;
            for entry in engine.idempotency.values_mut() {
                (entry.first_seq, entry.last_seq) = (0, 0);
            }
            engine
        }
        without_positions(self) == without_positions(other)
    }

    /// The key of the match ids `creator` creates matches with.
    fn creates_in(&self, creator: Address) -> Key {
        Key::MatchIds(self.config.match_id_stripe(creator))
    }

    /// A match's keys: everyone it concerns; or its stripe of match ids, for a match not
    /// made yet.
    fn match_keys(&self, id: MatchId, keys: &mut impl KeySink) {
        let Some(m) = self.matches.get(&id) else {
            if self.is_new_match_id(id) {
                keys.add(Key::MatchIds(self.match_id_place(id).0));
            }
            return;
        };
        concerned_keys(m, keys);
    }

    /// A tournament's key, and with `entrants` every entrant's; or the tournament ids, for
    /// one not made yet.
    fn tournament_keys(&self, id: TournamentId, entrants: bool, keys: &mut impl KeySink) {
        keys.add(Key::Tournament(id));
        let Some(t) = self.tournaments.get(&id) else {
            keys.add(Key::TournamentIds);
            return;
        };
        if entrants {
            for e in t.standing_entrants() {
                keys.add(Key::Address(t.info(e).address));
            }
        }
    }
}

/// The keys of everyone a match concerns: its players, and a challenge's two parties.
fn concerned_keys(m: &Match, keys: &mut impl KeySink) {
    for address in m.concerned() {
        keys.add(Key::Address(address));
    }
}
