//! Amounts are `u128` minor units, written as decimal strings: exact past 2^53 (JavaScript)
//! and 2^64 (the old `u64`), conserved by the ledger up to `u128::MAX`, refused rather than
//! overflowed past it, and logs written with JSON numbers still replay.

use proptest::prelude::*;
use serde_json::{Value, json};
use triad_engine::{
    Account, Address, Command, Config, Engine, EngineError, Envelope, Event, IdempotencyKey, Match,
    StartChoice, share,
};
use triad_rules::{GameKind, Mark};

const ETHER: u128 = 1_000_000_000_000_000_000;
const OWNER: Address = Address::from_bytes([9; 32]);
const ALICE: Address = Address::from_bytes([1; 32]);
const BOB: Address = Address::from_bytes([2; 32]);
const CAROL: Address = Address::from_bytes([3; 32]);

/// Any stake a match may have: the limit is the ledger's.
fn unlimited() -> Config {
    let mut config = Config::new(OWNER);
    config.max_stake = u128::MAX;
    config
}

fn run(engine: &mut Engine, who: Address, now: u64, command: Command) -> Vec<Event> {
    engine
        .execute(&Envelope::new(who, now, command))
        .unwrap_or_else(|e| panic!("refused: {e}"))
        .events
}

/// Alice (first, X) beats Bob with the top row in a match of `stake` each.
fn top_row_win(engine: &mut Engine, stake: u128) {
    let events = run(
        engine,
        ALICE,
        1,
        Command::Challenge {
            opponent: BOB,
            game: GameKind::TicTacToe,
            stake,
            first: StartChoice::Challenger,
        },
    );
    let id = events[0].match_id().expect("a match");
    run(
        engine,
        BOB,
        2,
        Command::AcceptChallenge {
            match_id: id,
            terms: None,
        },
    );
    for (seq, who, cell, mark) in [
        (1, ALICE, 0, Mark::X),
        (2, BOB, 3, Mark::O),
        (3, ALICE, 1, Mark::X),
        (4, BOB, 4, Mark::O),
        (5, ALICE, 2, Mark::X),
    ] {
        run(
            engine,
            who,
            3,
            Command::Move {
                match_id: id,
                seq,
                cell,
                mark,
                signed: None,
            },
        );
    }
}

#[test]
fn a_stake_above_2_64_is_exact_and_conserved() {
    let mut engine = Engine::with_log(unlimited());
    let stake = 50 * ETHER; // 5 * 10^19 > 2^64
    assert!(stake > u128::from(u64::MAX));
    for who in [ALICE, BOB] {
        run(
            &mut engine,
            OWNER,
            0,
            Command::Deposit {
                to: who,
                amount: 100 * ETHER,
            },
        );
    }
    top_row_win(&mut engine, stake);
    assert_eq!(engine.balance(ALICE), 100 * ETHER - stake + stake / 10 * 18);
    assert_eq!(engine.balance(BOB), 100 * ETHER - stake);
    assert_eq!(engine.reserve(), stake / 10 * 2);
    engine.audit().unwrap();
    // Every amount in the log is a string, and the log replays to the same engine.
    let log = engine.log_for_tests().to_vec();
    let text = serde_json::to_string(&log).unwrap();
    assert!(text.contains(&format!("\"stake\":\"{stake}\"")), "{text}");
    assert!(text.contains(&format!("\"amount\":\"{}\"", stake / 10 * 18)));
    let decoded: Vec<Event> = serde_json::from_str(&text).unwrap();
    assert_eq!(Engine::replay(unlimited(), &decoded), engine);
}

#[test]
fn a_deposit_that_would_overflow_is_refused_not_wrapped() {
    let mut engine = Engine::new(unlimited());
    run(
        &mut engine,
        OWNER,
        0,
        Command::Deposit {
            to: ALICE,
            amount: u128::MAX - 1,
        },
    );
    let before = engine.clone();
    for (to, amount) in [(ALICE, 2), (BOB, 2), (BOB, u128::MAX)] {
        let refused = engine.execute(&Envelope::new(OWNER, 1, Command::Deposit { to, amount }));
        assert_eq!(refused, Err(EngineError::AmountTooLarge));
        assert_eq!(engine, before, "a refused deposit changes nothing");
    }
    // Exactly up to the limit is fine.
    run(
        &mut engine,
        OWNER,
        2,
        Command::Deposit { to: BOB, amount: 1 },
    );
    assert_eq!(engine.ledger().total_held(), u128::MAX);
    engine.audit().unwrap();
    // Everything ever deposited is bounded too, not only what is held now: a withdrawal
    // makes room in the balances, not in the running total.
    run(
        &mut engine,
        ALICE,
        3,
        Command::Withdraw {
            amount: u128::MAX - 1,
        },
    );
    assert_eq!(
        engine.execute(&Envelope::new(
            OWNER,
            4,
            Command::Deposit {
                to: ALICE,
                amount: 1
            }
        )),
        Err(EngineError::AmountTooLarge)
    );
    engine.audit().unwrap();
}

#[test]
fn the_largest_pots_pay_out_exactly() {
    // Two stakes of half of u128::MAX: the pot is the whole ledger.
    let stake = u128::MAX / 2;
    let mut engine = Engine::new(unlimited());
    for who in [ALICE, BOB] {
        run(
            &mut engine,
            OWNER,
            0,
            Command::Deposit {
                to: who,
                amount: stake,
            },
        );
    }
    top_row_win(&mut engine, stake);
    let pot = 2 * stake;
    assert_eq!(engine.balance(ALICE), share(pot, 9_000));
    assert_eq!(engine.reserve(), pot - share(pot, 9_000));
    engine.audit().unwrap();
}

#[test]
fn share_is_the_exact_floor_for_every_u128() {
    for amount in [
        0,
        1,
        9_999,
        10_000,
        12_345_678,
        u128::from(u64::MAX),
        u128::MAX / 2,
        u128::MAX - 1,
        u128::MAX,
    ] {
        for bps in [0, 1, 5_000, 9_000, 9_500, 9_999, 10_000] {
            let got = share(amount, bps);
            assert!(got <= amount, "{amount} {bps}");
            if let Some(product) = amount.checked_mul(u128::from(bps)) {
                assert_eq!(got, product / 10_000, "{amount} {bps}");
            }
        }
        assert_eq!(share(amount, 10_000), amount);
    }
}

/// One step of the ledger property: amounts are drawn near the limits.
#[derive(Clone, Debug)]
enum Step {
    Deposit(usize, u128),
    Withdraw(usize, u128),
    Queue(usize, u128),
    Collect,
}

const PLAYERS: [Address; 3] = [ALICE, BOB, CAROL];

fn near_limits() -> impl Strategy<Value = u128> {
    prop_oneof![
        Just(1u128),
        Just(u128::from(u64::MAX)),
        Just(u128::from(u64::MAX) + 1),
        Just(u128::MAX / 2),
        Just(u128::MAX / 2 + 1),
        Just(u128::MAX - 1),
        Just(u128::MAX),
        any::<u128>(),
        (0u128..1_000_000),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..3usize, near_limits()).prop_map(|(p, a)| Step::Deposit(p, a)),
        (0..3usize, near_limits()).prop_map(|(p, a)| Step::Withdraw(p, a)),
        (0..3usize, near_limits()).prop_map(|(p, a)| Step::Queue(p, a)),
        Just(Step::Collect),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the amounts, the engine never panics; a refused command changes nothing;
    /// after every applied one the balances sum to deposits less withdrawals, and a
    /// refused deposit is refused because it would pass `u128::MAX`.
    #[test]
    fn the_ledger_conserves_near_u128_max(steps in prop::collection::vec(step(), 1..40)) {
        let mut engine = Engine::with_log(unlimited());
        for (i, s) in steps.into_iter().enumerate() {
            let now = i as u64 * 1_000;
            let (who, command) = match s {
                Step::Deposit(p, amount) => (OWNER, Command::Deposit { to: PLAYERS[p], amount }),
                Step::Withdraw(p, amount) => (PLAYERS[p], Command::Withdraw { amount }),
                Step::Queue(p, stake) => (
                    PLAYERS[p],
                    Command::JoinQueue { game: GameKind::TicTacToe, stake },
                ),
                Step::Collect => (OWNER, Command::CollectReserve),
            };
            let before = engine.clone();
            match engine.execute(&Envelope::new(who, now, command.clone())) {
                Ok(_) => engine.audit().map_err(TestCaseError::fail)?,
                Err(e) => {
                    prop_assert_eq!(&engine, &before, "{:?} refused ({}) but changed", command, e);
                    if let (Command::Deposit { to, amount }, EngineError::AmountTooLarge) = (&command, e) {
                        let ledger = engine.ledger();
                        prop_assert!(
                            ledger.deposited().checked_add(*amount).is_none()
                                || ledger.balance(Account::Player(*to)).checked_add(*amount).is_none()
                        );
                    }
                }
            }
        }
        let log = engine.log_for_tests().to_vec();
        let text = serde_json::to_string(&log).unwrap();
        let decoded: Vec<Event> = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(Engine::replay(unlimited(), &decoded), engine);
    }
}

/// Every amount field of an event or command, as the log writes them.
const AMOUNT_KEYS: [&str; 3] = ["amount", "stake", "max_stake"];

/// Rewrites every amount-named string in `v` as a JSON number: the log as it was written
/// before amounts were strings (JSON numbers up to 2^64-1).
fn amounts_as_numbers(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if AMOUNT_KEYS.contains(&key.as_str())
                    && let Value::String(s) = value
                {
                    *value = json!(s.parse::<u64>().expect("an old log's amounts fit in u64"));
                } else {
                    amounts_as_numbers(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(amounts_as_numbers),
        _ => {}
    }
}

#[test]
fn a_log_written_with_numeric_amounts_replays() {
    let alice = ALICE.to_string();
    let bob = BOB.to_string();
    // Written by hand as the engine wrote its log before amounts were strings: a deposit to
    // each, a staked challenge (with an idempotency key, whose command is in the log too),
    // declined and refunded, then a withdrawal.
    let old_log = format!(
        r#"[
  {{"seq":1,"at_ms":0,"kind":{{"type":"transferred","match_id":null,"transfer":{{"from":{{"kind":"outside"}},"to":{{"kind":"player","id":"{alice}"}},"amount":2000000000000000000,"reason":"deposit"}}}}}},
  {{"seq":2,"at_ms":0,"kind":{{"type":"transferred","match_id":null,"transfer":{{"from":{{"kind":"outside"}},"to":{{"kind":"player","id":"{bob}"}},"amount":18000000000000000000,"reason":"deposit"}}}}}},
  {{"seq":3,"at_ms":10,"kind":{{"type":"challenge_issued","match_id":1,"challenger":"{alice}","opponent":"{bob}","game":"tic-tac-toe","stake":1000000000000000000,"first":"challenger","expires_at_ms":600010}}}},
  {{"seq":4,"at_ms":10,"kind":{{"type":"transferred","match_id":1,"transfer":{{"from":{{"kind":"player","id":"{alice}"}},"to":{{"kind":"escrow","id":1}},"amount":1000000000000000000,"reason":"stake"}}}},
   "applied":{{"actor":"{alice}","key":1234,"command":{{"type":"challenge","opponent":"{bob}","game":"tic-tac-toe","stake":1000000000000000000,"first":"challenger"}},"batch_len":2}}}},
  {{"seq":5,"at_ms":20,"kind":{{"type":"challenge_declined","match_id":1}}}},
  {{"seq":6,"at_ms":20,"kind":{{"type":"game_ended","match_id":1,"reason":"declined","winner":null,"cells":0}}}},
  {{"seq":7,"at_ms":20,"kind":{{"type":"transferred","match_id":1,"transfer":{{"from":{{"kind":"escrow","id":1}},"to":{{"kind":"player","id":"{alice}"}},"amount":1000000000000000000,"reason":"refund"}}}}}},
  {{"seq":8,"at_ms":30,"kind":{{"type":"transferred","match_id":null,"transfer":{{"from":{{"kind":"player","id":"{bob}"}},"to":{{"kind":"outside"}},"amount":500000000000000000,"reason":"withdrawal"}}}}}}
]"#
    );
    let events: Vec<Event> = serde_json::from_str(&old_log).expect("the old log decodes");
    let replayed = Engine::replay(Config::new(OWNER), &events);
    replayed.audit().unwrap();
    assert_eq!(replayed.balance(ALICE), 2 * ETHER);
    assert_eq!(replayed.balance(BOB), 18 * ETHER - ETHER / 2);
    assert_eq!(replayed.ledger().total_held(), 20 * ETHER - ETHER / 2);
    // The same commands today: the same engine, and its log says the same with strings.
    let key = IdempotencyKey(1234);
    let mut live = Engine::with_log(Config::new(OWNER));
    run(
        &mut live,
        OWNER,
        0,
        Command::Deposit {
            to: ALICE,
            amount: 2 * ETHER,
        },
    );
    run(
        &mut live,
        OWNER,
        0,
        Command::Deposit {
            to: BOB,
            amount: 18 * ETHER,
        },
    );
    live.execute(
        &Envelope::new(
            ALICE,
            10,
            Command::Challenge {
                opponent: BOB,
                game: GameKind::TicTacToe,
                stake: ETHER,
                first: StartChoice::Challenger,
            },
        )
        .with_key(key),
    )
    .unwrap();
    let id = live.log_for_tests()[2].match_id().unwrap();
    run(
        &mut live,
        BOB,
        20,
        Command::DeclineChallenge { match_id: id },
    );
    run(&mut live, BOB, 30, Command::Withdraw { amount: ETHER / 2 });
    assert_eq!(
        replayed,
        Engine::replay(Config::new(OWNER), live.log_for_tests())
    );
    assert_eq!(live.log_for_tests(), &events[..]);
    let mut written = serde_json::to_value(live.log_for_tests()).unwrap();
    assert_eq!(
        written[2]["kind"]["stake"],
        json!("1000000000000000000"),
        "amounts are written as strings"
    );
    amounts_as_numbers(&mut written);
    assert_eq!(
        written,
        serde_json::from_str::<Value>(&old_log).unwrap(),
        "the fixture is the log as it was written with numbers"
    );
}

#[test]
fn a_long_log_rewritten_with_numbers_replays_to_the_same_engine() {
    let mut engine = Engine::with_log(Config::new(OWNER));
    for who in [ALICE, BOB] {
        run(
            &mut engine,
            OWNER,
            0,
            Command::Deposit {
                to: who,
                amount: 3 * ETHER,
            },
        );
    }
    for _ in 0..3 {
        top_row_win(&mut engine, ETHER / 2);
    }
    run(&mut engine, ALICE, 4, Command::Withdraw { amount: ETHER });
    run(&mut engine, OWNER, 5, Command::CollectReserve);
    let mut old = serde_json::to_value(engine.log_for_tests()).unwrap();
    amounts_as_numbers(&mut old);
    let decoded: Vec<Event> = serde_json::from_value(old).unwrap();
    assert_eq!(decoded, engine.log_for_tests());
    assert_eq!(Engine::replay(Config::new(OWNER), &decoded), engine);
}

#[test]
fn a_match_row_written_with_a_numeric_stake_decodes() {
    let mut engine = Engine::new(Config::new(OWNER));
    run(
        &mut engine,
        OWNER,
        0,
        Command::Deposit {
            to: ALICE,
            amount: ETHER,
        },
    );
    let events = run(
        &mut engine,
        ALICE,
        1,
        Command::JoinQueue {
            game: GameKind::Sos,
            stake: ETHER,
        },
    );
    let m = engine
        .match_(events[0].match_id().unwrap())
        .unwrap()
        .clone();
    let mut row = serde_json::to_value(&m).unwrap();
    assert_eq!(row["stake"], json!(ETHER.to_string()));
    row["stake"] = json!(1_000_000_000_000_000_000u64);
    assert_eq!(serde_json::from_value::<Match>(row).unwrap(), m);
}

#[test]
fn amounts_decode_only_in_canonical_forms() {
    let decode = |amount: Value| {
        serde_json::from_value::<Command>(json!({"type": "withdraw", "amount": amount}))
    };
    assert_eq!(decode(json!("5")).unwrap(), Command::Withdraw { amount: 5 });
    assert_eq!(decode(json!(5)).unwrap(), Command::Withdraw { amount: 5 });
    assert_eq!(
        decode(json!(u128::MAX.to_string())).unwrap(),
        Command::Withdraw { amount: u128::MAX }
    );
    for bad in [
        json!("+5"),
        json!("05"),
        json!(" 5"),
        json!("5."),
        json!("-0"),
        json!(""),
        json!("1e3"),
        json!(-1),
        json!(5.0),
        json!(null),
        json!([5]),
        json!("340282366920938463463374607431768211456"),
    ] {
        assert!(decode(bad.clone()).is_err(), "{bad}");
    }
    // JSON text straight from a client: `-0` and `1e3` are numbers there.
    for text in ["-0", "1e3", "5.0", "-5", "00"] {
        let body = format!(r#"{{"type":"withdraw","amount":{text}}}"#);
        assert!(serde_json::from_str::<Command>(&body).is_err(), "{text}");
    }
}
