//! An independent model of both games for cross-checking the solver: boards are byte
//! strings, lines and wins are written out again here, reachable positions are found by a
//! depth-first search over move sequences, and values by a plain recursive minimax with a
//! memo of its own. Nothing here uses `triad_rules`' win logic or the solver's tables.

use std::collections::{BTreeMap, HashMap, btree_map::Entry};

/// Which game the model plays.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Rules {
    TicTacToe,
    Sos,
}

/// A board as its state string: `-` for empty, else `X`, `O` or `S`.
pub(crate) type Board = [u8; 9];

pub(crate) const EMPTY: Board = [b'-'; 9];

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

/// How a board stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Ongoing,
    /// The player who placed the last mark won: `true` for the first player.
    Won {
        first_player: bool,
    },
    Drawn,
}

pub(crate) fn to_string(board: &Board) -> String {
    String::from_utf8(board.to_vec()).expect("ASCII")
}

fn marks_placed(board: &Board) -> usize {
    board.iter().filter(|&&c| c != b'-').count()
}

impl Rules {
    fn has_line(self, board: &Board) -> bool {
        LINES.iter().any(|&[a, b, c]| match self {
            Rules::TicTacToe => board[a] != b'-' && board[a] == board[b] && board[b] == board[c],
            Rules::Sos => board[a] == b'S' && board[b] == b'O' && board[c] == b'S',
        })
    }

    pub(crate) fn status(self, board: &Board) -> Status {
        let placed = marks_placed(board);
        if self.has_line(board) {
            // Play stops at the first line, so whoever placed the last mark made it.
            Status::Won {
                first_player: placed % 2 == 1,
            }
        } else if placed == 9 {
            Status::Drawn
        } else {
            Status::Ongoing
        }
    }

    /// The boards after each legal move, in cell order (and `S` before `O` in SOS).
    pub(crate) fn children(self, board: &Board) -> Vec<(usize, u8, Board)> {
        if self.status(board) != Status::Ongoing {
            return Vec::new();
        }
        let marks: &[u8] = match self {
            Rules::TicTacToe if marks_placed(board).is_multiple_of(2) => b"X",
            Rules::TicTacToe => b"O",
            Rules::Sos => b"SO",
        };
        let mut children = Vec::new();
        for cell in (0..9).filter(|&i| board[i] == b'-') {
            for &mark in marks {
                let mut child = *board;
                child[cell] = mark;
                children.push((cell, mark, child));
            }
        }
        children
    }

    /// Every board reachable from the empty one, with its status: a depth-first search
    /// over all move sequences, pruned where a board was seen before.
    pub(crate) fn reachable(self) -> BTreeMap<Board, Status> {
        let mut seen = BTreeMap::new();
        let mut stack = vec![EMPTY];
        seen.insert(EMPTY, self.status(&EMPTY));
        while let Some(board) = stack.pop() {
            for (_, _, child) in self.children(&board) {
                if let Entry::Vacant(entry) = seen.entry(child) {
                    entry.insert(self.status(&child));
                    stack.push(child);
                }
            }
        }
        seen
    }
}

/// A value in the model's own terms: `outcome` is +1, 0 or -1 for the player to move, and
/// `plies` the marks still to be placed with best play.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct RefValue {
    pub(crate) outcome: i8,
    pub(crate) plies: u8,
}

impl RefValue {
    /// Higher is better for the player to move: win soon, lose late.
    fn rank(self) -> (i8, i16) {
        let plies = i16::from(self.plies);
        match self.outcome {
            1 => (1, -plies),
            -1 => (-1, plies),
            _ => (0, 0),
        }
    }
}

/// Negamax over the model, memoised in a map of its own.
#[derive(Debug)]
pub(crate) struct Minimax {
    rules: Rules,
    memo: HashMap<Board, RefValue>,
}

impl Minimax {
    pub(crate) fn new(rules: Rules) -> Minimax {
        Minimax {
            rules,
            memo: HashMap::new(),
        }
    }

    pub(crate) fn value(&mut self, board: &Board) -> RefValue {
        if let Some(&value) = self.memo.get(board) {
            return value;
        }
        let value = match self.rules.status(board) {
            Status::Won { .. } => RefValue {
                outcome: -1,
                plies: 0,
            },
            Status::Drawn => RefValue {
                outcome: 0,
                plies: 0,
            },
            Status::Ongoing => self
                .move_values(board)
                .into_iter()
                .map(|(_, _, value)| value)
                .max_by_key(|v| v.rank())
                .expect("an ongoing game has a move"),
        };
        self.memo.insert(*board, value);
        value
    }

    /// Each legal move with its value for the player making it.
    pub(crate) fn move_values(&mut self, board: &Board) -> Vec<(usize, u8, RefValue)> {
        self.rules
            .children(board)
            .into_iter()
            .map(|(cell, mark, child)| {
                let after = self.value(&child);
                let value = RefValue {
                    outcome: -after.outcome,
                    plies: after.plies + 1,
                };
                (cell, mark, value)
            })
            .collect()
    }

    /// Whether a value's rank is the best among these.
    pub(crate) fn is_best(values: &[(usize, u8, RefValue)], value: RefValue) -> bool {
        values.iter().all(|(_, _, v)| v.rank() <= value.rank())
    }
}
