//! One-byte encodings of values and moves for the solved tables.
//!
//! A packed value orders like [`Value`]: a larger byte is better for the player to move. The
//! solver can then compare children with plain integer comparisons, and [`BEFORE_MOVE`]
//! turns a child's byte into its parent's view with one table read.

use triad_rules::{Cell, Mark, Move};

use crate::{Value, Verdict};

/// The byte of a position that has not been reached (yet). Below every packed value.
pub(crate) const UNREACHED: u8 = 0;

/// The byte for "no move": the game has ended, or the position is unreachable.
pub(crate) const NO_MOVE: u8 = u8::MAX;

/// The longest game: nine plies.
const PLIES_MAX: u8 = 9;

/// Packs a value of a 3x3 game (`plies` at most 9): a loss in `p` is `1 + p`, a draw in `p`
/// is `32 - p`, a win in `p` is `64 - p`.
pub(crate) const fn pack(value: Value) -> u8 {
    assert!(
        value.plies <= PLIES_MAX,
        "a 3x3 game lasts at most nine plies"
    );
    match value.verdict {
        Verdict::Loss => 1 + value.plies,
        Verdict::Draw => 32 - value.plies,
        Verdict::Win => 64 - value.plies,
    }
}

/// The value of a byte written by [`pack`]; `None` for [`UNREACHED`].
pub(crate) const fn unpack(byte: u8) -> Option<Value> {
    match byte {
        1..=10 => Some(Value::new(Verdict::Loss, byte - 1)),
        23..=32 => Some(Value::new(Verdict::Draw, 32 - byte)),
        55..=64 => Some(Value::new(Verdict::Win, 64 - byte)),
        _ => None,
    }
}

/// `BEFORE_MOVE[pack(v)]` is `pack(v.before_move())` for every value `v` that a move can lead
/// to (at most eight plies left); other entries are [`UNREACHED`].
pub(crate) const BEFORE_MOVE: [u8; 65] = {
    let mut table = [UNREACHED; 65];
    let verdicts = [Verdict::Loss, Verdict::Draw, Verdict::Win];
    let mut v = 0;
    while v < verdicts.len() {
        let mut plies = 0;
        while plies < PLIES_MAX {
            let value = Value::new(verdicts[v], plies);
            table[pack(value) as usize] = pack(value.before_move());
            plies += 1;
        }
        v += 1;
    }
    table
};

/// Packs a move as `cell | mark << 4` (X 0, O 1, S 2), or [`NO_MOVE`].
pub(crate) const fn pack_move(mv: Option<Move>) -> u8 {
    match mv {
        None => NO_MOVE,
        Some(Move { cell, mark }) => {
            let mark = match mark {
                Mark::X => 0,
                Mark::O => 1,
                Mark::S => 2,
            };
            cell.index() | mark << 4
        }
    }
}

/// The move of a byte written by [`pack_move`].
pub(crate) const fn unpack_move(byte: u8) -> Option<Move> {
    if byte == NO_MOVE {
        return None;
    }
    let cell = Cell::ALL[(byte & 0xf) as usize];
    let mark = match byte >> 4 {
        0 => Mark::X,
        1 => Mark::O,
        _ => Mark::S,
    };
    Some(Move::new(cell, mark))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> impl Iterator<Item = Value> + Clone {
        Verdict::ALL
            .into_iter()
            .flat_map(|v| (0..=PLIES_MAX).map(move |p| Value::new(v, p)))
    }

    #[test]
    fn values_round_trip_and_keep_their_order() {
        for a in values() {
            assert_eq!(unpack(pack(a)), Some(a));
            assert!(pack(a) > UNREACHED);
            for b in values() {
                assert_eq!(pack(a).cmp(&pack(b)), a.cmp(&b), "{a} vs {b}");
            }
        }
        assert_eq!(unpack(UNREACHED), None);
    }

    #[test]
    fn before_move_table_agrees_with_value() {
        for v in values().filter(|v| v.plies < PLIES_MAX) {
            assert_eq!(
                unpack(BEFORE_MOVE[usize::from(pack(v))]),
                Some(v.before_move())
            );
        }
    }

    #[test]
    fn moves_round_trip() {
        for cell in Cell::ALL {
            for mark in [Mark::X, Mark::O, Mark::S] {
                let mv = Some(Move::new(cell, mark));
                assert_eq!(unpack_move(pack_move(mv)), mv);
            }
        }
        assert_eq!(unpack_move(pack_move(None)), None);
    }
}
