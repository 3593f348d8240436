//! The MCP server at `/mcp`: the API's login is required, the tools are listed, and a
//! refused move comes back as a tool error with the stable code, changing nothing. Spoken
//! as an MCP client speaks it over streamable HTTP (a session opened with `initialize`).

use serde_json::{Value, json};

use crate::common::{Resp, Server, User};

const ACCEPT: &str = "application/json, text/event-stream";

// Every request names its host, as an HTTP/1.1 client's does (rmcp reads it).

/// The JSON-RPC messages of an answer: its JSON body, or the `data:` lines of its SSE body.
fn messages(r: &Resp) -> Vec<Value> {
    if r.body.is_object() {
        return vec![r.body.clone()];
    }
    r.text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// An MCP session of one user.
struct Session<'a> {
    server: &'a Server,
    user: &'a User,
    id: String,
    next: u64,
}

impl<'a> Session<'a> {
    /// Opens a session with `initialize` (protocol 2025-11-25) and `initialized`.
    async fn open(server: &'a Server, user: &'a User) -> Session<'a> {
        let r = server
            .post("/mcp")
            .auth(user)
            .header("accept", ACCEPT)
            .header("host", crate::common::DOMAIN)
            .header("host", crate::common::DOMAIN)
            .json(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "triad-test", "version": "1"}
                }
            }))
            .send()
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        let id = r.headers["mcp-session-id"].to_str().unwrap().to_owned();
        let init = &messages(&r)[0];
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        assert_eq!(init["result"]["serverInfo"]["name"], "triad", "{init}");
        let r = server
            .post("/mcp")
            .auth(user)
            .header("accept", ACCEPT)
            .header("host", crate::common::DOMAIN)
            .header("host", crate::common::DOMAIN)
            .header("mcp-session-id", &id)
            .header("mcp-protocol-version", "2025-11-25")
            .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await;
        assert_eq!(r.status, 202, "{}", r.text);
        Session {
            server,
            user,
            id,
            next: 1,
        }
    }

    /// A request in the session; the JSON-RPC response.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let r = self
            .server
            .post("/mcp")
            .auth(self.user)
            .header("accept", ACCEPT)
            .header("host", crate::common::DOMAIN)
            .header("host", crate::common::DOMAIN)
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-11-25")
            .json(&json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}))
            .send()
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        messages(&r)
            .into_iter()
            .find(|m| m["id"] == self.next)
            .unwrap_or_else(|| panic!("no response to {method}: {}", r.text))
    }

    /// Calls a tool; its result.
    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        response["result"].clone()
    }
}

#[tokio::test]
async fn mcp_needs_the_apis_login() {
    let server = Server::start().await;
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}
    });
    let r = server
        .post("/mcp")
        .header("accept", ACCEPT)
        .header("host", crate::common::DOMAIN)
        .json(&initialize)
        .send()
        .await;
    r.expect_error(401, 201, "unauthorized");
    assert_eq!(r.headers["www-authenticate"], "Bearer");
    let r = server
        .post("/mcp")
        .token("not-a-token")
        .header("accept", ACCEPT)
        .header("host", crate::common::DOMAIN)
        .json(&initialize)
        .send()
        .await;
    r.expect_error(401, 202, "invalid_token");
    assert!(
        r.headers.get("mcp-session-id").is_none(),
        "no session without a login"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_session_belongs_to_its_login() {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    let session = Session::open(&server, &alice).await;
    let r = server
        .post("/mcp")
        .auth(&bob)
        .header("accept", ACCEPT)
        .header("host", crate::common::DOMAIN)
        .header("mcp-session-id", &session.id)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await;
    r.expect_error(404, 210, "not_found");
    server.stop().await;
}

#[tokio::test]
async fn the_tools_are_listed_and_a_refused_move_changes_nothing() {
    let server = Server::start().await;
    let alice = server.user().await;
    let mut session = Session::open(&server, &alice).await;

    let tools = session.request("tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in [
        "play_computer",
        "challenge",
        "list_challenges",
        "accept_challenge",
        "decline_challenge",
        "join_queue",
        "leave_queue",
        "get_match",
        "legal_moves",
        "make_move",
        "resign",
        "claim_timeout",
        "rematch",
        "wait_for_turn",
        "analyze_position",
        "my_balance",
        "my_stats",
        "list_tournaments",
        "join_tournament",
        "leave_tournament",
        "follow_tournament",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for tool in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(
            tool["description"].as_str().is_some_and(|d| d.len() > 20),
            "{tool}"
        );
    }

    // A game against the computer: X in the centre, then the computer answers.
    let started = session
        .call("play_computer", json!({"game": "tic-tac-toe"}))
        .await;
    assert_eq!(started["isError"], false, "{started}");
    let id = started["structuredContent"]["match"]["id"]
        .as_u64()
        .unwrap();
    let text = started["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(" 0 | 1 | 2"), "the board is drawn: {text}");
    let moved = session
        .call("make_move", json!({"match_id": id, "cell": 4}))
        .await;
    assert_eq!(moved["isError"], false, "{moved}");
    let before = server.get(&format!("/api/matches/{id}")).send().await;
    let before = before.expect(200).clone();
    assert_eq!(before["seq"], 2, "the computer answered: {before}");

    // The centre is taken: refused with the rules' stable code, and nothing changes.
    let refused = session
        .call("make_move", json!({"match_id": id, "cell": 4}))
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
    let error = &refused["structuredContent"];
    let rest = server
        .post(&format!("/api/matches/{id}/moves"))
        .auth(&alice)
        .json(&json!({"seq": 3, "cell": 4, "mark": "X"}))
        .send()
        .await;
    assert!(rest.status.is_client_error(), "{}", rest.text);
    assert_eq!(
        error["code"], rest.body["code"],
        "the REST API's code: {error}"
    );
    assert_eq!(error["error"], rest.body["error"], "{error}");
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(rest.body["error"].as_str().unwrap()),
        "{refused}"
    );
    let after = server.get(&format!("/api/matches/{id}")).send().await;
    assert_eq!(after.expect(200), &before, "a refused move changes nothing");

    // Legal moves are the empty cells, and a resource reads the same match.
    let legal = session.call("legal_moves", json!({"match_id": id})).await;
    assert_eq!(
        legal["structuredContent"]["moves"]
            .as_array()
            .unwrap()
            .len(),
        7
    );
    let resource = session
        .request(
            "resources/read",
            json!({"uri": format!("triad://matches/{id}")}),
        )
        .await;
    let contents = &resource["result"]["contents"][0];
    let view: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
    assert_eq!(view, before);
    server.stop().await;
}

#[tokio::test]
async fn sessions_are_bounded_per_client_and_closing_one_frees_it() {
    let server = Server::start_with(|args| args.max_mcp_sessions_per_ip = Some(1)).await;
    let alice = server.user().await;
    let first = Session::open(&server, &alice).await;
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}
    });
    let r = server
        .post("/mcp")
        .auth(&alice)
        .header("accept", ACCEPT)
        .header("host", crate::common::DOMAIN)
        .json(&initialize)
        .send()
        .await;
    r.expect_error(429, 219, "too_many_open");
    assert!(r.retry_after().is_some());
    // Closing the session (DELETE) gives its share back.
    let r = server
        .delete("/mcp")
        .auth(&alice)
        .header("host", crate::common::DOMAIN)
        .header("mcp-session-id", &first.id)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    let mut second = Session::open(&server, &alice).await;
    let tools = second.request("tools/list", json!({})).await;
    assert!(tools["result"]["tools"].is_array());
    server.stop().await;
}
