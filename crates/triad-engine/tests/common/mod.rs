//! The scenario harness: a [`Table`] with named addresses, a clock and helpers to play.
//!
//! Every command goes through [`Table::run`], which checks after each one that:
//! - a refused command (or a duplicate) changed nothing: the engine equals a clone taken
//!   before, and the log did not grow;
//! - an applied command's events are exactly the new tail of the log;
//! - the ledger audits (balances sum to deposits less withdrawals);
//! - every address is in at most one live match.
//!
//! When the table is dropped (at the end of every scenario that did not already panic) it
//! checks that a replay of the whole log equals the live engine.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;

use triad_engine::{
    Account, Address, Command, Config, Duplicate, EndReason, Engine, EngineError, Envelope, Event,
    EventKind, IdempotencyKey, Match, MatchId, MatchResult, Phase, PlayerStats, Receipt, Seat,
    StartChoice, Transfer, TransferReason,
};
use triad_rules::{CellSet, GameKind, Mark, Player};

/// One ether in minor units (wei).
pub const ETHER: u128 = 1_000_000_000_000_000_000;

/// `n` tenths of an ether: `tenths(18)` is 1.8 ether.
pub const fn tenths(n: u128) -> u128 {
    ETHER / 10 * n
}

/// An address spelled from a short name, so that failures are readable and the address
/// order (the leaderboards' tie-break) is the alphabetical order of the names.
pub const fn named(name: &[u8]) -> Address {
    let mut bytes = [0u8; 32];
    let mut i = 0;
    while i < name.len() && i < 32 {
        bytes[i] = name[i];
        i += 1;
    }
    Address::from_bytes(bytes)
}

pub const OWNER: Address = named(b"owner");
pub const ALICE: Address = named(b"alice");
pub const BOB: Address = named(b"bob");
pub const CAROL: Address = named(b"carol");
pub const DAVE: Address = named(b"dave");
pub const ERIN: Address = named(b"erin");
pub const FRANK: Address = named(b"frank");

pub const TTT: GameKind = GameKind::TicTacToe;
pub const SOS: GameKind = GameKind::Sos;

/// The SOS contract's defaults, in milliseconds.
pub const WAIT_CANCEL_MS: u64 = 120_000;
pub const MOVE_TIMEOUT_MS: u64 = 60_000;
pub const CHALLENGE_TTL_MS: u64 = 600_000;

/// A table: an engine with its log, and a clock.
#[derive(Debug)]
pub struct Table {
    pub engine: Engine,
    /// The time the next command is sent at.
    pub now: u64,
}

impl Default for Table {
    fn default() -> Self {
        Table::new()
    }
}

impl Table {
    /// The SOS contract's defaults, owned by [`OWNER`], at time 0.
    pub fn new() -> Table {
        Table::with(|_| {})
    }

    /// The defaults changed by `f`.
    pub fn with(f: impl FnOnce(&mut Config)) -> Table {
        let mut config = Config::new(OWNER);
        f(&mut config);
        Table {
            engine: Engine::with_log(config),
            now: 0,
        }
    }

    // ----- the clock -----------------------------------------------------------------

    /// Sets the clock.
    pub fn at(&mut self, ms: u64) -> &mut Table {
        self.now = ms;
        self
    }

    /// Moves the clock on.
    pub fn advance(&mut self, ms: u64) -> &mut Table {
        self.now += ms;
        self
    }

    // ----- running commands ----------------------------------------------------------

    /// Runs a command as `who` at the table's time.
    pub fn run(&mut self, who: Address, command: Command) -> Result<Receipt, EngineError> {
        self.submit(&Envelope::new(who, self.now, command))
    }

    /// Runs a command with an idempotency key.
    pub fn run_keyed(
        &mut self,
        who: Address,
        key: u128,
        command: Command,
    ) -> Result<Receipt, EngineError> {
        self.submit(&Envelope::new(who, self.now, command).with_key(IdempotencyKey(key)))
    }

    /// Executes an envelope and checks the harness's invariants.
    pub fn submit(&mut self, envelope: &Envelope) -> Result<Receipt, EngineError> {
        let before = self.engine.clone();
        let log_before = before.log_for_tests().len();
        let result = self.engine.execute(envelope);
        let log_after = self.engine.log_for_tests().len();
        match &result {
            Err(e) => {
                assert_eq!(
                    self.engine,
                    before,
                    "refused {:?} (code {}) changed the state",
                    envelope.command,
                    e.code()
                );
                assert_eq!(log_after, log_before, "a refused command logged events");
            }
            Ok(receipt) if receipt.duplicate.is_some() => {
                assert!(receipt.events.is_empty(), "a duplicate has no events");
                assert_eq!(self.engine, before, "a duplicate changed the state");
                assert_eq!(log_after, log_before, "a duplicate logged events");
            }
            Ok(receipt) => {
                assert_eq!(
                    &self.engine.log_for_tests()[log_before..],
                    receipt.events.as_slice(),
                    "the receipt's events are the new tail of the log"
                );
            }
        }
        self.check_invariants();
        result
    }

    /// Runs a command that must succeed.
    #[track_caller]
    pub fn ok(&mut self, who: Address, command: Command) -> Receipt {
        let shown = format!("{command:?}");
        match self.run(who, command) {
            Ok(r) => r,
            Err(e) => panic!(
                "{shown} by {who:?} refused: {} ({}): {e}",
                e.code(),
                e.name()
            ),
        }
    }

    /// Runs a command that must be refused with `code`; returns the error.
    #[track_caller]
    pub fn expect_err(&mut self, who: Address, command: Command, code: u16) -> EngineError {
        let shown = format!("{command:?}");
        match self.run(who, command) {
            Ok(r) => panic!("{shown} by {who:?} should be refused with {code}, got {r:?}"),
            Err(e) => {
                assert_eq!(
                    e.code(),
                    code,
                    "{shown} by {who:?}: expected code {code}, got {} ({}): {e}",
                    e.code(),
                    e.name()
                );
                e
            }
        }
    }

    fn check_invariants(&self) {
        if let Err(e) = self.engine.audit() {
            panic!("the engine fails its audit: {e}");
        }
        let mut seen: BTreeMap<Address, MatchId> = BTreeMap::new();
        for m in self.engine.live_matches() {
            for a in m.participants() {
                if let Some(other) = seen.insert(a, m.id) {
                    panic!("{a:?} is in live matches {other} and {}", m.id);
                }
                assert_eq!(self.engine.active_match(a), Some(m.id), "registry agrees");
            }
        }
    }

    /// Replay equality, ledger audit and a well-formed log. Also run on drop.
    pub fn check_replay(&self) {
        let log = self.engine.log_for_tests();
        for (i, e) in log.iter().enumerate() {
            assert_eq!(
                e.seq,
                i as u64 + 1,
                "event seqs are 1, 2, 3, … without gaps"
            );
        }
        // Event times never go backwards under a key: the replay's `apply` asserts it.
        assert_eq!(self.engine.next_seq(), log.len() as u64 + 1);
        let replayed = Engine::replay(self.engine.config().clone(), log);
        assert_eq!(
            replayed, self.engine,
            "a replay of the log equals the engine"
        );
        if let Err(e) = self.engine.audit() {
            panic!("the engine fails its audit: {e}");
        }
    }

    // ----- money ---------------------------------------------------------------------

    /// The owner deposits `amount` to `who`.
    pub fn fund(&mut self, who: Address, amount: u128) {
        self.ok(OWNER, Command::Deposit { to: who, amount });
    }

    pub fn balance(&self, who: Address) -> u128 {
        self.engine.balance(who)
    }

    pub fn reserve(&self) -> u128 {
        self.engine.reserve()
    }

    pub fn escrow(&self, id: MatchId) -> u128 {
        self.engine.ledger().balance(Account::Escrow(id))
    }

    /// Asserts exact balances in minor units.
    #[track_caller]
    pub fn assert_balances(&self, expected: &[(Address, u128)]) {
        for &(who, amount) in expected {
            assert_eq!(self.balance(who), amount, "balance of {who:?}");
        }
    }

    #[track_caller]
    pub fn assert_reserve(&self, amount: u128) {
        assert_eq!(self.reserve(), amount, "the reserve");
    }

    // ----- making matches ------------------------------------------------------------

    /// `who` joins the queue; returns the match they wait in or were matched into.
    pub fn join(&mut self, who: Address, game: GameKind, stake: u128) -> MatchId {
        match_id(&self.ok(who, Command::JoinQueue { game, stake }))
    }

    /// `first` waits in the queue, `second` is matched with them.
    pub fn queue_match(
        &mut self,
        first: Address,
        second: Address,
        game: GameKind,
        stake: u128,
    ) -> MatchId {
        let id = self.join(first, game, stake);
        assert_eq!(self.join(second, game, stake), id);
        id
    }

    /// `from` challenges `to`; returns the challenge's match.
    pub fn challenge(
        &mut self,
        from: Address,
        to: Address,
        game: GameKind,
        stake: u128,
        first: StartChoice,
    ) -> MatchId {
        match_id(&self.ok(
            from,
            Command::Challenge {
                opponent: to,
                game,
                stake,
                first,
            },
        ))
    }

    /// A challenge, accepted, with the challenger moving first.
    pub fn challenge_match(
        &mut self,
        from: Address,
        to: Address,
        game: GameKind,
        stake: u128,
    ) -> MatchId {
        let id = self.challenge(from, to, game, stake, StartChoice::Challenger);
        self.ok(
            to,
            Command::AcceptChallenge {
                match_id: id,
                terms: None,
            },
        );
        id
    }

    // ----- playing -------------------------------------------------------------------

    pub fn m(&self, id: MatchId) -> &Match {
        self.engine.match_(id).expect("a known match")
    }

    pub fn phase(&self, id: MatchId) -> Phase {
        self.m(id).phase
    }

    #[track_caller]
    pub fn result(&self, id: MatchId) -> MatchResult {
        self.m(id).result.expect("the match has ended")
    }

    /// The `seq` the next move must carry.
    pub fn next_move_seq(&self, id: MatchId) -> u8 {
        self.m(id).seq() + 1
    }

    /// The human whose turn it is.
    #[track_caller]
    pub fn mover(&self, id: MatchId) -> Address {
        let m = self.m(id);
        let turn = m.turn().expect("the match is in play");
        m.seat(turn)
            .and_then(|s| s.address())
            .expect("a human is to move")
    }

    /// The human seated as `player`.
    pub fn seat(&self, id: MatchId, player: Player) -> Address {
        self.m(id).seat(player).and_then(|s| s.address()).unwrap()
    }

    /// A move command with the right `seq`.
    pub fn move_cmd(&self, id: MatchId, cell: u8, mark: Mark) -> Command {
        Command::Move {
            match_id: id,
            seq: self.next_move_seq(id),
            cell,
            mark,
            signed: None,
        }
    }

    /// `who` places `mark` in `cell` with the right `seq`.
    #[track_caller]
    pub fn mv(&mut self, who: Address, id: MatchId, cell: u8, mark: Mark) -> Receipt {
        let command = self.move_cmd(id, cell, mark);
        self.ok(who, command)
    }

    /// Plays the moves, each by whoever is to move; returns the last receipt.
    #[track_caller]
    pub fn play(&mut self, id: MatchId, moves: &[(u8, Mark)]) -> Receipt {
        let mut last = None;
        for &(cell, mark) in moves {
            let who = self.mover(id);
            last = Some(self.mv(who, id, cell, mark));
        }
        last.expect("at least one move")
    }

    /// Plays tic-tac-toe cells alternately X and O from the current position.
    #[track_caller]
    pub fn play_ttt(&mut self, id: MatchId, cells: &[u8]) -> Receipt {
        let mut last = None;
        for &cell in cells {
            let mark = match self.m(id).position.turn() {
                Player::First => Mark::X,
                Player::Second => Mark::O,
            };
            let who = self.mover(id);
            last = Some(self.mv(who, id, cell, mark));
        }
        last.expect("at least one move")
    }

    // ----- players -------------------------------------------------------------------

    pub fn stats(&self, who: Address) -> PlayerStats {
        self.engine.stats(who)
    }

    /// `(wins, games)`, the SOS contract's `getPlayerStats`.
    pub fn record(&self, who: Address) -> (u32, u32) {
        let s = self.engine.stats(who);
        (s.wins, s.games)
    }

    pub fn active(&self, who: Address) -> Option<MatchId> {
        self.engine.active_match(who)
    }

    /// `who` has no active match and could start one right now (checked on a copy).
    #[track_caller]
    pub fn assert_free(&self, who: Address) {
        assert_eq!(self.active(who), None, "{who:?} has no active match");
        let mut probe = self.engine.clone();
        probe
            .execute(&Envelope::new(
                who,
                self.now,
                Command::JoinQueue {
                    game: TTT,
                    stake: 0,
                },
            ))
            .unwrap_or_else(|e| panic!("{who:?} cannot start a new match: {e}"));
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.check_replay();
        }
    }
}

// ----- reading receipts ----------------------------------------------------------------

/// The match of the receipt's first event that names one.
#[track_caller]
/// The live matches that concern `address` (`Match::concerned`), newest first, by a scan
/// of the live matches: what `Engine::live_matches_concerning` reads from its indexes.
pub fn live_matches_concerning_by_scan(engine: &Engine, address: Address) -> Vec<MatchId> {
    let mut ids: Vec<MatchId> = engine
        .live_matches()
        .filter(|m| m.concerned().contains(&address))
        .map(|m| m.id)
        .collect();
    ids.reverse();
    ids
}

pub fn match_id(r: &Receipt) -> MatchId {
    r.events
        .iter()
        .find_map(Event::match_id)
        .expect("the receipt names a match")
}

/// The ending in a receipt, if any.
pub fn ended(r: &Receipt) -> Option<(MatchId, EndReason, Option<Player>, CellSet)> {
    r.events.iter().find_map(|e| match e.kind {
        EventKind::GameEnded {
            match_id,
            reason,
            winner,
            cells,
        } => Some((match_id, reason, winner, cells)),
        _ => None,
    })
}

/// The transfers in a receipt, in order.
pub fn transfers(r: &Receipt) -> Vec<Transfer> {
    transfers_of(&r.events)
}

pub fn transfers_of(events: &[Event]) -> Vec<Transfer> {
    events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Transferred { transfer, .. } => Some(transfer),
            _ => None,
        })
        .collect()
}

/// A transfer out of a match's escrow.
pub fn from_escrow(id: MatchId, to: Account, amount: u128, reason: TransferReason) -> Transfer {
    Transfer {
        from: Account::Escrow(id),
        to,
        amount,
        reason,
    }
}

/// A stake into a match's escrow.
pub fn stake_in(id: MatchId, who: Address, amount: u128) -> Transfer {
    Transfer {
        from: Account::Player(who),
        to: Account::Escrow(id),
        amount,
        reason: TransferReason::Stake,
    }
}

/// The names of the event kinds in a receipt, for compact assertions.
pub fn kinds(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.name()).collect()
}

/// The seats a `GameStarted` in the receipt announced.
#[track_caller]
pub fn started_seats(r: &Receipt) -> [Seat; 2] {
    r.events
        .iter()
        .find_map(|e| match e.kind {
            EventKind::GameStarted { seats, .. } => Some(seats),
            _ => None,
        })
        .expect("a game started")
}

/// A cell set from cell indices.
pub fn cells(indices: &[u8]) -> CellSet {
    CellSet::from_cells(indices)
}

/// A command's answer with the places of its events in the log left out: what must not
/// depend on whether a command under other keys came first.
pub fn without_positions(result: Result<Receipt, EngineError>) -> Result<Receipt, EngineError> {
    result.map(|mut receipt| {
        for event in &mut receipt.events {
            event.seq = 0;
        }
        if let Some(Duplicate::Command {
            first_seq,
            last_seq,
            ..
        }) = &mut receipt.duplicate
        {
            (*first_seq, *last_seq) = (0, 0);
        }
        receipt
    })
}

/// Partitioned ordering's property, for two commands whose keys do not overlap
/// (`Engine::keys`): run from `engine` in both orders, each gives the same answer (events,
/// refusal or duplicate) and the two leave the same state, but for the places of their
/// events in the log. Returns both receipts when both acted (caused events).
pub fn assert_commute(
    engine: &Engine,
    a: &Envelope,
    b: &Envelope,
    context: &str,
) -> Option<[Receipt; 2]> {
    let (keys_a, keys_b) = (engine.keys(a), engine.keys(b));
    assert!(!keys_a.overlap(&keys_b), "{context}: the keys overlap");
    let (mut ab, mut ba) = (engine.clone(), engine.clone());
    let (a_first, b_second) = (ab.execute(a), ab.execute(b));
    let (b_first, a_second) = (ba.execute(b), ba.execute(a));
    let context = || format!("{context}: {a:?} and {b:?}, keys {keys_a:?} and {keys_b:?}");
    let acted = |r: &Result<Receipt, EngineError>| r.as_ref().is_ok_and(|r| !r.events.is_empty());
    let both = (acted(&a_first) && acted(&b_first))
        .then(|| [a_first.clone(), b_first.clone()].map(Result::unwrap));
    assert_eq!(
        without_positions(a_first),
        without_positions(a_second),
        "{}: the first command's answer depends on the order",
        context()
    );
    assert_eq!(
        without_positions(b_second),
        without_positions(b_first),
        "{}: the second command's answer depends on the order",
        context()
    );
    assert!(
        ab.same_but_log_positions(&ba),
        "{}: the state depends on the order",
        context()
    );
    both
}
