//! Seeded simulation: many players send random commands, valid and invalid, with random
//! time steps; after every command an auditor checks the engine against an independent
//! model of the SOS contract's rules.
//!
//! After every command the auditor checks that:
//! - money is conserved (balances sum to deposits less withdrawals) and no account is
//!   overdrawn;
//! - no address is in more than one live match, and the engine's registry agrees;
//! - every match that ended was paid exactly once, with exactly the SOS contract's amounts;
//! - the hall of fame agrees with the endings;
//! - a replay of the event log equals the live state (a shadow engine built only by
//!   `Engine::apply` of the logged events, compared in full);
//! - a refused command or a duplicate changed nothing (the shadow got no events).
//!
//! `TRIAD_SIM_SEED=N` picks the base seed, `TRIAD_SIM_COMMANDS=N` the commands per run
//! (four runs; 250,000 each by default, 1,000,000 in all). A failure prints the seed and
//! the command's index; the same seed reproduces it.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    num::NonZeroU16,
    panic::{AssertUnwindSafe, catch_unwind},
};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use triad_engine::{
    Account, Address, Command, Config, Duplicate, EndReason, Engine, EngineError, Entry, Envelope,
    Event, EventKind, Format, IdempotencyKey, Level, MatchId, PayoutRules, Phase, Receipt,
    RematchStart, Seat, StartChoice, Terms, Tournament, TournamentId, TournamentPhase,
    TournamentSpec, TransferReason, tournament::EntrantStatus,
};
use triad_rules::{Cell, GameKind, Mark, Player};
use triad_solver::puzzles::{self, PuzzleId};

mod common;

const PLAYERS: u8 = 12;
const ETHER: u128 = 1_000_000_000_000_000_000;

fn address(i: u8) -> Address {
    let mut bytes = [0u8; 32];
    bytes[31] = i + 1;
    // Spread over the stripes of match ids, which the first bytes choose, as hashes do.
    bytes[0] = 0xa0 + i;
    Address::from_bytes(bytes)
}

fn owner() -> Address {
    Address::from_bytes([0xee; 32])
}

fn base_seed() -> u64 {
    std::env::var("TRIAD_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_120)
}

fn commands_per_run() -> u64 {
    std::env::var("TRIAD_SIM_COMMANDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(250_000)
}

/// The auditor's own record of a match, built from the events alone.
#[derive(Clone, Debug)]
struct ModelMatch {
    stake: u128,
    host: Address,
    seats: Option<[Seat; 2]>,
    escrowed: u128,
    ended: bool,
}

impl ModelMatch {
    fn humans(&self) -> Vec<Address> {
        match self.seats {
            Some(seats) => seats.iter().filter_map(Seat::address).collect(),
            None => vec![self.host],
        }
    }
}

#[derive(Default)]
struct Model {
    rules: PayoutRules,
    matches: HashMap<MatchId, ModelMatch>,
    /// (wins, games, draws)
    stats: HashMap<Address, (u32, u32, u32)>,
    deposited: u128,
    withdrawn: u128,
    next_seq: u64,
    /// Every (player, puzzle) with a rated attempt: one each.
    rated_attempts: BTreeSet<(Address, PuzzleId)>,
}

/// The payout rules' amounts, computed here independently of the engine's payout code
/// (the SOS contract's by default: the winner gets 1.8 of a pot of 2 stakes, a tie refunds 0.9 of a
/// stake each, a timeout pays 1.9 of the pot, a cancel refunds the stake); aborts, declines
/// and expiries refund in full.
fn expected_payouts(
    m: &ModelMatch,
    reason: EndReason,
    winner: Option<Player>,
    rules: &PayoutRules,
) -> Vec<(Address, u128)> {
    let pot = m.escrowed;
    let part = |amount: u128, bps: u32| amount * u128::from(bps) / 10_000;
    let winner_address = winner
        .and_then(|w| m.seats.map(|s| s[w.index()]))
        .and_then(|s| s.address());
    let mut out = Vec::new();
    match reason {
        EndReason::Win | EndReason::Forfeit => {
            if let Some(w) = winner_address {
                out.push((w, part(pot, rules.win_bps_of_pot)));
            }
        }
        EndReason::Timeout => {
            if let Some(w) = winner_address {
                out.push((w, part(pot, rules.timeout_bps_of_pot)));
            }
        }
        EndReason::Draw => {
            for h in m.humans() {
                out.push((h, part(m.stake, rules.draw_bps_of_stake)));
            }
        }
        EndReason::Cancelled => out.push((m.host, part(m.stake, rules.cancel_bps_of_stake))),
        EndReason::Declined | EndReason::Expired => {
            out.push((m.host, m.stake));
        }
        EndReason::Aborted => {
            for h in m.humans() {
                out.push((h, m.stake));
            }
        }
    }
    out.retain(|(_, amount)| *amount > 0);
    out.sort();
    out
}

impl Model {
    /// Checks one command's events against the model and updates it.
    fn audit_batch(&mut self, events: &[Event], engine: &Engine) -> Result<(), String> {
        let mut ended_now: Vec<(MatchId, Vec<(Address, u128)>)> = Vec::new();
        let mut paid: BTreeMap<MatchId, Vec<(Address, u128)>> = BTreeMap::new();
        let mut reserve_share: BTreeMap<MatchId, u128> = BTreeMap::new();
        for e in events {
            if e.seq != self.next_seq {
                return Err(format!(
                    "event seq {} where {} was next",
                    e.seq, self.next_seq
                ));
            }
            self.next_seq += 1;
            match e.kind {
                EventKind::ChallengeIssued {
                    match_id,
                    challenger,
                    opponent,
                    stake,
                    ..
                } => {
                    if challenger == opponent || opponent.is_zero() {
                        return Err("challenge against oneself or nobody".into());
                    }
                    self.create(match_id, challenger, stake, None)?;
                }
                EventKind::Queued {
                    match_id,
                    player,
                    stake,
                    ..
                } => self.create(match_id, player, stake, None)?,
                EventKind::GameStarted {
                    match_id,
                    seats,
                    stake,
                    origin,
                    ..
                } => {
                    if seats[0] == seats[1] {
                        return Err(format!("match {match_id} pairs a player with itself"));
                    }
                    match self.matches.get_mut(&match_id) {
                        Some(m) => {
                            if m.seats.is_some() || m.ended {
                                return Err(format!("match {match_id} started twice"));
                            }
                            if m.seats.is_none() && !seats.contains(&Seat::Human(m.host)) {
                                return Err(format!("match {match_id} started without its host"));
                            }
                            if matches!(origin, triad_engine::Origin::Queue)
                                && seats[0] != Seat::Human(m.host)
                            {
                                return Err(format!(
                                    "match {match_id}: the earlier joiner must move first"
                                ));
                            }
                            m.seats = Some(seats);
                        }
                        None => {
                            let host = seats.iter().find_map(Seat::address).ok_or("no human")?;
                            self.create(match_id, host, stake, Some(seats))?;
                        }
                    }
                }
                EventKind::Transferred {
                    match_id,
                    transfer: t,
                } => match (t.from, t.to) {
                    (Account::Outside, Account::Player(_)) => self.deposited += t.amount,
                    (Account::Player(_), Account::Outside) => self.withdrawn += t.amount,
                    (Account::Player(p), Account::Escrow(m)) => {
                        let mm = self.matches.get_mut(&m).ok_or("stake into unknown match")?;
                        if mm.ended || t.amount != mm.stake || match_id != Some(m) {
                            return Err(format!("bad stake transfer into match {m}"));
                        }
                        if !mm.humans().contains(&p) && mm.host != p {
                            return Err(format!("{p:?} staked into match {m} they do not play"));
                        }
                        mm.escrowed += t.amount;
                    }
                    (Account::Escrow(m), Account::Player(p)) => {
                        if !ended_now.iter().any(|(id, _)| *id == m) {
                            return Err(format!("match {m} paid outside its ending"));
                        }
                        if p.is_zero() {
                            return Err("paid to the zero address".into());
                        }
                        paid.entry(m).or_default().push((p, t.amount));
                    }
                    (Account::Escrow(m), Account::Reserve) => {
                        if !ended_now.iter().any(|(id, _)| *id == m) {
                            return Err(format!("match {m} paid outside its ending"));
                        }
                        *reserve_share.entry(m).or_default() += t.amount;
                    }
                    (Account::Reserve, Account::Player(p)) => {
                        if p != owner() || t.reason != TransferReason::Collect {
                            return Err("the reserve went to someone other than the owner".into());
                        }
                    }
                    other => return Err(format!("unexpected transfer {other:?}")),
                },
                EventKind::GameEnded {
                    match_id,
                    reason,
                    winner,
                    ..
                } => {
                    let m = self
                        .matches
                        .get_mut(&match_id)
                        .ok_or("unknown match ended")?;
                    if m.ended {
                        return Err(format!("match {match_id} ended twice"));
                    }
                    m.ended = true;
                    let m = m.clone();
                    ended_now.push((match_id, expected_payouts(&m, reason, winner, &self.rules)));
                    if let (true, Some([Seat::Human(a), Seat::Human(b)])) =
                        (reason.was_played(), m.seats)
                    {
                        for (who, p) in [(a, Player::First), (b, Player::Second)] {
                            let s = self.stats.entry(who).or_default();
                            s.1 += 1;
                            if winner == Some(p) {
                                s.0 += 1;
                            }
                            if winner.is_none() {
                                s.2 += 1;
                            }
                        }
                    }
                }
                EventKind::MatchAborted { match_id, by } => {
                    let m = self
                        .matches
                        .get(&match_id)
                        .ok_or("abort of unknown match")?;
                    let seated = m.seats.is_some_and(|s| s[by.index()].address().is_some());
                    if m.ended || m.stake != 0 || !seated {
                        return Err(format!(
                            "match {match_id} aborted by {by:?}: not a free match in play by its player"
                        ));
                    }
                    // The ending in the same command must be the abort, with no winner.
                    let ending = events.iter().find_map(|later| match later.kind {
                        EventKind::GameEnded {
                            match_id: ended,
                            reason,
                            winner,
                            ..
                        } if ended == match_id => Some((reason, winner)),
                        _ => None,
                    });
                    if ending != Some((EndReason::Aborted, None)) {
                        return Err(format!("match {match_id} aborted but ended as {ending:?}"));
                    }
                }
                EventKind::PuzzleAttempted { puzzle, player, .. } => {
                    if !self.rated_attempts.insert((player, puzzle)) {
                        return Err(format!("{player:?} rated twice at puzzle {puzzle}"));
                    }
                    let by_player = self
                        .rated_attempts
                        .iter()
                        .filter(|(a, _)| *a == player)
                        .count();
                    let by_puzzle = self
                        .rated_attempts
                        .iter()
                        .filter(|(_, p)| *p == puzzle)
                        .count();
                    let counted = (
                        engine.puzzle_record_of_player(player).attempts as usize,
                        engine.puzzle_record(puzzle).attempts as usize,
                    );
                    if counted != (by_player, by_puzzle) {
                        return Err(format!(
                            "puzzle records count {counted:?}, the attempts made are {:?}",
                            (by_player, by_puzzle)
                        ));
                    }
                }
                EventKind::Moved { match_id, by, .. } => {
                    let m = self.matches.get(&match_id).ok_or("move in unknown match")?;
                    if m.ended || !m.seats.is_some_and(|s| s.contains(&by)) {
                        return Err(format!(
                            "move in match {match_id} by a non-player or after the end"
                        ));
                    }
                }
                _ => {}
            }
        }
        for (id, mut expected) in ended_now {
            let mut got = paid.remove(&id).unwrap_or_default();
            got.sort();
            expected.sort();
            if got != expected {
                return Err(format!(
                    "match {id} paid {got:?}, the rules {:?} say {expected:?}",
                    self.rules
                ));
            }
            let m = &self.matches[&id];
            let total: u128 = got.iter().map(|p| p.1).sum::<u128>()
                + reserve_share.get(&id).copied().unwrap_or(0);
            if total != m.escrowed {
                return Err(format!(
                    "match {id} settled {total} of an escrow of {}",
                    m.escrowed
                ));
            }
            if engine.ledger().balance(Account::Escrow(id)) != 0 {
                return Err(format!("match {id} ended with money left in escrow"));
            }
        }
        Ok(())
    }

    fn create(
        &mut self,
        id: MatchId,
        host: Address,
        stake: u128,
        seats: Option<[Seat; 2]>,
    ) -> Result<(), String> {
        let previous = self.matches.insert(
            id,
            ModelMatch {
                stake,
                host,
                seats,
                escrowed: 0,
                ended: false,
            },
        );
        if previous.is_some() {
            return Err(format!("match {id} created twice"));
        }
        Ok(())
    }

    /// The invariants that hold between commands.
    fn audit_state(&self, engine: &Engine) -> Result<(), String> {
        engine.audit()?;
        let held = self.deposited - self.withdrawn;
        if engine.ledger().total_held() != held {
            return Err(format!(
                "engine holds {} but deposits less withdrawals are {held}",
                engine.ledger().total_held()
            ));
        }
        let mut live_by_address: HashMap<Address, Vec<MatchId>> = HashMap::new();
        for (id, m) in &self.matches {
            if !m.ended {
                for h in m.humans() {
                    live_by_address.entry(h).or_default().push(*id);
                }
            }
        }
        for i in 0..PLAYERS {
            let a = address(i);
            let live = live_by_address.get(&a).cloned().unwrap_or_default();
            if live.len() > 1 {
                return Err(format!("{a:?} is in {} live matches: {live:?}", live.len()));
            }
            let indexed: Vec<MatchId> = engine.live_matches_concerning(a).map(|m| m.id).collect();
            let scanned = common::live_matches_concerning_by_scan(engine, a);
            if indexed != scanned {
                return Err(format!(
                    "the live matches concerning {a:?} are {indexed:?} by the indexes, {scanned:?} by a scan"
                ));
            }
            if engine.active_match(a) != live.first().copied() {
                return Err(format!(
                    "registry says {:?} for {a:?}, the events say {live:?}",
                    engine.active_match(a)
                ));
            }
            let s = engine.stats(a);
            let (wins, games, draws) = self.stats.get(&a).copied().unwrap_or_default();
            if (s.wins, s.games, s.draws) != (wins, games, draws) {
                return Err(format!(
                    "{a:?} has stats {}/{}/{} but the endings say {wins}/{games}/{draws}",
                    s.wins, s.games, s.draws
                ));
            }
            if s.wins > s.games {
                return Err(format!("{a:?} won more games than played"));
            }
        }
        for m in engine.live_matches() {
            if m.phase == Phase::Finished {
                return Err(format!("finished match {} counted live", m.id));
            }
        }
        Ok(())
    }
}

/// Makes a random command, valid more often than not.
struct Generator {
    rng: ChaCha8Rng,
    now: u64,
    previous: Option<Envelope>,
    /// Whether to cross challenges on purpose (the payout-rules runs).
    crossing: bool,
}

impl Generator {
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.rng.random_range(0..items.len())]
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn player(&mut self) -> Address {
        address(self.rng.random_range(0..PLAYERS))
    }

    fn stake(&mut self) -> u128 {
        self.pick(&[
            0,
            0,
            1_000,
            10_000,
            ETHER / 1000,
            123_457,
            u128::from(u64::MAX) / 3,
        ])
    }

    fn game(&mut self) -> GameKind {
        self.pick(&GameKind::ALL)
    }

    fn some_match(&mut self, engine: &Engine, actor: Address) -> MatchId {
        if let (Some(id), true) = (engine.active_match(actor), self.chance(0.85)) {
            return id;
        }
        // A recent match (live or just finished), or now and then an id that does not exist.
        let newest = engine.matches().map(|m| m.id.0).max().unwrap_or(1);
        if self.chance(0.1) {
            return MatchId(self.rng.random_range(0..newest + 5));
        }
        let recent: Vec<MatchId> = engine.matches().map(|m| m.id).collect();
        if recent.is_empty() {
            MatchId(1)
        } else {
            self.pick(&recent)
        }
    }

    fn next(&mut self, engine: &Engine) -> Envelope {
        // Time: mostly small steps, sometimes past a deadline, sometimes backwards.
        let step = self.rng.random_range(0..100u32);
        self.now = match step {
            0..70 => self.now + self.rng.random_range(0..3_000),
            70..90 => self.now + self.rng.random_range(3_000..30_000),
            90..98 => self.now + self.rng.random_range(55_000..150_000),
            _ => self.now.saturating_sub(self.rng.random_range(0..10_000)),
        };
        if let (Some(previous), true) = (self.previous.clone(), self.chance(0.03)) {
            return Envelope {
                now_ms: self.now,
                ..previous
            };
        }
        let actor = match self.rng.random_range(0..100u32) {
            0..4 => owner(),
            4..5 => Address::from_bytes([0x77; 32]),
            _ => self.player(),
        };
        let command = self.command(engine, actor);
        // The clock's own command, mostly from the clock.
        let actor = match command {
            Command::ResumeClocks { .. } if self.chance(0.8) => Address::ZERO,
            _ => actor,
        };
        let mut envelope = Envelope::new(actor, self.now, command);
        if self.chance(0.1) {
            envelope = envelope.with_key(IdempotencyKey(self.rng.random_range(0..32)));
        }
        self.previous = Some(envelope.clone());
        envelope
    }

    fn command(&mut self, engine: &Engine, actor: Address) -> Command {
        let roll = self.rng.random_range(0..100u32);
        match roll {
            0..40 => {
                let match_id = self.some_match(engine, actor);
                let m = engine.match_(match_id);
                let expected = m.map_or(1, |m| m.seq() + 1);
                let seq = if self.chance(0.85) {
                    expected
                } else {
                    self.rng.random_range(0..11)
                };
                let empty: Vec<u8> = m.map_or(vec![], |m| {
                    m.position
                        .board()
                        .empty_cells()
                        .iter()
                        .map(Cell::index)
                        .collect()
                });
                let cell = if !empty.is_empty() && self.chance(0.85) {
                    self.pick(&empty)
                } else {
                    self.rng.random_range(0..12)
                };
                let mark = match m.map(|m| (m.game(), m.position.turn())) {
                    Some((GameKind::TicTacToe, Player::First)) if self.chance(0.9) => Mark::X,
                    Some((GameKind::TicTacToe, Player::Second)) if self.chance(0.9) => Mark::O,
                    Some((GameKind::Sos, _)) if self.chance(0.95) => self.pick(&[Mark::S, Mark::O]),
                    _ => self.pick(&[Mark::X, Mark::O, Mark::S]),
                };
                Command::Move {
                    match_id,
                    seq,
                    cell,
                    mark,
                    signed: None,
                }
            }
            40..50 => Command::JoinQueue {
                game: self.game(),
                stake: self.stake(),
            },
            50..56 => {
                // With `crossing`, often the challenger of one of the actor's incoming
                // challenges: crossed challenges, which an acceptance then withdraws.
                // Such a counter-challenge is at the incoming one's stake, or at the
                // actor's whole balance: stakes that an acceptance must count exactly.
                let challengers: Vec<(Address, u128)> = engine
                    .incoming_challenges(actor)
                    .filter_map(|m| m.challenge.map(|c| (c.challenger, m.stake)))
                    .collect();
                let (opponent, stake) = match self.rng.random_range(0..20u32) {
                    0 => (actor, self.stake()),
                    1 => (Address::ZERO, self.stake()),
                    _ if self.crossing && !challengers.is_empty() && self.chance(0.7) => {
                        let (challenger, theirs) = self.pick(&challengers);
                        let all_in = engine.balance(actor);
                        (challenger, self.pick(&[theirs, theirs, all_in]))
                    }
                    _ => (self.player(), self.stake()),
                };
                Command::Challenge {
                    opponent,
                    game: self.game(),
                    stake,
                    first: self.pick(&[
                        StartChoice::Challenger,
                        StartChoice::Opponent,
                        StartChoice::Random,
                    ]),
                }
            }
            56..62 => {
                let incoming: Vec<MatchId> =
                    engine.incoming_challenges(actor).map(|m| m.id).collect();
                let match_id = if !incoming.is_empty() && self.chance(0.9) {
                    self.pick(&incoming)
                } else {
                    self.some_match(engine, actor)
                };
                if self.chance(0.8) {
                    // Now and then the terms the accepter saw: the challenge's, or (a stale
                    // view) another stake, which the engine must refuse.
                    let shown = engine.match_(match_id).filter(|_| self.chance(0.3));
                    let terms = shown.map(|m| Terms {
                        stake: Some(if self.chance(0.2) {
                            m.stake ^ 1
                        } else {
                            m.stake
                        }),
                        game: Some(m.game()),
                        challenger: m.challenge.map(|c| c.challenger),
                        first: m.challenge.map(|c| c.first),
                    });
                    Command::AcceptChallenge { match_id, terms }
                } else {
                    Command::DeclineChallenge { match_id }
                }
            }
            62..66 => Command::Cancel {
                match_id: self.some_match(engine, actor),
            },
            66..69 => Command::PlayComputer {
                game: self.game(),
                level: self.pick(&[Level::Perfect, Level::Casual, Level::Random]),
                side: self.pick(&Player::BOTH),
            },
            69..71 => Command::Forfeit {
                match_id: self.some_match(engine, actor),
            },
            71..76 => Command::ClaimTimeout {
                match_id: self.some_match(engine, actor),
            },
            76..79 => {
                let ended: Vec<MatchId> = engine
                    .matches()
                    .filter(|m| m.phase == Phase::Finished && m.involves(actor))
                    .map(|m| m.id)
                    .collect();
                let match_id = if !ended.is_empty() && self.chance(0.9) {
                    self.pick(&ended)
                } else {
                    self.some_match(engine, actor)
                };
                Command::Rematch { match_id }
            }
            79..84 => Command::Deposit {
                to: if self.chance(0.02) {
                    Address::ZERO
                } else {
                    self.player()
                },
                amount: self.pick(&[0, 5_000, 50_000, ETHER / 100, ETHER, u128::from(u64::MAX)]),
            },
            84..86 => Command::Withdraw {
                amount: self.pick(&[0, 1, 1_000, 40_000, ETHER]),
            },
            86..87 => Command::CollectReserve,
            87..89 => Command::Abort {
                match_id: self.some_match(engine, actor),
            },
            // A few puzzles, so players come back to them: the solution, a line cut short
            // (undecided), or the first legal move (right or wrong).
            89..91 => {
                let all = puzzles::all();
                let puzzle = all[self.rng.random_range(0..8) * (all.len() / 8)];
                let mut line = puzzle.solution();
                match self.rng.random_range(0..3u32) {
                    0 => {}
                    1 => line.truncate(line.len() - 1),
                    _ => {
                        line = puzzle
                            .position()
                            .legal_moves()
                            .into_iter()
                            .take(1)
                            .collect()
                    }
                }
                Command::AttemptPuzzle {
                    puzzle: puzzle.id(),
                    line,
                }
            }
            // An outage: from some time before now, often before the last event (the
            // engine clamps it), sometimes after now (refused), sent by the clock or not.
            91..92 => Command::ResumeClocks {
                down_since_ms: (self.now + 5_000).saturating_sub(self.rng.random_range(0..200_000)),
            },
            _ => Command::Tick,
        }
    }
}

impl Generator {
    /// A tournament's command, for the commutation test (the simulation's own commands
    /// have none): a free tournament created by a player or the owner, starting soon, or
    /// a join, a leave, a pause or a call-off of a known tournament (now and then of an
    /// unknown one); at `now`. The clock's `Tick`, among the simulation's commands,
    /// starts, pairs and ends them.
    fn tournament_command(&mut self, engine: &Engine, now: u64) -> Envelope {
        const HOUR: u64 = 60 * 60 * 1000;
        let roll = self.rng.random_range(0..10u32);
        // Mostly a tournament the command can act on: an upcoming one to join or leave, a
        // running one whose entrant pauses or resumes, an open one to call off.
        let open: Vec<&Tournament> = engine.tournaments().filter(|t| t.phase.is_open()).collect();
        let upcoming = |t: &&Tournament| t.phase == TournamentPhase::Upcoming;
        let running = |t: &&Tournament| t.phase == TournamentPhase::Running;
        let fitting: Vec<&Tournament> = match roll {
            0..7 => open.iter().copied().filter(upcoming).collect(),
            7 | 8 => open.iter().copied().filter(running).collect(),
            _ => open.clone(),
        };
        let made = engine.tournaments().count() as u64;
        let chosen = if fitting.is_empty() || self.chance(0.05) {
            None
        } else {
            Some(self.pick(&fitting))
        };
        let tournament = chosen.map_or_else(
            || TournamentId(self.rng.random_range(1..made + 3)),
            |t| t.id,
        );
        // One of its entrants leaves or pauses.
        let entrants: Vec<(Address, EntrantStatus)> = chosen
            .map(|t| t.entrants.iter().map(|e| (e.address, e.status)).collect())
            .unwrap_or_default();
        let mut actor = self.player();
        let mut paused = self.chance(0.5);
        if (5..9).contains(&roll) && !entrants.is_empty() && self.chance(0.9) {
            let (address, status) = self.pick(&entrants);
            actor = address;
            paused = status == EntrantStatus::Active;
        }
        let open = open.len();
        let command = match roll {
            // A few open at a time, and a few dozen in all: every tournament stays in
            // memory, and each pair clones the engine.
            0..2 if open < 2 && made < 100 => {
                // A pool to share out is the owner's to offer.
                let entry_fee = self.pick(&[0, 0, ETHER / 100]);
                if entry_fee > 0 || self.chance(0.2) {
                    actor = owner();
                }
                let format = if self.chance(0.5) {
                    Format::Arena {
                        duration_ms: self.rng.random_range(HOUR / 2..2 * HOUR),
                    }
                } else {
                    Format::Swiss {
                        rounds: self.rng.random_range(1..4),
                    }
                };
                Command::CreateTournament {
                    spec: TournamentSpec {
                        name: "Commuting".into(),
                        game: self.game(),
                        format,
                        starts_at_ms: now + self.rng.random_range(HOUR..4 * HOUR),
                        entry: Entry::Everyone,
                        entry_fee,
                        prizes_bps: if entry_fee > 0 {
                            vec![6_000, 3_000]
                        } else {
                            Vec::new()
                        },
                        max_players: self.rng.random_range(2..8),
                    },
                }
            }
            0..5 => Command::JoinTournament {
                tournament,
                bot: self.chance(0.1),
            },
            5..7 => Command::LeaveTournament { tournament },
            7 | 8 => Command::PauseTournament { tournament, paused },
            _ => {
                if self.chance(0.5) {
                    actor = owner();
                }
                Command::CancelTournament { tournament }
            }
        };
        Envelope::new(actor, now, command)
    }

    /// A command likely to act, for the commutation test: most of [`Generator::next`]'s
    /// are refused, which would leave the rarer commands few pairs in which both act. A
    /// legal move in a live match, an acceptance or a decline of an open challenge, a
    /// rematch of a played match, or a queue join by a free player; at `now`.
    fn likely_to_act(&mut self, engine: &Engine, now: u64) -> Option<Envelope> {
        let command = |actor, command| Some(Envelope::new(actor, now, command));
        match self.rng.random_range(0..4u32) {
            0 => {
                let live: Vec<&triad_engine::Match> = engine
                    .live_matches()
                    .filter(|m| matches!(m.phase, Phase::Ready | Phase::InProgress))
                    .collect();
                let m = *live.get(self.rng.random_range(0..live.len().max(1)))?;
                let mover = m.seats?[m.position.turn().index()].address()?;
                let moves: Vec<_> = m.position.legal_moves().into_iter().collect();
                let mv = moves[self.rng.random_range(0..moves.len())];
                command(
                    mover,
                    Command::Move {
                        match_id: m.id,
                        seq: m.seq() + 1,
                        cell: mv.cell.index(),
                        mark: mv.mark,
                        signed: None,
                    },
                )
            }
            1 => {
                let open: Vec<(MatchId, Address)> = engine
                    .live_matches()
                    .filter_map(|m| {
                        m.challenge
                            .filter(|_| m.phase == Phase::Waiting)
                            .map(|c| (m.id, c.opponent))
                    })
                    .collect();
                let &(match_id, opponent) =
                    open.get(self.rng.random_range(0..open.len().max(1)))?;
                if self.chance(0.8) {
                    command(
                        opponent,
                        Command::AcceptChallenge {
                            match_id,
                            terms: None,
                        },
                    )
                } else {
                    command(opponent, Command::DeclineChallenge { match_id })
                }
            }
            2 => {
                let played: Vec<(MatchId, Address)> = engine
                    .matches()
                    .filter(|m| {
                        m.result.is_some_and(|r| r.reason.was_played()) && m.rematch.is_none()
                    })
                    .filter_map(|m| Some((m.id, m.participants().first().copied()?)))
                    .collect();
                let &(match_id, player) =
                    played.get(self.rng.random_range(0..played.len().max(1)))?;
                command(player, Command::Rematch { match_id })
            }
            _ => {
                let free: Vec<Address> = (0..PLAYERS)
                    .map(address)
                    .filter(|&a| engine.active_match(a).is_none())
                    .collect();
                let &player = free.get(self.rng.random_range(0..free.len().max(1)))?;
                let stake = self.pick(&[0, 0, 1_000]);
                command(
                    player,
                    Command::JoinQueue {
                        game: self.game(),
                        stake,
                    },
                )
            }
        }
    }
}

/// A random payout rule for each share, over its whole range: the bounds and their
/// neighbours (0, 1, 9,999, 10,000 basis points) as often as any other value.
fn random_rules(rng: &mut ChaCha8Rng) -> PayoutRules {
    let mut bps = || match rng.random_range(0..8u32) {
        0 => 0,
        1 => 1,
        2 => 9_999,
        3 => 10_000,
        _ => rng.random_range(0..=10_000),
    };
    PayoutRules {
        win_bps_of_pot: bps(),
        draw_bps_of_stake: bps(),
        timeout_bps_of_pot: bps(),
        cancel_bps_of_stake: bps(),
    }
}

/// What a run exercised, for the checks that it exercised enough.
struct Ran {
    endings: BTreeMap<&'static str, u64>,
    player_aborts: u64,
    /// Acceptances that withdrew the acceptor's own crossed challenge.
    crossed: u64,
    /// Rated puzzle attempts.
    rated_attempts: usize,
    /// Outages given back (`ClocksResumed`).
    resumed: u64,
}

fn run(seed: u64, automatic_timeouts: bool) {
    let commands = commands_per_run();
    let ran = simulate(
        seed,
        automatic_timeouts,
        PayoutRules::STANDARD,
        false,
        commands,
    );
    assert!(
        ran.player_aborts > 0 || commands < 50_000,
        "seed {seed}: no player aborted a match; the generator needs tuning"
    );
    assert!(
        ran.rated_attempts > 0 || commands < 50_000,
        "seed {seed}: no puzzle attempt was rated; the generator needs tuning"
    );
    assert!(
        ran.resumed > 0 || commands < 50_000,
        "seed {seed}: no outage was given back; the generator needs tuning"
    );
    // The simulation must exercise the rules, not just bounce off errors.
    for reason in [
        "win",
        "draw",
        "forfeit",
        "timeout",
        "cancelled",
        "declined",
        "aborted",
    ] {
        assert!(
            ran.endings.get(reason).copied().unwrap_or(0) > 0 || commands < 50_000,
            "seed {seed}: no match ended by {reason}; the generator needs tuning"
        );
    }
}

/// Runs `commands` random commands against an engine with `rules`, auditing after every
/// command (and the ledger after every event); `crossing` makes crossed challenges common.
fn simulate(
    seed: u64,
    automatic_timeouts: bool,
    rules: PayoutRules,
    crossing: bool,
    commands: u64,
) -> Ran {
    println!(
        "simulation seed {seed} ({commands} commands, automatic timeouts {automatic_timeouts}, \
         {rules:?}); reproduce with TRIAD_SIM_SEED={}",
        base_seed()
    );
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut config = Config::new(owner());
    config.payouts = rules;
    config.seed = seed;
    config.automatic_timeouts = automatic_timeouts;
    config.rematch_start = if rng.random_bool(0.5) {
        RematchStart::Random
    } else {
        RematchStart::Alternate
    };
    config.finished_retention_ms = rng.random_range(1_000..120_000);
    config.idempotency_window_ms = rng.random_range(1_000..300_000);
    config.max_stake = ETHER;
    // One counter of match ids, or several (partitioned ordering's stripes).
    config.match_id_stripes = NonZeroU16::new([1, 3, 16][(seed % 3) as usize]).expect("not zero");
    println!("stripes of match ids: {}", config.match_id_stripes);

    let mut engine = Engine::new(config.clone());
    let mut shadow = Engine::new(config);
    let mut model = Model {
        rules,
        next_seq: 1,
        ..Model::default()
    };
    let mut generator = Generator {
        rng,
        now: 1_700_000_000_000,
        previous: None,
        crossing,
    };
    let mut tally: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut refusals: BTreeMap<u16, u64> = BTreeMap::new();
    let mut endings: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut player_aborts = 0u64;
    let mut crossed = 0u64;
    let mut resumed = 0u64;
    let mut on_ended_matches = 0u64;

    for index in 0..commands {
        let envelope = generator.next(&engine);
        // What the command would be told were its ended match forgotten, to set beside
        // what the engine tells it while the match is in memory.
        let once_forgotten = envelope
            .command
            .match_id()
            .and_then(|id| engine.match_(id))
            .and_then(|m| m.refusal_once_forgotten(envelope.actor, &envelope.command));
        let outcome = catch_unwind(AssertUnwindSafe(|| engine.execute(&envelope)));
        let fail = |what: String| -> ! {
            panic!(
                "simulation seed {seed}, command #{index} {envelope:?}: {what}\n\
                 reproduce with TRIAD_SIM_SEED={}",
                base_seed()
            )
        };
        let result = outcome.unwrap_or_else(|_| fail("the engine panicked".into()));
        *tally.entry(envelope.command.name()).or_default() += 1;
        if let Some(expected) = once_forgotten {
            match forgotten_agrees(&envelope.command, expected, &result) {
                Ok(true) => on_ended_matches += 1,
                Ok(false) => {}
                Err(what) => fail(what),
            }
        }
        match &result {
            Ok(receipt) => {
                if let Err(e) = model.audit_batch(&receipt.events, &engine) {
                    fail(e);
                }
                if matches!(envelope.command, Command::AcceptChallenge { match_id, .. }
                    if receipt.events.iter().any(|e| matches!(e.kind,
                        EventKind::GameEnded { match_id: other, .. } if other != match_id)))
                {
                    crossed += 1;
                }
                for event in &receipt.events {
                    shadow.apply(event);
                    if let Err(e) = shadow.ledger().audit() {
                        fail(format!("after event {}: {e}", event.seq));
                    }
                    if let EventKind::GameEnded { reason, .. } = event.kind {
                        *endings.entry(reason.name()).or_default() += 1;
                    }
                    if let EventKind::MatchAborted { .. } = event.kind {
                        player_aborts += 1;
                    }
                    if let EventKind::ClocksResumed { .. } = event.kind {
                        resumed += 1;
                    }
                }
            }
            Err(error) => {
                let error: &EngineError = error;
                if error.name().is_empty() || error.to_string().is_empty() {
                    fail(format!("error {error:?} has no name or message"));
                }
                *refusals.entry(error.code()).or_default() += 1;
            }
        }
        if let Err(e) = model.audit_state(&engine) {
            fail(e);
        }
        if shadow != engine {
            fail("the replay of the log differs from the live state".into());
        }
    }
    println!("commands: {tally:?}");
    println!("commands on ended matches answered as once forgotten: {on_ended_matches}");
    assert!(
        on_ended_matches > commands / 2_000,
        "seed {seed}: only {on_ended_matches} commands named an ended match; the generator needs tuning"
    );
    println!("refusals by code: {refusals:?}");
    println!(
        "endings: {endings:?}; aborted by a player: {player_aborts}; crossed acceptances: {crossed}; \
         outages given back: {resumed}"
    );
    println!(
        "events: {}, deposited {}, reserve {}",
        engine.next_seq() - 1,
        engine.ledger().deposited(),
        engine.reserve()
    );
    Ran {
        endings,
        player_aborts,
        crossed,
        rated_attempts: model.rated_attempts.len(),
        resumed,
    }
}

/// Whether a command on an ended match was told, while the match was in memory, what
/// [`triad_engine::Match::refusal_once_forgotten`] tells it once the match is forgotten
/// (`Ok(true)`), or one of the answers that needs the engine's memory of the match
/// (`Ok(false)`): a repeated move's original answer, a repeat under an idempotency key, or a
/// rematch offered or refused for what lies outside the match (the actor's own offer,
/// balances, other matches). The engine's own `UnknownMatch`, for a match past its retention
/// not yet swept, is the forgotten case itself (`Ok(false)`).
fn forgotten_agrees(
    command: &Command,
    expected: EngineError,
    live: &Result<Receipt, EngineError>,
) -> Result<bool, String> {
    let rematch = matches!(command, Command::Rematch { .. });
    match live {
        Err(EngineError::UnknownMatch) => Ok(false),
        // A repeat under the same idempotency key is answered from the keys, which outlast
        // the match or not by their own window.
        Ok(Receipt {
            duplicate: Some(Duplicate::Command { .. }),
            ..
        }) => Ok(false),
        Err(EngineError::IdempotencyKeyReused) => Ok(false),
        Err(e) if *e == expected => Ok(true),
        Err(
            EngineError::RematchAlreadyOffered
            | EngineError::AlreadyInMatch { .. }
            | EngineError::InsufficientBalance { .. }
            | EngineError::OpponentBusy
            | EngineError::OpponentCannotAfford,
        ) if rematch && expected == EngineError::RematchUnavailable => Ok(false),
        Ok(_) if rematch && expected == EngineError::RematchUnavailable => Ok(false),
        Ok(receipt)
            if matches!(command, Command::Move { .. })
                && receipt.duplicate.is_some()
                && expected == triad_rules::MoveError::GameOver.into() =>
        {
            Ok(false)
        }
        other => Err(format!(
            "on an ended match in memory the engine answered {other:?}; once forgotten it \
             would be {expected:?}"
        )),
    }
}

#[test]
fn simulation_claimed_timeouts() {
    run(base_seed(), false);
}

#[test]
fn simulation_automatic_timeouts() {
    run(base_seed() + 1, true);
}

#[test]
fn simulation_claimed_timeouts_second_seed() {
    run(base_seed() + 2, false);
}

#[test]
fn simulation_automatic_timeouts_second_seed() {
    run(base_seed() + 3, true);
}

/// Every configurable share (win, draw, timeout, cancel) over its whole range: random
/// payout rules, each with a run of random commands on every path (crossed challenges
/// included), the money audited after every event and every ending paid as the rules say.
#[test]
fn simulation_random_payout_rules() {
    let configs = 24;
    let commands = (commands_per_run() / 10).max(1_000);
    let mut rng = ChaCha8Rng::seed_from_u64(base_seed() ^ 0x7061_796f_7574);
    let mut crossed = 0;
    let mut endings: BTreeMap<&'static str, u64> = BTreeMap::new();
    for i in 0..configs {
        let rules = random_rules(&mut rng);
        let ran = simulate(base_seed() + 100 + i, i % 2 == 1, rules, true, commands);
        crossed += ran.crossed;
        for (reason, n) in ran.endings {
            *endings.entry(reason).or_default() += n;
        }
    }
    for reason in [
        "win",
        "draw",
        "forfeit",
        "timeout",
        "cancelled",
        "declined",
        "aborted",
    ] {
        assert!(
            endings.get(reason).copied().unwrap_or(0) > 0 || commands < 5_000,
            "no match ended by {reason} under random rules; the generator needs tuning"
        );
    }
    assert!(
        crossed >= configs || commands < 5_000,
        "{crossed} crossed challenges accepted under random rules; the generator needs tuning"
    );
}

/// Crossed challenges under random payout rules and tight balances: each player
/// challenges the other, and one accepts the other's, which withdraws (as a cancel) their
/// own. Whatever the rules, stakes and balances, the acceptance is either refused with
/// `insufficient_balance` and changes nothing, or goes through with the acceptor's own
/// stake refunded exactly as a cancel refunds it, the money audited after every event.
#[test]
fn crossed_acceptances_under_random_payout_rules() {
    let mut rng = ChaCha8Rng::seed_from_u64(base_seed() ^ 0x0063_726f_7373_6564);
    let (alice, bob) = (address(0), address(1));
    let (mut accepted, mut refused) = (0, 0);
    for round in 0..2_000u64 {
        let rules = random_rules(&mut rng);
        let mut config = Config::new(owner());
        config.payouts = rules;
        config.max_stake = ETHER;
        let mut engine = Engine::with_log(config.clone());
        let mut now = 1_000;
        let mut run = |engine: &mut Engine, who, command| {
            now += 1;
            let envelope = Envelope::new(who, now, command);
            catch_unwind(AssertUnwindSafe(|| engine.execute(&envelope))).unwrap_or_else(|_| {
                panic!("round {round}, {rules:?}: the engine panicked on {envelope:?}")
            })
        };
        let theirs = rng.random_range(1..=1_000u128);
        let mine = rng.random_range(0..=1_000u128);
        let extra = rng.random_range(0..=1_000u128);
        for (who, amount) in [(alice, theirs), (bob, mine + extra)] {
            if amount > 0 {
                run(&mut engine, owner(), Command::Deposit { to: who, amount }).unwrap();
            }
        }
        let challenge = |opponent, stake| Command::Challenge {
            opponent,
            game: GameKind::TicTacToe,
            stake,
            first: StartChoice::Challenger,
        };
        let alices = run(&mut engine, alice, challenge(bob, theirs))
            .unwrap()
            .events[0]
            .match_id()
            .unwrap();
        let bobs = run(&mut engine, bob, challenge(alice, mine))
            .unwrap()
            .events[0]
            .match_id()
            .unwrap();
        let before = engine.clone();
        let refund = mine * u128::from(rules.cancel_bps_of_stake) / 10_000;
        let accept = Command::AcceptChallenge {
            match_id: alices,
            terms: None,
        };
        match run(&mut engine, bob, accept) {
            Ok(receipt) => {
                accepted += 1;
                assert!(
                    extra + refund >= theirs,
                    "round {round}: accepted without the stake"
                );
                assert!(
                    receipt.events.iter().any(|e| matches!(e.kind,
                        EventKind::GameEnded { match_id, reason: EndReason::Cancelled, .. }
                            if match_id == bobs)),
                    "round {round}: Bob's own challenge is withdrawn as a cancel"
                );
                assert_eq!(engine.match_(bobs).map(|m| m.phase), Some(Phase::Finished));
                assert_eq!(
                    engine.balance(bob),
                    extra + refund - theirs,
                    "round {round}"
                );
                assert_eq!(engine.reserve(), mine - refund, "round {round}");
            }
            Err(e) => {
                refused += 1;
                assert_eq!(e.code(), 105, "round {round}: {e:?}");
                assert!(
                    extra + refund < theirs,
                    "round {round}: refused with the stake"
                );
                assert!(
                    engine == before,
                    "round {round}: a refusal changed the state"
                );
            }
        }
        engine
            .audit()
            .unwrap_or_else(|e| panic!("round {round}, {rules:?}: {e}"));
        // The log, applied one event at a time, keeps the books after every event.
        let mut shadow = Engine::new(config);
        for event in engine.log_for_tests() {
            shadow.apply(event);
            shadow
                .ledger()
                .audit()
                .unwrap_or_else(|e| panic!("round {round}, after event {}: {e}", event.seq));
        }
        assert!(shadow == engine, "round {round}: the replay differs");
        assert_eq!(engine.ledger().total_held(), theirs + mine + extra);
    }
    println!("crossed acceptances: {accepted} accepted, {refused} refused");
    assert!(
        accepted > 100 && refused > 100,
        "{accepted} accepted, {refused} refused"
    );
}

/// Partitioned ordering's footing (ARCHITECTURE.md): two commands whose keys
/// (`Engine::keys`) do not overlap give the same answers (events, refusals, duplicates)
/// and leave the same state in either order, but for the places of their events in the
/// log, each at its own time: up to 2 s apart either way, each raised only to the times of
/// its own keys (`Engine::time_under`). Random states from the simulation's generator, and
/// at every step a second random command beside the first (either now and then a
/// tournament's): each pair with disjoint keys is run both ways from the same state. Four
/// runs, with 1, 4, 16 and 64 stripes of match ids. (`tests/keys.rs` shows that no key is
/// too much.)
#[test]
fn commands_with_disjoint_keys_commute() {
    let steps = (commands_per_run() / 4).max(2_000);
    // Each kind of command in at least this many disjoint pairs in which both acted.
    let least = if steps < 20_000 { 1 } else { 20 };
    let mut both_acted: BTreeMap<(&'static str, &'static str), u64> = BTreeMap::new();
    let (mut disjoint, mut overlapping, mut earlier_second) = (0u64, 0u64, 0u64);
    // Disjoint pairs in which both commands created a match, by the count of stripes.
    let mut both_created: BTreeMap<u16, u64> = BTreeMap::new();
    for run in 0..4 {
        let seed = base_seed() + 200 + run;
        let stripes = [1, 4, 16, 64][run as usize];
        let mut config = Config::new(owner());
        config.match_id_stripes = NonZeroU16::new(stripes).expect("not zero");
        config.seed = seed;
        config.automatic_timeouts = run % 2 == 1;
        config.rematch_start = if run < 2 {
            RematchStart::Random
        } else {
            RematchStart::Alternate
        };
        config.finished_retention_ms = 60_000;
        config.idempotency_window_ms = 120_000;
        config.max_stake = ETHER;
        config.tournaments.players_may_create = true;
        let mut engine = Engine::new(config);
        let mut generator = Generator {
            rng: ChaCha8Rng::seed_from_u64(seed),
            now: 1_700_000_000_000,
            previous: None,
            crossing: run % 2 == 0,
        };
        for index in 0..steps {
            // Half the time, each of the two is one likely to act.
            // Half the time, each of the two is one likely to act; now and then, a
            // tournament's.
            let mut a = generator.next(&engine);
            if generator.chance(0.5)
                && let Some(likely) = generator.likely_to_act(&engine, a.now_ms)
            {
                a = likely;
            } else if generator.chance(0.1) {
                a = generator.tournament_command(&engine, a.now_ms);
            }
            // Up to 2 s before or after the first.
            let b_now = (a.now_ms + generator.rng.random_range(0..=4_000)).saturating_sub(2_000);
            let mut b = Envelope {
                now_ms: b_now,
                ..generator.next(&engine)
            };
            if generator.chance(0.5)
                && let Some(likely) = generator.likely_to_act(&engine, b_now)
            {
                b = likely;
            } else if generator.chance(0.1) {
                b = generator.tournament_command(&engine, b_now);
            }
            if engine.keys(&a).overlap(&engine.keys(&b)) {
                overlapping += 1;
            } else {
                disjoint += 1;
                let context = format!("seed {seed}, step {index}");
                if let Some(receipts) = common::assert_commute(&engine, &a, &b, &context) {
                    *both_acted
                        .entry((a.command.name(), b.command.name()))
                        .or_default() += 1;
                    let created =
                        |r: &Receipt| r.events.iter().any(|e| e.creates_match().is_some());
                    if receipts.iter().all(created) {
                        *both_created.entry(stripes).or_default() += 1;
                    }
                    // The second's events earlier than the first's: one clock for the
                    // whole engine would have raised them in one order and not the other.
                    let [first, second] = receipts.map(|r| r.events[0].at_ms);
                    if second < first {
                        earlier_second += 1;
                    }
                }
            }
            // The state moves on by both, so the pairs come from ever new states.
            let _ = engine.execute(&a);
            let _ = engine.execute(&b);
        }
    }
    println!("pairs: {disjoint} with disjoint keys, {overlapping} overlapping");
    println!("disjoint pairs in which both commands acted: {both_acted:?}");
    let mut acted: BTreeMap<&str, u64> = BTreeMap::new();
    for (&(a, b), &n) in &both_acted {
        *acted.entry(a).or_default() += n;
        *acted.entry(b).or_default() += n;
    }
    println!("each kind in pairs in which both acted: {acted:?}");
    println!("pairs in which both created a match, by stripes of match ids: {both_created:?}");
    println!("pairs in which both acted, the second at an earlier time: {earlier_second}");
    assert!(
        earlier_second >= least * 50,
        "{earlier_second} pairs acted with the second earlier than the first"
    );
    // One counter of match ids orders every two commands that create matches; with more,
    // commands of players in different stripes create side by side.
    assert_eq!(both_created.get(&1), None);
    for stripes in [4, 16, 64] {
        let n = both_created.get(&stripes).copied().unwrap_or(0);
        assert!(
            n >= least,
            "with {stripes} stripes, {n} disjoint pairs both created a match, fewer than {least}"
        );
    }
    for name in [
        "move",
        "challenge",
        "accept_challenge",
        "decline_challenge",
        "join_queue",
        "cancel",
        "play_computer",
        "forfeit",
        "claim_timeout",
        "abort",
        "rematch",
        "deposit",
        "withdraw",
        "attempt_puzzle",
        "create_tournament",
        "join_tournament",
        "leave_tournament",
        "pause_tournament",
        "cancel_tournament",
    ] {
        let n = acted.get(name).copied().unwrap_or(0);
        assert!(
            n >= least,
            "{name} acted in {n} disjoint pairs, fewer than {least}; the generator needs tuning"
        );
    }
}
