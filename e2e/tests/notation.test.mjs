// A finished match's page has a "Download" button that saves the match in Triad's notation
// (docs/notation.md): the file is the API's record, and its moves are the match's.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';

import { DESKTOP, PHONE, launchBrowser, makeKey, newPage, openLoggedIn, screenshot, startServer, waitForBoard } from '../lib/harness.mjs';

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

/** Alice challenges Bob, who accepts; Alice (X) takes the top row. Returns the match id. */
async function finishedMatch() {
  const [alice, bob] = [makeKey(), makeKey()];
  const [aliceToken, bobToken] = [await server.login(alice), await server.login(bob)];
  const issued = await server.request('POST', '/api/challenges', { opponent: bob.address, game: 'tic-tac-toe', stake: '0', first: 'challenger' }, aliceToken);
  const id = issued.match.id;
  await server.request('POST', `/api/challenges/${id}/accept`, {}, bobToken);
  const moves = [[aliceToken, 0, 'X'], [bobToken, 3, 'O'], [aliceToken, 1, 'X'], [bobToken, 4, 'O'], [aliceToken, 2, 'X']];
  for (const [i, [token, cell, mark]] of moves.entries()) {
    await server.request('POST', `/api/matches/${id}/moves`, { seq: i + 1, cell, mark }, token);
  }
  return { id, alice, bob };
}

test('a finished match downloads as notation, the same text the API serves', async () => {
  const { id, alice, bob } = await finishedMatch();
  const served = await (await fetch(`${server.url}/api/matches/${id}/notation`)).text();
  for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    const page = await newPage(browser, server, { viewport, isMobile: name === 'phone', hasTouch: name === 'phone' });
    await page.goto(`/match/${id}`);
    await waitForBoard(page, 'XXXOO----');
    const button = page.getByRole('link', { name: 'Download' });
    await button.waitFor();
    await screenshot(page, `notation-download-${name}`);
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    assert.equal(download.suggestedFilename(), `triad-tic-tac-toe-${id}.txt`);
    const text = await readFile(await download.path(), 'utf8');
    assert.equal(text, served);
    assert.match(text, /^\[Game "tic-tac-toe"\]\n/);
    assert.ok(text.includes(`[Match "${id}"]\n`), text);
    assert.ok(text.includes(`[First "${alice.address}"]\n[Second "${bob.address}"]\n`), text);
    assert.ok(text.includes('[Result "1-0"]\n[Termination "win"]\n'), text);
    assert.ok(text.endsWith('\n\n1. X1 O4 2. X2 O5 3. X3 1-0\n'), text);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test('a match in play has no download button yet', async () => {
  const [alice, bob] = [makeKey(), makeKey()];
  const [aliceToken, bobToken] = [await server.login(alice), await server.login(bob)];
  const issued = await server.request('POST', '/api/challenges', { opponent: bob.address, game: 'sos', stake: '0', first: 'challenger' }, aliceToken);
  const id = issued.match.id;
  await server.request('POST', `/api/challenges/${id}/accept`, {}, bobToken);
  await server.request('POST', `/api/matches/${id}/moves`, { seq: 1, cell: 4, mark: 'S' }, aliceToken);
  const page = await newPage(browser, server);
  await page.goto(`/match/${id}`);
  await waitForBoard(page, '----S----');
  assert.equal(await page.getByRole('link', { name: 'Download' }).count(), 0);
  await page.context().close();
});

test("a player's finished match has Download beside Rematch", async () => {
  for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    const page = await newPage(browser, server, { viewport, isMobile: name === 'phone', hasTouch: name === 'phone' });
    const address = await openLoggedIn(page);
    const { token } = JSON.parse(await page.evaluate(() => localStorage.getItem('triad.session') ?? 'null'));
    const bob = makeKey();
    const bobToken = await server.login(bob);
    // Bob challenges the page's player, who moves first, and gives up the top row.
    const issued = await server.request('POST', '/api/challenges', { opponent: address, game: 'tic-tac-toe', stake: '0', first: 'opponent' }, bobToken);
    const id = issued.match.id;
    await server.request('POST', `/api/challenges/${id}/accept`, {}, token);
    const moves = [[token, 0, 'X'], [bobToken, 3, 'O'], [token, 1, 'X'], [bobToken, 4, 'O'], [token, 2, 'X']];
    for (const [i, [t, cell, mark]] of moves.entries()) {
      await server.request('POST', `/api/matches/${id}/moves`, { seq: i + 1, cell, mark }, t);
    }
    await page.goto(`/match/${id}`);
    await page.locator('.result-title', { hasText: 'You won!' }).waitFor();
    const download = page.getByRole('link', { name: 'Download' });
    const rematch = page.getByRole('button', { name: 'Rematch' });
    await download.waitFor();
    await rematch.waitFor();
    await screenshot(page, `notation-download-player-${name}`);
    // One group of actions: the download follows the rematch, beside it on a desktop, below
    // it when a phone's row is full.
    const [d, r] = [await download.boundingBox(), await rematch.boundingBox()];
    assert.ok(d && r, 'both are shown');
    if (name === 'desktop') assert.ok(d.x > r.x && Math.round(d.y) === Math.round(r.y), `${JSON.stringify(d)} ${JSON.stringify(r)}`);
    else assert.ok(d.y >= r.y, `${JSON.stringify(d)} ${JSON.stringify(r)}`);
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});
