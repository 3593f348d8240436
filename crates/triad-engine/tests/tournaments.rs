//! Tournaments in the engine, scenario by scenario: a Swiss event and an arena from
//! creation to prizes, the money of a staked one through every path (entry, refund on
//! leaving, cancellation, prizes and the reserve's share), the clock's part (starting,
//! rounds due after a restart, a first move that never comes), and every refusal with its
//! code. The harness audits the whole engine after every command and checks the replay.

mod common;

use common::*;
use triad_engine::tournament::pairing::Pairing;
use triad_engine::{
    Account, Command, Config, EndReason, Entry, EventKind, Format, MatchId, Origin, Phase, Seat,
    TournamentId, TournamentPhase, TournamentSpec, TransferReason,
};
use triad_rules::{GameKind, Mark, Player};

const START: u64 = 60_000;
const GAP: u64 = 10_000;
const WAVE_GAP: u64 = 2_000;

fn spec(format: Format, fee: u128, prizes: &[u32]) -> TournamentSpec {
    TournamentSpec {
        name: "Thursday cup".into(),
        game: GameKind::TicTacToe,
        format,
        starts_at_ms: START,
        entry: Entry::Everyone,
        entry_fee: fee,
        prizes_bps: prizes.to_vec(),
        max_players: 64,
    }
}

const SWISS3: Format = Format::Swiss { rounds: 3 };
const ARENA: Format = Format::Arena {
    duration_ms: 600_000,
};

fn create(t: &mut Table, spec: TournamentSpec) -> TournamentId {
    let r = t.ok(OWNER, Command::CreateTournament { spec });
    match r.events[0].kind {
        EventKind::TournamentCreated { tournament, .. } => tournament,
        ref other => panic!("created {other:?}"),
    }
}

fn join(t: &mut Table, who: triad_engine::Address, id: TournamentId) {
    t.ok(
        who,
        Command::JoinTournament {
            tournament: id,
            bot: false,
        },
    );
}

/// The tournament's games being played, in match order, with their seats.
fn games(t: &Table, id: TournamentId) -> Vec<(MatchId, Pairing)> {
    let tour = t.engine.tournament(id).unwrap();
    tour.playing.iter().map(|(m, p)| (*m, *p)).collect()
}

/// Plays a game out: the first player takes the top row (X wins), unless `draw`.
fn play_out(t: &mut Table, id: MatchId, draw: bool) {
    let m = t.m(id).clone();
    let seats = m.seats.unwrap();
    let who = |p: Player| seats[p.index()].address().unwrap();
    let line: &[(u8, Mark)] = if draw {
        // X O X / X O O / O X X: a full board, no line.
        &[
            (0, Mark::X),
            (1, Mark::O),
            (2, Mark::X),
            (4, Mark::O),
            (3, Mark::X),
            (5, Mark::O),
            (7, Mark::X),
            (6, Mark::O),
            (8, Mark::X),
        ]
    } else {
        &[
            (0, Mark::X),
            (3, Mark::O),
            (1, Mark::X),
            (4, Mark::O),
            (2, Mark::X),
        ]
    };
    for (i, &(cell, mark)) in line.iter().enumerate() {
        let player = if i % 2 == 0 {
            Player::First
        } else {
            Player::Second
        };
        t.advance(100);
        t.ok(
            who(player),
            Command::Move {
                match_id: id,
                seq: u8::try_from(i + 1).unwrap(),
                cell,
                mark,
                signed: None,
            },
        );
    }
}

#[test]
fn a_swiss_event_runs_its_rounds_and_pays_its_prizes() {
    let mut t = Table::new();
    let players = [ALICE, BOB, CAROL, DAVE, ERIN];
    for p in players {
        t.fund(p, ETHER);
    }
    let id = create(&mut t, spec(SWISS3, tenths(1), &[6_000, 3_000]));
    for p in players {
        join(&mut t, p, id);
    }
    assert_eq!(t.engine.ledger().balance(Account::Pool(id)), tenths(5));
    assert_eq!(t.balance(ALICE), tenths(9));

    // Nothing happens before the start, which is the clock's next job.
    assert_eq!(t.engine.next_deadline_ms(), Some(START));
    t.at(START - 1);
    assert!(t.ok(OWNER, Command::Tick).events.is_empty());
    t.at(START);
    let r = t.ok(OWNER, Command::Tick);
    assert!(
        matches!(r.events[0].kind, EventKind::TournamentStarted { tournament } if tournament == id)
    );
    for round in 1..=3u32 {
        let tour = t.engine.tournament(id).unwrap();
        assert_eq!(tour.round, round);
        let pairs = games(&t, id);
        assert_eq!(pairs.len(), 2, "five players: two games and a bye");
        for (m, _) in &pairs {
            assert_eq!(
                t.m(*m).origin,
                Origin::Tournament {
                    tournament: id,
                    round
                }
            );
            assert_eq!(t.m(*m).stake, 0, "the money is in the pool, not the games");
        }
        // The round is not over until its last game is.
        play_out(&mut t, pairs[0].0, false);
        t.advance(GAP);
        assert!(t.ok(OWNER, Command::Tick).events.is_empty());
        play_out(&mut t, pairs[1].0, round == 2);
        t.advance(GAP - 1);
        assert!(
            t.ok(OWNER, Command::Tick).events.is_empty(),
            "the gap between rounds"
        );
        t.advance(1);
        t.ok(OWNER, Command::Tick);
    }
    let tour = t.engine.tournament(id).unwrap().clone();
    assert_eq!(tour.phase, TournamentPhase::Finished);
    assert_eq!(tour.round, 3);
    // Every player played or had a bye each round: 3 rounds of 5 = 6 games and 3 byes.
    let games_played: usize = tour.records.iter().map(|r| r.games.len()).sum();
    let byes: u32 = tour.records.iter().map(|r| r.byes).sum();
    assert_eq!((games_played, byes), (12, 3));
    let standings = tour.standings();
    assert_eq!(standings.len(), 5);
    let first = tour.info(standings[0].entrant).address;
    let second = tour.info(standings[1].entrant).address;
    assert_eq!(t.engine.stats(first).tournament_wins, 1);
    // 60% and 30% of a pool of 0.5: 0.3 and 0.15; the reserve keeps 0.05.
    assert_eq!(tour.prizes.len(), 2);
    assert_eq!(tour.prizes[0].amount, ETHER * 3 / 10);
    assert_eq!(tour.prizes[1].amount, ETHER * 15 / 100);
    assert_eq!(tour.prizes[0].address, first);
    assert_eq!(tour.prizes[1].address, second);
    assert_eq!(t.engine.ledger().balance(Account::Pool(id)), 0);
    t.assert_reserve(ETHER * 5 / 100);
    // Money is conserved: five ether in, and all of it still inside.
    let inside: u128 = players.iter().map(|p| t.balance(*p)).sum::<u128>() + t.reserve();
    assert_eq!(inside, 5 * ETHER);
    // Finished: no more entries, no cancellation.
    t.expect_err(
        FRANK,
        Command::JoinTournament {
            tournament: id,
            bot: false,
        },
        133,
    );
    t.expect_err(OWNER, Command::CancelTournament { tournament: id }, 133);
}

#[test]
fn an_arena_pairs_free_players_again_and_stops_counting_at_its_end() {
    let mut t = Table::new();
    let id = create(&mut t, spec(ARENA, 0, &[]));
    for p in [ALICE, BOB, CAROL, DAVE] {
        join(&mut t, p, id);
    }
    t.at(START);
    t.ok(OWNER, Command::Tick);
    let first_wave = games(&t, id);
    assert_eq!(first_wave.len(), 2);
    // One game ends: its two players are paired again with each other (the only free
    // players) at the first tick after the gap between waves, while the other game goes on.
    play_out(&mut t, first_wave[0].0, false);
    let wave = START + WAVE_GAP;
    assert_eq!(
        t.engine.next_deadline_ms(),
        Some(wave),
        "the next wave is the clock's next job"
    );
    t.at(wave - 1);
    assert!(t.ok(OWNER, Command::Tick).events.is_empty());
    t.at(wave);
    t.ok(OWNER, Command::Tick);
    let now = games(&t, id);
    assert_eq!(now.len(), 2);
    assert_eq!(t.engine.tournament(id).unwrap().round, 2);
    // A paused player is not paired; a late player is.
    let (second_game, _) = now
        .iter()
        .copied()
        .find(|(m, _)| *m != first_wave[1].0)
        .unwrap();
    let tour = t.engine.tournament(id).unwrap();
    let paused = tour.info(tour.playing[&second_game].first).address;
    t.ok(
        paused,
        Command::PauseTournament {
            tournament: id,
            paused: true,
        },
    );
    t.expect_err(
        paused,
        Command::PauseTournament {
            tournament: id,
            paused: true,
        },
        144,
    );
    play_out(&mut t, second_game, true);
    join(&mut t, ERIN, id);
    t.advance(WAVE_GAP);
    t.ok(OWNER, Command::Tick);
    let tour = t.engine.tournament(id).unwrap();
    let newest = tour.playing.values().last().copied().unwrap();
    let names = [newest.first, newest.second].map(|e| tour.info(e).address);
    assert!(names.contains(&ERIN) && !names.contains(&paused));
    // Half a minute before the end the free players are paired again (the games whose
    // clocks ran out end first, and count); at the end those new games are still being
    // played, and count for nothing.
    t.at(START + 600_000 - 30_000);
    t.ok(OWNER, Command::Tick);
    let in_play = games(&t, id);
    assert!(!in_play.is_empty());
    let total = |t: &Table| -> usize {
        let tour = t.engine.tournament(id).unwrap();
        tour.records.iter().map(|r| r.games.len()).sum()
    };
    let counted = total(&t);
    t.at(START + 600_000);
    t.ok(OWNER, Command::Tick);
    assert_eq!(
        t.engine.tournament(id).unwrap().phase,
        TournamentPhase::Finished
    );
    assert!(t.engine.tournament(id).unwrap().playing.is_empty());
    play_out(&mut t, in_play[0].0, false);
    assert_eq!(
        total(&t),
        counted,
        "a game that ends after the arena does not count"
    );
}

#[test]
fn an_ended_tournament_is_forgotten_after_its_retention_and_its_late_games_still_end() {
    const RETENTION: u64 = 1_000;
    const END: u64 = START + 600_000;
    let mut t = Table::with(|c| c.finished_retention_ms = RETENTION);
    let arena = create(&mut t, spec(ARENA, 0, &[]));
    for p in [ALICE, BOB, CAROL, DAVE] {
        join(&mut t, p, arena);
    }
    // A staked event that one player alone enters is cancelled at its start: its pool is
    // refunded to nothing, and it is forgotten with its pool's account at zero.
    t.fund(ERIN, ETHER);
    let cancelled = create(&mut t, spec(SWISS3, tenths(1), &[5_000]));
    join(&mut t, ERIN, cancelled);
    t.at(START);
    t.ok(OWNER, Command::Tick);
    assert_eq!(
        t.engine.tournament(cancelled).unwrap().phase,
        TournamentPhase::Cancelled
    );
    assert_eq!(t.balance(ERIN), ETHER);
    // The arena's last wave is still being played at its end.
    t.at(END - 30_000);
    t.ok(OWNER, Command::Tick);
    assert!(
        t.engine.tournament(cancelled).is_none(),
        "a cancelled tournament past its retention is swept"
    );
    t.expect_err(
        ERIN,
        Command::JoinTournament {
            tournament: cancelled,
            bot: false,
        },
        132,
    );
    let late: Vec<MatchId> = games(&t, arena).iter().map(|(m, _)| *m).collect();
    assert!(!late.is_empty());
    t.at(END);
    t.ok(OWNER, Command::Tick);
    assert_eq!(
        t.engine.tournament(arena).unwrap().phase,
        TournamentPhase::Finished
    );
    // Within the retention window it is known, and closed; past it, unknown to every
    // command, whether or not the clock has swept it yet.
    let enter = || Command::JoinTournament {
        tournament: arena,
        bot: false,
    };
    t.at(END + RETENTION);
    t.expect_err(ERIN, enter(), 133);
    // (Its late games go on: a first move in each, so that they outlast its sweep.)
    for id in &late {
        let first = t.m(*id).seats.unwrap()[0].address().unwrap();
        t.ok(
            first,
            Command::Move {
                match_id: *id,
                seq: 1,
                cell: 0,
                mark: Mark::X,
                signed: None,
            },
        );
    }
    t.at(END + RETENTION + 1);
    t.expect_err(ERIN, enter(), 132);
    assert!(t.engine.tournament(arena).is_some(), "not swept yet");
    // The clock sweeps at most once a minute.
    let sweep = t.engine.next_sweep_ms().unwrap();
    assert!(sweep > END + RETENTION && sweep < END + RETENTION + MOVE_TIMEOUT_MS);
    t.at(sweep);
    let r = t.ok(OWNER, Command::Tick);
    assert!(
        r.events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Forgotten { .. }))
    );
    assert!(t.engine.tournament(arena).is_none(), "swept by the clock");
    assert_eq!(t.engine.tournaments().count(), 0);
    t.expect_err(ERIN, enter(), 132);
    // Its games still being played end on their clocks, counting for nothing anywhere.
    for id in &late {
        assert!(
            t.engine
                .match_(*id)
                .is_some_and(|m| m.phase != Phase::Finished)
        );
    }
    t.advance(MOVE_TIMEOUT_MS);
    t.ok(OWNER, Command::Tick);
    for id in &late {
        assert_eq!(t.m(*id).phase, Phase::Finished, "match {id} ended");
    }
    // A log written before tournaments were archived keeps its tournaments in memory:
    // replayed so, neither is forgotten, and the rest is as live.
    let log = t.engine.log_for_tests().to_vec();
    let before_archive = triad_engine::Engine::replay(
        Config {
            tournaments_archived_from_seq: log.len() as u64 + 1,
            ..t.engine.config().clone()
        },
        &log,
    );
    assert_eq!(
        before_archive.tournament(arena).map(|t| t.phase),
        Some(TournamentPhase::Finished)
    );
    assert_eq!(
        before_archive.tournament(cancelled).map(|t| t.phase),
        Some(TournamentPhase::Cancelled)
    );
    assert_eq!(before_archive.audit(), Ok(()));
}

#[test]
fn fees_are_refunded_on_leaving_before_the_start_and_on_cancellation() {
    let mut t = Table::new();
    for p in [ALICE, BOB, CAROL] {
        t.fund(p, ETHER);
    }
    let id = create(&mut t, spec(SWISS3, tenths(2), &[5_000]));
    join(&mut t, ALICE, id);
    join(&mut t, BOB, id);
    t.ok(ALICE, Command::LeaveTournament { tournament: id });
    assert_eq!(t.balance(ALICE), ETHER, "left before the start: refunded");
    // Coming back pays again, in the same entrant slot.
    join(&mut t, ALICE, id);
    assert_eq!(t.balance(ALICE), tenths(8));
    assert_eq!(t.engine.tournament(id).unwrap().entrants.len(), 2);
    join(&mut t, CAROL, id);
    // Only the owner or the organizer may cancel.
    t.expect_err(BOB, Command::CancelTournament { tournament: id }, 143);
    let r = t.ok(OWNER, Command::CancelTournament { tournament: id });
    let refunds = r
        .events
        .iter()
        .filter(|e| {
            matches!(&e.kind, EventKind::Transferred { transfer, .. }
                if transfer.reason == TransferReason::Refund && transfer.from == Account::Pool(id))
        })
        .count();
    assert_eq!(refunds, 3);
    for p in [ALICE, BOB, CAROL] {
        assert_eq!(t.balance(p), ETHER);
    }
    assert_eq!(
        t.engine.tournament(id).unwrap().phase,
        TournamentPhase::Cancelled
    );
}

#[test]
fn short_of_players_at_its_start_a_tournament_is_cancelled_and_refunded() {
    let mut t = Table::new();
    t.fund(ALICE, ETHER);
    t.fund(BOB, ETHER);
    // Three prize places need three players.
    let id = create(&mut t, spec(ARENA, tenths(1), &[5_000, 3_000, 1_000]));
    join(&mut t, ALICE, id);
    join(&mut t, BOB, id);
    t.at(START);
    let r = t.ok(OWNER, Command::Tick);
    assert!(matches!(
        r.events[0].kind,
        EventKind::TournamentCancelled { .. }
    ));
    assert_eq!((t.balance(ALICE), t.balance(BOB)), (ETHER, ETHER));
}

#[test]
fn a_first_move_that_never_comes_loses_the_game() {
    let mut t = Table::new();
    let id = create(&mut t, spec(SWISS3, 0, &[]));
    join(&mut t, ALICE, id);
    join(&mut t, BOB, id);
    t.at(START);
    t.ok(OWNER, Command::Tick);
    let (game, pairing) = games(&t, id)[0];
    // Tournament games time out by themselves, even with claims configured.
    assert!(!t.engine.config().automatic_timeouts);
    t.at(START + MOVE_TIMEOUT_MS + 1);
    t.ok(OWNER, Command::Tick);
    let result = t.result(game);
    assert_eq!(result.reason, EndReason::Timeout);
    assert_eq!(result.winner, Some(Player::Second));
    let tour = t.engine.tournament(id).unwrap();
    assert_eq!(tour.records[pairing.second as usize].swiss_score(), 2);
    // A tournament's game can be neither aborted nor rematched.
    let loser = tour.info(pairing.first).address;
    t.expect_err(loser, Command::Rematch { match_id: game }, 142);
}

#[test]
fn a_round_due_while_the_server_was_down_starts_when_it_is_back() {
    let mut t = Table::new();
    let id = create(&mut t, spec(SWISS3, 0, &[]));
    for p in [ALICE, BOB] {
        join(&mut t, p, id);
    }
    t.at(START);
    t.ok(OWNER, Command::Tick);
    let (game, _) = games(&t, id)[0];
    play_out(&mut t, game, false);
    // The server stops; it comes back an hour later from its log.
    let log = t.engine.log_for_tests().to_vec();
    let mut back = triad_engine::Engine::replay(t.engine.config().clone(), &log);
    assert_eq!(back, t.engine);
    let later = t.now + 3_600_000;
    let r = back
        .execute(&triad_engine::Envelope::new(OWNER, later, Command::Tick))
        .unwrap();
    assert!(matches!(
        r.events[0].kind,
        EventKind::TournamentRound { round: 2, .. }
    ));
    back.audit().unwrap();
}

#[test]
fn an_arena_with_people_only_refuses_bots_and_a_bot_arena_people() {
    let mut t = Table::new();
    let mut people = spec(ARENA, 0, &[]);
    people.entry = Entry::People;
    let id = create(&mut t, people);
    t.expect_err(
        ALICE,
        Command::JoinTournament {
            tournament: id,
            bot: true,
        },
        137,
    );
    let mut bots = spec(ARENA, 0, &[]);
    bots.entry = Entry::Bots;
    let id = create(&mut t, bots);
    t.expect_err(
        ALICE,
        Command::JoinTournament {
            tournament: id,
            bot: false,
        },
        137,
    );
    t.ok(
        ALICE,
        Command::JoinTournament {
            tournament: id,
            bot: true,
        },
    );
    assert!(t.engine.tournament(id).unwrap().entrants[0].bot);
}

#[test]
fn every_refusal_has_its_code_and_changes_nothing() {
    let mut t = Table::with(|c: &mut Config| c.tournaments.players_may_create = true);
    t.fund(ALICE, tenths(1));
    let staked = create(&mut t, spec(SWISS3, tenths(2), &[]));
    let unknown = TournamentId(99);
    t.expect_err(
        ALICE,
        Command::JoinTournament {
            tournament: unknown,
            bot: false,
        },
        132,
    );
    // Not enough for the fee.
    t.expect_err(
        ALICE,
        Command::JoinTournament {
            tournament: staked,
            bot: false,
        },
        105,
    );
    t.expect_err(ALICE, Command::LeaveTournament { tournament: staked }, 136);
    t.expect_err(
        ALICE,
        Command::PauseTournament {
            tournament: staked,
            paused: true,
        },
        136,
    );
    // Players may create free tournaments, but not staked ones, and only two at once.
    t.expect_err(
        ALICE,
        Command::CreateTournament {
            spec: spec(SWISS3, 1, &[]),
        },
        140,
    );
    let mut bad = spec(SWISS3, 0, &[]);
    bad.name = String::new();
    t.expect_err(ALICE, Command::CreateTournament { spec: bad }, 139);
    t.ok(
        ALICE,
        Command::CreateTournament {
            spec: spec(SWISS3, 0, &[]),
        },
    );
    let own = t.ok(
        ALICE,
        Command::CreateTournament {
            spec: spec(ARENA, 0, &[]),
        },
    );
    t.expect_err(
        ALICE,
        Command::CreateTournament {
            spec: spec(ARENA, 0, &[]),
        },
        141,
    );
    let EventKind::TournamentCreated {
        tournament: own, ..
    } = own.events[0].kind
    else {
        panic!("created");
    };
    // A full one.
    let mut two = spec(SWISS3, 0, &[]);
    two.max_players = 2;
    let small = create(&mut t, two);
    join(&mut t, BOB, small);
    t.expect_err(
        BOB,
        Command::JoinTournament {
            tournament: small,
            bot: false,
        },
        135,
    );
    join(&mut t, CAROL, small);
    t.expect_err(
        DAVE,
        Command::JoinTournament {
            tournament: small,
            bot: false,
        },
        138,
    );
    // The organizer may cancel their own.
    t.ok(ALICE, Command::CancelTournament { tournament: own });
    // Started: a Swiss event takes no newcomers.
    t.at(START);
    t.ok(OWNER, Command::Tick);
    t.expect_err(
        DAVE,
        Command::JoinTournament {
            tournament: small,
            bot: false,
        },
        134,
    );
    // Aborting a tournament game is refused.
    let (game, _) = games(&t, small)[0];
    t.expect_err(BOB, Command::Abort { match_id: game }, 142);
    // Leaving after the start withdraws, keeping the fee in the pool; coming back is free.
    t.ok(BOB, Command::LeaveTournament { tournament: small });
    t.ok(
        BOB,
        Command::JoinTournament {
            tournament: small,
            bot: false,
        },
    );
}

#[test]
fn a_tournament_game_is_seated_by_its_pairing() {
    let mut t = Table::new();
    let id = create(&mut t, spec(SWISS3, 0, &[]));
    join(&mut t, ALICE, id);
    join(&mut t, BOB, id);
    t.at(START);
    t.ok(OWNER, Command::Tick);
    let (game, p) = games(&t, id)[0];
    let tour = t.engine.tournament(id).unwrap();
    let seats = [p.first, p.second].map(|e| Seat::Human(tour.info(e).address));
    assert_eq!(t.m(game).seats, Some(seats));
}
