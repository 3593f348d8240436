// A dropped connection in the middle of a game. Twice: the browser goes offline (and the
// other player moves meanwhile), then the server itself restarts (and the other player
// moves after it). Each time the page reconnects by itself, resubscribes from the last
// event it saw, and shows the missed move, with no reload.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { clickCell, launchBrowser, newPage, openLoggedIn, startServer, waitForBoard } from '../lib/harness.mjs';

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

/** @param {import('playwright-core').Page} page @param {number} cell @param {string} mark */
async function move(page, cell, mark, watchers) {
  await page.locator('.board.is-interactive').waitFor();
  await clickCell(page, cell);
  for (const p of watchers) await waitForBoard(p, (b) => b[cell] === mark);
}

test('the page reconnects by itself and catches up: offline, then a server restart', async () => {
  const alice = await newPage(browser, server);
  const bob = await newPage(browser, server);
  const bobAddress = await openLoggedIn(bob);
  await openLoggedIn(alice);
  await bob.goto('/online');
  await alice.goto('/online');
  await alice.locator('#challenge-opponent').fill(bobAddress);
  await alice.getByRole('button', { name: 'Send challenge' }).click();
  await bob.locator('.challenge-row').getByRole('button', { name: 'Accept' }).click();
  await alice.waitForURL(/\/match\/\d+$/);
  await bob.waitForURL(/\/match\/\d+$/);
  await move(alice, 4, 'X', [alice, bob]);
  await move(bob, 0, 'O', [alice, bob]);
  await bob.locator('.conn-open').waitFor();
  // A marker that a reload would lose.
  await bob.evaluate(() => {
    /** @type {any} */ (window).notReloaded = true;
  });

  // 1. Bob's browser goes offline; Alice moves meanwhile.
  await bob.context().setOffline(true);
  await bob.locator('#offline').waitFor({ state: 'visible' });
  assert.match(await bob.locator('#offline').innerText(), /offline/i);
  await bob.locator('.conn-offline').waitFor();
  await move(alice, 6, 'X', [alice]);
  await bob.waitForTimeout(300);
  assert.equal((await bob.locator('.board').getAttribute('data-board'))[6], '-', 'offline, Bob has not seen it yet');
  await bob.context().setOffline(false);
  await waitForBoard(bob, (b) => b[6] === 'X');
  await bob.locator('.status-text', { hasText: 'Your move' }).waitFor();
  await bob.locator('#offline').waitFor({ state: 'hidden' });

  // 2. The server restarts (a graceful shutdown closes every socket); Bob moves after it
  // is back, and Alice's page, which reconnected by itself, shows the move.
  await server.restart();
  await alice.locator('.conn-open').waitFor({ timeout: 15_000 });
  await bob.locator('.conn-open').waitFor({ timeout: 15_000 });
  await move(bob, 1, 'O', [bob]);
  await waitForBoard(alice, (b) => b[1] === 'O');
  await alice.locator('.status-text', { hasText: 'Your move' }).waitFor();
  // And the game goes on to the end, seen live on both sides.
  await move(alice, 2, 'X', [alice, bob]);
  await alice.locator('.result-title', { hasText: 'You won!' }).waitFor();
  await bob.locator('.result-title', { hasText: 'You lost' }).waitFor();

  assert.equal(await bob.evaluate(() => /** @type {any} */ (window).notReloaded), true, 'no reload');
  for (const page of [alice, bob]) {
    // The only console errors allowed are the browser's own reports of refused
    // connections while the server was down or the network was off.
    const unexpected = page.errors.filter((e) => !/ERR_INTERNET_DISCONNECTED|ERR_CONNECTION_REFUSED|WebSocket connection|Failed to load resource/.test(e));
    assert.deepEqual(unexpected, []);
  }
  await Promise.all([alice, bob].map((p) => p.context().close()));
});
