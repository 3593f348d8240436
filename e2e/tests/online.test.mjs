// Two browsers, two wallets: a challenge by address (as the Sui contract does), accepted, played to a win;
// both pages see every move and the result live (WebSocket, no reload), and the players'
// stats and ratings change. Then a rematch, a third browser watching read-only, and API
// errors shown in plain words.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { TRIAD_BIN, apiPlayer, clickCell, holdAnswer, holdThenFail, launchBrowser, newPage, openLoggedIn, startServer, textsWhen, waitForBoard } from '../lib/harness.mjs';

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

/** Challenges `opponentAddress` from `page` with the form's defaults (free, challenger first). */
async function challenge(page, opponentAddress, game = 'tic-tac-toe') {
  await page.goto('/online');
  await page.locator('#challenge-opponent').fill(opponentAddress);
  if (game === 'sos') await page.locator('[data-name="challenge-game"][data-value="sos"]').click();
  await page.getByRole('button', { name: 'Send challenge' }).click();
}

test('challenge, accept, play to a win; both see it live; stats and ratings update', async () => {
  const alice = await newPage(browser, server);
  const bob = await newPage(browser, server);
  const aliceAddress = await openLoggedIn(alice);
  const bobAddress = await openLoggedIn(bob);
  assert.notEqual(aliceAddress, bobAddress, 'each browser made its own key');
  // The page computed the address itself; the server agrees (it logged the key in).
  assert.equal(await alice.locator('#wallet-address').innerText(), aliceAddress);

  await bob.goto('/online');
  await challenge(alice, bobAddress);
  // Bob sees the challenge arrive live, with its terms, and accepts.
  const row = bob.locator('.challenge-row');
  await row.waitFor();
  assert.match(await row.innerText(), /From 0x[0-9a-f]{4}…[0-9a-f]{4}/);
  assert.match(await row.innerText(), /Tic-tac-toe · free · they start/);
  await row.getByRole('button', { name: 'Accept' }).click();

  // Both are taken to the match; Alice (the challenger) is X and moves first.
  await alice.waitForURL(/\/match\/\d+$/);
  await bob.waitForURL(/\/match\/\d+$/);
  assert.equal(alice.url(), bob.url());
  const matchPath = new URL(alice.url()).pathname;
  await alice.locator('.status-text', { hasText: 'Your move' }).waitFor();
  await bob.locator('.status-text', { hasText: /Waiting for 0x/ }).waitFor();
  assert.match(await alice.locator('.status-mark').innerText(), /you are X/);
  assert.match(await bob.locator('.status-mark').innerText(), /you are O/);
  assert.match(await alice.locator('.countdown').innerText(), /^\d:\d\d$/);

  // X takes the top row: 0, (O 3), 1, (O 4), 2.
  const moves = [
    [alice, 0, 'X'],
    [bob, 3, 'O'],
    [alice, 1, 'X'],
    [bob, 4, 'O'],
    [alice, 2, 'X'],
  ];
  for (const [page, cell, mark] of moves) {
    const other = page === alice ? bob : alice;
    await page.locator('.board.is-interactive').waitFor();
    await clickCell(page, cell);
    // The other page draws the move live.
    await waitForBoard(other, (b) => b[cell] === mark);
  }
  await waitForBoard(alice, 'XXXOO----');
  await alice.locator('.result-title', { hasText: 'You won!' }).waitFor();
  await bob.locator('.result-title', { hasText: 'You lost' }).waitFor();
  for (const page of [alice, bob]) {
    assert.equal(await page.locator('.board').getAttribute('data-win'), '0,1,2');
    assert.equal(await page.locator('.board').getAttribute('data-last'), '2');
  }
  assert.match(await alice.locator('#live').innerText(), /You won!/);

  // Stats and ratings, on each player's page and from the API.
  const a = await server.player(aliceAddress);
  const b = await server.player(bobAddress);
  assert.deepEqual([a.games, a.wins, a.draws], [1, 1, 0]);
  assert.deepEqual([b.games, b.wins, b.draws], [1, 0, 0]);
  assert.ok(a.rating.rating > 1500 && b.rating.rating < 1500, `ratings ${a.rating.rating} ${b.rating.rating}`);
  // Each player sees their rating change under the result, ± in whole points.
  const [up, down] = [Math.round(a.rating.rating), Math.round(b.rating.rating)];
  assert.equal(await alice.locator('.result-rating').innerText(), `Rating 1500 → ${up} (+${up - 1500})`);
  assert.equal(await bob.locator('.result-rating').innerText(), `Rating 1500 → ${down} (−${1500 - down})`);
  // Each wallet signed its moves: the transcript carries the signatures, and triad verify
  // checks them offline (with the key it fetched once).
  const id = matchPath.split('/').pop();
  const file = await (await fetch(`${server.url}/api/matches/${id}/transcript`)).text();
  const played = JSON.parse(file).events.map((e) => JSON.parse(e).kind).filter((k) => k.type === 'moved');
  assert.equal(played.length, 5);
  assert.ok(played.every((k) => /^[0-9a-f]{64}$/.test(k.signed?.public_key ?? '')), 'every move is signed');
  const transcriptFile = path.join(server.dir, `match-${id}.json`);
  writeFileSync(transcriptFile, file);
  const out = execFileSync(TRIAD_BIN, ['verify', transcriptFile, '--server', server.url], { encoding: 'utf8' });
  assert.match(out, /5 of 5 moves signed by their players/);
  await bob.goto(`/player/${aliceAddress}`);
  const expected = [new RegExp(`^${Math.round(a.rating.rating)}\\s+Rating`), /^1\s+Games\s+100% won/, /^1\s+Won/];
  const stats = await textsWhen(bob.locator('.stat'), (texts) => expected.every((re, i) => re.test(texts[i] ?? '')));
  expected.forEach((re, i) => assert.match(stats[i] ?? '', re));
  assert.match(await bob.locator('.result-pill').first().innerText(), /won/i);
  await bob.goto('/leaderboard');
  const first = bob.locator('tbody tr').first();
  await first.waitFor();
  assert.match(await first.innerText(), /^1\s+0x[0-9a-f]{4}…/);
  assert.ok((await first.innerText()).includes(aliceAddress.slice(-4)));

  // A rematch: Bob offers, Alice sees the offer live and accepts; both go to the new match.
  await bob.goto(matchPath);
  await bob.getByRole('button', { name: 'Rematch' }).click();
  await bob.getByRole('button', { name: 'Rematch offered…' }).waitFor();
  await alice.getByRole('button', { name: 'Accept rematch' }).click();
  await alice.waitForURL((url) => url.pathname !== matchPath && /\/match\/\d+$/.test(url.pathname));
  await bob.waitForURL((url) => url.pathname !== matchPath && /\/match\/\d+$/.test(url.pathname));
  assert.equal(alice.url(), bob.url());
  await alice.locator('.chip', { hasText: 'Rematch' }).waitFor();

  // A third browser watches, read-only, and sees moves live.
  const watcher = await newPage(browser, server);
  await watcher.goto(new URL(alice.url()).pathname);
  await watcher.locator('.chip-watch').waitFor();
  const mover = (await alice.locator('.status-text').innerText()) === 'Your move' ? alice : bob;
  await mover.locator('.board.is-interactive').waitFor();
  await clickCell(mover, 4);
  await waitForBoard(watcher, (bd) => bd[4] !== '-');
  assert.equal(await watcher.locator('.board.is-interactive').count(), 0, 'the watcher cannot play');
  await watcher.keyboard.press('1');
  await watcher.waitForTimeout(300);
  assert.equal((await watcher.locator('.board').getAttribute('data-board'))[0], '-', 'keys do nothing for a watcher');

  // Resigning takes a confirmation, then ends it for both.
  await mover.getByRole('button', { name: 'Resign' }).click();
  await mover.getByRole('button', { name: 'Yes, resign' }).click();
  await mover.locator('.result-title', { hasText: 'You lost by resignation' }).waitFor();
  const other = mover === alice ? bob : alice;
  await other.locator('.result-title', { hasText: 'You won by resignation!' }).waitFor();
  await watcher.locator('.result-title', { hasText: 'won by resignation' }).waitFor();

  for (const page of [alice, bob, watcher]) assert.deepEqual(page.errors, []);
  await Promise.all([alice, bob, watcher].map((p) => p.context().close()));
});

test('a declined challenge and a withdrawn one leave both lists live', async () => {
  const alice = await newPage(browser, server);
  const bob = await newPage(browser, server);
  const aliceAddress = await openLoggedIn(alice);
  const bobAddress = await openLoggedIn(bob);
  await bob.goto('/online');
  await challenge(alice, bobAddress, 'sos');
  const sent = alice.locator('.challenge-row');
  await sent.waitFor();
  assert.match(await sent.innerText(), /^To 0x[0-9a-f]{4}…[0-9a-f]{4}\s+SOS · free · you start · expires in \d+:\d\d/);
  // Bob declines: Alice hears of it and her list empties, without a reload.
  await bob.locator('.challenge-row').getByRole('button', { name: 'Decline' }).click();
  await bob.locator('.challenge-row').waitFor({ state: 'detached' });
  await alice.locator('.toast', { hasText: 'Your challenge was declined.' }).waitFor();
  await sent.waitFor({ state: 'detached' });
  // A free challenge can be withdrawn at once; Bob's list empties live.
  await challenge(alice, bobAddress);
  await bob.locator('.challenge-row').waitFor();
  await alice.locator('.challenge-row').getByRole('button', { name: 'Withdraw' }).click();
  await bob.locator('.challenge-row').waitFor({ state: 'detached' });
  await alice.locator('.challenge-row').waitFor({ state: 'detached' });
  // Elsewhere in the app, an incoming challenge shows a toast and a badge on Online.
  await bob.goto('/leaderboard');
  await challenge(alice, bobAddress);
  await bob.locator('.toast', { hasText: /challenges you to Tic-tac-toe/ }).waitFor();
  assert.equal(await bob.locator('[data-nav="online"] .badge').innerText(), '1');
  await bob.locator('.toast').getByRole('button', { name: 'Answer' }).click();
  await bob.waitForURL(/\/online$/);
  await bob.locator('.challenge-row', { hasText: aliceAddress.slice(-4) }).waitFor();
  for (const page of [alice, bob]) assert.deepEqual(page.errors, []);
  await Promise.all([alice, bob].map((p) => p.context().close()));
});

test('a list of challenges read before a withdrawal and answered after it is not drawn', async () => {
  // The read the challenge started is answered by the server at once but held on its way
  // to the page until the read after the withdrawal has been answered: the older answer
  // must not bring the withdrawn challenge back (nothing would take it away again).
  const bob = await newPage(browser, server);
  const bobAddress = await openLoggedIn(bob);
  await bob.goto('/online');
  await bob.locator('#challenge-opponent').waitFor();
  const alice = await apiPlayer(server);
  // The first answer that has the challenge is held; answers without it pass meanwhile.
  const listed = await holdAnswer(bob, '**/api/challenges', (answer) => answer.incoming.length > 0);
  const created = await alice.call('POST', '/api/challenges', { opponent: bobAddress, game: 'tic-tac-toe', stake: '0', first: 'challenger' });
  await listed.held;
  await alice.call('POST', `/api/challenges/${created.match.id}/withdraw`);
  while (listed.freshSince() === 0) await bob.waitForTimeout(10);
  listed.release();
  await listed.delivered;
  await bob.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
  assert.equal(await bob.locator('.challenge-row').count(), 0, 'the withdrawn challenge is not drawn again');
  await bob.unrouteAll({ behavior: 'ignoreErrors' });
  assert.deepEqual(bob.errors, []);
  await bob.context().close();
});

test('a read of the challenges that fails after a newer one was drawn says nothing', async () => {
  // The page's first read of the challenges is held on its way and fails (a dropped
  // connection) only after a new challenge made the page read again and draw it: no error
  // for a read older than the list on screen.
  const bob = await newPage(browser, server);
  const first = await holdThenFail(bob, (url) => url.pathname === '/api/challenges');
  const bobAddress = await openLoggedIn(bob, '/online');
  await first.held;
  const alice = await apiPlayer(server);
  await alice.call('POST', '/api/challenges', { opponent: bobAddress, game: 'tic-tac-toe', stake: '0', first: 'challenger' });
  await bob.locator('.challenge-row').waitFor();
  first.release();
  await first.failed;
  await bob.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
  assert.deepEqual(await bob.locator('.toast-error .toast-text').allInnerTexts(), [], 'no error for a read older than the list drawn');
  assert.equal(await bob.locator('.challenge-row').count(), 1);
  await bob.unrouteAll({ behavior: 'ignoreErrors' });
  assert.deepEqual(bob.errors.filter((e) => !/ERR_CONNECTION_RESET|Failed to load resource/.test(e)), []);
  await bob.context().close();
});

/**
 * Alice, in the browser, accepts a game of tic-tac-toe from Bob, an API player who plays X
 * and moves first; returns both and the match's id, with Alice on the match's page.
 */
async function aliceAcceptsFromBob() {
  const alice = await newPage(browser, server);
  const aliceAddress = await openLoggedIn(alice);
  const bob = await apiPlayer(server);
  const created = await bob.call('POST', '/api/challenges', { opponent: aliceAddress, game: 'tic-tac-toe', stake: '0', first: 'challenger' });
  const id = created.match.id;
  await alice.goto('/online');
  await alice.locator('.challenge-row').getByRole('button', { name: 'Accept' }).click();
  await alice.waitForURL(new RegExp(`/match/${id}$`));
  return { alice, bob, id };
}

test('a read of the match answered after my move does not bring back my turn', async () => {
  // The opponent's move makes the page read the match again; that read is answered by the
  // server at once but held on its way to the page until after my own move has been
  // answered, so the page gets an answer older than what it shows (a race a loaded
  // machine makes: the page then offered the turn again, and the next click was refused).
  const { alice, bob, id } = await aliceAcceptsFromBob();
  await alice.locator('.status-text', { hasText: /Waiting for 0x/ }).waitFor();

  // Every read of the match from now on: the first is answered (as of then) and held
  // until `releaseStale`, the later ones until `releaseRest`.
  let releaseStale;
  let releaseRest;
  const stale = new Promise((resolve) => (releaseStale = resolve));
  const rest = new Promise((resolve) => (releaseRest = resolve));
  let reads = 0;
  let staleDelivered;
  const delivered = new Promise((resolve) => (staleDelivered = resolve));
  await alice.route(`**/api/matches/${id}`, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    if (++reads === 1) {
      const response = await route.fetch();
      await stale;
      await route.fulfill({ response });
      staleDelivered();
    } else {
      await rest;
      await route.continue().catch(() => {});
    }
  });
  await bob.call('POST', `/api/matches/${id}/moves`, { seq: 1, cell: 0, mark: 'X' });
  // The move is drawn from its live event; the read it started is held.
  await alice.locator('.status-text', { hasText: 'Your move' }).waitFor();
  await waitForBoard(alice, 'X--------');
  while (reads === 0) await alice.waitForTimeout(10);
  await clickCell(alice, 4);
  await waitForBoard(alice, 'X---O----');
  await alice.locator('.status-text', { hasText: /Waiting for 0x/ }).waitFor();

  // The old answer arrives (the board as it was before my move, my turn): the page keeps
  // what it shows.
  releaseStale();
  await delivered;
  await alice.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
  assert.equal(await alice.locator('.board').getAttribute('data-board'), 'X---O----');
  assert.match(await alice.locator('.status-text').innerText(), /^Waiting for 0x/);
  assert.equal(await alice.locator('.board.is-interactive').count(), 0);
  releaseRest();
  await bob.call('POST', `/api/matches/${id}/moves`, { seq: 3, cell: 8, mark: 'X' });
  await waitForBoard(alice, 'X---O---X');
  await alice.locator('.status-text', { hasText: 'Your move' }).waitFor();
  await alice.unrouteAll({ behavior: 'ignoreErrors' });
  assert.deepEqual(alice.errors, []);
  await alice.context().close();
});

test("the opponent's winning move, drawn live, offers no turn before the match is read", async () => {
  // A live move is drawn at once and the match read after it. When that move ends the game,
  // the read that says so is held: meanwhile the page must not offer a turn in a game that
  // is over (the click would be refused: the game has ended).
  const { alice, bob, id } = await aliceAcceptsFromBob();
  for (const [seq, cell] of [[1, 0], [3, 1]]) {
    await bob.call('POST', `/api/matches/${id}/moves`, { seq, cell, mark: 'X' });
    await alice.locator('.status-text', { hasText: 'Your move' }).waitFor();
    await alice.locator('.board.is-interactive').waitFor();
    await clickCell(alice, cell + 3);
    await alice.locator('.status-text', { hasText: /Waiting for 0x/ }).waitFor();
  }
  const over = await holdAnswer(alice, `**/api/matches/${id}`, (m) => m.phase === 'finished');
  await bob.call('POST', `/api/matches/${id}/moves`, { seq: 5, cell: 2, mark: 'X' });
  await waitForBoard(alice, 'XXXOO----');
  await over.held;
  await alice.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
  assert.equal(await alice.locator('.board.is-interactive').count(), 0, 'no turn in a game that is over');
  assert.ok(!(await alice.locator('.status-text').allInnerTexts()).includes('Your move'));
  over.release();
  await alice.locator('.result-title', { hasText: /lost/i }).waitFor();
  await alice.unrouteAll({ behavior: 'ignoreErrors' });
  assert.deepEqual(alice.errors, []);
  await alice.context().close();
});

test('API errors are shown in plain words, never as JSON', async () => {
  const page = await newPage(browser, server);
  const address = await openLoggedIn(page);
  await page.goto('/online');
  // Challenging yourself: the engine's message.
  await page.locator('#challenge-opponent').fill(address);
  await page.getByRole('button', { name: 'Send challenge' }).click();
  const error = page.locator('form[aria-labelledby="challenge-title"] .inline-error');
  await error.waitFor();
  const text = await error.innerText();
  assert.ok(!/[{}"]/.test(text), `plain words: ${text}`);
  assert.match(text, /^[A-Z].*\.$/);
  // A stake beyond the balance: said before anything is sent, in coins, and the button
  // waits (details.test.mjs has the server's refusal).
  await page.locator('#challenge-opponent').fill(`0x${'ab'.repeat(32)}`);
  await page.locator('#challenge-stake').fill('5');
  const summary = page.locator('form[aria-labelledby="challenge-title"] .stake-summary');
  await summary.filter({ hasText: 'Not enough' }).waitFor();
  assert.match(await summary.innerText(), /^Not enough: this needs 5\.00 and your balance is 0\.00\. /);
  assert.ok(await page.getByRole('button', { name: 'Send challenge' }).isDisabled());
  await page.locator('#challenge-stake').fill('0');
  // Not an address at all: said before anything is sent.
  await page.locator('#challenge-opponent').fill('bob');
  await page.getByRole('button', { name: 'Send challenge' }).click();
  await page.waitForFunction(() => /0x followed by 64/.test(document.querySelector('form[aria-labelledby="challenge-title"] .inline-error')?.textContent ?? ''));
  // A missing match: the page says so in words.
  await page.goto('/match/999');
  await page.locator('.inline-error').waitFor();
  assert.match(await page.locator('.inline-error').innerText(), /^[A-Z][^{}]*$/);
  await page.context().close();
});
