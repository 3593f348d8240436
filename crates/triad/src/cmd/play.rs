//! `triad play`: a game in the terminal, against the computer or between two people.

mod input;
mod render;
mod session;

use std::{
    io::{self, IsTerminal, Write as _},
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use rand::{TryRng, rngs::SysRng};
use triad_engine::notation::{self, GameResult, Record};
use triad_rules::{CellSet, GameKind};
use triad_solver::Strength;

use self::{
    render::Palette,
    session::{Ending, Seat, Session},
};
use super::GameArg;

/// Play a game in the terminal, against the computer or between two people.
///
/// Type a square 1-9 to move (in SOS, the letter and the square: S5, o7 or 5S), ? for a hint
/// (the value of every legal move), h for help, q to quit. Input may come from a pipe: the
/// same --seed and the same input give the same output, byte for byte.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when the game ends or you type q; 1 when the input \
                        ends before the game does, or on an error; 2 on bad arguments."
)]
pub(crate) struct PlayArgs {
    /// The game to play.
    #[arg(long, value_enum, default_value_t)]
    game: GameArg,
    /// Your opponent: the computer at a strength, or human for two people at one keyboard.
    #[arg(long, value_enum, default_value_t = Opponent::Perfect)]
    vs: Opponent,
    /// Your side against the computer, X when not given: X moves first, O second. In SOS,
    /// X means the first player and O the second.
    #[arg(long = "as", value_enum, ignore_case = true, value_name = "SIDE")]
    side: Option<Side>,
    /// Seed for the computer's random choices; without it a random seed is drawn and shown.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Go on from a record in Triad's notation (as `triad export` saves it): the game and
    /// its moves come from FILE. A game that is over is shown, not continued.
    #[arg(long, value_name = "FILE", conflicts_with = "game")]
    from: Option<PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Opponent {
    /// Always an optimal move: you cannot win.
    Perfect,
    /// Usually optimal, sometimes merely safe: it never throws away a draw.
    Casual,
    /// Any legal move, uniformly at random.
    Random,
    /// Another person, taking turns at this keyboard.
    Human,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Side {
    /// The first player (X in tic-tac-toe).
    #[value(name = "X", alias = "first")]
    X,
    /// The second player (O in tic-tac-toe).
    #[value(name = "O", alias = "second")]
    O,
}

/// Reads a record, naming the file, line and column of what is wrong.
fn load_record(path: &Path) -> anyhow::Result<Record> {
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if text.len() > notation::TEXT_BYTES_MAX {
        bail!(
            "{} is {} bytes, too large for one match's record (at most {})",
            path.display(),
            text.len(),
            notation::TEXT_BYTES_MAX
        );
    }
    let text = String::from_utf8(text)
        .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", path.display()))?;
    notation::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e} ({})", path.display(), e.name()))
}

/// Shows a record whose game is over, and how it ended.
fn show_over(record: &Record, path: &Path, palette: &Palette) -> anyhow::Result<()> {
    let position = record
        .position()
        .context("the record's moves are legal once parsed")?;
    let cells = position.outcome().map_or(CellSet::EMPTY, |o| o.cells());
    let how = record
        .termination
        .map_or(String::new(), |t| format!(" ({})", t.name()));
    let result = match record.result.winner() {
        Some(winner) => format!("{} won{how}", render::player_name(record.game, winner)),
        None if record.result == GameResult::Draw => format!("a draw{how}"),
        None => format!("no result{how}"),
    };
    let mut out = io::stdout().lock();
    write!(out, "{}", render::board(&position, cells, palette))?;
    writeln!(
        out,
        "The game in {} is over after {} moves: {result}. Nothing is left to play.",
        path.display(),
        record.moves.len()
    )?;
    out.flush()?;
    Ok(())
}

pub(crate) fn run(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let record = args.from.as_deref().map(load_record).transpose()?;
    let kind = record
        .as_ref()
        .map_or(GameKind::from(args.game), |r| r.game);
    let strength = match args.vs {
        Opponent::Perfect => Some(Strength::Perfect),
        Opponent::Casual => Some(Strength::Casual),
        Opponent::Random => Some(Strength::Random),
        Opponent::Human => None,
    };
    let seats = match (strength, args.side) {
        (None, Some(_)) => bail!(
            "--as picks your side against the computer; with --vs human both sides play at \
             this keyboard"
        ),
        (None, None) => [Seat::Human, Seat::Human],
        (Some(strength), Some(Side::O)) => [Seat::Computer(strength), Seat::Human],
        (Some(strength), Some(Side::X) | None) => [Seat::Human, Seat::Computer(strength)],
    };
    let seed = match args.seed {
        Some(seed) => seed,
        None => SysRng
            .try_next_u64()
            .context("cannot draw a random seed; pass --seed N")?,
    };
    let colour = super::colour(&io::stdout());
    let palette = if colour {
        Palette::colour()
    } else {
        Palette::plain()
    };
    let mut session = Session::new(
        kind,
        seats,
        seed,
        palette,
        // Typed input is echoed by the terminal; piped input is echoed here so the output
        // reads as a transcript.
        !io::stdin().is_terminal(),
    );
    if let (Some(record), Some(path)) = (&record, &args.from) {
        if record.is_over() {
            show_over(record, path, &palette)?;
            return Ok(ExitCode::SUCCESS);
        }
        session = session.starting_at(
            record
                .position()
                .context("the record's moves are legal once parsed")?,
        );
    }
    let ending = session
        .run(io::stdin().lock(), io::stdout().lock())
        .context("the game was interrupted")?;
    match ending {
        Ending::Finished | Ending::Quit => Ok(ExitCode::SUCCESS),
        Ending::InputEnded => bail!("the input ended before the game did"),
    }
}
