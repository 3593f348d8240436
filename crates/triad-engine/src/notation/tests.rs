use std::collections::HashMap;

use proptest::prelude::*;
use triad_rules::{AnyGame, Cell, GameKind, Mark, Move, MoveError};

use super::*;
use crate::{Address, Command, Config, Engine, Envelope, Level, MatchId, Seat};

fn mv(square: u8, mark: Mark) -> Move {
    Move::new(Cell::from_square(square).unwrap(), mark)
}

fn err(text: &str) -> (u32, u32, u16) {
    let e = parse(text).unwrap_err();
    // Every error says what to do, and names its place.
    assert!(
        e.to_string()
            .starts_with(&format!("line {}, column {}: ", e.line, e.column))
    );
    (e.line, e.column, e.code())
}

#[test]
fn a_full_record_reads_every_header() {
    let alice = Address::from_bytes([1; 32]);
    let text = format!(
        "[Game \"sos\"]\n[Match \"7\"]\n[Site \"https://triad.example\"]\n\
         [Date \"2026.11.26\"]\n[Time \"00:15:03\"]\n[First \"{alice}\"]\n\
         [Second \"computer (casual)\"]\n[Stake \"1000000000000000000\"]\n\
         [Result \"1-0\"]\n[Termination \"win\"]\n[Event \"Club night\"]\n\n\
         1. S1 {{a comment}} O5 ; to the end of the line\n2. S9 1-0\n"
    );
    let record = parse(&text).unwrap();
    assert_eq!(
        record,
        Record {
            game: GameKind::Sos,
            match_id: Some(MatchId(7)),
            site: Some("https://triad.example".to_owned()),
            date: Some(Date {
                year: 2026,
                month: 11,
                day: 26
            }),
            time: Some(Time {
                hour: 0,
                minute: 15,
                second: 3
            }),
            players: [
                Some(Seat::Human(alice)),
                Some(Seat::Computer(Level::Casual))
            ],
            stake: Some(1_000_000_000_000_000_000),
            result: GameResult::FirstWon,
            termination: Some(EndReason::Win),
            other_headers: vec![("Event".to_owned(), "Club night".to_owned())],
            moves: vec![mv(1, Mark::S), mv(5, Mark::O), mv(9, Mark::S)],
        }
    );
    let rendered = render(&record);
    assert!(rendered.ends_with("\n\n1. S1 O5 2. S9 1-0\n"), "{rendered}");
    assert_eq!(parse(&rendered), Ok(record));
}

#[test]
fn the_least_record_is_a_game_and_its_moves() {
    // Tic-tac-toe takes bare squares; the result is the board's when not written.
    let record = parse("[Game \"ttt\"]\n5 1 9 3 2 8 4 6 7\n").unwrap();
    assert_eq!(record.result, GameResult::Draw);
    assert_eq!(record.position().unwrap().to_string(), "OXOXXOXOX");
    assert_eq!(
        render(&record),
        "[Game \"tic-tac-toe\"]\n[Result \"1/2-1/2\"]\n\n\
         1. X5 O1 2. X9 O3 3. X2 O8 4. X4 O6 5. X7 1/2-1/2\n"
    );
    // No moves at all, and move numbers for the second player's moves, glued or not.
    assert_eq!(parse("[Game \"sos\"]").unwrap().moves, vec![]);
    let glued = parse("[Game \"sos\"]\n1.S5 1...O1 2.s9 *").unwrap();
    assert_eq!(
        glued.moves,
        vec![mv(5, Mark::S), mv(1, Mark::O), mv(9, Mark::S)]
    );
    // Escapes in values, a byte-order mark, CRLF line ends.
    let r = parse("\u{feff}[Game \"sos\"]\r\n[Site \"a \\\"b\\\" \\\\c\"]\r\n\r\n*\r\n").unwrap();
    assert_eq!(r.site.as_deref(), Some("a \"b\" \\c"));
    assert_eq!(parse(&render(&r)), Ok(r));
}

#[test]
fn errors_name_the_line_the_column_and_the_code() {
    let cases: &[(&str, (u32, u32, u16))] = &[
        // 235: not notation.
        ("1. X5", (1, 1, 235)),
        ("[Game \"chess\"]", (1, 1, 235)),
        ("[Game sos]", (1, 1, 235)),
        ("[Game \"sos\"]\n  [Game \"sos\"]", (2, 3, 235)),
        ("[Game \"sos\"]\n[Stake \"01\"]", (2, 1, 235)),
        ("[Game \"sos\"]\n[First \"0x12\"]", (2, 1, 235)),
        ("[Game \"sos\"]\n[Date \"2026.02.29\"]", (2, 1, 235)),
        ("[Game \"sos\"]\n[Time \"24:00:00\"]", (2, 1, 235)),
        ("[Game \"sos\"]\n[Termination \"resigned\"]", (2, 1, 235)),
        ("[Game \"sos\"]\n1. S5\n[Site \"x\"]", (3, 1, 235)),
        ("[Game \"sos\"]\n1. S5 {never closed\nO1", (2, 7, 235)),
        ("[Game \"sos\"]\n1. S5 O10", (2, 7, 235)),
        ("[Game \"sos\"]\n1. S5 5", (2, 7, 235)),
        ("[Game \"sos\"]\n1. S5 2. O1", (2, 7, 235)),
        ("[Game \"sos\"]\n1. S5 O1 2.", (2, 10, 235)),
        ("[Game \"sos\"]\n1. S5 * O1", (2, 9, 235)),
        ("[Game \"sos\"]\n1. S5 2. *", (2, 7, 235)),
        ("[Game \"tic-tac-toe\"]\n1. X5 é", (2, 7, 235)),
        // 236: a move the rules refuse.
        ("[Game \"sos\"]\n1. S5 O5", (2, 7, 236)),
        ("[Game \"sos\"]\n1. X5", (2, 4, 236)),
        ("[Game \"tic-tac-toe\"]\n1. O5", (2, 4, 236)),
        ("[Game \"sos\"]\n\n1. S1 O2 2. S3 O5", (3, 16, 236)),
        // 237: headers against the moves.
        (
            "[Game \"sos\"]\n[Result \"0-1\"]\n1. S1 O2 2. S3 1-0",
            (3, 16, 237),
        ),
        ("[Game \"sos\"]\n1. S1 O2 2. S3 0-1", (2, 16, 237)),
        ("[Game \"sos\"]\n1. S1 O2 2. S3 *", (2, 16, 237)),
        ("[Game \"sos\"]\n1. S1 1/2-1/2", (2, 7, 237)),
        (
            "[Game \"sos\"]\n[Termination \"win\"]\n1. S1 1-0",
            (2, 1, 237),
        ),
        (
            "[Game \"sos\"]\n[Termination \"timeout\"]\n1. S1 0-1",
            (2, 1, 237),
        ),
        (
            "[Game \"sos\"]\n[Termination \"timeout\"]\n1-0",
            (2, 1, 237),
        ),
        (
            "[Game \"sos\"]\n[Termination \"forfeit\"]\n1. S1 *",
            (2, 1, 237),
        ),
        (
            "[Game \"sos\"]\n[Termination \"declined\"]\n1. S1 *",
            (2, 1, 237),
        ),
        (
            "[Game \"sos\"]\n[Termination \"aborted\"]\n1. S1 1-0",
            (2, 1, 237),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(
            err(text),
            *expected,
            "{text:?}: {}",
            parse(text).unwrap_err()
        );
    }
    // The rules' own reason comes through.
    let e = parse("[Game \"sos\"]\n1. S5 O5").unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::IllegalMove {
            text: "O5".to_owned(),
            error: MoveError::CellOccupied
        }
    );
    assert_eq!(e.name(), "notation_illegal_move");
    assert_eq!(
        e.to_string(),
        "line 2, column 7: O5 is illegal: that cell is already taken; choose an empty cell"
    );
    // Endings the engine makes are accepted.
    for text in [
        "[Game \"sos\"]\n[Termination \"timeout\"]\n1. S1 1-0",
        "[Game \"sos\"]\n[Termination \"forfeit\"]\n0-1",
        "[Game \"sos\"]\n[Termination \"aborted\"]\n1. S1 *",
        "[Game \"sos\"]\n[Termination \"expired\"]\n*",
    ] {
        assert!(parse(text).is_ok(), "{text}");
    }
    let too_long = "[Game \"sos\"]\n".to_owned() + &" ".repeat(TEXT_BYTES_MAX);
    assert_eq!(err(&too_long), (1, 1, 235));
}

#[test]
fn utc_dates_are_the_calendars() {
    assert_eq!(
        utc(0),
        (
            Date {
                year: 1970,
                month: 1,
                day: 1
            },
            Time {
                hour: 0,
                minute: 0,
                second: 0
            }
        )
    );
    // 2024-02-29T23:59:59.999Z, a leap day.
    assert_eq!(
        utc(1_709_251_199_999),
        (
            Date {
                year: 2024,
                month: 2,
                day: 29
            },
            Time {
                hour: 23,
                minute: 59,
                second: 59
            }
        )
    );
    // Every day of 1970-2100 renders as a date that parses back.
    for day in 0..47_847u64 {
        let (date, _) = utc(day * 86_400_000);
        assert_eq!(Date::parse(&date.to_string()), Some(date), "day {day}");
    }
}

/// Plays a match in an engine and returns its record.
fn engine_record(moves: &[(u8, Mark)], end: Option<Command>) -> (Record, crate::Match) {
    let owner = Address::from_bytes([9; 32]);
    let (alice, bob) = (Address::from_bytes([1; 32]), Address::from_bytes([2; 32]));
    let mut engine = Engine::new(Config::new(owner));
    let mut run = |who, now, command| engine.execute(&Envelope::new(who, now, command)).unwrap();
    for to in [alice, bob] {
        run(owner, 0, Command::Deposit { to, amount: 1000 });
    }
    let queued = run(
        alice,
        1_764_116_103_250,
        Command::JoinQueue {
            game: GameKind::Sos,
            stake: 10,
        },
    );
    let id = queued.events[0].match_id().unwrap();
    run(
        bob,
        1_764_116_104_000,
        Command::JoinQueue {
            game: GameKind::Sos,
            stake: 10,
        },
    );
    for (i, &(cell, mark)) in moves.iter().enumerate() {
        let who = if i.is_multiple_of(2) { alice } else { bob };
        let seq = i as u8 + 1;
        run(
            who,
            1_764_116_105_000,
            Command::Move {
                match_id: id,
                seq,
                cell,
                mark,
                signed: None,
            },
        );
    }
    if let Some(command) = end {
        run(bob, 1_764_116_106_000, command);
    }
    let m = engine.match_(id).unwrap().clone();
    (Record::from_match(&m), m)
}

#[test]
fn an_engine_match_round_trips() {
    let (record, m) = engine_record(&[(0, Mark::S), (4, Mark::O), (8, Mark::S)], None);
    assert_eq!(record.result, GameResult::FirstWon);
    assert_eq!(record.termination, Some(EndReason::Win));
    assert_eq!(record.moves, m.moves.to_vec());
    let text = render(&record);
    assert!(
        text.contains("[Date \"2025.11.26\"]\n[Time \"00:15:03\"]\n"),
        "{text}"
    );
    assert!(
        text.contains("[Stake \"10\"]\n[Result \"1-0\"]\n[Termination \"win\"]\n"),
        "{text}"
    );
    assert_eq!(parse(&text), Ok(record));
    // A forfeit by the second player, with the board unfinished.
    let (record, m) = engine_record(
        &[(0, Mark::S)],
        Some(Command::Forfeit {
            match_id: MatchId(1),
        }),
    );
    assert_eq!(m.id, MatchId(1));
    assert_eq!(
        (record.result, record.termination),
        (GameResult::FirstWon, Some(EndReason::Forfeit))
    );
    assert_eq!(parse(&render(&record)), Ok(record));
    // A match in play.
    let (record, _) = engine_record(&[(0, Mark::S), (1, Mark::S)], None);
    assert_eq!(
        (record.result, record.termination),
        (GameResult::Unfinished, None)
    );
    assert!(!record.is_over());
    assert_eq!(parse(&render(&record)), Ok(record));
}

/// Every reachable position of `kind` with the moves that first reached it, in order of plies.
fn reachable(kind: GameKind) -> Vec<(AnyGame, Vec<Move>)> {
    let mut seen: HashMap<u16, usize> = HashMap::new();
    let mut out = vec![(AnyGame::new(kind), Vec::new())];
    let mut next = 0;
    while next < out.len() {
        let (position, moves) = out[next].clone();
        next += 1;
        for m in position.legal_moves() {
            let child = position.play_unchecked(m);
            if seen.insert(child.position_number(), out.len()).is_none() {
                let mut path = moves.clone();
                path.push(m);
                out.push((child, path));
            }
        }
    }
    out
}

/// The round trip of every reachable game of both games: 255,168 games of tic-tac-toe and
/// 116,121,216 of SOS.
///
/// SOS has too many games to render one by one in a unit test, so this checks every step
/// they are made of, which covers them all by induction on the plies: `render` writes a
/// game's movetext as its plies' texts (`write_ply`) joined by single spaces, then the
/// result marker; `parse` splits it at whitespace and folds `MoveReader::word` over the
/// words, and the reader's state between plies is the position alone (its move count is
/// the position's, and no move number is pending). So a game round-trips if, from every
/// reachable position, every legal move's ply text reads back as that move leading to that
/// position, no ply text holds whitespace, `{` or `;`, and every reachable position's
/// marker (the board's result, or `*` while it goes on) reads back as its result. This test
/// checks exactly that, for every reachable position of both games (5,478 of tic-tac-toe,
/// 19,416 of SOS) and each of their legal moves; it takes well under a second.
/// `every_tic_tac_toe_game_round_trips_as_text` and `sos_games_round_trip_as_text` check
/// whole texts, headers included.
#[test]
fn every_reachable_game_round_trips_ply_by_ply() {
    let mut positions = 0usize;
    for kind in GameKind::ALL {
        let all = reachable(kind);
        positions += all.len();
        for (position, moves) in &all {
            let mut reader = MoveReader::new(kind);
            reader.position = *position;
            reader.moves.clone_from(moves);
            let at = At { line: 1, column: 1 };
            for m in position.legal_moves() {
                let mut text = String::new();
                write_ply(&mut text, moves.len(), m);
                let mut after = reader.clone();
                for word in text.split(' ') {
                    assert!(!word.is_empty() && !word.contains(char::is_whitespace));
                    assert!(!word.contains(['{', ';', '}']), "{word}");
                    after.word(word, at).unwrap();
                }
                assert_eq!(after.position, position.play_unchecked(m), "{text}");
                assert_eq!(after.moves.last(), Some(&m), "{text}");
                assert_eq!(after.moves.len(), moves.len() + 1);
                assert!(after.numbered.is_none() && after.marker.is_none());
            }
            let result = position
                .outcome()
                .map_or(GameResult::Unfinished, GameResult::of_outcome);
            let mut ended = reader.clone();
            ended.word(result.marker(), at).unwrap();
            assert_eq!(check_ending(&ended, &Headers::default()), Ok(result));
        }
    }
    assert_eq!(positions, 5_478 + 19_416);
}

/// Every game of `kind` (every prefix too when `prefixes`), as far as `plies_max`.
fn games(
    kind: GameKind,
    plies_max: usize,
    prefixes: bool,
    visit: &mut dyn FnMut(&[Move], &AnyGame),
) {
    fn walk(
        game: AnyGame,
        moves: &mut Vec<Move>,
        plies_max: usize,
        prefixes: bool,
        visit: &mut dyn FnMut(&[Move], &AnyGame),
    ) {
        if game.is_over() || moves.len() == plies_max || prefixes {
            visit(moves, &game);
        }
        if game.is_over() || moves.len() == plies_max {
            return;
        }
        for m in game.legal_moves() {
            moves.push(m);
            walk(game.play_unchecked(m), moves, plies_max, prefixes, visit);
            moves.pop();
        }
    }
    walk(
        AnyGame::new(kind),
        &mut Vec::new(),
        plies_max,
        prefixes,
        visit,
    );
}

fn round_trip(kind: GameKind, moves: &[Move], position: &AnyGame, n: usize) {
    let mut record = Record::new(kind);
    record.moves = moves.to_vec();
    record.result = position
        .outcome()
        .map_or(GameResult::Unfinished, GameResult::of_outcome);
    if n.is_multiple_of(2) {
        record.match_id = Some(MatchId(n as u64));
        record.players = [
            Some(Seat::Human(Address::from_bytes([n as u8; 32]))),
            Some(Seat::Computer(Level::Random)),
        ];
        record.stake = Some(n as u128);
        record.termination = position.outcome().map(|o| match o {
            triad_rules::Outcome::Win { .. } => EndReason::Win,
            triad_rules::Outcome::Draw => EndReason::Draw,
        });
    }
    let text = render(&record);
    assert_eq!(parse(&text), Ok(record), "{text}");
}

/// Every one of tic-tac-toe's 255,168 games, rendered with headers and parsed back.
#[test]
fn every_tic_tac_toe_game_round_trips_as_text() {
    let mut n = 0;
    games(GameKind::TicTacToe, 9, false, &mut |moves, position| {
        round_trip(GameKind::TicTacToe, moves, position, n);
        n += 1;
    });
    assert_eq!(n, 255_168);
}

/// Every SOS game of at most five plies, finished or not (18 of one ply, 288 of two, 4,032
/// of three, 47,808 of four and 460,800 of five: 512,946 records; a game can end from the
/// third ply), rendered with headers and parsed back.
#[test]
fn sos_games_round_trip_as_text() {
    let mut n = 0;
    games(GameKind::Sos, 5, true, &mut |moves, position| {
        if !moves.is_empty() {
            round_trip(GameKind::Sos, moves, position, n);
            n += 1;
        }
    });
    assert_eq!(n, 512_946);
}

fn record_strategy() -> impl Strategy<Value = Record> {
    (
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 0..9),
        proptest::option::of(any::<u64>()),
        proptest::option::of("[ -~é\"\\\\]{0,30}"),
        proptest::option::of(any::<u128>()),
        proptest::option::of(0u64..253_402_300_799_000),
        any::<[u8; 2]>(),
    )
        .prop_map(|(sos, picks, id, site, stake, at_ms, seats)| {
            let kind = if sos {
                GameKind::Sos
            } else {
                GameKind::TicTacToe
            };
            let mut game = AnyGame::new(kind);
            let mut record = Record::new(kind);
            for pick in picks {
                let legal = game.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let m = legal[usize::from(pick) % legal.len()];
                game = game.play_unchecked(m);
                record.moves.push(m);
            }
            record.result = game
                .outcome()
                .map_or(GameResult::Unfinished, GameResult::of_outcome);
            record.match_id = id.map(MatchId);
            record.site = site;
            record.stake = stake;
            if let Some(ms) = at_ms {
                let (date, time) = utc(ms);
                (record.date, record.time) = (Some(date), Some(time));
            }
            let seat = |b: u8| match b % 4 {
                0 => None,
                1 => Some(Seat::Computer(Level::Perfect)),
                _ => Some(Seat::Human(Address::from_bytes([b; 32]))),
            };
            record.players = [seat(seats[0]), seat(seats[1])];
            record
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary text never panics, and what parses renders to text that parses the same.
    #[test]
    fn arbitrary_text_never_panics(text in "(?s).{0,200}") {
        if let Ok(record) = parse(&text) {
            prop_assert_eq!(parse(&render(&record)), Ok(record));
        }
    }

    /// Text close to notation: headers and movetext words in any order.
    #[test]
    fn notation_like_text_never_panics(words in proptest::collection::vec(
        prop_oneof![
            Just("[Game \"sos\"]\n".to_owned()), Just("[Game \"tic-tac-toe\"]\n".to_owned()),
            Just("[Result \"1-0\"]\n".to_owned()), Just("[Termination \"timeout\"]\n".to_owned()),
            "[1-9]", "[SOXsox][0-9]", "[0-9]{1,2}\\.{1,3}", Just("{".to_owned()), Just("}".to_owned()),
            Just(";".to_owned()), Just("\n".to_owned()), Just("*".to_owned()), Just("1-0".to_owned()),
            Just("1/2-1/2".to_owned()), "\\[[A-Za-z\" ]{0,8}\\]?",
        ], 0..30), spaces in proptest::collection::vec(any::<bool>(), 30)) {
        let text: String = words.iter().zip(&spaces).map(|(w, s)| if *s { format!("{w} ") } else { w.clone() }).collect();
        if let Ok(record) = parse(&text) {
            prop_assert_eq!(parse(&render(&record)), Ok(record));
        }
    }

    /// Any record of legal moves and any headers renders to text that parses back to it.
    #[test]
    fn records_round_trip(record in record_strategy()) {
        prop_assert_eq!(parse(&render(&record)), Ok(record));
    }
}

/// Every record in `docs/notation.md` reads as the page says: a block followed by a
/// message in backticks fails with exactly that message, any other block parses.
#[test]
fn the_documents_examples_read_as_it_says() {
    let doc = include_str!("../../../../docs/notation.md");
    let mut blocks = 0;
    let mut rest = doc;
    while let Some(start) = rest.find("```text\n") {
        let body = &rest[start + 8..];
        let end = body.find("```\n").unwrap();
        let (text, after) = (&body[..end], &body[end + 4..]);
        match after.strip_prefix('`').filter(|a| a.starts_with("line ")) {
            Some(message) => {
                let message = &message[..message.find('`').unwrap()];
                assert_eq!(parse(text).unwrap_err().to_string(), message, "{text}");
            }
            None => {
                let record = parse(text).unwrap_or_else(|e| panic!("{text}\n{e}"));
                assert_eq!(parse(&render(&record)), Ok(record));
            }
        }
        blocks += 1;
        rest = after;
    }
    assert_eq!(blocks, 7);
}

#[test]
fn a_match_created_past_the_year_9999_has_no_date() {
    let (_, mut m) = engine_record(&[(0, Mark::S)], None);
    m.created_ms = u64::MAX;
    let record = Record::from_match(&m);
    assert_eq!((record.date, record.time), (None, None));
    assert_eq!(parse(&render(&record)), Ok(record));
}
