//! Fuzzes the state-string parser and the position-number decoder, then plays arbitrary move
//! bytes on the parsed position. Nothing may panic, and:
//!
//! - an accepted position prints as a canonical 9-character state string that parses back to
//!   itself, and its position number and board decode back to it;
//! - a refused string is refused for a reason that matches the input;
//! - a number is refused as out of range exactly when it is 19683 or more;
//! - a move is accepted exactly when it is the mover's and in `legal_moves`, and the position
//!   after it satisfies the same round trips.
//!
//! Input layout: byte 0 selects the game (bit 0: tic-tac-toe or SOS) and the source (bit 1:
//! state string or position number). A state string runs up to the first 0xFF byte; a
//! position number is the next 4 bytes, little-endian. The remaining bytes are moves, two
//! bytes each: the cell (any byte), then the mark (low two bits: X, O, S, S) and whether the
//! player not to move makes it (bit 2).

#![no_main]

use libfuzzer_sys::fuzz_target;
use triad_rules::{AnyGame, Game, GameKind, Mark, Move, MoveError, PositionError, Sos, TicTacToe};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let from_number = flags & 2 != 0;
    match flags & 1 {
        0 => run::<TicTacToe>(from_number, rest),
        _ => run::<Sos>(from_number, rest),
    }
});

fn run<G: Game>(from_number: bool, data: &[u8])
where
    AnyGame: From<G>,
{
    let (parsed, moves) = if from_number {
        let (number, moves) = data.split_at(data.len().min(4));
        let mut le = [0u8; 4];
        le[..number.len()].copy_from_slice(number);
        (decode::<G>(u32::from_le_bytes(le)), moves)
    } else {
        let end = data.iter().position(|&b| b == 0xff).unwrap_or(data.len());
        let text = String::from_utf8_lossy(&data[..end]);
        (parse::<G>(&text), data.get(end + 1..).unwrap_or(&[]))
    };
    let Some(mut game) = parsed else {
        return;
    };
    for pair in moves.chunks_exact(2) {
        let (cell, control) = (pair[0], pair[1]);
        let mark = [Mark::X, Mark::O, Mark::S, Mark::S][usize::from(control & 3)];
        let by = if control & 4 == 0 {
            game.turn()
        } else {
            game.turn().other()
        };
        game = play(game, by, cell, mark);
    }
}

/// Parses `text` and checks the invariants; returns the position if accepted.
fn parse<G: Game>(text: &str) -> Option<G>
where
    AnyGame: From<G>,
{
    let result = text.parse::<G>();
    assert_eq!(AnyGame::parse(G::KIND, text), result.map(AnyGame::from));
    match result {
        Ok(game) => {
            let canonical: String = text
                .chars()
                .map(|c| {
                    if c == '.' {
                        '-'
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect();
            assert_eq!(game.to_string(), canonical);
            check_position(game);
            Some(game)
        }
        Err(PositionError::WrongLength { len }) => {
            assert_eq!(len, text.chars().count());
            assert_ne!(len, 9);
            None
        }
        Err(PositionError::InvalidChar { index, ch }) => {
            assert_eq!(text.chars().nth(index), Some(ch));
            assert_eq!(text.chars().count(), 9);
            None
        }
        Err(PositionError::NumberOutOfRange { .. }) => panic!("a string has no number"),
        Err(_) => None,
    }
}

/// Decodes `number` and checks the invariants; returns the position if accepted.
fn decode<G: Game>(number: u32) -> Option<G>
where
    AnyGame: From<G>,
{
    let result = G::from_position_number(number);
    assert_eq!(
        AnyGame::from_position_number(G::KIND, number),
        result.map(AnyGame::from)
    );
    assert_eq!(
        result == Err(PositionError::NumberOutOfRange { number }),
        number >= 19_683
    );
    let game = result.ok()?;
    assert_eq!(u32::from(game.position_number()), number);
    check_position(game);
    Some(game)
}

/// The round trips every accepted position satisfies.
fn check_position<G: Game>(game: G)
where
    AnyGame: From<G>,
{
    let text = game.to_string();
    assert_eq!(text.len(), 9);
    assert!(
        text.chars().all(|c| c == '-'
            || Mark::from_char(c).is_some_and(|m| m.char() == c && G::KIND.has_mark(m)))
    );
    assert_eq!(text.parse::<G>(), Ok(game));
    assert_eq!(G::from_board(game.board()), Ok(game));
    assert_eq!(
        G::from_position_number(u32::from(game.position_number())),
        Ok(game)
    );
    assert_eq!(AnyGame::from(game).to_string(), text);
    let moves = game.legal_moves();
    assert_eq!(moves.is_empty(), game.is_over());
    if !game.is_over() {
        let per_cell = if G::KIND == GameKind::Sos { 2 } else { 1 };
        assert_eq!(
            moves.len(),
            per_cell * game.board().empty_cells().len() as usize
        );
    }
}

/// Plays one arbitrary move and checks the invariants; returns the next position (or the
/// same one if the move was refused).
fn play<G: Game>(game: G, by: triad_rules::Player, cell: u8, mark: Mark) -> G
where
    AnyGame: From<G>,
{
    let result = game.play_as(by, cell, mark);
    let any = AnyGame::from(game).play_as(by, cell, mark);
    assert_eq!(any, result.map(|(g, m)| (AnyGame::from(g), m)));
    assert_eq!(result.map(|(_, m)| m), game.check(by, cell, mark));
    let legal = by == game.turn()
        && triad_rules::Cell::new(cell)
            .is_some_and(|c| game.legal_moves().contains(&Move::new(c, mark)));
    match result {
        Ok((next, played)) => {
            assert!(legal);
            assert_eq!(game.play_unchecked(played), next);
            assert_eq!(next.board().len(), game.board().len() + 1);
            check_position(next);
            next
        }
        Err(error) => {
            assert!(!legal);
            if game.is_over() {
                assert_eq!(error, MoveError::GameOver);
            }
            game
        }
    }
}
