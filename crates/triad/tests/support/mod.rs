//! The shared harness of the full-stack tests: the real `triad serve` binary on a real
//! socket, each test with its own SQLite file in a temporary directory and the dev clock.
//!
//! Every wait is bounded and the server process is killed when its [`Server`] is dropped,
//! so a failing test never hangs and never leaves a process behind. When a test panics, the
//! server's log is printed.

#![allow(dead_code)]

use std::{
    io::{BufRead, BufReader, Write as _},
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use futures_util::{SinkExt, StreamExt};
use rand::{rand_core::UnwrapErr, rngs::SysRng};
use reqwest::Method;
use serde_json::{Value, json};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, tungstenite::Message};
use triad_identity::KeyFile;

/// The longest any single wait may take before the test fails.
pub(crate) const WAIT: Duration = Duration::from_secs(20);

/// A stake: one "ether" of the SOS contract, scaled down.
pub(crate) const E: u64 = 1_000_000;

/// A fresh Ed25519 key. The harness remembers it, so that a server started with its
/// address as the owner can move the dev clock (only the owner may).
pub(crate) fn new_key() -> KeyFile {
    let key = KeyFile::generate(&mut UnwrapErr(SysRng));
    known_keys()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(key.address_string(), key.clone());
    key
}

/// Every key [`new_key`] made, by address.
fn known_keys() -> &'static std::sync::Mutex<std::collections::HashMap<String, KeyFile>> {
    static KEYS: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, KeyFile>>> =
        std::sync::OnceLock::new();
    KEYS.get_or_init(Default::default)
}

/// The key of an address [`new_key`] made.
pub(crate) fn key_of(address: &str) -> Option<KeyFile> {
    known_keys()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(address)
        .cloned()
}

/// `triad serve` on a database in `dir`, with the dev clock, the owner, limits high enough
/// for bursts from one address, and nothing from the environment.
/// An empty `owner` passes no `--owner`.
pub(crate) fn serve_command(dir: &Path, owner: &str, extra: &[String]) -> Command {
    serve_command_on(dir, &dir.join("triad.db"), owner, extra)
}

/// [`serve_command`] with the database at `db` (another filesystem, say).
pub(crate) fn serve_command_on(dir: &Path, db: &Path, owner: &str, extra: &[String]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_triad"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("TRIAD_") {
            cmd.env_remove(name);
        }
    }
    cmd.arg("serve");
    // The defaults, unless the test names its own (a fixed port, a PostgreSQL database).
    if !extra.iter().any(|a| a == "--addr") {
        cmd.args(["--addr", "127.0.0.1:0"]);
    }
    if !extra.iter().any(|a| a == "--database") {
        cmd.arg("--database").arg(db);
    }
    cmd.args(["--dev-clock", "true"]);
    // Limits high enough for many clients on one address, unless the test sets its own.
    for (flag, value) in [
        ("--rate-per-ip", "1000000"),
        ("--rate-per-address", "1000000"),
        ("--rate-burst", "1000000"),
        ("--max-websockets-per-ip", "100000"),
        ("--max-connections-per-ip", "100000"),
        ("--max-long-polls-per-ip", "100000"),
        ("--replay-events-per-ip", "1000000000"),
        ("--log-lines-per-ip", "1000000"),
    ] {
        if !extra.iter().any(|a| a == flag) {
            cmd.args([flag, value]);
        }
    }
    cmd.args(extra)
        .env("TRIAD_LOG", "info,sqlx=warn")
        // No key file of the person running the tests may become the owner.
        .env("TRIAD_KEY_FILE", dir.join("no-such-key.json"))
        .stdin(Stdio::null());
    if !owner.is_empty() {
        cmd.args(["--owner", owner]);
    }
    cmd
}

/// Runs a command to its end (bounded by [`WAIT`]) with its output in files in `dir`:
/// `(status, stdout, stderr)`.
pub(crate) async fn run_to_exit(
    mut cmd: Command,
    dir: &Path,
    name: &str,
) -> (ExitStatus, String, String) {
    let out_path = dir.join(format!("{name}.out"));
    let err_path = dir.join(format!("{name}.err"));
    let mut child = cmd
        .stdout(std::fs::File::create(&out_path).expect("a file"))
        .stderr(std::fs::File::create(&err_path).expect("a file"))
        .spawn()
        .expect("the command starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the command can be waited for") {
            break status;
        }
        if started.elapsed() > WAIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name} did not end within {WAIT:?}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    (
        status,
        std::fs::read_to_string(out_path).unwrap_or_default(),
        std::fs::read_to_string(err_path).unwrap_or_default(),
    )
}

/// A running `triad serve`, killed on drop.
pub(crate) struct Server {
    dir: PathBuf,
    db: PathBuf,
    owner: String,
    extra: Vec<String>,
    env: Vec<(String, String)>,
    /// A command the server runs under (`prlimit --nofile=…`, say), if any.
    wrapper: Vec<String>,
    child: Option<Child>,
    runs: u32,
    /// The HTTP API of the current process.
    pub(crate) api: Api,
}

impl Server {
    /// Starts a server on a new database in `dir`.
    pub(crate) async fn start(dir: &Path, owner: &str, extra: &[&str]) -> Server {
        Server::start_with_env(dir, owner, extra, &[]).await
    }

    /// Starts a server with extra environment variables.
    pub(crate) async fn start_with_env(
        dir: &Path,
        owner: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        Server::start_on(dir, &dir.join("triad.db"), owner, extra, env).await
    }

    /// Starts a server with its database at `db`; its logs stay in `dir`.
    pub(crate) async fn start_on(
        dir: &Path,
        db: &Path,
        owner: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        let mut server = Server {
            dir: dir.to_owned(),
            db: db.to_owned(),
            owner: owner.to_owned(),
            extra: extra.iter().map(|s| (*s).to_owned()).collect(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            wrapper: Vec::new(),
            child: None,
            runs: 0,
            api: Api::new(String::new()),
        };
        server.spawn().await;
        server
    }

    /// Starts a server on a new database in `dir`, run by `wrapper` (a command and its
    /// arguments, given the server's command line after them: `prlimit --nofile=200`).
    pub(crate) async fn start_under(
        dir: &Path,
        owner: &str,
        extra: &[&str],
        wrapper: &[&str],
    ) -> Server {
        let mut server = Server {
            dir: dir.to_owned(),
            db: dir.join("triad.db"),
            owner: owner.to_owned(),
            extra: extra.iter().map(|s| (*s).to_owned()).collect(),
            env: Vec::new(),
            wrapper: wrapper.iter().map(|s| (*s).to_owned()).collect(),
            child: None,
            runs: 0,
            api: Api::new(String::new()),
        };
        server.spawn().await;
        server
    }

    /// The database file.
    pub(crate) fn db(&self) -> PathBuf {
        self.db.clone()
    }

    /// The process id of the current process.
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().expect("the server runs").id()
    }

    async fn spawn(&mut self) {
        assert!(self.child.is_none(), "the server already runs");
        self.runs += 1;
        let log_path = self.dir.join(format!("server-{}.log", self.runs));
        let log = std::fs::File::create(&log_path).expect("a log file");
        let mut cmd = serve_command_on(&self.dir, &self.db, &self.owner, &self.extra);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some((program, args)) = self.wrapper.split_first() {
            let mut wrapped = Command::new(program);
            wrapped
                .args(args)
                .arg(cmd.get_program())
                .args(cmd.get_args());
            for (name, value) in cmd.get_envs() {
                match value {
                    Some(value) => wrapped.env(name, value),
                    None => wrapped.env_remove(name),
                };
            }
            wrapped.stdin(Stdio::null());
            cmd = wrapped;
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("the triad binary starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            // Keep reading to the end, so the server never writes to a closed pipe.
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(addr) = line.strip_prefix("Triad is listening on http://") {
                    let _ = tx.send(addr.trim().to_owned());
                }
            }
        });
        self.child = Some(child);
        let started = Instant::now();
        let addr = loop {
            match rx.try_recv() {
                Ok(addr) => break addr,
                Err(mpsc::TryRecvError::Empty) if started.elapsed() < WAIT => {
                    let exited = self
                        .child
                        .as_mut()
                        .and_then(|c| c.try_wait().ok().flatten());
                    if let Some(status) = exited {
                        self.child = None;
                        panic!(
                            "the server exited ({status}) before listening:\n{}",
                            std::fs::read_to_string(&log_path).unwrap_or_default()
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(_) => panic!(
                    "the server did not say where it listens within {WAIT:?}:\n{}",
                    std::fs::read_to_string(&log_path).unwrap_or_default()
                ),
            }
        };
        self.api = Api::new(format!("http://{addr}"));
        self.api.clock_owner = key_of(&self.owner).map(std::sync::Arc::new);
    }

    /// Kills the process with SIGKILL: no shutdown, no checkpoint, requests cut off.
    pub(crate) fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("SIGKILL is delivered");
            child.wait().expect("the killed server is reaped");
        }
    }

    /// Sends SIGTERM (with the `kill` command: no extra dependency for signals).
    pub(crate) fn sigterm(&self) {
        let pid = self.pid();
        let sent = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -TERM {pid} failed");
    }

    /// Sends SIGTERM and waits (bounded) for the process to exit.
    pub(crate) async fn terminate(&mut self) -> ExitStatus {
        self.sigterm();
        self.wait_exit().await
    }

    /// Waits (bounded) for the process to exit by itself.
    pub(crate) async fn wait_exit(&mut self) -> ExitStatus {
        let started = Instant::now();
        loop {
            let child = self.child.as_mut().expect("the server runs");
            if let Some(status) = child.try_wait().expect("the server can be waited for") {
                self.child = None;
                return status;
            }
            assert!(
                started.elapsed() < WAIT,
                "the server did not exit within {WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Starts the server again on the same database (after a kill or a shutdown).
    pub(crate) async fn restart(&mut self) {
        self.kill9();
        self.spawn().await;
    }

    /// Starts the server again on the same database, with `extra` flags for this run only
    /// (`--dev-clock-start-ms`, say).
    pub(crate) async fn restart_with(&mut self, extra: &[&str]) {
        self.kill9();
        let kept = self.extra.clone();
        self.extra.extend(extra.iter().map(|s| (*s).to_owned()));
        self.spawn().await;
        self.extra = kept;
    }

    /// Every log this server wrote, oldest run first.
    pub(crate) fn logs(&self) -> String {
        (1..=self.runs)
            .map(|n| {
                let path = self.dir.join(format!("server-{n}.log"));
                format!(
                    "--- {} ---\n{}",
                    path.display(),
                    std::fs::read_to_string(&path).unwrap_or_default()
                )
            })
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            let logs = self.logs();
            // The end of the logs is what matters; keep the output readable.
            let tail: String = logs
                .chars()
                .rev()
                .take(20_000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            eprintln!("server logs (tail):\n{tail}");
        }
    }
}

/// An HTTP response: its status, `Retry-After` and JSON body (`null` when not JSON).
#[derive(Debug)]
pub(crate) struct Resp {
    pub(crate) status: u16,
    pub(crate) retry_after: Option<u64>,
    pub(crate) body: Value,
}

impl Resp {
    /// The body of a successful response.
    #[track_caller]
    pub(crate) fn ok(self) -> Value {
        assert!(
            (200..300).contains(&self.status),
            "expected success, got {} {}",
            self.status,
            self.body
        );
        self.body
    }

    /// Asserts an error with this HTTP status and API code.
    #[track_caller]
    pub(crate) fn expect_error(&self, status: u16, code: u64) {
        assert_eq!(
            (self.status, self.body["code"].as_u64()),
            (status, Some(code)),
            "{}",
            self.body
        );
    }
}

/// The HTTP API of one server process. Cheap to clone, for concurrent requests.
#[derive(Clone, Debug)]
pub(crate) struct Api {
    http: reqwest::Client,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
    /// The owner's key, when the harness made it: [`Api::advance`] signs in with it.
    pub(crate) clock_owner: Option<std::sync::Arc<KeyFile>>,
}

impl Api {
    pub(crate) fn new(base: String) -> Api {
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(WAIT)
            .connect_timeout(Duration::from_secs(5))
            .build()
            .expect("an HTTP client");
        Api {
            http,
            base,
            clock_owner: None,
        }
    }

    /// Sends a request; `Err` when no response came (the server died, say).
    pub(crate) async fn try_send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Resp, reqwest::Error> {
        self.try_send_keyed(method, path, token, body, None).await
    }

    /// [`Api::try_send`] with an `Idempotency-Key`.
    pub(crate) async fn try_send_keyed(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
        key: Option<&str>,
    ) -> Result<Resp, reqwest::Error> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(key) = key {
            request = request.header("idempotency-key", key);
        }
        if let Some(body) = body {
            request = request.json(body);
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

    async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Resp {
        let what = format!("{method} {path}");
        self.try_send(method, path, token, body)
            .await
            .unwrap_or_else(|e| panic!("{what}: no response: {e}"))
    }

    pub(crate) async fn get(&self, path: &str, token: Option<&str>) -> Resp {
        self.send(Method::GET, path, token, None).await
    }

    pub(crate) async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> Resp {
        self.send(Method::POST, path, token, Some(body)).await
    }

    pub(crate) async fn delete(&self, path: &str, token: Option<&str>) -> Resp {
        self.send(Method::DELETE, path, token, None).await
    }

    /// A login challenge for `public_key` (hex), which must be issued.
    pub(crate) async fn login_challenge(&self, public_key: &str) -> Value {
        self.post(
            "/api/auth/challenge",
            None,
            &json!({ "public_key": public_key }),
        )
        .await
        .ok()
    }

    /// A login with `key`, with the raw answer to its last step (the challenge must succeed).
    pub(crate) async fn try_login(&self, key: &KeyFile) -> Resp {
        let public_key = key.public_key_hex();
        let challenge = self.login_challenge(&public_key).await;
        let message = challenge["message"].as_str().expect("a message to sign");
        let signature = triad_identity::sign_ed25519(key.signing_key(), message.as_bytes());
        self.post(
            "/api/auth/login",
            None,
            &json!({
                "challenge_id": challenge["challenge_id"],
                "public_key": public_key,
                "signature": signature,
            }),
        )
        .await
    }

    /// Logs in with `key`: challenge, sign the message's bytes, log in.
    pub(crate) async fn login(&self, key: &KeyFile) -> Player {
        let login = self.try_login(key).await.ok();
        let address = key.address_string();
        assert_eq!(login["address"], address.as_str());
        Player {
            address,
            token: login["token"].as_str().expect("a token").to_owned(),
        }
    }

    /// Logs in `n` new players.
    pub(crate) async fn players(&self, n: usize) -> Vec<Player> {
        futures_util::future::join_all((0..n).map(|_| async { self.login(&new_key()).await })).await
    }

    /// Moves the dev clock forward, as the owner (the only one who may), logged in afresh:
    /// an earlier jump may have outlived any session. The server must have been started
    /// with an owner made by [`new_key`].
    pub(crate) async fn advance(&self, ms: u64) -> u64 {
        let owner = self
            .clock_owner
            .as_ref()
            .expect("the dev clock needs an owner: start the server with a new_key()'s address");
        let owner = self.login(owner).await;
        let body = self
            .post(
                "/api/dev/clock",
                Some(&owner.token),
                &json!({ "advance_ms": ms }),
            )
            .await
            .ok();
        body["now_ms"].as_u64().expect("the clock's time")
    }

    /// `/api/me`.
    pub(crate) async fn me(&self, p: &Player) -> Value {
        self.get("/api/me", Some(&p.token)).await.ok()
    }

    /// A player's spendable balance.
    pub(crate) async fn balance(&self, p: &Player) -> u64 {
        amount(&self.me(p).await["balance"])
    }

    /// `/api/players/{address}`.
    pub(crate) async fn stats(&self, address: &str) -> Value {
        self.get(&format!("/api/players/{address}"), None)
            .await
            .ok()
    }

    /// `/api/matches/{id}`.
    pub(crate) async fn match_(&self, id: u64) -> Value {
        self.get(&format!("/api/matches/{id}"), None).await.ok()
    }

    /// Every event of a match from the log, oldest first.
    pub(crate) async fn match_events(&self, id: u64) -> Vec<Value> {
        let body = self
            .get(&format!("/api/matches/{id}/events?limit=1000"), None)
            .await
            .ok();
        body["events"].as_array().expect("events").clone()
    }

    /// The owner's view of the money: `(reserve, deposited, withdrawn)`.
    pub(crate) async fn reserve(&self, owner: &Player) -> (u64, u64, u64) {
        let r = self
            .get("/api/ledger/reserve", Some(&owner.token))
            .await
            .ok();
        (
            amount(&r["reserve"]),
            amount(&r["deposited"]),
            amount(&r["withdrawn"]),
        )
    }

    /// The owner credits `amount` to `to`.
    pub(crate) async fn deposit(&self, owner: &Player, to: &Player, amount: u64) -> Resp {
        self.post(
            "/api/ledger/deposit",
            Some(&owner.token),
            &json!({ "to": to.address, "amount": amount }),
        )
        .await
    }

    /// `a` challenges `b` (who accepts); `a` moves first. Returns the match id.
    pub(crate) async fn challenge_accepted(
        &self,
        a: &Player,
        b: &Player,
        game: &str,
        stake: u64,
    ) -> u64 {
        let issued = self
            .post(
                "/api/challenges",
                Some(&a.token),
                &json!({ "opponent": b.address, "game": game, "stake": stake, "first": "challenger" }),
            )
            .await
            .ok();
        let id = issued["match"]["id"].as_u64().expect("a match id");
        let accepted = self
            .post(
                &format!("/api/challenges/{id}/accept"),
                Some(&b.token),
                &json!({}),
            )
            .await
            .ok();
        assert_eq!(accepted["match"]["phase"], "ready");
        id
    }

    /// `p` joins the queue.
    pub(crate) async fn queue(&self, p: &Player, game: &str, stake: u64) -> Resp {
        self.post(
            "/api/queue",
            Some(&p.token),
            &json!({ "game": game, "stake": stake }),
        )
        .await
    }

    /// `a` waits in the queue and `b` joins: `a` moves first. Returns the match id.
    pub(crate) async fn queue_pair(&self, a: &Player, b: &Player, game: &str, stake: u64) -> u64 {
        let waiting = self.queue(a, game, stake).await.ok();
        assert_eq!(waiting["match"]["phase"], "waiting", "{waiting}");
        let id = waiting["match"]["id"].as_u64().expect("a match id");
        let started = self.queue(b, game, stake).await.ok();
        assert_eq!(started["match"]["id"].as_u64(), Some(id), "{started}");
        assert_eq!(started["match"]["phase"], "ready");
        assert_eq!(
            started["match"]["players"][0]["address"],
            a.address.as_str()
        );
        id
    }

    /// A move; the raw response.
    pub(crate) async fn try_move(&self, p: &Player, id: u64, m: Mv) -> Resp {
        self.post(
            &format!("/api/matches/{id}/moves"),
            Some(&p.token),
            &json!({ "seq": m.seq, "cell": m.cell, "mark": m.mark }),
        )
        .await
    }

    /// A move that must succeed; the match afterwards.
    pub(crate) async fn play(&self, p: &Player, id: u64, m: Mv) -> Value {
        self.try_move(p, id, m).await.ok()["match"].clone()
    }

    /// Claims a timeout; the raw response.
    pub(crate) async fn claim(&self, p: &Player, id: u64) -> Resp {
        self.post(
            &format!("/api/matches/{id}/claim-timeout"),
            Some(&p.token),
            &json!({}),
        )
        .await
    }

    /// The metrics page.
    pub(crate) async fn metrics(&self) -> String {
        let response = self
            .http
            .get(format!("{}/metrics", self.base))
            .send()
            .await
            .expect("metrics answer");
        assert!(response.status().is_success());
        response.text().await.expect("metrics text")
    }

    /// Polls `f` until it returns `Some`, at most [`WAIT`].
    pub(crate) async fn poll<T, F, Fut>(&self, what: &str, mut f: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Option<T>>,
    {
        let started = Instant::now();
        loop {
            if let Some(v) = f().await {
                return v;
            }
            assert!(started.elapsed() < WAIT, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

/// A logged-in player.
#[derive(Clone, Debug)]
pub(crate) struct Player {
    /// `0x` + 64 hex digits.
    pub(crate) address: String,
    /// The bearer token.
    pub(crate) token: String,
}

/// A move: the `seq` it makes, the cell, the mark.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Mv {
    pub(crate) seq: u8,
    pub(crate) cell: u8,
    pub(crate) mark: &'static str,
}

/// The `n`th move (1-based) of a script of `(cell, mark)`.
pub(crate) fn nth(script: &[(u8, &'static str)], n: u8) -> Mv {
    let (cell, mark) = script[usize::from(n - 1)];
    Mv { seq: n, cell, mark }
}

/// Tic-tac-toe: X (first) wins with the top row on move 5.
pub(crate) const TTT_TOP_ROW: [(u8, &str); 5] = [(0, "X"), (3, "O"), (1, "X"), (4, "O"), (2, "X")];

/// Tic-tac-toe: nobody can win before move 7, where X (first) wins with the bottom row.
pub(crate) const TTT_SLOW_WIN: [(u8, &str); 7] = [
    (0, "X"),
    (4, "O"),
    (8, "X"),
    (1, "O"),
    (7, "X"),
    (2, "O"),
    (6, "X"),
];

/// SOS: the first player wins on move 3 with the diagonal S-O-S.
pub(crate) const SOS_DIAGONAL: [(u8, &str); 3] = [(0, "S"), (4, "O"), (8, "S")];

/// SOS: nine Os, a draw (no S anywhere, so no SOS).
pub(crate) const SOS_ALL_O: [(u8, &str); 9] = [
    (0, "O"),
    (1, "O"),
    (2, "O"),
    (3, "O"),
    (4, "O"),
    (5, "O"),
    (6, "O"),
    (7, "O"),
    (8, "O"),
];

/// An amount from the API: a decimal string (or a number).
#[track_caller]
pub(crate) fn amount(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse().expect("an amount"),
        Value::Number(n) => n.as_u64().expect("an amount"),
        other => panic!("not an amount: {other}"),
    }
}

/// The event's kind name (`moved`, `game_ended`, …).
pub(crate) fn kind(event: &Value) -> &str {
    event["kind"]["type"].as_str().unwrap_or("")
}

/// `amount * bps / 10_000`, rounded down as the engine does.
pub(crate) fn share(amount: u64, bps: u64) -> u64 {
    amount * bps / 10_000
}

/// A WebSocket client of `/api/ws`.
pub(crate) struct Ws {
    inner: WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>,
}

impl Ws {
    /// Connects and logs in with `token` in the first message (as Triad's own clients do:
    /// a URL, where proxies log it, never carries the token).
    pub(crate) async fn connect(api: &Api, token: &str) -> Ws {
        let mut ws = Ws::open(api, "/api/ws").await;
        ws.send(json!({ "type": "auth", "token": token })).await;
        let authed = ws.next_json().await;
        assert_eq!(authed["type"], "authed", "{authed}");
        ws
    }

    /// Connects with the token in the URL (`?token=`), the form kept for old clients.
    pub(crate) async fn connect_with_url_token(api: &Api, token: &str) -> Ws {
        Ws::open(api, &format!("/api/ws?token={token}")).await
    }

    /// Connects without a login token: a socket that never logged in.
    pub(crate) async fn connect_anonymous(api: &Api) -> Ws {
        Ws::open(api, "/api/ws").await
    }

    /// Connects to `path_and_query` on the server of `api`.
    async fn open(api: &Api, path_and_query: &str) -> Ws {
        let url = format!(
            "{}{path_and_query}",
            api.base.replacen("http://", "ws://", 1)
        );
        let (inner, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(url))
            .await
            .expect("the WebSocket connects in time")
            .expect("the WebSocket connects");
        Ws { inner }
    }

    /// Sends a JSON message.
    pub(crate) async fn send(&mut self, v: Value) {
        tokio::time::timeout(WAIT, self.inner.send(Message::text(v.to_string())))
            .await
            .expect("sent in time")
            .expect("sent");
    }

    /// The next message that is not a ping or pong; `None` when the stream ended.
    pub(crate) async fn recv(&mut self) -> Option<Message> {
        loop {
            let next = tokio::time::timeout(WAIT, self.inner.next())
                .await
                .expect("a WebSocket message in time");
            match next {
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(m)) => return Some(m),
                Some(Err(_)) | None => return None,
            }
        }
    }

    /// The next JSON text message.
    pub(crate) async fn next_json(&mut self) -> Value {
        match self.recv().await {
            Some(Message::Text(text)) => serde_json::from_str(&text).expect("JSON"),
            other => panic!("expected a text message, got {other:?}"),
        }
    }

    /// The next frame, which must be an event; returns the event.
    pub(crate) async fn next_event(&mut self) -> Value {
        let frame = self.next_json().await;
        assert_eq!(frame["type"], "event", "{frame}");
        frame["event"].clone()
    }

    /// Waits for an event of `kind`, skipping others; returns it and the skipped ones.
    pub(crate) async fn until_kind(&mut self, wanted: &str) -> (Value, Vec<Value>) {
        let mut skipped = Vec::new();
        loop {
            let event = self.next_event().await;
            if kind(&event) == wanted {
                return (event, skipped);
            }
            skipped.push(event);
        }
    }

    /// Subscribes to `topic` after `since`: returns the catch-up events from the log and
    /// the `seq` of the `subscribed` message. A catch-up in pages (`more`) is followed
    /// to its end, as clients do.
    pub(crate) async fn subscribe(&mut self, topic: &str, since: u64) -> (Vec<Value>, u64) {
        let mut events = Vec::new();
        let mut since = since;
        loop {
            self.send(json!({ "type": "subscribe", "topic": topic, "since": since }))
                .await;
            loop {
                let frame = self.next_json().await;
                match frame["type"].as_str() {
                    Some("event") => events.push(frame["event"].clone()),
                    Some("subscribed") => {
                        return (events, frame["seq"].as_u64().expect("a seq"));
                    }
                    Some("more") => {
                        since = frame["seq"].as_u64().expect("a seq");
                        break;
                    }
                    _ => panic!("unexpected message while subscribing: {frame}"),
                }
            }
        }
    }

    /// Waits for the server's close frame; returns its code.
    pub(crate) async fn expect_close(&mut self) -> u16 {
        loop {
            match self.recv().await {
                Some(Message::Close(frame)) => {
                    return frame.map_or(1005, |f| u16::from(f.code));
                }
                Some(other) => {
                    // Events published just before the shutdown may come first.
                    assert!(matches!(other, Message::Text(_)), "{other:?}");
                }
                None => panic!("the WebSocket ended without a close frame"),
            }
        }
    }

    /// Closes from the client's side, without waiting.
    pub(crate) async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(2), self.inner.close(None)).await;
    }
}

/// The sequence numbers of events, asserting they strictly increase.
#[track_caller]
pub(crate) fn seqs_increasing(events: &[Value]) -> Vec<u64> {
    let seqs: Vec<u64> = events
        .iter()
        .map(|e| e["seq"].as_u64().expect("a seq"))
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "sequence numbers must strictly increase: {seqs:?}"
    );
    seqs
}

/// A small tmpfs, unmounted on drop.
pub(crate) struct Tmpfs {
    pub(crate) path: PathBuf,
}

impl Tmpfs {
    pub(crate) fn mount(path: &Path, bytes: u64) -> Tmpfs {
        std::fs::create_dir_all(path).expect("a mount point");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}")])
            .arg("tmpfs")
            .arg(path)
            .output()
            .expect("`mount` runs");
        assert!(
            out.status.success(),
            "the full-disk test mounts a {bytes}-byte tmpfs, which needs root (CAP_SYS_ADMIN): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs {
            path: path.to_owned(),
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// Fills the filesystem of `dir` to the last byte, then frees `margin` bytes: the file.
pub(crate) fn fill(dir: &Path, margin: u64) -> PathBuf {
    const ENOSPC: i32 = 28;
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).expect("a filler file");
    let chunk = vec![0xA5u8; 64 * 1024];
    for size in [64 * 1024, 4096, 1] {
        loop {
            match file.write_all(&chunk[..size]) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(ENOSPC) => break,
                Err(e) => panic!("filling the disk: {e}"),
            }
        }
    }
    let len = file.metadata().expect("its size").len();
    file.set_len(len.saturating_sub(margin))
        .expect("the filler shrinks");
    path
}

/// The PostgreSQL server the test command started (`TRIAD_TEST_POSTGRES`, a URL without a
/// database), for the tests that run nodes on it.
pub(crate) fn postgres_base() -> String {
    std::env::var("TRIAD_TEST_POSTGRES")
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| v.trim_end_matches('/').to_owned())
        .unwrap_or_else(|| {
            panic!(
                "TRIAD_TEST_POSTGRES is not set: this test needs a PostgreSQL server. Run it with \
                 `cargo xtask test` or `cargo xtask pg`, which start one and set it"
            )
        })
}

/// A new database on [`postgres_base`] for one test, named by the process and `tag`.
pub(crate) async fn fresh_database(tag: &str) -> String {
    use sqlx::Connection as _;
    let base = postgres_base();
    let prefix = std::env::var("TRIAD_TEST_DB_PREFIX").unwrap_or_else(|_| "triad_t".into());
    let name = format!("{prefix}_{tag}_{}", std::process::id());
    let mut admin = sqlx::PgConnection::connect(&format!("{base}/postgres"))
        .await
        .unwrap_or_else(|e| panic!("cannot connect to PostgreSQL at {base}: {e}"));
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap();
    format!("{base}/{name}")
}

/// A port free on 127.0.0.1 at the time of asking.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}
