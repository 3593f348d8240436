//! A match as plain text, in the spirit of chess's PGN: headers, then the moves in the
//! squares people read, then the result.
//!
//! ```text
//! [Game "sos"]
//! [Match "7"]
//! [Date "2026.11.26"]
//! [Time "00:15:03"]
//! [First "0x0101…01"]
//! [Second "computer (perfect)"]
//! [Stake "0"]
//! [Result "1-0"]
//! [Termination "win"]
//!
//! 1. S1 O5 2. S9 1-0
//! ```
//!
//! [`parse`] reads untrusted text once into a checked [`Record`]: every move is checked
//! against the rules, and the headers against the moves and each other; the error says at
//! which line and column, with a stable code (the API's 235-237). [`render`] writes a record
//! back; `parse(&render(&r)) == Ok(r)` for every record `parse` returns, and
//! [`Record::from_match`] makes the record of an engine [`Match`]. The format is documented
//! for other programs in `docs/notation.md` in the repository.
//!
//! ```
//! use triad_engine::notation;
//! use triad_rules::GameKind;
//!
//! let record = notation::parse("[Game \"tic-tac-toe\"]\n\n1. X5 O1 2. X9 *\n").unwrap();
//! assert_eq!(record.game, GameKind::TicTacToe);
//! assert_eq!(record.moves.len(), 3);
//! assert_eq!(record.position().unwrap().to_string(), "O---X---X");
//! assert_eq!(notation::parse(&notation::render(&record)), Ok(record));
//!
//! let error = notation::parse("[Game \"sos\"]\n1. S5 O5\n").unwrap_err();
//! assert_eq!((error.line, error.column, error.code()), (2, 7, 236));
//! ```

use core::fmt::{self, Write as _};

use triad_rules::{AnyGame, Cell, GameKind, Mark, Move, MoveError, Outcome, Player};

use crate::{Address, EndReason, Level, Match, MatchId, Seat, parse_amount};

/// The longest text [`parse`] reads, in bytes: a record with every header is under 1 KiB.
pub const TEXT_BYTES_MAX: usize = 64 * 1024;
/// The most headers a text may have.
pub const HEADERS_MAX: usize = 64;
/// The longest header value, in bytes.
pub const HEADER_VALUE_BYTES_MAX: usize = 1024;

/// How a game ended for the players: PGN's result markers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// `1-0`: the first player won.
    FirstWon,
    /// `0-1`: the second player won.
    SecondWon,
    /// `1/2-1/2`: a draw.
    Draw,
    /// `*`: still in play, or ended without a result (cancelled, declined, expired, aborted).
    Unfinished,
}

impl GameResult {
    /// The marker: `1-0`, `0-1`, `1/2-1/2` or `*`.
    #[must_use]
    pub const fn marker(self) -> &'static str {
        match self {
            GameResult::FirstWon => "1-0",
            GameResult::SecondWon => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::Unfinished => "*",
        }
    }

    /// The result with that marker.
    #[must_use]
    pub fn from_marker(text: &str) -> Option<GameResult> {
        [
            GameResult::FirstWon,
            GameResult::SecondWon,
            GameResult::Draw,
            GameResult::Unfinished,
        ]
        .into_iter()
        .find(|r| r.marker() == text)
    }

    /// The result of a win by `winner`, or of no winner: a draw when `draw`, else none.
    #[must_use]
    pub const fn of(winner: Option<Player>, draw: bool) -> GameResult {
        match (winner, draw) {
            (Some(Player::First), _) => GameResult::FirstWon,
            (Some(Player::Second), _) => GameResult::SecondWon,
            (None, true) => GameResult::Draw,
            (None, false) => GameResult::Unfinished,
        }
    }

    /// The result a finished board gives.
    #[must_use]
    pub const fn of_outcome(outcome: Outcome) -> GameResult {
        match outcome {
            Outcome::Win { winner, .. } => GameResult::of(Some(winner), false),
            Outcome::Draw => GameResult::Draw,
        }
    }

    /// The winner, if any.
    #[must_use]
    pub const fn winner(self) -> Option<Player> {
        match self {
            GameResult::FirstWon => Some(Player::First),
            GameResult::SecondWon => Some(Player::Second),
            GameResult::Draw | GameResult::Unfinished => None,
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.marker())
    }
}

/// A calendar date (UTC), written `YYYY.MM.DD` as in PGN.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Date {
    /// The year, 1970-9999.
    pub year: u16,
    /// The month, 1-12.
    pub month: u8,
    /// The day of the month, from 1.
    pub day: u8,
}

/// A time of day (UTC), written `HH:MM:SS`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Time {
    /// 0-23.
    pub hour: u8,
    /// 0-59.
    pub minute: u8,
    /// 0-59.
    pub second: u8,
}

/// The UTC date and time of a Unix time in milliseconds (the proleptic Gregorian calendar;
/// Howard Hinnant's `civil_from_days`).
#[must_use]
pub fn utc(unix_ms: u64) -> (Date, Time) {
    let seconds = unix_ms / 1000;
    let days = seconds / 86_400;
    let rest = seconds % 86_400;
    let time = Time {
        hour: (rest / 3600) as u8,
        minute: (rest % 3600 / 60) as u8,
        second: (rest % 60) as u8,
    };
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + u64::from(month <= 2);
    let date = Date {
        year: u16::try_from(year).unwrap_or(u16::MAX),
        month,
        day,
    };
    (date, time)
}

const fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        _ => 31,
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}.{:02}.{:02}", self.year, self.month, self.day)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}:{:02}", self.hour, self.minute, self.second)
    }
}

/// Fixed-width decimal fields separated by `sep`: `"2026.11.26"` → `[2026, 11, 26]`.
fn fields<const N: usize>(text: &str, sep: char, widths: [usize; N]) -> Option<[u16; N]> {
    let mut out = [0u16; N];
    let mut parts = text.split(sep);
    for (slot, width) in out.iter_mut().zip(widths) {
        let part = parts.next()?;
        if part.len() != width || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *slot = part.parse().ok()?;
    }
    parts.next().is_none().then_some(out)
}

impl Date {
    fn parse(text: &str) -> Option<Date> {
        let [year, month, day] = fields(text, '.', [4, 2, 2])?;
        let (month, day) = (u8::try_from(month).ok()?, u8::try_from(day).ok()?);
        ((1970..=9999).contains(&year)
            && (1..=12).contains(&month)
            && (1..=days_in_month(year, month)).contains(&day))
        .then_some(Date { year, month, day })
    }
}

impl Time {
    fn parse(text: &str) -> Option<Time> {
        let [hour, minute, second] = fields(text, ':', [2, 2, 2])?;
        let time = Time {
            hour: u8::try_from(hour).ok()?,
            minute: u8::try_from(minute).ok()?,
            second: u8::try_from(second).ok()?,
        };
        (time.hour < 24 && time.minute < 60 && time.second < 60).then_some(time)
    }
}

/// A seat's header value: the address, or `computer (perfect)` and the like.
fn seat_text(seat: Seat) -> String {
    match seat {
        Seat::Human(address) => address.to_string(),
        Seat::Computer(level) => format!("computer ({})", level_name(level)),
    }
}

const LEVELS: [Level; 3] = [Level::Perfect, Level::Casual, Level::Random];

const fn level_name(level: Level) -> &'static str {
    match level {
        Level::Perfect => "perfect",
        Level::Casual => "casual",
        Level::Random => "random",
    }
}

fn parse_seat(text: &str) -> Option<Seat> {
    if let Some(level) = text
        .strip_prefix("computer (")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        return LEVELS
            .into_iter()
            .find(|l| level_name(*l) == level)
            .map(Seat::Computer);
    }
    text.parse::<Address>().ok().map(Seat::Human)
}

const END_REASONS: [EndReason; 8] = [
    EndReason::Win,
    EndReason::Draw,
    EndReason::Forfeit,
    EndReason::Timeout,
    EndReason::Cancelled,
    EndReason::Declined,
    EndReason::Expired,
    EndReason::Aborted,
];

/// One match in notation: the headers and the moves.
///
/// [`parse`] returns only records whose moves are legal from the empty board and whose
/// headers agree with them; a record built by hand (the fields are public) is written by
/// [`render`] as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// `[Game]`: which game. The only required header.
    pub game: GameKind,
    /// `[Match]`: the match's id on the server it was played on.
    pub match_id: Option<MatchId>,
    /// `[Site]`: where it was played (a URL, or any text).
    pub site: Option<String>,
    /// `[Date]`: when the match was created, UTC.
    pub date: Option<Date>,
    /// `[Time]`: when the match was created, UTC.
    pub time: Option<Time>,
    /// `[First]`, `[Second]`: who sat in each seat (the first player is X in tic-tac-toe).
    pub players: [Option<Seat>; 2],
    /// `[Stake]`: each player's stake in minor units.
    pub stake: Option<u128>,
    /// `[Result]` and the movetext's final marker.
    pub result: GameResult,
    /// `[Termination]`: how the match ended (the engine's end reason).
    pub termination: Option<EndReason>,
    /// Every other header, in order: kept, and written back after the known ones.
    pub other_headers: Vec<(String, String)>,
    /// The moves from the empty board.
    pub moves: Vec<Move>,
}

impl Record {
    /// A record of `game` with no moves and no headers but the game.
    #[must_use]
    pub fn new(game: GameKind) -> Record {
        Record {
            game,
            match_id: None,
            site: None,
            date: None,
            time: None,
            players: [None, None],
            stake: None,
            result: GameResult::Unfinished,
            termination: None,
            other_headers: Vec::new(),
            moves: Vec::new(),
        }
    }

    /// The record of an engine match: its game, id, creation time (to the second; none past
    /// the year 9999), seats, stake, result, end reason and moves.
    #[must_use]
    pub fn from_match(m: &Match) -> Record {
        let (date, time) = match utc(m.created_ms) {
            (date, time) if date.year <= 9999 => (Some(date), Some(time)),
            _ => (None, None),
        };
        let result = m.result.map_or(GameResult::Unfinished, |r| {
            GameResult::of(r.winner, r.reason == EndReason::Draw)
        });
        Record {
            match_id: Some(m.id),
            date,
            time,
            players: m.seats.map_or([None, None], |s| [Some(s[0]), Some(s[1])]),
            stake: Some(m.stake),
            result,
            termination: m.result.map(|r| r.reason),
            moves: m.moves.to_vec(),
            ..Record::new(m.game())
        }
    }

    /// The position after the moves.
    ///
    /// # Errors
    /// The rules' refusal of the first illegal move (never for a record [`parse`] returned).
    pub fn position(&self) -> Result<AnyGame, MoveError> {
        self.moves
            .iter()
            .try_fold(AnyGame::new(self.game), |game, &mv| game.play(mv))
    }

    /// Whether the match is over: it has a result, an end reason, or a finished board.
    #[must_use]
    pub fn is_over(&self) -> bool {
        self.result != GameResult::Unfinished
            || self.termination.is_some()
            || self.position().is_ok_and(|p| p.is_over())
    }

    /// A suggested file name: `triad-<game>-<match>.txt`, or without the match.
    #[must_use]
    pub fn file_name(&self) -> String {
        match self.match_id {
            Some(id) => format!("triad-{}-{id}.txt", self.game),
            None => format!("triad-{}.txt", self.game),
        }
    }
}

/// A move's text: the mark's letter and the square, `X5` or `S1`.
#[must_use]
pub fn move_text(mv: Move) -> String {
    format!("{}{}", mv.mark, mv.cell.square())
}

/// Writes the text of ply `ply` (0-based): the move number before the first player's move,
/// then the move. `render` writes a game as its plies' texts joined by single spaces.
pub(crate) fn write_ply(out: &mut String, ply: usize, mv: Move) {
    if ply.is_multiple_of(2) {
        let _ = write!(out, "{}. ", ply / 2 + 1);
    }
    let _ = write!(out, "{}{}", mv.mark, mv.cell.square());
}

fn write_header(out: &mut String, name: &str, value: &str) {
    out.push('[');
    out.push_str(name);
    out.push_str(" \"");
    for ch in value.chars() {
        if matches!(ch, '"' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out.push_str("\"]\n");
}

/// The record as text: the headers in a fixed order (`Game`, `Match`, `Site`, `Date`,
/// `Time`, `First`, `Second`, `Stake`, `Result`, `Termination`, then the others as they
/// came), a blank line, and the moves with the result marker on one line.
#[must_use]
pub fn render(record: &Record) -> String {
    let mut out = String::with_capacity(512);
    write_header(&mut out, "Game", record.game.name());
    if let Some(id) = record.match_id {
        write_header(&mut out, "Match", &id.to_string());
    }
    if let Some(site) = &record.site {
        write_header(&mut out, "Site", site);
    }
    if let Some(date) = record.date {
        write_header(&mut out, "Date", &date.to_string());
    }
    if let Some(time) = record.time {
        write_header(&mut out, "Time", &time.to_string());
    }
    for (name, seat) in ["First", "Second"].into_iter().zip(record.players) {
        if let Some(seat) = seat {
            write_header(&mut out, name, &seat_text(seat));
        }
    }
    if let Some(stake) = record.stake {
        write_header(&mut out, "Stake", &stake.to_string());
    }
    write_header(&mut out, "Result", record.result.marker());
    if let Some(reason) = record.termination {
        write_header(&mut out, "Termination", reason.name());
    }
    for (name, value) in &record.other_headers {
        write_header(&mut out, name, value);
    }
    out.push('\n');
    for (ply, &mv) in record.moves.iter().enumerate() {
        write_ply(&mut out, ply, mv);
        out.push(' ');
    }
    out.push_str(record.result.marker());
    out.push('\n');
    out
}

/// What is wrong with a text, and where. [`code`](NotationError::code) is stable: 235 the
/// text is not notation, 236 a move the rules refuse, 237 headers that disagree with the
/// moves or each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotationError {
    /// The 1-based line.
    pub line: u32,
    /// The 1-based column, in characters.
    pub column: u32,
    /// What is wrong.
    pub kind: ErrorKind,
}

/// What is wrong with a text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The text is longer than [`TEXT_BYTES_MAX`].
    TooLong {
        /// Its length in bytes.
        bytes: usize,
    },
    /// A header line is not `[Name "value"]`.
    MalformedHeader,
    /// More headers than [`HEADERS_MAX`], or a value longer than [`HEADER_VALUE_BYTES_MAX`].
    HeaderTooLarge,
    /// The same header twice.
    DuplicateHeader {
        /// Its name.
        name: String,
    },
    /// A known header's value is not one it takes.
    BadHeaderValue {
        /// The header.
        name: &'static str,
        /// What it takes.
        expected: &'static str,
    },
    /// No `[Game]` header.
    MissingGame,
    /// A header after the moves began.
    HeaderAfterMoves,
    /// A `{` comment without its `}`.
    UnterminatedComment,
    /// A word that is no move, move number or result.
    UnexpectedToken {
        /// The word.
        token: String,
    },
    /// A move number that is not the move's.
    WrongMoveNumber {
        /// What was written.
        found: String,
        /// What the move's number is, written as it should be.
        expected: String,
    },
    /// A move number with no move after it.
    NumberWithoutMove,
    /// An SOS move without its letter.
    MissingLetter {
        /// The square.
        square: u8,
    },
    /// Something after the result marker.
    TextAfterResult,
    /// A move the rules refuse.
    IllegalMove {
        /// The move as written.
        text: String,
        /// The rules' reason.
        error: MoveError,
    },
    /// The `[Result]` header and the result marker differ.
    ResultsDiffer {
        /// The header's.
        header: GameResult,
        /// The marker's.
        marker: GameResult,
    },
    /// The moves finish the game with another result than the one written.
    ResultNotTheBoards {
        /// The result written.
        written: GameResult,
        /// The board's.
        board: GameResult,
    },
    /// The result and the end reason (and the board) cannot go together.
    TerminationDisagrees {
        /// The end reason written.
        termination: EndReason,
        /// The result.
        result: GameResult,
        /// Why not, in plain words.
        why: &'static str,
    },
}

impl NotationError {
    /// The stable numeric code: 235, 236 or 237.
    #[must_use]
    pub fn code(&self) -> u16 {
        match self.kind {
            ErrorKind::IllegalMove { .. } => 236,
            ErrorKind::ResultsDiffer { .. }
            | ErrorKind::ResultNotTheBoards { .. }
            | ErrorKind::TerminationDisagrees { .. } => 237,
            _ => 235,
        }
    }

    /// The stable snake_case name: `notation_invalid`, `notation_illegal_move` or
    /// `notation_inconsistent`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self.code() {
            236 => "notation_illegal_move",
            237 => "notation_inconsistent",
            _ => "notation_invalid",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::TooLong { bytes } => write!(
                f,
                "the text has {bytes} bytes, more than a record can have ({TEXT_BYTES_MAX}); give one match's record"
            ),
            ErrorKind::MalformedHeader => f.write_str(
                "a header is one line [Name \"value\"]: a name of letters, digits and _, then the value in double quotes (\\\" and \\\\ inside)",
            ),
            ErrorKind::HeaderTooLarge => write!(
                f,
                "too many headers or too long a value: at most {HEADERS_MAX} headers of {HEADER_VALUE_BYTES_MAX} bytes"
            ),
            ErrorKind::DuplicateHeader { name } => {
                write!(f, "the header {name} is given twice; keep one")
            }
            ErrorKind::BadHeaderValue { name, expected } => {
                write!(f, "the {name} header takes {expected}")
            }
            ErrorKind::MissingGame => f.write_str(
                "the record does not say its game; begin it with [Game \"tic-tac-toe\"] or [Game \"sos\"]",
            ),
            ErrorKind::HeaderAfterMoves => {
                f.write_str("headers come before the moves; move this line up")
            }
            ErrorKind::UnterminatedComment => {
                f.write_str("this { comment has no closing }; close it")
            }
            ErrorKind::UnexpectedToken { token } => write!(
                f,
                "{token:?} is not a move, a move number or a result; write moves as a letter and a square 1-9, like X5 or S1"
            ),
            ErrorKind::WrongMoveNumber { found, expected } => write!(
                f,
                "the move number {found} is not this move's; write {expected} or leave the number out"
            ),
            ErrorKind::NumberWithoutMove => f.write_str(
                "a move number must be followed by its move; write the move or remove the number",
            ),
            ErrorKind::MissingLetter { square } => write!(
                f,
                "an SOS move names its letter; write S{square} or O{square}"
            ),
            ErrorKind::TextAfterResult => f.write_str(
                "the result marker ends the moves; remove what follows it or put it in a {comment}",
            ),
            ErrorKind::IllegalMove { text, error } => write!(f, "{text} is illegal: {error}"),
            ErrorKind::ResultsDiffer { header, marker } => write!(
                f,
                "the Result header says {header} but the moves end with {marker}; make them the same"
            ),
            ErrorKind::ResultNotTheBoards { written, board } => write!(
                f,
                "the moves end the game as {board}, but the result written is {written}; write {board}"
            ),
            ErrorKind::TerminationDisagrees {
                termination,
                result,
                why,
            } => write!(
                f,
                "the Termination {} does not fit the result {result}: {why}",
                termination.name()
            ),
        }
    }
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.kind
        )
    }
}

impl std::error::Error for NotationError {}

/// A place in the text.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct At {
    line: u32,
    column: u32,
}

impl At {
    fn error(self, kind: ErrorKind) -> NotationError {
        NotationError {
            line: self.line,
            column: self.column,
            kind,
        }
    }

    /// The place `chars` characters further on the same line.
    fn plus(self, chars: usize) -> At {
        At {
            line: self.line,
            column: self
                .column
                .saturating_add(u32::try_from(chars).unwrap_or(u32::MAX)),
        }
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The movetext's reader: a fold over its words whose state is the position, so reading a
/// game is reading its plies one after another (the exhaustive round trip relies on it).
#[derive(Clone, Debug)]
pub(crate) struct MoveReader {
    pub(crate) position: AnyGame,
    pub(crate) moves: Vec<Move>,
    /// Set by a move number (where it is): the move it numbers comes next.
    numbered: Option<At>,
    /// The result marker, once read.
    pub(crate) marker: Option<(GameResult, At)>,
}

impl MoveReader {
    pub(crate) fn new(game: GameKind) -> MoveReader {
        MoveReader {
            position: AnyGame::new(game),
            moves: Vec::new(),
            numbered: None,
            marker: None,
        }
    }

    /// Reads one whitespace-separated word of movetext.
    fn word(&mut self, word: &str, at: At) -> Result<(), NotationError> {
        if self.marker.is_some() {
            return Err(at.error(ErrorKind::TextAfterResult));
        }
        if let Some(result) = GameResult::from_marker(word) {
            if let Some(number) = self.numbered {
                return Err(number.error(ErrorKind::NumberWithoutMove));
            }
            self.marker = Some((result, at));
            return Ok(());
        }
        // A move number, `3.` or `3...`, perhaps glued to its move (`3.X5`).
        let digits = word.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && word[digits..].starts_with('.') {
            let dots = word[digits..].bytes().take_while(|&b| b == b'.').count();
            let (number, rest) = word.split_at(digits + dots);
            self.move_number(number, at)?;
            return if rest.is_empty() {
                Ok(())
            } else {
                self.move_word(rest, at.plus(number.chars().count()))
            };
        }
        self.move_word(word, at)
    }

    fn move_number(&mut self, number: &str, at: At) -> Result<(), NotationError> {
        let ply = self.moves.len();
        let expected = if ply.is_multiple_of(2) {
            format!("{}.", ply / 2 + 1)
        } else {
            format!("{}...", ply / 2 + 1)
        };
        // `3.` and `3...` both number the first player's move: PGN writes the dots only
        // before the second player's.
        let fits = number == expected
            || (ply.is_multiple_of(2) && number == format!("{}...", ply / 2 + 1));
        if !fits || self.numbered.is_some() {
            return Err(at.error(ErrorKind::WrongMoveNumber {
                found: number.to_owned(),
                expected,
            }));
        }
        self.numbered = Some(at);
        Ok(())
    }

    fn move_word(&mut self, word: &str, at: At) -> Result<(), NotationError> {
        let mv = self.read_move(word, at)?;
        self.position = self.position.play(mv).map_err(|error| {
            at.error(ErrorKind::IllegalMove {
                text: word.to_owned(),
                error,
            })
        })?;
        self.moves.push(mv);
        self.numbered = None;
        Ok(())
    }

    /// A move's text into a move of this game: `X5`, `s1`, or in tic-tac-toe a bare square.
    fn read_move(&self, word: &str, at: At) -> Result<Move, NotationError> {
        let unexpected = || {
            at.error(ErrorKind::UnexpectedToken {
                token: word.chars().take(40).collect(),
            })
        };
        let mut chars = word.chars();
        let (letter, square) = match (chars.next(), chars.next(), chars.next()) {
            (Some(d @ '1'..='9'), None, None) => (None, d),
            (Some(l), Some(d @ '1'..='9'), None) => {
                (Some(Mark::from_char(l).ok_or_else(unexpected)?), d)
            }
            _ => return Err(unexpected()),
        };
        let square = square as u8 - b'0';
        let cell = Cell::from_square(square).ok_or_else(unexpected)?;
        let game = self.position.kind();
        let mark = match letter {
            Some(mark) => mark,
            None if game == GameKind::TicTacToe => game.marks_for(self.position.turn())[0],
            None => return Err(at.error(ErrorKind::MissingLetter { square })),
        };
        Ok(Move::new(cell, mark))
    }
}

/// The known headers' values, as read.
#[derive(Default)]
struct Headers {
    game: Option<GameKind>,
    result: Option<(GameResult, At)>,
    termination: Option<(EndReason, At)>,
}

/// Reads a header line (its first character is `[`).
fn header_line(line: &str, at: At) -> Result<(String, String), NotationError> {
    let malformed = || at.error(ErrorKind::MalformedHeader);
    let inner = line
        .trim_end()
        .strip_prefix('[')
        .and_then(|l| l.strip_suffix(']'))
        .ok_or_else(malformed)?;
    let name_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let (name, rest) = inner.split_at(name_len);
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(malformed());
    }
    let quoted = rest
        .trim_start()
        .strip_prefix('"')
        .filter(|_| rest.starts_with([' ', '\t']))
        .ok_or_else(malformed)?
        .trim_end();
    let body = quoted.strip_suffix('"').ok_or_else(malformed)?;
    let mut value = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => match chars.next() {
                Some(escaped @ ('"' | '\\')) => value.push(escaped),
                _ => return Err(malformed()),
            },
            '"' => return Err(malformed()),
            _ => value.push(ch),
        }
    }
    if value.len() > HEADER_VALUE_BYTES_MAX {
        return Err(at.error(ErrorKind::HeaderTooLarge));
    }
    Ok((name.to_owned(), value))
}

/// Sets a known header on the record, or keeps an unknown one.
fn header(
    record: &mut Record,
    known: &mut Headers,
    name: String,
    value: String,
    at: At,
) -> Result<(), NotationError> {
    let bad = |name: &'static str, expected: &'static str| {
        at.error(ErrorKind::BadHeaderValue { name, expected })
    };
    match name.as_str() {
        "Game" => {
            known.game = Some(
                value
                    .parse()
                    .map_err(|_| bad("Game", "\"tic-tac-toe\" or \"sos\""))?,
            );
        }
        "Match" => {
            record.match_id = Some(
                value
                    .parse::<u64>()
                    .ok()
                    .filter(|_| value.bytes().all(|b| b.is_ascii_digit()))
                    .map(MatchId)
                    .ok_or_else(|| bad("Match", "the match's id, a whole number"))?,
            );
        }
        "Site" => record.site = Some(value),
        "Date" => {
            record.date =
                Some(Date::parse(&value).ok_or_else(|| bad("Date", "a UTC date YYYY.MM.DD"))?);
        }
        "Time" => {
            record.time =
                Some(Time::parse(&value).ok_or_else(|| bad("Time", "a UTC time HH:MM:SS"))?);
        }
        "First" | "Second" => {
            let (slot, label) = if name == "First" {
                (0, "First")
            } else {
                (1, "Second")
            };
            record.players[slot] = Some(parse_seat(&value).ok_or_else(|| {
                bad(
                    label,
                    "an address (0x and 64 hexadecimal digits) or \"computer (perfect)\", \"computer (casual)\" or \"computer (random)\"",
                )
            })?);
        }
        "Stake" => {
            record.stake = Some(parse_amount(&value).map_err(|_| {
                bad(
                    "Stake",
                    "each player's stake in minor units: digits, no leading zero",
                )
            })?);
        }
        "Result" => {
            known.result = Some((
                GameResult::from_marker(&value)
                    .ok_or_else(|| bad("Result", "\"1-0\", \"0-1\", \"1/2-1/2\" or \"*\""))?,
                at,
            ));
        }
        "Termination" => {
            let reason = END_REASONS
                .into_iter()
                .find(|r| r.name() == value)
                .ok_or_else(|| {
                    bad(
                        "Termination",
                        "win, draw, forfeit, timeout, cancelled, declined, expired or aborted",
                    )
                })?;
            known.termination = Some((reason, at));
        }
        _ => record.other_headers.push((name, value)),
    }
    Ok(())
}

/// Checks the result and the end reason against the board, and returns the result.
fn check_ending(reader: &MoveReader, known: &Headers) -> Result<GameResult, NotationError> {
    if let Some(number) = reader.numbered {
        return Err(number.error(ErrorKind::NumberWithoutMove));
    }
    let written = match (known.result, reader.marker) {
        (Some((header, _)), Some((marker, at))) if header != marker => {
            return Err(at.error(ErrorKind::ResultsDiffer { header, marker }));
        }
        (_, Some((result, at))) | (Some((result, at)), None) => Some((result, at)),
        (None, None) => None,
    };
    let position = reader.position;
    let result = match (position.outcome(), written) {
        (Some(outcome), Some((written, at))) => {
            let board = GameResult::of_outcome(outcome);
            if written != board {
                return Err(at.error(ErrorKind::ResultNotTheBoards { written, board }));
            }
            board
        }
        (Some(outcome), None) => GameResult::of_outcome(outcome),
        (None, Some((GameResult::Draw, at))) => {
            return Err(at.error(ErrorKind::ResultNotTheBoards {
                written: GameResult::Draw,
                board: GameResult::Unfinished,
            }));
        }
        (None, Some((written, _))) => written,
        (None, None) => GameResult::Unfinished,
    };
    let Some((termination, at)) = known.termination else {
        return Ok(result);
    };
    let plies = reader.moves.len();
    let why = match (termination, position.outcome(), result) {
        (EndReason::Win, Some(Outcome::Win { .. }), _)
        | (EndReason::Draw, Some(Outcome::Draw), _) => None,
        (EndReason::Win | EndReason::Draw, Some(_), _) => Some(
            "the moves end the game the other way: a line is a win, a full board without one a draw",
        ),
        (EndReason::Win | EndReason::Draw, None, _) => Some(
            "a win or a draw is a finished board, and the moves do not finish it (a player who gave up forfeited)",
        ),
        (_, Some(_), _) => Some("the moves finish the game, so it ended by a win or a draw"),
        (EndReason::Forfeit | EndReason::Timeout, None, GameResult::Unfinished) => {
            Some("a forfeit or a timeout has a winner; write 1-0 or 0-1")
        }
        (EndReason::Timeout, None, r) if r.winner() == Some(position.turn()) => {
            Some("on a timeout the player to move loses, and the result names them the winner")
        }
        (EndReason::Timeout, None, _) if plies == 0 => {
            Some("a match whose first move never came is aborted, not timed out")
        }
        (EndReason::Forfeit | EndReason::Timeout, None, _) => None,
        (_, None, GameResult::FirstWon | GameResult::SecondWon | GameResult::Draw) => {
            Some("a cancelled, declined, expired or aborted match has no result; write *")
        }
        (EndReason::Cancelled | EndReason::Declined | EndReason::Expired, None, _) if plies > 0 => {
            Some("a cancelled, declined or expired match was never played; it has no moves")
        }
        (_, None, _) => None,
    };
    match why {
        Some(why) => Err(at.error(ErrorKind::TerminationDisagrees {
            termination,
            result,
            why,
        })),
        None => Ok(result),
    }
}

/// Reads a record, checking every move against the rules and the headers against the
/// moves.
///
/// The grammar (`docs/notation.md`): header lines `[Name "value"]` first (blank lines
/// allowed), then the movetext: words separated by whitespace, each a move number (`1.`,
/// `1...`), a move (a mark's letter and a square 1-9: `X5`, `S1`; in tic-tac-toe the
/// square alone), or the result marker (`1-0`, `0-1`, `1/2-1/2`, `*`) at the end; `{…}`
/// and `;` to the end of the line are comments.
///
/// # Errors
/// [`NotationError`] at the first thing wrong, with its line and column.
pub fn parse(text: &str) -> Result<Record, NotationError> {
    let start = At { line: 1, column: 1 };
    if text.len() > TEXT_BYTES_MAX {
        return Err(start.error(ErrorKind::TooLong { bytes: text.len() }));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut record = Record::new(GameKind::TicTacToe);
    let mut known = Headers::default();
    let mut names: Vec<String> = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    // The headers.
    while let Some(&(index, line)) = lines.peek() {
        let at = At {
            line: count(index + 1),
            column: count(line.chars().take_while(|c| c.is_whitespace()).count() + 1),
        };
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            lines.next();
            continue;
        }
        if !trimmed.starts_with('[') {
            break;
        }
        let (name, value) = header_line(trimmed, at)?;
        if names.len() >= HEADERS_MAX {
            return Err(at.error(ErrorKind::HeaderTooLarge));
        }
        if names.contains(&name) {
            return Err(at.error(ErrorKind::DuplicateHeader { name }));
        }
        names.push(name.clone());
        header(&mut record, &mut known, name, value, at)?;
        lines.next();
    }
    let first_move_line = lines.peek().map_or(start, |&(index, _)| At {
        line: count(index + 1),
        column: 1,
    });
    record.game = known
        .game
        .ok_or_else(|| first_move_line.error(ErrorKind::MissingGame))?;
    // The movetext.
    let mut reader = MoveReader::new(record.game);
    let mut in_comment: Option<At> = None;
    for (index, line) in lines {
        let mut chars = line.char_indices().peekable();
        let mut column = 0usize;
        let at = |column: usize| At {
            line: count(index + 1),
            column: count(column + 1),
        };
        while let Some((offset, ch)) = chars.next() {
            let here = column;
            column += 1;
            if in_comment.is_some() {
                if ch == '}' {
                    in_comment = None;
                }
                continue;
            }
            match ch {
                '{' => in_comment = Some(at(here)),
                ';' => break,
                '[' if line[..offset].trim().is_empty() => {
                    return Err(at(here).error(ErrorKind::HeaderAfterMoves));
                }
                c if c.is_whitespace() => {}
                _ => {
                    let mut word_end = line.len();
                    while let Some(&(next, c)) = chars.peek() {
                        if c.is_whitespace() || c == '{' || c == ';' {
                            word_end = next;
                            break;
                        }
                        chars.next();
                        column += 1;
                    }
                    reader.word(&line[offset..word_end], at(here))?;
                }
            }
        }
    }
    if let Some(at) = in_comment {
        return Err(at.error(ErrorKind::UnterminatedComment));
    }
    record.result = check_ending(&reader, &known)?;
    record.termination = known.termination.map(|(reason, _)| reason);
    record.moves = reader.moves;
    Ok(record)
}

#[cfg(test)]
mod tests;
