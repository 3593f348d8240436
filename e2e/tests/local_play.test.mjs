// Play on one device, in a real browser: the perfect computer never lets the human win
// (as X and as O, against several strategies, by mouse and by keyboard); the HTML5 canvas game's URLs;
// two people where X wins with the ninth mark; SOS with the letter chosen by key; and the
// screen-reader announcements.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { outcomeOf } from '../../web/js/rules.js';
import { boardOf, clickCell, launchBrowser, marks, newPage, seeded, startServer, waitForBoard } from '../lib/harness.mjs';

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

const statusText = (page) => page.locator('.status .status-text').innerText();
const resultText = (page) => page.locator('.result-title').innerText();

/** Records everything the screen-reader live region says from now on (announcements
 * replace each other quickly, so they are kept rather than polled). */
async function listen(page) {
  await page.evaluate(() => {
    const live = /** @type {HTMLElement} */ (document.getElementById('live'));
    const said = [];
    /** @type {any} */ (window).announcements = said;
    new MutationObserver(() => {
      if (live.textContent) said.push(live.textContent);
    }).observe(live, { childList: true, characterData: true, subtree: true });
  });
}

/** Waits until the live region has said something matching `pattern`. */
async function announced(page, pattern) {
  try {
    await page.waitForFunction((source) => /** @type {any} */ (window).announcements.some((t) => new RegExp(source).test(t)), pattern.source, { timeout: 5000 });
  } catch {
    const said = await page.evaluate(() => /** @type {any} */ (window).announcements);
    assert.fail(`never announced ${pattern}; it said ${JSON.stringify(said)}`);
  }
}

/**
 * Plays one whole game against the computer. `pick(board, empty)` chooses the human's
 * square; `play(cell)` makes the move (a click or keys). Returns the final board.
 */
async function playOut(page, human, pick, play) {
  let board = await boardOf(page);
  for (let guard = 0; guard < 12; guard++) {
    if (outcomeOf('tic-tac-toe', board)) return board;
    const humanToMove = marks(board) % 2 === (human === 'X' ? 0 : 1);
    if (!humanToMove) {
      board = await waitForBoard(page, (b) => marks(b) > marks(board) || outcomeOf('tic-tac-toe', b) !== null);
      continue;
    }
    // Wait until the board takes input again (the computer has finished).
    await page.locator('.board.is-interactive').waitFor();
    const empty = [...board].flatMap((c, i) => (c === '-' ? [i] : []));
    const cell = pick(board, empty);
    await play(cell);
    board = await waitForBoard(page, (b) => b[cell] === human);
  }
  throw new Error(`the game did not end: ${board}`);
}

const strategies = {
  // Uniformly random squares (seeded).
  random: (seed) => {
    const r = seeded(seed);
    return (_board, empty) => empty[Math.floor(r() * empty.length)];
  },
  // Corners first, then the centre, then edges: a classic trap-setter.
  corners: () => (_board, empty) => [0, 8, 2, 6, 4, 1, 3, 5, 7].find((c) => empty.includes(c)),
  // Win if possible, else block, else centre, else the lowest square.
  greedy: (mark) => (board, empty) => {
    const other = mark === 'X' ? 'O' : 'X';
    for (const who of [mark, other]) {
      for (const c of empty) {
        const outcome = outcomeOf('tic-tac-toe', board.slice(0, c) + who + board.slice(c + 1));
        if (outcome && outcome.winner !== null) return c;
      }
    }
    return empty.includes(4) ? 4 : empty[0];
  },
};

for (const human of ['X', 'O']) {
  test(`the perfect computer never lets the human win, the human playing ${human}`, async () => {
    const page = await newPage(browser, server);
    await page.goto(human === 'X' ? '/' : '/?as=O');
    const games = [
      ['random', strategies.random(human === 'X' ? 11 : 12)],
      ['corners', strategies.corners()],
      ['greedy', strategies.greedy(human)],
    ];
    for (const [name, pick] of games) {
      await page.locator('.board').waitFor();
      const final = await playOut(page, human, pick, (cell) => clickCell(page, cell));
      const outcome = outcomeOf('tic-tac-toe', final);
      const humanIndex = human === 'X' ? 0 : 1;
      assert.notEqual(outcome.winner, humanIndex, `${name}: the human won ${final}`);
      const expected = outcome.winner === null ? 'Draw' : 'The computer wins';
      await page.locator('.result-title').filter({ hasText: expected }).waitFor();
      assert.equal(await resultText(page), expected);
      assert.ok(await page.locator('.status').isHidden(), 'the result replaces the turn line');
      if (outcome.winner !== null) {
        assert.deepEqual((await page.locator('.board').getAttribute('data-win')).split(',').map(Number), outcome.cells, 'the winning triad is highlighted');
      }
      await page.getByRole('button', { name: 'Play again' }).click();
      await waitForBoard(page, (b) => (human === 'X' ? b === '---------' : marks(b) === 1));
    }
    // The score counts every game, and the human has no win.
    const scores = await page.locator('.score').allInnerTexts();
    assert.equal(scores.length, 3);
    const youScore = scores.find((s) => s.includes('You'));
    assert.match(youScore, /^0\s/, `the human never scored: ${scores}`);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
}

test('a whole game from the keyboard: arrows and Enter, then digits; moves and the result are announced', async () => {
  const page = await newPage(browser, server);
  await page.goto('/');
  await page.locator('.board').waitFor();
  await listen(page);
  await page.locator('.board button[tabindex="0"]').focus();
  // The focus starts on the centre square (5): Enter plays it.
  await page.keyboard.press('Enter');
  let board = await waitForBoard(page, (b) => b[4] === 'X');
  await announced(page, /^You place X in square 5\. The computer is thinking\.$/);
  board = await waitForBoard(page, (b) => marks(b) === 2);
  await announced(page, /^The computer places O in square \d\. Your move\.$/);
  // Arrows move the focus: from the centre, up then left is square 1.
  const empty = (b) => [...b].flatMap((c, i) => (c === '-' ? [i] : []));
  if (board[0] === '-') {
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Enter');
    board = await waitForBoard(page, (b) => b[0] === 'X');
  }
  // Digits play the rest, from anywhere.
  while (!outcomeOf('tic-tac-toe', board)) {
    if (marks(board) % 2 === 1) {
      board = await waitForBoard(page, (b) => marks(b) % 2 === 0 || outcomeOf('tic-tac-toe', b) !== null);
      continue;
    }
    await page.locator('.board.is-interactive').waitFor();
    const cell = empty(board)[0];
    await page.keyboard.press(String(cell + 1));
    board = await waitForBoard(page, (b) => b[cell] === 'X');
  }
  await page.locator('.result-title').waitFor();
  await announced(page, /(Draw|The computer wins)$/);
  // Every square's button says what is on it, not by colour.
  const labels = await page.locator('.board button').evaluateAll((bs) => bs.map((b) => b.getAttribute('aria-label')));
  assert.equal(labels.length, 9);
  labels.forEach((label, i) => assert.match(label, new RegExp(`^Square ${i + 1}, (empty|X|O)`)));
  assert.ok(labels.some((l) => l.includes('last move')));
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('the canvas game’s ?player=human: two people, X wins with the ninth mark and the page says so', async () => {
  const page = await newPage(browser, server);
  await page.goto('/?player=human');
  await page.locator('.board').waitFor();
  await listen(page);
  // X 0, O 1, X 2, O 3, X 4, O 5, X 7, O 6, X 8: the board fills as X completes 0-4-8.
  const order = [0, 1, 2, 3, 4, 5, 7, 6, 8];
  for (const [i, cell] of order.entries()) {
    assert.equal(await statusText(page), i % 2 === 0 ? 'X to move' : 'O to move');
    await clickCell(page, cell);
    await waitForBoard(page, (b) => b[cell] === (i % 2 === 0 ? 'X' : 'O'));
  }
  assert.equal(await boardOf(page), 'XOXOXOOXX');
  await page.locator('.result-title').filter({ hasText: 'X wins!' }).waitFor();
  assert.equal(await resultText(page), 'X wins!');
  assert.equal(await page.locator('.board').getAttribute('data-win'), '0,4,8');
  await announced(page, /X wins!$/);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('the canvas game’s ?player=random: a random computer the human can beat', async () => {
  const page = await newPage(browser, server);
  await page.goto('/?player=random');
  await page.locator('.board').waitFor();
  assert.equal(await page.locator('[data-name="opponent"][aria-checked="true"]').innerText(), 'Random');
  // The human plays perfectly (the solver's best moves); against random play that wins
  // almost every game, and certainly one in eight.
  let won = false;
  for (let game = 0; game < 8 && !won; game++) {
    let board = await boardOf(page);
    while (!outcomeOf('tic-tac-toe', board)) {
      if (marks(board) % 2 === 1) {
        board = await waitForBoard(page, (b) => marks(b) % 2 === 0 || outcomeOf('tic-tac-toe', b) !== null);
        continue;
      }
      await page.locator('.board.is-interactive').waitFor();
      const best = (await server.request('GET', `/api/analysis/tic-tac-toe/${board}`)).best[0].cell;
      await clickCell(page, best);
      board = await waitForBoard(page, (b) => b[best] === 'X');
    }
    won = outcomeOf('tic-tac-toe', board).winner === 0;
    if (won) await page.locator('.result-title').filter({ hasText: 'You win!' }).waitFor();
    await page.getByRole('button', { name: 'Play again' }).click();
    await waitForBoard(page, '---------');
  }
  assert.ok(won, 'a perfect human beats the random computer');
  await page.context().close();
});

test('SOS against the computer: the letter is chosen by key, and the game ends at the first S-O-S', async () => {
  const page = await newPage(browser, server);
  await page.goto('/?game=sos&player=casual');
  await page.locator('.mark-picker').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Place S' }).getAttribute('aria-pressed'), 'true');
  await page.keyboard.press('o');
  assert.equal(await page.getByRole('button', { name: 'Place O' }).getAttribute('aria-pressed'), 'true');
  await page.keyboard.press('5');
  let board = await waitForBoard(page, (b) => b[4] === 'O');
  await page.keyboard.press('t');
  assert.equal(await page.getByRole('button', { name: 'Place S' }).getAttribute('aria-pressed'), 'true');
  while (!outcomeOf('sos', board)) {
    if (marks(board) % 2 === 1) {
      board = await waitForBoard(page, (b) => marks(b) % 2 === 0 || outcomeOf('sos', b) !== null);
      continue;
    }
    await page.locator('.board.is-interactive').waitFor();
    const cell = [...board].findIndex((c) => c === '-');
    await clickCell(page, cell);
    board = await waitForBoard(page, (b) => b[cell] !== '-');
  }
  const outcome = outcomeOf('sos', board);
  await page.locator('.result-title').waitFor();
  assert.equal(await resultText(page), outcome.winner === null ? 'Draw' : outcome.winner === 0 ? 'You win!' : 'The computer wins');
  if (outcome.winner !== null) assert.equal(await page.locator('.board').getAttribute('data-win'), outcome.cells.join(','));
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('the canvas is drawn at the device pixel ratio', async () => {
  const page = await newPage(browser, server, { deviceScaleFactor: 2 });
  await page.goto('/');
  await page.locator('.board').waitFor();
  await page.waitForFunction(() => {
    const c = document.querySelector('canvas');
    return c && c.width > 0 && c.width === Math.round(c.getBoundingClientRect().width * 2);
  });
  const { width, css } = await page.locator('canvas').evaluate((c) => ({ width: c.width, css: c.getBoundingClientRect().width }));
  assert.equal(width, Math.round(css * 2));
  await page.context().close();
});
