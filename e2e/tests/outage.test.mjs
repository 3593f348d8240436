// The move clock and the server's outages. While the server is down the countdown stands
// still ("Server unreachable: the clock is paused"), not running on to 0:00 as if the time
// were lost; when the server is back it gives the outage back to every clock, and the page
// shows the deadline the server now reports: about the time left when it went down. And at
// 0:00 the player to move is told the opponent may now claim, and the opponent sees the
// button that claims.
//
// The servers run on the system clock: the outage is real time (longer than the server's
// grace period of 3 s), and so is the short move timeout of the second test.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { clickCell, launchBrowser, newPage, openLoggedIn, PHONE, screenshot, startServer } from '../lib/harness.mjs';

/** Longer than the server's grace period, so the restart is an outage it gives back. */
const OUTAGE_MS = 5_000;

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** Seconds in an `m:ss` countdown. @param {string} text */
function seconds(text) {
  const m = /(\d+):(\d\d)/.exec(text);
  assert.ok(m, `a countdown: ${text}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/**
 * Alice challenges Bob from the Online page and Bob accepts; Alice plays the centre.
 * @param {import('playwright-core').Page} alice @param {import('playwright-core').Page} bob
 */
async function startGame(alice, bob) {
  const bobAddress = await openLoggedIn(bob);
  await openLoggedIn(alice);
  await bob.goto('/online');
  await alice.goto('/online');
  await alice.locator('#challenge-opponent').fill(bobAddress);
  await alice.getByRole('button', { name: 'Send challenge' }).click();
  await bob.locator('.challenge-row').getByRole('button', { name: 'Accept' }).click();
  await alice.waitForURL(/\/match\/\d+$/);
  await bob.waitForURL(/\/match\/\d+$/);
  await alice.locator('.board.is-interactive').waitFor();
  await clickCell(alice, 4);
  await bob.locator('.status-text', { hasText: 'Your move' }).waitFor();
  return Number(new URL(bob.url()).pathname.split('/').pop());
}

test('the countdown pauses while the server is down, and the server gives the outage back', async () => {
  const server = await startServer();
  try {
    const alice = await newPage(browser, server);
    const bob = await newPage(browser, server, { viewport: PHONE, isMobile: true, hasTouch: true });
    const id = await startGame(alice, bob);
    const countdown = bob.locator('.status .countdown');
    await countdown.waitFor();
    await bob.locator('.conn-open').waitFor();

    const before = (await server.request('GET', `/api/matches/${id}`)).deadline.at_ms;

    // The server goes down. Bob's countdown stops where it was and says why.
    await server.kill();
    const paused = bob.locator('.status .clock-paused');
    await paused.waitFor({ timeout: 15_000 });
    assert.equal(await paused.innerText(), 'Server unreachable: the clock is paused');
    assert.match((await countdown.getAttribute('class')) ?? '', /\bpaused\b/);
    const left = seconds(await countdown.innerText());
    await screenshot(bob, 'outage-paused-phone');
    await bob.waitForTimeout(OUTAGE_MS);
    assert.equal(seconds(await countdown.innerText()), left, 'the countdown stood still');

    // Back: the deadline moved by the outage, and the page shows it.
    await server.spawn(`127.0.0.1:${new URL(server.url).port}`);
    await bob.locator('.conn-open').waitFor({ timeout: 15_000 });
    await paused.waitFor({ state: 'detached' });
    const view = await server.request('GET', `/api/matches/${id}`);
    assert.ok(view.deadline.at_ms - before >= OUTAGE_MS, `the server gave the outage back: the deadline moved ${view.deadline.at_ms - before} ms`);
    // (The page reconnects with a backoff, so some seconds of the server's own time may
    // have passed since it came back: the countdown shows the server's deadline.)
    const shown = seconds(await countdown.innerText());
    const serverLeft = Math.ceil((view.deadline.at_ms - Date.now()) / 1000);
    assert.ok(Math.abs(shown - serverLeft) <= 1, `shown ${shown} s, the server says ${serverLeft} s`);
    assert.doesNotMatch((await countdown.getAttribute('class')) ?? '', /\bpaused\b/);
    await screenshot(bob, 'outage-resumed-phone');
    // The game goes on: Bob moves.
    await clickCell(bob, 0);
    await alice.locator('.status-text', { hasText: 'Your move' }).waitFor();
    for (const page of [alice, bob]) {
      const unexpected = page.errors.filter((e) => !/ERR_CONNECTION_REFUSED|WebSocket connection|Failed to load resource/.test(e));
      assert.deepEqual(unexpected, []);
    }
    await Promise.all([alice, bob].map((p) => p.context().close()));
  } finally {
    await server.stop();
  }
});

test('at 0:00 the player to move is told the opponent may claim, and the opponent can', async () => {
  const server = await startServer({ args: ['--move-timeout-ms', '8000'] });
  try {
    const alice = await newPage(browser, server);
    const bob = await newPage(browser, server);
    await startGame(alice, bob);
    await alice.locator('.hint', { hasText: 'you can claim the win in' }).waitFor();
    // Bob lets his time run out.
    const told = bob.locator('.hint.urgent', { hasText: 'Your time ran out: your opponent may now claim the win.' });
    await told.waitFor({ timeout: 15_000 });
    assert.equal(await bob.locator('.status .countdown').innerText(), '0:00');
    const claim = alice.getByRole('button', { name: 'Claim the win' });
    await claim.waitFor();
    await screenshot(bob, 'outage-time-ran-out');
    // A spectator is told what 0:00 means too, and offered nothing to do.
    const watcher = await newPage(browser, server);
    await watcher.goto(bob.url());
    await watcher.locator('.hint', { hasText: /^Time is up for 0x[0-9a-f]{4}.*: the other player may now claim the win\.$/ }).waitFor();
    assert.equal(await watcher.locator('.status .countdown').innerText(), '0:00');
    assert.equal(await watcher.getByRole('button', { name: 'Claim the win' }).count(), 0);
    await screenshot(watcher, 'outage-time-ran-out-spectator');
    await claim.click();
    await alice.locator('.result-title', { hasText: 'You won on time!' }).waitFor();
    await bob.locator('.result-title', { hasText: 'You lost on time' }).waitFor();
    assert.deepEqual([...alice.errors, ...bob.errors, ...watcher.errors], []);
    await Promise.all([alice, bob, watcher].map((p) => p.context().close()));
  } finally {
    await server.stop();
  }
});
