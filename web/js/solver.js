// @ts-check
/**
 * The solver, in the page: the exact value of every reachable position of both games,
 * computed here on first use by the same memoised search as the server's `triad-solver`
 * (about 5,500 positions of tic-tac-toe and 15,000 ongoing ones of SOS: 15 and 53 ms on
 * first use, BENCHMARKS.md "The solver in the page"),
 * so the computer plays with no server at all, offline included. Nothing is downloaded: the
 * table is the rules plus one search. e2e/tests/solver.test.mjs checks every position's
 * value and best move against `triad solve --format jsonl`.
 *
 * A value is for the player to move: the verdict with best play on both sides, and the
 * marks still to be placed until the game ends (a winner wins as fast as possible, a loser
 * holds out as long as possible).
 * @module
 */

import { legalMoves, outcomeOf, turnOf } from './rules.js';

/**
 * @typedef {import('./rules.js').GameKind} GameKind
 * @typedef {import('./rules.js').Mark} Mark
 * @typedef {{ verdict: 'win' | 'draw' | 'loss', plies: number }} Value
 * @typedef {{ cell: number, mark: Mark } & Value} MoveValue
 * @typedef {{
 *   game: GameKind, board: string, turn: 'first' | 'second' | null, value: Value,
 *   outcome: { winner: 'first' | 'second' | null, cells: number[] } | null,
 *   moves: MoveValue[], best: { cell: number, mark: Mark }[],
 * }} Analysis the shape of `GET /api/analysis/{game}/{board}`
 */

/** @type {Record<Value['verdict'], Value['verdict']>} */
const FLIP = { win: 'loss', draw: 'draw', loss: 'win' };

/**
 * "Better for the player to move" as a number, as `triad_solver::Value`'s order: wins
 * first, quicker first; then draws; then losses, slower first.
 * @param {Value} v
 */
function rank(v) {
  if (v.verdict === 'win') return 512 - v.plies;
  if (v.verdict === 'draw') return 256 - v.plies;
  return v.plies;
}

/**
 * A move's value for its player, from the value of the position it leads to.
 * @param {Value} child
 * @returns {Value}
 */
function beforeMove(child) {
  return { verdict: FLIP[child.verdict], plies: child.plies + 1 };
}

/** @type {Map<GameKind, Map<string, Value>>} */
const tables = new Map();

/**
 * The value of `board` for the player to move, memoised per game.
 * @param {GameKind} game
 * @param {string} board
 * @returns {Value}
 */
export function valueOf(game, board) {
  let table = tables.get(game);
  if (!table) tables.set(game, (table = new Map()));
  const known = table.get(board);
  if (known) return known;
  const outcome = outcomeOf(game, board);
  /** @type {Value} */
  let value;
  if (outcome) {
    value = outcome.winner === null ? { verdict: 'draw', plies: 0 } : { verdict: 'loss', plies: 0 };
  } else {
    value = { verdict: 'loss', plies: -1 };
    for (const { cell, mark } of legalMoves(game, board)) {
      const v = beforeMove(valueOf(game, board.slice(0, cell) + mark + board.slice(cell + 1)));
      if (value.plies < 0 || rank(v) > rank(value)) value = v;
    }
  }
  table.set(board, value);
  return value;
}

/**
 * Every legal move with its value for the player making it, and the best ones, in the
 * server's shape and order (cells ascending, S before O).
 * @param {GameKind} game
 * @param {string} board a reachable position
 * @returns {Analysis}
 */
export function analyze(game, board) {
  const value = valueOf(game, board);
  const outcome = outcomeOf(game, board);
  const moves = legalMoves(game, board).map(({ cell, mark }) => ({
    cell,
    mark,
    ...beforeMove(valueOf(game, board.slice(0, cell) + mark + board.slice(cell + 1))),
  }));
  return {
    game,
    board,
    turn: outcome ? null : turnOf(board) === 0 ? 'first' : 'second',
    value,
    outcome: outcome ? { winner: outcome.winner === null ? null : outcome.winner === 0 ? 'first' : 'second', cells: outcome.cells } : null,
    moves,
    best: moves.filter((m) => m.verdict === value.verdict && m.plies === value.plies).map(({ cell, mark }) => ({ cell, mark })),
  };
}

/**
 * @typedef {{ verdict: Value['verdict'], plies: number, winner: 'first' | 'second' | null }} PositionValue
 * @typedef {{ ply: number, player: 'first' | 'second', cell: number, square: number, mark: Mark,
 *   judgement: 'best' | 'inaccuracy' | 'mistake', best_value: Value, played_value: Value,
 *   best: { cell: number, mark: Mark }[], board: string, value: PositionValue }} PlyView
 * @typedef {{ moves: number, mistakes: number, inaccuracies: number, percent: number | null }} AccuracyView
 * @typedef {{ game: GameKind, start: PositionValue, plies: PlyView[],
 *   accuracy: { first: AccuracyView, second: AccuracyView } }} ReviewView
 */

/**
 * A value said as who wins with best play.
 * @param {'first' | 'second'} turn the player to move
 * @param {Value} value
 * @returns {PositionValue}
 */
function positionValue(turn, value) {
  const other = turn === 'first' ? 'second' : 'first';
  return { ...value, winner: value.verdict === 'win' ? turn : value.verdict === 'loss' ? other : null };
}

/**
 * A game's review, as `GET /api/review/{game}?moves=` answers it (`triad_solver::Review`):
 * each move judged against the best (a mistake loses the verdict, an inaccuracy keeps it
 * but not its distance), and each side's accuracy. The page uses it with no server.
 * @param {GameKind} game
 * @param {{ cell: number, mark: Mark }[]} moves legal moves from the empty board
 * @returns {ReviewView}
 */
export function reviewOf(game, moves) {
  let board = '---------';
  /** @type {PlyView[]} */
  const plies = moves.map(({ cell, mark }, i) => {
    const player = i % 2 === 0 ? 'first' : 'second';
    const analysis = analyze(game, board);
    const played = analysis.moves.find((m) => m.cell === cell && m.mark === mark);
    if (!played) throw new Error(`Move ${i + 1} is not legal.`);
    const before = analysis.value;
    const judgement = rank(played) < rank(before) && played.verdict !== before.verdict ? 'mistake' : played.plies === before.plies && played.verdict === before.verdict ? 'best' : 'inaccuracy';
    board = board.slice(0, cell) + mark + board.slice(cell + 1);
    return {
      ply: i + 1,
      player,
      cell,
      square: cell + 1,
      mark,
      judgement,
      best_value: before,
      played_value: { verdict: played.verdict, plies: played.plies },
      best: analysis.best,
      board,
      value: positionValue(player === 'first' ? 'second' : 'first', valueOf(game, board)),
    };
  });
  /** @param {'first' | 'second'} who */
  const record = (who) => {
    const mine = plies.filter((p) => p.player === who);
    const best = mine.filter((p) => p.judgement === 'best').length;
    return {
      moves: mine.length,
      mistakes: mine.filter((p) => p.judgement === 'mistake').length,
      inaccuracies: mine.filter((p) => p.judgement === 'inaccuracy').length,
      // The share of moves that kept the value (verdict and distance), as the server's review.
      percent: mine.length ? Math.round((best / mine.length) * 1000) / 10 : null,
    };
  };
  return { game, start: positionValue('first', valueOf(game, '---------')), plies, accuracy: { first: record('first'), second: record('second') } };
}
