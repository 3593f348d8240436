//! Arbitrary command sequences: the engine never panics, every invariant holds after
//! every command, and the replay of the log equals the live state.
//!
//! `cargo +nightly fuzz run commands` (from crates/triad-engine).
#![no_main]

use libfuzzer_sys::fuzz_target;
use triad_engine::{
    Address, Command, Config, Engine, Envelope, IdempotencyKey, Level, MatchId, StartChoice,
    Terms,
};
use triad_rules::{GameKind, Mark, Player};

/// Reads the fuzzer's bytes as a stream of small numbers.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(first)
    }
}

fn address(i: u8) -> Address {
    match i % 6 {
        0 => Address::from_bytes([0xee; 32]), // the owner
        5 => Address::ZERO,
        n => Address::from_bytes([n; 32]),
    }
}

fn decode(b: &mut Bytes<'_>) -> Option<(Envelope, u64)> {
    let op = b.byte()?;
    let actor = address(b.byte()?);
    let x = b.byte()?;
    let y = b.byte()?;
    let step = u64::from(b.byte()?) * 1_000;
    let game = if x & 1 == 0 { GameKind::TicTacToe } else { GameKind::Sos };
    let stake = [0, 100, 1_000, u128::MAX][usize::from(y % 4)];
    let id = MatchId(u64::from(x % 16));
    let mark = [Mark::X, Mark::O, Mark::S][usize::from(y % 3)];
    let command = match op % 14 {
        0 => Command::Challenge {
            opponent: address(y),
            game,
            stake,
            first: [StartChoice::Challenger, StartChoice::Opponent, StartChoice::Random]
                [usize::from(x % 3)],
        },
        1 => Command::AcceptChallenge {
            match_id: id,
            // Sometimes the terms the accepter saw: the stake and game drawn here.
            terms: (y & 8 != 0).then_some(Terms {
                stake: Some(stake),
                game: Some(game),
                ..Terms::default()
            }),
        },
        2 => Command::DeclineChallenge { match_id: id },
        3 => Command::JoinQueue { game, stake },
        4 => Command::Cancel { match_id: id },
        5 => Command::PlayComputer {
            game,
            level: [Level::Perfect, Level::Casual, Level::Random][usize::from(y % 3)],
            side: if y & 4 == 0 { Player::First } else { Player::Second },
        },
        6..=8 => Command::Move { match_id: id, seq: y % 11, cell: x / 16, mark, signed: None },
        9 => Command::Forfeit { match_id: id },
        10 => Command::ClaimTimeout { match_id: id },
        11 => Command::Rematch { match_id: id },
        12 => match y % 4 {
            0 => Command::Deposit { to: address(x), amount: u128::from(x) * 1_000 },
            1 => Command::Withdraw { amount: u128::from(x) * 100 },
            2 => Command::CollectReserve,
            _ => Command::Deposit { to: address(x), amount: u128::MAX },
        },
        _ if y & 0x40 != 0 => Command::Abort { match_id: id },
        _ => Command::Tick,
    };
    let mut envelope = Envelope::new(actor, 0, command);
    if op & 0x80 != 0 {
        envelope = envelope.with_key(IdempotencyKey(u128::from(op & 3)));
    }
    Some((envelope, step))
}

fuzz_target!(|data: &[u8]| {
    let mut config = Config::new(address(0));
    config.finished_retention_ms = 30_000;
    config.idempotency_window_ms = 60_000;
    config.automatic_timeouts = data.first().is_some_and(|b| b & 1 == 1);
    let mut engine = Engine::new(config.clone());
    let mut shadow = Engine::new(config);
    let mut bytes = Bytes(data);
    let mut now = 1_000_000u64;
    while let Some((mut envelope, step)) = decode(&mut bytes) {
        now += step;
        envelope.now_ms = now;
        let before = engine.clone();
        match engine.execute(&envelope) {
            Ok(receipt) => {
                for event in &receipt.events {
                    shadow.apply(event);
                }
            }
            Err(error) => {
                assert!(!error.to_string().is_empty());
                assert!(engine == before, "a refused command changed the state");
            }
        }
        if let Err(broken) = engine.audit() {
            panic!("invariant broken after {envelope:?}: {broken}");
        }
        assert!(shadow == engine, "replay differs after {envelope:?}");
    }
});
