//! The move scripts: game *i* of a run, the same as the boardgame.io peer's
//! (`bench/peer/scripts.js`), so that both servers are measured on the very same games.
//!
//! Game *i* plays the cells of a Fisher-Yates shuffle of 0..8 in order (the first player on
//! even plies) until the game ends. The shuffle draws from mulberry32 seeded with
//! `(seed * 1000003 + i) mod 2^32`, where `seed` is `triad bench --seed`.

/// How a scripted game ends: the winner's player index (0 moves first), or a draw.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Ending {
    Winner(u8),
    Draw,
}

/// Game `index`'s cells in the order played, and how it ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Script {
    pub(super) cells: Vec<u8>,
    pub(super) ending: Ending,
}

/// mulberry32, exactly as the peer's JavaScript: the next number in [0, 1).
fn mulberry32(state: &mut u32) -> f64 {
    *state = state.wrapping_add(0x6d2b_79f5);
    let a = *state;
    let mut t = (a ^ (a >> 15)).wrapping_mul(1 | a);
    t = t.wrapping_add((t ^ (t >> 7)).wrapping_mul(61 | t)) ^ t;
    f64::from(t ^ (t >> 14)) / 4_294_967_296.0
}

const LINES: [[usize; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];

/// Game `index`'s script, as the peer's `script(seed, index)` computes it.
pub(super) fn script_for(seed: u32, index: u64) -> Script {
    // Math.imul(seed, 1000003) + i, then >>> 0: everything mod 2^32.
    #[allow(clippy::cast_possible_truncation)]
    let mut state = seed.wrapping_mul(1_000_003).wrapping_add(index as u32);
    let mut perm: [u8; 9] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
    for k in (1..=8usize).rev() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let j = (mulberry32(&mut state) * (k + 1) as f64).floor() as usize;
        perm.swap(k, j);
    }
    let mut board = [None::<u8>; 9];
    for (k, &cell) in perm.iter().enumerate() {
        #[allow(clippy::cast_possible_truncation)]
        let player = (k % 2) as u8;
        board[usize::from(cell)] = Some(player);
        let won = LINES.iter().any(|line| {
            line.iter()
                .all(|&c| board[c].is_some() && board[c] == board[line[0]])
        });
        let cells = perm[..=k].to_vec();
        if won {
            return Script {
                cells,
                ending: Ending::Winner(player),
            };
        }
        if board.iter().all(Option::is_some) {
            return Script {
                cells,
                ending: Ending::Draw,
            };
        }
    }
    unreachable!("nine marks fill the board")
}

/// One line of the peer's `loadgen.js --dump-moves`, byte for byte.
pub(super) fn dump_line(index: u64, script: &Script) -> String {
    let cells: Vec<String> = script.cells.iter().map(u8::to_string).collect();
    let result = match script.ending {
        Ending::Winner(p) => format!("{{\"winner\":\"{p}\"}}"),
        Ending::Draw => "{\"draw\":true}".to_owned(),
    };
    format!(
        "{{\"game\":{index},\"cells\":[{}],\"result\":{result}}}",
        cells.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_scripts_are_the_peers() {
        // The first lines of `node loadgen.js --dump-moves 3 --seed 1`.
        let expected = [
            r#"{"game":0,"cells":[0,2,1,3,4,7,6,5,8],"result":{"winner":"0"}}"#,
            r#"{"game":1,"cells":[1,7,2,5,6,8,4],"result":{"winner":"0"}}"#,
            r#"{"game":2,"cells":[6,4,8,5,0,7,2,3],"result":{"winner":"1"}}"#,
        ];
        for (i, line) in expected.iter().enumerate() {
            assert_eq!(dump_line(i as u64, &script_for(1, i as u64)), *line);
        }
    }

    #[test]
    fn the_first_2000_games_make_the_peers_move_count() {
        // bench/peer/README.md: with --seed 1, games 0..1999 make 15,363 moves, 292 of them draws.
        let scripts: Vec<Script> = (0..2000).map(|i| script_for(1, i)).collect();
        let moves: usize = scripts.iter().map(|s| s.cells.len()).sum();
        let draws = scripts.iter().filter(|s| s.ending == Ending::Draw).count();
        assert_eq!((moves, draws), (15_363, 292));
    }
}
