//! Exactness users hit with money: amounts past 2^53 and 2^64, amounts written in forms
//! that are not canonical, and JSON arrays (or any other value) where an object is
//! expected. Every amount the server writes must be a JSON string (a JavaScript client
//! reads a number past 2^53 wrong), every amount it reads is `u128` minor units in one
//! canonical decimal form, and every request body or socket message is an object.

use reqwest::Method;
use serde_json::{Value, json};
use triad_protocol::{App, Message, envelope};

use crate::support::{
    Api, Player, Resp, Server, TTT_TOP_ROW, Ws, kind, new_key, nth, run_to_exit, serve_command,
};

/// One ether in wei: the SOS contract's stake.
const ETHER: u128 = 1_000_000_000_000_000_000;

/// An amount the API wrote, which must be a decimal string.
#[track_caller]
fn exact(v: &Value) -> u128 {
    let text = v
        .as_str()
        .unwrap_or_else(|| panic!("an amount is a string: {v}"));
    text.parse().expect("decimal digits")
}

/// Keys that name an amount of money, in any answer, event or frame.
const AMOUNT_WORDS: [&str; 14] = [
    "stake",
    "amount",
    "balance",
    "deposited",
    "withdrawn",
    "fee",
    "prize",
    "reserve",
    "pot",
    "payout",
    "refund",
    "needed",
    "available",
    "max_stake",
];

/// Every path in `v` (named by `at`) where an amount-like key holds a JSON number, or any
/// number's size is past 2^53 (where a JavaScript client's `JSON.parse` rounds integers).
fn numeric_amounts(at: &str, v: &Value, found: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (key, value) in map {
                let path = format!("{at}.{key}");
                let lower = key.to_ascii_lowercase();
                if value.is_number() && AMOUNT_WORDS.iter().any(|w| lower.contains(w)) {
                    found.push(format!("{path} = {value}"));
                }
                numeric_amounts(&path, value, found);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                numeric_amounts(&format!("{at}[{i}]"), item, found);
            }
        }
        Value::Number(n)
            if n.as_u64().map_or_else(
                || n.as_f64().is_some_and(|f| f.abs() >= 2f64.powi(53)),
                |n| n > 1 << 53,
            ) =>
        {
            found.push(format!("{at} = {n} (past 2^53)"));
        }
        _ => {}
    }
}

/// Everything the server answered or sent, by where it came from.
#[derive(Default)]
struct Seen(Vec<(String, Value)>);

impl Seen {
    fn add(&mut self, at: impl Into<String>, v: &Value) {
        self.0.push((at.into(), v.clone()));
    }

    /// Fails naming every numeric amount seen.
    #[track_caller]
    fn check(&self) {
        let mut found = Vec::new();
        for (at, v) in &self.0 {
            numeric_amounts(at, v, &mut found);
        }
        assert!(
            found.is_empty(),
            "amounts written as JSON numbers:\n{}",
            found.join("\n")
        );
        // The walk looked at money at all: the answers hold stakes, transfers, balances.
        let text: String = self.0.iter().map(|(_, v)| v.to_string()).collect();
        for word in ["\"stake\"", "\"amount\"", "\"balance\"", "\"reserve\""] {
            assert!(text.contains(word), "nothing named {word} was seen");
        }
    }
}

async fn server(dir: &std::path::Path, extra: &[&str]) -> (Server, Player) {
    let owner_key = new_key();
    let server = Server::start(dir, &owner_key.address_string(), extra).await;
    let owner = server.api.login(&owner_key).await;
    (server, owner)
}

/// A POST whose answer is recorded.
async fn post(api: &Api, seen: &mut Seen, path: &str, who: &Player, body: Value) -> Value {
    let r = api.post(path, Some(&who.token), &body).await;
    seen.add(format!("POST {path}"), &r.body);
    r.ok()
}

/// A GET whose answer is recorded.
async fn get(api: &Api, seen: &mut Seen, path: &str, who: Option<&Player>) -> Value {
    let r = api.get(path, who.map(|p| p.token.as_str())).await;
    seen.add(format!("GET {path}"), &r.body);
    r.ok()
}

/// Subscribes and records the catch-up frames.
async fn subscribe(ws: &mut Ws, seen: &mut Seen, topic: &str) -> Vec<Value> {
    let (events, _) = ws.subscribe(topic, 0).await;
    for e in &events {
        seen.add(format!("frame {topic}"), e);
    }
    events
}

fn balance_of(me: &Value) -> u128 {
    exact(&me["balance"])
}

/// The SOS contract's game with the default settings: two players stake one ether each (10^18 wei,
/// past 2^53) in the queue, X wins with the top row, and every balance is exact. Every
/// JSON value the game produced (answers, the stored events, the live and caught-up
/// WebSocket frames of the match, the inboxes and the lobby) holds its amounts as strings.
#[tokio::test]
async fn a_one_ether_stake_is_taken_by_default_and_every_amount_is_a_string() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner) = server(dir.path(), &[]).await;
    let api = &server.api;
    let mut seen = Seen::default();
    let alice = api.login(&new_key()).await;
    let bob = api.login(&new_key()).await;
    let mut live = Ws::connect(api, &alice.token).await;
    subscribe(&mut live, &mut seen, "inbox").await;
    subscribe(&mut live, &mut seen, "lobby").await;
    for p in [&alice, &bob] {
        post(
            api,
            &mut seen,
            "/api/ledger/deposit",
            &owner,
            json!({"to": p.address, "amount": (2 * ETHER).to_string()}),
        )
        .await;
    }
    let stake = ETHER.to_string();
    let waiting = post(
        api,
        &mut seen,
        "/api/queue",
        &alice,
        json!({"game": "tic-tac-toe", "stake": stake}),
    )
    .await;
    let id = waiting["match"]["id"].as_u64().expect("a match");
    let started = post(
        api,
        &mut seen,
        "/api/queue",
        &bob,
        json!({"game": "tic-tac-toe", "stake": stake}),
    )
    .await;
    assert_eq!(started["match"]["id"].as_u64(), Some(id));
    assert_eq!(exact(&started["match"]["stake"]), ETHER);
    subscribe(&mut live, &mut seen, &format!("match:{id}")).await;
    for n in 1..=5u8 {
        let who = if n % 2 == 1 { &alice } else { &bob };
        let m = nth(&TTT_TOP_ROW, n);
        post(
            api,
            &mut seen,
            &format!("/api/matches/{id}/moves"),
            who,
            json!({"seq": m.seq, "cell": m.cell, "mark": m.mark}),
        )
        .await;
    }
    // The live frames, up to the house's share of the pot (the match's last event).
    loop {
        let frame = live.next_json().await;
        seen.add("live frame", &frame);
        let e = &frame["event"];
        if kind(e) == "transferred" && e["kind"]["transfer"]["reason"] == "reserve_share" {
            break;
        }
    }
    // The SOS contract's payout, exactly: 1.8 ether to the winner, 0.2 to the reserve.
    let me_a = get(api, &mut seen, "/api/me", Some(&alice)).await;
    let me_b = get(api, &mut seen, "/api/me", Some(&bob)).await;
    assert_eq!(balance_of(&me_a), 2 * ETHER - ETHER + ETHER / 10 * 18);
    assert_eq!(balance_of(&me_b), ETHER);
    let reserve = get(api, &mut seen, "/api/ledger/reserve", Some(&owner)).await;
    assert_eq!(exact(&reserve["reserve"]), ETHER / 10 * 2);
    assert_eq!(exact(&reserve["deposited"]), 4 * ETHER);
    // A withdrawal past 2^53, to the wei.
    post(
        api,
        &mut seen,
        "/api/ledger/withdraw",
        &alice,
        json!({"amount": (ETHER / 10 * 8 + 1).to_string()}),
    )
    .await;
    let ledger = get(api, &mut seen, "/api/ledger", Some(&alice)).await;
    assert_eq!(exact(&ledger["balance"]), 2 * ETHER - 1);
    let events = get(
        api,
        &mut seen,
        &format!("/api/matches/{id}/events?limit=1000"),
        None,
    )
    .await;
    let payouts: Vec<u128> = events["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["kind"]["transfer"]["reason"] == "payout")
        .map(|e| exact(&e["kind"]["transfer"]["amount"]))
        .collect();
    assert_eq!(payouts, [ETHER / 10 * 18]);
    get(api, &mut seen, &format!("/api/matches/{id}"), None).await;
    get(api, &mut seen, "/api/matches", None).await;
    get(
        api,
        &mut seen,
        &format!("/api/players/{}", alice.address),
        None,
    )
    .await;
    // The same events again, caught up by another socket: Bob's inbox, the match, the lobby.
    let mut later = Ws::connect(api, &bob.token).await;
    let inbox = subscribe(&mut later, &mut seen, "inbox").await;
    assert!(
        inbox.iter().any(|e| e["kind"]["stake"] == stake.as_str()),
        "the inbox has the stake as a string"
    );
    subscribe(&mut later, &mut seen, &format!("match:{id}")).await;
    subscribe(&mut later, &mut seen, "lobby").await;
    seen.check();
    assert!(seen.0.len() > 20);
}

/// A stake above 2^64 (the old `u64`'s limit) with `--max-stake` at `u128::MAX`: the server
/// starts, the game is played and paid to the wei; a deposit that would pass `u128::MAX`
/// is refused (122) and changes nothing; a `--max-stake` that is not canonical decimal
/// stops the server at start with the form.
#[tokio::test]
async fn a_stake_above_2_64_is_exact_and_the_ledger_refuses_to_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let max = u128::MAX.to_string();
    let (server, owner) = server(dir.path(), &["--max-stake", &max]).await;
    let api = &server.api;
    let mut seen = Seen::default();
    let alice = api.login(&new_key()).await;
    let bob = api.login(&new_key()).await;
    let carol = api.login(&new_key()).await;
    for p in [&alice, &bob] {
        post(
            api,
            &mut seen,
            "/api/ledger/deposit",
            &owner,
            json!({"to": p.address, "amount": (100 * ETHER).to_string()}),
        )
        .await;
    }
    let stake = 50 * ETHER;
    assert!(stake > u128::from(u64::MAX));
    let issued = post(
        api,
        &mut seen,
        "/api/challenges",
        &alice,
        json!({"opponent": bob.address, "game": "tic-tac-toe", "stake": stake.to_string(), "first": "challenger"}),
    )
    .await;
    let id = issued["match"]["id"].as_u64().expect("a match");
    post(
        api,
        &mut seen,
        &format!("/api/challenges/{id}/accept"),
        &bob,
        json!({}),
    )
    .await;
    for n in 1..=5u8 {
        let who = if n % 2 == 1 { &alice } else { &bob };
        let m = nth(&TTT_TOP_ROW, n);
        post(
            api,
            &mut seen,
            &format!("/api/matches/{id}/moves"),
            who,
            json!({"seq": m.seq, "cell": m.cell, "mark": m.mark}),
        )
        .await;
    }
    let me_a = get(api, &mut seen, "/api/me", Some(&alice)).await;
    let me_b = get(api, &mut seen, "/api/me", Some(&bob)).await;
    assert_eq!(balance_of(&me_a), 100 * ETHER - stake + stake / 10 * 18);
    assert_eq!(balance_of(&me_b), 100 * ETHER - stake);
    let mut ws = Ws::connect(api, &bob.token).await;
    let frames = subscribe(&mut ws, &mut seen, &format!("match:{id}")).await;
    let moved: Vec<(String, u128)> = frames
        .iter()
        .filter(|e| kind(e) == "transferred")
        .map(|e| {
            let t = &e["kind"]["transfer"];
            (
                t["reason"].as_str().unwrap_or("").to_owned(),
                exact(&t["amount"]),
            )
        })
        .collect();
    assert_eq!(
        moved,
        [
            ("stake".to_owned(), stake),
            ("stake".to_owned(), stake),
            ("payout".to_owned(), stake / 10 * 18),
            ("reserve_share".to_owned(), stake / 10 * 2),
        ]
    );
    seen.check();

    // Past u128::MAX in total: refused, and nothing moved.
    let before = api
        .get("/api/ledger/reserve", Some(&owner.token))
        .await
        .ok();
    let r = api
        .post(
            "/api/ledger/deposit",
            Some(&owner.token),
            &json!({"to": carol.address, "amount": max}),
        )
        .await;
    r.expect_error(422, 122);
    assert_eq!(
        api.get("/api/ledger/reserve", Some(&owner.token))
            .await
            .ok(),
        before
    );
    assert_eq!(balance_of(&api.me(&carol).await), 0);
    // One past u128::MAX is not an amount at all.
    let r = api
        .post(
            "/api/ledger/deposit",
            Some(&owner.token),
            &json!({"to": carol.address, "amount": "340282366920938463463374607431768211456"}),
        )
        .await;
    r.expect_error(400, 200);

    // A --max-stake that is not canonical decimal stops the server with the form.
    let owner_arg = owner.address.clone();
    for bad in [
        "05",
        "+5",
        "1e18",
        "340282366920938463463374607431768211456",
    ] {
        let cmd = serve_command(
            &dir.path().join("never"),
            &owner_arg,
            &["--max-stake".to_owned(), bad.to_owned()],
        );
        std::fs::create_dir_all(dir.path().join("never")).unwrap();
        let (status, _, stderr) = run_to_exit(cmd, dir.path(), "bad-max-stake").await;
        assert!(!status.success(), "--max-stake {bad} was taken");
        assert!(
            stderr.contains("--max-stake") && stderr.contains("minor units"),
            "--max-stake {bad}: {stderr}"
        );
    }
}

/// Sends `body` as raw JSON text: a number such as `-0` or `1e3` as the client wrote it.
async fn raw(api: &Api, method: Method, path: &str, token: Option<&str>, body: &str) -> Resp {
    let mut request = reqwest::Client::new()
        .request(method, format!("{}{path}", api.base))
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    let text = response.text().await.expect("a body");
    Resp {
        status,
        retry_after: None,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
    }
}

/// What a refused attempt must leave as it was: both balances, the reserve, and the
/// players' active matches.
async fn money(api: &Api, owner: &Player, players: &[&Player]) -> Vec<Value> {
    let mut out = vec![
        api.get("/api/ledger/reserve", Some(&owner.token))
            .await
            .ok(),
    ];
    for p in players {
        let me = api.me(p).await;
        out.push(json!([me["balance"], me["active_match"]]));
    }
    out
}

/// `"+5"`, `"05"`, `" 5"`, `"5."`, `"-0"` and every other form that is not canonical
/// decimal are refused wherever an amount is read (withdraw, deposit, queue, challenge),
/// with the bad-request code (200) and a message that says the form; nothing moves. `"5"`
/// and the number `5` are taken.
#[tokio::test]
async fn amounts_in_any_but_canonical_decimal_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner) = server(dir.path(), &[]).await;
    let api = &server.api;
    let alice = api.login(&new_key()).await;
    let bob = api.login(&new_key()).await;
    api.deposit(&owner, &alice, 1_000).await.ok();
    let before = money(api, &owner, &[&alice, &bob]).await;
    let strings = [
        "+5", "05", " 5", "5 ", "5.", "5.0", "-0", "-5", "", "1e3", "0x5", "5_000", "٥", "00",
    ];
    let mut bodies: Vec<String> = strings
        .iter()
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
    // JSON numbers that are not whole non-negative integers, or past what a number holds.
    bodies.extend(
        [
            "-0",
            "-5",
            "5.0",
            "1e3",
            "5e0",
            "18446744073709551616",
            "true",
            "null",
            "[5]",
            "{}",
        ]
        .map(str::to_owned),
    );
    let mut wrong = Vec::new();
    for amount in &bodies {
        let attempts = [
            (
                "/api/ledger/withdraw",
                &alice,
                format!(r#"{{"amount":{amount}}}"#),
            ),
            (
                "/api/ledger/deposit",
                &owner,
                format!(r#"{{"to":"{}","amount":{amount}}}"#, alice.address),
            ),
            (
                "/api/queue",
                &alice,
                format!(r#"{{"game":"tic-tac-toe","stake":{amount}}}"#),
            ),
            (
                "/api/challenges",
                &alice,
                format!(
                    r#"{{"opponent":"{}","game":"sos","stake":{amount},"first":"challenger"}}"#,
                    bob.address
                ),
            ),
        ];
        for (path, who, body) in attempts {
            let r = raw(api, Method::POST, path, Some(&who.token), &body).await;
            let message = r.body["message"].as_str().unwrap_or("");
            if (r.status, r.body["code"].as_u64()) != (400, Some(200))
                || !(message.contains("amount") && message.contains("minor units"))
            {
                wrong.push(format!("{path} {body}: {} {}", r.status, r.body));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "amounts taken or refused wrongly:\n{}",
        wrong.join("\n")
    );
    assert_eq!(money(api, &owner, &[&alice, &bob]).await, before);
    // The canonical forms are taken: a string and a whole number.
    for body in [r#"{"amount":"5"}"#, r#"{"amount":5}"#] {
        raw(
            api,
            Method::POST,
            "/api/ledger/withdraw",
            Some(&alice.token),
            body,
        )
        .await
        .ok();
    }
    assert_eq!(exact(&api.me(&alice).await["balance"]), 990);
}

/// Every endpoint whose body is an object (every `requestBody` of the OpenAPI document)
/// refuses any other JSON value with the bad-request code (200), including the arrays
/// serde would have read as the object's fields in order (`[1]` withdrew 1); a nested
/// object (the relay's `signed`) likewise; the WebSocket refuses a message that is not an
/// object with an error frame. Nothing moves.
#[tokio::test]
async fn json_that_is_not_an_object_is_refused_on_every_object_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let (server, owner) = server(dir.path(), &[]).await;
    let api = &server.api;
    let alice_key = new_key();
    let alice = api.login(&alice_key).await;
    let bob = api.login(&new_key()).await;
    api.deposit(&owner, &alice, 1_000).await.ok();
    api.deposit(&owner, &bob, 1_000).await.ok();
    let clock = api.advance(0).await;
    let before = money(api, &owner, &[&alice, &bob]).await;
    let doc = api.get("/api/openapi.json", None).await.ok();
    let mut endpoints = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("operations") {
            if operation.get("requestBody").is_some() {
                endpoints.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    assert!(
        endpoints.len() >= 10,
        "every JSON body is documented: {endpoints:?}"
    );
    // The arrays each endpoint would have read as its fields in order, then other values.
    let positional = |path: &str| -> Option<String> {
        Some(match path {
            "/api/ledger/withdraw" => "[1]".to_owned(),
            "/api/ledger/deposit" => format!(r#"["{}","1"]"#, alice.address),
            "/api/queue" => r#"["tic-tac-toe","0"]"#.to_owned(),
            "/api/challenges" => format!(r#"["{}","tic-tac-toe","0","challenger"]"#, bob.address),
            "/api/computer" => r#"["tic-tac-toe","perfect","first"]"#.to_owned(),
            "/api/matches/{id}/moves" => r#"[1,4,"X"]"#.to_owned(),
            "/api/dev/clock" => "[60000]".to_owned(),
            "/api/auth/challenge" => format!(r#"["{}"]"#, alice_key.public_key_hex()),
            "/api/apps/messages" => format!(
                r#"["{}","tic-tac-toe","propose",{{"seq":0,"role":"X"}},null]"#,
                bob.address
            ),
            _ => return None,
        })
    };
    let mut wrong = Vec::new();
    for (method, path) in &endpoints {
        let url = path.replace("{id}", "1");
        let mut bodies = vec!["[1]", "[]", "1", "\"x\"", "true", "null"]
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>();
        bodies.extend(positional(path));
        for body in bodies {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let who = if path == "/api/ledger/deposit" {
                &owner
            } else {
                &alice
            };
            let r = raw(api, method.clone(), &url, Some(&who.token), &body).await;
            let refused = if path == "/a2a" {
                // JSON-RPC's own shape: an invalid request; an array is a batch, each of
                // whose elements (none, for `[]`) is one.
                let replies = r
                    .body
                    .as_array()
                    .cloned()
                    .unwrap_or_else(|| vec![r.body.clone()]);
                !replies.is_empty() && replies.iter().all(|e| e["error"]["code"] == -32600)
            } else {
                (r.status, r.body["code"].as_u64()) == (400, Some(200))
            };
            if !refused {
                wrong.push(format!("{method} {url} {body}: {} {}", r.status, r.body));
            }
        }
    }
    // A nested object given as an array: the relay's `signed`, with Alice's own valid
    // signature (as an object it is taken).
    let app = App::TicTacToe;
    let propose = Message::decode(app, "propose", &json!({"seq": 0, "role": "X"})).unwrap();
    let to = triad_identity::parse_address(&bob.address).unwrap();
    let signed = envelope::sign(alice_key.signing_key(), &to, app, &propose);
    let signed = serde_json::to_value(&signed).unwrap();
    let as_array = json!([signed["publicKey"], signed["signature"]]);
    let r = api
        .post(
            "/api/apps/messages",
            Some(&alice.token),
            &json!({"to": bob.address, "appId": "tic-tac-toe", "action": "propose",
                    "payload": propose.payload(app), "signed": as_array}),
        )
        .await;
    if (r.status, r.body["code"].as_u64()) != (400, Some(200)) {
        wrong.push(format!("signed as an array: {} {}", r.status, r.body));
    }
    assert!(
        wrong.is_empty(),
        "bodies that are not objects were taken:\n{}",
        wrong.join("\n")
    );
    assert_eq!(money(api, &owner, &[&alice, &bob]).await, before);
    assert_eq!(api.advance(0).await, clock, "the dev clock did not move");

    // The WebSocket: each is refused with an error frame, and the socket stays usable.
    let mut ws = Ws::connect(api, &alice.token).await;
    for text in [
        json!(["subscribe", "lobby", 0]),
        json!(["ping"]),
        json!([]),
        json!(1),
        json!("ping"),
        Value::Null,
    ] {
        ws.send(text.clone()).await;
        let frame = ws.next_json().await;
        assert_eq!(
            (frame["type"].as_str(), frame["code"].as_u64()),
            (Some("error"), Some(200)),
            "{text}: {frame}"
        );
    }
    ws.send(json!({"type": "ping"})).await;
    assert_eq!(ws.next_json().await["type"], "pong");
}

/// Rewrites every `amount` and `stake` string in `v` as a JSON number: a log as the server
/// wrote it before amounts were strings.
fn amounts_as_numbers(v: &mut Value) -> usize {
    match v {
        Value::Object(map) => map
            .iter_mut()
            .map(|(key, value)| match value {
                Value::String(s) if key == "amount" || key == "stake" => {
                    *value = json!(s.parse::<u64>().expect("an old amount fits in u64"));
                    1
                }
                _ => amounts_as_numbers(value),
            })
            .sum(),
        Value::Array(items) => items.iter_mut().map(amounts_as_numbers).sum(),
        _ => 0,
    }
}

/// A database written before amounts were strings (its events and match rows hold them as
/// JSON numbers, rewritten so here by hand) is replayed on start to the same balances,
/// and served with every amount as a string.
#[tokio::test]
async fn a_log_with_numeric_amounts_replays_on_start_and_is_served_as_strings() {
    use sqlx::{Connection as _, Row as _};
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let mut server = Server::start(dir.path(), &owner_key.address_string(), &[]).await;
    let (alice_key, bob_key) = (new_key(), new_key());
    let id = {
        let api = &server.api;
        let owner = api.login(&owner_key).await;
        let alice = api.login(&alice_key).await;
        let bob = api.login(&bob_key).await;
        for p in [&alice, &bob] {
            api.post(
                "/api/ledger/deposit",
                Some(&owner.token),
                &json!({"to": p.address, "amount": (2 * ETHER).to_string()}),
            )
            .await
            .ok();
        }
        let body = json!({"game": "tic-tac-toe", "stake": ETHER.to_string()});
        let waiting = api.post("/api/queue", Some(&alice.token), &body).await.ok();
        api.post("/api/queue", Some(&bob.token), &body).await.ok();
        let id = waiting["match"]["id"].as_u64().expect("a match");
        for n in 1..=5u8 {
            let who = if n % 2 == 1 { &alice } else { &bob };
            api.play(who, id, nth(&TTT_TOP_ROW, n)).await;
        }
        id
    };
    server.terminate().await;
    let url = format!("sqlite://{}", server.db().display());
    let mut db = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let mut rewritten = 0;
    for (select, update) in [
        (
            "SELECT seq, body FROM events",
            "UPDATE events SET body = $1 WHERE seq = $2",
        ),
        (
            "SELECT id, body FROM matches",
            "UPDATE matches SET body = $1 WHERE id = $2",
        ),
    ] {
        for row in sqlx::query(select).fetch_all(&mut db).await.unwrap() {
            let key: i64 = row.get(0);
            let mut body: Value = serde_json::from_str(row.get::<&str, _>(1)).unwrap();
            rewritten += amounts_as_numbers(&mut body);
            sqlx::query(update)
                .bind(body.to_string())
                .bind(key)
                .execute(&mut db)
                .await
                .unwrap();
        }
    }
    db.close().await.unwrap();
    // Two deposits, two stakes (and the queue's stakes), the payout, the reserve's share.
    assert!(rewritten >= 8, "{rewritten} amounts rewritten");

    server.restart().await;
    let api = &server.api;
    let mut seen = Seen::default();
    let owner = api.login(&owner_key).await;
    let alice = api.login(&alice_key).await;
    let bob = api.login(&bob_key).await;
    let me_a = get(api, &mut seen, "/api/me", Some(&alice)).await;
    let me_b = get(api, &mut seen, "/api/me", Some(&bob)).await;
    assert_eq!(balance_of(&me_a), 2 * ETHER - ETHER + ETHER / 10 * 18);
    assert_eq!(balance_of(&me_b), ETHER);
    let reserve = get(api, &mut seen, "/api/ledger/reserve", Some(&owner)).await;
    assert_eq!(exact(&reserve["reserve"]), ETHER / 10 * 2);
    let m = get(api, &mut seen, &format!("/api/matches/{id}"), None).await;
    assert_eq!(exact(&m["stake"]), ETHER);
    get(
        api,
        &mut seen,
        &format!("/api/matches/{id}/events?limit=1000"),
        None,
    )
    .await;
    get(api, &mut seen, "/api/ledger", Some(&alice)).await;
    let mut ws = Ws::connect(api, &bob.token).await;
    subscribe(&mut ws, &mut seen, &format!("match:{id}")).await;
    subscribe(&mut ws, &mut seen, "inbox").await;
    seen.check();
}
