// The page's solver (web/js/solver.js, which lets the computer play offline) against the
// server's: every ongoing position of both games that `triad solve --format jsonl` lists
// has the same value, the same number of marks to go and the same best move (the first
// optimal one, cells ascending, S before O), and the page finds no position it does not.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

import { analyze, reviewOf, valueOf } from '../../web/js/solver.js';
import { EMPTY_BOARD, legalMoves, outcomeOf } from '../../web/js/rules.js';
import { TRIAD_BIN, seeded, startServer } from '../lib/harness.mjs';

/** Every ongoing position reachable from the empty board, by the page's rules. */
function reachable(game) {
  const seen = new Set();
  const stack = [EMPTY_BOARD];
  while (stack.length) {
    const board = stack.pop();
    if (seen.has(board) || outcomeOf(game, board)) continue;
    seen.add(board);
    for (const { cell, mark } of legalMoves(game, board)) stack.push(board.slice(0, cell) + mark + board.slice(cell + 1));
  }
  return seen;
}

for (const game of ['tic-tac-toe', 'sos']) {
  test(`${game}: every position's value and best move are the server solver's`, () => {
    const lines = execFileSync(TRIAD_BIN, ['solve', '--game', game, '--format', 'jsonl'], { encoding: 'utf8', maxBuffer: 64 << 20 })
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const mine = reachable(game);
    assert.equal(mine.size, lines.length, 'the same ongoing positions');
    for (const { board, value, plies, best } of lines) {
      assert.ok(mine.has(board), `${board} is reachable`);
      assert.deepEqual(valueOf(game, board), { verdict: value, plies }, board);
      const analysis = analyze(game, board);
      assert.deepEqual(analysis.best[0], best, board);
      assert.deepEqual(analysis.value, { verdict: value, plies }, board);
    }
  });
}

test("the page's review of a game is the server's", async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const random = seeded(22);
  for (const game of ['tic-tac-toe', 'sos']) {
    for (let g = 0; g < 40; g++) {
      let board = EMPTY_BOARD;
      const moves = [];
      // Some games stop before their end, as a review may be of an unfinished game.
      const stop = Math.floor(random() * 12);
      while (!outcomeOf(game, board) && moves.length < stop) {
        const legal = legalMoves(game, board);
        const move = legal[Math.floor(random() * legal.length)];
        moves.push(move);
        board = board.slice(0, move.cell) + move.mark + board.slice(move.cell + 1);
      }
      const list = moves.map((m) => `${m.mark}${m.cell + 1}`).join(',');
      const theirs = await server.request('GET', `/api/review/${game}?moves=${list}`);
      assert.deepEqual(reviewOf(game, moves), theirs, `${game} ${list}`);
    }
  }
});
