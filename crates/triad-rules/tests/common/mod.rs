//! An independent reference implementation of both games, used to cross-check the crate.
//!
//! It works on plain byte arrays (`b'-'`, `b'X'`, `b'O'`, `b'S'`), builds its own list of
//! lines from row and column arithmetic, and shares no rule logic with `triad-rules`: the
//! crate's types appear here only to convert to and from this representation.
//!
//! Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::{
    collections::{HashMap, VecDeque},
    sync::OnceLock,
};

use triad_rules::{Board, Cell, Game, GameKind, Mark, MoveError, Outcome, Player, PositionError};

/// A board as nine letters, cell 0 first.
pub(crate) type RefBoard = [u8; 9];

/// The empty board.
pub(crate) const EMPTY: RefBoard = *b"---------";

/// 3^9: the number of boards, and the first position number out of range.
pub(crate) const BOARDS: u32 = 19_683;

/// How a finished game ended, in the reference's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RefEnd {
    /// `player` (0 first, 1 second) won; `cells[i]` is whether cell `i` is in a winning line.
    Win { player: usize, cells: [bool; 9] },
    /// The board filled with no line.
    Draw,
}

/// Every mark, in a fixed order.
pub(crate) const ALL_MARKS: [Mark; 3] = [Mark::X, Mark::O, Mark::S];

/// Both players, first first.
pub(crate) const PLAYERS: [Player; 2] = [Player::First, Player::Second];

/// Both games.
pub(crate) const KINDS: [GameKind; 2] = [GameKind::TicTacToe, GameKind::Sos];

/// The eight lines, from coordinates: rows, columns, then the two diagonals. Each line is
/// listed end, middle, end.
pub(crate) fn lines() -> [[usize; 3]; 8] {
    let at = |row: usize, col: usize| row * 3 + col;
    let mut lines = [[0; 3]; 8];
    for k in 0..3 {
        lines[k] = [at(k, 0), at(k, 1), at(k, 2)];
        lines[3 + k] = [at(0, k), at(1, k), at(2, k)];
    }
    lines[6] = [at(0, 0), at(1, 1), at(2, 2)];
    lines[7] = [at(0, 2), at(1, 1), at(2, 0)];
    lines
}

/// The letter of a crate mark.
pub(crate) fn letter(mark: Mark) -> u8 {
    match mark {
        Mark::X => b'X',
        Mark::O => b'O',
        Mark::S => b'S',
    }
}

/// The crate mark of a letter (`None` for `-`).
pub(crate) fn mark_of(letter: u8) -> Option<Mark> {
    match letter {
        b'X' => Some(Mark::X),
        b'O' => Some(Mark::O),
        b'S' => Some(Mark::S),
        b'-' => None,
        other => panic!("not a board letter: {other}"),
    }
}

/// 0 for the first player, 1 for the second.
pub(crate) fn player_index(player: Player) -> usize {
    match player {
        Player::First => 0,
        Player::Second => 1,
    }
}

/// The state string of a reference board.
pub(crate) fn text(board: &RefBoard) -> String {
    String::from_utf8(board.to_vec()).expect("board letters are ASCII")
}

/// A reference board from a state string.
pub(crate) fn from_text(s: &str) -> RefBoard {
    s.as_bytes().try_into().expect("nine ASCII characters")
}

/// The number of marks on the board.
pub(crate) fn plies(board: &RefBoard) -> usize {
    board.iter().filter(|&&c| c != b'-').count()
}

/// The player to move: 0 after an even number of marks, 1 after an odd number.
pub(crate) fn mover(board: &RefBoard) -> usize {
    plies(board) % 2
}

/// The letters `player` may place in `kind`, in the order the crate promises to list them.
pub(crate) fn letters_for(kind: GameKind, player: usize) -> &'static [u8] {
    match (kind, player) {
        (GameKind::TicTacToe, 0) => b"X",
        (GameKind::TicTacToe, _) => b"O",
        (GameKind::Sos, _) => b"SO",
    }
}

/// The letters of `kind`.
pub(crate) fn game_letters(kind: GameKind) -> &'static [u8] {
    match kind {
        GameKind::TicTacToe => b"XO",
        GameKind::Sos => b"SO",
    }
}

/// The lines that `kind` counts as formed on `board`: three equal marks in tic-tac-toe,
/// S-O-S (middle O) in SOS.
pub(crate) fn formed_lines(kind: GameKind, board: &RefBoard) -> Vec<[usize; 3]> {
    lines()
        .into_iter()
        .filter(|&[a, m, c]| match kind {
            GameKind::TicTacToe => board[a] != b'-' && board[a] == board[m] && board[m] == board[c],
            GameKind::Sos => board[a] == b'S' && board[m] == b'O' && board[c] == b'S',
        })
        .collect()
}

/// The lines of three equal `letter`s on `board`.
pub(crate) fn lines_of(letter: u8, board: &RefBoard) -> Vec<[usize; 3]> {
    lines()
        .into_iter()
        .filter(|line| line.iter().all(|&i| board[i] == letter))
        .collect()
}

/// The state after `player` has just moved and produced `board`.
pub(crate) fn end_after_move(kind: GameKind, board: &RefBoard, player: usize) -> Option<RefEnd> {
    let formed = formed_lines(kind, board);
    if !formed.is_empty() {
        let mut cells = [false; 9];
        for line in formed {
            for i in line {
                cells[i] = true;
            }
        }
        Some(RefEnd::Win { player, cells })
    } else if plies(board) == 9 {
        Some(RefEnd::Draw)
    } else {
        None
    }
}

/// Every move of an unfinished position: `(cell, letter, next board, next end)`.
pub(crate) fn children(
    kind: GameKind,
    board: &RefBoard,
) -> Vec<(usize, u8, RefBoard, Option<RefEnd>)> {
    let player = mover(board);
    let mut out = Vec::new();
    for cell in 0..9 {
        if board[cell] != b'-' {
            continue;
        }
        for &l in letters_for(kind, player) {
            let mut next = *board;
            next[cell] = l;
            out.push((cell, l, next, end_after_move(kind, &next, player)));
        }
    }
    out
}

/// Every position reachable from the empty board by legal play, with how it ended (`None`
/// while it goes on). Computed once per game by breadth-first search.
pub(crate) fn reachable(kind: GameKind) -> &'static HashMap<RefBoard, Option<RefEnd>> {
    static TTT: OnceLock<HashMap<RefBoard, Option<RefEnd>>> = OnceLock::new();
    static SOS: OnceLock<HashMap<RefBoard, Option<RefEnd>>> = OnceLock::new();
    let cell = match kind {
        GameKind::TicTacToe => &TTT,
        GameKind::Sos => &SOS,
    };
    cell.get_or_init(|| {
        let mut seen = HashMap::from([(EMPTY, None)]);
        let mut queue = VecDeque::from([EMPTY]);
        while let Some(board) = queue.pop_front() {
            if seen[&board].is_some() {
                continue;
            }
            for (_, _, next, end) in children(kind, &board) {
                if let Some(&previous) = seen.get(&next) {
                    assert_eq!(previous, end, "{} reached with two outcomes", text(&next));
                } else {
                    seen.insert(next, end);
                    queue.push_back(next);
                }
            }
        }
        seen
    })
}

/// The reachable positions in a fixed order (by position number), for deterministic loops.
pub(crate) fn reachable_sorted(kind: GameKind) -> Vec<(RefBoard, Option<RefEnd>)> {
    let mut all: Vec<_> = reachable(kind).iter().map(|(b, e)| (*b, *e)).collect();
    all.sort_by_key(|(b, _)| number(b));
    all
}

/// The digit of a letter in the HTML5 canvas game's position number: empty 0, O 1, X or S 2.
fn digit(letter: u8) -> u32 {
    match letter {
        b'-' => 0,
        b'O' => 1,
        b'X' | b'S' => 2,
        other => panic!("not a board letter: {other}"),
    }
}

/// The HTML5 canvas game's position number: cell `i` contributes `digit * 3^i`.
pub(crate) fn number(board: &RefBoard) -> u32 {
    board
        .iter()
        .enumerate()
        .map(|(i, &l)| digit(l) * 3u32.pow(i as u32))
        .sum()
}

/// The board of `kind` with position number `n` (below 3^9).
pub(crate) fn board_of_number(kind: GameKind, n: u32) -> RefBoard {
    assert!(n < BOARDS);
    let two = match kind {
        GameKind::TicTacToe => b'X',
        GameKind::Sos => b'S',
    };
    let mut board = EMPTY;
    for (i, cell) in board.iter_mut().enumerate() {
        *cell = match n / 3u32.pow(i as u32) % 3 {
            0 => b'-',
            1 => b'O',
            _ => two,
        };
    }
    board
}

/// The crate board holding the same marks.
pub(crate) fn to_board(board: &RefBoard) -> Board {
    let mut out = Board::EMPTY;
    for (i, &l) in board.iter().enumerate() {
        if let Some(mark) = mark_of(l) {
            out = out.with(Cell::new(i as u8).expect("0-8"), mark);
        }
    }
    out
}

/// The reference board holding the same marks as a crate board (read cell by cell, not
/// through `Display`).
pub(crate) fn from_board(board: &Board) -> RefBoard {
    let mut out = EMPTY;
    for (i, cell) in out.iter_mut().enumerate() {
        *cell = board
            .get(Cell::new(i as u8).expect("0-8"))
            .map_or(b'-', letter);
    }
    out
}

/// The crate outcome in the reference's terms.
pub(crate) fn to_ref_end(outcome: Outcome) -> RefEnd {
    match outcome {
        Outcome::Win { winner, cells } => {
            let mut flags = [false; 9];
            for (i, flag) in flags.iter_mut().enumerate() {
                *flag = cells.contains(Cell::new(i as u8).expect("0-8"));
            }
            RefEnd::Win {
                player: player_index(winner),
                cells: flags,
            }
        }
        Outcome::Draw => RefEnd::Draw,
    }
}

/// A reference win for `player` with the given cells.
pub(crate) fn win(player: usize, cells: &[usize]) -> RefEnd {
    let mut flags = [false; 9];
    for &i in cells {
        flags[i] = true;
    }
    RefEnd::Win {
        player,
        cells: flags,
    }
}

/// The move errors in the documented order of the checks (see `MoveError`).
pub(crate) const CHECK_ORDER: [MoveError; 6] = [
    MoveError::GameOver,
    MoveError::NotYourTurn,
    MoveError::InvalidPosition,
    MoveError::MarkNotInGame,
    MoveError::NotYourMark,
    MoveError::CellOccupied,
];

/// Everything wrong with a move by `by` of `mark` into `cell` on a reachable position, in
/// [`CHECK_ORDER`] order.
pub(crate) fn faults(
    kind: GameKind,
    board: &RefBoard,
    end: Option<RefEnd>,
    by: usize,
    cell: u8,
    mark: Mark,
) -> Vec<MoveError> {
    let l = letter(mark);
    let cell = usize::from(cell);
    let present = [
        end.is_some(),
        by != mover(board),
        cell >= 9,
        !game_letters(kind).contains(&l),
        game_letters(kind).contains(&l) && !letters_for(kind, by).contains(&l),
        cell < 9 && board[cell] != b'-',
    ];
    CHECK_ORDER
        .into_iter()
        .zip(present)
        .filter_map(|(e, p)| p.then_some(e))
        .collect()
}

/// Why `from_board` must refuse an unreachable board of marks of `kind`. The precedence is
/// the crate's: counts, then two winners, then play after the end.
pub(crate) fn expected_refusal(kind: GameKind, board: &RefBoard) -> PositionError {
    match kind {
        GameKind::TicTacToe => {
            let x = board.iter().filter(|&&c| c == b'X').count() as u8;
            let o = board.iter().filter(|&&c| c == b'O').count() as u8;
            if x != o && x != o + 1 {
                PositionError::MarkCounts { x, o }
            } else if !lines_of(b'X', board).is_empty() && !lines_of(b'O', board).is_empty() {
                PositionError::TwoWinners
            } else {
                PositionError::PlayAfterEnd
            }
        }
        GameKind::Sos => PositionError::PlayAfterEnd,
    }
}

/// The crate's view of a position as a reference board and end.
pub(crate) fn observe<G: Game>(game: &G) -> (RefBoard, Option<RefEnd>) {
    (from_board(&game.board()), game.outcome().map(to_ref_end))
}

/// Plays `moves` (cell, mark) from the empty board with [`Game::play`], asserting that the
/// game goes on until the last one; returns the final position.
pub(crate) fn play_out<G: Game>(moves: &[(u8, Mark)]) -> G {
    let mut game = G::default();
    for (k, &(cell, mark)) in moves.iter().enumerate() {
        assert_eq!(game.outcome(), None, "the game ended before move {k}");
        let mv = triad_rules::Move::new(Cell::new(cell).expect("0-8"), mark);
        game = game
            .play(mv)
            .unwrap_or_else(|e| panic!("move {k} ({mv}) refused: {e:?}"));
    }
    game
}
