//! `triad apps`: the agents' app commands (the A2A tic-tac-toe
//! protocol that Triad's agents speak), through a Triad server that relays and
//! referees them. `triad apps send <address> tic-tac-toe propose --payload '{"seq":0,"role":"X"}'`
//! sends an app action; `triad apps inbox` reads the messages sent to you.

use std::{io::Write, time::Duration};

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::json;
use triad_protocol::{App, Message, board_string};

use super::client::{Client, Connection, Incoming};

/// Send app actions to other agents and read yours (relayed and refereed by a
/// Triad server).
#[derive(Debug, Args)]
pub(crate) struct AppsArgs {
    #[command(subcommand)]
    command: AppsCommand,
}

#[derive(Debug, Subcommand)]
enum AppsCommand {
    Send(SendArgs),
    Inbox(InboxArgs),
    Manifest(ManifestArgs),
}

/// Send an app action to another agent: propose, accept, move or result.
///
/// The payload is the protocol's, for example '{"seq":0,"role":"X"}' to propose, or
/// '{"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}' to
/// move. It is checked before it leaves, and the server refuses a message the rules do not
/// allow with the reason. The message is signed with your key.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when the server relayed the message; 1 when it was refused (the reason is printed) or could not be sent."
)]
struct SendArgs {
    /// The recipient's address (0x and 64 hex digits).
    to: String,
    /// The app: tic-tac-toe or sos.
    app: String,
    /// The action: propose, accept, move or result.
    action: String,
    /// The payload, as JSON.
    #[arg(long)]
    payload: String,
    /// Send without the signed envelope.
    #[arg(long)]
    unsigned: bool,
    /// Print the server's whole answer as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    connection: Connection,
}

/// Read the messages sent to you, oldest first, from where you last stopped.
///
/// Each message shows its number, sender, app, action and payload (and, for a move, the
/// board). The position reached is saved beside your key file, so the next call shows only
/// new messages.
#[derive(Debug, Args)]
struct InboxArgs {
    /// Keep reading: print each message as it arrives, until interrupted.
    #[arg(long)]
    follow: bool,
    /// Wait up to this many seconds for a message when there is none.
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    wait: u64,
    /// Show the messages after this number instead (does not move the saved position).
    #[arg(long, value_name = "ID")]
    after: Option<u64>,
    /// Show every message from the first (does not move the saved position).
    #[arg(long, conflicts_with = "after")]
    all: bool,
    /// One JSON object per message.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    connection: Connection,
}

/// Print an app's manifest: its front matter (appId, version, actions).
#[derive(Debug, Args)]
struct ManifestArgs {
    /// tic-tac-toe or sos.
    #[arg(default_value = "tic-tac-toe")]
    app: String,
    /// As JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: AppsArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    match args.command {
        AppsCommand::Send(args) => runtime.block_on(send(args)),
        AppsCommand::Inbox(args) => runtime.block_on(inbox(args)),
        AppsCommand::Manifest(args) => {
            let manifest = App::from_id(&args.app)?.manifest();
            if args.json {
                println!("{}", serde_json::to_string_pretty(&manifest)?);
            } else {
                print!("{}", manifest.front_matter());
            }
            Ok(())
        }
    }
}

async fn send(args: SendArgs) -> anyhow::Result<()> {
    // Checked here first: the same typed error the server would give, without a round trip.
    let app = App::from_id(&args.app)?;
    let message = Message::decode_json(app, &args.action, &args.payload)?;
    let mut client = Client::connect(&args.connection, false).await?;
    let sent = client
        .send(&args.to, app, &message, args.unsigned)
        .await
        .with_context(|| format!("{} {} was not relayed", app, message.action()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&sent.body)?);
        return Ok(());
    }
    let m = &sent.body["match"];
    let state = match m["outcome"]["reason"].as_str() {
        Some(reason) => format!(
            "game over: {reason}{}",
            m["outcome"]["winner"]
                .as_str()
                .map_or(String::new(), |w| format!(", {w} player won"))
        ),
        None => match m["turn_address"].as_str() {
            Some(a) if a == client.address() => "your move".to_owned(),
            Some(_) => "their move".to_owned(),
            None => "waiting for the acceptance".to_owned(),
        },
    };
    println!(
        "sent #{}{} to {}: {app} {} (match {}, board {}, {state})",
        sent.id,
        if sent.duplicate {
            " (a resend, delivered once)"
        } else {
            ""
        },
        args.to,
        message.action(),
        sent.match_id,
        m["board"].as_str().unwrap_or("?"),
    );
    Ok(())
}

/// The board of a move, drawn as the protocol draws it.
fn drawn(message: &Message) -> Option<String> {
    let Message::Move(m) = message else {
        return None;
    };
    let cells: Vec<char> = board_string(&m.board)
        .chars()
        .map(|c| if c == '-' { '.' } else { c })
        .collect();
    Some(
        cells
            .chunks(3)
            .map(|row| format!("    {} | {} | {}\n", row[0], row[1], row[2]))
            .collect(),
    )
}

fn show(message: &Incoming, json: bool, out: &mut impl Write) -> anyhow::Result<()> {
    let decoded = message.decode();
    // The payload in the protocol's field order when it decodes (it always does from the relay).
    let payload = match &decoded {
        Ok((app, m, _)) => m.payload_json(*app),
        Err(_) => message.payload.to_string(),
    };
    if json {
        let mut head = json!({
            "id": message.id,
            "from": message.from,
            "appId": message.app_id,
            "action": message.action,
            "matchId": message.match_id,
        });
        if let Ok((_, _, Some(verified))) = &decoded {
            head["verified"] = json!(verified);
        }
        let head = head.to_string();
        writeln!(out, "{},\"payload\":{payload}}}", &head[..head.len() - 1])?;
        return Ok(());
    }
    let signature = match &decoded {
        Ok((_, _, Some(true))) => " [signed]",
        Ok((_, _, Some(false))) => " [BAD SIGNATURE: not from this sender]",
        _ => "",
    };
    writeln!(
        out,
        "#{} from {} {} {} {payload}{signature}",
        message.id, message.from, message.app_id, message.action
    )?;
    if let Ok((_, decoded, _)) = &decoded
        && let Some(board) = drawn(decoded)
    {
        write!(out, "{board}")?;
    }
    Ok(())
}

async fn inbox(args: InboxArgs) -> anyhow::Result<()> {
    let mut client = Client::connect(&args.connection, false).await?;
    let explicit = args.after.or(args.all.then_some(0));
    let mut cursor = explicit.unwrap_or_else(|| client.saved_cursor());
    let wait = Duration::from_secs(args.wait);
    loop {
        let (messages, next) = client
            .inbox(
                cursor,
                if args.follow {
                    Duration::from_secs(20)
                } else {
                    wait
                },
            )
            .await?;
        {
            let mut out = std::io::stdout().lock();
            for message in &messages {
                show(message, args.json, &mut out)?;
            }
            out.flush()?;
        }
        cursor = next;
        if explicit.is_none() && !messages.is_empty() {
            client.save_cursor(cursor)?;
        }
        if !args.follow {
            if messages.is_empty() && !args.json {
                eprintln!("no new messages (the next is after #{cursor})");
            }
            return Ok(());
        }
    }
}
