//! Fault injection in the transport between two agents' state machines: every message
//! duplicated; messages delayed and reordered; dropped and redelivered; one board tampered
//! with. A referee sees each message as its sender sent it (as Triad's relay does) and
//! records the result.
//!
//! Whatever the faults: nothing panics; duplicates are ignored; both agents end the game
//! the same way, which is the referee's record and the rules' outcome of the board; and a
//! tampered board ends the game in `state-conflict`, recorded as an abort.

use std::collections::HashSet;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use triad_protocol::{
    App, Ending, Game, GameId, Message, Outcome, ProtocolError, STATE_CONFLICT, Side, Step,
    check_move, check_result,
};
use triad_rules::{AnyGame, Mark, Player};

#[derive(Copy, Clone, Debug, Default)]
struct Faults {
    /// Every message is delivered twice (or more).
    duplicate: bool,
    /// Each delivery is delayed by a random time, so messages overtake each other.
    reorder: bool,
    /// A delivery is lost now and then, and the transport redelivers it later (at least
    /// once), sometimes twice.
    drop_and_redeliver: bool,
    /// One move's board is changed in transit, after the referee saw it.
    tamper: bool,
}

/// What the referee (the relay) records, from the messages as sent.
struct Referee {
    app: App,
    position: AnyGame,
    roles: [Player; 2],
    recorded: Option<Ending>,
}

impl Referee {
    fn observe(&mut self, from: usize, message: &Message) {
        match message {
            Message::Move(m) if self.recorded.is_none() => {
                self.position = check_move(self.app, &self.position, self.roles[from], m)
                    .expect("the referee accepts every move an honest agent sends");
                if let Some(outcome) = self.position.outcome() {
                    self.recorded = Some(Ending::of_board(outcome));
                }
            }
            Message::Result(r) if r.outcome == Outcome::Abort => {
                // The first abort ends the game; a crossed second one changes nothing.
                self.recorded.get_or_insert_with(|| Ending::Aborted {
                    by: Side::Me,
                    reason: r.reason.clone(),
                });
            }
            Message::Result(r) => check_result(self.app, &self.position, r)
                .expect("the last mover declares the board's result"),
            _ => {}
        }
    }
}

struct InFlight {
    to: usize,
    message: Message,
    at: u64,
    /// Which message this is a copy of (to tell repeats from first deliveries).
    id: u64,
}

#[derive(Default, Debug)]
struct Report {
    endings: [Option<Ending>; 2],
    recorded: Option<Ending>,
    board: String,
    repeats: u32,
    repeats_ignored: u32,
    held: u32,
    conflicts: Vec<(usize, ProtocolError)>,
    errors: Vec<(usize, ProtocolError)>,
    tampered: Option<usize>,
}

struct Net {
    rng: ChaCha8Rng,
    faults: Faults,
    now: u64,
    queue: Vec<InFlight>,
    next_id: u64,
    /// The last delivery time per direction, for in-order delivery without `reorder`.
    last: [u64; 2],
    moves_sent: u32,
    tamper_move: u32,
    tampered: Option<usize>,
}

impl Net {
    fn delay(&mut self, to: usize) -> u64 {
        let at = if self.faults.reorder {
            self.now + self.rng.random_range(1..60)
        } else {
            self.last[to].max(self.now) + 1
        };
        self.last[to] = self.last[to].max(at);
        at
    }

    fn send(&mut self, referee: &mut Referee, from: usize, message: Message) {
        referee.observe(from, &message);
        let to = 1 - from;
        let id = self.next_id;
        self.next_id += 1;
        let mut message = message;
        if let Message::Move(m) = &mut message {
            self.moves_sent += 1;
            if self.faults.tamper && self.moves_sent == self.tamper_move {
                // Empty the cell of an earlier mark, or mark an empty one: never the same.
                let cell = (usize::from(m.position.index()) + 1 + self.rng.random_range(0..8)) % 9;
                m.board[cell] = match m.board[cell] {
                    Some(_) => None,
                    None => Some(m.mark),
                };
                self.tampered = Some(to);
            }
        }
        let copies = if self.faults.duplicate {
            2 + u32::from(self.rng.random_bool(0.2))
        } else {
            1
        };
        for _ in 0..copies {
            let mut at = self.delay(to);
            if self.faults.drop_and_redeliver && self.rng.random_bool(0.3) {
                // Lost; redelivered later, and now and then twice.
                at += self.rng.random_range(20..200);
                if self.rng.random_bool(0.3) {
                    let again = at + self.rng.random_range(1..100);
                    self.queue.push(InFlight {
                        to,
                        message: message.clone(),
                        at: again,
                        id,
                    });
                }
            }
            self.queue.push(InFlight {
                to,
                message: message.clone(),
                at,
                id,
            });
        }
    }

    fn next(&mut self) -> Option<InFlight> {
        let (i, _) = self
            .queue
            .iter()
            .enumerate()
            .min_by_key(|(i, f)| (f.at, *i))?;
        let flight = self.queue.remove(i);
        self.now = self.now.max(flight.at);
        Some(flight)
    }
}

fn choose(rng: &mut ChaCha8Rng, game: &Game) -> (u8, Mark) {
    let legal = game.position().legal_moves();
    let mv = legal[rng.random_range(0..legal.len())];
    (mv.cell.index(), mv.mark)
}

fn play(seed: u64, app: App, faults: Faults) -> Report {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let alice_role = if rng.random_bool(0.5) {
        Player::First
    } else {
        Player::Second
    };
    let game_id = rng
        .random_bool(0.5)
        .then(|| GameId::new(&format!("f-{seed}")).unwrap());
    let mut net = Net {
        rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed),
        faults,
        now: 0,
        queue: Vec::new(),
        next_id: 0,
        last: [0; 2],
        moves_sent: 0,
        // A move before the earliest possible end (move 5 in tic-tac-toe, 3 in SOS), so its
        // sender is still playing when the abort comes back.
        tamper_move: rng.random_range(1..=if app == App::TicTacToe { 4 } else { 2 }),
        tampered: None,
    };
    let mut referee = Referee {
        app,
        position: AnyGame::new(app.game()),
        roles: [alice_role, alice_role.other()],
        recorded: None,
    };
    let mut report = Report::default();
    let (alice, propose) = Game::propose(app, alice_role, game_id);
    let mut games: [Option<Game>; 2] = [Some(alice), None];
    net.send(&mut referee, 0, propose);
    let mut delivered: HashSet<u64> = HashSet::new();
    let mut deliveries = 0;
    while let Some(flight) = net.next() {
        deliveries += 1;
        assert!(deliveries < 1_000, "seed {seed}: the game does not settle");
        let me = flight.to;
        let repeat = !delivered.insert(flight.id);
        let steps: Vec<Step> = match (&mut games[me], &flight.message) {
            (slot @ None, Message::Propose(p)) => {
                let (game, accept) = Game::accept(app, p);
                *slot = Some(game);
                net.send(&mut referee, me, accept);
                Vec::new()
            }
            (None, other) => panic!("seed {seed}: {other:?} before the proposal"),
            (Some(game), message) => match game.receive(message) {
                Ok(steps) => steps,
                Err(e) => {
                    report.errors.push((me, e));
                    Vec::new()
                }
            },
        };
        if repeat {
            report.repeats += 1;
            if steps == [Step::Ignored] {
                report.repeats_ignored += 1;
            }
        }
        for step in steps {
            match step {
                Step::Conflict { error, abort } => {
                    report.conflicts.push((me, error));
                    net.send(&mut referee, me, abort);
                }
                Step::Held => report.held += 1,
                _ => {}
            }
        }
        let game = games[me].as_mut().expect("a game");
        if game.my_turn() {
            let (cell, mark) = choose(&mut rng, game);
            for message in game.play(cell, mark).expect("a legal move in turn") {
                net.send(&mut referee, me, message);
            }
        }
    }
    for (i, game) in games.iter().enumerate() {
        report.endings[i] = game.as_ref().and_then(|g| g.ending().cloned());
    }
    report.recorded = referee.recorded;
    report.board = referee.position.to_string();
    report.tampered = net.tampered;
    report
}

fn mirrored(ending: &Ending) -> Ending {
    match ending {
        Ending::Aborted { by, reason } => Ending::Aborted {
            by: if *by == Side::Me {
                Side::Opponent
            } else {
                Side::Me
            },
            reason: reason.clone(),
        },
        other => other.clone(),
    }
}

const GAMES: u64 = 400;

fn run_clean(faults: Faults) -> (u32, u32) {
    let (mut repeats, mut held) = (0, 0);
    for app in App::ALL {
        for seed in 0..GAMES {
            let r = play(seed, app, faults);
            let context = format!("{app} seed {seed} {faults:?}: {r:?}");
            assert!(r.errors.is_empty(), "{context}");
            assert!(r.conflicts.is_empty(), "{context}");
            let expected = Ending::of_board(
                AnyGame::parse(app.game(), &r.board)
                    .unwrap()
                    .outcome()
                    .expect("the game ended"),
            );
            assert_eq!(r.recorded.as_ref(), Some(&expected), "{context}");
            assert_eq!(r.endings[0].as_ref(), Some(&expected), "{context}");
            assert_eq!(r.endings[1].as_ref(), Some(&expected), "{context}");
            assert_eq!(
                r.repeats, r.repeats_ignored,
                "every repeat is ignored: {context}"
            );
            repeats += r.repeats;
            held += r.held;
        }
    }
    (repeats, held)
}

#[test]
fn every_message_duplicated() {
    let (repeats, _) = run_clean(Faults {
        duplicate: true,
        ..Faults::default()
    });
    assert!(repeats > 10 * GAMES as u32, "{repeats} repeats delivered");
}

#[test]
fn messages_delayed_and_reordered() {
    let (_, held) = run_clean(Faults {
        reorder: true,
        ..Faults::default()
    });
    assert!(held > 0, "some messages overtook others");
}

#[test]
fn messages_dropped_and_redelivered() {
    let (repeats, held) = run_clean(Faults {
        drop_and_redeliver: true,
        ..Faults::default()
    });
    assert!(repeats > 0 && held > 0, "{repeats} repeats, {held} held");
}

#[test]
fn all_transport_faults_at_once() {
    let (repeats, held) = run_clean(Faults {
        duplicate: true,
        reorder: true,
        drop_and_redeliver: true,
        tamper: false,
    });
    assert!(repeats > 0 && held > 0);
}

#[test]
fn one_board_tampered_with_ends_in_state_conflict() {
    for (reorder, duplicate) in [(false, false), (true, false), (true, true)] {
        let faults = Faults {
            tamper: true,
            reorder,
            duplicate,
            drop_and_redeliver: duplicate,
        };
        for app in App::ALL {
            for seed in 0..GAMES {
                let r = play(seed, app, faults);
                let context = format!("{app} seed {seed} {faults:?}: {r:?}");
                let victim = r.tampered.expect("a board was tampered with");
                // The receiver of the tampered board saw the conflict, and only it.
                assert!(!r.conflicts.is_empty(), "{context}");
                for (who, error) in &r.conflicts {
                    assert_eq!(*who, victim, "{context}");
                    assert_eq!(error.name(), "state_conflict", "{context}");
                }
                let aborted = Ending::Aborted {
                    by: Side::Me,
                    reason: Some(STATE_CONFLICT.into()),
                };
                assert_eq!(r.endings[victim].as_ref(), Some(&aborted), "{context}");
                assert_eq!(
                    r.endings[1 - victim].as_ref(),
                    Some(&mirrored(&aborted)),
                    "{context}"
                );
                // The referee recorded the abort, not a result.
                assert_eq!(r.recorded.as_ref(), Some(&aborted), "{context}");
                // Only a duplicate of the tampered board may be refused afterwards.
                for (_, e) in &r.errors {
                    assert_eq!(e.code(), 0, "{context}");
                }
            }
        }
    }
}
