//! The computer players: what each strength may and may not play, exhaustively where the
//! claim is absolute, and reproducibility under a seeded RNG.

use std::collections::{HashMap, HashSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use triad_rules::{AnyGame, GameKind, Move, Player};
use triad_solver::{CASUAL_SLIP_PROBABILITY, Strength, Table, Value, Verdict, table};

fn ongoing(table: &Table) -> impl Iterator<Item = AnyGame> + '_ {
    table
        .reachable()
        .map(|(game, _)| game)
        .filter(|game| !game.is_over())
}

/// The worst result `perfect` can end up with from `game`, from its own view, when it may
/// pick any of its optimal moves and the opponent may reply anything.
fn worst_case(
    table: &Table,
    game: &AnyGame,
    perfect: Player,
    memo: &mut HashMap<(u16, Player), Value>,
) -> Value {
    let key = (game.position_number(), perfect);
    if let Some(&value) = memo.get(&key) {
        return value;
    }
    let value = match game.outcome() {
        Some(outcome) => match outcome.winner() {
            Some(winner) if winner == perfect => Value::new(Verdict::Win, 0),
            Some(_) => Value::new(Verdict::Loss, 0),
            None => Value::new(Verdict::Draw, 0),
        },
        None => {
            let moves = if game.turn() == perfect {
                table.best_moves(game)
            } else {
                game.legal_moves()
            };
            assert!(!moves.is_empty(), "{game}");
            moves
                .into_iter()
                .map(|mv| {
                    let after = worst_case(table, &game.play(mv).unwrap(), perfect, memo);
                    Value::new(after.verdict, after.plies + 1)
                })
                .min()
                .unwrap()
        }
    };
    memo.insert(key, value);
    value
}

#[test]
fn perfect_secures_the_exact_value_against_every_reply() {
    // From every ongoing position, whichever optimal moves Perfect picks and whatever the
    // opponent replies, Perfect does at least as well as the position's value: it never
    // loses a position that is not lost, wins every won one no later than promised, and
    // survives a lost one as long as promised. (The opponent's best replies hold it to the
    // value exactly.)
    for kind in GameKind::ALL {
        let table = table(kind);
        let mut memo = HashMap::new();
        for game in ongoing(table) {
            let worst = worst_case(table, &game, game.turn(), &mut memo);
            assert_eq!(Some(worst), table.value(&game), "{kind} {game}");
        }
    }
}

#[test]
fn perfect_picks_only_optimal_moves_and_every_one_of_them() {
    for kind in GameKind::ALL {
        let table = table(kind);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for game in ongoing(table) {
            let best = table.best_moves(&game);
            let mut seen = HashSet::new();
            // 24n draws miss one of n equally likely moves with probability below
            // n * e^-24 < 1e-9; the seed is fixed, so this always passes or never does.
            for _ in 0..24 * best.len() {
                let mv = table.choose(&game, Strength::Perfect, &mut rng).unwrap();
                assert!(best.contains(&mv), "{kind} {game}: {mv} is not optimal");
                seen.insert(mv);
            }
            assert_eq!(
                seen.len(),
                best.len(),
                "{kind} {game}: ties are broken at random"
            );
        }
    }
}

#[test]
fn casual_never_plays_a_losing_move_while_a_safe_one_exists() {
    for kind in GameKind::ALL {
        let table = table(kind);
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for game in ongoing(table) {
            let analysis = table.analyze(&game);
            let safe_exists = analysis.iter().any(|(_, v)| v.verdict != Verdict::Loss);
            for _ in 0..8 {
                let mv = table.choose(&game, Strength::Casual, &mut rng).unwrap();
                let (_, value) = analysis.iter().find(|(m, _)| *m == mv).unwrap();
                if safe_exists {
                    assert_ne!(value.verdict, Verdict::Loss, "{kind} {game}: {mv}");
                }
            }
        }
    }
}

#[test]
fn casual_slips_as_often_as_documented() {
    // Where some safe moves are not optimal, Casual plays one with probability
    // CASUAL_SLIP_PROBABILITY * (safe non-optimal moves / safe moves). Sum the expectation
    // and the variance over many choices and check the observed count is within five
    // standard deviations: a Casual that never slips, or always does, fails by far.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (mut observed, mut expected, mut variance) = (0.0, 0.0, 0.0);
    for kind in GameKind::ALL {
        let table = table(kind);
        for game in ongoing(table) {
            let value = table.value(&game).unwrap();
            let analysis = table.analyze(&game);
            let safe = analysis
                .iter()
                .filter(|(_, v)| v.verdict != Verdict::Loss)
                .count();
            let slips = analysis
                .iter()
                .filter(|(_, v)| v.verdict != Verdict::Loss && *v != value)
                .count();
            if slips == 0 {
                continue;
            }
            let p = CASUAL_SLIP_PROBABILITY * slips as f64 / safe as f64;
            for _ in 0..4 {
                let mv = table.choose(&game, Strength::Casual, &mut rng).unwrap();
                let (_, v) = analysis.iter().find(|(m, _)| *m == mv).unwrap();
                if *v != value {
                    observed += 1.0;
                }
                expected += p;
                variance += p * (1.0 - p);
            }
        }
    }
    assert!(expected > 1_000.0, "enough chances to slip: {expected}");
    let deviation = (observed - expected) / variance.sqrt();
    assert!(
        deviation.abs() < 5.0,
        "observed {observed} slips, expected {expected:.0} ({deviation:+.1} sigma)"
    );
}

#[test]
fn every_strength_still_moves_in_a_lost_position() {
    let table = table(GameKind::TicTacToe);
    let lost: Vec<AnyGame> = ongoing(table)
        .filter(|g| table.value(g).unwrap().verdict == Verdict::Loss)
        .collect();
    assert!(!lost.is_empty());
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for game in lost {
        for strength in Strength::ALL {
            let mv = table.choose(&game, strength, &mut rng);
            assert!(
                mv.is_some_and(|mv| game.legal_moves().contains(&mv)),
                "{strength} in {game}"
            );
        }
    }
}

#[test]
fn random_covers_every_legal_move_evenly() {
    for kind in GameKind::ALL {
        let table = table(kind);
        let positions = [
            AnyGame::new(kind),
            // A lost position for the player to move in tic-tac-toe, and a won one in SOS:
            // Random still plays everything, good and bad.
            match kind {
                GameKind::TicTacToe => AnyGame::parse(kind, "XO--X----").unwrap(),
                GameKind::Sos => AnyGame::parse(kind, "S-O-O----").unwrap(),
            },
        ];
        for game in positions {
            let legal = game.legal_moves();
            let draws_per_move = 200;
            let mut counts: HashMap<Move, u32> = HashMap::new();
            let mut rng = ChaCha8Rng::seed_from_u64(5);
            for _ in 0..draws_per_move * legal.len() {
                let mv = table.choose(&game, Strength::Random, &mut rng).unwrap();
                *counts.entry(mv).or_default() += 1;
            }
            assert_eq!(counts.len(), legal.len(), "{kind} {game}: every legal move");
            for (mv, count) in counts {
                // The standard deviation is about 14 draws; 70 is five of them.
                assert!(
                    count.abs_diff(draws_per_move as u32) < 70,
                    "{kind} {game}: {mv} drawn {count} times"
                );
            }
        }
    }
}

/// A whole game between two computer players, as the moves made.
fn self_play(kind: GameKind, first: Strength, second: Strength, seed: u64) -> Vec<Move> {
    let table = table(kind);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = AnyGame::new(kind);
    let mut moves = Vec::new();
    loop {
        let strength = match game.turn() {
            Player::First => first,
            Player::Second => second,
        };
        let Some(mv) = table.choose(&game, strength, &mut rng) else {
            return moves;
        };
        game = game.play(mv).unwrap();
        moves.push(mv);
    }
}

#[test]
fn the_same_seed_replays_the_same_game() {
    for kind in GameKind::ALL {
        for strength in Strength::ALL {
            let games: Vec<_> = (0..16)
                .map(|seed| self_play(kind, strength, Strength::Random, seed))
                .collect();
            for (seed, moves) in games.iter().enumerate() {
                assert_eq!(
                    &self_play(kind, strength, Strength::Random, seed as u64),
                    moves,
                    "{kind} {strength} seed {seed}"
                );
            }
            let distinct: HashSet<_> = games.iter().collect();
            assert!(
                distinct.len() > 8,
                "{kind} {strength}: seeds give different games"
            );
        }
    }
}

#[test]
fn two_perfect_players_always_draw() {
    for kind in GameKind::ALL {
        for seed in 0..32 {
            let moves = self_play(kind, Strength::Perfect, Strength::Perfect, seed);
            assert_eq!(moves.len(), 9, "{kind} seed {seed}: a draw fills the board");
            let mut game = AnyGame::new(kind);
            for mv in moves {
                game = game.play(mv).unwrap();
            }
            assert_eq!(
                game.outcome().and_then(|o| o.winner()),
                None,
                "{kind} seed {seed}"
            );
        }
    }
}

#[test]
fn an_ended_game_gets_no_move_and_leaves_the_rng_alone() {
    for kind in GameKind::ALL {
        let table = table(kind);
        for (game, _) in table
            .reachable()
            .filter(|(game, _)| game.is_over())
            .take(50)
        {
            for strength in Strength::ALL {
                let mut rng = ChaCha8Rng::seed_from_u64(6);
                let mut untouched = rng.clone();
                assert_eq!(table.choose(&game, strength, &mut rng), None);
                assert_eq!(
                    rng.next_u64(),
                    untouched.next_u64(),
                    "{kind} {strength} {game}"
                );
            }
        }
    }
}

#[test]
fn strength_names_round_trip() {
    for strength in Strength::ALL {
        assert_eq!(strength.to_string().parse(), Ok(strength));
    }
    assert!("Perfect".parse::<Strength>().is_err());
    assert!("".parse::<Strength>().is_err());
}
