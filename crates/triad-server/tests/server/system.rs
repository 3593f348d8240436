//! The OpenAPI document covers every route; health, metrics and the dev clock.

use std::collections::BTreeSet;

use axum::http::Method;
use serde_json::{Value, json};

use crate::common::Server;

/// Every route the server serves, written out by hand. Adding a route means adding it
/// here too, deliberately.
const SERVED: &[(&str, &str)] = &[
    ("POST", "/api/auth/challenge"),
    ("POST", "/api/auth/login"),
    ("POST", "/api/auth/logout"),
    ("GET", "/api/me"),
    ("PUT", "/api/me/name"),
    ("POST", "/api/challenges"),
    ("GET", "/api/challenges"),
    ("POST", "/api/challenges/{id}/accept"),
    ("POST", "/api/challenges/{id}/decline"),
    ("POST", "/api/challenges/{id}/withdraw"),
    ("POST", "/api/queue"),
    ("DELETE", "/api/queue"),
    ("POST", "/api/computer"),
    ("GET", "/api/matches"),
    ("GET", "/api/matches/{id}"),
    ("GET", "/api/matches/{id}/state"),
    ("POST", "/api/matches/{id}/moves"),
    ("POST", "/api/matches/{id}/forfeit"),
    ("POST", "/api/matches/{id}/claim-timeout"),
    ("POST", "/api/matches/{id}/rematch"),
    ("GET", "/api/matches/{id}/events"),
    ("GET", "/api/matches/{id}/notation"),
    ("GET", "/api/matches/{id}/transcript"),
    ("GET", "/api/players/{address}"),
    ("GET", "/api/leaderboard"),
    ("GET", "/api/analysis/{game}/{board}"),
    ("GET", "/api/matches/{id}/review"),
    ("GET", "/api/review/{game}"),
    ("POST", "/api/review"),
    ("GET", "/api/tournaments"),
    ("POST", "/api/tournaments"),
    ("GET", "/api/tournaments/{id}"),
    ("POST", "/api/tournaments/{id}/join"),
    ("POST", "/api/tournaments/{id}/leave"),
    ("POST", "/api/tournaments/{id}/pause"),
    ("POST", "/api/tournaments/{id}/cancel"),
    ("GET", "/api/boards/{game}/{image}"),
    ("GET", "/api/puzzles/daily"),
    ("GET", "/api/puzzles"),
    ("GET", "/api/puzzles/{id}"),
    ("POST", "/api/puzzles/{id}/attempts"),
    ("GET", "/api/ledger"),
    ("POST", "/api/ledger/deposit"),
    ("POST", "/api/ledger/withdraw"),
    ("GET", "/api/ledger/reserve"),
    ("POST", "/api/ledger/collect"),
    ("GET", "/api/ws"),
    ("GET", "/healthz"),
    ("GET", "/metrics"),
    ("GET", "/api/openapi.json"),
    ("POST", "/api/dev/clock"),
    ("POST", "/api/apps/messages"),
    ("GET", "/api/apps/inbox"),
    ("GET", "/api/apps/{app_id}/manifest"),
    ("GET", "/.well-known/agent-card.json"),
    ("POST", "/a2a"),
    ("GET", "/.well-known/triad-transcript-key"),
];

type Routes = BTreeSet<(String, String)>;

fn served() -> Routes {
    SERVED
        .iter()
        .map(|&(m, p)| (m.to_owned(), p.to_owned()))
        .collect()
}

const HTTP_METHODS: [&str; 9] = [
    "get", "head", "delete", "options", "patch", "post", "put", "trace", "connect",
];

/// The operations of an OpenAPI document, as (METHOD, path).
fn documented(doc: &Value) -> Routes {
    let mut out = Routes::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in HTTP_METHODS {
            if item.get(method).is_some() {
                out.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    out
}

/// The routes a router really serves, read from its `Debug` output (axum 0.8 prints each
/// route's path and, per method, `None` or the handler). Axum has no other way to list
/// them; if a new axum prints differently, this panics rather than pass.
fn routed(router: &axum::Router) -> Routes {
    let text = format!("{router:?}");
    // Only the main path router: the fallback router comes after it.
    let main = text
        .split("fallback_router:")
        .next()
        .expect("a path router");
    let (routes, node) = main
        .split_once("node: Node")
        .expect("axum's Router Debug shows `node: Node { paths: … }`");
    let mut paths = std::collections::BTreeMap::new();
    for chunk in node.split("RouteId(").skip(1) {
        let (id, rest) = chunk.split_once(')').expect("RouteId(n)");
        let path = rest
            .split('"')
            .nth(1)
            .expect("RouteId(n): \"path\"")
            .to_owned();
        paths.insert(id.to_owned(), path);
    }
    let mut out = Routes::new();
    for chunk in routes.split("RouteId(").skip(1) {
        let (id, rest) = chunk.split_once(')').expect("RouteId(n)");
        let path = paths
            .get(id)
            .unwrap_or_else(|| panic!("no path for route {id}"));
        if !rest.trim_start_matches(": ").starts_with("MethodRouter(") {
            // A service mounted with route_service or nest_service takes every method.
            out.insert(("ANY".to_owned(), path.clone()));
            continue;
        }
        for method in HTTP_METHODS {
            let field = format!(" {method}: ");
            let value = rest
                .split_once(&field)
                .unwrap_or_else(|| panic!("no `{method}:` in the method router of {path}"))
                .1;
            if !value.starts_with("None") {
                out.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    assert!(
        out.len() >= 10,
        "could not read the routes from the router's Debug output:\n{text}"
    );
    out
}

fn openapi_ok(r: &crate::common::Resp) -> &Value {
    let doc = r.expect(200);
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "openapi: {}",
        doc["openapi"]
    );
    doc
}

#[tokio::test]
async fn the_openapi_document_is_3_1_and_documents_every_served_route() {
    let server = Server::start().await;
    let r = server.get("/api/openapi.json").send().await;
    let doc = openapi_ok(&r);
    assert_eq!(documented(doc), served());
    assert!(
        doc["components"]["securitySchemes"]["bearer"].is_object(),
        "the bearer scheme is declared"
    );
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
}

/// Every command (an operation answering a `CommandResult`) documents `Prefer:
/// return=minimal`: the header, the answer as `CommandResult` or `CommandAck`, and
/// `Preference-Applied`; nothing else does.
#[tokio::test]
async fn every_command_documents_prefer_return_minimal() {
    let server = Server::start().await;
    let doc = openapi_ok(&server.get("/api/openapi.json").send().await).clone();
    let ack = &doc["components"]["schemas"]["CommandAck"];
    let mut required: Vec<&str> = ack["required"]
        .as_array()
        .unwrap_or_else(|| panic!("CommandAck: {ack}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    required.sort_unstable();
    // `match_id` is always there (null for a command without a match), as `match` is in
    // CommandResult; `event_seqs`, required, tells the two forms apart.
    assert_eq!(required, ["duplicate", "event_seqs"]);
    assert!(ack["properties"]["match_id"].is_object(), "{ack}");
    let either = json!({"oneOf": [
        {"$ref": "#/components/schemas/CommandResult"},
        {"$ref": "#/components/schemas/CommandAck"},
    ]});
    let mut commands = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let text = op.to_string();
            let prefer = op["parameters"].as_array().is_some_and(|ps| {
                ps.iter()
                    .any(|p| p["name"] == "Prefer" && p["in"] == "header")
            });
            // A command answers 201, or 200 when it creates nothing (DELETE /api/queue).
            let success = ["201", "200"]
                .into_iter()
                .find(|s| op["responses"][s]["content"]["application/json"]["schema"] == either);
            if let Some(status) = success {
                assert!(prefer, "{method} {path}: no Prefer parameter");
                assert!(
                    op["responses"][status]["headers"]["Preference-Applied"].is_object(),
                    "{method} {path}"
                );
                commands.insert(format!("{method} {path}"));
            } else {
                assert!(
                    !prefer && !text.contains("CommandResult"),
                    "{method} {path}: {op}"
                );
            }
        }
    }
    for command in [
        "post /api/matches/{id}/moves",
        "post /api/challenges",
        "post /api/ledger/deposit",
    ] {
        assert!(commands.contains(command), "{command} in {commands:?}");
    }
}

/// The check that catches an undocumented route. The router is read independently of the
/// document (from its `Debug` output) and must serve exactly the documented operations and
/// the hand-written list: a route added with `.route(…)` in `api::router` or `api::routes`,
/// or a handler added to `routes!` with another method, changes the router's set and fails
/// here until it is documented and listed. (Probing documented paths alone could never see
/// a route the document does not mention.)
#[tokio::test]
async fn the_router_serves_exactly_the_documented_routes() {
    let server = Server::start().await;
    let doc = openapi_ok(&server.get("/api/openapi.json").send().await).clone();
    let app = triad_server::api::router(server.state().clone());
    let mut routed = routed(&app);
    // The MCP server (rmcp's service, every method) speaks the Model Context Protocol, not
    // REST: it is described by that protocol, not by the OpenAPI document (`mcp.rs`).
    assert!(
        routed.remove(&("ANY".to_owned(), "/mcp".to_owned())),
        "/mcp is served"
    );
    // The review pages with their link previews (a match's, any moves') are pages of the
    // web app, not API operations.
    for page in ["/review/{id}", "/review"] {
        assert!(
            routed.remove(&("GET".to_owned(), page.to_owned())),
            "{page} is served"
        );
    }
    let in_doc = documented(&doc);
    assert_eq!(
        routed,
        in_doc,
        "served but not documented: {:?}; documented but not served: {:?}",
        routed.difference(&in_doc).collect::<Vec<_>>(),
        in_doc.difference(&routed).collect::<Vec<_>>(),
    );
    let listed = served();
    assert_eq!(
        routed,
        listed,
        "served but not in SERVED: {:?}; in SERVED but not served: {:?}",
        routed.difference(&listed).collect::<Vec<_>>(),
        listed.difference(&routed).collect::<Vec<_>>(),
    );
    // `api::routes` is what `app` is built from; its document is the one served.
    let (_, from_routes) = triad_server::api::routes();
    let from_routes = serde_json::to_value(&from_routes).unwrap();
    assert_eq!(documented(&from_routes), in_doc);
}

fn concrete(path: &str) -> String {
    path.replace("{id}", "1")
        .replace("{address}", &format!("0x{}", "ab".repeat(32)))
        .replace("{game}", "sos")
        .replace("{board}", "---------")
        .replace("{app_id}", "tic-tac-toe")
}

/// The other direction: every documented operation reaches a handler (never the
/// not-found fallback nor a 405), and it needs a token exactly when the document says so.
#[tokio::test]
async fn every_documented_operation_is_routed_and_its_security_is_accurate() {
    let server = Server::start().await;
    let doc = openapi_ok(&server.get("/api/openapi.json").send().await).clone();
    for (method, path) in documented(&doc) {
        let operation = &doc["paths"][&path][method.to_lowercase()];
        // An empty requirement (`{}`) among them makes the token optional: the operation
        // works without one (the puzzles' attempts, rated only for a login).
        let secured = operation["security"].as_array().is_some_and(|s| {
            s.iter().any(|r| r.get("bearer").is_some())
                && !s
                    .iter()
                    .any(|r| r.as_object().is_some_and(|o| o.is_empty()))
        });
        // A body every JSON endpoint refuses but the JSON-RPC endpoint reads far enough
        // to ask for a login; endpoints that need a login ask before reading the body.
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "message/send",
            "params": { "message": { "role": "user", "parts": [] } },
        });
        let r = server
            .call(
                Method::from_bytes(method.as_bytes()).unwrap(),
                &concrete(&path),
            )
            .json(&body)
            .send()
            .await;
        let label = format!("{method} {path}: {} {}", r.status, r.text);
        assert_ne!(r.status.as_u16(), 405, "{label}");
        assert_ne!(r.body["code"], 210, "{label}");
        // JSON-RPC wraps the API error in its own error's `data`.
        let code = if r.body["jsonrpc"] == "2.0" {
            &r.body["error"]["data"]["code"]
        } else {
            &r.body["code"]
        };
        let unauthorized = r.status.as_u16() == 401 && *code == 201;
        assert_eq!(unauthorized, secured, "security of {label}");
        assert!(
            operation["responses"]
                .as_object()
                .is_some_and(|r| !r.is_empty())
        );
        assert!(operation["tags"].as_array().is_some_and(|t| !t.is_empty()));
    }
}

#[tokio::test]
async fn healthz_reports_the_database_events_live_matches_and_sockets() {
    let server = Server::start().await;
    let r = server.get("/healthz").send().await;
    assert_eq!(
        r.expect(200),
        &json!({ "status": "ok", "database": true, "events": 0, "live_matches": 0, "websockets": 0 })
    );
    let alice = server.user().await;
    server.deposit(&alice, 10).await;
    server
        .post("/api/computer")
        .auth(&alice)
        .json(&json!({ "game": "sos" }))
        .send()
        .await
        .expect(201);
    let r = server.get("/healthz").send().await;
    assert_eq!(
        r.expect(200),
        &json!({ "status": "ok", "database": true, "events": 2, "live_matches": 1, "websockets": 0 })
    );
}

#[tokio::test]
async fn metrics_show_requests_latencies_live_matches_sockets_and_commits() {
    let server = Server::start().await;
    let alice = server.user().await;
    server.deposit(&alice, 10).await;
    let r = server
        .post("/api/computer")
        .auth(&alice)
        .json(&json!({ "game": "sos" }))
        .send()
        .await;
    let id = r.expect(201)["match"]["id"].as_u64().unwrap();
    server.match_(id).await;
    server.get("/nowhere").send().await;

    let r = server.get("/metrics").send().await;
    assert_eq!(r.status.as_u16(), 200);
    let content_type = r.headers["content-type"].to_str().unwrap();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    let text = &r.text;
    let line = |needles: &[&str]| {
        text.lines()
            .any(|l| !l.starts_with('#') && needles.iter().all(|n| l.contains(n)))
    };
    assert!(
        line(&[
            "triad_http_requests_total{",
            r#"route="/api/auth/login""#,
            r#"method="POST""#,
            r#"status="200""#
        ]),
        "{text}"
    );
    assert!(
        line(&[
            "triad_http_requests_total{",
            r#"route="/api/matches/{id}""#,
            r#"method="GET""#
        ]),
        "{text}"
    );
    assert!(
        line(&[
            "triad_http_requests_total{",
            r#"route="unmatched""#,
            r#"status="404""#
        ]),
        "{text}"
    );
    assert!(
        line(&["triad_http_request_seconds", r#"route="/api/computer""#]),
        "{text}"
    );
    for name in [
        "triad_live_matches",
        "triad_open_websockets",
        "triad_commit_seconds",
        "triad_commit_batch_commands",
        "triad_commit_batch_events",
    ] {
        assert!(line(&[name]), "{name} missing from:\n{text}");
    }
    // What an operator watches for a cluster's ceiling: each batch's hold of the cluster
    // lock, the wait for it, and what it applied of the other nodes' events; with help.
    // (That a node on SQLite shows none of them is checked on the binary, in its own
    // process: the recorder here is the process's, and the cluster tests share it.)
    let cluster = [
        "triad_cluster_lock_wait_seconds",
        "triad_cluster_lock_hold_seconds",
        "triad_cluster_followed_events",
    ];
    for name in cluster.into_iter().filter(|_| crate::common::on_postgres()) {
        assert!(line(&[name]), "{name} missing from:\n{text}");
    }
    for name in ["triad_commit_batch_commands", "triad_commit_batch_events"]
        .into_iter()
        .chain(cluster.into_iter().filter(|_| crate::common::on_postgres()))
    {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("# HELP {name} "))),
            "no help for {name} in:\n{text}"
        );
    }
}

#[tokio::test]
async fn the_dev_clock_is_not_found_unless_enabled() {
    let server = Server::start_with(|a| a.dev_clock = Some(false)).await;
    server
        .post("/api/dev/clock")
        .json(&json!({ "advance_ms": 1_000 }))
        .send()
        .await
        .expect_error(404, 210, "not_found");
}
