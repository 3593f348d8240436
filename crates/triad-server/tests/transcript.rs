//! Signed transcripts: the server's key, a finished match's transcript, what `verify`
//! checks (the chain, the signature, the moves by the rules, the money by the payout
//! rules), and that every single-byte change to a transcript file is caught.

mod common;

use common::{Server, User};
use serde_json::{Value, json};
use triad_engine::EndReason;
use triad_server::transcript::{self, Failure, Place, Transcript};

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
    let args = common::base_args(dir.path());
    let server = Server::start_in(dir, args).await;
    assert_eq!(server_key(&server).await, key);
    assert_eq!(transcript_of(&server, id).await, before);
    // Another database has another key, which the transcript does not verify with.
    let other = Server::start().await;
    let other_key = server_key(&other).await;
    assert_ne!(other_key, key);
    let failure = transcript::verify(before.as_bytes(), &other_key).unwrap_err();
    assert_eq!(failure.place, Place::Field("server_key.public_key"), "{failure}");
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
    r.expect_error(404, 210, "not_found");
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

/// Every single-byte change to a transcript file — each of the 8 bit flips of each byte,
/// and each byte replaced by a space, a digit and a letter — is refused.
#[tokio::test]
async fn every_single_byte_change_to_a_transcript_is_caught() {
    let server = Server::start().await;
    let (alice, bob) = funded_pair(&server, 1_000).await;
    let id = won_match(&server, &alice, &bob).await;
    let key = server_key(&server).await;
    let file = transcript_of(&server, id).await.into_bytes();
    transcript::verify(&file, &key).unwrap();
    let mut tried = 0;
    let mut places = std::collections::BTreeMap::<String, usize>::new();
    for at in 0..file.len() {
        let original = file[at];
        let flips = (0..8).map(|bit| original ^ (1 << bit));
        for changed in flips.chain([b' ', b'1', b'a']) {
            if changed == original {
                continue;
            }
            let mut tampered = file.clone();
            tampered[at] = changed;
            tried += 1;
            match transcript::verify(&tampered, &key) {
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
    }
    assert!(tried > 8 * file.len(), "{tried}");
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
        assert!(places.contains_key(place), "nothing caught at {place}: {places:?}");
    }
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
        Transcript::sign(&signing, id, t.payouts, events).render()
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
    let file = Transcript::sign(&signing, id, payouts, t.events.clone()).render();
    check(file, "transfer.amount", "the payout rules give 200");
    // A transcript missing its settlement.
    let mut events = t.events.clone();
    events.pop();
    let file = Transcript::sign(&signing, id, t.payouts, events).render();
    let failure = transcript::verify(file.as_bytes(), &key).unwrap_err();
    assert_eq!(failure.place, Place::Field("events"), "{failure}");
}
