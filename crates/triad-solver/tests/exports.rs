//! The JSON Lines and moves.js exports, and the moves.js reader's refusals.

use serde_json::Value as Json;
use triad_rules::{AnyGame, GameKind};
use triad_solver::{MovesJsError, jsonl, moves_js, parse_moves_js, table, write_jsonl};

#[test]
fn jsonl_has_one_valid_line_per_ongoing_position() {
    for kind in GameKind::ALL {
        let table = table(kind);
        let text = jsonl(table);
        assert!(text.ends_with('\n'));
        let mut previous = None;
        let mut lines = 0;
        for line in text.lines() {
            lines += 1;
            let json: Json = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            let object = json.as_object().unwrap();
            let keys: Vec<&str> = object.keys().map(String::as_str).collect();
            assert_eq!(keys.len(), 4, "{line}");
            let board = json["board"].as_str().unwrap();
            let game = AnyGame::parse(kind, board).unwrap();
            assert!(!game.is_over(), "{line}");
            let value = table.value(&game).unwrap();
            assert_eq!(json["value"], value.verdict.name(), "{line}");
            assert_eq!(json["plies"], value.plies, "{line}");
            let best = table.best_move(&game).unwrap();
            assert_eq!(json["best"]["cell"], best.cell.index(), "{line}");
            assert_eq!(json["best"]["mark"], best.mark.char().to_string(), "{line}");
            assert_eq!(json["best"].as_object().unwrap().len(), 2, "{line}");
            // Lines come by increasing position number.
            let number = game.position_number();
            assert!(previous < Some(number), "{line}");
            previous = Some(number);
        }
        assert_eq!(lines, table.counts().non_terminal(), "{kind}");
    }
}

#[test]
fn jsonl_lines_look_like_the_documented_example() {
    let text = jsonl(table(GameKind::TicTacToe));
    assert!(text.lines().any(|line| line
        == r#"{"board":"XX--O----","value":"draw","plies":6,"best":{"cell":2,"mark":"O"}}"#));
    let sos = jsonl(table(GameKind::Sos));
    assert!(sos.lines().any(|line| line
        == r#"{"board":"O-SOOS--S","value":"win","plies":1,"best":{"cell":6,"mark":"S"}}"#));
}

#[test]
fn write_jsonl_passes_writer_errors_on() {
    struct Broken;
    impl std::io::Write for Broken {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let error = write_jsonl(table(GameKind::Sos), Broken).unwrap_err();
    assert!(error.to_string().contains("disk full"), "{error}");
}

#[test]
fn moves_js_is_for_tic_tac_toe_only() {
    let error = moves_js(table(GameKind::Sos)).unwrap_err();
    assert_eq!(error.kind, GameKind::Sos);
    assert!(error.to_string().contains("tic-tac-toe"), "{error}");
}

#[test]
fn the_reader_refuses_what_is_out_of_shape() {
    let head = "function getMoves() { return {";
    let cases = [
        ("getMoves = {2:4,};", MovesJsError::MissingHead),
        (
            "function getMoves() { return {2:4,}",
            MovesJsError::MissingTail,
        ),
        (
            "function getMoves() { return {2:4,,6:0};}",
            MovesJsError::BadEntry {
                index: 1,
                text: String::new(),
            },
        ),
        (
            "function getMoves() { return {2=4,};}",
            MovesJsError::BadEntry {
                index: 0,
                text: "2=4".to_owned(),
            },
        ),
        (
            "function getMoves() { return {+2:4,};}",
            MovesJsError::BadEntry {
                index: 0,
                text: "+2:4".to_owned(),
            },
        ),
        (
            "function getMoves() { return {19683:4,};}",
            MovesJsError::PositionOutOfRange { position: 19_683 },
        ),
        (
            "function getMoves() { return {2:4,2:5,};}",
            MovesJsError::DuplicatePosition { position: 2 },
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_moves_js(text), Err(expected.clone()), "{text}");
        assert!(!expected.to_string().is_empty());
    }
    // The empty table, with or without the final comma.
    assert!(parse_moves_js(&format!("{head}}};}}")).unwrap().is_empty());
    assert_eq!(parse_moves_js(&format!("{head}2:4}};}}")).unwrap().len(), 1);
}
