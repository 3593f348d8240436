//! Seeded simulation of tournaments at full size: a 1,000-player staked arena and a
//! 200-player Swiss event run to the end, with players joining, leaving before the start
//! and after it, pausing and resuming, forfeiting, letting their clocks run out, sending
//! commands that are refused, and the server crashing (the engine rebuilt from its log,
//! after minutes down).
//!
//! After every command:
//! - the engine's own audit passes (money conserved, every pool holding exactly its fees,
//!   every tournament game a live match of its pairing, nobody in two games at once, the
//!   games on both players' records, the scores summing to the games and byes given out);
//! - a refused command emitted nothing.
//!
//! Every 500 commands, and at each crash, a shadow engine folded from the events alone
//! equals the live one. At the end: the tournament finished, its pool paid out in full
//! to the prize ranks and the reserve, and the money inside is what was deposited.
//!
//! `TRIAD_SIM_SEED=N` picks the seed; a failure prints it with the command's index.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use triad_engine::{
    Account, Address, Command, Config, Engine, Entry, Envelope, Event, Format, MatchId,
    TournamentId, TournamentPhase, TournamentSpec,
};
use triad_rules::GameKind;

mod common;

const ETHER: u128 = 1_000_000_000_000_000_000;
const FEE: u128 = ETHER / 100;

fn owner() -> Address {
    Address::from_bytes([0xee; 32])
}

fn player(i: u32) -> Address {
    let mut bytes = [0u8; 32];
    // The first byte spreads players over the stripes of match ids, as hashes do.
    bytes[0] = i.to_le_bytes()[0];
    bytes[28..].copy_from_slice(&(i + 1).to_be_bytes());
    Address::from_bytes(bytes)
}

fn seed() -> u64 {
    std::env::var("TRIAD_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_126)
}

struct Sim {
    config: Config,
    engine: Engine,
    shadow: Engine,
    log: Vec<Event>,
    rng: ChaCha8Rng,
    now: u64,
    commands: u64,
    deposited: u128,
    label: &'static str,
    seed: u64,
    /// Pairs of commands run at once whose keys overlapped.
    overlapping: u64,
    /// Pairs with disjoint keys in which both acted, found to commute.
    commuted: u64,
    /// Those of them in which a game ended.
    commuted_endings: u64,
}

impl Sim {
    fn new(label: &'static str, seed: u64) -> Sim {
        let mut config = Config::new(owner());
        config.seed = seed;
        // A round's games take their ids from their first seats' stripes.
        config.match_id_stripes = std::num::NonZeroU16::new(8).expect("not zero");
        let engine = Engine::new(config.clone());
        Sim {
            shadow: engine.clone(),
            config,
            engine,
            log: Vec::new(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            now: 1_000,
            commands: 0,
            deposited: 0,
            label,
            seed,
            overlapping: 0,
            commuted: 0,
            commuted_endings: 0,
        }
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    /// Sends one command and checks the invariants; returns whether it was applied.
    fn run(&mut self, actor: Address, command: Command) -> bool {
        self.commands += 1;
        let (label, seed, n) = (self.label, self.seed, self.commands);
        let next_seq = self.engine.next_seq();
        let shown = format!("{command:?}");
        let result = self
            .engine
            .execute(&Envelope::new(actor, self.now, command));
        let applied = match result {
            Ok(receipt) => {
                for event in &receipt.events {
                    self.shadow.apply(event);
                }
                self.log.extend(receipt.events);
                true
            }
            Err(_) => {
                assert_eq!(
                    self.engine.next_seq(),
                    next_seq,
                    "{label} seed {seed} command {n}: a refusal emitted events"
                );
                false
            }
        };
        if let Err(broken) = self.engine.audit() {
            panic!("{label} seed {seed} command {n} ({shown}): {broken}");
        }
        if n % 500 == 0 {
            assert!(
                self.shadow == self.engine,
                "{label} seed {seed} command {n}: the fold of the events differs from the engine"
            );
        }
        applied
    }

    fn tick(&mut self) {
        self.run(owner(), Command::Tick);
    }

    /// The server crashes and comes back `down_ms` later, rebuilt from its log.
    fn crash(&mut self, down_ms: u64) {
        let rebuilt = Engine::replay(self.config.clone(), &self.log);
        assert!(
            rebuilt == self.engine,
            "{} seed {}: the replayed log differs from the engine",
            self.label,
            self.seed
        );
        self.engine = rebuilt;
        self.now += down_ms;
    }

    fn fund(&mut self, players: u32) {
        for i in 0..players {
            self.run(
                owner(),
                Command::Deposit {
                    to: player(i),
                    amount: ETHER,
                },
            );
            self.deposited += ETHER;
        }
    }

    /// One random move, forfeit or refused command in a random game of `id`, with its
    /// sender; none while no game is in play.
    fn game_command(&mut self, id: TournamentId) -> Option<(Address, Command)> {
        let t = self.engine.tournament(id).expect("created");
        if t.playing.is_empty() {
            return None;
        }
        let k = self.rng.random_range(0..t.playing.len());
        let (&match_id, _) = t.playing.iter().nth(k).expect("k < len");
        let m = self.engine.match_(match_id).expect("live");
        let turn = m.position.turn();
        let seats = m.seats.expect("seated");
        let mover = seats[turn.index()].address().expect("a person");
        let other = seats[turn.other().index()].address().expect("a person");
        let moves: Vec<_> = m.position.legal_moves().into_iter().collect();
        let seq = m.seq() + 1;
        let roll = self.rng.random_range(0..100u32);
        let command = match roll {
            // A player gives up.
            0..2 => Command::Forfeit { match_id },
            // Out of turn, or an occupied cell: refused.
            2..4 => Command::Move {
                match_id,
                seq,
                cell: 0,
                mark: triad_rules::Mark::X,
                signed: None,
            },
            _ => {
                let mv = moves[self.rng.random_range(0..moves.len())];
                Command::Move {
                    match_id,
                    seq,
                    cell: mv.cell.index(),
                    mark: mv.mark,
                    signed: None,
                }
            }
        };
        let actor = if (2..3).contains(&roll) { other } else { mover };
        Some((actor, command))
    }

    /// Plays one random move, forfeit or refused command in a random game of `id`.
    fn act_in_a_game(&mut self, id: TournamentId) {
        if let Some((actor, command)) = self.game_command(id) {
            self.run(actor, command);
        }
    }

    /// A random entrant of `id` pausing, resuming, leaving or coming back.
    fn entrant_command(&mut self, id: TournamentId, players: u32) -> (Address, Command) {
        let who = player(self.rng.random_range(0..players));
        let command = match self.rng.random_range(0..4u32) {
            0 => Command::PauseTournament {
                tournament: id,
                paused: true,
            },
            1 => Command::PauseTournament {
                tournament: id,
                paused: false,
            },
            2 => Command::LeaveTournament { tournament: id },
            _ => Command::JoinTournament {
                tournament: id,
                bot: false,
            },
        };
        (who, command)
    }

    /// A random entrant of `id` pauses, resumes, leaves or comes back.
    fn come_and_go(&mut self, id: TournamentId, players: u32) {
        let (who, command) = self.entrant_command(id, players);
        self.run(who, command);
    }

    /// Two commands at the same instant, as two nodes would send them: a game's and
    /// another game's, or an entrant's. When their keys do not overlap (two games', or an
    /// entrant's and a game of others'), they must commute (`common::assert_commute`),
    /// games' endings too, which score them in the same tournament; then both are run.
    fn two_at_once(&mut self, id: TournamentId, players: u32) {
        let first = self.game_command(id);
        let second = if self.chance(0.8) {
            self.game_command(id)
        } else {
            Some(self.entrant_command(id, players))
        };
        let (Some((a_actor, a)), Some((b_actor, b))) = (first, second) else {
            return;
        };
        let a = Envelope::new(a_actor, self.now, a);
        let b = Envelope::new(b_actor, self.now, b);
        if self.engine.keys(&a).overlap(&self.engine.keys(&b)) {
            self.overlapping += 1;
        } else {
            let context = format!(
                "{} seed {} command {}",
                self.label, self.seed, self.commands
            );
            if let Some(receipts) = common::assert_commute(&self.engine, &a, &b, &context) {
                self.commuted += 1;
                let ended = |r: &triad_engine::Receipt| {
                    r.events
                        .iter()
                        .any(|e| matches!(e.kind, triad_engine::EventKind::GameEnded { .. }))
                };
                if receipts.iter().any(ended) {
                    self.commuted_endings += 1;
                }
            }
        }
        self.run(a.actor, a.command);
        self.run(b.actor, b.command);
    }

    /// The pairs run at once exercised the property: many commuted, games' endings among
    /// them.
    fn commuted_enough(&self) {
        let (label, commuted, endings) = (self.label, self.commuted, self.commuted_endings);
        println!(
            "{label}: {commuted} pairs commuted ({endings} with a game's ending), {} overlapping",
            self.overlapping
        );
        assert!(
            commuted > 100 && endings > 10,
            "{label}: {commuted} pairs commuted ({endings} with a game's ending); the simulation \
             needs tuning"
        );
    }

    fn finish_checks(&self, id: TournamentId, players: u32) {
        let t = self.engine.tournament(id).expect("created");
        assert_eq!(
            t.phase,
            TournamentPhase::Finished,
            "{}: ran to the end",
            self.label
        );
        assert_eq!(self.engine.ledger().balance(Account::Pool(id)), 0);
        let inside: u128 = (0..players)
            .map(|i| self.engine.balance(player(i)))
            .sum::<u128>()
            + self.engine.reserve();
        assert_eq!(inside, self.deposited, "{}: money conserved", self.label);
        let standings = t.standings();
        assert_eq!(standings.len(), t.players() as usize);
        let winner = t.info(standings[0].entrant).address;
        assert_eq!(self.engine.stats(winner).tournament_wins, 1);
        let paid: u128 = t.prizes.iter().map(|p| p.amount).sum();
        assert!(paid > 0 && paid <= t.spec.entry_fee * u128::from(t.players()));
        assert!(
            self.shadow == self.engine,
            "{}: the fold equals the engine",
            self.label
        );
        let games: usize = t.records.iter().map(|r| r.games.len()).sum::<usize>() / 2;
        eprintln!(
            "{}: {} entrants, {} rounds or waves, {games} games, {} commands, {} events, audited after each",
            self.label,
            t.players(),
            t.round,
            self.commands,
            self.log.len()
        );
    }
}

fn spec(format: Format, max_players: u32) -> TournamentSpec {
    TournamentSpec {
        name: "Simulated".into(),
        game: GameKind::TicTacToe,
        format,
        starts_at_ms: 100_000,
        entry: Entry::Everyone,
        entry_fee: FEE,
        prizes_bps: vec![5_000, 3_000, 1_000],
        max_players,
    }
}

fn create(sim: &mut Sim, spec: TournamentSpec) -> TournamentId {
    assert!(sim.run(owner(), Command::CreateTournament { spec }));
    sim.engine.tournaments().next().expect("created").id
}

/// Everyone joins before the start; some leave again (refunded) and a few come back.
fn enter_all(sim: &mut Sim, id: TournamentId, players: u32) {
    for i in 0..players {
        let applied = sim.run(
            player(i),
            Command::JoinTournament {
                tournament: id,
                bot: i % 7 == 0,
            },
        );
        assert!(applied, "{} joins", i);
        if sim.chance(0.05) {
            sim.run(player(i), Command::LeaveTournament { tournament: id });
            if sim.chance(0.5) {
                sim.run(
                    player(i),
                    Command::JoinTournament {
                        tournament: id,
                        bot: i % 7 == 0,
                    },
                );
            }
        }
    }
}

#[test]
fn a_thousand_player_arena_runs_to_the_end() {
    const PLAYERS: u32 = 1_000;
    let mut sim = Sim::new("arena", seed());
    sim.fund(PLAYERS);
    let id = create(
        &mut sim,
        spec(
            Format::Arena {
                duration_ms: 8 * 60_000,
            },
            PLAYERS,
        ),
    );
    enter_all(&mut sim, id, PLAYERS);
    sim.now = 100_000;
    sim.tick();
    let mut crashes = 0;
    while sim.engine.tournament(id).expect("created").phase == TournamentPhase::Running {
        sim.now += sim.rng.random_range(0..40);
        match sim.rng.random_range(0..1000u32) {
            0..10 => sim.tick(),
            10..13 => sim.come_and_go(id, PLAYERS),
            13 if crashes < 3 => {
                crashes += 1;
                let down = sim.rng.random_range(1_000..120_000);
                sim.crash(down);
            }
            14..40 => sim.two_at_once(id, PLAYERS),
            _ => sim.act_in_a_game(id),
        }
    }
    assert_eq!(crashes, 3, "the server crashed three times");
    let t = sim.engine.tournament(id).expect("created");
    let games: usize = t.records.iter().map(|r| r.games.len()).sum::<usize>() / 2;
    assert!(
        games > 2_000,
        "an arena of 1,000 plays many games ({games})"
    );
    assert!(t.round > 10, "many waves were paired ({})", t.round);
    sim.finish_checks(id, PLAYERS);
    sim.commuted_enough();
}

#[test]
fn a_two_hundred_player_swiss_event_runs_to_the_end() {
    const PLAYERS: u32 = 200;
    const ROUNDS: u8 = 7;
    let mut sim = Sim::new("swiss", seed() ^ 0x5157_1550);
    sim.fund(PLAYERS);
    let id = create(&mut sim, spec(Format::Swiss { rounds: ROUNDS }, PLAYERS));
    enter_all(&mut sim, id, PLAYERS);
    sim.now = 100_000;
    sim.tick();
    let mut crashed = false;
    while sim.engine.tournament(id).expect("created").phase == TournamentPhase::Running {
        sim.now += sim.rng.random_range(0..200);
        match sim.rng.random_range(0..1000u32) {
            0..20 => sim.tick(),
            20..23 => sim.come_and_go(id, PLAYERS),
            23 if !crashed && sim.engine.tournament(id).expect("created").round == 4 => {
                crashed = true;
                sim.crash(300_000);
            }
            24..100 => sim.two_at_once(id, PLAYERS),
            _ => sim.act_in_a_game(id),
        }
    }
    let t = sim.engine.tournament(id).expect("created").clone();
    assert_eq!(t.round, u32::from(ROUNDS));
    // Nobody met the same opponent twice: 200 players, 7 rounds, a rematch is always
    // avoidable.
    for (e, r) in t.records.iter().enumerate() {
        let mut met: Vec<u32> = r.games.iter().map(|g| g.opponent).collect();
        met.sort_unstable();
        let n = met.len();
        met.dedup();
        assert_eq!(met.len(), n, "entrant {e} met an opponent twice");
    }
    sim.finish_checks(id, PLAYERS);
    sim.commuted_enough();
}

/// The refusals a hostile client can send at a running tournament change nothing.
#[test]
fn refused_tournament_commands_change_nothing() {
    let mut sim = Sim::new("refusals", seed());
    sim.fund(4);
    let id = create(&mut sim, spec(Format::Swiss { rounds: 2 }, 4));
    enter_all(&mut sim, id, 4);
    let before = sim.engine.clone();
    for command in [
        Command::JoinTournament {
            tournament: TournamentId(77),
            bot: false,
        },
        Command::CancelTournament { tournament: id },
        Command::Abort {
            match_id: MatchId(1),
        },
    ] {
        assert!(!sim.run(player(3), command));
    }
    assert!(sim.engine == before);
}
