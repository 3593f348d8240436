//! Signed transcripts: the server's key, a finished match's transcript, what `verify`
//! checks (the chain, the signature, the moves by the rules, the money by the payout
//! rules), and that every single-byte change to a transcript file is caught.

use serde_json::{Value, json};
use triad_engine::EndReason;
use triad_server::transcript::{self, Failure, Place, Transcript};

use crate::common::{Server, User};

async fn funded_pair(server: &Server, amount: u64) -> (User, User) {
    let (alice, bob) = (server.user().await, server.user().await);
    server.deposit(&alice, amount).await;
    server.deposit(&bob, amount).await;
    (alice, bob)
}

/// The server's published transcript key.
async fn server_key(server: &Server) -> triad_identity::VerifyingKey {
    let r = server.get("/.well-known/triad-transcript-key").send().await;
    let body = r.expect(200);
    assert_eq!(body["algorithm"], "ed25519");
    let key = transcript::parse_key(body["public_key"].as_str().unwrap()).unwrap();
    assert_eq!(body["key_id"], transcript::key_id(&key));
    key
}

/// A finished match's transcript file, as served.
async fn transcript_of(server: &Server, id: u64) -> String {
    let r = server
        .get(&format!("/api/matches/{id}/transcript"))
        .send()
        .await;
    r.expect(200);
    assert_eq!(r.headers["content-type"], "application/json");
    r.text.clone()
}

/// A staked tic-tac-toe match that X (alice) wins on the top row; returns its id.
async fn won_match(server: &Server, alice: &User, bob: &User) -> u64 {
    let id = server.challenge_accepted(alice, bob, 100).await;
    server.x_wins(alice, bob, id).await.expect(201);
    id
}

#[tokio::test]
async fn a_finished_match_has_a_transcript_that_verifies_with_the_published_key() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = won_match(&server, &alice, &bob).await;
    let key = server_key(&server).await;
    let file = transcript_of(&server, id).await;
    let verified = transcript::verify(file.as_bytes(), &key).unwrap();
    assert_eq!(verified.transcript.match_id, id);
    assert_eq!(verified.moves, 5);
    assert_eq!(verified.reason, EndReason::Win);
    assert_eq!(verified.winner, Some(triad_rules::Player::First));
    assert_eq!(verified.stake, 100);
    // 90% of the pot of 200 to the winner, the rest to the reserve.
    assert_eq!(
        verified.payouts,
        [(alice.address.parse().unwrap(), 180)],
        "{file}"
    );
    assert_eq!(verified.reserve, 20);
    // The events are the match's, as the API serves them, in order.
    let events = server
        .get(&format!("/api/matches/{id}/events"))
        .send()
        .await
        .expect(200)["events"]
        .clone();
    let served: Vec<Value> = verified
        .transcript
        .events
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    assert_eq!(Value::from(served), events);
    // The links chain from the header to the head, which the key signed.
    let t = &verified.transcript;
    let mut link = transcript::header_link(&key, id, t.payouts);
    for (event, stated) in t.events.iter().zip(&t.links) {
        link = transcript::next_link(&link, event);
        assert_eq!(*stated, hex::encode(link));
    }
    assert_eq!(t.head, hex::encode(link));
    triad_identity::verify_ed25519(
        &hex::encode(key.as_bytes()),
        &transcript::signed_message(&link),
        &t.signature,
    )
    .unwrap();
}

#[tokio::test]
async fn the_key_is_kept_with_the_database_and_a_transcript_is_the_same_after_a_restart() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = won_match(&server, &alice, &bob).await;
    let key = server_key(&server).await;
    let before = transcript_of(&server, id).await;
    let dir = server.stop().await;
    let args = crate::common::base_args(dir.path());
    let server = Server::start_in(dir, args).await;
    assert_eq!(server_key(&server).await, key);
    assert_eq!(transcript_of(&server, id).await, before);
    // Another database has another key, which the transcript does not verify with.
    let other = Server::start().await;
    let other_key = server_key(&other).await;
    assert_ne!(other_key, key);
    let failure = transcript::verify(before.as_bytes(), &other_key).unwrap_err();
    assert_eq!(
        failure.place,
        Place::Field("server_key.public_key"),
        "{failure}"
    );
}

#[tokio::test]
async fn an_unfinished_match_has_no_transcript_yet_and_an_unknown_one_none() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    server.play(&alice, id, 1, 4, "X").await.expect(201);
    let r = server
        .get(&format!("/api/matches/{id}/transcript"))
        .send()
        .await;
    r.expect_error(409, 238, "match_not_finished");
    let r = server.get("/api/matches/999999/transcript").send().await;
    r.expect_error(404, 100, "unknown_match");
    // A draw, a forfeit and a declined challenge verify too, each with its settlement.
    let key = server_key(&server).await;
    server
        .post(&format!("/api/matches/{id}/forfeit"))
        .auth(&bob)
        .send()
        .await
        .expect(201);
    let v = transcript::verify(transcript_of(&server, id).await.as_bytes(), &key).unwrap();
    assert_eq!((v.reason, v.moves, v.reserve), (EndReason::Forfeit, 1, 20));
    let declined = server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": bob.address, "game": "sos", "stake": 50 }))
        .send()
        .await
        .expect(201)["match"]["id"]
        .as_u64()
        .unwrap();
    server
        .post(&format!("/api/challenges/{declined}/decline"))
        .auth(&bob)
        .send()
        .await
        .expect(201);
    let v = transcript::verify(transcript_of(&server, declined).await.as_bytes(), &key).unwrap();
    assert_eq!(v.reason, EndReason::Declined);
    assert_eq!(v.payouts, [(alice.address.parse().unwrap(), 50)]);
    let drawn = server.challenge_accepted(&alice, &bob, 10).await;
    // X O X / X O O / O X X: no line.
    for (seq, cell) in [0, 1, 2, 4, 3, 5, 7, 6, 8].into_iter().enumerate() {
        let (who, mark) = if seq % 2 == 0 {
            (&alice, "X")
        } else {
            (&bob, "O")
        };
        let seq = u8::try_from(seq + 1).unwrap();
        server.play(who, drawn, seq, cell, mark).await.expect(201);
    }
    let v = transcript::verify(transcript_of(&server, drawn).await.as_bytes(), &key).unwrap();
    assert_eq!((v.reason, v.moves, v.reserve), (EndReason::Draw, 9, 2));
    assert_eq!(v.payouts.len(), 2);
    assert!(v.payouts.iter().all(|(_, amount)| *amount == 9));
}

/// Every single-byte change to a transcript file (each byte replaced by each of the 255
/// other values) is refused. The bytes are shared out among the cores. On PostgreSQL, whose
/// transcripts the same code renders, each byte's 8 bit flips stand for the whole sweep,
/// which the SQLite run makes.
fn assert_every_single_byte_change_is_caught(file: &[u8], key: &triad_identity::VerifyingKey) {
    transcript::verify(file, key).unwrap();
    let changes_of = |original: u8| -> Vec<u8> {
        if crate::common::on_postgres() {
            (0..8).map(|bit| original ^ (1 << bit)).collect()
        } else {
            (0..=u8::MAX).filter(|&b| b != original).collect()
        }
    };
    let per_byte = changes_of(0).len();
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    let share = file.len().div_ceil(threads);
    let (tried, places) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|n| {
                scope.spawn(move || {
                    let mut tried = 0usize;
                    let mut places = std::collections::BTreeMap::<String, usize>::new();
                    let mut tampered = file.to_vec();
                    for at in (n * share)..((n + 1) * share).min(file.len()) {
                        let original = file[at];
                        for changed in changes_of(original) {
                            tampered[at] = changed;
                            tried += 1;
                            match transcript::verify(&tampered, key) {
                                Ok(_) => panic!(
                                    "byte {at} changed from {:?} to {:?} still verifies",
                                    original as char, changed as char
                                ),
                                Err(Failure { place, .. }) => {
                                    let place = match place {
                                        Place::Event { field, .. } => format!("event {field}"),
                                        other => other.to_string(),
                                    };
                                    *places.entry(place).or_default() += 1;
                                }
                            }
                        }
                        tampered[at] = original;
                    }
                    (tried, places)
                })
            })
            .collect();
        let mut tried = 0;
        let mut places = std::collections::BTreeMap::<String, usize>::new();
        for worker in workers {
            let (n, found) = worker.join().expect("a worker checks its bytes");
            tried += n;
            for (place, count) in found {
                *places.entry(place).or_default() += count;
            }
        }
        (tried, places)
    });
    assert_eq!(tried, per_byte * file.len());
    // The checks that caught them: the form, the chain, the head, the signature, the key.
    for place in [
        "the file",
        "field links",
        "field head",
        "field signature",
        "field server_key.public_key",
        "field server_key.key_id",
        "field format",
    ] {
        assert!(
            places.contains_key(place),
            "nothing caught at {place}: {places:?}"
        );
    }
}

#[tokio::test]
async fn every_single_byte_change_to_a_transcript_is_caught() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = won_match(&server, &alice, &bob).await;
    let key = server_key(&server).await;
    let file = transcript_of(&server, id).await.into_bytes();
    assert_every_single_byte_change_is_caught(&file, &key);
}

/// What the chain cannot catch, since the server signed it: a transcript re-signed with
/// the server's own key over events that break the rules or the payout rules. `verify`
/// says which event and which field.
#[tokio::test]
async fn a_signed_transcript_that_breaks_the_rules_or_the_payouts_is_refused_at_the_event() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = won_match(&server, &alice, &bob).await;
    let key = server_key(&server).await;
    let file = transcript_of(&server, id).await;
    let t: Transcript = serde_json::from_str(&file).unwrap();
    let signing = server.state().transcript_key.clone();
    let resigned = |edit: &dyn Fn(&mut Vec<Value>)| {
        let mut events: Vec<Value> = t
            .events
            .iter()
            .map(|e| serde_json::from_str(e).unwrap())
            .collect();
        edit(&mut events);
        let events = events.iter().map(Value::to_string).collect();
        Transcript::sign(&signing, id, t.payouts, events, Vec::new()).render()
    };
    let index_of = |events: &[Value], kind: &str, n: usize| {
        events
            .iter()
            .enumerate()
            .filter(|(_, e)| e["kind"]["type"] == kind)
            .nth(n)
            .unwrap()
            .0
    };
    let check = |file: String, field: &str, says: &str| {
        let failure = transcript::verify(file.as_bytes(), &key).unwrap_err();
        let Place::Event { field: at, .. } = failure.place else {
            panic!("{failure}");
        };
        assert_eq!(at, field, "{failure}");
        assert!(failure.problem.contains(says), "{failure}");
    };
    // O's first move onto X's square.
    check(
        resigned(&|events| {
            let i = index_of(events, "moved", 1);
            events[i]["kind"]["cell"] = json!(0);
        }),
        "cell",
        "not a legal move",
    );
    // A win the rules do not see: the last move elsewhere.
    check(
        resigned(&|events| {
            let i = index_of(events, "moved", 4);
            events[i]["kind"]["cell"] = json!(8);
        }),
        "reason",
        "not over by the rules",
    );
    // The winner paid more than the payout rules give.
    check(
        resigned(&|events| {
            let i = index_of(events, "game_ended", 0) + 1;
            events[i]["kind"]["transfer"]["amount"] = json!("190");
        }),
        "transfer.amount",
        "the payout rules give 180",
    );
    // Different payout rules in the header than the transfers were made by.
    let mut payouts = t.payouts;
    payouts.win_bps_of_pot = 10_000;
    let file = Transcript::sign(&signing, id, payouts, t.events.clone(), Vec::new()).render();
    check(file, "transfer.amount", "the payout rules give 200");
    // Payout rules no server may have: refused before any share is computed.
    let mut payouts = t.payouts;
    payouts.timeout_bps_of_pot = u32::MAX;
    let file = Transcript::sign(&signing, id, payouts, t.events.clone(), Vec::new()).render();
    let failure = transcript::verify(file.as_bytes(), &key).unwrap_err();
    assert_eq!(failure.place, Place::Field("payouts"), "{failure}");
    // Amounts at the edge of u128 are refused, never an overflow.
    check(
        resigned(&|events| {
            for e in events.iter_mut() {
                for field in ["stake", "amount"] {
                    if e["kind"].get(field).is_some() {
                        e["kind"][field] = json!(u128::MAX.to_string());
                    }
                    if e["kind"]["transfer"].get(field).is_some() {
                        e["kind"]["transfer"][field] = json!(u128::MAX.to_string());
                    }
                }
            }
        }),
        "transfer.amount",
        "more than two stakes",
    );
    // A transcript missing its settlement.
    let mut events = t.events.clone();
    events.pop();
    let file = Transcript::sign(&signing, id, t.payouts, events, Vec::new()).render();
    let failure = transcript::verify(file.as_bytes(), &key).unwrap_err();
    assert_eq!(failure.place, Place::Field("events"), "{failure}");
}

/// An agents' game played with signed envelopes: the transcript carries every signed
/// message, chained after the events, and `verify` checks each signature against its
/// sender and each signed move against the match; a message changed and re-signed by the
/// server is still refused, since the player's own signature no longer verifies.
#[tokio::test]
async fn an_agents_game_s_signed_envelopes_are_in_its_transcript_and_checked() {
    use triad_protocol::{App, Message, envelope};
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    let app = App::TicTacToe;
    let address = |u: &User| triad_identity::parse_address(&u.address).unwrap();
    let script = [
        (&alice, &bob, "propose", r#"{"seq":0,"role":"X"}"#),
        (&bob, &alice, "accept", r#"{"seq":0,"role":"O"}"#),
        (
            &alice,
            &bob,
            "move",
            r#"{"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}"#,
        ),
        (
            &bob,
            &alice,
            "move",
            r#"{"seq":2,"replyTo":1,"position":1,"mark":"O","board":["","O","","","X","","","",""]}"#,
        ),
        (
            &alice,
            &bob,
            "move",
            r#"{"seq":3,"replyTo":2,"position":0,"mark":"X","board":["X","O","","","X","","","",""]}"#,
        ),
        (
            &bob,
            &alice,
            "move",
            r#"{"seq":4,"replyTo":3,"position":2,"mark":"O","board":["X","O","O","","X","","","",""]}"#,
        ),
        (
            &alice,
            &bob,
            "move",
            r#"{"seq":5,"replyTo":4,"position":8,"mark":"X","board":["X","O","O","","X","","","","X"]}"#,
        ),
        (&alice, &bob, "result", r#"{"outcome":"win","winner":"X"}"#),
    ];
    let mut id = 0;
    for (from, to, action, payload) in script {
        let payload: Value = serde_json::from_str(payload).unwrap();
        let message = Message::decode(app, action, &payload).unwrap();
        let signed = envelope::sign(&from.key, &address(to), app, &message);
        let r = server
            .post("/api/apps/messages")
            .auth(from)
            .json(
                &json!({"to": to.address, "appId": "tic-tac-toe", "action": action,
                          "payload": payload, "signed": signed}),
            )
            .send()
            .await;
        id = r.expect(201)["matchId"].as_u64().unwrap();
    }
    let key = server_key(&server).await;
    let file = transcript_of(&server, id).await;
    let verified = transcript::verify(file.as_bytes(), &key).unwrap();
    assert_eq!(verified.transcript.messages.len(), 8);
    assert_eq!(verified.signed_moves, 5);
    assert_eq!(verified.reason, EndReason::Win);
    let t = &verified.transcript;
    assert_eq!(t.links.len(), t.events.len() + 8);
    assert_eq!(t.messages[2].from, alice.address);
    assert_eq!(t.messages[2].action, "move");

    // The server (or anyone with its key) cannot make a player sign what they did not:
    // a message's move changed and the transcript re-signed is refused at the message.
    let signing = server.state().transcript_key.clone();
    let mut messages = t.messages.clone();
    messages[2].payload = messages[2]
        .payload
        .replace("\"position\":4", "\"position\":3");
    let forged = Transcript::sign(&signing, id, t.payouts, t.events.clone(), messages).render();
    let failure = transcript::verify(forged.as_bytes(), &key).unwrap_err();
    assert_eq!(
        failure.place,
        Place::Message {
            index: 2,
            field: "signature"
        },
        "{failure}"
    );
    // A genuine signature of a move the match does not have.
    let mut messages = t.messages.clone();
    let other = Message::decode(app, "move", &serde_json::from_str::<Value>(
        r#"{"seq":1,"replyTo":0,"position":3,"mark":"X","board":["","","","X","","","","",""]}"#,
    ).unwrap()).unwrap();
    let signed = envelope::sign(&alice.key, &address(&bob), app, &other);
    messages[2].payload = other.payload_json(app);
    messages[2].signature = signed.signature;
    let forged = Transcript::sign(&signing, id, t.payouts, t.events.clone(), messages).render();
    let failure = transcript::verify(forged.as_bytes(), &key).unwrap_err();
    assert_eq!(
        failure.place,
        Place::Message {
            index: 2,
            field: "payload"
        },
        "{failure}"
    );
    assert!(
        failure
            .problem
            .contains("signs move 1 that the match does not have"),
        "{failure}"
    );
    // And every byte of the messages is covered like the rest.
    assert_every_single_byte_change_is_caught(file.as_bytes(), &key);
}

/// The example transcripts of `docs/transcript-examples/` (made by a server of the
/// format's first version) still verify: the format has not moved under the files a
/// verifier elsewhere is tested against.
#[test]
fn the_documented_examples_verify_with_their_key() {
    let key: transcript::ServerKey = serde_json::from_str(include_str!(
        "../../../../docs/transcript-examples/key.json"
    ))
    .unwrap();
    let key = key.key().unwrap();
    let staked = include_str!("../../../../docs/transcript-examples/staked.json");
    let v = transcript::verify(staked.as_bytes(), &key).unwrap();
    assert_eq!(
        (v.reason, v.moves, v.stake, v.reserve),
        (EndReason::Win, 5, 100, 20)
    );
    assert_eq!(v.payouts.len(), 1);
    assert!(v.transcript.messages.is_empty());
    let agents = include_str!("../../../../docs/transcript-examples/agents.json");
    let v = transcript::verify(agents.as_bytes(), &key).unwrap();
    assert_eq!((v.reason, v.moves, v.signed_moves), (EndReason::Win, 5, 5));
    assert_eq!(v.transcript.messages.len(), 7);
}

/// A move signed as the web app signs it (`triad-move/v1`), as `user`.
fn signed_move(server_key_id: &str, id: u64, seq: u8, cell: u8, mark: &str, user: &User) -> Value {
    let text = triad_identity::move_message(
        server_key_id,
        id,
        seq,
        cell,
        mark.chars().next().unwrap(),
        &user.address,
    );
    json!({
        "seq": seq, "cell": cell, "mark": mark,
        "signature": {
            "public_key": user.public_key(),
            "signature": triad_identity::sign_ed25519(&user.key, text.as_bytes()),
        },
    })
}

/// Moves the players signed are in the transcript's events, checked by `verify` (and by
/// every single-byte change); the server refuses a move signed by another key or for
/// another move, and a transcript whose player's signature was swapped fails at that event.
#[tokio::test]
async fn moves_the_players_signed_are_in_the_transcript_and_checked() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let key = server_key(&server).await;
    let key_id = transcript::key_id(&key);
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    let post = |body: Value, user: &User| {
        server
            .post(&format!("/api/matches/{id}/moves"))
            .auth(user)
            .json(&body)
    };
    // Signed by Bob's key for Alice's move, or Alice's signature of another square: refused.
    let mut wrong_key = signed_move(&key_id, id, 1, 0, "X", &alice);
    wrong_key["signature"]["public_key"] = json!(bob.public_key());
    post(wrong_key, &alice)
        .send()
        .await
        .expect_error(401, 205, "bad_signature");
    let mut other_move = signed_move(&key_id, id, 1, 0, "X", &alice);
    other_move["cell"] = json!(4);
    post(other_move, &alice)
        .send()
        .await
        .expect_error(401, 205, "bad_signature");
    assert_eq!(server.match_(id).await["seq"], 0, "nothing was played");

    for (seq, who, cell, mark) in [
        (1, &alice, 0, "X"),
        (2, &bob, 3, "O"),
        (3, &alice, 1, "X"),
        (4, &bob, 4, "O"),
        (5, &alice, 2, "X"),
    ] {
        post(signed_move(&key_id, id, seq, cell, mark, who), who)
            .send()
            .await
            .expect(201);
    }
    let file = transcript_of(&server, id).await;
    let verified = transcript::verify(file.as_bytes(), &key).unwrap();
    assert_eq!(verified.signed_moves, 5);
    assert_every_single_byte_change_is_caught(file.as_bytes(), &key);

    // The server re-signs a transcript in which Bob's signature is Alice's: refused there.
    let t: Transcript = serde_json::from_str(&file).unwrap();
    let mut events: Vec<Value> = t
        .events
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let bobs = events
        .iter()
        .position(|e| e["kind"]["type"] == "moved" && e["kind"]["seq"] == 2)
        .unwrap();
    let alices = events
        .iter()
        .position(|e| e["kind"]["type"] == "moved" && e["kind"]["seq"] == 1)
        .unwrap();
    events[bobs]["kind"]["signed"]["signature"] =
        events[alices]["kind"]["signed"]["signature"].clone();
    let forged = Transcript::sign(
        &server.state().transcript_key,
        id,
        t.payouts,
        events.iter().map(Value::to_string).collect(),
        Vec::new(),
    )
    .render();
    let failure = transcript::verify(forged.as_bytes(), &key).unwrap_err();
    assert!(
        matches!(
            failure.place,
            Place::Event {
                field: "signed.signature",
                ..
            }
        ),
        "{failure}"
    );
    server.stop().await;
}
