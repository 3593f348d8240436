// @ts-check
/**
 * The computer opponent for play on this device. Perfect and casual play use the solver in
 * the page (`solver.js`: every legal move's exact value and the best moves, the same as the
 * server's `GET /api/analysis`), so the computer needs no server and plays offline; they
 * choose as `triad-solver`'s `Strength` does:
 * - perfect: one of the best moves, uniformly (wins fastest, loses slowest, never worse);
 * - casual: with probability 1/4 any move that does not lose, otherwise a best move;
 * - random: any legal move, uniformly (the HTML5 canvas game's `RandomPlayer`).
 * @module
 */

import { legalMoves } from './rules.js';
import { analyze } from './solver.js';

/**
 * @typedef {'perfect' | 'casual' | 'random'} Strength
 * @typedef {import('./rules.js').GameKind} GameKind
 * @typedef {import('./rules.js').Mark} Mark
 * @typedef {import('./solver.js').Analysis} Analysis
 */

/** The chance that a casual player settles for any non-losing move (the solver's). */
export const CASUAL_SLIP_PROBABILITY = 0.25;

/**
 * Picks an element uniformly.
 * @template T
 * @param {T[]} items non-empty
 * @param {() => number} random in [0, 1)
 */
function pick(items, random) {
  return items[Math.floor(random() * items.length)];
}

/**
 * Chooses a move from an analysis at a strength.
 * @param {Analysis} analysis
 * @param {Strength} strength
 * @param {() => number} [random]
 * @returns {{ cell: number, mark: Mark } | null}
 */
export function chooseFromAnalysis(analysis, strength, random = Math.random) {
  if (!analysis.moves.length) return null;
  if (strength === 'random') return pick(analysis.moves, random);
  if (strength === 'casual' && random() < CASUAL_SLIP_PROBABILITY) {
    const safe = analysis.moves.filter((m) => m.verdict !== 'loss');
    if (safe.length) return pick(safe, random);
  }
  return pick(analysis.best, random);
}

/**
 * The computer's move in a position.
 * @param {GameKind} game
 * @param {string} board
 * @param {Strength} strength
 * @returns {Promise<{ cell: number, mark: Mark } | null>}
 */
export async function computerMove(game, board, strength) {
  if (strength === 'random') {
    const moves = legalMoves(game, board);
    return moves.length ? pick(moves, Math.random) : null;
  }
  return chooseFromAnalysis(analyze(game, board), strength);
}
