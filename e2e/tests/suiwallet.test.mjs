// A real Sui wallet through the Wallet Standard: a test wallet (e2e/lib/testwallet.mjs),
// injected as an extension's content script is, registers through the standard's window
// events (before the app announces itself, and after), signs in the page with a real
// Ed25519 key in Sui's personal-message format, and logs in: the page then plays as the
// wallet's address. A wallet whose user says no changes nothing; one that signs with the
// wrong key is refused by the server, its code shown; a disconnect from either side returns
// to the browser's own key; a reload finds the wallet again and asks it nothing it must
// show its user, and a wallet gone or a login ended since falls back to the browser's own
// key, saying so; no wallet at all is said plainly.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { DESKTOP, PHONE, ROOT, clickCell, collectErrors, launchBrowser, makeKey, newPage, openLoggedIn, screenshot, startServer, waitForBoard } from '../lib/harness.mjs';
import { installTestWallet } from '../lib/testwallet.mjs';

const NARROW = { width: 320, height: 700 };
const VECTORS = JSON.parse(readFileSync(path.join(ROOT, 'crates/triad-identity/tests/sui_vectors.json'), 'utf8'));

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

/** A page with the test wallet, logged in with its own key first; returns both addresses. */
async function walletPage(options = {}, viewport = DESKTOP) {
  const page = await newPage(browser, server, { viewport });
  await installTestWallet(page, options);
  const own = await openLoggedIn(page, '/wallet');
  const wallet = await page.evaluate(() => window.__testWallet.ready());
  return { page, own, wallet };
}

/** Clicks "Connect" beside the test wallet. */
async function connect(page, name = 'Test Wallet') {
  await page.getByRole('button', { name: `Connect ${name}` }).click();
}

/** Navigates inside the app, as a player does. */
async function go(page, href) {
  await page.locator(`a[href="${href}"]:visible`).first().click();
  await page.waitForURL((url) => url.pathname === href);
}

test('the test wallet signs as the Sui SDK does (its vectors)', async () => {
  let checked = 0;
  for (const key of VECTORS.keys.slice(0, 2)) {
    const page = await newPage(browser, server);
    await installTestWallet(page, { seedHex: key.secret_key });
    await page.goto('/wallet');
    const { address, publicKeyHex } = await page.evaluate(() => window.__testWallet.ready());
    assert.equal(publicKeyHex, key.public_key, key.name);
    assert.equal(address, key.sui_address, key.name);
    for (const v of key.signatures) {
      const signature = await page.evaluate((hex) => window.__testWallet.sign(hex), v.message_hex);
      assert.equal(signature, v.sui_personal_message_signature, `${key.name}: ${v.name}`);
      checked++;
    }
    await page.context().close();
  }
  assert.ok(checked >= 9, `${checked} vectors`);
});

test('log in with a wallet that loaded before the app, play as its address, disconnect', async () => {
  const { page, own, wallet } = await walletPage({ order: 'before' });
  assert.notEqual(own, wallet.address);
  assert.deepEqual((await page.evaluate(() => window.__testWallet.log)).filter((l) => l.startsWith('registered')), ['registered:app-ready']);
  const row = page.locator('.sui-wallet-row', { hasText: 'Test Wallet' });
  await row.waitFor();
  assert.equal(await row.locator('img.sui-wallet-icon').count(), 1);
  await screenshot(page, 'suiwallet-1280-list');

  await connect(page);
  // The header and the wallet page now show the wallet's address; the server agrees.
  await page.locator(`#header-address[data-address="${wallet.address}"]`).waitFor();
  await page.locator('#wallet-address', { hasText: wallet.address }).waitFor();
  await page.locator('.sui-wallet-row.is-connected', { hasText: 'Test Wallet' }).waitFor();
  const me = await page.evaluate(async () => (await import('/js/api.js')).api('GET', '/api/me'));
  assert.equal(me.address, wallet.address);
  const log = await page.evaluate(() => window.__testWallet.log);
  assert.ok(log.includes('connect'), log.join(', '));
  assert.ok(log.some((l) => l.startsWith('sign:')), log.join(', '));
  assert.match(await page.locator('#sui-wallet-note').innerText(), /Moves are not signed by the wallet/);
  for (const [name, viewport] of [['1280', DESKTOP], ['390', PHONE], ['320', NARROW]]) {
    await page.setViewportSize(viewport);
    await page.locator('.sui-wallet').evaluate((e) => e.scrollIntoView({ block: 'center' }));
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= viewport.width, `at ${name} px the page is ${width} px wide`);
    await screenshot(page, `suiwallet-${name}-connected`);
  }
  await page.setViewportSize(DESKTOP);

  // The player's page is the wallet's address.
  await page.getByRole('link', { name: 'My page →' }).click();
  await page.waitForURL(new RegExp(`/player/${wallet.address}$`));

  // Play: Bob challenges the wallet's address; the page accepts and moves (unsigned).
  const bob = makeKey();
  const bobToken = await server.login(bob);
  await go(page, '/online');
  await server.request('POST', '/api/challenges', { opponent: wallet.address, game: 'tic-tac-toe', stake: '0', first: 'opponent' }, bobToken);
  const challenge = page.locator('.challenge-row');
  await challenge.waitFor();
  await challenge.getByRole('button', { name: 'Accept' }).click();
  await page.waitForURL(/\/match\/\d+$/);
  await page.locator('.board.is-interactive').waitFor();
  await clickCell(page, 4);
  await waitForBoard(page, '----X----');
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  const match = await server.request('GET', `/api/matches/${id}`);
  assert.equal(match.players[0].address, wallet.address, 'the wallet account is X');
  assert.equal(match.board, '----X----');

  // Disconnect from the page: back to the browser's own key, logged in.
  await go(page, '/wallet');
  await page.getByRole('button', { name: 'Disconnect' }).click();
  await page.locator(`#header-address[data-address="${own}"]`).waitFor();
  await page.locator('.sui-wallet-row', { hasText: 'Test Wallet' }).getByRole('button', { name: 'Connect Test Wallet' }).waitFor();
  assert.ok((await page.evaluate(() => window.__testWallet.log)).includes('disconnect'));
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a wallet that registers after the app is found; disconnecting in the wallet logs it out', async () => {
  const { page, own, wallet } = await walletPage({ order: 'after', name: 'Late Wallet' }, PHONE);
  await page.locator('.sui-wallet-row', { hasText: 'Late Wallet' }).waitFor();
  assert.deepEqual((await page.evaluate(() => window.__testWallet.log)).filter((l) => l.startsWith('registered')), ['registered:register-wallet']);
  await connect(page, 'Late Wallet');
  await page.locator(`#header-address[data-address="${wallet.address}"]`).waitFor();
  // The user disconnects in the wallet (its `change` event): the page notices.
  await page.evaluate(() => window.__testWallet.disconnect());
  await page.locator(`#header-address[data-address="${own}"]`).waitFor();
  await page.locator('#sui-wallet-notice', { hasText: "Late Wallet disconnected, or switched to another account: you play with this browser's key again." }).waitFor();
  await screenshot(page, 'suiwallet-390-disconnected');

  // Connected again, "Log out" logs out, wallet and all: not back in with the own key.
  await connect(page, 'Late Wallet');
  await page.locator(`#header-address[data-address="${wallet.address}"]`).waitFor();
  await page.locator('.wallet-identity').getByRole('button', { name: 'Log out' }).click();
  await page.locator('.wallet-identity').getByRole('button', { name: 'Log in' }).waitFor();
  assert.equal(await page.locator('.balance-chip').count(), 0);
  assert.equal(await page.locator('#sui-wallet-notice').count(), 0, 'a chosen log out needs no notice');
  assert.equal((await page.evaluate(() => window.__testWallet.log)).filter((l) => l === 'disconnect').length, 2);
  // And out it stays after a reload: neither the wallet nor the browser's key logs in.
  await page.reload();
  await page.locator('.wallet-identity').getByRole('button', { name: 'Log in' }).waitFor();
  assert.equal(await page.locator('.balance-chip').count(), 0);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a reload plays as the wallet again, asking it silently; after a disconnect, as the own key', async () => {
  // The wallet registers after the page has loaded, as a slow extension does: the reload
  // waits for it.
  // Its key outlives the page, as a wallet's does.
  const seedHex = randomBytes(32).toString('hex');
  const { page, own, wallet } = await walletPage({ order: 'after', name: 'Kept Wallet', seedHex });
  await connect(page, 'Kept Wallet');
  await page.locator(`#header-address[data-address="${wallet.address}"]`).waitFor();

  await page.reload();
  await page.locator(`#header-address[data-address="${wallet.address}"]`).waitFor();
  await page.locator('.sui-wallet-row.is-connected', { hasText: 'Kept Wallet' }).waitFor();
  // The wallet was asked only silently: no prompt to connect, nothing to sign.
  const asked = (log) => log.filter((l) => l.startsWith('connect') || l.startsWith('sign'));
  assert.deepEqual(asked(await page.evaluate(() => window.__testWallet.log)), ['connect:silent:1']);
  const me = await page.evaluate(async () => (await import('/js/api.js')).api('GET', '/api/me'));
  assert.equal(me.address, wallet.address);
  assert.equal(await page.locator('#sui-wallet-notice').count(), 0);

  // Disconnected by the player, the wallet is not asked again on the next load.
  await page.getByRole('button', { name: 'Disconnect' }).click();
  await page.locator(`#header-address[data-address="${own}"]`).waitFor();
  await page.reload();
  await page.locator(`#header-address[data-address="${own}"]`).waitFor();
  await page.locator('.sui-wallet-row', { hasText: 'Kept Wallet' }).getByRole('button', { name: 'Connect Kept Wallet' }).waitFor();
  assert.deepEqual(asked(await page.evaluate(() => window.__testWallet.log)), []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a saved wallet login whose token ended, or whose wallet is gone, falls back to the own key and says so', async () => {
  const options = { name: 'Kept Wallet', seedHex: randomBytes(32).toString('hex') };
  const { page, own, wallet } = await walletPage(options);
  await connect(page, 'Kept Wallet');
  await page.locator(`#header-address[data-address="${wallet.address}"]`).waitFor();
  const context = page.context();
  /** Opens the wallet page again in the same browser profile, with the wallet's extension or without. */
  async function reopen(withWallet) {
    const next = await context.newPage();
    collectErrors(next);
    if (withWallet) await installTestWallet(next, options);
    await next.goto('/wallet');
    return next;
  }

  // The session ends while no page is open (here: revoked with the token the page saved).
  const token = await page.evaluate(() => JSON.parse(localStorage.getItem('triad.walletLogin')).token);
  await page.close();
  await server.request('POST', '/api/auth/logout', undefined, token);
  const again = await reopen(true);
  await again.locator(`#header-address[data-address="${own}"]`).waitFor({ state: 'attached' });
  await again.locator('#sui-wallet-notice', { hasText: "Kept Wallet's login has ended: you play with this browser's key." }).waitFor();
  // Nothing was signed to get it back: the player chooses when to connect again.
  assert.ok(!(await again.evaluate(() => window.__testWallet.log)).some((l) => l.startsWith('sign')));
  // The one console line is the refused check of the ended token.
  assert.deepEqual(again.errors.filter((e) => !/status of 401\b.*\/api\/me\b/.test(e)), []);

  // Connected again, then opened where the wallet is not installed (the same browser
  // profile, without the extension's script).
  await connect(again, 'Kept Wallet');
  await again.locator(`#header-address[data-address="${wallet.address}"]`).waitFor();
  await again.close();
  const bare = await reopen(false);
  await bare.locator(`#header-address[data-address="${own}"]`).waitFor({ state: 'attached' });
  await bare.locator('#sui-wallet-notice', { hasText: "Kept Wallet was not found in this browser: you play with this browser's key." }).waitFor();
  assert.deepEqual(bare.errors, []);
  await context.close();
});

test('a wallet dropped while its login is still loading asks nothing without a login', async () => {
  // The login's first read (the log's head, before `me`) is held until the wallet has been
  // let go: the page must not then ask for `me` with no token (a 401), nor bring the
  // dropped account back. The read is answered while the dropped wallet's token is being
  // revoked (the page has no token then).
  const { page, own, wallet } = await walletPage({ name: 'Slow Wallet' });
  /** Holds the next read of the log's head until the returned function is called. */
  async function holdHead() {
    let release;
    const held = new Promise((resolve) => (release = resolve));
    let reads = 0;
    await page.route('**/healthz', async (route) => {
      if (++reads > 1) return route.continue().catch(() => {});
      await held;
      await route.continue().catch(() => {});
    });
    return {
      asked: async () => {
        while (reads === 0) await page.waitForTimeout(10);
      },
      release: async () => {
        release();
        await page.unroute('**/healthz');
      },
    };
  }

  const head = await holdHead();
  await connect(page, 'Slow Wallet');
  await page.locator(`#header-address[data-address="${wallet.address}"]`).waitFor();
  await head.asked();
  let releaseLogout;
  const logoutHeld = new Promise((resolve) => (releaseLogout = resolve));
  let logoutSeen;
  const logoutAsked = new Promise((resolve) => (logoutSeen = resolve));
  await page.route('**/api/auth/logout', async (route) => {
    logoutSeen();
    await logoutHeld;
    await route.continue().catch(() => {});
  });
  await page.evaluate(() => window.__testWallet.disconnect());
  await logoutAsked;
  await head.release();
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
  releaseLogout();
  await page.unroute('**/api/auth/logout');
  await page.locator('#sui-wallet-notice', { hasText: 'Slow Wallet disconnected' }).waitFor();
  await page.locator(`#header-address[data-address="${own}"]`).waitFor();
  await page.locator('.balance-chip').waitFor();

  assert.equal(await page.locator('#header-address').getAttribute('data-address'), own);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a user who says no, to connecting or to signing, leaves the page as it was', async () => {
  for (const reject of ['connect', 'sign']) {
    const { page, own } = await walletPage({ reject });
    await connect(page);
    const problem = page.locator('#sui-wallet-problem');
    await problem.waitFor();
    assert.match(await problem.innerText(), new RegExp(`Test Wallet: the request was declined in the wallet\\. Nothing changed: you still play as ${own.slice(0, 6)}`));
    assert.equal(await page.locator('#header-address').getAttribute('data-address'), own);
    assert.equal(await page.locator('.sui-wallet-row.is-connected').count(), 0);
    assert.ok((await page.evaluate(() => window.__testWallet.log)).includes(`${reject}:rejected`));
    if (reject === 'sign') await screenshot(page, 'suiwallet-1280-rejected');
    await page.context().close();
  }
});

test('a wallet that signs with the wrong key is refused by the server, with its code', async () => {
  const { page, own } = await walletPage({ wrongKey: true });
  await connect(page);
  const problem = page.locator('#sui-wallet-problem');
  await problem.waitFor();
  assert.match(await problem.innerText(), /^The server refused Test Wallet's login \(code 205, bad_signature\): .+ Nothing changed/);
  assert.equal(await page.locator('#header-address').getAttribute('data-address'), own);
  await page.context().close();
});

test('no wallet, or none that can sign Sui messages, is said plainly', async () => {
  for (const options of [null, { noSign: true }, { chains: ['solana:mainnet'] }]) {
    const page = await newPage(browser, server);
    if (options) await installTestWallet(page, options);
    await openLoggedIn(page, '/wallet');
    await page.locator('#sui-wallet-none', { hasText: 'No Sui wallet was found in this browser' }).waitFor();
    if (!options) await screenshot(page, 'suiwallet-1280-none');
    await page.context().close();
  }
});
