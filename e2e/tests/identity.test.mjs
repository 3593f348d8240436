// Identity: a display name set on the wallet page shows, with the address's identicon,
// on the player's page, the leaderboard and the match's seats; a second player's
// look-alike name is refused with the server's message, inline; a bot (logged in with
// "bot": true through the API) has its badge. Screenshots at 390 and 1280 px.

import assert from 'node:assert/strict';
import { randomBytes, sign } from 'node:crypto';
import { after, before, test } from 'node:test';

import { identiconPattern } from '../../web/js/identity.js';
import { launchBrowser, makeKey, newPage, openLoggedIn, PHONE, screenshot, startServer } from '../lib/harness.mjs';

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

/** Logs a key in through the API as a bot; returns the token. */
async function loginAsBot(key) {
  const challenge = await server.request('POST', '/api/auth/challenge', { public_key: key.publicKeyHex });
  const signature = sign(null, Buffer.from(challenge.message, 'utf8'), key.privateKey).toString('hex');
  const session = await server.request('POST', '/api/auth/login', { challenge_id: challenge.challenge_id, public_key: key.publicKeyHex, signature, bot: true });
  return session.token;
}

/** Sets the display name on the wallet page and waits for the page to show it saved. */
async function setName(page, name) {
  await page.locator('#display-name').fill(name);
  await page.locator('.wallet-name').getByRole('button', { name: 'Save' }).click();
}

/** The identicon's drawn cells, to compare two drawings of one address. */
function cellsOf(locator) {
  return locator.evaluate((svg) => Array.from(svg.querySelectorAll('rect')).slice(1).map((r) => `${r.getAttribute('x')},${r.getAttribute('y')}`).join(' '));
}

test('a display name shows with the identicon everywhere; a look-alike is refused; a bot has its badge', async () => {
  const ada = await newPage(browser, server);
  const adaAddress = await openLoggedIn(ada, '/wallet');
  await ada.locator('#display-name').waitFor();
  await setName(ada, 'Ada_L');
  await ada.locator('.wallet-name .player-label-name', { hasText: 'Ada_L' }).waitFor();
  assert.equal(await ada.locator('#display-name-error').isHidden(), true);
  assert.equal((await server.player(adaAddress)).name, 'Ada_L');

  // The player's page: identicon, name as the title, the full address still there.
  await ada.goto(`/player/${adaAddress}`);
  await ada.locator('.page-title', { hasText: 'Ada_L' }).waitFor();
  const big = ada.locator('.player-head svg.identicon');
  await big.waitFor();
  assert.equal(await ada.locator('.address-full').innerText(), adaAddress);

  // A second player, a bot, plays her: the match's seats show both, with the bot's badge.
  const botKey = makeKey();
  const botToken = await loginAsBot(botKey);
  // The page's own session (kept as the login answered it), to play her moves by the API.
  const adaToken = JSON.parse(await ada.evaluate(() => localStorage.getItem('triad.session') ?? 'null')).token;
  assert.ok(adaToken, 'the page keeps its session token');
  const challenge = await server.request('POST', '/api/challenges', { opponent: botKey.address, game: 'tic-tac-toe', stake: '0' }, adaToken);
  const id = challenge.match.id;
  await server.request('POST', `/api/challenges/${id}/accept`, undefined, botToken);
  await ada.goto(`/match/${id}`);
  const seats = ada.locator('.player-row');
  await seats.nth(0).locator('.player-label-name', { hasText: 'Ada_L' }).waitFor();
  await seats.nth(1).locator('.tag-bot').waitFor();
  assert.match(await seats.nth(1).innerText(), new RegExp(`${botKey.address.slice(0, 6)}`));
  // The same address draws the same identicon on every page.
  const seatCells = await cellsOf(seats.nth(0).locator('svg.identicon'));
  await ada.goto(`/player/${adaAddress}`);
  await big.waitFor();
  assert.equal(await cellsOf(big), seatCells);
  await screenshot(ada, 'identity-player-1280');

  // The bot's own page has the badge.
  await ada.goto(`/player/${botKey.address}`);
  await ada.locator('.player-title-badge .tag-bot').waitFor();

  // The game is played to its end: both are on the leaderboard, with names and badges.
  for (const [seq, token, cell, mark] of [
    [1, adaToken, 0, 'X'],
    [2, botToken, 3, 'O'],
    [3, adaToken, 1, 'X'],
    [4, botToken, 4, 'O'],
    [5, adaToken, 2, 'X'],
  ]) {
    await server.request('POST', `/api/matches/${id}/moves`, { seq, cell, mark }, token);
  }
  await ada.goto('/leaderboard');
  const adaRow = ada.locator('tr', { has: ada.locator(`a[href="/player/${adaAddress}"]`) });
  await adaRow.locator('.player-label-name', { hasText: 'Ada_L' }).waitFor();
  await adaRow.locator('svg.identicon').waitFor();
  const botRow = ada.locator('tr', { has: ada.locator(`a[href="/player/${botKey.address}"]`) });
  await botRow.locator('.tag-bot').waitFor();
  await screenshot(ada, 'identity-leaderboard-1280');

  // A second player asks for a look-alike of Ada's name: refused, with what to do, inline.
  const bob = await newPage(browser, server, { viewport: PHONE, isMobile: true, hasTouch: true });
  await openLoggedIn(bob, '/wallet');
  await bob.locator('#display-name').waitFor();
  await setName(bob, 'ADA-1');
  const error = bob.locator('#display-name-error');
  await error.waitFor({ state: 'visible' });
  assert.match(await error.innerText(), /another player's name, or looks like one.*choose another/);
  assert.equal(await bob.locator('#display-name').getAttribute('aria-invalid'), 'true');
  await error.evaluate((el) => el.scrollIntoView({ block: 'center' }));
  await screenshot(bob, 'identity-wallet-refused-390');
  // A reserved one too; then a name of his own is taken, and the error goes.
  await setName(bob, 'Admin');
  await bob.locator('#display-name-error', { hasText: 'reserved' }).waitFor();
  await setName(bob, 'bob_builds');
  await bob.locator('.wallet-name .player-label-name', { hasText: 'bob_builds' }).waitFor();
  assert.equal(await bob.locator('#display-name-error').isHidden(), true);
  await bob.goto('/leaderboard');
  await bob.locator('.player-label-name', { hasText: 'Ada_L' }).waitFor();
  await screenshot(bob, 'identity-leaderboard-390');
  await bob.goto(`/match/${id}`);
  await bob.locator('.player-row .tag-bot').waitFor();
  // The name stands for the address in the words too.
  await bob.locator('.result-title', { hasText: 'Ada_L won' }).waitFor();
  await screenshot(bob, 'identity-match-390');

  // Cleared on the wallet page, the name is gone from the player's page.
  await ada.goto('/wallet');
  await ada.locator('.wallet-name').getByRole('button', { name: 'Clear' }).click();
  await ada.locator('.wallet-name .player-label-name').waitFor({ state: 'hidden' });
  assert.equal((await server.player(adaAddress)).name, null);
  await ada.goto(`/player/${adaAddress}`);
  await ada.locator('.page-title', { hasText: 'Your page' }).waitFor();

  assert.deepEqual(ada.errors, []);
  assert.deepEqual(bob.errors.filter((e) => !/status of 4\d\d/.test(e)), []);
});

test('the identicon is a mirrored 5 x 5 grid, a pure function of the address, different for different ones', () => {
  const seen = new Set();
  for (let i = 0; i < 300; i++) {
    const address = `0x${randomBytes(32).toString('hex')}`;
    const pattern = identiconPattern(address);
    assert.deepEqual(identiconPattern(address.toUpperCase().replace('0X', '0x')), pattern, 'the case of the hex does not matter');
    assert.ok(Number.isInteger(pattern.hue) && pattern.hue >= 0 && pattern.hue < 360);
    assert.equal(pattern.cells.length, 5);
    for (const row of pattern.cells) {
      assert.equal(row.length, 5);
      assert.deepEqual(row, [...row].reverse(), 'each row is mirrored');
    }
    seen.add(JSON.stringify(pattern));
  }
  // 15 free cells and a hue: two of 300 random addresses alike would be a broken drawing.
  assert.ok(seen.size >= 295, `${seen.size} different of 300`);
});
