// The Puzzles page in a real browser: the daily puzzle solved against the best defence by
// a logged-in player (whose puzzle rating rises), "Next puzzle", a saved draw whose last
// mark is the defence's, an SOS "save the draw" puzzle failed on a phone (the rating falls
// and the solution is shown), and screenshots at 1280 px and 390 px.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { clickCell, launchBrowser, marks, newPage, openLoggedIn, PHONE, screenshot, startServer, waitForBoard } from '../lib/harness.mjs';

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The solver's view of a position, from the analysis API. */
const analysis = (game, board) => server.request('GET', `/api/analysis/${game}/${board}`);

/**
 * Plays the puzzle on the page until it is decided: at each turn `choose(analysis, turn)`
 * picks the move; the page answers with the server's reply. Returns the result card.
 */
async function playOut(page, puzzle, choose) {
  for (let turn = 0; turn < 9; turn++) {
    await page.locator('.board.is-interactive, .result-card').first().waitFor();
    if (await page.locator('.result-card').count()) break;
    const board = await page.locator('.board').getAttribute('data-board');
    const mv = choose(await analysis(puzzle.game, board), turn);
    if (puzzle.game === 'sos') await page.keyboard.press(mv.mark.toLowerCase());
    await clickCell(page, mv.cell);
    // The move lands, then the reply (or the verdict).
    await waitForBoard(page, (b) => b[mv.cell] === mv.mark);
    await page.locator('.board[data-phase="solving"], .result-card').first().waitFor();
    const after = await page.locator('.board').getAttribute('data-board');
    assert.ok(marks(after) >= marks(board) + 1);
  }
  const card = page.locator('.result-card');
  await card.waitFor();
  return card;
}

test('the daily puzzle is solved against the best defence, and the rating rises', async () => {
  const page = await newPage(browser, server);
  await openLoggedIn(page, '/puzzles');
  const { puzzle } = await server.request('GET', '/api/puzzles/daily');
  await page.locator(`.board[data-board="${puzzle.board}"]`).waitFor();
  const goal = await page.locator('.puzzle-goal .status-text').innerText();
  const side = puzzle.game === 'sos' ? (puzzle.turn === 'first' ? 'Player 1' : 'Player 2') : puzzle.turn === 'first' ? 'X' : 'O';
  assert.equal(goal, `${side} to move: ${puzzle.title}`);
  assert.equal(await page.locator('.nav-link[aria-current="page"]').getAttribute('data-nav'), 'puzzles');
  assert.equal(await page.locator('.panel-title').innerText(), 'Daily puzzle');
  await screenshot(page, 'puzzles-daily-1280');
  // The best move each time: the fastest win, or a move that keeps the draw.
  const card = await playOut(page, puzzle, (a) => a.best[0]);
  assert.equal(await card.getAttribute('data-result'), 'solved');
  assert.match(await card.innerText(), /Solved/);
  const change = await page.locator('.puzzle-rating-change').innerText();
  assert.match(change, /^Puzzle rating 1\d{3} \(\+\d+\)$/);
  await screenshot(page, 'puzzles-solved-1280');
  const rated = await server.request('GET', `/api/puzzles/${puzzle.id}`);
  assert.deepEqual([rated.rating.attempts, rated.rating.solved], [1, 1]);
  // Again: checked, unrated.
  await page.getByRole('button', { name: 'Try again' }).click();
  await page.locator(`.board[data-board="${puzzle.board}"].is-interactive`).waitFor();
  const again = await playOut(page, puzzle, (a) => a.best[0]);
  assert.match(await again.innerText(), /Already rated/);
  // The next puzzle in the set.
  await page.getByRole('button', { name: 'Next puzzle' }).first().click();
  await page.waitForURL(/\/puzzles\?id=/);
  const nextId = new URL(page.url()).searchParams.get('id');
  assert.notEqual(nextId, puzzle.id);
  const next = await server.request('GET', `/api/puzzles/${nextId}`);
  await page.locator(`.board[data-board="${next.board}"]`).waitFor();
  assert.equal(await page.locator('.panel-title').innerText(), 'Puzzle');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a saved draw ends with the reply that fills the board', async () => {
  const page = await newPage(browser, server);
  const { puzzles } = await server.request('GET', '/api/puzzles?game=tic-tac-toe&kind=draw&limit=100');
  // An even number of empty squares: the defence places the last mark.
  const puzzle = puzzles.find((p) => [...p.board].filter((c) => c === '-').length % 2 === 0);
  await page.goto(`/puzzles?id=${puzzle.id}`);
  await page.locator(`.board[data-board="${puzzle.board}"]`).waitFor();
  const card = await playOut(page, puzzle, (a) => a.best[0]);
  assert.equal(await card.getAttribute('data-result'), 'solved');
  const board = await page.locator('.board').getAttribute('data-board');
  assert.equal(marks(board), 9, 'the reply is on the board');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('an SOS "save the draw" puzzle failed on a phone shows the solution', async () => {
  const page = await newPage(browser, server, { viewport: PHONE, isMobile: true, hasTouch: true });
  const { puzzles } = await server.request('GET', '/api/puzzles?game=sos&kind=draw&limit=1');
  const puzzle = puzzles[0];
  await openLoggedIn(page, `/puzzles?id=${puzzle.id}`);
  await page.locator(`.board[data-board="${puzzle.board}"]`).waitFor();
  assert.match(await page.locator('.puzzle-goal .status-text').innerText(), /to move: save the draw$/);
  // Nothing overflows the phone's width.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow} px too wide`);
  await screenshot(page, 'puzzles-sos-390');
  // A losing move: the attempt fails at once.
  const card = await playOut(page, puzzle, (a) => a.moves.find((m) => m.verdict === 'loss'));
  assert.equal(await card.getAttribute('data-result'), 'failed');
  const text = await card.innerText();
  assert.match(text, /Not this time/);
  assert.match(text, /The solution: [SO] \d/);
  assert.match(await page.locator('.puzzle-rating-change').innerText(), /\(−\d+\)$/);
  await screenshot(page, 'puzzles-failed-390');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
