//! The subcommands, one module each, and the argument types they share.

pub(crate) mod a2a_client;
pub(crate) mod agent;
pub(crate) mod apps;
pub(crate) mod bench;
pub(crate) mod bench_proxy;
pub(crate) mod client;
pub(crate) mod export;
pub(crate) mod keys;
pub(crate) mod mcp;
pub(crate) mod play;
pub(crate) mod serve;
pub(crate) mod solve;
pub(crate) mod transcript;

use clap::ValueEnum;
use triad_rules::GameKind;

/// Whether to colour what goes to `stream`: only a terminal, and only without `NO_COLOR`
/// (<https://no-color.org>: set to anything but the empty string).
pub(crate) fn colour(stream: &impl std::io::IsTerminal) -> bool {
    stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The `--game` argument.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum GameArg {
    /// Tic-tac-toe: X and O, three in a row wins.
    #[default]
    #[value(name = "tic-tac-toe", alias = "ttt")]
    TicTacToe,
    /// SOS: each player places S or O; whoever spells S-O-S in a line wins.
    Sos,
}

impl From<GameArg> for GameKind {
    fn from(game: GameArg) -> GameKind {
        match game {
            GameArg::TicTacToe => GameKind::TicTacToe,
            GameArg::Sos => GameKind::Sos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_names_match_the_rules() {
        for game in GameArg::value_variants() {
            let name = game.to_possible_value().unwrap();
            assert_eq!(name.get_name(), GameKind::from(*game).name());
        }
    }
}
