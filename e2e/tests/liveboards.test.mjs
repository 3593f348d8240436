// "Live now" shows each live match as a small board that moves live: two API players start
// a match, its board appears on the Online page, a move made through the API appears on it
// without a reload, the finished match leaves the list, at most eight boards are drawn, and
// a click opens the match as a spectator. Screenshots at 1280, 390 and 320 px.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { DESKTOP, PHONE, launchBrowser, makeKey, newPage, screenshot, startServer } from '../lib/harness.mjs';

const NARROW = { width: 320, height: 700 };

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

/** A player logged in through the API. */
async function apiPlayer() {
  const key = makeKey();
  const token = await server.login(key);
  return { ...key, token, call: (method, path, body) => server.request(method, path, body, token) };
}

/** `a` challenges `b` (`a` moves first) and `b` accepts; returns the match id. */
async function startMatch(a, b, game = 'tic-tac-toe') {
  const { match } = await a.call('POST', '/api/challenges', { opponent: b.address, game, stake: '0' });
  await b.call('POST', `/api/challenges/${match.id}/accept`);
  return match.id;
}

/** The mini board of a match, once it shows `board`. */
function tile(page, id) {
  return page.locator(`.live-board-item[data-match="${id}"]`);
}
async function waitForMini(page, id, board) {
  await tile(page, id).locator(`.mini-board[data-board="${board}"]`).waitFor({ timeout: 10_000 });
}

test('a live match is a small board that moves live, and leaves when it ends', async () => {
  const [alice, bob, carol, dave] = await Promise.all([apiPlayer(), apiPlayer(), apiPlayer(), apiPlayer()]);
  await alice.call('PUT', '/api/me/name', { name: 'Alice' });
  const id = await startMatch(alice, bob);
  // A second match, SOS, a few letters in, so the screenshots show both games.
  const sos = await startMatch(carol, dave, 'sos');
  await carol.call('POST', `/api/matches/${sos}/moves`, { seq: 1, cell: 0, mark: 'S' });
  await dave.call('POST', `/api/matches/${sos}/moves`, { seq: 2, cell: 4, mark: 'O' });

  const page = await newPage(browser, server);
  await page.goto('/online');
  await waitForMini(page, id, '---------');
  await waitForMini(page, sos, 'S---O----');
  // The players, by identicon and name, the one to move marked.
  const seats = tile(page, id).locator('.live-seat');
  assert.equal(await seats.count(), 2);
  assert.equal(await seats.locator('.identicon').count(), 2);
  assert.match(await tile(page, id).innerText(), new RegExp(`${alice.address.slice(0, 6)}`));
  assert.match(await tile(page, id).innerText(), new RegExp(`${bob.address.slice(0, 6)}`));
  await tile(page, id).locator('.live-seat-p1.to-move').waitFor();

  // Moves made through the API appear without a reload, and the turn passes.
  await alice.call('POST', `/api/matches/${id}/moves`, { seq: 1, cell: 4, mark: 'X' });
  await waitForMini(page, id, '----X----');
  await tile(page, id).locator('.live-seat-p2.to-move').waitFor();
  await bob.call('POST', `/api/matches/${id}/moves`, { seq: 2, cell: 0, mark: 'O' });
  await waitForMini(page, id, 'O---X----');
  await carol.call('POST', `/api/matches/${sos}/moves`, { seq: 3, cell: 7, mark: 'S' });
  await waitForMini(page, sos, 'S---O--S-');
  // Its name is its visible text, framed for a screen reader.
  await tile(page, id).getByRole('link', { name: /^Watch Tic-tac-toe #\d+ .*0x.*0x.*, 2 marks played$/ }).waitFor();

  for (const [name, viewport] of [['1280', DESKTOP], ['390', PHONE], ['320', NARROW]]) {
    await page.setViewportSize(viewport);
    await tile(page, id).evaluate((e) => e.scrollIntoView({ block: 'center' }));
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= viewport.width, `at ${name} px the page is ${width} px wide`);
    const box = await tile(page, id).locator('.mini-board').boundingBox();
    assert.ok(box && box.width >= 90, `at ${name} px the board is ${box?.width} px wide`);
    await screenshot(page, `liveboards-${name}`);
  }
  await page.setViewportSize(PHONE);
  await page.emulateMedia({ colorScheme: 'dark' });
  await screenshot(page, 'liveboards-390-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(DESKTOP);

  // The match ends: its board leaves the list; the other stays.
  await alice.call('POST', `/api/matches/${id}/moves`, { seq: 3, cell: 2, mark: 'X' });
  await waitForMini(page, id, 'O-X-X----');
  await bob.call('POST', `/api/matches/${id}/moves`, { seq: 4, cell: 1, mark: 'O' });
  await alice.call('POST', `/api/matches/${id}/moves`, { seq: 5, cell: 6, mark: 'X' });
  await tile(page, id).waitFor({ state: 'detached', timeout: 10_000 });
  await waitForMini(page, sos, 'S---O--S-');

  // A click on a board opens the match, as a spectator.
  await tile(page, sos).locator('a').click();
  await page.waitForURL(new RegExp(`/match/${sos}$`));
  await page.locator('.board[data-board="S---O--S-"]').waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('at most eight boards are drawn and followed; the rest are counted', async () => {
  const players = await Promise.all(Array.from({ length: 20 }, apiPlayer));
  const ids = [];
  for (let i = 0; i < 20; i += 2) ids.push(await startMatch(players[i], players[i + 1]));
  const page = await newPage(browser, server, { viewport: PHONE });
  // Count the page's match subscriptions as they go out on its socket.
  const followed = new Set();
  // What the socket said of the lobby, for the message of a failure below.
  const lobbyFrames = [];
  page.on('websocket', (ws) => {
    ws.on('framesent', ({ payload }) => {
      const m = JSON.parse(String(payload));
      if (String(m.topic).startsWith('match:')) (m.type === 'subscribe' ? followed.add(m.topic) : followed.delete(m.topic));
      if (m.topic === 'lobby') lobbyFrames.push(`${Date.now()} sent ${String(payload)}`);
    });
    ws.on('framereceived', ({ payload }) => {
      let m;
      try {
        m = JSON.parse(String(payload));
      } catch {
        return lobbyFrames.push(`${Date.now()} got a frame that is not JSON`);
      }
      if (m.topic === 'lobby' || m.type === 'error') lobbyFrames.push(`${Date.now()} got ${m.type} ${m.event?.kind ?? ''} ${m.event?.seq ?? m.code ?? ''}`);
    });
    ws.on('close', () => lobbyFrames.push(`${Date.now()} socket closed`));
  });
  // Every live match, these ten and any an earlier test left under way.
  const live = [];
  for (const status of ['ready', 'in_progress']) live.push(...(await server.request('GET', `/api/matches?status=${status}&limit=12`)).matches);
  await page.goto('/online');
  await page.locator('.live-board-item').nth(7).waitFor();
  await page.locator('.live-more', { hasText: `and ${live.length - 8} more matches under way` }).waitFor();
  assert.equal(await page.locator('.live-board-item').count(), 8);
  // The newest first.
  const shown = await page.locator('.live-board-item').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-match'))));
  assert.deepEqual(shown, ids.slice(-8).reverse());
  assert.equal(followed.size, 8);
  // Leaving the view stops following them all, also when the lobby is being read again
  // as it is left: a new match makes the page reload the list, held up here until the
  // view is gone. Its answer must not draw (and follow) the boards again.
  let held = 0;
  await page.route('**/api/matches?status=*', async (route) => {
    held++;
    await new Promise((resolve) => setTimeout(resolve, 700));
    await route.continue().catch(() => {});
  });
  const [c, d] = await Promise.all([apiPlayer(), apiPlayer()]);
  await startMatch(c, d);
  const asked = Date.now();
  while (held === 0 && Date.now() - asked < 15_000) await page.waitForTimeout(25);
  assert.ok(held > 0, `the new match made the page read the lobby again (asked at ${asked}; the socket's lobby frames: ${lobbyFrames.join('; ')})`);
  await page.locator('a[href="/leaderboard"]:visible').first().click();
  await page.waitForURL(/\/leaderboard$/);
  // The held answers arrive after the view is gone.
  await page.waitForTimeout(1500);
  assert.equal(followed.size, 0, `still following ${[...followed]}`);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
