//! `triad export`: a match from a server, in Triad's notation (`docs/notation.md`), to a
//! file or standard output; `triad play --from FILE` reads it back.

use std::{io::Write as _, path::PathBuf, time::Duration};

use anyhow::{Context, bail};
use clap::Args;
use triad_engine::notation;

/// Save a match from a server in Triad's notation: its headers (game, players, stake,
/// result, how it ended, when) and its moves, as plain text.
///
/// The record is checked before it is written; `triad play --from FILE` continues or shows
/// it, and docs/notation.md describes the format.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The match's id.
    #[arg(value_name = "MATCH_ID")]
    match_id: u64,
    /// The server.
    #[arg(long, env = "TRIAD_SERVER", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// Write the record to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub(crate) fn run(args: ExportArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let text = runtime.block_on(fetch(&args.server, args.match_id))?;
    let record = notation::parse(&text).with_context(|| {
        format!(
            "the server's record of match {} does not read back; is {} a Triad server?",
            args.match_id, args.server
        )
    })?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, &text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!(
                "Saved match {} ({}, {} moves, {}) to {}.",
                args.match_id,
                record.game,
                record.moves.len(),
                record.result,
                path.display()
            );
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(())
}

/// The record's text, or the server's refusal.
async fn fetch(server: &str, match_id: u64) -> anyhow::Result<String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?;
    let url = format!(
        "{}/api/matches/{match_id}/notation",
        server.trim_end_matches('/')
    );
    let response = client
        .get(&url)
        .send()
        .await
        .with_context(|| format!("cannot reach the server at {server}"))?;
    let status = response.status();
    if status.is_success() {
        return response
            .text()
            .await
            .with_context(|| format!("the server's answer from {url} was cut off"));
    }
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    match (body["error"].as_str(), body["message"].as_str()) {
        (Some(name), Some(message)) => bail!("{name} ({status}): {message}"),
        _ => bail!("the server answered {status} to GET {url}"),
    }
}
