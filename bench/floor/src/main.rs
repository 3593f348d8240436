//! The floor: what a WebSocket server spends, on this machine, to carry the frames of
//! Triad's benchmark games and do nothing else: no HTTP, no JSON parsing, no login, no
//! rules, no storage.
//!
//! `triad-floor server ADDR` relays: every text frame a client sends is answered on the
//! same socket (the `ack`), and a move (any frame but `R…` and `U…`) is also written to the
//! other client of its pair, wrapped as an event. `R…` frames get the answer only (a
//! subscription's or an acceptance's reply); `U…` frames get nothing (an unsubscribe).
//!
//! `triad-floor server ADDR --durable FILE` makes every move durable before it is relayed,
//! as Triad does: a thread of its own writes the waiting moves to FILE and `fdatasync`s
//! it, a group commit, and only then are they forwarded and acknowledged.
//!
//! `triad-floor client ADDR PAIRS GAMES [--setup] [--server-pid PID]` opens two WebSockets
//! per pair and plays GAMES games per pair, all pairs at once: 7 and 8 moves in turn (7.5 a
//! game; Triad's seeded games average 7.65), each move sent by its mover and timed until
//! the opponent sees it, one move in flight per game as in `triad bench`. With `--setup`,
//! every game also carries the frames of Triad's setup as WebSocket frames, which are
//! cheaper than the HTTP requests Triad uses for two of them: the challenge (an answer, and
//! a frame to the challenged's inbox), the acceptance and the two subscriptions (an answer
//! each), and the two unsubscriptions. It prints the server's CPU per game, user and system,
//! from `/proc/PID/stat`, and the move latency's p50 and p99.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures_util::{SinkExt, StreamExt};
use tokio::{
    net::{TcpListener, TcpStream},
    sync::mpsc,
};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, tungstenite::Message};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Outbox = mpsc::UnboundedSender<Message>;
type Pairs = Arc<Mutex<HashMap<u64, [Option<Outbox>; 2]>>>;
type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

const USAGE: &str = "usage: triad-floor server ADDR [--durable FILE]\n       \
                     triad-floor client ADDR PAIRS GAMES [--setup] [--server-pid PID]";

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["server", addr] => runtime.block_on(server(addr, None)),
        ["server", addr, "--durable", file] => {
            let log = Log::open(file).map_err(|e| format!("{file}: {e}"))?;
            runtime.block_on(server(addr, Some(log)))
        }
        ["client", addr, pairs, games, ref rest @ ..] => {
            let number = |s: &str| s.parse::<u64>().map_err(|e| format!("{s:?}: {e}\n{USAGE}"));
            let setup = rest.contains(&"--setup");
            let pid = match rest.iter().position(|a| *a == "--server-pid") {
                Some(i) => Some(number(rest.get(i + 1).ok_or(USAGE)?)?),
                None => None,
            };
            runtime.block_on(client(addr, number(pairs)?, number(games)?, setup, pid))
        }
        _ => Err(USAGE.to_owned()),
    }
}

/// The durable log: moves go to its thread, which writes everything waiting in one go and
/// `fdatasync`s it (a group commit), then lets each move's relay go on. The file is
/// written in full before the run and then reused in a ring, as SQLite reuses its WAL, so
/// that a sync flushes the data alone, never the file's size or its block map: the
/// cheapest durable write this disk offers.
#[derive(Clone)]
struct Log(std::sync::mpsc::Sender<(Vec<u8>, tokio::sync::oneshot::Sender<()>)>);

impl Log {
    const RING: u64 = 16 << 20;

    fn open(path: &str) -> std::io::Result<Log> {
        use std::{io::Write as _, os::unix::fs::FileExt as _};
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(path)?;
        file.write_all(&vec![0; Self::RING as usize])?;
        file.sync_all()?;
        let (tx, rx) = std::sync::mpsc::channel::<(Vec<u8>, tokio::sync::oneshot::Sender<()>)>();
        std::thread::spawn(move || {
            let mut at = 0u64;
            let mut batch = Vec::new();
            while let Ok(first) = rx.recv() {
                batch.push(first);
                batch.extend(rx.try_iter());
                let bytes: Vec<u8> = batch.iter().flat_map(|(b, _)| b.iter().copied()).collect();
                if at + bytes.len() as u64 > Self::RING {
                    at = 0;
                }
                if file
                    .write_all_at(&bytes, at)
                    .and_then(|()| file.sync_data())
                    .is_err()
                {
                    return;
                }
                at += bytes.len() as u64;
                for (_, done) in batch.drain(..) {
                    let _ = done.send(());
                }
            }
        });
        Ok(Log(tx))
    }

    async fn append(&self, record: &str) {
        let (done, wait) = tokio::sync::oneshot::channel();
        if self
            .0
            .send((format!("{record}\n").into_bytes(), done))
            .is_ok()
        {
            let _ = wait.await;
        }
    }
}

async fn server(addr: &str, log: Option<Log>) -> Result<(), String> {
    let listener = TcpListener::bind(addr).await.map_err(|e| e.to_string())?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listening {local}");
    let pairs = Pairs::default();
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let pairs = Arc::clone(&pairs);
        let log = log.clone();
        tokio::spawn(async move {
            let _ = tcp.set_nodelay(true);
            if let Ok(ws) = tokio_tungstenite::accept_async(tcp).await {
                relay(ws, &pairs, log.as_ref()).await;
            }
        });
    }
}

/// One client: its first frame is `<pair> <side>`; then every frame is answered, and moves
/// go to the other side too. A writer task drains the socket's outbox, queued frames in one
/// write, as Triad's WebSocket task does.
async fn relay(ws: WebSocketStream<TcpStream>, pairs: &Pairs, log: Option<&Log>) {
    let (mut sink, mut stream) = ws.split();
    let Some(Ok(Message::Text(hello))) = stream.next().await else {
        return;
    };
    let mut words = hello.split(' ').map(str::parse::<u64>);
    let (Some(Ok(pair)), Some(Ok(side @ 0..=1))) = (words.next(), words.next()) else {
        return;
    };
    let side = side as usize;
    let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
    pairs
        .lock()
        .expect("a relay task panicked")
        .entry(pair)
        .or_default()[side] = Some(tx.clone());
    let writer = tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            let mut ok = sink.feed(m).await.is_ok();
            while let (true, Ok(m)) = (ok, rx.try_recv()) {
                ok = sink.feed(m).await.is_ok();
            }
            if !ok || sink.flush().await.is_err() {
                break;
            }
        }
    });
    while let Some(Ok(message)) = stream.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        match text.as_bytes().first() {
            Some(b'U') => {}
            Some(b'R') => {
                let _ = tx.send(Message::text(format!(
                    r#"{{"type":"reply","to":"{text}"}}"#
                )));
            }
            _ => {
                if let Some(log) = log {
                    log.append(&text).await;
                }
                let other = pairs.lock().expect("a relay task panicked")[&pair][1 - side].clone();
                if let Some(other) = other {
                    let _ = other.send(Message::text(format!(
                        r#"{{"type":"event","move":{text}}}"#
                    )));
                }
                let _ = tx.send(Message::text(format!(r#"{{"type":"ack","of":{text}}}"#)));
            }
        }
    }
    writer.abort();
}

/// utime and stime of a process, in clock ticks.
fn cpu_ticks(pid: u64) -> Result<(u64, u64), String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| e.to_string())?;
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or("a short /proc stat")
    };
    Ok((field(11)?, field(12)?))
}

async fn next_frame(ws: &mut Ws) -> Result<(), String> {
    match ws.next().await {
        Some(Ok(_)) => Ok(()),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("the server closed a socket".to_owned()),
    }
}

async fn send(ws: &mut Ws, text: String) -> Result<(), String> {
    ws.send(Message::text(text))
        .await
        .map_err(|e| e.to_string())
}

/// One pair's games; the move latencies in ms.
async fn play(mut two: [Ws; 2], games: u64, setup: bool) -> Result<Vec<f64>, String> {
    let mut latencies = Vec::new();
    for game in 0..games {
        if setup {
            // The challenge: answered, and a frame on the challenged's inbox.
            send(&mut two[0], "{}".to_owned()).await?;
            next_frame(&mut two[0]).await?;
            next_frame(&mut two[1]).await?;
            // The acceptance and the two subscriptions.
            for side in [1, 0, 1] {
                send(&mut two[side], "R".to_owned()).await?;
                next_frame(&mut two[side]).await?;
            }
        }
        for k in 0..7 + game % 2 {
            let (a, b) = two.split_at_mut(1);
            let (me, opponent) = if k % 2 == 0 {
                (&mut a[0], &mut b[0])
            } else {
                (&mut b[0], &mut a[0])
            };
            let sent = Instant::now();
            send(me, format!(r#"{{"cell":{},"seq":{}}}"#, k % 9, k + 1)).await?;
            next_frame(opponent).await?;
            latencies.push(sent.elapsed().as_secs_f64() * 1000.0);
            next_frame(me).await?;
        }
        if setup {
            for ws in &mut two {
                send(ws, "U".to_owned()).await?;
            }
        }
    }
    Ok(latencies)
}

async fn client(
    addr: &str,
    pairs: u64,
    games: u64,
    setup: bool,
    pid: Option<u64>,
) -> Result<(), String> {
    let mut sockets = Vec::new();
    for pair in 0..pairs {
        let mut two = Vec::new();
        for side in 0..2 {
            let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/"))
                .await
                .map_err(|e| e.to_string())?;
            send(&mut ws, format!("{pair} {side}")).await?;
            two.push(ws);
        }
        sockets.push(<[Ws; 2]>::try_from(two).map_err(|_| "two sockets")?);
    }
    // Let the server register every socket before the clock starts.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = pid.map(cpu_ticks).transpose()?;
    let started = Instant::now();
    let tasks: Vec<_> = sockets
        .into_iter()
        .map(|two| tokio::spawn(play(two, games, setup)))
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.map_err(|e| e.to_string())??);
    }
    let seconds = started.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let n = latencies.len();
    let all_games = (pairs * games) as f64;
    print!(
        "pairs {pairs}, games {all_games}, setup {setup}: {:.0} games/s, move p50 {:.2} ms, p99 {:.2} ms",
        all_games / seconds,
        latencies[n / 2],
        latencies[(n * 99).div_ceil(100) - 1],
    );
    if let (Some(pid), Some((user0, system0))) = (pid, before) {
        let (user, system) = cpu_ticks(pid)?;
        // Clock ticks are 10 ms (USER_HZ 100 on Linux).
        let per_game = |ticks: u64| ticks as f64 * 10.0 / all_games;
        print!(
            "; server CPU per game {:.3} ms (user {:.3}, system {:.3})",
            per_game(user + system - user0 - system0),
            per_game(user - user0),
            per_game(system - system0)
        );
    }
    println!();
    Ok(())
}
