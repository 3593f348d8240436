// A local game is kept: a reload or a visit to another page comes back to it, and a change
// of setting in the middle of a game asks before it starts a new one.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { clickCell, launchBrowser, newPage, screenshot, startServer, waitForBoard } from '../lib/harness.mjs';

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

test('a game in progress survives a reload and a visit to another page', async () => {
  const page = await newPage(browser, server);
  await page.goto('/?player=human');
  await page.locator('.board-canvas').waitFor();
  await clickCell(page, 4);
  await clickCell(page, 0);
  await waitForBoard(page, 'O---X----');
  await page.reload();
  await waitForBoard(page, 'O---X----');
  assert.match(await page.locator('.move-list').innerText(), /square 5[\s\S]*square 1/);
  // Away and back through the navigation, whose Play link names no settings.
  await page.getByRole('link', { name: 'Leaderboard' }).first().click();
  await page.locator('.page-title').waitFor();
  await page.getByRole('link', { name: 'Play' }).first().click();
  await waitForBoard(page, 'O---X----');
  assert.equal(new URL(page.url()).search, '?player=human');
  // The game goes on from where it was.
  await clickCell(page, 8);
  await waitForBoard(page, 'O---X---X');
  // An address naming other settings starts their game, and leaves this one kept.
  await page.goto('/?game=sos');
  await waitForBoard(page, '---------');
  await page.goto('/');
  await waitForBoard(page, 'O---X---X');
  assert.deepEqual(page.errors, []);
});

test('a change of setting in the middle of a game asks first', async () => {
  const page = await newPage(browser, server);
  await page.goto('/?player=human');
  await page.locator('.board-canvas').waitFor();
  await clickCell(page, 4);
  await waitForBoard(page, '----X----');
  await page.getByRole('radio', { name: 'SOS' }).click();
  const ask = page.getByRole('alertdialog', { name: 'Start a new game?' });
  await ask.waitFor();
  assert.match(await ask.innerText(), /game in progress \(1 move\) will be lost/);
  await screenshot(page, 'local-keep-ask');
  await ask.getByRole('button', { name: 'Keep playing' }).click();
  assert.ok(await ask.isHidden());
  await waitForBoard(page, '----X----');
  assert.equal(await page.getByRole('radio', { name: 'Tic-tac-toe' }).getAttribute('aria-checked'), 'true');
  // Asked again, and this time yes.
  await page.getByRole('radio', { name: 'SOS' }).click();
  await ask.getByRole('button', { name: 'New game' }).click();
  await waitForBoard(page, '---------');
  assert.equal(new URL(page.url()).searchParams.get('game'), 'sos');
  // With no game in progress, a setting changes at once.
  await page.getByRole('radio', { name: 'Tic-tac-toe' }).click();
  assert.ok(await ask.isHidden());
  assert.equal(new URL(page.url()).searchParams.get('game'), null);
  assert.deepEqual(page.errors, []);
});
