// The move clock's countdown changes when the time left crosses a whole second: in step
// with the deadline, not with the clock's seconds. Ticking on the clock's whole seconds
// showed each number up to a second too long, and the first after a move for up to two
// ("the countdown stands still for two seconds before it starts").
//
// Deterministic: the server runs the dev clock, moved so the move falls at .500 of a second
// (its deadline at .501, half a second from the clock's whole seconds), and the page's
// timers run on Playwright's fake clock, moved by the test.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { untilNextTick } from '../../web/js/clock.js';
import { launchBrowser, makeKey, newPage, seeded, startServer } from '../lib/harness.mjs';

let server;
let browser;
before(async () => {
  server = await startServer({ devClock: true });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** `m:ss`, as the page writes whole seconds left, rounded up. */
function shown(ms) {
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

test('the countdown changes as the time left crosses each whole second', async () => {
  const alice = makeKey();
  const bob = makeKey();
  const [ta, tb] = [await server.login(alice), await server.login(bob)];
  // The server's clock to .500 of a second.
  const { now_ms: now } = await server.advance(0);
  await server.advance((((500 - (now % 1000)) % 1000) + 1000) % 1000);
  const { match } = await server.request('POST', '/api/challenges', { opponent: bob.address, game: 'tic-tac-toe', stake: '0' }, ta);
  await server.request('POST', `/api/challenges/${match.id}/accept`, undefined, tb);
  const moved = await server.request('POST', `/api/matches/${match.id}/moves`, { seq: 1, cell: 4, mark: 'X' }, ta);
  const deadline = moved.match.deadline.at_ms;
  assert.equal(deadline % 1000, 501, 'the deadline falls half a second from the whole seconds');

  // A spectator's page, its timers on a fake clock.
  const page = await newPage(browser, server);
  await page.clock.install();
  await page.goto(`/match/${match.id}`);
  const countdown = page.locator('.status .countdown');
  await countdown.waitFor();
  // Where the page thinks the server's clock is (the server's clock stands still: the
  // page's estimate runs on from its first reading, with the page's fake clock).
  const times = () =>
    page.evaluate(async () => {
      const clock = await import('/js/clock.js');
      return { server: clock.serverNow(), page: Date.now() };
    });
  let t = await times();
  // Stop half a second before the time left next crosses a whole second.
  let left = deadline - t.server;
  const target = Math.floor((left - 600) / 1000) * 1000 + 500;
  await page.clock.pauseAt(t.page + (left - target));
  t = await times();
  left = deadline - t.server;
  assert.ok(left % 1000 > 400 && left % 1000 <= 500, `paused at ${left} ms left`);
  await page.clock.runFor(1);
  assert.equal(await countdown.innerText(), shown(left));
  // 0.6 s on, the time left crossed a whole second: the countdown shows it.
  await page.clock.runFor(600);
  const after = deadline - (await times()).server;
  assert.ok(Math.ceil(after / 1000) === Math.ceil(left / 1000) - 1, `${left} → ${after}`);
  assert.equal(await countdown.innerText(), shown(after), 'the countdown moved on with the time left');
  // And each second after it, one second less.
  for (let i = 0; i < 3; i++) {
    await page.clock.runFor(1000);
    const now = deadline - (await times()).server;
    assert.equal(await countdown.innerText(), shown(now));
  }
  assert.deepEqual(page.errors, []);
});

test('a tick falls just after the next instant in step with the anchor, either side of it', () => {
  const random = seeded(24);
  for (let i = 0; i < 10_000; i++) {
    const now = 1_700_000_000_000 + Math.floor(random() * 1e9);
    const anchor = now + Math.floor((random() - 0.5) * 2e8);
    const wait = untilNextTick(now, anchor, 1000);
    assert.ok(wait > 5 && wait <= 1005, `${wait}`);
    assert.equal((((now + wait - 5 - anchor) % 1000) + 1000) % 1000, 0);
  }
});
