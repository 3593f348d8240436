//! `triad serve`: the HTTP and WebSocket API over the match engine, durable on SQLite (or
//! PostgreSQL).
//!
//! [`serve`] opens the database, rebuilds the engine from its event log, and serves
//! [`api::router`] until SIGINT or SIGTERM, then shuts down gracefully: it stops accepting,
//! finishes in-flight commands, closes every WebSocket with a close frame and checkpoints
//! the database.
//!
//! The layers, from the outside in: [`api`] only translates, requests into calls of the
//! services below and their results back into answers; [`core::Core`] owns the engine,
//! batches commands and commits each batch's events in one transaction before answering;
//! [`relay::Relay`] is the agents' relay, [`sessions::Sessions`] logins and sessions,
//! [`profiles::Profiles`] players' display names and bot marks;
//! [`store::Store`] is the event log, its projections and every other table (it runs every
//! SQL statement); [`hub::Hub`] fans committed events out to WebSocket subscribers;
//! [`cluster`] follows the other nodes on a shared database. [`web`] serves the web app,
//! embedded in the binary, at `/`. Data flows one way, and no module below [`api`] imports
//! from it.

pub mod api;
pub mod bounds;
pub mod cluster;
pub mod config;
pub mod core;
pub mod hub;
pub mod listen;
pub mod picture;
pub mod profiles;
pub mod relay;
pub mod sessions;
pub mod store;
pub mod transcript;
pub mod web;

use std::{
    sync::{Arc, OnceLock, atomic::AtomicU64},
    time::Duration,
};

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;

pub use crate::config::{ServeArgs, Settings};
use crate::{
    api::{ApiState, Limits},
    core::{Clock, Core},
    hub::Hub,
    sessions::Sessions,
    store::Store,
};

/// Why the server could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A setting is wrong.
    #[error("{0}")]
    Settings(String),
    /// The database could not be opened or read.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// The address could not be bound or served.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The core, which owns the engine, stopped on a fault it could not contain (the log
    /// has the panic): the server stopped rather than answer every command with 503.
    #[error("the core stopped on a fault (see the panic above in the log); the server stopped")]
    CoreStopped,
}

/// The process-wide Prometheus recorder (a recorder can be installed once per process).
fn prometheus() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new().build_recorder();
            let handle = recorder.handle();
            if metrics::set_global_recorder(recorder).is_ok() {
                core::describe_metrics();
            }
            // Histogram samples pile up until drained: drain them every few seconds, so
            // memory stays flat when nobody scrapes /metrics (RELIABILITY.md, load soak).
            let upkeep = handle.clone();
            let _ = std::thread::Builder::new()
                .name("metrics-upkeep".to_owned())
                .spawn(move || {
                    loop {
                        std::thread::sleep(std::time::Duration::from_secs(5));
                        upkeep.run_upkeep();
                    }
                });
            handle
        })
        .clone()
}

/// A running server's parts, for tests and for [`serve`].
#[derive(Debug)]
pub struct Running {
    /// The API's state: the services and the settings.
    pub state: ApiState,
    core_task: tokio::task::JoinHandle<()>,
}

/// Opens the database, rebuilds the engine, and starts the core.
///
/// # Errors
/// When the settings are wrong or the database cannot be opened.
pub async fn start(mut settings: Settings) -> Result<Running, ServeError> {
    settings.validate().map_err(ServeError::Settings)?;
    // Each per-client cap at most a quarter of its whole (`serve` has already fitted the
    // connection limits to the open files).
    settings.fit(None);
    let store = Store::open(&settings.database).await?;
    // The engine's seed is drawn once and kept, so a replay makes the same choices.
    let seed = if settings.seed != 0 {
        settings.seed
    } else {
        let mut bytes = [0u8; 8];
        rand::TryRng::try_fill_bytes(&mut rand::rngs::SysRng, &mut bytes)
            .map_err(|e| ServeError::Settings(format!("no randomness for the engine seed: {e}")))?;
        u64::from_le_bytes(bytes)
    };
    let seed: u64 = store
        .setting_or_insert("engine_seed", &seed.to_string())
        .await?
        .parse()
        .map_err(|_| ServeError::Settings("the stored engine seed is not a number".into()))?;
    // The key of the login challenges' MACs: drawn once per database, so that every node
    // on a shared database checks the others' challenges.
    let challenge_key = store
        .setting_or_insert(
            sessions::CHALLENGE_KEY_SETTING,
            &Sessions::new_key().map_err(ServeError::Settings)?,
        )
        .await?;
    // The key that signs the matches' transcripts: drawn once per database, so that every
    // node of a cluster signs with it and a transcript verifies after a restart.
    let transcript_key = store
        .setting_or_insert(
            transcript::KEY_SETTING,
            &Sessions::new_key().map_err(ServeError::Settings)?,
        )
        .await?;
    let transcript_key = transcript::signing_key(&transcript_key).map_err(ServeError::Settings)?;
    // Events written before the clock swept memory (every event swept it as of its time)
    // replay as they were written: the first event the clock sweeps for is kept, the next
    // one's when this database was first opened by a version whose clock sweeps.
    let first_unwritten = store.head_seq().await? + 1;
    let from_seq = async |name: &str| -> Result<u64, ServeError> {
        store
            .setting_or_insert(name, &first_unwritten.to_string())
            .await?
            .parse()
            .map_err(|_| ServeError::Settings(format!("the stored {name} is not a number")))
    };
    let mut config = settings.engine_config(seed);
    config.swept_by_clock_from_seq = from_seq("swept_by_clock_from_seq").await?;
    // Likewise the tournaments that ended before the store archived them stay in memory,
    // the one place that holds them: the archive is written from the next event on.
    config.tournaments_archived_from_seq = from_seq("tournaments_archived_from_seq").await?;
    let engine = store.load_engine(config).await?;
    // When the service was last alive, read before this node beats (`core::outage`).
    let heartbeat = store.heartbeat().await?;
    if engine.config().owner.is_zero() {
        tracing::warn!(
            "no owner is set (--owner): deposits and collecting the reserve are disabled"
        );
    }
    let clock = Arc::new(if settings.dev_clock {
        tracing::warn!(
            "the dev clock is on: POST /api/dev/clock moves time; never use this in production"
        );
        // A clock that stands still unless moved stands still over a restart too: it goes
        // on where the last run left it (its last beat or event), so a restart is no
        // outage, and a test that moved the clock finds its deadlines where it left them.
        // A test makes an outage by starting it later (`--dev-clock-start-ms`).
        let start_ms = match (settings.dev_clock_start_ms, heartbeat) {
            (0, Some(h)) => h.alive_ms,
            (0, None) => Clock::System.now_ms(),
            (start_ms, _) => start_ms,
        };
        Clock::Manual(AtomicU64::new(start_ms.max(engine.clock_ms())))
    } else {
        Clock::System
    });
    let hub = Hub::default();
    let sessions = Sessions::new(
        store.clone(),
        hub.clone(),
        clock.clone(),
        &challenge_key,
        settings.session_ttl_ms,
    )
    .map_err(ServeError::Settings)?;
    let profiles = Arc::new(profiles::Profiles::new(store.clone(), clock.clone()));
    let (core, core_task) = Core::start(engine, store.clone(), hub.clone(), clock, heartbeat);
    // Before serving: an outage of the whole service is given back to the clocks first.
    core.clocks_resumed().await;
    let relay = Arc::new(relay::Relay::new(core.clone(), store.clone(), hub.clone()));
    let openapi = api::openapi();
    let state = ApiState::new(api::Shared {
        core,
        store,
        hub,
        limits: Arc::new(Limits::new(&settings)),
        websockets: bounds::Shares::new(
            "WebSockets",
            settings.max_websockets_per_ip,
            settings.max_websockets,
        ),
        long_polls: bounds::Shares::new(
            "long-polls",
            settings.max_long_polls_per_ip,
            // Each holds a request in flight: the per-IP share bounds who holds them.
            settings.max_in_flight_requests,
        ),
        a2a_streams: bounds::Shares::new(
            "A2A streams",
            settings.max_a2a_streams_per_ip,
            settings.max_websockets,
        ),
        settings: Arc::new(settings),
        sessions: Arc::new(sessions),
        profiles,
        metrics: prometheus(),
        openapi: Arc::new(openapi),
        relay,
        transcript_key: Arc::new(transcript_key),
    });
    if state.store.is_shared() {
        tokio::spawn(cluster::follow(cluster::Node {
            core: state.core.clone(),
            store: state.store.clone(),
            hub: state.hub.clone(),
            relay: state.relay.clone(),
            sessions: state.sessions.clone(),
        }));
    }
    tokio::spawn(state.sessions.clone().sweep_every());
    let limits = state.limits.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(60)).await;
            limits.shrink();
            limits.log_lines.report();
        }
    });
    Ok(Running { state, core_task })
}

impl Running {
    /// Stops the core after the last command and flushes the database.
    pub async fn stop(self) {
        let Running { state, core_task } = self;
        state.hub.close_all();
        let store = state.store.clone();
        state.core.shut_down();
        drop(state);
        if tokio::time::timeout(Duration::from_secs(10), core_task)
            .await
            .is_err()
        {
            tracing::warn!("the core did not stop within 10 s");
        }
        store.close().await;
    }
}

/// Installs the SIGINT and SIGTERM handlers now and returns a future that waits for either.
/// They must be in place before the server says it listens: a signal that came before a
/// handler would kill the process at once, with no graceful shutdown.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            match (term, interrupt) {
                (Ok(mut term), Ok(mut interrupt)) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = interrupt.recv() => {}
                    }
                }
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Runs `triad serve` until SIGINT or SIGTERM.
///
/// # Errors
/// When the server cannot start.
pub async fn serve(mut settings: Settings) -> Result<(), ServeError> {
    // Every connection is a file descriptor: take all the process may have, and hold no
    // more connections than fit in it, with room for the database and the files.
    let open_files = bounds::open_files_limit();
    for lowered in settings.fit(open_files) {
        tracing::warn!("{lowered}");
    }
    tracing::info!(
        open_files,
        max_connections = settings.max_connections,
        max_connections_per_ip = settings.max_connections_per_ip,
        max_websockets = settings.max_websockets,
        max_websockets_per_ip = settings.max_websockets_per_ip,
        "connection limits"
    );
    let listener = TcpListener::bind(settings.addr).await?;
    let local = listener.local_addr()?;
    if settings.domain.is_empty() {
        // Login messages name the address actually served (with `--addr …:0`, the port
        // the system chose).
        settings.domain = local.to_string();
    }
    // The address actually served, for what names the server to clients (the agent card's
    // URL, unless --public-url names it).
    settings.addr = local;
    let running = start(settings).await?;
    let stop = shutdown_signal();
    tracing::info!("Triad is listening on http://{local}");
    println!("Triad is listening on http://{local}");
    let app = api::router(running.state.clone());
    let hub = running.state.hub.clone();
    let core = running.state.core.clone();
    let header_timeout = Duration::from_millis(running.state.settings.request_timeout_ms);
    let settings = &running.state.settings;
    // Without a known open-files limit `max_connections` may still be 0: then only the
    // per-IP cap applies.
    let total = match settings.max_connections {
        0 => usize::MAX,
        n => n,
    };
    let connections = bounds::Shares::new("connections", settings.max_connections_per_ip, total);
    let proxies = settings.trusted_proxies.clone();
    listen::run(listener, app, header_timeout, connections, proxies, async move {
        // A core that stops by itself took a fault it could not contain: the server stops
        // too, loudly, rather than answer every command with 503 (`/healthz` says so
        // meanwhile).
        tokio::select! {
            () = stop => tracing::info!("shutting down: no new connections; closing WebSockets"),
            () = core.stopped() => tracing::error!("the core stopped: shutting down"),
        }
        core.stop_heartbeat();
        hub.close_all();
    })
    .await?;
    let crashed = running.state.core.crashed();
    running.stop().await;
    if crashed {
        return Err(ServeError::CoreStopped);
    }
    tracing::info!("stopped");
    Ok(())
}

impl ApiState {
    /// The domain named in login messages.
    #[must_use]
    pub fn domain(&self) -> String {
        if self.settings.domain.is_empty() {
            self.settings.addr.to_string()
        } else {
            self.settings.domain.clone()
        }
    }
}
