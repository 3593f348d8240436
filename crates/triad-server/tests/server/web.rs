//! The web app's files and pages (served by the router's fallback) and the public
//! analysis endpoint the app's computer uses.

use axum::http::Method;

use crate::common::Server;

#[tokio::test]
async fn the_app_is_served_at_its_pages_with_a_strict_policy() {
    let server = Server::start().await;
    for path in [
        "/",
        "/play",
        "/online",
        "/leaderboard",
        "/wallet",
        "/puzzles",
        "/tournaments",
        "/tournament/7",
        "/match/7",
        "/player/0xab",
        "/?player=human",
    ] {
        let r = server.get(path).send().await;
        assert_eq!(r.status.as_u16(), 200, "{path}");
        assert_eq!(
            r.headers["content-type"], "text/html; charset=utf-8",
            "{path}"
        );
        assert!(
            r.text
                .contains(r#"<script type="module" src="/js/main.js">"#),
            "{path}"
        );
        assert_eq!(r.headers["cache-control"], "no-cache");
        assert_eq!(r.headers["x-content-type-options"], "nosniff");
        let csp = r.headers["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
            "{csp}"
        );
        assert!(!csp.contains("unsafe"), "{csp}");
    }
}

#[tokio::test]
async fn files_have_their_types_and_revalidate_with_etags() {
    let server = Server::start().await;
    for (path, kind) in [
        ("/js/main.js", "javascript; charset=utf-8"),
        ("/js/views/play.js", "javascript; charset=utf-8"),
        ("/app.css", "text/css; charset=utf-8"),
        ("/favicon.svg", "image/svg+xml; charset=utf-8"),
        ("/fonts/inter-latin-wght.woff2", "font/woff2"),
    ] {
        let r = server.get(path).send().await;
        assert_eq!(r.status.as_u16(), 200, "{path}");
        let content_type = r.headers["content-type"].to_str().unwrap();
        assert!(content_type.ends_with(kind), "{path}: {content_type}");
        assert_eq!(r.headers["cache-control"], "no-cache");
        let etag = r.headers["etag"].to_str().unwrap().to_owned();
        assert!(etag.starts_with('"') && etag.len() == 34, "{etag}");
        // The same version: 304 with no body.
        let again = server.get(path).header("if-none-match", &etag).send().await;
        assert_eq!(again.status.as_u16(), 304, "{path}");
        assert!(again.text.is_empty());
        assert_eq!(again.headers["etag"].to_str().unwrap(), etag);
        // Another version: the file.
        let other = server
            .get(path)
            .header("if-none-match", "\"0000\"")
            .send()
            .await;
        assert_eq!(other.status.as_u16(), 200);
    }
    let head = server.call(Method::HEAD, "/app.css").send().await;
    assert_eq!(head.status.as_u16(), 200);
    assert!(head.text.is_empty());
}

#[tokio::test]
async fn anything_else_is_the_apis_not_found_or_method_not_allowed() {
    let server = Server::start().await;
    for path in [
        "/nowhere",
        "/js/missing.js",
        "/../Cargo.toml",
        "/js/../../Cargo.toml",
        "/.hidden",
        "/match/7/extra",
        "/api",
        "/api/nothing",
        "/api/index.html",
    ] {
        server
            .get(path)
            .send()
            .await
            .expect_error(404, 210, "not_found");
    }
    for (method, path) in [
        (Method::POST, "/"),
        (Method::DELETE, "/app.css"),
        (Method::PUT, "/online"),
    ] {
        let r = server.call(method, path).send().await;
        r.expect_error(405, 217, "method_not_allowed");
        assert_eq!(r.headers["allow"], "GET, HEAD");
    }
}

#[tokio::test]
async fn a_browser_asking_for_a_missing_page_gets_the_apps_not_found_page() {
    let server = Server::start().await;
    let accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    for path in ["/nonexistent", "/player/", "/match/7/extra", "/js/missing"] {
        let r = server.get(path).header("accept", accept).send().await;
        assert_eq!(r.status.as_u16(), 404, "{path}");
        assert_eq!(
            r.headers["content-type"], "text/html; charset=utf-8",
            "{path}"
        );
        assert!(
            r.text
                .contains(r#"<script type="module" src="/js/main.js">"#),
            "{path}"
        );
        assert!(r.headers.contains_key("content-security-policy"), "{path}");
    }
    let head = server
        .call(Method::HEAD, "/nonexistent")
        .header("accept", "text/html")
        .send()
        .await;
    assert_eq!(head.status.as_u16(), 404);
    assert!(head.text.is_empty());
    // The API, other methods and other kinds of request keep their JSON answers.
    for path in ["/api/nothing", "/api"] {
        server
            .get(path)
            .header("accept", accept)
            .send()
            .await
            .expect_error(404, 210, "not_found");
    }
    server
        .get("/nonexistent")
        .header("accept", "application/json")
        .send()
        .await
        .expect_error(404, 210, "not_found");
    server
        .get("/js/missing.js")
        .header("accept", "*/*")
        .send()
        .await
        .expect_error(404, 210, "not_found");
    server
        .call(Method::POST, "/nonexistent")
        .header("accept", accept)
        .send()
        .await
        .expect_error(404, 210, "not_found");
}

#[tokio::test]
async fn the_analysis_gives_every_moves_value_and_the_best_ones() {
    let server = Server::start().await;
    let r = server
        .get("/api/analysis/tic-tac-toe/XX--O----")
        .send()
        .await;
    let body = r.expect(200);
    assert_eq!(body["game"], "tic-tac-toe");
    assert_eq!(body["board"], "XX--O----");
    assert_eq!(body["turn"], "second");
    assert_eq!(
        body["value"],
        serde_json::json!({"verdict": "draw", "plies": 6})
    );
    assert_eq!(body["outcome"], serde_json::Value::Null);
    let moves = body["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 6, "one per empty cell");
    assert_eq!(
        moves[0],
        serde_json::json!({"cell": 2, "mark": "O", "verdict": "draw", "plies": 6})
    );
    assert!(
        moves[1..].iter().all(|m| m["verdict"] == "loss"),
        "every other move loses: {moves:?}"
    );
    assert_eq!(body["best"], serde_json::json!([{"cell": 2, "mark": "O"}]));

    // An ended game: who won, where, and no moves.
    let won = server.get("/api/analysis/sos/SOS-O----").send().await;
    let body = won.expect(200);
    assert_eq!(body["turn"], serde_json::Value::Null);
    assert_eq!(
        body["value"],
        serde_json::json!({"verdict": "loss", "plies": 0})
    );
    assert_eq!(
        body["outcome"],
        serde_json::json!({"winner": "second", "cells": [0, 1, 2]})
    );
    assert_eq!(body["moves"], serde_json::json!([]));
    assert_eq!(body["best"], serde_json::json!([]));
}

#[tokio::test]
async fn impossible_positions_are_refused_with_the_rules_reason() {
    let server = Server::start().await;
    for (path, says) in [
        (
            "/api/analysis/tic-tac-toe/XXX------",
            "X must equal O or be one more",
        ),
        ("/api/analysis/tic-tac-toe/XXXOOOX--", "line of three"),
        ("/api/analysis/sos/X--------", "not a mark of this game"),
        ("/api/analysis/sos/--", "a board has 9 cells"),
        (
            "/api/analysis/go/---------",
            "unknown game; use tic-tac-toe or sos",
        ),
    ] {
        let r = server.get(path).send().await;
        let body = r.expect_error(400, 215, "invalid_parameter");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains(says), "{path}: {message}");
    }
}
