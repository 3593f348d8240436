// The wallet in a real browser: a WebCrypto Ed25519 key made on the first visit and kept
// across reloads; the address the page computes with its own BLAKE2b is the one the
// server names in its login challenge; export to a `triad keygen` key file and import
// back; the Sui SDK's key vectors give the SDK's address and signatures; a damaged file is
// refused in plain words; log out and in; a ledger read answered after a newer one is not
// drawn.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { COIN, holdAnswer, keyFromSeed, launchBrowser, newPage, openLoggedIn, ROOT, startServer } from '../lib/harness.mjs';

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

const vectors = JSON.parse(readFileSync(path.join(ROOT, 'crates/triad-identity/tests/sui_vectors.json'), 'utf8'));

test('a key on the first visit, the same after a reload, named alike by the page and the server', async () => {
  const page = await newPage(browser, server);
  const address = await openLoggedIn(page);
  assert.match(address, /^0x[0-9a-f]{64}$/);
  await page.locator('.notice', { hasText: 'A new key was made' }).waitFor();
  const publicKeyHex = await page.evaluate(async () => (await import('/js/session.js')).session.wallet?.publicKeyHex);
  // The server computes the address from the public key with its own BLAKE2b (Rust).
  const challenge = await server.request('POST', '/api/auth/challenge', { public_key: publicKeyHex });
  assert.equal(challenge.message.split('\n')[1], address);
  await page.reload();
  assert.equal(await openLoggedIn(page), address, 'the key is kept in the browser');
  assert.equal(await page.locator('.notice').count(), 0, 'not new any more');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('export a key file, import the Sui vector key and sign like the SDK, import the file back', async () => {
  const page = await newPage(browser, server);
  const original = await openLoggedIn(page);

  // Export: the `triad keygen` format, whose secret really is this key.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export key file' }).click()]);
  assert.equal(download.suggestedFilename(), 'triad-key.json');
  const exported = readFileSync(await download.path(), 'utf8');
  const file = JSON.parse(exported);
  assert.deepEqual(Object.keys(file), ['scheme', 'secret_key', 'public_key', 'address']);
  assert.equal(file.scheme, 'ed25519');
  assert.equal(file.address, original);
  const rederived = keyFromSeed(file.secret_key);
  assert.equal(rederived.publicKeyHex, file.public_key);
  assert.equal(rederived.address, original);

  // Import the SDK's vector key by pasting its secret: the SDK's address, logged in.
  const vector = vectors.keys[0];
  await page.locator('#key-paste').fill(vector.secret_key);
  await page.getByRole('button', { name: 'Import pasted key' }).click();
  await page.waitForFunction((want) => document.querySelector('#header-address')?.getAttribute('data-address') === want, vector.sui_address);
  await page.locator('.balance-chip').waitFor();
  assert.equal(await page.locator('#wallet-address').innerText(), vector.sui_address);
  // WebCrypto's Ed25519 signatures are the SDK's, byte for byte.
  for (const sig of vector.signatures) {
    const text = Buffer.from(sig.message_hex, 'hex').toString('utf8');
    if (Buffer.from(text, 'utf8').toString('hex') !== sig.message_hex) continue; // not UTF-8 text
    const signature = await page.evaluate(async (t) => {
      const [{ session }, { signText }] = await Promise.all([import('/js/session.js'), import('/js/wallet.js')]);
      if (!session.wallet) throw new Error('no wallet');
      return signText(session.wallet, t);
    }, text);
    assert.equal(signature, sig.ed25519_signature, sig.name);
  }

  // A damaged file is refused, in words.
  await page.locator('#key-paste').fill(JSON.stringify({ ...file, address: vector.sui_address }));
  await page.getByRole('button', { name: 'Import pasted key' }).click();
  const error = page.locator('.card', { hasText: 'Your key' }).locator('.inline-error');
  await error.waitFor();
  assert.equal(await error.innerText(), 'The key file is damaged: its address does not belong to its secret key.');
  await page.locator('#key-paste').fill('hello');
  await page.getByRole('button', { name: 'Import pasted key' }).click();
  await page.waitForFunction(() => /neither a Triad key file/.test(document.querySelector('.card .inline-error:not([hidden])')?.textContent ?? ''));

  // The exported file, back through the file picker: the original address again.
  await page.locator('#key-file').setInputFiles({ name: 'triad-key.json', mimeType: 'application/json', buffer: Buffer.from(exported) });
  await page.waitForFunction((want) => document.querySelector('#header-address')?.getAttribute('data-address') === want, original);
  await page.locator('.balance-chip').waitFor();

  // Log out: the token is revoked and the page stays out, even after a reload; log in.
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.locator('.balance-chip').waitFor({ state: 'detached' });
  await page.reload();
  await page.getByRole('button', { name: 'Log in' }).waitFor();
  assert.equal(await page.locator('.balance-chip').count(), 0);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('.balance-chip').waitFor();
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a ledger read before a deposit and answered after it is not drawn', async () => {
  // The first read of the empty ledger is answered by the server at once but held on its
  // way to the page until the read the deposit started has been drawn: the older answer
  // must not take the deposit away again (no later event would bring it back).
  const page = await newPage(browser, server);
  const empty = await holdAnswer(page, '**/api/ledger?limit=25*', (ledger) => ledger.entries.length === 0);
  const address = await openLoggedIn(page);
  await empty.held;
  await server.deposit(address, 3n * COIN);
  const rows = page.locator('.ledger-table tbody tr');
  await rows.first().waitFor();
  empty.release();
  await empty.delivered;
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
  assert.equal(await rows.count(), 1, 'the deposit stays in the ledger');
  assert.match(await rows.first().innerText(), /\+3/);
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
