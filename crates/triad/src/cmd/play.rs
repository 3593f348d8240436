//! `triad play`: a game in the terminal, against the computer or between two people.

mod input;
mod render;
mod session;

use std::{
    io::{self, IsTerminal},
    process::ExitCode,
};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use rand::{TryRng, rngs::SysRng};
use triad_rules::GameKind;
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

pub(crate) fn run(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let kind = GameKind::from(args.game);
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
    let session = Session::new(
        kind,
        seats,
        seed,
        if colour {
            Palette::colour()
        } else {
            Palette::plain()
        },
        // Typed input is echoed by the terminal; piped input is echoed here so the output
        // reads as a transcript.
        !io::stdin().is_terminal(),
    );
    let ending = session
        .run(io::stdin().lock(), io::stdout().lock())
        .context("the game was interrupted")?;
    match ending {
        Ending::Finished | Ending::Quit => Ok(ExitCode::SUCCESS),
        Ending::InputEnded => bail!("the input ended before the game did"),
    }
}
