// @ts-check
/**
 * The rules of tic-tac-toe and SOS, for play on one device. The same rules as the server's
 * `triad-rules` crate (e2e/tests/rules.test.mjs compares them on thousands of positions):
 * a board is the SOS contract's 9-character string, `-` for empty, cell 0 top-left; the first player
 * moves when the number of marks is even.
 *
 * - Tic-tac-toe: X (first) and O (second); three of one mark in a line wins.
 * - SOS: both players place S or O; the player who spells S-O-S in a line wins at once.
 *   One move can complete several lines; every cell of each counts as winning.
 *
 * A win on the ninth mark is a win (the HTML5 canvas game called it a draw).
 * @module
 */

/**
 * @typedef {'tic-tac-toe' | 'sos'} GameKind
 * @typedef {'X' | 'O' | 'S'} Mark
 * @typedef {0 | 1} Player 0 moves first
 * @typedef {{ winner: Player | null, cells: number[] }} Outcome a draw has no winner and no cells
 */

/** The eight lines: rows, columns, diagonals. */
export const LINES = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8],
  [0, 3, 6], [1, 4, 7], [2, 5, 8],
  [0, 4, 8], [2, 4, 6],
];

export const EMPTY_BOARD = '---------';

/**
 * The marks `player` may place.
 * @param {GameKind} game
 * @param {Player} player
 * @returns {Mark[]}
 */
export function marksFor(game, player) {
  if (game === 'sos') return ['S', 'O'];
  return player === 0 ? ['X'] : ['O'];
}

/** The number of marks on a board. @param {string} board */
export function markCount(board) {
  let n = 0;
  for (const c of board) if (c !== '-') n++;
  return n;
}

/** The player to move (whether or not the game has ended). @param {string} board @returns {Player} */
export function turnOf(board) {
  return /** @type {Player} */ (markCount(board) % 2);
}

/**
 * How the game on `board` ended, or null while it goes on.
 * @param {GameKind} game
 * @param {string} board
 * @returns {Outcome | null}
 */
export function outcomeOf(game, board) {
  /** @type {Set<number>} */
  const cells = new Set();
  /** The winner: 0 or 1, or -1 while nobody has won. */
  let winner = -1;
  if (game === 'sos') {
    for (const [a, b, c] of LINES) {
      if (board[a] === 'S' && board[b] === 'O' && board[c] === 'S') {
        for (const cell of [a, b, c]) cells.add(cell);
      }
    }
    // The game stops at the first S-O-S, so it was made by the last mover.
    if (cells.size) winner = (markCount(board) - 1) % 2;
  } else {
    for (const [a, b, c] of LINES) {
      const m = board[a];
      if (m !== '-' && m === board[b] && m === board[c]) {
        for (const cell of [a, b, c]) cells.add(cell);
        winner = m === 'X' ? 0 : 1;
      }
    }
  }
  if (winner >= 0) return { winner: /** @type {Player} */ (winner), cells: [...cells].sort((x, y) => x - y) };
  if (markCount(board) === 9) return { winner: null, cells: [] };
  return null;
}

/**
 * Every legal move: each empty cell, with each mark the player to move may place (S
 * before O), or none once the game has ended.
 * @param {GameKind} game
 * @param {string} board
 * @returns {{ cell: number, mark: Mark }[]}
 */
export function legalMoves(game, board) {
  if (outcomeOf(game, board)) return [];
  const marks = marksFor(game, turnOf(board));
  /** @type {{ cell: number, mark: Mark }[]} */
  const moves = [];
  for (let cell = 0; cell < 9; cell++) {
    if (board[cell] === '-') for (const mark of marks) moves.push({ cell, mark });
  }
  return moves;
}

/**
 * Why a move is not legal, in plain words, or null when it is.
 * @param {GameKind} game
 * @param {string} board
 * @param {number} cell
 * @param {Mark} mark
 */
export function whyIllegal(game, board, cell, mark) {
  if (outcomeOf(game, board)) return 'The game is over.';
  if (!Number.isInteger(cell) || cell < 0 || cell > 8) return 'Choose a square from 1 to 9.';
  if (board[cell] !== '-') return `Square ${cell + 1} is taken.`;
  if (!marksFor(game, turnOf(board)).includes(mark)) return `${mark} is not a mark you can place here.`;
  return null;
}

/**
 * The board after a legal move.
 * @param {GameKind} game
 * @param {string} board
 * @param {number} cell
 * @param {Mark} mark
 */
export function play(game, board, cell, mark) {
  const why = whyIllegal(game, board, cell, mark);
  if (why) throw new Error(why);
  return board.slice(0, cell) + mark + board.slice(cell + 1);
}

/** The owner of each cell (who placed it), from the moves in order.
 * @param {number[]} cells cells in the order they were played
 * @returns {(Player | null)[]}
 */
export function ownersOf(cells) {
  /** @type {(Player | null)[]} */
  const owners = Array(9).fill(null);
  cells.forEach((cell, i) => {
    owners[cell] = /** @type {Player} */ (i % 2);
  });
  return owners;
}
