// The SOS contract's staked queue in two browsers: both balances change exactly as its rules
// say (the winner of a pot of 2E gets 1.8E, so +0.8E net; the loser −E), on the page and
// in the ledger; a draw refunds 0.9E each. Then the timing rules with short limits: the
// waiting player may cancel only once the wait allows it (a countdown, then the button),
// and the last mover may claim the win only once the opponent's time is up. And with the
// dev clock, that deadlines are shown by the server's clock (the WebSocket's `now_ms`).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { COIN, clickCell, launchBrowser, newPage, openLoggedIn, startServer, textsWhen, waitForBoard } from '../lib/harness.mjs';

const STAKE = 1n * COIN;
const DEPOSIT = 5n * COIN;

let server;
let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** The balance shown in the header, in minor units. */
async function shownBalance(page) {
  return BigInt(await page.locator('.balance-chip').getAttribute('data-balance'));
}

async function waitForBalance(page, expected) {
  await page.waitForFunction((want) => document.querySelector('.balance-chip')?.getAttribute('data-balance') === want, String(expected), { timeout: 10_000 });
}

/** Joins the SOS queue with a stake of 1 from the Online page. */
async function joinSosQueue(page) {
  await page.goto('/online');
  await page.locator('[data-name="queue-game"][data-value="sos"]').click();
  await page.locator('#queue-stake').fill('1');
  // The balance joins the summary once the login has read it: wait for it, do not race it.
  await page.locator('.stake-summary').first().filter({ hasText: /Stake 1\.00 each · pot 2\.00 · your balance/ }).waitFor({ timeout: 10_000 });
  await page.getByRole('button', { name: 'Find an opponent' }).click();
}

/** Plays `moves` ([page, cell, letter]) in a match both pages show. */
async function playMoves(moves, pages) {
  for (const [page, cell, letter] of moves) {
    await page.locator('.board.is-interactive').waitFor();
    await page.keyboard.press(letter.toLowerCase());
    await clickCell(page, cell);
    for (const p of pages) await waitForBoard(p, (b) => b[cell] === letter);
  }
}

test('the SOS queue with stakes: a win pays 1.8E of the 2E pot, a draw refunds 0.9E each', async () => {
  server = await startServer();
  try {
    const alice = await newPage(browser, server);
    const bob = await newPage(browser, server);
    const aliceAddress = await openLoggedIn(alice);
    const bobAddress = await openLoggedIn(bob);
    await server.deposit(aliceAddress, DEPOSIT);
    await server.deposit(bobAddress, DEPOSIT);
    // The deposits arrive live (the inbox), no reload.
    await waitForBalance(alice, DEPOSIT);
    await waitForBalance(bob, DEPOSIT);

    // Alice waits; her stake is in escrow at once.
    await joinSosQueue(alice);
    await alice.locator('.active-card.waiting').waitFor();
    assert.match(await alice.locator('.active-card').innerText(), /Waiting for an opponent\s+SOS · stake 1\.00/);
    assert.match(await alice.locator('.cancel-hint').innerText(), /You can cancel in [12]:\d\d/);
    await waitForBalance(alice, DEPOSIT - STAKE);
    // Bob sees her in the lobby and joins the same queue: the match starts for both.
    await bob.goto('/online');
    await bob.locator('#live-title').waitFor();
    await bob.locator('.list-row', { hasText: 'is waiting' }).waitFor();
    await joinSosQueue(bob);
    await alice.waitForURL(/\/match\/\d+$/);
    await bob.waitForURL(/\/match\/\d+$/);
    await waitForBalance(bob, DEPOSIT - STAKE);
    assert.match(await alice.locator('.chips').innerText(), /SOS\s+Stake 1\.00/);

    // The waiting player moves first. S in 1, S in 9, then O in the centre spells S-O-S.
    await playMoves([[alice, 0, 'S'], [bob, 8, 'S'], [alice, 4, 'O']], [alice, bob]);
    await alice.locator('.result-title', { hasText: 'You won!' }).waitFor();
    await bob.locator('.result-title', { hasText: 'You lost' }).waitFor();
    assert.equal(await alice.locator('.board').getAttribute('data-win'), '0,4,8');

    // Exactly the SOS contract's payout: the winner gets 1.8E of the 2E pot; the loser loses E.
    const aliceAfter = DEPOSIT - STAKE + (18n * STAKE) / 10n;
    const bobAfter = DEPOSIT - STAKE;
    await waitForBalance(alice, aliceAfter);
    await waitForBalance(bob, bobAfter);
    assert.equal(await alice.locator('.result-money').innerText(), '+0.80 for you');
    assert.equal(await bob.locator('.result-money').innerText(), '\u22121.00 for you');
    assert.equal(await shownBalance(alice), 5_800_000n);
    assert.equal(await shownBalance(bob), 4_000_000n);

    // The ledger page lists the stake and the payout.
    await alice.goto('/wallet');
    await alice.locator('.ledger-table').waitFor();
    const expected = [/^\S[\s\S]*\s+Payout\s+#\d+\s+\+1\.80$/, /^\S[\s\S]*\s+Stake\s+#\d+\s+\u22121\.00$/, /^\S[\s\S]*\s+Deposit\s+—\s+\+5\.00$/];
    const rows = await textsWhen(alice.locator('.ledger-table tbody tr'), (texts) => expected.every((re, i) => re.test(texts[i] ?? '')));
    expected.forEach((re, i) => assert.match(rows[i] ?? '', re));
    // Each row says when, as a machine-readable <time> too: within this test's run.
    const times = await alice.locator('.ledger-table tbody time').evaluateAll((ts) => ts.map((t) => Date.parse(t.getAttribute('datetime') ?? '')));
    assert.equal(times.length, rows.length);
    for (const t of times) assert.ok(Math.abs(Date.now() - t) < 15 * 60_000, `ledger time ${t}`);
    assert.equal(await alice.locator('#wallet-balance').innerText(), '5.80');

    // A draw refunds 0.9E each: a full SOS board with no S-O-S.
    await joinSosQueue(bob);
    await bob.locator('.active-card.waiting').waitFor();
    await joinSosQueue(alice);
    await alice.waitForURL(/\/match\/\d+$/);
    await bob.waitForURL(/\/match\/\d+$/);
    const drawn = [[bob, 0, 'O'], [alice, 1, 'O'], [bob, 2, 'O'], [alice, 3, 'O'], [bob, 4, 'O'], [alice, 5, 'O'], [bob, 6, 'O'], [alice, 7, 'O'], [bob, 8, 'O']];
    await playMoves(drawn, [alice, bob]);
    await alice.locator('.result-title', { hasText: 'Draw' }).waitFor();
    await waitForBalance(alice, aliceAfter - STAKE + (9n * STAKE) / 10n);
    await waitForBalance(bob, bobAfter - STAKE + (9n * STAKE) / 10n);
    assert.equal(await bob.locator('.result-money').innerText(), '\u22120.10 for you');
    for (const page of [alice, bob]) assert.deepEqual(page.errors, []);
    await Promise.all([alice, bob].map((p) => p.context().close()));
  } finally {
    await server.stop();
  }
});

test('cancel once the wait allows it; claim the win once the opponent is too slow', async () => {
  // Short limits, so the countdowns run out in seconds of real time.
  server = await startServer({ args: ['--wait-cancel-ms', '3000', '--move-timeout-ms', '6000'] });
  try {
    const alice = await newPage(browser, server);
    const bob = await newPage(browser, server);
    const aliceAddress = await openLoggedIn(alice);
    const bobAddress = await openLoggedIn(bob);
    await server.deposit(aliceAddress, DEPOSIT);
    await server.deposit(bobAddress, DEPOSIT);
    await waitForBalance(alice, DEPOSIT);

    // A staked wait cannot be cancelled at once: a countdown, then the button.
    await joinSosQueue(alice);
    await alice.locator('.cancel-hint').waitFor();
    assert.equal(await alice.getByRole('button', { name: 'Cancel', exact: true }).count(), 0);
    await alice.getByRole('button', { name: 'Cancel', exact: true }).waitFor({ timeout: 8000 });
    await alice.getByRole('button', { name: 'Cancel', exact: true }).click();
    await alice.locator('.active-card').waitFor({ state: 'detached' });
    await waitForBalance(alice, DEPOSIT);

    // A slow opponent: after Alice's move, Bob has 6 s. Alice sees a countdown, then the
    // button; the claim pays her 1.9E of the pot.
    await joinSosQueue(alice);
    await alice.locator('.active-card.waiting').waitFor();
    await joinSosQueue(bob);
    await alice.waitForURL(/\/match\/\d+$/);
    await bob.waitForURL(/\/match\/\d+$/);
    await playMoves([[alice, 0, 'S']], [alice, bob]);
    const hint = alice.locator('.match-actions .hint');
    await hint.waitFor();
    assert.match(await hint.innerText(), /you can claim the win in 0:0[1-6]/);
    assert.equal(await alice.getByRole('button', { name: 'Claim the win' }).count(), 0);
    assert.equal(await bob.getByRole('button', { name: 'Claim the win' }).count(), 0, 'only the last mover may claim');
    await alice.getByRole('button', { name: 'Claim the win' }).waitFor({ timeout: 10_000 });
    assert.equal(await bob.getByRole('button', { name: 'Claim the win' }).count(), 0);
    // At 0:00 Bob is told his time ran out and what may happen now.
    await bob.locator('.match-actions .hint.urgent', { hasText: 'Your time ran out: your opponent may now claim the win.' }).waitFor();
    await alice.getByRole('button', { name: 'Claim the win' }).click();
    await alice.locator('.result-title', { hasText: 'You won on time!' }).waitFor();
    await bob.locator('.result-title', { hasText: 'You lost on time' }).waitFor();
    await waitForBalance(alice, DEPOSIT - STAKE + (19n * STAKE) / 10n);
    await waitForBalance(bob, DEPOSIT - STAKE);
    for (const page of [alice, bob]) assert.deepEqual(page.errors, []);
    await Promise.all([alice, bob].map((p) => p.context().close()));
  } finally {
    await server.stop();
  }
});

test('deadlines follow the server’s clock, not the device’s (the dev clock jumps a minute)', async () => {
  server = await startServer({ devClock: true });
  try {
    const alice = await newPage(browser, server);
    const bob = await newPage(browser, server);
    await openLoggedIn(alice);
    const bobAddress = await openLoggedIn(bob);
    await bob.goto('/online');
    await alice.goto('/online');
    await alice.locator('#challenge-opponent').fill(bobAddress);
    await alice.getByRole('button', { name: 'Send challenge' }).click();
    await bob.locator('.challenge-row').getByRole('button', { name: 'Accept' }).click();
    await alice.waitForURL(/\/match\/\d+$/);
    await playMoves([[alice, 4, 'X']], [alice, bob]);
    await alice.locator('.match-actions .hint').waitFor();

    // The server's clock moves 61 s ahead of every device's.
    const { now_ms: serverNow } = await server.advance(61_000);
    // The WebSocket's `subscribed` names the server's time.
    const subscribed = await alice.evaluate(
      (path) =>
        new Promise((resolve, reject) => {
          const ws = new WebSocket(`ws://${location.host}/api/ws`);
          ws.onopen = () => ws.send(JSON.stringify({ type: 'subscribe', topic: `match:${path.split('/').pop()}`, since: 0 }));
          ws.onmessage = (m) => {
            const data = JSON.parse(m.data);
            if (data.type === 'subscribed') {
              ws.close();
              resolve(data);
            }
          };
          ws.onerror = () => reject(new Error('the socket failed'));
        }),
      new URL(alice.url()).pathname,
    );
    assert.ok(subscribed.now_ms >= serverNow && subscribed.now_ms < serverNow + 10_000, `now_ms ${subscribed.now_ms} vs ${serverNow}`);
    // A page that (re)connects learns it, and the claim is offered at once.
    await alice.reload();
    await alice.getByRole('button', { name: 'Claim the win' }).waitFor({ timeout: 5000 });
    await alice.getByRole('button', { name: 'Claim the win' }).click();
    await alice.locator('.result-title', { hasText: 'You won on time!' }).waitFor();
    await bob.locator('.result-title', { hasText: 'You lost on time' }).waitFor();
    for (const page of [alice, bob]) assert.deepEqual(page.errors, []);
    await Promise.all([alice, bob].map((p) => p.context().close()));
  } finally {
    await server.stop();
  }
});
