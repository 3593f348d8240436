//! `triad solve`: solve a game completely and export the table.

use std::{
    fs::File,
    io::{self, BufWriter, Write},
    path::PathBuf,
};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use triad_rules::GameKind;

use super::GameArg;

/// Solve a game completely and export the value and a best move of every position.
#[derive(Debug, Args)]
pub(crate) struct SolveArgs {
    /// The game to solve.
    #[arg(long, value_enum, default_value_t)]
    game: GameArg,
    /// The output format.
    #[arg(long, value_enum)]
    format: Format,
    /// Write to FILE instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The move table as a moves.js module: O's best reply to every ongoing tic-tac-toe
    /// position (tic-tac-toe only).
    MovesJs,
    /// One JSON object per ongoing position: board, value and plies for the player to move,
    /// and a best move.
    Jsonl,
}

pub(crate) fn run(args: SolveArgs) -> anyhow::Result<()> {
    let kind = GameKind::from(args.game);
    if args.format == Format::MovesJs && kind != GameKind::TicTacToe {
        bail!(
            "--format moves-js is the move table of O's tic-tac-toe replies, so it has no {kind} \
             version; use --format jsonl for {kind}"
        );
    }
    let table = triad_solver::table(kind);
    let write = |out: &mut dyn Write| -> io::Result<()> {
        match args.format {
            Format::MovesJs => {
                let js = triad_solver::moves_js(table).map_err(io::Error::other)?;
                writeln!(out, "{js}")?;
            }
            Format::Jsonl => triad_solver::write_jsonl(table, &mut *out)?,
        }
        out.flush()
    };
    match &args.output {
        Some(path) => {
            let file =
                File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            write(&mut BufWriter::new(file))
                .with_context(|| format!("cannot write {}", path.display()))
        }
        None => write(&mut BufWriter::new(io::stdout().lock()))
            .context("cannot write to standard output"),
    }
}
