// How the app feels to a player: an outcome has its own colour (a win is good news, with a
// small celebration; a loss is quiet; neither is the red of an error); a click that cannot
// be played says why, on the board and aloud; the leaderboard ranks ties alike ("1, 1, 3"),
// its hall of fame lists only winners, and a player's matches say when they were played; a
// spectator is not offered "Play again" and follows the players to their rematch.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { clickCell, launchBrowser, makeKey, newPage, openLoggedIn, PHONE, screenshot, startServer, waitForBoard } from '../lib/harness.mjs';

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

/** The computed text colour of the first element `selector` matches. */
async function colourOf(page, selector) {
  // A view re-renders on live events: read again if the element was just replaced.
  for (let i = 0; i < 40; i++) {
    const colour = await page.locator(selector).first().evaluate((el) => getComputedStyle(el).color);
    if (colour) return colour;
    await page.waitForTimeout(25);
  }
  return '';
}

/** The red of an error, as the app draws it. */
function errorColour(page) {
  return page.evaluate(() => {
    const el = document.createElement('p');
    el.className = 'inline-error';
    document.body.append(el);
    const colour = getComputedStyle(el).color;
    el.remove();
    return colour;
  });
}

test('a win, a loss and an error each have their own colour; a win celebrates', async () => {
  // A win: two players on one device, X takes the top row.
  const page = await newPage(browser, server);
  await page.goto('/?player=human');
  await page.locator('.board-canvas').waitFor();
  const cells = [0, 3, 1, 4, 2];
  for (let i = 0; i < cells.length; i++) {
    await clickCell(page, cells[i]);
    await waitForBoard(page, (b) => b[cells[i]] !== '-');
  }
  await page.locator('.result-card.is-win .result-title.win', { hasText: 'X wins!' }).waitFor();
  const win = await colourOf(page, '.result-title.win');
  const error = await errorColour(page);
  for (const [name, viewport] of [['1280', { width: 1280, height: 800 }], ['390', PHONE], ['320', NARROW]]) {
    await page.setViewportSize(viewport);
    await screenshot(page, `feel-${name}-win`);
  }

  // A loss: a match against the computer, resigned, on the match page.
  const player = await newPage(browser, server);
  await openLoggedIn(player, '/wallet');
  const id = await player.evaluate(async () => {
    const { api } = await import('/js/api.js');
    const result = await api('POST', '/api/computer', { game: 'tic-tac-toe', level: 'perfect', side: 'first' });
    return result.match.id;
  });
  await player.goto(`/match/${id}`);
  await player.getByRole('button', { name: 'Resign' }).click();
  await player.getByRole('button', { name: 'Yes, resign' }).click();
  await player.locator('.result-title.loss', { hasText: 'You lost by resignation' }).waitFor();
  assert.equal(await player.locator('.result-card.is-win').count(), 0, 'a loss does not celebrate');
  const loss = await colourOf(player, '.result-title.loss');
  // The computer's row says Winner, in the win's colour (its darker ink, for contrast on
  // the row's green tint), not the error's.
  const winnerTag = await colourOf(player, '.player-row.won .player-state');
  const winInk = await player.evaluate(() => {
    const probe = document.body.appendChild(document.createElement('span'));
    probe.style.color = 'var(--ok-text)';
    const colour = getComputedStyle(probe).color;
    probe.remove();
    return colour;
  });
  for (const [name, viewport] of [['1280', { width: 1280, height: 800 }], ['390', PHONE], ['320', NARROW]]) {
    await player.setViewportSize(viewport);
    await screenshot(player, `feel-${name}-loss`);
  }

  assert.notEqual(win, loss, 'a win and a loss look different');
  assert.notEqual(win, error, 'a win is not the red of an error');
  assert.notEqual(loss, error, 'a loss is not the red of an error');
  assert.equal(winnerTag, winInk, 'the WINNER tag has the win colour');
  assert.notEqual(winnerTag, error, 'the WINNER tag is not the red of an error');
  assert.deepEqual([...page.errors, ...player.errors], []);
  await page.context().close();
  await player.context().close();
});

/** The live region's text once it says `text` (it is cleared and set again on each message). */
async function heard(page, text) {
  await page.waitForFunction((t) => document.getElementById('live')?.textContent === t, text, { timeout: 5000 });
}

test('a click out of turn or on a taken square says why', async () => {
  const page = await newPage(browser, server);
  const address = await openLoggedIn(page, '/wallet');
  // Bob challenges; Bob moves first.
  const bob = makeKey();
  const bobToken = await server.login(bob);
  const { match } = await server.request('POST', '/api/challenges', { opponent: address, game: 'tic-tac-toe' }, bobToken);
  await page.evaluate(async (id) => {
    const { api } = await import('/js/api.js');
    await api('POST', `/api/challenges/${id}/accept`);
  }, match.id);
  await page.goto(`/match/${match.id}`);
  await page.locator('.status-text', { hasText: 'Waiting for' }).waitFor();

  // Out of turn: the square flashes, the board shakes, a note shows and is read out.
  await clickCell(page, 0);
  await heard(page, "Wait for your opponent's move");
  await page.locator('.board.is-refused[data-refused="0"] .board-note', { hasText: "Wait for your opponent's move" }).waitFor();
  await screenshot(page, 'feel-1280-out-of-turn');
  assert.equal(await page.locator('.board').getAttribute('data-board'), '---------', 'nothing was played');

  // A taken square.
  await server.request('POST', `/api/matches/${match.id}/moves`, { seq: 1, cell: 4, mark: 'X' }, bobToken);
  await waitForBoard(page, '----X----');
  await page.locator('.status-text', { hasText: 'Your move' }).waitFor();
  await clickCell(page, 4);
  await heard(page, 'That square is taken');
  await page.locator('.board[data-refused="4"] .board-note', { hasText: 'That square is taken' }).waitFor();
  for (const [name, viewport] of [['1280', { width: 1280, height: 800 }], ['390', PHONE], ['320', NARROW]]) {
    await page.setViewportSize(viewport);
    await clickCell(page, 4);
    await page.locator('.board-note:not([hidden])').waitFor();
    await screenshot(page, `feel-${name}-taken`);
  }
  // The same square by keyboard (its digit) says the same.
  await page.keyboard.press('5');
  await heard(page, 'That square is taken');
  assert.equal(await page.locator('.board').getAttribute('data-board'), '----X----');

  // The note goes away by itself.
  await page.locator('.board-note').waitFor({ state: 'hidden', timeout: 5000 });
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

/** A free game of tic-tac-toe between two tokens, played to a win for `winner` (X, the challenger). */
async function quickWin(winner, loser, loserAddress) {
  const { match } = await server.request('POST', '/api/challenges', { opponent: loserAddress, game: 'tic-tac-toe' }, winner);
  await server.request('POST', `/api/challenges/${match.id}/accept`, undefined, loser);
  const moves = [[winner, 0, 'X'], [loser, 3, 'O'], [winner, 1, 'X'], [loser, 4, 'O'], [winner, 2, 'X']];
  for (let i = 0; i < moves.length; i++) {
    const [token, cell, mark] = moves[i];
    await server.request('POST', `/api/matches/${match.id}/moves`, { seq: i + 1, cell, mark }, token);
  }
  return match.id;
}

test('the leaderboard shares ranks and medals on a tie; the hall of fame lists winners; matches have dates', async () => {
  // Two pairs play the same game: both winners tie, and both losers tie.
  const keys = [makeKey(), makeKey(), makeKey(), makeKey()];
  const [a, b, c, d] = await Promise.all(keys.map((k) => server.login(k)));
  const started = Date.now();
  await quickWin(a, b, keys[1].address);
  await quickWin(c, d, keys[3].address);
  const rating = async (k) => Math.round((await server.player(k.address)).rating.rating);
  assert.equal(await rating(keys[0]), await rating(keys[2]), 'the two winners have the same rating');

  const page = await newPage(browser, server);
  await page.goto('/leaderboard');
  const rows = page.locator('.table tbody tr');
  await rows.first().waitFor();
  const table = await rows.evaluateAll((trs) => trs.map((tr) => ({ rank: tr.querySelector('.rank')?.textContent, cls: tr.className, text: tr.textContent })));
  const row = (k) => table.find((r) => r.text.includes(k.address.slice(-4)));
  // Tied rows come in either order; the second of them says "=".
  assert.deepEqual([row(keys[0]).rank, row(keys[2]).rank].sort(), ['1', '=1']);
  assert.match(row(keys[0]).cls, /medal-1/);
  assert.match(row(keys[2]).cls, /medal-1/, 'a tie for first shares the gold');
  // Standard competition ranking: after two firsts comes third.
  assert.deepEqual([row(keys[1]).rank, row(keys[3]).rank].sort(), ['3', '=3']);
  assert.match(row(keys[1]).cls, /medal-3/);
  assert.match(row(keys[3]).cls, /medal-3/);
  assert.ok(!table.some((r) => /medal-2/.test(r.cls)), 'no silver after a tie for gold');
  for (const [name, viewport] of [['1280', { width: 1280, height: 800 }], ['390', PHONE], ['320', NARROW]]) {
    await page.setViewportSize(viewport);
    await screenshot(page, `feel-${name}-leaderboard`);
  }

  // The hall of fame: the two winners, not the two who never won.
  await page.goto('/leaderboard?by=wins');
  await page.locator('.table tbody tr').first().waitFor();
  const fame = await page.locator('.table tbody tr').allInnerTexts();
  assert.equal(fame.length, 2, `only winners: ${fame.join(' | ')}`);
  assert.ok(fame.every((t) => !t.includes(keys[1].address.slice(-4)) && !t.includes(keys[3].address.slice(-4))));

  // A player's matches say when, in a <time> the machine can read, shown in the user's locale.
  await page.goto(`/player/${keys[0].address}`);
  const time = page.locator('.list-row time').first();
  await time.waitFor();
  const datetime = await time.getAttribute('datetime');
  const at = Date.parse(datetime ?? '');
  assert.ok(at >= started - 1000 && at <= Date.now() + 1000, `the match's time ${datetime} is when it was played`);
  const shown = await page.evaluate((ms) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(ms)), at);
  assert.equal(await time.innerText(), shown);
  for (const [name, viewport] of [['1280', { width: 1280, height: 800 }], ['390', PHONE], ['320', NARROW]]) {
    await page.setViewportSize(viewport);
    await screenshot(page, `feel-${name}-player`);
  }
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a spectator is not offered Play again, and follows the players to their rematch', async () => {
  const alice = makeKey();
  const bob = makeKey();
  const [a, b] = await Promise.all([server.login(alice), server.login(bob)]);
  const id = await quickWin(a, b, bob.address);

  const page = await newPage(browser, server);
  await page.goto(`/match/${id}`);
  await page.locator('.result-title', { hasText: 'won' }).waitFor();
  await page.locator('.chip-watch').waitFor();
  assert.equal(await page.getByRole('link', { name: 'Play again' }).count(), 0, 'a spectator is not offered Play again');
  assert.equal(await page.getByRole('button', { name: /Rematch/ }).count(), 0);
  for (const [name, viewport] of [['1280', { width: 1280, height: 800 }], ['390', PHONE], ['320', NARROW]]) {
    await page.setViewportSize(viewport);
    await screenshot(page, `feel-${name}-spectator-ended`);
  }
  // The players agree to a rematch at once: the page follows it whether it began before or
  // after the page started listening.
  await server.request('POST', `/api/matches/${id}/rematch`, undefined, b);
  const { match } = await server.request('POST', `/api/matches/${id}/rematch`, undefined, a);
  assert.notEqual(match.id, id);
  await page.waitForURL(`**/match/${match.id}`, { timeout: 10_000 });
  await page.locator('.chip-watch').waitFor();
  await page.locator('.chip', { hasText: 'Rematch' }).waitFor();

  // Opened later, the ended match links to its rematch instead of moving on by itself.
  await page.goto(`/match/${id}`);
  await page.getByRole('link', { name: 'Watch the rematch' }).waitFor();
  assert.equal(new URL(page.url()).pathname, `/match/${id}`);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
