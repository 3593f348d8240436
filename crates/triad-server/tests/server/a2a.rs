//! A2A 1.0 on `/a2a` (0.3's `message/send` is tested in `apps.rs`): the agent card, each
//! 1.0 method, the SSE streams, JSON-RPC's rules (notifications, batches, an oversized
//! body), the bytes the official SDKs send (`testdata/a2a-sdk-*-requests.json`), a refused
//! move, and the per-IP bound on streams.

use axum::{
    body::Body,
    http::{Request, header},
};
use futures_util::StreamExt as _;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use tower::ServiceExt as _;
use triad_protocol::{App, Ending, Game, Message, Step};

use crate::common::{Resp, Server, User};

/// Requests the official Python client (a2a-sdk 1.3.0) sent, recorded by
/// `testdata/a2a-sdk-capture.py`.
const PYTHON_SDK: &str = include_str!("../../../../testdata/a2a-sdk-python-requests.json");
/// Requests the official JavaScript client (@a2a-js/sdk 1.3.0) sent, recorded by
/// `testdata/a2a-sdk-capture.mjs`.
const JS_SDK: &str = include_str!("../../../../testdata/a2a-sdk-js-requests.json");

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `SendMessage`'s params: a 1.0 user message with a text part and a data part.
fn message(data: Value, task: Option<&str>, level: Option<&str>) -> Value {
    let mut message = json!({
        "messageId": "m-1", "role": "ROLE_USER",
        "parts": [{"text": "my move"}, {"data": data}],
    });
    if let Some(t) = task {
        message["taskId"] = json!(t);
    }
    if let Some(l) = level {
        message["metadata"] = json!({"level": l});
    }
    json!({"message": message, "configuration": {}})
}

async fn rpc(server: &Server, user: &User, body: &Value) -> Resp {
    server
        .post("/a2a")
        .auth(user)
        .header("a2a-version", "1.0")
        .json(body)
        .send()
        .await
}

/// The app actions of a 1.0 message's parts.
fn actions(app: App, message: &Value) -> Vec<Message> {
    message["parts"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|p| {
            assert_eq!(p["mediaType"], "application/json", "{p}");
            let d = &p["data"];
            Message::decode(app, d["action"].as_str().unwrap(), &d["payload"]).unwrap()
        })
        .collect()
}

/// An SSE answer being read.
struct Events {
    content_type: String,
    stream: axum::body::BodyDataStream,
    text: String,
}

impl Events {
    /// Sends `body` and starts reading its answer.
    async fn open(server: &Server, user: &User, body: &Value) -> Events {
        let request = Request::post("/a2a")
            .header(header::AUTHORIZATION, format!("Bearer {}", user.token))
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "text/event-stream")
            .body(Body::from(body.to_string()))
            .unwrap();
        let response = server.app.clone().oneshot(request).await.unwrap();
        let content_type = response.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .to_owned();
        Events {
            content_type,
            stream: response.into_body().into_data_stream(),
            text: String::new(),
        }
    }

    /// The next event's data, parsed; `None` once the stream has ended.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                let data: Vec<&str> = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if !data.is_empty() {
                    return Some(serde_json::from_str(&data.join("\n")).unwrap());
                }
                continue;
            }
            let chunk = self.stream.next().await?.unwrap();
            self.text.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}

/// The first `n` events of an SSE answer (fewer if it ends), and its content type.
async fn events(server: &Server, user: &User, body: &Value, n: usize) -> (String, Vec<Value>) {
    let mut events = Events::open(server, user, body).await;
    let mut out = Vec::new();
    while out.len() < n {
        match events.next().await {
            Some(e) => out.push(e),
            None => break,
        }
    }
    (events.content_type, out)
}

/// Plays a whole game of tic-tac-toe as O against the computer over `SendMessage`, with
/// the protocol's own state machine fed the computer's answers. The task id and the last
/// task.
async fn play_a_game(server: &Server, alice: &User) -> (String, Value) {
    let app = App::TicTacToe;
    let propose = json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"O"}});
    let r = rpc(
        server,
        alice,
        &request(1, "SendMessage", message(propose, None, None)),
    )
    .await;
    let mut task = r.expect(200)["result"]["task"].clone();
    let id = task["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("triad-task-"), "{task}");
    assert!(
        task["contextId"]
            .as_str()
            .unwrap()
            .starts_with("triad-match-")
    );
    assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
    assert_eq!(task["status"]["message"]["taskId"], id.as_str());
    let (mut game, _) = Game::propose(app, triad_rules::Player::Second, None);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    loop {
        for m in actions(app, &task["status"]["message"]) {
            let steps = game.receive(&m).unwrap();
            assert!(!matches!(steps[0], Step::Conflict { .. }), "{steps:?}");
        }
        if game.ending().is_some() {
            break;
        }
        assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        let legal = game.position().legal_moves();
        let mv = legal[rng.random_range(0..legal.len())];
        let sent = game.play(mv.cell.index(), mv.mark).unwrap();
        let r = rpc(
            server,
            alice,
            &request(
                2,
                "SendMessage",
                message(sent[0].data(app), Some(&id), None),
            ),
        )
        .await;
        task = r.expect(200)["result"]["task"].clone();
        assert_eq!(task["id"], id.as_str());
    }
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_ne!(
        game.ending(),
        Some(&Ending::Win {
            winner: triad_rules::Player::Second
        })
    );
    (id, task)
}

#[tokio::test]
async fn the_card_offers_1_0_and_0_3_from_the_public_url() {
    let server = Server::start_with(|a| a.public_url = Some("https://triad.test".to_owned())).await;
    let r = server
        .get("/.well-known/agent-card.json")
        .header("host", "evil.example")
        .header("x-forwarded-host", "evil.example")
        .header("x-forwarded-proto", "http")
        .send()
        .await;
    let card = r.expect(200);
    assert!(!r.text.contains("evil"), "{}", r.text);
    assert_eq!(
        card["supportedInterfaces"],
        json!([
            {"url": "https://triad.test/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "https://triad.test/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ])
    );
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "bearer"
    );
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"bearer": {"list": []}}}])
    );
    for skill in card["skills"].as_array().unwrap() {
        let tags = skill["tags"].as_array().unwrap();
        assert!(tags.contains(&json!("app-actions")) && !tags.contains(&json!("seed-4")));
    }
    // What 0.3 clients read.
    assert_eq!(card["protocolVersion"], "0.3.0");
    assert_eq!(card["url"], "https://triad.test/a2a");
    assert_eq!(card["securitySchemes"]["bearer"]["type"], "http");
}

#[tokio::test]
async fn send_message_plays_a_whole_game_and_get_task_reads_it() {
    let server = Server::start().await;
    let alice = server.user().await;
    let (id, last) = play_a_game(&server, &alice).await;
    let r = rpc(&server, &alice, &request(3, "GetTask", json!({"id": id}))).await;
    let task = &r.expect(200)["result"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(task["artifacts"], last["artifacts"]);
    // The record: every move of the game, then the result.
    let record = actions(App::TicTacToe, &task["artifacts"][0]);
    let match_id: u64 = id.trim_start_matches("triad-task-").parse().unwrap();
    let view = server.match_(match_id).await;
    assert_eq!(
        record.len(),
        view["moves"].as_array().unwrap().len() + 1,
        "{view}"
    );
    assert!(matches!(record.last(), Some(Message::Result(_))));
    // The game is over: it cannot be canceled or followed.
    let r = rpc(
        &server,
        &alice,
        &request(4, "CancelTask", json!({"id": id})),
    )
    .await;
    assert_eq!(r.expect(200)["error"]["code"], -32002);
    let r = rpc(
        &server,
        &alice,
        &request(5, "SubscribeToTask", json!({"id": id})),
    )
    .await;
    assert_eq!(r.expect(200)["error"]["code"], -32004);
    // Only its player may read a task; an id that names none is not found.
    let bob = server.user().await;
    for (who, task_id) in [
        (&bob, id.as_str()),
        (&alice, "triad-task-999"),
        (&alice, "7"),
    ] {
        let r = rpc(&server, who, &request(6, "GetTask", json!({"id": task_id}))).await;
        assert_eq!(r.expect(200)["error"]["code"], -32001, "{task_id}");
    }
}

#[tokio::test]
async fn send_streaming_message_streams_the_task_then_its_status_and_so_does_0_3() {
    let server = Server::start().await;
    let alice = server.user().await;
    let propose = json!({"appId":"sos","action":"propose","payload":{"seq":0,"role":"second"}});
    let body = request(8, "SendStreamingMessage", message(propose, None, None));
    let (content_type, got) = events(&server, &alice, &body, usize::MAX).await;
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|e| e["id"] == 8 && e["jsonrpc"] == "2.0"));
    let task = &got[0]["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(task["history"][0]["role"], "ROLE_USER");
    let update = &got[1]["result"]["statusUpdate"];
    assert_eq!(update["taskId"], task["id"]);
    assert_eq!(update["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    // The computer accepts as first and opens.
    let answer = actions(App::Sos, &update["status"]["message"]);
    assert!(
        matches!(answer[..], [Message::Accept(_), Message::Move(_)]),
        "{answer:?}"
    );
    // 0.3's message/stream: one event, the agent message message/send would answer.
    let cancel = request(10, "CancelTask", json!({"id": task["id"]}));
    rpc(&server, &alice, &cancel).await.expect(200);
    let propose = json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"O"}});
    let legacy = json!({"jsonrpc": "2.0", "id": 11, "method": "message/stream", "params": {"message": {
        "kind": "message", "role": "user", "messageId": "m-2",
        "parts": [{"kind": "data", "data": propose}],
    }}});
    let (content_type, got) = events(&server, &alice, &legacy, usize::MAX).await;
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["result"]["kind"], "message");
    assert_eq!(got[0]["result"]["parts"][0]["data"]["action"], "accept");
    // A refusal comes as a plain JSON-RPC error, not a stream.
    let r = rpc(
        &server,
        &alice,
        &request(
            9,
            "SendStreamingMessage",
            message(json!({"appId":"sos"}), None, None),
        ),
    )
    .await;
    assert_eq!(r.expect(200)["error"]["data"][0]["metadata"]["code"], "222");
}

#[tokio::test]
async fn subscribe_to_task_hears_the_moves_and_the_end() {
    let server = Server::start().await;
    let alice = server.user().await;
    let propose = json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"X"}});
    let r = rpc(
        &server,
        &alice,
        &request(1, "SendMessage", message(propose, None, Some("random"))),
    )
    .await;
    let id = r.expect(200)["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let subscribe = request(2, "SubscribeToTask", json!({"id": id}));
    let mut following = Events::open(&server, &alice, &subscribe).await;
    assert!(following.content_type.starts_with("text/event-stream"));
    let first = following.next().await.unwrap();
    assert_eq!(first["result"]["task"]["id"], id.as_str());
    assert_eq!(
        first["result"]["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    // A move, then the game called off.
    let mv = json!({"appId":"tic-tac-toe","action":"move","payload":{"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}});
    let r = rpc(
        &server,
        &alice,
        &request(3, "SendMessage", message(mv, Some(&id), None)),
    )
    .await;
    assert_eq!(
        r.expect(200)["result"]["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let r = rpc(
        &server,
        &alice,
        &request(4, "CancelTask", json!({"id": id})),
    )
    .await;
    assert_eq!(
        r.expect(200)["result"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    let mut got = Vec::new();
    while let Some(e) = following.next().await {
        got.push(e);
    }
    let updates: Vec<&Value> = got.iter().map(|e| &e["result"]["statusUpdate"]).collect();
    let heard: Vec<Message> = updates
        .iter()
        .flat_map(|u| actions(App::TicTacToe, &u["status"]["message"]))
        .collect();
    // My move, the computer's, and the abort; the stream ended with the game.
    assert!(
        matches!(
            heard[..],
            [Message::Move(_), Message::Move(_), Message::Result(_)]
        ),
        "{heard:?}"
    );
    assert_eq!(
        updates.last().unwrap()["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    let match_id: u64 = id.trim_start_matches("triad-task-").parse().unwrap();
    assert_eq!(
        server.match_(match_id).await["outcome"]["reason"],
        "aborted"
    );
}

#[tokio::test]
async fn a_refused_move_carries_triads_code_and_changes_nothing() {
    let server = Server::start().await;
    let alice = server.user().await;
    let propose = json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"O"}});
    let r = rpc(
        &server,
        &alice,
        &request(1, "SendMessage", message(propose, None, None)),
    )
    .await;
    let id = r.expect(200)["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let match_id: u64 = id.trim_start_matches("triad-task-").parse().unwrap();
    let before = server.match_(match_id).await;
    // A board that is not the game's.
    let tampered = json!({"appId":"tic-tac-toe","action":"move","payload":{"seq":2,"replyTo":1,"position":0,"mark":"O","board":["O","X","X","","","","","",""]}});
    let r = rpc(
        &server,
        &alice,
        &request(2, "SendMessage", message(tampered, Some(&id), None)),
    )
    .await;
    let error = &r.expect(200)["error"];
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"].as_str().unwrap().contains("board"),
        "{error}"
    );
    let info = &error["data"][0];
    assert_eq!(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
    assert_eq!(info["reason"], "STATE_CONFLICT");
    assert_eq!(info["domain"], "triad");
    assert_eq!(info["metadata"]["code"], "223");
    assert_eq!(info["metadata"]["error"], "state_conflict");
    assert_eq!(server.match_(match_id).await, before);
    // The task ids and the contextId must name one game.
    let mut both = message(
        json!({"appId":"tic-tac-toe","action":"move","payload":{"seq":2,"replyTo":1,"position":0,"mark":"O","board":["O","","","","X","","","",""]}}),
        Some(&id),
        None,
    );
    both["message"]["contextId"] = json!("triad-match-999");
    let r = rpc(&server, &alice, &request(3, "SendMessage", both)).await;
    assert_eq!(
        r.expect(200)["error"]["data"][0]["metadata"]["error"],
        "no_game"
    );
    assert_eq!(server.match_(match_id).await, before);
}

#[tokio::test]
async fn json_rpc_notifications_batches_and_limits() {
    let server = Server::start_with(|a| a.max_body_bytes = Some(4096)).await;
    let alice = server.user().await;
    let get = |id: Value| json!({"jsonrpc": "2.0", "id": id, "method": "GetTask", "params": {"id": "triad-task-1"}});
    // A notification gets no reply at all.
    let propose = json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"X"}});
    let mut notification = request(0, "SendMessage", message(propose, None, None));
    notification.as_object_mut().unwrap().remove("id");
    let r = rpc(&server, &alice, &notification).await;
    assert_eq!((r.status.as_u16(), r.text.as_str()), (204, ""));
    // …but it was carried out: the game it proposed is there.
    let r = rpc(&server, &alice, &get(json!("a"))).await;
    assert_eq!(
        r.expect(200)["result"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    // A batch: one reply per request with an id, in order; a bad element gets its error.
    let batch = json!([
        get(json!(1)),
        {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "triad-task-1"}},
        42,
        get(json!("two")),
        request(3, "SubscribeToTask", json!({"id": "triad-task-1"})),
        request(4, "tasks/list", json!({})),
    ]);
    let r = rpc(&server, &alice, &batch).await;
    let replies = r.expect(200).as_array().unwrap();
    let ids: Vec<&Value> = replies.iter().map(|r| &r["id"]).collect();
    assert_eq!(
        ids,
        [&json!(1), &Value::Null, &json!("two"), &json!(3), &json!(4)]
    );
    assert_eq!(replies[0]["result"]["id"], "triad-task-1");
    assert_eq!(replies[1]["error"]["code"], -32600);
    assert_eq!(replies[2]["result"]["id"], "triad-task-1");
    assert_eq!(
        replies[3]["error"]["code"], -32004,
        "a stream is not batched"
    );
    assert_eq!(replies[4]["error"]["code"], -32601);
    // An empty batch is an invalid request; a batch of notifications gets no reply.
    let r = rpc(&server, &alice, &json!([])).await;
    assert_eq!(r.expect(200)["error"]["code"], -32600);
    let mut quiet = get(json!(0));
    quiet.as_object_mut().unwrap().remove("id");
    let r = rpc(&server, &alice, &json!([quiet.clone(), quiet])).await;
    assert_eq!((r.status.as_u16(), r.text.as_str()), (204, ""));
    // A body over the limit: a JSON-RPC error, declared or not.
    let big = request(9, "GetTask", json!({"id": "x".repeat(5000)}));
    let r = rpc(&server, &alice, &big).await;
    let error = &r.expect(200)["error"];
    assert_eq!(error["code"], -32600);
    assert!(
        error["message"].as_str().unwrap().contains("4096 bytes"),
        "{error}"
    );
    let r = server
        .post("/a2a")
        .auth(&alice)
        .header("content-length", &big.to_string().len().to_string())
        .json(&big)
        .send()
        .await;
    assert_eq!(r.expect(200)["error"]["code"], -32600);
    // An A2A version not spoken here.
    let r = server
        .post("/a2a")
        .auth(&alice)
        .header("a2a-version", "2.0")
        .json(&get(json!(1)))
        .send()
        .await;
    assert_eq!(r.expect(200)["error"]["code"], -32009);
    // Methods of 1.0 this agent does not offer.
    for (method, code) in [
        ("ListTasks", -32004),
        ("CreateTaskPushNotificationConfig", -32003),
        ("GetExtendedAgentCard", -32007),
    ] {
        let r = rpc(&server, &alice, &request(1, method, json!({}))).await;
        assert_eq!(r.expect(200)["error"]["code"], code, "{method}");
    }
}

#[tokio::test]
async fn streams_are_bounded_per_client() {
    let server = Server::start_with(|a| a.max_a2a_streams_per_ip = Some(1)).await;
    let alice = server.user().await;
    let propose = json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"X"}});
    let r = rpc(
        &server,
        &alice,
        &request(1, "SendMessage", message(propose, None, None)),
    )
    .await;
    let id = r.expect(200)["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let subscribe = request(2, "SubscribeToTask", json!({"id": id}));
    let open = Request::post("/a2a")
        .header(header::AUTHORIZATION, format!("Bearer {}", alice.token))
        .body(Body::from(subscribe.to_string()))
        .unwrap();
    let held = server.app.clone().oneshot(open).await.unwrap();
    let r = rpc(&server, &alice, &subscribe).await;
    let error = &r.expect(200)["error"];
    assert_eq!(error["code"], -32050);
    assert_eq!(error["data"][0]["metadata"]["code"], "219");
    drop(held);
    crate::common::eventually("the stream's slot is given back", || async {
        let (_, got) = events(&server, &alice, &subscribe, 1).await;
        got.first()
            .is_some_and(|e| e["result"]["task"]["id"] == id.as_str())
    })
    .await;
}

/// Replays the requests an official SDK sent, byte for byte, to a fresh server: each is
/// answered without error, in the shape its method calls for.
async fn replay(recorded: &str) {
    let recorded: Value = serde_json::from_str(recorded).unwrap();
    let server = Server::start().await;
    let alice = server.user().await;
    for entry in recorded["requests"].as_array().unwrap() {
        let body: Value = serde_json::from_str(entry["body"].as_str().unwrap()).unwrap();
        let method = body["method"].as_str().unwrap();
        let result = if entry["accept"] == "text/event-stream" {
            let (content_type, got) = events(&server, &alice, &body, 1).await;
            assert!(
                content_type.starts_with("text/event-stream"),
                "{method}: {got:?}"
            );
            got[0].clone()
        } else {
            let r = server
                .post("/a2a")
                .auth(&alice)
                .header("a2a-version", entry["a2a-version"].as_str().unwrap())
                .raw(entry["body"].as_str().unwrap())
                .send()
                .await;
            r.expect(200).clone()
        };
        assert_eq!(result["id"], body["id"], "{method}");
        let result = &result["result"];
        match method {
            "SendMessage" | "SendStreamingMessage" => {
                assert!(
                    result["task"]["id"]
                        .as_str()
                        .unwrap()
                        .starts_with("triad-task-"),
                    "{result}"
                );
            }
            "SubscribeToTask" => assert!(result["task"]["status"]["state"].is_string(), "{result}"),
            "GetTask" => assert_eq!(
                result["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
                "{result}"
            ),
            "CancelTask" => {
                assert_eq!(result["status"]["state"], "TASK_STATE_CANCELED", "{result}")
            }
            "message/send" => {
                assert_eq!(result["kind"], "message", "{result}");
                assert!(
                    result["parts"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|p| p["kind"] == "data")
                );
            }
            other => panic!("a method the recording should not have: {other}"),
        }
    }
}

#[tokio::test]
async fn the_python_sdks_requests_are_accepted() {
    replay(PYTHON_SDK).await;
}

#[tokio::test]
async fn the_javascript_sdks_requests_are_accepted() {
    replay(JS_SDK).await;
}

#[tokio::test]
async fn a_subscription_ends_with_its_login() {
    let server = Server::start().await;
    let alice = server.user().await;
    let propose = json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"X"}});
    let r = rpc(
        &server,
        &alice,
        &request(1, "SendMessage", message(propose, None, None)),
    )
    .await;
    let id = r.expect(200)["result"]["task"]["id"].clone();
    let mut following = Events::open(
        &server,
        &alice,
        &request(2, "SubscribeToTask", json!({"id": id})),
    )
    .await;
    assert_eq!(following.next().await.unwrap()["result"]["task"]["id"], id);
    server
        .post("/api/auth/logout")
        .auth(&alice)
        .send()
        .await
        .expect(204);
    let end = tokio::time::timeout(std::time::Duration::from_secs(10), following.next()).await;
    assert_eq!(end.expect("the stream ends at once"), None);
}
