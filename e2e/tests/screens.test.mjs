// Screenshots of every screen at 1280 (desktop), 390 and 320 px (phones), and in dark
// mode and a phone held sideways, saved under artifacts/screenshots/ as `<width>-<screen>`
// for people to look at. Each screen is also checked for what a layout must never do:
// scroll sideways, or hide the board or the navigation.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { COIN, SIZES, apiPlayer, clickCell, launchBrowser, newPage, openLoggedIn, playMatch, screenshot, startServer, waitForBoard } from '../lib/harness.mjs';

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

/** Asserts the page does not scroll sideways and shows its navigation. */
async function assertLayout(page, label) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `${label}: the page scrolls sideways by ${overflow}px`);
  const nav = await page.locator('.nav').boundingBox();
  const viewport = page.viewportSize();
  assert.ok(nav && nav.y >= 0 && nav.y + nav.height <= viewport.height, `${label}: the navigation is on screen`);
}

test('every screen at 1280, 390 and 320 px', async () => {
  // Some history for the leaderboard and the lobby.
  const [c, d, e, f] = await Promise.all([apiPlayer(server), apiPlayer(server), apiPlayer(server), apiPlayer(server)]);
  await server.deposit(f.address, 10n * COIN);
  const reviewId = await playMatch(c, d, [0, 3, 1, 4, 2]);
  await playMatch(d, e, [4, 0, 8, 2, 1, 7, 5, 3, 6]);
  await playMatch(c, e, [4, 1, 0, 8, 6, 2, 3]);
  // A live match to watch.
  const liveId = await (async () => {
    const created = await d.call('POST', '/api/challenges', { opponent: c.address, game: 'sos', stake: '0' });
    await c.call('POST', `/api/challenges/${created.match.id}/accept`);
    await d.call('POST', `/api/matches/${created.match.id}/moves`, { seq: 1, cell: 4, mark: 'O' });
    return created.match.id;
  })();
  // A tournament open for entries.
  const created = await server.request(
    'POST',
    '/api/tournaments',
    { name: 'Friday Arena', game: 'tic-tac-toe', format: 'arena', minutes: 30, starts_in_seconds: 3600, entry: 'everyone', entry_fee: '0' },
    server.ownerToken,
  );
  const tournamentId = created.tournament.id;
  await c.call('POST', `/api/tournaments/${tournamentId}/join`);
  await d.call('POST', `/api/tournaments/${tournamentId}/join`);

  for (const { label: size, viewport, options } of SIZES) {
    const page = await newPage(browser, server, { viewport, ...options });
    const me = await openLoggedIn(page);
    await server.deposit(me, 25n * COIN);
    await page.waitForFunction(() => document.querySelector('.balance-chip')?.getAttribute('data-balance') === '25000000');

    // Play: a game under way against the perfect computer.
    await page.goto('/');
    await page.locator('.board.is-interactive').waitFor();
    await clickCell(page, 4);
    await waitForBoard(page, (b) => [...b].filter((ch) => ch !== '-').length === 2);
    await page.locator('.board.is-interactive').waitFor();
    await screenshot(page, `${size}-play`);
    await assertLayout(page, `${size} play`);
    const board = await page.locator('.board').boundingBox();
    assert.ok(board.y + board.height <= viewport.height, `${size}: the whole board is on screen`);

    // Two players, SOS, won: the winning line in red.
    await page.goto('/?player=human&game=sos');
    await page.locator('.board.is-interactive').waitFor();
    await page.keyboard.press('1');
    await page.keyboard.press('t');
    await page.keyboard.press('5');
    await page.keyboard.press('t');
    await page.keyboard.press('3');
    await page.keyboard.press('o');
    await page.keyboard.press('2');
    await page.locator('.result-title').waitFor();
    await page.waitForTimeout(150);
    await screenshot(page, `${size}-play-won`);

    // Online: an incoming challenge, the lobby.
    const challenge = await f.call('POST', '/api/challenges', { opponent: me, game: 'tic-tac-toe', stake: String(2n * COIN), first: 'opponent' });
    await page.goto('/online');
    await page.locator('.challenge-row').waitFor();
    await page.locator('.live-board-item').first().waitFor();
    await screenshot(page, `${size}-online`);
    await assertLayout(page, `${size} online`);

    // The match: accept, make a move, wait for the reply.
    await page.locator('.challenge-row').getByRole('button', { name: 'Accept' }).click();
    await page.waitForURL(/\/match\/\d+$/);
    await page.locator('.board.is-interactive').waitFor();
    await clickCell(page, 4);
    await waitForBoard(page, (b) => b[4] === 'X');
    const matchId = challenge.match.id;
    await f.call('POST', `/api/matches/${matchId}/moves`, { seq: 2, cell: 0, mark: 'O' });
    await waitForBoard(page, (b) => b[0] === 'O');
    await page.locator('.countdown').waitFor();
    await screenshot(page, `${size}-match`);
    await assertLayout(page, `${size} match`);
    // Finish it: X wins the diagonal 2-4-6.
    await clickCell(page, 2);
    await waitForBoard(page, (b) => b[2] === 'X');
    await f.call('POST', `/api/matches/${matchId}/moves`, { seq: 4, cell: 1, mark: 'O' });
    await page.locator('.board.is-interactive').waitFor();
    await clickCell(page, 6);
    await page.locator('.result-title', { hasText: 'You won!' }).waitFor();
    await page.locator('.result-money').waitFor();
    await page.waitForTimeout(400);
    await screenshot(page, `${size}-match-won`);
    // The result and the whole board, with its winning line, on the first screen (above a
    // phone's bottom navigation).
    const won = await page.locator('.board').boundingBox();
    const navTop = viewport.width <= 640 ? (await page.locator('.nav').boundingBox()).y : viewport.height;
    assert.ok(won.y + won.height <= navTop, `${size}: the won board ends at ${won.y + won.height}px, under the navigation at ${navTop}px`);

    // Watching a live match.
    await page.goto(`/match/${liveId}`);
    await page.locator('.chip-watch').waitFor();
    await screenshot(page, `${size}-watch`);

    await page.goto('/leaderboard');
    await page.locator('tbody tr').first().waitFor();
    await screenshot(page, `${size}-leaderboard`);
    await assertLayout(page, `${size} leaderboard`);

    await page.goto(`/player/${c.address}`);
    await page.locator('.stat').first().waitFor();
    await page.locator('.result-pill').first().waitFor();
    await screenshot(page, `${size}-player`);
    await assertLayout(page, `${size} player`);

    await page.goto('/wallet');
    await page.locator('.ledger-table').waitFor();
    await screenshot(page, `${size}-wallet`);
    await assertLayout(page, `${size} wallet`);

    await page.goto('/puzzles');
    await page.locator('.board.is-interactive').waitFor();
    await screenshot(page, `${size}-puzzles`);
    await assertLayout(page, `${size} puzzles`);

    await page.goto(`/review/${reviewId}`);
    await page.locator('.review-moves .move-btn').nth(4).waitFor();
    await screenshot(page, `${size}-review`);
    await assertLayout(page, `${size} review`);

    await page.goto('/tournaments');
    await page.locator(`.tournament-row[data-id="${tournamentId}"]`).waitFor();
    await screenshot(page, `${size}-tournaments`);
    await assertLayout(page, `${size} tournaments`);

    await page.goto(`/tournament/${tournamentId}`);
    await page.locator('.page-title', { hasText: 'Friday Arena' }).waitFor();
    await screenshot(page, `${size}-tournament`);
    await assertLayout(page, `${size} tournament`);

    await page.goto('/no-such-page');
    await page.locator('.page-title').waitFor();
    await screenshot(page, `${size}-not-found`);
    await assertLayout(page, `${size} not found`);

    // The browser logs the API's 404 for a match that does not exist; nothing else may fail.
    page.errors = [];
    await page.goto('/match/99999');
    await page.locator('.inline-error').waitFor();
    await screenshot(page, `${size}-match-missing`);
    await assertLayout(page, `${size} match missing`);
    assert.ok(page.errors.every((e) => e.includes('404')), page.errors.join('\n'));
    page.errors = [];
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }

  // Dark mode, and a phone held sideways.
  const dark = await newPage(browser, server, { colorScheme: 'dark' });
  await dark.goto('/?game=sos');
  await dark.locator('.board.is-interactive').waitFor();
  await clickCell(dark, 4);
  await waitForBoard(dark, (b) => [...b].filter((ch) => ch !== '-').length === 2);
  await dark.locator('.board.is-interactive').waitFor();
  await screenshot(dark, '1280-play-dark');
  await dark.goto(`/match/${liveId}`);
  await dark.locator('.chip-watch').waitFor();
  await screenshot(dark, '1280-watch-dark');
  await dark.context().close();

  const landscape = await newPage(browser, server, { viewport: { width: 844, height: 390 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  await landscape.goto('/');
  await landscape.locator('.board.is-interactive').waitFor();
  await landscape.locator('.board-canvas').tap({ position: { x: 20, y: 20 } });
  await waitForBoard(landscape, (b) => b[0] === 'X');
  const board = await landscape.locator('.board').boundingBox();
  assert.ok(board.y + board.height <= 390, 'landscape: the whole board is on screen');
  await screenshot(landscape, '844-landscape-play');
  await landscape.context().close();
});
