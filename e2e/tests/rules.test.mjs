// The page's rules (rules.js) against the server's (`GET /api/analysis`, the triad-rules
// crate and the solver) on every position of random games of both games; the computer's
// choices per strength; and the analysis endpoint's refusals in the standard error shape.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { chooseFromAnalysis } from '../../web/js/computer.js';
import { EMPTY_BOARD, legalMoves, outcomeOf, play, turnOf } from '../../web/js/rules.js';
import { seeded, startServer } from '../lib/harness.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(() => server?.stop());

const analysis = (game, board) => server.request('GET', `/api/analysis/${game}/${board}`);

for (const game of ['tic-tac-toe', 'sos']) {
  test(`${game}: the page's rules agree with the server's on 30 random games`, async () => {
    const random = seeded(game.length);
    let positions = 0;
    for (let g = 0; g < 30; g++) {
      let board = EMPTY_BOARD;
      for (;;) {
        const server = await analysis(game, board);
        positions++;
        const mine = outcomeOf(game, board);
        assert.equal(server.board, board);
        if (mine) {
          assert.equal(server.turn, null, board);
          assert.deepEqual(server.outcome, { winner: mine.winner === null ? null : mine.winner === 0 ? 'first' : 'second', cells: mine.cells }, board);
          assert.deepEqual(server.moves, [], board);
          break;
        }
        assert.equal(server.outcome, null, board);
        assert.equal(server.turn, turnOf(board) === 0 ? 'first' : 'second', board);
        assert.deepEqual(server.moves.map(({ cell, mark }) => ({ cell, mark })), legalMoves(game, board), board);
        const move = server.moves[Math.floor(random() * server.moves.length)];
        board = play(game, board, move.cell, move.mark);
      }
    }
    assert.ok(positions > 150, `${positions} positions compared`);
  });
}

test('the best moves are exactly the moves worth the position’s value', async () => {
  for (const [game, board] of [['tic-tac-toe', '---------'], ['tic-tac-toe', 'XX--O----'], ['sos', 'O-SOOS--S'], ['sos', '---------']]) {
    const a = await analysis(game, board);
    const same = (m) => m.verdict === a.value.verdict && m.plies === a.value.plies;
    assert.deepEqual(a.best, a.moves.filter(same).map(({ cell, mark }) => ({ cell, mark })), `${game} ${board}`);
  }
  const block = await analysis('tic-tac-toe', 'XX--O----');
  assert.deepEqual(block.best, [{ cell: 2, mark: 'O' }], 'O must block the top row');
  assert.deepEqual(block.value, { verdict: 'draw', plies: 6 });
  const sosWin = await analysis('sos', 'O-SOOS--S');
  assert.deepEqual(sosWin.value, { verdict: 'win', plies: 1 });
});

test('perfect play picks only best moves; casual never a losing one when it has a choice', async () => {
  const a = await analysis('tic-tac-toe', 'X---O---X');
  const best = new Set(a.best.map((m) => `${m.cell}${m.mark}`));
  const safe = new Set(a.moves.filter((m) => m.verdict !== 'loss').map((m) => `${m.cell}${m.mark}`));
  assert.ok(safe.size < a.moves.length, 'this position has losing moves');
  const random = seeded(7);
  const casualPicks = new Set();
  for (let i = 0; i < 400; i++) {
    const p = chooseFromAnalysis(a, 'perfect', random);
    assert.ok(best.has(`${p.cell}${p.mark}`));
    const c = chooseFromAnalysis(a, 'casual', random);
    assert.ok(safe.has(`${c.cell}${c.mark}`));
    casualPicks.add(`${c.cell}${c.mark}`);
    const r = chooseFromAnalysis(a, 'random', random);
    assert.ok(a.moves.some((m) => m.cell === r.cell && m.mark === r.mark));
  }
  assert.equal(chooseFromAnalysis({ ...a, moves: [], best: [] }, 'perfect', random), null);
});

test('impossible boards and unknown games are refused with the rules’ reasons', async () => {
  const cases = [
    ['tic-tac-toe', 'XXX------', /X must equal O or be one more/],
    ['tic-tac-toe', 'XXXOOO---', /X must equal O or be one more|both players/],
    ['tic-tac-toe', 'X-S------', /not a mark of this game/],
    ['tic-tac-toe', 'X--', /9 cells/],
    ['chess', '---------', /unknown game; use tic-tac-toe or sos/],
  ];
  for (const [game, board, message] of cases) {
    await assert.rejects(analysis(game, board), (e) => {
      assert.equal(e.status, 400, `${game} ${board}`);
      assert.deepEqual(Object.keys(e.body).sort(), ['code', 'error', 'message']);
      assert.equal(e.body.code, 215);
      assert.equal(e.body.error, 'invalid_parameter');
      assert.match(e.body.message, message);
      return true;
    });
  }
});

test('the analysis endpoint is documented in the OpenAPI document', async () => {
  const doc = await server.request('GET', '/api/openapi.json');
  const op = doc.paths['/api/analysis/{game}/{board}']?.get;
  assert.ok(op, 'documented');
  assert.ok(!op.security, 'public: no token');
  assert.ok(op.responses['200']);
});
