//! The game loop: whose turn it is, what they typed, what the computer plays, and how it
//! ended. Generic over its input and output so that it runs the same on a terminal, a pipe
//! or a test buffer.

use std::io::{self, BufRead, Write};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use triad_rules::{AnyGame, Cell, CellSet, GameKind, Mark, Move, MoveError, Outcome, Player};
use triad_solver::{Strength, Table};

use super::{
    input::{self, Command},
    render::{self, Palette},
};

/// Who makes the moves of one player.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seat {
    /// A person typing moves.
    Human,
    /// The computer at a strength.
    Computer(Strength),
}

/// How a session ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The game was won or drawn.
    Finished,
    /// A player typed `q`.
    Quit,
    /// The input ended while the game went on.
    InputEnded,
}

/// One game in the terminal.
#[derive(Debug)]
pub(crate) struct Session {
    table: &'static Table,
    game: AnyGame,
    seats: [Seat; 2],
    seed: u64,
    rng: ChaCha8Rng,
    palette: Palette,
    /// Whether to write each input line back out after the prompt (for piped input, which
    /// no terminal echoes).
    echo: bool,
}

/// What one line of a player's input led to.
enum Turn {
    /// A move was played.
    Moved,
    /// No move yet: ask again.
    Again,
    /// The session is over.
    End(Ending),
}

impl Session {
    pub(crate) fn new(
        kind: GameKind,
        seats: [Seat; 2],
        seed: u64,
        palette: Palette,
        echo: bool,
    ) -> Session {
        Session {
            table: triad_solver::table(kind),
            game: AnyGame::new(kind),
            seats,
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed),
            palette,
            echo,
        }
    }

    /// The session from `game` on (of the session's game), as read from a record.
    pub(crate) fn starting_at(mut self, game: AnyGame) -> Session {
        assert_eq!(game.kind(), self.kind(), "a position of the session's game");
        self.game = game;
        self
    }

    fn kind(&self) -> GameKind {
        self.game.kind()
    }

    /// The computer's side and strength, if the computer plays.
    fn computer(&self) -> Option<(Player, Strength)> {
        Player::BOTH
            .into_iter()
            .find_map(|player| match self.seats[player.index()] {
                Seat::Computer(strength) => Some((player, strength)),
                Seat::Human => None,
            })
    }

    fn against_computer(&self) -> bool {
        self.computer().is_some()
    }

    /// Plays the game to its end, reading moves from `input` and writing everything to
    /// `out`.
    ///
    /// # Errors
    /// Only I/O errors of `input` or `out`.
    pub(crate) fn run(
        mut self,
        mut input: impl BufRead,
        mut out: impl Write,
    ) -> io::Result<Ending> {
        self.introduce(&mut out)?;
        // The board is shown to a human before each move, once however many tries it takes.
        let mut show_board = true;
        let ending = loop {
            if let Some(outcome) = self.game.outcome() {
                let board = render::board(&self.game, outcome.cells(), &self.palette);
                let result = render::styled(self.palette.result, self.result(outcome));
                write!(out, "\n{board}{result}\n")?;
                break Ending::Finished;
            }
            let mover = self.game.turn();
            match self.seats[mover.index()] {
                Seat::Computer(strength) => {
                    let mv = self
                        .table
                        .choose(&self.game, strength, &mut self.rng)
                        .expect("a game that goes on has a move");
                    self.game = self.game.play_unchecked(mv);
                    let name = render::player_name(self.kind(), mover);
                    writeln!(out, "\nThe computer ({name}) plays {}.", self.describe(mv))?;
                    show_board = true;
                }
                Seat::Human => {
                    if show_board {
                        let board = render::board(&self.game, CellSet::EMPTY, &self.palette);
                        write!(out, "\n{board}")?;
                        show_board = false;
                    }
                    match self.human_turn(mover, &mut input, &mut out)? {
                        Turn::Moved => show_board = true,
                        Turn::Again => {}
                        Turn::End(ending) => break ending,
                    }
                }
            }
        };
        out.flush()?;
        Ok(ending)
    }

    /// Prompts `mover`, reads one line and acts on it.
    fn human_turn(
        &mut self,
        mover: Player,
        input: &mut impl BufRead,
        out: &mut impl Write,
    ) -> io::Result<Turn> {
        write!(out, "{}", self.prompt(mover))?;
        out.flush()?;
        let Some(line) = input::read_line(input)? else {
            // End the prompt's line, so the output ends with a newline.
            writeln!(out)?;
            return Ok(Turn::End(Ending::InputEnded));
        };
        if self.echo {
            writeln!(out, "{line}")?;
        }
        match input::parse(&line) {
            Ok(Command::Nothing) => {}
            Ok(Command::Quit) => {
                writeln!(out, "Game abandoned.")?;
                return Ok(Turn::End(Ending::Quit));
            }
            Ok(Command::Help) => write!(out, "{}", self.help())?,
            Ok(Command::Hint) => {
                let analysis = self.table.analyze(&self.game);
                write!(out, "{}", render::hint(self.kind(), analysis))?;
            }
            Ok(Command::Move { square, letter }) => match self.check(mover, square, letter) {
                Ok(mv) => {
                    self.game = self.game.play_unchecked(mv);
                    return Ok(Turn::Moved);
                }
                Err(why) => self.refuse(out, why)?,
            },
            Err(error) => self.refuse(out, error.to_string())?,
        }
        Ok(Turn::Again)
    }

    fn refuse(&self, out: &mut impl Write, why: String) -> io::Result<()> {
        writeln!(out, "{}", render::styled(self.palette.error, why))
    }

    fn introduce(&self, out: &mut impl Write) -> io::Result<()> {
        let kind = self.kind();
        let title = match kind {
            GameKind::TicTacToe => "Tic-tac-toe",
            GameKind::Sos => "SOS",
        };
        let first = render::player_name(kind, Player::First);
        match self.computer() {
            None => writeln!(out, "{title} for two players: {first} moves first.")?,
            Some((computer, strength)) => writeln!(
                out,
                "{title}: you are {}, the {strength} computer is {}. {} moves first. \
                 Seed {seed} (--seed {seed} replays this game).",
                render::player_name(kind, computer.other()),
                render::player_name(kind, computer),
                capitalise(first),
                seed = self.seed,
            )?,
        }
        let marks = self.game.board().len();
        if marks > 0 {
            writeln!(out, "Going on after {marks} moves.")?;
        }
        writeln!(out, "{}", self.how_to_move())
    }

    fn how_to_move(&self) -> &'static str {
        match self.kind() {
            GameKind::TicTacToe => {
                "Type a square 1-9 to move, ? for a hint, h for help, q to quit."
            }
            GameKind::Sos => {
                "Type a letter and a square to move, like S5 or O7; ? for a hint, h for help, q to quit."
            }
        }
    }

    fn help(&self) -> String {
        let rules = match self.kind() {
            GameKind::TicTacToe => {
                "Players take turns placing their mark, X first; three in a row, column or \
                 diagonal wins. Type the square to place your mark in (1-9, numbered as shown on \
                 the empty board)."
            }
            GameKind::Sos => {
                "On each turn a player places S or O in an empty square; whoever first spells \
                 S-O-S in a row, column or diagonal wins. Type the letter and the square \
                 (S5, o7 and 5S all work)."
            }
        };
        format!(
            "{rules}\n? shows the value of every move with best play from both sides: a win or \
             loss in n means the game ends n marks from now, counting yours.\nq quits.\n"
        )
    }

    fn prompt(&self, mover: Player) -> String {
        let name = render::player_name(self.kind(), mover);
        if self.against_computer() {
            format!("Your move ({name}): ")
        } else {
            format!("{} to move: ", capitalise(name))
        }
    }

    /// "square 5" in tic-tac-toe, "S in square 5" in SOS.
    fn describe(&self, mv: Move) -> String {
        match self.kind() {
            GameKind::TicTacToe => format!("square {}", mv.cell.square()),
            GameKind::Sos => format!("{} in square {}", mv.mark, mv.cell.square()),
        }
    }

    /// Turns a typed move into a legal move, or a message saying why not. The rules decide
    /// legality; this only words their refusals for a person typing squares.
    fn check(&self, mover: Player, square: u8, letter: Option<Mark>) -> Result<Move, String> {
        let kind = self.kind();
        let cell = Cell::from_square(square).expect("the parser accepts squares 1-9 only");
        let mark = match (kind, letter) {
            (GameKind::Sos, None) => {
                return Err(format!(
                    "In SOS you choose the letter: type S{square} or O{square}."
                ));
            }
            (GameKind::TicTacToe, None) => kind.marks_for(mover)[0],
            (_, Some(mark)) => mark,
        };
        match self.game.check(mover, cell.index(), mark) {
            Ok(mv) => Ok(mv),
            Err(MoveError::CellOccupied) => {
                Err(format!("Square {square} is taken; choose an empty square."))
            }
            Err(MoveError::MarkNotInGame) => Err(match kind {
                GameKind::TicTacToe => {
                    format!("Tic-tac-toe has no {mark}; type just the square, like {square}.")
                }
                GameKind::Sos => format!("SOS has no {mark}; type S{square} or O{square}."),
            }),
            Err(MoveError::NotYourMark) => Err(format!(
                "You play {}, not {mark}; type just the square, like {square}.",
                kind.marks_for(mover)[0]
            )),
            Err(other) => Err(format!("{}.", capitalise(other.message()))),
        }
    }

    fn result(&self, outcome: Outcome) -> String {
        let kind = self.kind();
        match outcome {
            Outcome::Draw => match kind {
                GameKind::TicTacToe => {
                    "Draw: the board is full and nobody has three in a row.".to_owned()
                }
                GameKind::Sos => "Draw: the board is full and nobody spelled SOS.".to_owned(),
            },
            Outcome::Win { winner, cells } => {
                let how = match kind {
                    GameKind::TicTacToe => format!("three in a row on {}", render::squares(cells)),
                    GameKind::Sos => format!("S-O-S on {}", render::squares(cells)),
                };
                let name = render::player_name(kind, winner);
                match self.seats[winner.index()] {
                    Seat::Human if self.against_computer() => {
                        format!("You ({name}) win with {how}!")
                    }
                    Seat::Human => format!("{} wins with {how}.", capitalise(name)),
                    Seat::Computer(strength) => {
                        format!("The {strength} computer ({name}) wins with {how}.")
                    }
                }
            }
        }
    }
}

/// `text` with its first letter in upper case.
fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(kind: GameKind, seats: [Seat; 2], seed: u64, input: &str) -> (Ending, String) {
        let session = Session::new(kind, seats, seed, Palette::plain(), true);
        let mut out = Vec::new();
        let ending = session.run(input.as_bytes(), &mut out).unwrap();
        (ending, String::from_utf8(out).unwrap())
    }

    #[test]
    fn two_people_play_tic_tac_toe_to_a_win() {
        let (ending, out) = play(GameKind::TicTacToe, [Seat::Human; 2], 0, "1\n4\n2\n5\n3\n");
        assert_eq!(ending, Ending::Finished);
        assert!(
            out.ends_with("X wins with three in a row on squares 1, 2, 3.\n"),
            "{out}"
        );
        assert!(out.contains("  [X]|[X]|[X]\n"), "{out}");
    }

    #[test]
    fn refusals_are_worded_for_squares() {
        let (ending, out) = play(GameKind::TicTacToe, [Seat::Human; 2], 0, "5\n5\nO1\nS1\n");
        assert_eq!(ending, Ending::InputEnded);
        assert!(
            out.contains("Square 5 is taken; choose an empty square."),
            "{out}"
        );
        assert!(
            out.contains("Tic-tac-toe has no S; type just the square, like 1."),
            "{out}"
        );
        // O typed by O is fine, by X it is not.
        let (_, out) = play(GameKind::TicTacToe, [Seat::Human; 2], 0, "O1\n");
        assert!(
            out.contains("You play X, not O; type just the square, like 1."),
            "{out}"
        );
        let (_, out) = play(GameKind::Sos, [Seat::Human; 2], 0, "5\nX5\n");
        assert!(
            out.contains("In SOS you choose the letter: type S5 or O5."),
            "{out}"
        );
        assert!(out.contains("SOS has no X; type S5 or O5."), "{out}");
    }

    #[test]
    fn quitting_is_a_clean_ending() {
        let (ending, out) = play(GameKind::Sos, [Seat::Human; 2], 0, "S1\nq\n5\n");
        assert_eq!(ending, Ending::Quit);
        assert!(
            out.ends_with("Player 2 to move: q\nGame abandoned.\n"),
            "{out}"
        );
    }

    #[test]
    fn capitalise_works_on_any_text() {
        assert_eq!(capitalise("player 1"), "Player 1");
        assert_eq!(capitalise(""), "");
    }
}
