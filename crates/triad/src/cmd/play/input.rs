//! What the player types: parsing one line into a command, and reading lines safely.

use std::{
    fmt,
    io::{self, BufRead},
};

use triad_rules::Mark;

/// The longest input line kept; the rest of a longer line is read and dropped.
const LINE_BYTES_MAX: usize = 256;

/// One line of input, understood.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Command {
    /// A mark placed in a square (1-9). The letter is optional in tic-tac-toe (it must be
    /// the mover's own), and required in SOS.
    Move { square: u8, letter: Option<Mark> },
    /// `?` or `hint`: the value of every legal move.
    Hint,
    /// `h`, `help`: how to play.
    Help,
    /// `q`, `quit` or `exit`: leave the game.
    Quit,
    /// A blank line.
    Nothing,
}

/// Why a line is not a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum InputError {
    /// A square outside 1-9, as typed.
    NoSuchSquare(String),
    /// Not a command at all.
    Unrecognised(String),
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::NoSuchSquare(square) => {
                write!(f, "There is no square {square}; squares go from 1 to 9.")
            }
            InputError::Unrecognised(text) => write!(
                f,
                "I don't understand {text:?}. Type h for help, ? for a hint, q to quit."
            ),
        }
    }
}

/// Parses one line. Case and surrounding white space do not matter. A move is a square
/// number with an optional letter before or after it, with or without a space between:
/// `5`, `S5`, `s 5`, `5S`, `X5`.
pub(super) fn parse(line: &str) -> Result<Command, InputError> {
    let text = line.trim();
    match text.to_ascii_lowercase().as_str() {
        "" => return Ok(Command::Nothing),
        "?" | "hint" => return Ok(Command::Hint),
        "h" | "help" => return Ok(Command::Help),
        "q" | "quit" | "exit" => return Ok(Command::Quit),
        _ => {}
    }
    let unrecognised = || InputError::Unrecognised(text.to_owned());
    let letter_at = |c: Option<char>| c.and_then(Mark::from_char);
    let (letter, digits) = if let Some(letter) = letter_at(text.chars().next()) {
        (Some(letter), text[1..].trim_start())
    } else if let Some(letter) = letter_at(text.chars().next_back()) {
        (Some(letter), text[..text.len() - 1].trim_end())
    } else {
        (None, text)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(unrecognised());
    }
    match digits.parse::<u8>() {
        Ok(square @ 1..=9) => Ok(Command::Move { square, letter }),
        _ => Err(InputError::NoSuchSquare(digits.to_owned())),
    }
}

/// Reads one line, without its line ending. Keeps at most [`LINE_BYTES_MAX`] bytes of it
/// and replaces invalid UTF-8, so no input can exhaust memory or stop the game. `None` at
/// the end of the input.
pub(super) fn read_line(input: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    let mut read_any = false;
    loop {
        let buffer = match input.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buffer.is_empty() {
            break;
        }
        read_any = true;
        let newline = buffer.iter().position(|&b| b == b'\n');
        let chunk = &buffer[..newline.unwrap_or(buffer.len())];
        let room = LINE_BYTES_MAX.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = newline.map_or(buffer.len(), |i| i + 1);
        input.consume(used);
        if newline.is_some() {
            break;
        }
    }
    if !read_any {
        return Ok(None);
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(String::from_utf8_lossy(&line).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(square: u8, letter: Option<Mark>) -> Result<Command, InputError> {
        Ok(Command::Move { square, letter })
    }

    #[test]
    fn moves_in_every_accepted_spelling() {
        assert_eq!(parse("5"), mv(5, None));
        assert_eq!(parse("  9 \n"), mv(9, None));
        assert_eq!(parse("S5"), mv(5, Some(Mark::S)));
        assert_eq!(parse("o7"), mv(7, Some(Mark::O)));
        assert_eq!(parse("s 1"), mv(1, Some(Mark::S)));
        assert_eq!(parse("5S"), mv(5, Some(Mark::S)));
        assert_eq!(parse("3 o"), mv(3, Some(Mark::O)));
        assert_eq!(parse("x2"), mv(2, Some(Mark::X)));
    }

    #[test]
    fn commands() {
        assert_eq!(parse("?"), Ok(Command::Hint));
        assert_eq!(parse("HINT"), Ok(Command::Hint));
        assert_eq!(parse("h"), Ok(Command::Help));
        assert_eq!(parse("q"), Ok(Command::Quit));
        assert_eq!(parse("Quit"), Ok(Command::Quit));
        assert_eq!(parse("   "), Ok(Command::Nothing));
    }

    #[test]
    fn squares_out_of_range() {
        for text in ["0", "10", "S0", "99999999999999999999"] {
            assert!(
                matches!(parse(text), Err(InputError::NoSuchSquare(_))),
                "{text}"
            );
        }
        assert_eq!(
            parse("S0").unwrap_err().to_string(),
            "There is no square 0; squares go from 1 to 9."
        );
    }

    #[test]
    fn nonsense() {
        for text in [
            "hello", "S", "SO5", "5 5", "-1", "+5", "S5O", "é", "½", "5é",
        ] {
            assert!(
                matches!(parse(text), Err(InputError::Unrecognised(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn lines_are_bounded_and_lossy() {
        let long = format!("{}\n5\n", "7".repeat(10_000));
        let mut input = io::Cursor::new(long.into_bytes());
        assert_eq!(
            read_line(&mut input).unwrap().unwrap().len(),
            LINE_BYTES_MAX
        );
        assert_eq!(read_line(&mut input).unwrap().as_deref(), Some("5"));
        assert_eq!(read_line(&mut input).unwrap(), None);

        let mut input = io::Cursor::new(b"\xff5\r\nlast".to_vec());
        assert_eq!(read_line(&mut input).unwrap().as_deref(), Some("\u{fffd}5"));
        assert_eq!(read_line(&mut input).unwrap().as_deref(), Some("last"));
        assert_eq!(read_line(&mut input).unwrap(), None);
    }
}
