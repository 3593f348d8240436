//! Money moves only with its owner's consent: a resend, a replay or a mapping from one id
//! to another never changes what a player agrees to. An idempotent resend answers what the
//! first call did (the same match) or is refused (119); an acceptance binds to the terms
//! the accepter saw (128 `terms_differ` otherwise); the agents' relay only ever accepts a
//! free game of the right pair and app.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Api, E, Player, Resp, Server, amount, new_key};

const TTT: &str = "tic-tac-toe";

/// A server with an owner, and two players holding `E` each.
async fn table() -> (tempfile::TempDir, Server, Player, Player) {
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let server = Server::start(dir.path(), &owner_key.address_string(), &[]).await;
    let api = &server.api;
    let owner = api.login(&owner_key).await;
    let (a, b) = (api.login(&new_key()).await, api.login(&new_key()).await);
    for p in [&a, &b] {
        api.deposit(&owner, p, E).await.ok();
    }
    (dir, server, a, b)
}

/// Sends an agents' message from `from` to `to`, with an `Idempotency-Key` if given.
async fn relay(
    api: &Api,
    from: &Player,
    to: &Player,
    action: &str,
    payload: Value,
    key: Option<&str>,
) -> Resp {
    let body = json!({ "to": to.address, "appId": TTT, "action": action, "payload": payload });
    api.try_send_keyed(
        Method::POST,
        "/api/apps/messages",
        Some(&from.token),
        Some(&body),
        key,
    )
    .await
    .expect("the relay answers")
}

/// `p`'s agents' inbox: every message's `(action, matchId)`.
async fn inbox(api: &Api, p: &Player) -> Vec<(String, u64)> {
    let page = api.get("/api/apps/inbox", Some(&p.token)).await.ok();
    page["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["action"].as_str().unwrap_or_default().to_owned(),
                m["matchId"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

/// The attack: Alice proposes a free game to Bob with an `Idempotency-Key`, calls
/// it off, challenges Bob directly with a stake, and resends the first proposal with the
/// same key. The relay used to answer with the staked match (the proposer's active one)
/// and deliver it to Bob as a proposal, which Bob's agent accepted, losing his stake. Now
/// the resend is the first proposal's duplicate, Bob's inbox gets nothing new, and Bob's
/// acceptance through the relay commits him to no stake.
#[tokio::test]
async fn a_resent_free_proposal_never_becomes_the_acceptance_of_a_staked_match() {
    let (_dir, server, alice, bob) = table().await;
    let api = &server.api;
    let propose = json!({ "seq": 0, "role": "X" });
    let first = relay(api, &alice, &bob, "propose", propose.clone(), Some("k1")).await;
    assert_eq!(first.status, 201, "{}", first.body);
    let (message, free) = (first.body["id"].clone(), first.body["matchId"].as_u64());
    let abort = json!({ "outcome": "abort", "reason": "changed my mind" });
    relay(api, &alice, &bob, "result", abort, None).await.ok();
    let staked = api
        .post(
            "/api/challenges",
            Some(&alice.token),
            &json!({ "opponent": bob.address, "game": TTT, "stake": E.to_string() }),
        )
        .await
        .ok()["match"]["id"]
        .as_u64()
        .expect("the staked challenge");

    // The resend is the first proposal, answered as it was: nothing new is delivered.
    let again = relay(api, &alice, &bob, "propose", propose, Some("k1")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["duplicate"], true);
    assert_eq!(again.body["matchId"].as_u64(), free);
    assert_eq!(again.body["id"], message);
    assert_ne!(again.body["matchId"].as_u64(), Some(staked));
    let seen = inbox(api, &bob).await;
    assert!(
        seen.iter().all(|(_, id)| Some(*id) == free),
        "Bob's inbox shows only the free game: {seen:?}"
    );

    // Bob (or `triad agent`, which accepts every proposal) accepts the pair's proposal:
    // whatever it maps to, it is never the staked match.
    let accepted = relay(
        api,
        &bob,
        &alice,
        "accept",
        json!({ "seq": 0, "role": "O" }),
        None,
    )
    .await;
    assert!(accepted.status >= 400, "{}", accepted.body);
    let m = api.match_(staked).await;
    assert_eq!(m["phase"], "waiting", "{m}");
    assert_eq!(api.balance(&bob).await, E, "Bob's stake never moved");
    assert_eq!(
        api.balance(&alice).await,
        0,
        "Alice's stake is in her own challenge"
    );
}

/// The same `Idempotency-Key` on a different proposal (another gameId) is refused (119),
/// never answered with the key's first game or any other.
#[tokio::test]
async fn an_idempotency_key_reused_for_another_proposal_is_refused() {
    let (_dir, server, alice, bob) = table().await;
    let api = &server.api;
    let g1 = json!({ "seq": 0, "role": "X", "gameId": "g1" });
    let first = relay(api, &alice, &bob, "propose", g1, Some("k")).await;
    assert_eq!(first.status, 201, "{}", first.body);
    let abort = json!({ "outcome": "abort", "reason": "later", "gameId": "g1" });
    relay(api, &alice, &bob, "result", abort, None).await.ok();
    let g2 = json!({ "seq": 0, "role": "X", "gameId": "g2" });
    relay(api, &alice, &bob, "propose", g2.clone(), Some("k"))
        .await
        .expect_error(422, 119);
    // Under a new key it is a new proposal.
    let fresh = relay(api, &alice, &bob, "propose", g2, Some("k2")).await;
    assert_eq!(fresh.status, 201, "{}", fresh.body);
    assert_ne!(fresh.body["matchId"], first.body["matchId"]);
}

/// `POST /api/challenges/{id}/accept` with the terms the accepter saw: a stake (or game,
/// challenger, first mover) other than the challenge's is refused with 128 and nothing
/// moves; the same terms are accepted. The web app and `triad bench` send them.
#[tokio::test]
async fn an_acceptance_states_the_terms_it_saw_and_other_terms_are_refused() {
    let (_dir, server, alice, bob) = table().await;
    let api = &server.api;
    let issued = api
        .post(
            "/api/challenges",
            Some(&alice.token),
            &json!({ "opponent": bob.address, "game": TTT, "stake": E.to_string(), "first": "challenger" }),
        )
        .await
        .ok();
    let id = issued["match"]["id"].as_u64().expect("a match id");
    let accept = format!("/api/challenges/{id}/accept");
    let seen = json!({ "stake": E.to_string(), "game": TTT, "challenger": alice.address, "first": "challenger" });
    for (field, other) in [
        ("stake", json!("0")),
        ("stake", json!((E - 1).to_string())),
        ("game", json!("sos")),
        ("challenger", json!(bob.address)),
        ("first", json!("opponent")),
    ] {
        let mut terms = seen.clone();
        terms[field] = other;
        let r = api.post(&accept, Some(&bob.token), &terms).await;
        r.expect_error(409, 128);
        assert!(
            r.body["message"]
                .as_str()
                .is_some_and(|m| m.contains("not the one you accepted")),
            "{}",
            r.body
        );
    }
    // A body that is not an object is refused too.
    api.post(&accept, Some(&bob.token), &json!([E]))
        .await
        .expect_error(400, 200);
    assert_eq!(api.balance(&bob).await, E, "nothing moved");
    assert_eq!(api.match_(id).await["phase"], "waiting");
    let started = api.post(&accept, Some(&bob.token), &seen).await.ok();
    assert_eq!(started["match"]["phase"], "ready");
    assert_eq!(amount(&started["match"]["stake"]), E);
    assert_eq!(api.balance(&bob).await, 0);
}

/// A keyed resend of a command answers with the original's match (it used to answer with
/// no match at all for a challenge), and the key with another body is refused.
#[tokio::test]
async fn a_keyed_resend_answers_with_the_original_match() {
    let (_dir, server, alice, bob) = table().await;
    let api = &server.api;
    let free = json!({ "opponent": bob.address, "game": TTT, "stake": "0" });
    let post = |body: Value, key: &'static str| {
        let api = api.clone();
        let token = alice.token.clone();
        async move {
            api.try_send_keyed(
                Method::POST,
                "/api/challenges",
                Some(&token),
                Some(&body),
                Some(key),
            )
            .await
            .expect("an answer")
        }
    };
    let first = post(free.clone(), "c1").await;
    assert_eq!(first.status, 201, "{}", first.body);
    let id = first.body["match"]["id"].as_u64().expect("a match");
    api.post(
        &format!("/api/challenges/{id}/withdraw"),
        Some(&alice.token),
        &json!({}),
    )
    .await
    .ok();
    let staked = json!({ "opponent": bob.address, "game": TTT, "stake": E.to_string() });
    post(staked.clone(), "c1").await.expect_error(422, 119);
    let other = post(staked, "c2").await;
    assert_eq!(other.status, 201, "{}", other.body);
    let again = post(free, "c1").await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["duplicate"], true);
    assert_eq!(
        again.body["match"]["id"].as_u64(),
        Some(id),
        "{}",
        again.body
    );
    assert_eq!(amount(&again.body["match"]["stake"]), 0);
}

/// An agent's acceptance may name the match of the proposal it answers (`matchId`, as
/// `triad agent` does): if the pair's game is now another (the proposer called it off and
/// proposed again), it is refused (128) rather than taken as acceptance of a game not seen.
#[tokio::test]
async fn an_agents_acceptance_binds_to_the_proposal_it_saw() {
    let (_dir, server, alice, bob) = table().await;
    let api = &server.api;
    let propose = json!({ "seq": 0, "role": "X" });
    let seen = relay(api, &alice, &bob, "propose", propose.clone(), None)
        .await
        .ok()["matchId"]
        .as_u64()
        .expect("a match");
    let abort = json!({ "outcome": "abort", "reason": "again" });
    relay(api, &alice, &bob, "result", abort, None).await.ok();
    let now = relay(api, &alice, &bob, "propose", propose, None)
        .await
        .ok()["matchId"]
        .as_u64()
        .expect("a match");
    assert_ne!(seen, now);
    let accept = |id: u64| {
        json!({ "to": alice.address, "appId": TTT, "action": "accept",
                "payload": { "seq": 0, "role": "O" }, "matchId": id })
    };
    api.post("/api/apps/messages", Some(&bob.token), &accept(seen))
        .await
        .expect_error(409, 128);
    assert_eq!(api.match_(now).await["phase"], "waiting");
    let r = api
        .post("/api/apps/messages", Some(&bob.token), &accept(now))
        .await
        .ok();
    assert_eq!(r["matchId"].as_u64(), Some(now));
    assert_eq!(api.match_(now).await["phase"], "ready");
}
