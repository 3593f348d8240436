// Game review in the browser: step through a finished match with the buttons, the keys and
// the slider, each move judged and each side's accuracy shown; a share link opens the
// review at its move, with a link preview whose picture the server draws; a local game's
// review opens from its result.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { PHONE, clickCell, launchBrowser, makeKey, newPage, screenshot, startServer, waitForBoard } from '../lib/harness.mjs';

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

/** Two players play X 1, O 4 (a mistake), X 2, O 5, X 3 (X wins); returns the match id. */
async function finishedMatch() {
  const [x, o] = [makeKey(), makeKey()];
  const [tx, to] = [await server.login(x), await server.login(o)];
  const { match } = await server.request('POST', '/api/challenges', { opponent: o.address, game: 'tic-tac-toe', stake: '0' }, tx);
  await server.request('POST', `/api/challenges/${match.id}/accept`, undefined, to);
  for (const [seq, token, cell, mark] of [[1, tx, 0, 'X'], [2, to, 3, 'O'], [3, tx, 1, 'X'], [4, to, 4, 'O'], [5, tx, 2, 'X']]) {
    await server.request('POST', `/api/matches/${match.id}/moves`, { seq, cell, mark }, token);
  }
  return match.id;
}

test('a finished match is stepped through, each move judged', async () => {
  const id = await finishedMatch();
  const page = await newPage(browser, server);
  await page.goto(`/review/${id}`);
  await page.locator('.review-moves .move-btn').nth(5).waitFor();
  // It opens at the end: X has won.
  await waitForBoard(page, 'XXXOO----');
  assert.match(await page.locator('.review-verdict').innerText(), /X won\./);
  // O's first move is a mistake (only the centre held the draw), marked as chess marks one.
  const second = page.locator('.review-moves .move-btn').nth(2);
  assert.equal((await second.innerText()).replace(/\s+/g, ''), '2.O4?');
  assert.match(await second.getAttribute('class'), /is-mistake/);
  // O's second move, O5, loses sooner than the block at 3: an inaccuracy.
  const fourth = page.locator('.review-moves .move-btn').nth(4);
  assert.equal((await fourth.innerText()).replace(/\s+/g, ''), '4.O5?!');
  assert.match(await fourth.getAttribute('class'), /is-inaccuracy/);
  // Accuracy: the share of moves that kept the value; none of O's did.
  const accuracy = await page.locator('.review-accuracy .stat').allInnerTexts();
  assert.match(accuracy[0], /100%/);
  assert.match(accuracy[1], /^0%/);
  assert.match(accuracy[1], /1 mistake, 1 inaccuracy/);
  await screenshot(page, 'review-desktop');

  // Keys: Home, then right arrow twice; the address follows the move shown.
  await page.keyboard.press('Home');
  await waitForBoard(page, '---------');
  assert.match(await page.locator('.review-verdict').innerText(), /Draw with best play/);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await waitForBoard(page, 'X--O-----');
  assert.match(await page.locator('.review-best').innerText(), /O4 was a mistake\. Best was O5\./);
  assert.match(await page.locator('.review-verdict').innerText(), /X wins with best play/);
  assert.equal(new URL(page.url()).search, '?ply=2');
  // Buttons and the slider.
  await page.getByRole('button', { name: 'Next move' }).click();
  await waitForBoard(page, 'XX-O-----');
  await page.locator('.review-slider').fill('4');
  await waitForBoard(page, 'XX-OO----');
  await page.getByRole('button', { name: '1. X1, best', exact: true }).click();
  await waitForBoard(page, 'X--------');
  await page.getByRole('button', { name: 'Last move' }).click();
  await waitForBoard(page, 'XXXOO----');
  assert.deepEqual(page.errors, []);
});

test('a share link opens the review at its move, with a picture of that board', async () => {
  const id = await finishedMatch();
  const page = await newPage(browser, server, { viewport: PHONE, isMobile: true, hasTouch: true });
  await page.goto(`/review/${id}?ply=2`);
  await waitForBoard(page, 'X--O-----');
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= PHONE.width, `the review is ${width} px wide at ${PHONE.width} px`);
  await screenshot(page, 'review-phone');
  // The page's head carries the preview, as a link unfurler reads it.
  const image = await page.locator('meta[property="og:image"]').getAttribute('content');
  assert.equal(image, '/api/boards/tic-tac-toe/X--O-----.png?last=4');
  assert.match(await page.locator('meta[property="og:description"]').getAttribute('content'), /X won in 5 moves\..*Move 2: O4 \(mistake\)/);
  // The copy button copies this address.
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.getByRole('button', { name: 'Copy link to this move' }).click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, `${server.url}/review/${id}?ply=2`);
  // The picture itself.
  const picture = await newPage(browser, server, { viewport: { width: 1200, height: 630 } });
  const response = await picture.goto(image);
  assert.equal(response.headers()['content-type'], 'image/png');
  await screenshot(picture, 'review-preview-image');
  assert.deepEqual(page.errors, []);
});

test('a local game is reviewed from its result, and the review is its own share link', async () => {
  const page = await newPage(browser, server);
  await page.goto('/?player=human');
  await page.locator('.board-canvas').waitFor();
  for (const cell of [0, 1, 4, 8, 6, 3, 2]) await clickCell(page, cell);
  await waitForBoard(page, 'XOXOX-X-O');
  await page.getByRole('link', { name: 'Review' }).click();
  await page.locator('.review-moves .move-btn').nth(7).waitFor();
  const url = new URL(page.url());
  assert.equal(url.pathname, '/review');
  assert.equal(url.searchParams.get('moves'), 'X1,O2,X5,O9,X7,O4,X3');
  await waitForBoard(page, 'XOXOX-X-O');
  // O's first move (an edge beside X's corner) lost the draw: a mistake; X's fork and win: best.
  const texts = (await page.locator('.review-moves .move-btn').allInnerTexts()).map((t) => t.replace(/\s+/g, ''));
  assert.deepEqual(texts, ['Start', '1.X1', '2.O2?', '3.X5', '4.O9', '5.X7', '6.O4', '7.X3']);
  // Reloading the address shows the same review.
  await page.reload();
  await waitForBoard(page, 'XOXOX-X-O');
  // A bad list says which move is wrong.
  await page.goto('/review?game=tic-tac-toe&moves=X5,O5');
  await page.locator('.not-found').waitFor();
  assert.match(await page.locator('.not-found').innerText(), /move 2 is not legal/i);
  assert.deepEqual(page.errors.filter((e) => !/status of 400/.test(e)), []);
});

test('a record in notation opens in the review, and a bad one says where', async () => {
  const id = await finishedMatch();
  const record = await (await fetch(`${server.url}/api/matches/${id}/notation`)).text();
  const page = await newPage(browser, server);
  await page.goto('/review');
  await page.locator('.review-moves .move-btn').first().waitFor();
  await page.locator('#review-file').setInputFiles({ name: `match-${id}.txt`, mimeType: 'text/plain', buffer: Buffer.from(record) });
  await page.waitForURL((url) => url.searchParams.get('moves') === 'X1,O4,X2,O5,X3');
  await waitForBoard(page, 'XXXOO----');
  assert.equal((await page.locator('.review-moves .move-btn').allInnerTexts()).length, 6);
  // Square 1 twice.
  await page.locator('#review-file').setInputFiles({ name: 'bad.txt', mimeType: 'text/plain', buffer: Buffer.from('[Game "tic-tac-toe"]\n\n1. X1 O1 *\n') });
  const error = page.locator('.review-import .inline-error');
  await error.waitFor();
  assert.match(await error.innerText(), /^bad\.txt: Line 3, column 7: O1 is illegal/);
  await screenshot(page, 'review-import-error');
  assert.deepEqual(page.errors.filter((e) => !/status of 422/.test(e)), []);
});
