//! `triad serve`: the web app and the API.

use anyhow::Context;
use clap::Args;
use triad_engine::Address;
use triad_identity::KeyFile;
use triad_server::{ServeArgs, config::LogFormat};

/// Serve the web app and the HTTP/WebSocket API (SQLite by default).
#[derive(Debug, Args)]
pub(crate) struct ServeCmd {
    #[command(flatten)]
    settings: ServeArgs,
}

pub(crate) fn run(args: ServeCmd) -> anyhow::Result<()> {
    let owner_given = args.settings.owner.is_some();
    let mut settings = args.settings.resolve().map_err(anyhow::Error::msg)?;
    init_logs(settings.log_format);
    if !owner_given && settings.owner.is_zero() {
        // Without --owner, the local key's holder runs the table.
        if let Some(key) = KeyFile::default_path()
            .ok()
            .and_then(|p| KeyFile::load(&p).ok())
        {
            settings.owner = Address::from_bytes(key.address());
            tracing::info!(owner = %settings.owner, "the owner is the local key's address");
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime
        .block_on(triad_server::serve(settings))
        .context("the server stopped with an error")
}

fn init_logs(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TRIAD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Colours for a terminal only (a log file or journal gets plain text), and never
        // with `NO_COLOR`, which tracing's own default honoured.
        .with_ansi(super::colour(&std::io::stderr()))
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
