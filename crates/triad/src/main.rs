//! `triad`: play and analyse tic-tac-toe and SOS from the command line.
//!
//! One [`Cli`] parses the arguments into a [`Command`]; each subcommand lives in its own
//! module under `cmd/` with an `Args` struct and a `run` function. To add one, add a module
//! there and a variant here.

mod cmd;

/// mimalloc instead of the system allocator: a server request allocates and frees dozens of
/// small buffers (headers, JSON, topic names, views), and glibc's malloc and free were about
/// 13% of `triad serve`'s CPU at 100 concurrent games of `triad bench`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::{io, process::ExitCode};

use clap::{Parser, Subcommand};

/// Tic-tac-toe and SOS for people, agents and staked matches: serve the web app and API,
/// play in the terminal, manage your key, export the solver's tables, speak the agents'
/// game protocol (apps, agent), save a match in notation (export), or load-test a server
/// (bench).
#[derive(Debug, Parser)]
#[command(name = "triad", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Serve(Box<cmd::serve::ServeCmd>),
    Play(cmd::play::PlayArgs),
    Solve(cmd::solve::SolveArgs),
    Keygen(cmd::keys::KeygenArgs),
    Whoami(cmd::keys::WhoamiArgs),
    Login(cmd::keys::LoginArgs),
    Apps(cmd::apps::AppsArgs),
    Agent(Box<cmd::agent::AgentArgs>),
    Mcp(cmd::mcp::McpArgs),
    Bench(Box<cmd::bench::BenchArgs>),
    #[command(hide = true)]
    BenchProxy(cmd::bench_proxy::ProxyArgs),
    Export(cmd::export::ExportArgs),
    Transcript(cmd::transcript::TranscriptArgs),
    Verify(cmd::transcript::VerifyArgs),
}

impl Command {
    fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            Command::Serve(args) => cmd::serve::run(*args).map(|()| ExitCode::SUCCESS),
            Command::Keygen(args) => cmd::keys::keygen(args).map(|()| ExitCode::SUCCESS),
            Command::Whoami(args) => cmd::keys::whoami(args).map(|()| ExitCode::SUCCESS),
            Command::Login(args) => cmd::keys::login(args).map(|()| ExitCode::SUCCESS),
            Command::Play(args) => cmd::play::run(args),
            Command::Solve(args) => cmd::solve::run(args).map(|()| ExitCode::SUCCESS),
            Command::Apps(args) => cmd::apps::run(args).map(|()| ExitCode::SUCCESS),
            Command::Agent(args) => cmd::agent::run(*args).map(|()| ExitCode::SUCCESS),
            Command::Mcp(args) => cmd::mcp::run(args).map(|()| ExitCode::SUCCESS),
            Command::Bench(args) => cmd::bench::run(*args),
            Command::BenchProxy(args) => cmd::bench_proxy::run(args).map(|()| ExitCode::SUCCESS),
            Command::Export(args) => cmd::export::run(args).map(|()| ExitCode::SUCCESS),
            Command::Transcript(args) => cmd::transcript::fetch(args).map(|()| ExitCode::SUCCESS),
            Command::Verify(args) => cmd::transcript::verify(args).map(|()| ExitCode::SUCCESS),
        }
    }
}

/// Whether `error` comes from writing to a pipe whose reader has gone, as with
/// `triad solve ... | head`: the reader has what it wanted, so that is no failure.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

fn main() -> ExitCode {
    match Cli::parse().command.run() {
        Ok(code) => code,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("triad: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
