//! Challenge-response login, sessions, logout and `GET /api/me`.

use serde_json::{Value, json};
use triad_identity::{
    LoginMessage, MAX_CHALLENGE_LIFETIME_MS, SigningKey, address_of, format_address,
    format_timestamp, public_key_hex, sign_ed25519, sign_sui_personal_message,
};

use crate::common::{DOMAIN, Server, User, key};

const DAY_MS: u64 = 86_400_000;

fn keys_of(body: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

async fn login_body(server: &Server, body: &Value) -> crate::common::Resp {
    server.post("/api/auth/login").json(body).send().await
}

#[tokio::test]
async fn challenge_message_names_domain_address_fresh_nonce_and_expiry_within_five_minutes() {
    let server = Server::start().await;
    let alice = key(1);
    let now = server.now().await;
    let first = server.challenge(&alice).await;
    assert_eq!(keys_of(&first), ["challenge_id", "expires_at", "message"]);

    let message = LoginMessage::parse(first["message"].as_str().unwrap()).expect("parses");
    assert_eq!(message.domain(), DOMAIN);
    assert_eq!(message.address(), address_of(&alice.verifying_key()));
    assert_eq!(message.issued_at_ms(), now);
    assert!(message.expires_at_ms() > now);
    assert!(message.expires_at_ms() - now <= MAX_CHALLENGE_LIFETIME_MS);
    assert_eq!(
        first["expires_at"].as_str().unwrap(),
        format_timestamp(message.expires_at_ms()).unwrap()
    );

    // Every challenge has its own id and nonce.
    let second = server.challenge(&alice).await;
    let again = LoginMessage::parse(second["message"].as_str().unwrap()).unwrap();
    assert_ne!(first["challenge_id"], second["challenge_id"]);
    assert_ne!(message.nonce(), again.nonce());
    assert!(message.nonce().len() >= 16, "nonce {:?}", message.nonce());
}

#[tokio::test]
async fn ed25519_login_returns_a_token_for_the_keys_address() {
    let server = Server::start().await;
    let alice = key(1);
    let public_key = public_key_hex(&alice.verifying_key());
    let challenge = server.challenge(&alice).await;
    let signature = sign_ed25519(&alice, challenge["message"].as_str().unwrap().as_bytes());
    assert_eq!(signature.len(), 128);
    let r = login_body(
        &server,
        &json!({
            "challenge_id": challenge["challenge_id"], "public_key": public_key, "signature": signature,
        }),
    )
    .await;
    let body = r.expect(200);
    assert_eq!(keys_of(body), ["address", "expires_at", "token"]);
    let address = format_address(&address_of(&alice.verifying_key()));
    assert_eq!(body["address"], address.as_str());
    let now = server.now().await;
    assert_eq!(
        body["expires_at"].as_str().unwrap(),
        format_timestamp(now + DAY_MS).unwrap()
    );

    let me = server
        .get("/api/me")
        .token(body["token"].as_str().unwrap())
        .send()
        .await;
    assert_eq!(me.expect(200)["address"], address.as_str());
}

#[tokio::test]
async fn a_challenge_is_used_once_and_a_replayed_login_is_refused() {
    let server = Server::start().await;
    let alice = key(1);
    let challenge = server.challenge(&alice).await;
    let body = json!({
        "challenge_id": challenge["challenge_id"],
        "public_key": public_key_hex(&alice.verifying_key()),
        "signature": sign_ed25519(&alice, challenge["message"].as_str().unwrap().as_bytes()),
    });
    login_body(&server, &body).await.expect(200);
    login_body(&server, &body)
        .await
        .expect_error(401, 204, "unknown_challenge");
}

/// A failed attempt (another key's signature) leaves the challenge to its owner: anyone can
/// read a challenge id, and burning it would refuse the owner's login. The first login that
/// verifies uses it up.
#[tokio::test]
async fn a_failed_attempt_leaves_the_challenge_and_the_first_good_login_uses_it_up() {
    let server = Server::start().await;
    let alice = key(1);
    let challenge = server.challenge(&alice).await;
    let message = challenge["message"].as_str().unwrap().as_bytes();
    let public_key = public_key_hex(&alice.verifying_key());
    // Signed by another key: refused.
    login_body(
        &server,
        &json!({
            "challenge_id": challenge["challenge_id"], "public_key": public_key,
            "signature": sign_ed25519(&key(2), message),
        }),
    )
    .await
    .expect_error(401, 205, "bad_signature");
    login_body(
        &server,
        &json!({
            "challenge_id": challenge["challenge_id"], "public_key": public_key,
            "signature": sign_ed25519(&alice, message),
        }),
    )
    .await
    .expect(200);
    login_body(
        &server,
        &json!({
            "challenge_id": challenge["challenge_id"], "public_key": public_key,
            "signature": sign_ed25519(&alice, message),
        }),
    )
    .await
    .expect_error(401, 204, "unknown_challenge");
}

#[tokio::test]
async fn login_refuses_another_key_a_tampered_message_and_an_unknown_challenge() {
    let server = Server::start().await;
    let (alice, bob) = (key(1), key(2));

    // Bob presents Alice's challenge, signed by himself.
    let challenge = server.challenge(&alice).await;
    let message = challenge["message"].as_str().unwrap();
    login_body(
        &server,
        &json!({
            "challenge_id": challenge["challenge_id"],
            "public_key": public_key_hex(&bob.verifying_key()),
            "signature": sign_ed25519(&bob, message.as_bytes()),
        }),
    )
    .await
    .expect_error(401, 205, "bad_signature");

    // A signature over other bytes than the message's.
    let challenge = server.challenge(&alice).await;
    let tampered = challenge["message"]
        .as_str()
        .unwrap()
        .replace(DOMAIN, "evil.test");
    login_body(
        &server,
        &json!({
            "challenge_id": challenge["challenge_id"],
            "public_key": public_key_hex(&alice.verifying_key()),
            "signature": sign_ed25519(&alice, tampered.as_bytes()),
        }),
    )
    .await
    .expect_error(401, 205, "bad_signature");

    login_body(
        &server,
        &json!({
            "challenge_id": "00".repeat(16),
            "public_key": public_key_hex(&alice.verifying_key()),
            "signature": "00".repeat(64),
        }),
    )
    .await
    .expect_error(401, 204, "unknown_challenge");
}

#[tokio::test]
async fn a_malformed_signature_is_a_bad_signature_not_a_bad_key() {
    let server = Server::start().await;
    let alice = key(1);
    for (scheme, signature) in [
        ("ed25519", "abc".to_owned()),
        ("ed25519", "zz".repeat(64)),
        ("ed25519", "ab".repeat(65)),
        ("sui-personal-message", "not base64!".to_owned()),
        ("sui-personal-message", "AAAA".to_owned()),
    ] {
        let challenge = server.challenge(&alice).await;
        let r = login_body(
            &server,
            &json!({
                "challenge_id": challenge["challenge_id"],
                "public_key": public_key_hex(&alice.verifying_key()),
                "signature": signature,
                "scheme": scheme,
            }),
        )
        .await;
        let body = r.expect_error(401, 205, "bad_signature");
        assert!(
            body["message"].as_str().unwrap().contains("signature"),
            "{scheme} {signature}: {body}"
        );
    }
}

#[tokio::test]
async fn an_expired_challenge_is_refused() {
    let server = Server::start().await;
    let alice = key(1);
    let challenge = server.challenge(&alice).await;
    server.advance(MAX_CHALLENGE_LIFETIME_MS).await;
    login_body(
        &server,
        &json!({
            "challenge_id": challenge["challenge_id"],
            "public_key": public_key_hex(&alice.verifying_key()),
            "signature": sign_ed25519(&alice, challenge["message"].as_str().unwrap().as_bytes()),
        }),
    )
    .await
    .expect_error(401, 204, "unknown_challenge");
}

#[tokio::test]
async fn challenge_refuses_a_malformed_or_weak_public_key() {
    let server = Server::start().await;
    let mut identity_point = [0u8; 32];
    identity_point[0] = 1;
    for bad in [
        "zz".repeat(32),
        "ab".repeat(31),
        "ab".repeat(33),
        hex::encode(identity_point),
    ] {
        server
            .post("/api/auth/challenge")
            .json(&json!({ "public_key": bad }))
            .send()
            .await
            .expect_error(400, 206, "invalid_public_key");
    }
}

#[tokio::test]
async fn sui_personal_message_login_with_a_wallet_signature() {
    let server = Server::start().await;
    let alice = key(1);
    let challenge = server.challenge(&alice).await;
    let message = challenge["message"].as_str().unwrap().as_bytes();
    let r = login_body(
        &server,
        &json!({
            "challenge_id": challenge["challenge_id"],
            "public_key": public_key_hex(&alice.verifying_key()),
            "signature": sign_sui_personal_message(&alice, message),
            "scheme": "sui-personal-message",
        }),
    )
    .await;
    let token = r.expect(200)["token"].as_str().unwrap().to_owned();
    server.get("/api/me").token(&token).send().await.expect(200);

    // A plain Ed25519 signature is not a personal-message signature, and vice versa.
    for (scheme, signature) in [
        ("sui-personal-message", sign_ed25519(&alice, message)),
        ("ed25519", sign_sui_personal_message(&alice, message)),
    ] {
        let challenge = server.challenge(&alice).await;
        login_body(
            &server,
            &json!({
                "challenge_id": challenge["challenge_id"],
                "public_key": public_key_hex(&alice.verifying_key()),
                "signature": signature,
                "scheme": scheme,
            }),
        )
        .await
        .expect_error(401, 205, "bad_signature");
    }
}

#[derive(serde::Deserialize)]
struct Vectors {
    keys: Vec<VectorKey>,
}

#[derive(serde::Deserialize)]
struct VectorKey {
    secret_key: String,
    public_key: String,
    sui_address: String,
    signatures: Vec<VectorSignature>,
}

#[derive(serde::Deserialize)]
struct VectorSignature {
    message_hex: String,
    sui_personal_message_signature: String,
}

#[tokio::test]
async fn sui_sdk_vector_key_logs_in_to_its_sui_address() {
    // Made by the official Sui TypeScript SDK; see crates/triad-identity/tests/sui_vectors.rs.
    let vectors: Vectors = serde_json::from_str(include_str!(
        "../../../triad-identity/tests/sui_vectors.json"
    ))
    .unwrap();
    let server = Server::start().await;
    for vector in &vectors.keys {
        let secret: [u8; 32] = hex::decode(&vector.secret_key).unwrap().try_into().unwrap();
        let wallet = SigningKey::from_bytes(&secret);
        assert_eq!(public_key_hex(&wallet.verifying_key()), vector.public_key);
        // The signer below makes the SDK's bytes exactly (checked on the committed ones).
        let sample = &vector.signatures[0];
        assert_eq!(
            sign_sui_personal_message(&wallet, &hex::decode(&sample.message_hex).unwrap()),
            sample.sui_personal_message_signature
        );

        let challenge = server.challenge(&wallet).await;
        let message = challenge["message"].as_str().unwrap().as_bytes();
        let r = login_body(
            &server,
            &json!({
                "challenge_id": challenge["challenge_id"],
                "public_key": vector.public_key,
                "signature": sign_sui_personal_message(&wallet, message),
                "scheme": "sui-personal-message",
            }),
        )
        .await;
        let body = r.expect(200);
        assert_eq!(body["address"], vector.sui_address.as_str());
        let me = server
            .get("/api/me")
            .token(body["token"].as_str().unwrap())
            .send()
            .await;
        assert_eq!(me.expect(200)["address"], vector.sui_address.as_str());
    }
}

#[tokio::test]
async fn an_unknown_signature_scheme_is_refused_by_name() {
    let server = Server::start().await;
    let alice = key(1);
    let challenge = server.challenge(&alice).await;
    login_body(
        &server,
        &json!({
            "challenge_id": challenge["challenge_id"],
            "public_key": public_key_hex(&alice.verifying_key()),
            "signature": sign_ed25519(&alice, challenge["message"].as_str().unwrap().as_bytes()),
            "scheme": "rsa",
        }),
    )
    .await
    .expect_error(400, 216, "unknown_scheme");
}

#[tokio::test]
async fn a_token_expires_after_its_lifetime_on_the_servers_clock() {
    let server = Server::start().await;
    let alice = server.user().await;
    server.advance(DAY_MS - 1).await;
    server.get("/api/me").auth(&alice).send().await.expect(200);
    server.advance(1).await;
    server
        .get("/api/me")
        .auth(&alice)
        .send()
        .await
        .expect_error(401, 203, "token_expired");
    // Logging in again gives a fresh token.
    let again = server.login(&alice.key).await;
    server.get("/api/me").auth(&again).send().await.expect(200);
}

#[tokio::test]
async fn logout_revokes_only_the_token_it_was_sent_with() {
    let server = Server::start().await;
    let alice = server.user().await;
    let other_session = server.login(&alice.key).await;
    assert_ne!(alice.token, other_session.token);

    let r = server.post("/api/auth/logout").auth(&alice).send().await;
    assert_eq!(r.status.as_u16(), 204);
    server
        .get("/api/me")
        .auth(&alice)
        .send()
        .await
        .expect_error(401, 202, "invalid_token");
    server
        .post("/api/auth/logout")
        .auth(&alice)
        .send()
        .await
        .expect_error(401, 202, "invalid_token");
    server
        .get("/api/me")
        .auth(&other_session)
        .send()
        .await
        .expect(200);
}

#[tokio::test]
async fn requests_without_a_bearer_token_are_unauthorized() {
    let server = Server::start().await;
    let alice = server.user().await;
    server
        .get("/api/me")
        .send()
        .await
        .expect_error(401, 201, "unauthorized");
    // The token must come as `Bearer <token>`.
    server
        .get("/api/me")
        .header("authorization", &format!("Token {}", alice.token))
        .send()
        .await
        .expect_error(401, 201, "unauthorized");
    server
        .get("/api/me")
        .header("authorization", &alice.token)
        .send()
        .await
        .expect_error(401, 201, "unauthorized");
}

async fn me(server: &Server, user: &User) -> Value {
    server
        .get("/api/me")
        .auth(user)
        .send()
        .await
        .expect(200)
        .clone()
}

#[tokio::test]
async fn me_shows_address_balance_active_match_stats_and_rating() {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);

    let fresh = me(&server, &alice).await;
    assert_eq!(fresh["address"], alice.address.as_str());
    assert_eq!(fresh["balance"], "0");
    assert_eq!(fresh["owner"], false);
    assert_eq!(fresh["active_match"], Value::Null);
    assert_eq!(fresh["stats"]["address"], alice.address.as_str());
    assert_eq!(fresh["stats"]["games"], 0);
    assert_eq!(fresh["stats"]["wins"], 0);
    assert_eq!(fresh["stats"]["rating"]["rating"], 1500.0);
    assert_eq!(me(&server, &server.owner).await["owner"], true);

    server.deposit(&alice, 1_000).await;
    server.deposit(&bob, 1_000).await;
    let id = server.challenge_accepted(&alice, &bob, 100).await;
    let playing = me(&server, &alice).await;
    assert_eq!(playing["balance"], "900");
    assert_eq!(playing["active_match"]["id"], id);
    assert_eq!(playing["active_match"]["phase"], "ready");
    assert_eq!(playing["stats"]["active_match"], id);

    server.x_wins(&alice, &bob, id).await.expect(201);
    let after = me(&server, &alice).await;
    assert_eq!(after["active_match"], Value::Null);
    assert_eq!(after["stats"]["games"], 1);
    assert_eq!(after["stats"]["wins"], 1);
    assert!(after["stats"]["rating"]["rating"].as_f64().unwrap() > 1500.0);
    // 1.8 × the stake back: 900 + 180.
    assert_eq!(after["balance"], "1080");
    let loser = me(&server, &bob).await;
    assert_eq!(loser["stats"]["wins"], 0);
    assert_eq!(loser["stats"]["games"], 1);
    assert!(loser["stats"]["rating"]["rating"].as_f64().unwrap() < 1500.0);
}
