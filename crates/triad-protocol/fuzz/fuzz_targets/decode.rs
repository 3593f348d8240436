//! Arbitrary bytes as A2A tic-tac-toe messages: the decoder never panics, refuses with a typed error
//! (a rules code 0-5 or a protocol code 220+) or decodes a message that re-encodes to a
//! payload decoding to the same message; and a game state machine fed the decoded messages
//! never panics and keeps its invariants.
//!
//! Input: lines (split on `\n`), each an A2A data part `{"appId","action","payload"}`.
//! `cargo +nightly fuzz run decode` (from crates/triad-protocol/fuzz).
#![no_main]

use libfuzzer_sys::fuzz_target;
use triad_protocol::{Game, Message, Step, decode_data, decode_data_json};
use triad_rules::Player;

fuzz_target!(|data: &[u8]| {
    // The first line also chooses the fed game's role and whether it proposed.
    let role = if data.first().is_some_and(|b| b & 1 == 1) {
        Player::Second
    } else {
        Player::First
    };
    let mut game: Option<Game> = None;
    for line in data.split(|&b| b == b'\n') {
        let (app, message) = match decode_data_json(line) {
            Ok(decoded) => decoded,
            Err(e) => {
                let code = e.code();
                assert!(code <= 5 || (220..=231).contains(&code), "code {code}");
                assert!(!e.name().is_empty() && !e.to_string().is_empty());
                continue;
            }
        };
        // Round trip: the canonical payload decodes to the same message.
        let again = Message::decode_json(app, message.action().id(), &message.payload_json(app))
            .expect("a canonical payload decodes");
        assert_eq!(again, message);
        assert_eq!(
            decode_data(&message.data(app)).expect("a data part decodes"),
            (app, message.clone())
        );

        let game = game.get_or_insert_with(|| match &message {
            Message::Propose(p) => Game::accept(app, p).0,
            _ => Game::propose(app, role, message.game_id().cloned()).0,
        });
        if game.app() != app {
            continue;
        }
        let before = game.clone();
        match game.receive(&message) {
            Ok(steps) => {
                assert!(!steps.is_empty());
                for step in &steps {
                    if let Step::Conflict { error, abort } = step {
                        assert!(error.is_conflict());
                        assert!(matches!(abort, Message::Result(_)));
                        assert!(game.ending().is_some());
                    }
                }
                if steps == [Step::Ignored] {
                    assert_eq!(*game, before, "an ignored message changes nothing");
                }
            }
            Err(_) => assert_eq!(*game, before, "a refused message changes nothing"),
        }
        assert!(game.pending() <= triad_protocol::MAX_PENDING);
        assert!(usize::from(game.seq()) <= 9);
        if game.my_turn() {
            let mv = game.position().legal_moves()[0];
            game.play(mv.cell.index(), mv.mark)
                .expect("a legal move in turn is accepted");
        }
    }
});
