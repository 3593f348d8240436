// On a phone: a change of setting (below the board) brings the new game into view, and the
// connection banner never covers the turn line.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { PHONE, launchBrowser, newPage, screenshot, startServer } from '../lib/harness.mjs';

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

const phone = { viewport: PHONE, isMobile: true, hasTouch: true };

/** Whether two boxes overlap. */
const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

test('a change of setting brings the board into view', async () => {
  const page = await newPage(browser, server, phone);
  await page.goto('/');
  await page.locator('.board-canvas').waitFor();
  // Scrolled down to the last settings, as a thumb does.
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  assert.ok((await page.evaluate(() => window.scrollY)) > 100, 'the settings are below the board');
  await page.getByRole('radio', { name: 'Random' }).tap();
  await page.waitForFunction(() => document.querySelector('.status')?.getBoundingClientRect().top >= 0);
  const status = await page.locator('.status').boundingBox();
  const header = await page.locator('#header').boundingBox();
  assert.ok(status.y >= header.y + header.height - 1, 'the turn line is below the header');
  const board = await page.locator('.board-canvas').boundingBox();
  assert.ok(board.y < PHONE.height, 'the board is on screen');
  await screenshot(page, 'phone-after-setting');
});

test('the connection banner does not cover the turn line', async () => {
  const page = await newPage(browser, server, phone);
  await page.goto('/');
  await page.locator('#header-address').waitFor();
  await server.kill();
  const banner = page.locator('#offline');
  await banner.waitFor({ timeout: 15_000 });
  assert.match(await banner.innerText(), /Play on this device goes on as usual/);
  for (const y of [0, 40, 120]) {
    await page.evaluate((top) => window.scrollTo(0, top), y);
    const [b, s] = [await banner.boundingBox(), await page.locator('.status').boundingBox()];
    assert.ok(!b || !s || !overlap(b, s), `scrolled ${y}px: the banner covers the turn line`);
  }
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'phone-offline-banner');
  await server.spawn(new URL(server.url).host);
});
