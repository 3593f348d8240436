//! Bad input at the transport: oversized and deeply nested bodies, invalid UTF-8, slow
//! clients (slowloris) and floods of WebSocket frames, against the real `triad serve`
//! binary over real sockets (RELIABILITY.md, "Bad input"). Each gets a bounded, clear
//! refusal with a stable code, and a well-behaved client keeps being served meanwhile:
//! its latencies are printed (the figures in RELIABILITY.md) and each request must succeed
//! within a generous 5 s.
//!
//! `TRIAD_SOAK=1` makes the attacks bigger (more slow connections, longer floods).

mod support;

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use support::{Api, Player, Server, WAIT, new_key};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    task::JoinHandle,
};
use tokio_tungstenite::tungstenite::{Message, protocol::WebSocketConfig};

/// The bound on one request of the well-behaved client while an attack runs.
const SERVED_WITHIN: Duration = Duration::from_secs(5);

fn soak() -> bool {
    std::env::var("TRIAD_SOAK").is_ok_and(|v| v == "1")
}

/// A well-behaved client that asks for `/api/me` and `/healthz` in a loop until stopped,
/// recording each request's latency; a failed request is recorded as `None`.
struct Bystander {
    stop: Arc<AtomicBool>,
    task: JoinHandle<Vec<Option<Duration>>>,
}

impl Bystander {
    fn start(api: &Api, player: &Player) -> Bystander {
        let stop = Arc::new(AtomicBool::new(false));
        let (api, token, flag) = (api.clone(), player.token.clone(), stop.clone());
        let task = tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut n = 0u32;
            while !flag.load(Ordering::Relaxed) {
                let started = Instant::now();
                let path = if n.is_multiple_of(2) {
                    "/api/me"
                } else {
                    "/healthz"
                };
                let r = tokio::time::timeout(
                    SERVED_WITHIN,
                    api.try_send(reqwest::Method::GET, path, Some(&token), None),
                )
                .await;
                let ok = matches!(r, Ok(Ok(ref r)) if r.status == 200);
                latencies.push(ok.then(|| started.elapsed()));
                n += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            latencies
        });
        Bystander { stop, task }
    }

    /// Stops, prints the latencies, and asserts every request was served in time.
    async fn finish(self, during: &str) {
        self.stop.store(true, Ordering::Relaxed);
        let latencies = self.task.await.expect("the bystander ran");
        let failed = latencies.iter().filter(|l| l.is_none()).count();
        let mut ok: Vec<Duration> = latencies.iter().flatten().copied().collect();
        ok.sort_unstable();
        assert!(
            !ok.is_empty(),
            "{during}: the bystander got no answer at all"
        );
        let pct = |p: usize| ok[(ok.len() - 1) * p / 100];
        println!(
            "bystander during {during}: {} requests, {failed} failed, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            latencies.len(),
            pct(50).as_secs_f64() * 1e3,
            pct(99).as_secs_f64() * 1e3,
            ok[ok.len() - 1].as_secs_f64() * 1e3,
        );
        assert_eq!(
            failed, 0,
            "{during}: {failed} of the bystander's requests failed or took over {SERVED_WITHIN:?}"
        );
    }
}

/// The port of `http://127.0.0.1:PORT`.
fn addr(api: &Api) -> String {
    api.base.trim_start_matches("http://").to_owned()
}

/// Sends raw bytes as one HTTP/1.1 request and reads the answer until the server closes
/// or `WAIT` passes: `(status, JSON body)`.
async fn raw(api: &Api, request: &[u8]) -> (u16, Value) {
    let mut s = TcpStream::connect(addr(api)).await.expect("connects");
    s.write_all(request).await.expect("sent");
    let mut out = Vec::new();
    let _ = tokio::time::timeout(WAIT, s.read_to_end(&mut out)).await;
    parse_response(&out)
}

fn parse_response(bytes: &[u8]) -> (u16, Value) {
    let text = String::from_utf8_lossy(bytes);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    // A chunked body: take the JSON object in it.
    let json = body
        .find('{')
        .and_then(|start| body.rfind('}').map(|end| &body[start..=end]))
        .unwrap_or("");
    (status, serde_json::from_str(json).unwrap_or(Value::Null))
}

fn post(path: &str, extra_headers: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra_headers}\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

#[track_caller]
fn expect(what: &str, got: &(u16, Value), status: u16, code: u64) {
    println!("{what}: {} {}", got.0, got.1);
    assert_eq!(
        (got.0, got.1["code"].as_u64()),
        (status, Some(code)),
        "{what}: {}",
        got.1
    );
    assert!(
        got.1["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{what}: a message says what to do: {}",
        got.1
    );
}

#[tokio::test]
async fn oversized_deep_and_malformed_bodies_get_clear_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "", &[]).await;
    let api = &server.api;
    let me = api.login(&new_key()).await;
    let bystander = Bystander::start(api, &me);
    let auth = format!("authorization: Bearer {}\r\n", me.token);
    let key = json!({ "public_key": new_key().public_key_hex() }).to_string();

    // 1 MiB, declared: refused before it is read.
    let big = vec![b' '; 1 << 20];
    let got = raw(api, &post("/api/auth/challenge", "", &big)).await;
    expect("1 MiB body", &got, 413, 208);
    // A length that lies about a huge body.
    let lie = b"POST /api/auth/challenge HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: 1000000000000\r\n\r\n{}";
    expect("a declared terabyte", &raw(api, lie).await, 413, 208);
    // Chunked, with no length: cut off at the limit.
    let mut chunked = b"POST /api/auth/challenge HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..64 {
        chunked.extend_from_slice(b"400\r\n");
        chunked.extend_from_slice(&[b' '; 0x400]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    expect("64 KiB chunked", &raw(api, &chunked).await, 413, 208);
    // Nesting far deeper than any request has, inside the size limit.
    let deep = format!("{}{}", "[".repeat(8_000), "]".repeat(8_000));
    expect(
        "JSON nested 8000 deep",
        &raw(api, &post("/api/queue", &auth, deep.as_bytes())).await,
        400,
        200,
    );
    let deep_obj = format!("{}1{}", "{\"a\":".repeat(2_500), "}".repeat(2_500));
    expect(
        "objects nested 2500 deep",
        &raw(api, &post("/api/auth/challenge", "", deep_obj.as_bytes())).await,
        400,
        200,
    );
    // Invalid UTF-8: in a JSON string, as the whole body, and in the token header.
    let mut bad = b"{\"public_key\":\"".to_vec();
    bad.extend_from_slice(&[0xff, 0xfe, 0xc3, 0x28]);
    bad.extend_from_slice(b"\"}");
    expect(
        "invalid UTF-8 in a JSON string",
        &raw(api, &post("/api/auth/challenge", "", &bad)).await,
        400,
        200,
    );
    expect(
        "a body of invalid UTF-8",
        &raw(api, &post("/api/auth/challenge", "", &[0x80; 64])).await,
        400,
        200,
    );
    let mut header =
        b"GET /api/me HTTP/1.1\r\nhost: x\r\nconnection: close\r\nauthorization: Bearer ".to_vec();
    header.extend_from_slice(&[0xff; 64]);
    header.extend_from_slice(b"\r\n\r\n");
    expect(
        "invalid UTF-8 in the token",
        &raw(api, &header).await,
        401,
        201,
    );
    // A payload the API keeps as free JSON, nested past serde_json's recursion limit.
    let deep_payload = format!(
        r#"{{"to":"0x{}","appId":"sos","action":"move","payload":{}1{}}}"#,
        "11".repeat(32),
        "[".repeat(4_000),
        "]".repeat(4_000)
    );
    expect(
        "a payload nested 4000 deep",
        &raw(
            api,
            &post("/api/apps/messages", &auth, deep_payload.as_bytes()),
        )
        .await,
        400,
        200,
    );
    // Invalid UTF-8 in the path: hyper refuses the request line itself, 400 with no body.
    let path = b"GET /api/players/\xff\xfe HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
    let got = raw(api, path).await;
    println!("invalid UTF-8 in the path: {} {}", got.0, got.1);
    assert!(
        got.0 == 400 || got.1["code"].as_u64() == Some(211),
        "invalid UTF-8 in the path: {got:?}"
    );
    // Not JSON at all, JSON of the wrong shape, and no content type.
    expect(
        "not JSON",
        &raw(api, &post("/api/auth/challenge", "", b"public_key=1")).await,
        400,
        200,
    );
    expect(
        "JSON of the wrong shape",
        &raw(api, &post("/api/auth/challenge", "", b"[1,2,3]")).await,
        400,
        200,
    );
    let untyped = format!(
        "POST /api/auth/challenge HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{key}",
        key.len()
    );
    let got = raw(api, untyped.as_bytes()).await;
    println!("no content type: {} {}", got.0, got.1);
    assert_eq!(got.1["code"].as_u64(), Some(200), "{got:?}");
    // Headers far too large: hyper answers 431 before any handler runs.
    let huge = format!(
        "GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\nx-junk: {}\r\n\r\n",
        "a".repeat(512 * 1024)
    );
    let got = raw(api, huge.as_bytes()).await;
    println!("512 KiB of headers: {}", got.0);
    assert_eq!(got.0, 431, "512 KiB of headers");
    // The server is still whole.
    assert_eq!(api.get("/healthz", None).await.status, 200);
    bystander.finish("bad bodies").await;
}

/// Opens `n` connections that send a request's headers one byte every `gap`.
fn slowloris(api: &Api, n: usize, gap: Duration) -> Vec<JoinHandle<Option<Duration>>> {
    (0..n)
        .map(|_| {
            let addr = addr(api);
            tokio::spawn(async move {
                let Ok(mut s) = TcpStream::connect(addr).await else {
                    return None;
                };
                let started = Instant::now();
                let request = b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
                for byte in request.iter().cycle().take(10_000) {
                    if s.write_all(&[*byte]).await.is_err() {
                        // The server closed the connection: how long it held it.
                        return Some(started.elapsed());
                    }
                    tokio::time::sleep(gap).await;
                    // A closed socket shows as a read of 0 bytes.
                    let mut buf = [0u8; 256];
                    if let Ok(Ok(0)) =
                        tokio::time::timeout(Duration::from_millis(1), s.read(&mut buf)).await
                    {
                        return Some(started.elapsed());
                    }
                }
                None
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_cut_off_and_others_are_still_served() {
    let dir = tempfile::tempdir().unwrap();
    // A short request timeout, so the test is short: headers must come within 2 s.
    let server = Server::start(dir.path(), "", &["--request-timeout-ms", "2000"]).await;
    let api = &server.api;
    let me = api.login(&new_key()).await;
    let bystander = Bystander::start(api, &me);
    let n = if soak() { 2_000 } else { 300 };
    let slow = slowloris(api, n, Duration::from_millis(200));
    let mut held = Vec::new();
    for s in slow {
        held.push(
            s.await
                .expect("a slow client ran")
                .expect("the server cut off a slow client"),
        );
    }
    held.sort_unstable();
    println!(
        "{n} slowloris connections (a header byte every 200 ms): cut off after {:.2} s to {:.2} s",
        held[0].as_secs_f64(),
        held[held.len() - 1].as_secs_f64()
    );
    assert!(
        held[held.len() - 1] < Duration::from_secs(15),
        "a slow client was held {:?}, far beyond the 2 s header timeout",
        held[held.len() - 1]
    );
    // A body that trickles in: the request timeout answers 408 with its code.
    let mut s = TcpStream::connect(addr(api)).await.unwrap();
    let head = format!(
        "POST /api/queue HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer {}\r\ncontent-length: 100\r\n\r\n{{",
        me.token
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let trickle = async {
        loop {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if s.write_all(b" ").await.is_err() {
                break;
            }
            let mut buf = [0u8; 4096];
            match tokio::time::timeout(Duration::from_millis(1), s.read(&mut buf)).await {
                Ok(Ok(0) | Err(_)) => break,
                Ok(Ok(k)) => answer.extend_from_slice(&buf[..k]),
                Err(_) => {}
            }
            if answer.windows(1).any(|w| w == b"}") {
                break;
            }
        }
    };
    tokio::time::timeout(WAIT, trickle)
        .await
        .expect("the slow body is answered");
    expect("a trickling body", &parse_response(&answer), 408, 214);
    bystander.finish("the slowloris attack").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_floods_are_cut_off_and_others_are_still_served() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), "", &[]).await;
    let api = &server.api;
    let me = api.login(&new_key()).await;
    let bystander = Bystander::start(api, &me);
    let frames = if soak() { 100_000 } else { 2_000 };
    let url = format!(
        "{}/api/ws?token={}",
        api.base.replacen("http://", "ws://", 1),
        me.token
    );
    for kind in ["text", "binary", "ping", "oversized"] {
        let mut config = WebSocketConfig::default();
        config.max_message_size = None;
        config.max_frame_size = None;
        let (mut ws, _) =
            tokio_tungstenite::connect_async_with_config(url.as_str(), Some(config), false)
                .await
                .expect("connects");
        let started = Instant::now();
        let flood = async {
            for i in 0..frames {
                let m = match kind {
                    "text" => Message::text(json!({"type":"ping"}).to_string()),
                    "binary" => Message::binary(vec![0u8; 64]),
                    "ping" => Message::Ping(vec![1u8; 8].into()),
                    _ => Message::text("x".repeat(1 << 20)),
                };
                if let Err(e) = ws.send(m).await {
                    println!("{kind} flood: sending frame {i} failed: {e}");
                    break;
                }
                if kind == "oversized" {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(WAIT, flood).await;
        // What the server said before closing.
        let mut error = None;
        let mut close = None;
        let read = async {
            while let Some(m) = ws.next().await {
                match m {
                    Ok(Message::Text(t)) => {
                        let v: Value = serde_json::from_str(&t).unwrap_or(Value::Null);
                        if v["type"] == "error" {
                            error = Some(v);
                        }
                    }
                    Ok(Message::Close(frame)) => {
                        close = Some(frame.map_or(1005, |f| u16::from(f.code)));
                        break;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        println!("{kind} flood: reading failed: {e}");
                        break;
                    }
                }
            }
        };
        let _ = tokio::time::timeout(WAIT, read).await;
        println!(
            "{kind} flood: closed with {close:?} after {:.2} s; last error {error:?}",
            started.elapsed().as_secs_f64()
        );
        if kind == "oversized" {
            assert_eq!(
                close,
                Some(1009),
                "a 1 MiB message closes with 1009 (too big)"
            );
        } else {
            assert_eq!(
                close,
                Some(1008),
                "a {kind} flood closes with 1008 (policy)"
            );
            let error = error.expect("the flood is told why");
            assert_eq!(error["code"], 207, "{error}");
            assert_eq!(error["error"], "rate_limited", "{error}");
        }
    }
    // A well-behaved socket is still served.
    let (mut ws, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap();
    ws.send(Message::text(r#"{"type":"ping"}"#)).await.unwrap();
    let pong = tokio::time::timeout(WAIT, async {
        loop {
            if let Some(Ok(Message::Text(t))) = ws.next().await {
                return t.to_string();
            }
        }
    })
    .await
    .expect("a pong");
    assert_eq!(pong, r#"{"type":"pong"}"#);
    bystander.finish("the WebSocket floods").await;
}
