//! Every error body is `{"code", "error", "message"}` with a fitting HTTP status: bad JSON,
//! unknown fields, wrong types, oversized bodies, unknown routes and methods, bad
//! addresses, bad query parameters and bad path parameters.

use axum::http::Method;
use serde_json::json;

use crate::common::Server;

#[tokio::test]
async fn unreadable_json_bodies_are_bad_requests() {
    let server = Server::start().await;
    let alice = server.user().await;
    let cases = [
        ("not JSON", "{"),
        ("empty", ""),
        ("unknown field", r#"{"game":"sos","colour":"red"}"#),
        ("wrong type", r#"{"game":7}"#),
        ("unknown game", r#"{"game":"chess"}"#),
        ("missing field", r#"{}"#),
        ("null", "null"),
        ("a string", r#""sos""#),
        ("unknown level", r#"{"game":"sos","level":"godlike"}"#),
    ];
    for (label, text) in cases {
        let r = server
            .post("/api/computer")
            .auth(&alice)
            .raw(text)
            .send()
            .await;
        assert_eq!(r.status.as_u16(), 400, "{label}: {}", r.text);
        r.expect_error(400, 200, "bad_request");
    }
    // Nothing was started.
    let r = server.get("/api/me").auth(&alice).send().await;
    assert_eq!(r.expect(200)["active_match"], serde_json::Value::Null);

    // The same for every JSON endpoint, including unauthenticated ones (the dev clock
    // is the owner's: it reads the body after the login).
    for path in ["/api/auth/challenge", "/api/auth/login"] {
        for text in ["{", r#"{"nope":1}"#, "null"] {
            server
                .post(path)
                .raw(text)
                .send()
                .await
                .expect_error(400, 200, "bad_request");
        }
    }
    // A body without a JSON content type.
    let r = server
        .post("/api/auth/challenge")
        .header("content-type", "text/plain")
        .send()
        .await;
    r.expect_error(400, 200, "bad_request");
}

#[tokio::test]
async fn move_fields_of_the_wrong_type_or_range_are_bad_requests() {
    let server = Server::start().await;
    let alice = server.user().await;
    for body in [
        json!({ "seq": -1, "cell": 0, "mark": "X" }),
        json!({ "seq": 256, "cell": 0, "mark": "X" }),
        json!({ "seq": 1, "cell": "zero", "mark": "X" }),
        json!({ "seq": 1, "cell": 0, "mark": "Q" }),
        json!({ "seq": 1, "cell": 0, "mark": "X", "extra": true }),
    ] {
        server
            .post("/api/matches/1/moves")
            .auth(&alice)
            .json(&body)
            .send()
            .await
            .expect_error(400, 200, "bad_request");
    }
    for amount in [
        json!(-5),
        json!("12x"),
        json!(1.5),
        // One past the largest amount, u128::MAX.
        json!("340282366920938463463374607431768211456"),
        json!("+5"),
        json!("05"),
    ] {
        server
            .post("/api/ledger/deposit")
            .auth(&server.owner)
            .json(&json!({ "to": alice.address, "amount": amount }))
            .send()
            .await
            .expect_error(400, 200, "bad_request");
    }
}

#[tokio::test]
async fn an_oversized_body_is_payload_too_large() {
    let server = Server::start().await;
    let limit = 16 * 1024;
    let big = format!(r#"{{"public_key":"{}"}}"#, "a".repeat(limit));
    assert!(big.len() > limit);
    server
        .post("/api/auth/challenge")
        .raw(&big)
        .send()
        .await
        .expect_error(413, 208, "payload_too_large");
    // Just under the limit it is read (and refused for what it says).
    let fits = format!(r#"{{"public_key":"{}"}}"#, "a".repeat(limit - 100));
    assert!(fits.len() < limit);
    server
        .post("/api/auth/challenge")
        .raw(&fits)
        .send()
        .await
        .expect_error(400, 206, "invalid_public_key");
}

#[tokio::test]
async fn a_smaller_configured_body_limit_is_enforced() {
    let server = Server::start_with(|a| a.max_body_bytes = Some(512)).await;
    let alice = server.user().await;
    let padded = format!(r#"{{"game":"sos","level":"{}"}}"#, "x".repeat(600));
    server
        .post("/api/computer")
        .auth(&alice)
        .raw(&padded)
        .send()
        .await
        .expect_error(413, 208, "payload_too_large");
}

#[tokio::test]
async fn unknown_routes_are_not_found() {
    let server = Server::start().await;
    // `/` and the app's other pages serve the web app (`web.rs`).
    for path in [
        "/api",
        "/api/nothing",
        "/api/matches/1/nothing",
        "/healthz/x",
        "/nowhere",
    ] {
        for method in [Method::GET, Method::POST] {
            server
                .call(method.clone(), path)
                .send()
                .await
                .expect_error(404, 210, "not_found");
        }
    }
}

#[tokio::test]
async fn a_known_route_with_another_method_is_method_not_allowed() {
    let server = Server::start().await;
    for (method, path) in [
        (Method::PUT, "/api/me"),
        (Method::DELETE, "/api/matches/1"),
        (Method::GET, "/api/auth/login"),
        (Method::PATCH, "/api/queue"),
        (Method::POST, "/healthz"),
    ] {
        let r = server.call(method.clone(), path).send().await;
        r.expect_error(405, 217, "method_not_allowed");
        assert!(
            r.headers.contains_key("allow"),
            "{method} {path} should say which methods are allowed"
        );
    }
}

#[tokio::test]
async fn bad_addresses_are_refused_as_invalid_address() {
    let server = Server::start().await;
    let alice = server.user().await;
    let bad = [
        "nope".to_owned(),
        "0x12".to_owned(),
        "12".repeat(32),
        format!("0x{}", "g".repeat(64)),
        format!("0x{}", "1".repeat(65)),
    ];
    for address in &bad {
        server
            .get(&format!("/api/players/{address}"))
            .send()
            .await
            .expect_error(400, 211, "invalid_address");
        server
            .post("/api/challenges")
            .auth(&alice)
            .json(&json!({ "opponent": address, "game": "sos" }))
            .send()
            .await
            .expect_error(400, 211, "invalid_address");
        server
            .post("/api/ledger/deposit")
            .auth(&server.owner)
            .json(&json!({ "to": address, "amount": 1 }))
            .send()
            .await
            .expect_error(400, 211, "invalid_address");
        server
            .get(&format!("/api/matches?player={address}"))
            .send()
            .await
            .expect_error(400, 211, "invalid_address");
    }
    // The zero address parses, but is nobody.
    let zero = format!("0x{}", "0".repeat(64));
    server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": zero, "game": "sos" }))
        .send()
        .await
        .expect_error(422, 125, "zero_address");
    server
        .post("/api/challenges")
        .auth(&alice)
        .json(&json!({ "opponent": alice.address, "game": "sos" }))
        .send()
        .await
        .expect_error(422, 104, "self_play");
}

#[tokio::test]
async fn out_of_range_query_parameters_are_invalid_parameters() {
    let server = Server::start().await;
    let alice = server.user().await;
    for path in [
        "/api/matches?limit=0",
        "/api/matches?limit=101",
        "/api/matches?status=playing",
        "/api/matches/1/events?limit=0",
        "/api/matches/1/events?limit=1001",
        "/api/leaderboard?by=losses",
        "/api/leaderboard?limit=0",
        "/api/leaderboard?limit=101",
    ] {
        let r = server.get(path).send().await;
        assert_eq!(r.status.as_u16(), 400, "{path}: {}", r.text);
        r.expect_error(400, 215, "invalid_parameter");
    }
    for path in ["/api/ledger?limit=0", "/api/ledger?limit=201"] {
        server
            .get(path)
            .auth(&alice)
            .send()
            .await
            .expect_error(400, 215, "invalid_parameter");
    }
}

/// A parameter that does not parse is a request that cannot be read (200); one that parses
/// but is out of range is an invalid parameter (215).
#[tokio::test]
async fn unparsable_query_parameters_are_bad_requests() {
    let server = Server::start().await;
    let alice = server.user().await;
    for path in [
        "/api/matches?limit=ten",
        "/api/matches?before=-1",
        "/api/matches/1/events?since=soon",
        "/api/matches/1/events?limit=1.5",
        "/api/leaderboard?limit=many",
    ] {
        let r = server.get(path).send().await;
        assert_eq!(r.status.as_u16(), 400, "{path}: {}", r.text);
        r.expect_error(400, 200, "bad_request");
    }
    server
        .get("/api/ledger?before=yesterday")
        .auth(&alice)
        .send()
        .await
        .expect_error(400, 200, "bad_request");
}

#[tokio::test]
async fn unparsable_path_parameters_are_bad_requests() {
    let server = Server::start().await;
    let alice = server.user().await;
    for (method, path) in [
        (Method::GET, "/api/matches/abc"),
        (Method::GET, "/api/matches/-1/state"),
        (Method::GET, "/api/matches/99999999999999999999/events"),
        (Method::POST, "/api/matches/x/forfeit"),
        (Method::POST, "/api/challenges/1.5/accept"),
    ] {
        let r = server.call(method.clone(), path).auth(&alice).send().await;
        assert_eq!(r.status.as_u16(), 400, "{method} {path}: {}", r.text);
        r.expect_error(400, 200, "bad_request");
    }
}
