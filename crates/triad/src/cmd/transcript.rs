//! `triad transcript` and `triad verify`: fetch a finished match's signed transcript, and
//! check one offline against the server's public key (`docs/transcript.md`).

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use triad_engine::Seat;
use triad_server::transcript::{self, ServerKey};

/// Fetch a finished match's signed transcript.
#[derive(Debug, Args)]
pub(crate) struct TranscriptArgs {
    /// The match.
    match_id: u64,
    /// The server.
    #[arg(long, env = "TRIAD_SERVER", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// Write the transcript to FILE instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Check a transcript offline: its chain, the server's signature, every move by the rules,
/// the result and the payouts by the rules of money. Name the server's key with one of
/// --key, --key-file or --server.
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The transcript file.
    file: PathBuf,
    /// The server's transcript public key: 64 hex digits.
    #[arg(long, group = "trusted", value_name = "HEX")]
    key: Option<String>,
    /// A file holding the server's key: the JSON of /.well-known/triad-transcript-key, or
    /// the 64 hex digits alone.
    #[arg(long, group = "trusted", value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Fetch the key from this server's /.well-known/triad-transcript-key (once; the
    /// transcript itself is checked offline).
    #[arg(long, group = "trusted", value_name = "URL")]
    server: Option<String>,
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// GETs `url` and returns the body, or the server's refusal.
async fn get(url: &str) -> anyhow::Result<String> {
    let response = reqwest::get(url)
        .await
        .with_context(|| format!("cannot reach {url}"))?;
    let status = response.status();
    let body = response.text().await?;
    if !status.is_success() {
        let reason = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| {
                Some(format!(
                    "{} ({}): {}",
                    v["error"].as_str()?,
                    v["code"],
                    v["message"].as_str()?
                ))
            })
            .unwrap_or(body);
        bail!("the server refused (HTTP {status}): {reason}");
    }
    Ok(body)
}

pub(crate) fn fetch(args: TranscriptArgs) -> anyhow::Result<()> {
    let server = args.server.trim_end_matches('/');
    let body = runtime()?.block_on(get(&format!(
        "{server}/api/matches/{}/transcript",
        args.match_id
    )))?;
    match &args.output {
        Some(path) => std::fs::write(path, body.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => {
            use std::io::Write as _;
            std::io::stdout().write_all(body.as_bytes())?;
        }
    }
    Ok(())
}

/// The key named by `--key`, `--key-file` or `--server`.
fn trusted_key(args: &VerifyArgs) -> anyhow::Result<triad_identity::VerifyingKey> {
    let text = if let Some(hex) = &args.key {
        hex.trim().to_owned()
    } else if let Some(path) = &args.key_file {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?
    } else if let Some(server) = &args.server {
        let url = format!(
            "{}/.well-known/triad-transcript-key",
            server.trim_end_matches('/')
        );
        runtime()?.block_on(get(&url))?
    } else {
        bail!(
            "name the server's transcript key, which the check needs: --key HEX, --key-file FILE \
             or --server URL (its /.well-known/triad-transcript-key)"
        );
    };
    let text = text.trim();
    let hex = if text.starts_with('{') {
        let published: ServerKey =
            serde_json::from_str(text).context("the key file is not a published server key")?;
        return published
            .key()
            .map_err(|failure| anyhow::anyhow!("the server key: {failure}"));
    } else {
        text
    };
    transcript::parse_key(hex).map_err(|problem| anyhow::anyhow!("the key {problem}"))
}

pub(crate) fn verify(args: VerifyArgs) -> anyhow::Result<()> {
    let key = trusted_key(&args)?;
    let file = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let verified = transcript::verify(&file, &key)
        .map_err(|failure| anyhow::anyhow!("{} does not verify: {failure}", args.file.display()))?;
    let seat = |s: &Seat| match s {
        Seat::Human(a) => a.to_string(),
        Seat::Computer(level) => format!("the computer ({level:?})"),
    };
    println!(
        "{}: verified: match {}, {} events signed by server key {}",
        args.file.display(),
        verified.transcript.match_id,
        verified.transcript.events.len(),
        verified.transcript.server_key.key_id
    );
    if let (Some(game), Some(seats)) = (verified.game, verified.seats) {
        println!(
            "  {game}: {} (first) against {}, stake {}",
            seat(&seats[0]),
            seat(&seats[1]),
            verified.stake
        );
    }
    let winner = verified
        .winner
        .and_then(|p| verified.seats.map(|s| seat(&s[p.index()])));
    println!(
        "  {} moves by the rules; ended: {}{}",
        verified.moves,
        verified.reason.name(),
        winner.map(|w| format!(", won by {w}")).unwrap_or_default()
    );
    if !verified.transcript.messages.is_empty() {
        println!(
            "  {} messages signed by the players themselves",
            verified.transcript.messages.len(),
        );
    }
    println!(
        "  {} of {} moves signed by their players",
        verified.signed_moves, verified.moves
    );
    for (to, amount) in &verified.payouts {
        println!("  paid {amount} to {to}");
    }
    println!("  to the reserve: {}", verified.reserve);
    Ok(())
}
