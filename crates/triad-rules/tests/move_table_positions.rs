//! Interop with the move table of the HTML5 canvas tic-tac-toe game (`testdata/moves.js`):
//! its keys are position numbers in that game's encoding, which the crate must read the same
//! way.

use std::collections::BTreeSet;

use triad_rules::{Game, Mark, Player, TicTacToe};

/// The move table, byte for byte as the game ships it (see `testdata/README.md`).
const MOVES_JS: &str = include_str!("../../../testdata/moves.js");

/// The `position:cell` pairs of `function getMoves() { return {2:4,6:0,...};}`.
fn moves_table() -> Vec<(u32, u8)> {
    let text = MOVES_JS;
    let start = text.find("return {").expect("getMoves returns an object") + "return {".len();
    let end = text[start..].find('}').expect("the object closes") + start;
    text[start..end]
        .split(',')
        .filter(|entry| !entry.trim().is_empty())
        .map(|entry| {
            let (key, value) = entry.split_once(':').expect("key:value");
            (key.trim().parse().unwrap(), value.trim().parse().unwrap())
        })
        .collect()
}

/// The table has a key for exactly every reachable tic-tac-toe position with an odd
/// number of marks ("nought's turn" by count, finished games included).
#[test]
fn table_keys_are_exactly_the_positions_with_an_odd_number_of_marks() {
    let table = moves_table();
    assert_eq!(table.len(), 2739);
    let keys: BTreeSet<u32> = table.iter().map(|&(k, _)| k).collect();
    assert_eq!(keys.len(), table.len(), "no key twice");
    let odd: BTreeSet<u32> = (0..19_683)
        .filter(|&n| TicTacToe::from_position_number(n).is_ok_and(|g| g.board().len() % 2 == 1))
        .collect();
    assert_eq!(keys, odd);
}

/// In every unfinished position of the table, the recommended cell is a legal move
/// for O.
#[test]
fn recommended_moves_are_legal_o_moves() {
    let mut unfinished = 0;
    for (key, cell) in moves_table() {
        let game = TicTacToe::from_position_number(key).unwrap();
        if game.is_over() {
            continue;
        }
        unfinished += 1;
        assert_eq!(game.turn(), Player::Second, "{key} {game}");
        assert!(
            game.play_as(Player::Second, cell, Mark::O).is_ok(),
            "{key} {game} {cell}"
        );
    }
    assert_eq!(unfinished, 2097);
}
