//! One client must not be able to hurt everyone else: every scarce resource (metric
//! series, pending login challenges, connections, WebSockets, long-polls, file
//! descriptors, log volume, replay work) has a per-client share and a bound. Many clients
//! are simulated by binding client sockets to addresses of 127.0.0.0/8.

use std::{
    net::{IpAddr, SocketAddr},
    time::{Duration, Instant},
};

use futures_util::{SinkExt as _, StreamExt as _};
use reqwest::Method;
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::{TcpSocket, TcpStream},
};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, tungstenite::Message};

use crate::support::{Api, Player, Resp, Server, WAIT, new_key};

/// 127.0.0.`n`.
fn ip(n: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, n])
}

/// The server's socket address.
fn server_addr(api: &Api) -> SocketAddr {
    api.base
        .trim_start_matches("http://")
        .parse()
        .expect("a socket address")
}

/// An HTTP client whose connections come from 127.0.0.`n`.
fn client_from(n: u8, timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .local_address(ip(n))
        .timeout(timeout)
        .build()
        .expect("an HTTP client")
}

/// Sends a request from `client`; the status, `Retry-After` and JSON body.
async fn send(
    client: &reqwest::Client,
    api: &Api,
    method: Method,
    path: &str,
    token: Option<&str>,
) -> Result<Resp, reqwest::Error> {
    let mut request = client.request(method, format!("{}{path}", api.base));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await?;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let text = response.text().await?;
    Ok(Resp {
        status,
        retry_after,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
    })
}

/// A TCP connection to the server from 127.0.0.`n`.
async fn tcp_from(n: u8, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket
        .bind(SocketAddr::new(ip(n), 0))
        .expect("bound to a loopback address");
    tokio::time::timeout(WAIT, socket.connect(to))
        .await
        .expect("connected in time")
        .expect("connected")
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A WebSocket from 127.0.0.`n`: the socket, or the HTTP refusal (status, body, `Retry-After`).
async fn ws_from(n: u8, api: &Api) -> Result<Socket, (u16, Value, Option<u64>)> {
    let stream = tcp_from(n, server_addr(api)).await;
    let url = format!("{}/api/ws", api.base.replacen("http://", "ws://", 1));
    match tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(stream)).await {
        Ok((socket, _)) => Ok(socket),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok());
            let body = response
                .body()
                .as_ref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or(Value::Null);
            Err((response.status().as_u16(), body, retry_after))
        }
        Err(e) => panic!("the WebSocket handshake failed: {e}"),
    }
}

/// The next JSON text frame of a socket (pings skipped).
async fn next_json(ws: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("a frame in time")
            .expect("the socket is open")
            .expect("a frame");
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).expect("JSON");
        }
    }
}

/// Subscribes and reads the catch-up: the events, then the frame that ended it.
async fn catch_up(ws: &mut Socket, topic: &str, since: u64) -> (Vec<Value>, Value) {
    let subscribe = json!({"type": "subscribe", "topic": topic, "since": since});
    ws.send(Message::text(subscribe.to_string()))
        .await
        .expect("sent");
    let mut events = Vec::new();
    loop {
        let frame = next_json(ws).await;
        if frame["type"] == "event" {
            events.push(frame["event"].clone());
        } else {
            return (events, frame);
        }
    }
}

/// The sample lines of one metric in a Prometheus page.
fn series<'a>(page: &'a str, metric: &str) -> Vec<&'a str> {
    page.lines()
        .filter(|l| l.starts_with(metric) && l[metric.len()..].starts_with(['{', ' ']))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_methods_and_paths_do_not_grow_the_metrics_nor_do_refused_requests() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "", &[]).await;
    let api = &server.api;
    let before = series(&api.metrics().await, "triad_http_requests_total").len();
    // 400 requests with made-up methods and paths, from 4 addresses.
    let requests = (0..400u32).map(|i| async move {
        let client = client_from(2 + (i % 4) as u8, WAIT);
        let method = Method::from_bytes(format!("XMETHOD{i}").as_bytes()).unwrap();
        let path = if i % 2 == 0 {
            format!("/api/made-up/{i}")
        } else {
            "/api/me".to_owned()
        };
        send(&client, api, method, &path, None)
            .await
            .unwrap()
            .status
    });
    let statuses = futures_util::future::join_all(requests).await;
    assert!(
        statuses.iter().all(|s| (400..500).contains(s)),
        "{statuses:?}"
    );
    let page = api.metrics().await;
    assert!(!page.contains("XMETHOD"), "a made-up method became a label");
    assert!(!page.contains("made-up"), "a made-up path became a label");
    let after = series(&page, "triad_http_requests_total");
    assert!(
        after.len() <= before + 6,
        "{} series for 400 made-up requests:\n{}",
        after.len() - before,
        after.join("\n")
    );
    assert!(page.contains(r#"method="other""#), "{page}");

    // Requests refused by the rate limiter are one counter, not a series each.
    let dir = tempfile::tempdir().unwrap();
    let limited = Server::start(dir.path(), "", &["--rate-per-ip", "1", "--rate-burst", "5"]).await;
    let client = client_from(2, WAIT);
    let mut refused = 0;
    for i in 0..60 {
        let r = send(
            &client,
            &limited.api,
            Method::GET,
            &format!("/api/made-up/{i}"),
            None,
        )
        .await
        .unwrap();
        if r.status == 429 {
            assert_eq!(r.body["code"], 207);
            assert!(r.retry_after.is_some());
            refused += 1;
        }
    }
    assert!(refused >= 50, "{refused} refused");
    let page = client_from(3, WAIT)
        .get(format!("{}/metrics", limited.api.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        series(&page, "triad_http_requests_total")
            .iter()
            .all(|l| !l.contains(r#"status="429""#)),
        "refused requests are counted by route:\n{page}"
    );
    let total: f64 = series(&page, "triad_http_rate_limited_total")
        .iter()
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(total >= f64::from(refused), "{total} < {refused}:\n{page}");
}

/// Sends `n` requests for a login challenge on one connection from 127.0.0.`from`, all
/// written at once (HTTP/1.1 pipelining), and reads every answer; the count of 200s.
async fn challenges_pipelined(api: &Api, from: u8, n: usize, public_key: &str) -> usize {
    let body = json!({ "public_key": public_key }).to_string();
    let request = format!(
        "POST /api/auth/challenge HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let stream = tcp_from(from, server_addr(api)).await;
    let (mut reader, mut writer) = stream.into_split();
    let writing = tokio::spawn(async move {
        let all = request.repeat(n);
        writer.write_all(all.as_bytes()).await.expect("written");
        writer
    });
    let mut seen = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let (mut answers, mut ok) = (0, 0);
    while answers < n {
        let read = tokio::time::timeout(WAIT, reader.read(&mut buf))
            .await
            .expect("answers in time")
            .expect("read");
        assert!(read > 0, "the server closed after {answers} answers");
        seen.extend_from_slice(&buf[..read]);
        // Count whole status lines; keep a partial one for the next read.
        let text = String::from_utf8_lossy(&seen).into_owned();
        let mut last = 0;
        for (at, _) in text.match_indices("HTTP/1.1 ") {
            if text.len() >= at + 12 {
                answers += 1;
                if &text[at + 9..at + 12] == "200" {
                    ok += 1;
                }
                last = at + 12;
            }
        }
        seen.drain(..last.min(seen.len()));
    }
    drop(writing.await);
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn challenges_asked_for_from_many_addresses_do_not_lock_anyone_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "", &[]).await;
    let api = &server.api;
    // 50 addresses ask for 2,100 challenges each, never logging in: 105,000 pending, more
    // than a server that keeps each one (100,000 at most) would hold.
    let flooder = new_key().public_key_hex();
    let started = Instant::now();
    let flood = (0..50u8).map(|n| {
        let flooder = flooder.clone();
        async move { challenges_pipelined(api, 10 + n, 2_100, &flooder).await }
    });
    let issued: usize = futures_util::future::join_all(flood)
        .await
        .into_iter()
        .sum();
    eprintln!("{issued} challenges in {:?}", started.elapsed());
    // A new user still logs in, and a challenge is still used once.
    let newcomer = new_key();
    let public_key = newcomer.public_key_hex();
    let challenge = api.login_challenge(&public_key).await;
    let login = json!({
        "challenge_id": challenge["challenge_id"],
        "public_key": public_key,
        "signature": triad_identity::sign_ed25519(
            newcomer.signing_key(),
            challenge["message"].as_str().unwrap().as_bytes(),
        ),
    });
    let first = api.post("/api/auth/login", None, &login).await;
    assert_eq!(first.ok()["address"], newcomer.address_string().as_str());
    api.post("/api/auth/login", None, &login)
        .await
        .expect_error(401, 204);
    assert_eq!(issued, 105_000, "every challenge asked for was issued");
}

/// A long-poll of `player`'s agents' inbox from 127.0.0.`from`, waiting up to `wait_ms`.
async fn long_poll(api: &Api, from: u8, player: &Player, wait_ms: u64) -> Resp {
    send(
        &client_from(from, WAIT),
        api,
        Method::GET,
        &format!("/api/apps/inbox?wait_ms={wait_ms}"),
        Some(&player.token),
    )
    .await
    .expect("an answer")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_long_polls_and_websockets_stop_at_its_share_and_healthz_still_answers() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        "",
        &[
            "--max-long-polls-per-ip",
            "3",
            "--max-websockets-per-ip",
            "3",
            "--max-in-flight-requests",
            "6",
        ],
    )
    .await;
    let api = server.api.clone();
    let players = api.players(3).await;
    // 127.0.0.2 holds 3 long-polls; the 4th is refused at once, with the code and when to
    // come back.
    let held: Vec<_> = (0..3)
        .map(|_| {
            let (api, player) = (api.clone(), players[0].clone());
            tokio::spawn(async move { long_poll(&api, 2, &player, 2_000).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let fourth = long_poll(&api, 2, &players[0], 2_000).await;
    fourth.expect_error(429, 219);
    assert!(fourth.retry_after.is_some_and(|s| s > 0), "{fourth:?}");
    assert!(started.elapsed() < Duration::from_secs(1), "refused early");
    // Another address is served.
    let other = send(
        &client_from(3, WAIT),
        &api,
        Method::GET,
        "/api/leaderboard",
        None,
    )
    .await
    .unwrap();
    assert_eq!(other.status, 200, "{other:?}");
    // Another address takes the rest of the requests in flight (6 in all): the server is
    // full, and says so, yet /healthz answers.
    let more: Vec<_> = (0..3)
        .map(|_| {
            let (api, player) = (api.clone(), players[1].clone());
            tokio::spawn(async move { long_poll(&api, 4, &player, 2_000).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let full = send(
        &client_from(5, WAIT),
        &api,
        Method::GET,
        "/api/leaderboard",
        None,
    )
    .await
    .unwrap();
    full.expect_error(503, 213);
    assert!(full.retry_after.is_some());
    let health = send(
        &client_from(5, Duration::from_secs(3)),
        &api,
        Method::GET,
        "/healthz",
        None,
    )
    .await
    .expect("/healthz answers");
    assert_eq!(
        (health.status, health.body["status"].as_str()),
        (200, Some("ok"))
    );
    for task in held.into_iter().chain(more) {
        assert_eq!(task.await.unwrap().status, 200);
    }

    // WebSockets: 127.0.0.2 opens its 3, the 4th is refused; 127.0.0.3 still gets one.
    let mut sockets = Vec::new();
    for _ in 0..3 {
        sockets.push(ws_from(2, &api).await.expect("within the share"));
    }
    let Err((status, body, retry_after)) = ws_from(2, &api).await else {
        panic!("a WebSocket over the share was opened");
    };
    assert_eq!((status, body["code"].as_u64()), (429, Some(219)), "{body}");
    assert!(retry_after.is_some());
    let mut other = ws_from(3, &api).await.expect("another address is served");
    other
        .send(Message::text(r#"{"type":"ping"}"#))
        .await
        .unwrap();
    assert_eq!(next_json(&mut other).await["type"], "pong");
    // A socket closed gives its share back.
    let mut first = sockets.remove(0);
    first.close(None).await.unwrap();
    drop(first);
    let again = api
        .poll("a WebSocket share given back", || async {
            ws_from(2, &api).await.ok()
        })
        .await;
    drop(again);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_few_open_files_idle_sockets_of_one_address_do_not_stop_the_accepts() {
    let dir = tempfile::tempdir().unwrap();
    // 200 open files, soft and hard: the server derives its connection limits from them.
    let server = Server::start_under(dir.path(), "", &[], &["prlimit", "--nofile=200:200"]).await;
    let api = &server.api;
    let to = server_addr(api);
    let logs = server.logs();
    let fitted = logs
        .lines()
        .find(|l| l.contains("connection limits"))
        .unwrap_or_else(|| panic!("the limits in force are logged:\n{logs}"));
    let value = |name: &str| -> u64 {
        let at = fitted.find(&format!("{name}=")).expect(name) + name.len() + 1;
        fitted[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a number")
    };
    assert!(value("max_connections") < 200, "{fitted}");
    assert!(
        value("max_websockets") <= value("max_connections"),
        "{fitted}"
    );
    assert!(
        value("max_connections_per_ip") <= value("max_connections") / 4,
        "{fitted}"
    );
    // 127.0.0.2 opens 250 idle connections: more than the process has file descriptors.
    let mut idle = Vec::new();
    for _ in 0..250 {
        idle.push(tcp_from(2, to).await);
    }
    // Once the overflow's short header timeout has passed, its next request is refused
    // with the code; other addresses are served, /healthz included.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let quick = Duration::from_secs(3);
    let refused = send(
        &client_from(2, quick),
        api,
        Method::GET,
        "/api/leaderboard",
        None,
    )
    .await
    .expect("an answer, not a hang");
    refused.expect_error(429, 219);
    assert!(refused.retry_after.is_some());
    let health = send(&client_from(2, quick), api, Method::GET, "/healthz", None)
        .await
        .expect("/healthz answers even over the share");
    assert_eq!(health.status, 200);
    for n in 3..6 {
        let r = send(
            &client_from(n, quick),
            api,
            Method::GET,
            "/api/leaderboard",
            None,
        )
        .await
        .expect("another address is served");
        assert_eq!(r.status, 200, "{r:?}");
    }
    drop(idle);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_with_long_paths_leave_a_bounded_log() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        "",
        &[
            "--rate-per-ip",
            "50",
            "--rate-burst",
            "50",
            "--log-lines-per-ip",
            "20",
        ],
    )
    .await;
    let api = &server.api;
    let before = server.logs().len();
    // 400 requests for 20 KB paths that do not exist, from one address: 8 MB of paths,
    // most of them over the rate limit.
    let path = format!("/api/{}", "a".repeat(20_000));
    let client = client_from(2, WAIT);
    let requests = (0..400).map(|_| send(&client, api, Method::GET, &path, None));
    let answers = futures_util::future::join_all(requests).await;
    let statuses: Vec<u16> = answers.into_iter().map(|r| r.unwrap().status).collect();
    assert!(statuses.iter().all(|s| *s == 404 || *s == 429));
    assert!(statuses.iter().filter(|s| **s == 429).count() >= 200);
    let written = server.logs().len() - before;
    assert!(
        written < 64 * 1024,
        "{written} bytes of log for 400 refused requests"
    );
    assert!(
        !server.logs().contains(&"a".repeat(1_000)),
        "a path logged whole"
    );
}

/// `2n` players join the queue for free tic-tac-toe: `n` matches, each with at least a
/// `queued` and a `game_started` event on the lobby.
async fn lobby_history(api: &Api, n: usize) {
    let players = api.players(2 * n).await;
    futures_util::stream::iter(&players)
        .for_each_concurrent(16, |p| async move {
            api.queue(p, "tic-tac-toe", 0).await.ok();
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_catch_up_from_zero_comes_in_pages_within_the_replay_budget() {
    let dir = tempfile::tempdir().unwrap();
    // A budget of 256 events a second per address (twice a page in a burst).
    let server = Server::start(dir.path(), "", &["--replay-events-per-ip", "256"]).await;
    let api = &server.api;
    lobby_history(api, 150).await;
    let mut ws = ws_from(2, api).await.expect("a socket");
    let (first, end) = catch_up(&mut ws, "lobby", 0).await;
    assert_eq!(first.len(), 256, "one page, not the whole history");
    assert_eq!(end["type"], "more", "{end}");
    let seq = end["seq"].as_u64().unwrap();
    assert_eq!(first.last().unwrap()["seq"].as_u64(), Some(seq));
    // From where the page stopped: the rest, then live.
    let (rest, end) = catch_up(&mut ws, "lobby", seq).await;
    assert_eq!(end["type"], "subscribed", "{end}");
    assert!(!rest.is_empty() && rest.len() <= 256);
    assert!(rest[0]["seq"].as_u64().unwrap() > seq);
    // The address's replay budget is spent: the next catch-up is refused for a while,
    // saying where to resume; another address is served.
    let mut again = ws_from(2, api).await.expect("a socket");
    let (none, refused) = catch_up(&mut again, "lobby", 0).await;
    assert!(none.is_empty());
    assert_eq!(
        (
            refused["type"].as_str(),
            refused["code"].as_u64(),
            refused["topic"].as_str()
        ),
        (Some("error"), Some(207), Some("lobby")),
        "{refused}"
    );
    assert!(refused["retry_after_s"].as_u64().is_some_and(|s| s > 0));
    assert_eq!(refused["seq"].as_u64(), Some(0));
    let mut elsewhere = ws_from(3, api).await.expect("a socket");
    let (page, end) = catch_up(&mut elsewhere, "lobby", 0).await;
    assert_eq!((page.len(), end["type"].as_str()), (256, Some("more")));
    // A live event reaches the socket that caught up, once.
    let pair = api.players(2).await;
    api.queue(&pair[0], "tic-tac-toe", 0).await.ok();
    let live = next_json(&mut ws).await;
    assert_eq!(live["type"], "event");
    assert!(live["event"]["seq"].as_u64().unwrap() > rest.last().unwrap()["seq"].as_u64().unwrap());
}
