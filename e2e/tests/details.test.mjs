// The details a first visit trips over: every main screen (tournaments too) fits a 320 px phone; a stake the
// balance does not cover is said once, in coins, with the button waiting; a mistyped
// address shows the app's "not found" page with a 404; a match that does not exist is one
// request and one error; the key file's import control shows keyboard focus; an unreadable
// stake is said once.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { apiPlayer, COIN, holdThenFail, launchBrowser, makeKey, newPage, openLoggedIn, screenshot, startServer, textsWhen } from '../lib/harness.mjs';

const NARROW = { width: 320, height: 640 };

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

/** How far the document is wider than the window, in CSS pixels (0 when it fits). */
function overflow(page) {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

test('every main screen fits a 320 px window', async () => {
  const page = await newPage(browser, server, { viewport: NARROW, isMobile: true, hasTouch: true });
  // At 320 px the header shows the balance, not the address (it is on the wallet page).
  await page.goto('/wallet');
  await page.locator('.balance-chip').waitFor({ timeout: 15_000 });
  const address = await page.locator('#header-address').getAttribute('data-address');
  // A match to watch: another player against the computer, one move in.
  const other = makeKey();
  const token = await server.login(other);
  const { match } = await server.request('POST', '/api/computer', { game: 'tic-tac-toe', level: 'perfect', side: 'first' }, token);
  await server.request('POST', `/api/matches/${match.id}/moves`, { seq: 1, cell: 4, mark: 'X' }, token);
  const { puzzles: [sosPuzzle] } = await server.request('GET', '/api/puzzles?game=sos&limit=1');
  const { tournament } = await server.request('POST', '/api/tournaments', { name: 'A Swiss with a long name for a narrow screen', game: 'sos', format: 'swiss', rounds: 3, starts_in_seconds: 600, entry_fee: String(COIN), prizes_bps: [7000, 2000] }, server.ownerToken);
  for (const [name, path, ready] of [
    ['play', '/', '.board-canvas'],
    ['play-sos-2-players', '/?game=sos&player=human', '.board-canvas'],
    ['online', '/online', '#challenge-opponent'],
    ['leaderboard', '/leaderboard', '.page-title'],
    ['player', `/player/${address}`, '.page-title'],
    ['wallet', '/wallet', '#wallet-balance'],
    ['puzzles', '/puzzles', '.puzzle-facts'],
    ['puzzles-sos', `/puzzles?id=${sosPuzzle.id}`, '.puzzle-facts'],
    ['match', `/match/${match.id}`, '.board-canvas'],
    ['tournaments', '/tournaments', '.tournament-row'],
    ['tournament', `/tournament/${tournament.id}`, '#tournament-join'],
    ['not-found', '/nonexistent', '.not-found'],
  ]) {
    await page.goto(path);
    await page.locator(ready).first().waitFor();
    await page.evaluate(() => document.fonts.ready);
    await screenshot(page, `narrow-320-${name}`);
    if (path.startsWith('/?') || path === '/') {
      await page.locator('.settings').scrollIntoViewIfNeeded();
      await screenshot(page, `narrow-320-${name}-settings`);
    }
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= NARROW.width, `${path} is ${width} px wide at ${NARROW.width} px`);
    assert.equal(await overflow(page), 0, path);
  }
  // The browser logs the not-found page's status itself; nothing else.
  assert.deepEqual(page.errors.filter((e) => !/status of 404/.test(e)), []);
});

test('a stake the balance does not cover: one message in coins, the button waits until it is covered', async () => {
  const page = await newPage(browser, server);
  const address = await openLoggedIn(page, '/online');
  const summary = page.locator('#challenge-stake').locator('xpath=ancestor::form').locator('.stake-summary');
  const send = page.getByRole('button', { name: 'Send challenge' });
  await page.locator('#challenge-opponent').fill(`0x${'ab'.repeat(32)}`);
  await page.locator('#challenge-stake').fill('1');
  await summary.filter({ hasText: 'Not enough' }).waitFor();
  const text = await summary.innerText();
  assert.equal(text, 'Not enough: this needs 1.00 and your balance is 0.00. Lower the amount or get a deposit first.');
  assert.doesNotMatch(text, /1000000/);
  assert.ok(await send.isDisabled(), 'the button waits while the balance is short');
  for (const [name, size] of [['320', NARROW], ['390', { width: 390, height: 844 }], ['1280', { width: 1280, height: 800 }]]) {
    await page.setViewportSize(size);
    await summary.scrollIntoViewIfNeeded();
    await screenshot(page, `stake-short-${name}`);
  }
  // The quick match form says it the same way.
  await page.locator('#queue-stake').fill('0.5');
  assert.ok(await page.getByRole('button', { name: 'Find an opponent' }).isDisabled());
  // Nothing else says it a second time.
  const form = page.locator('#challenge-stake').locator('xpath=ancestor::form');
  assert.equal(await form.getByText(/not enough/i).count(), 1);
  assert.equal(await form.locator('.inline-error:visible').count(), 0);

  // A deposit arrives (live, over the inbox): the button comes back.
  await server.deposit(address, 2n * COIN);
  await page.locator('.balance-chip[data-balance="2000000"]').waitFor();
  await summary.filter({ hasText: 'your balance 2.00' }).waitFor();
  assert.ok(await send.isEnabled());
  assert.equal(await summary.innerText(), 'Stake 1.00 each · pot 2.00 · your balance 2.00');

  assert.deepEqual(page.errors, []);
});

test("accepting a challenge the balance does not cover: the server's refusal said in coins", async () => {
  const alice = await newPage(browser, server);
  const bob = await newPage(browser, server);
  const aliceAddress = await openLoggedIn(alice, '/online');
  const bobAddress = await openLoggedIn(bob, '/online');
  await server.deposit(aliceAddress, COIN);
  await alice.locator('.balance-chip[data-balance="1000000"]').waitFor();
  await alice.locator('#challenge-opponent').fill(bobAddress);
  await alice.locator('#challenge-stake').fill('1');
  await alice.getByRole('button', { name: 'Send challenge' }).click();
  const row = bob.locator('.challenge-row');
  await row.waitFor();
  await row.getByRole('button', { name: 'Accept' }).click();
  // The engine's insufficient_balance (code 105) counts minor units; the page says coins.
  const toast = bob.locator('.toast-error .toast-text');
  await toast.waitFor();
  assert.equal(await toast.innerText(), 'Not enough: this needs 1.00 and your balance is 0.00. Lower the amount or get a deposit first.');
  assert.doesNotMatch(await bob.locator('body').innerText(), /1000000/);
  // The browser logs the refused request itself (409); nothing else.
  assert.deepEqual([...alice.errors, ...bob.errors].filter((e) => !/status of 409/.test(e)), []);
});

test('a page that does not exist is the app with a "not found" screen and a 404; the API keeps its JSON', async () => {
  const page = await newPage(browser, server);
  for (const path of ['/nonexistent', '/player/']) {
    const response = await page.goto(path);
    assert.equal(response?.status(), 404, path);
    assert.match(response?.headers()['content-type'] ?? '', /^text\/html/, path);
    await page.locator('.not-found h1', { hasText: 'There is nothing here' }).waitFor();
    assert.equal(await page.title(), 'Not found · Triad');
    // The app's navigation is there, to go on from.
    assert.equal(await page.locator('nav[aria-label="Main"] a').count(), 6);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await screenshot(page, 'not-found-1280');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'not-found-390');
  const api = await page.goto('/api/nothing');
  assert.equal(api?.status(), 404);
  assert.match(api?.headers()['content-type'] ?? '', /^application\/json/);
  assert.equal((await api?.json()).error, 'not_found');
  assert.deepEqual(page.errors.filter((e) => !/status of 404/.test(e)), []);
});

test('a match that does not exist: one request, one error, no empty board', async () => {
  const page = await newPage(browser, server);
  const requests = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/matches/99999') requests.push(r.url());
  });
  await page.goto('/match/99999');
  await page.locator('.not-found .inline-error').waitFor();
  // Long enough for a second fetch (a subscription's sync, a retry) to have happened.
  await page.waitForTimeout(1500);
  assert.equal(requests.length, 1, `fetched ${requests.length} times`);
  const body = await page.locator('main').innerText();
  const said = body.match(/no match has that id/gi) ?? [];
  assert.equal(said.length, 1, body);
  assert.equal(await page.locator('.board-canvas:visible').count(), 0, 'no empty board');
  await screenshot(page, 'match-missing-1280');
  assert.deepEqual(page.errors.filter((e) => !/status of 404/.test(e)), []);
});

test('the "Import key file" control shows keyboard focus as other controls do', async () => {
  const page = await newPage(browser, server);
  await openLoggedIn(page, '/wallet');
  const label = page.locator('label[for="key-file"]');
  await label.waitFor();
  // Tab from the export button, as a keyboard user does.
  await page.getByRole('button', { name: 'Export key file' }).focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'key-file');
  const ring = await label.evaluate((el) => {
    const s = getComputedStyle(el);
    return { outline: s.outlineStyle, width: s.outlineWidth, shadow: s.boxShadow };
  });
  assert.ok(ring.outline !== 'none' && ring.width !== '0px', `outline ${ring.outline} ${ring.width}`);
  // The same ring as the button beside it.
  await page.getByRole('button', { name: 'Export key file' }).focus();
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  const other = await page.getByRole('button', { name: 'Export key file' }).evaluate((el) => {
    const s = getComputedStyle(el);
    return { outline: s.outlineStyle, width: s.outlineWidth, color: s.outlineColor };
  });
  const mine = await page.locator('#key-file').evaluate((input) => {
    input.focus();
    const s = getComputedStyle(/** @type {HTMLElement} */ (input.nextElementSibling));
    return { outline: s.outlineStyle, width: s.outlineWidth, color: s.outlineColor };
  });
  assert.deepEqual(mine, other);
  for (const [name, size] of [['320', NARROW], ['390', { width: 390, height: 844 }], ['1280', { width: 1280, height: 800 }]]) {
    await page.setViewportSize(size);
    await page.getByRole('button', { name: 'Export key file' }).focus();
    await page.keyboard.press('Tab');
    await label.scrollIntoViewIfNeeded();
    await screenshot(page, `import-focus-${name}`);
  }
  assert.deepEqual(page.errors, []);
});

test('an unreadable stake is said once', async () => {
  const page = await newPage(browser, server);
  await openLoggedIn(page, '/online');
  const form = page.locator('#challenge-stake').locator('xpath=ancestor::form');
  await page.locator('#challenge-opponent').fill(`0x${'cd'.repeat(32)}`);
  await page.locator('#challenge-stake').fill('one coin');
  await form.getByText('Type an amount such as 1 or 0.25.').first().waitFor();
  assert.ok(await page.getByRole('button', { name: 'Send challenge' }).isDisabled());
  // Enter in the field submits the form: still one message.
  await page.locator('#challenge-stake').press('Enter');
  await page.waitForTimeout(200);
  assert.equal(await form.getByText('Type an amount such as 1 or 0.25.').count(), 1);
  assert.equal(await page.getByText('Type an amount such as 1 or 0.25.').count(), 1);
  assert.deepEqual(page.errors, []);
});

test("a tournament read that fails after a newer one was drawn leaves the page as drawn", async () => {
  // The page's first read is held on its way and fails (a dropped connection) only after a
  // player's entry made the page read again and draw the answer: the older read's failure
  // must not replace the tournament with an error.
  const { tournament } = await server.request('POST', '/api/tournaments', { name: 'Late failure cup', game: 'tic-tac-toe', format: 'arena', minutes: 30, starts_in_seconds: 600, entry_fee: '0', prizes_bps: [] }, server.ownerToken);
  const page = await newPage(browser, server);
  const first = await holdThenFail(page, (url) => url.pathname === `/api/tournaments/${tournament.id}`);
  await page.goto(`/tournament/${tournament.id}`);
  await first.held;
  const player = await apiPlayer(server);
  await player.call('POST', `/api/tournaments/${tournament.id}/join`, {});
  await textsWhen(page.locator('.tournament-head .chip'), (chips) => chips.includes('1/500 players'));
  first.release();
  await first.failed;
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
  const errors = (await page.locator('.inline-error').allInnerTexts()).filter((text) => text.trim());
  assert.deepEqual(errors, [], 'no error for a read older than what is drawn');
  assert.equal(await page.locator('.page-title').innerText(), 'Late failure cup');
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  assert.deepEqual(page.errors.filter((e) => !/ERR_CONNECTION_RESET|Failed to load resource/.test(e)), []);
  await page.context().close();
});
