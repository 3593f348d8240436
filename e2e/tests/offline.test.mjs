// Offline play: the app is installable (a web manifest with icons, a service worker), and
// once opened it opens again with the server stopped and plays a whole game of each game
// against the perfect computer, whose moves come from the solver in the page.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { outcomeOf } from '../../web/js/rules.js';
import { ROOT, boardOf, clickCell, launchBrowser, newPage, screenshot, startServer, waitForBoard } from '../lib/harness.mjs';

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

/** Every file under `web/` the page can load, as a path. */
function appFiles(dir = path.join(ROOT, 'web'), prefix = '') {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const rel = `${prefix}/${entry.name}`;
    if (entry.isDirectory()) return appFiles(path.join(dir, entry.name), rel);
    return /\.(js|css|svg|png|woff2|webmanifest)$/.test(entry.name) && rel !== '/sw.js' ? [rel] : [];
  });
}

test("the service worker's copy lists every file of the app", () => {
  const text = readFileSync(path.join(ROOT, 'web', 'sw.js'), 'utf8');
  const list = text.slice(text.indexOf('const SHELL = ['), text.indexOf('];', text.indexOf('const SHELL = [')));
  const shell = [...list.matchAll(/'([^']+)'/g)].map((m) => m[1]);
  assert.deepEqual([...shell].sort(), ['/', ...appFiles()].sort());
});

test('the app is installable: a manifest with icons', async () => {
  const manifest = await fetch(`${server.url}/manifest.webmanifest`);
  assert.equal(manifest.headers.get('content-type'), 'application/manifest+json; charset=utf-8');
  const body = await manifest.json();
  assert.equal(body.start_url, '/');
  assert.equal(body.display, 'standalone');
  for (const icon of body.icons) {
    const r = await fetch(`${server.url}${icon.src}`);
    assert.equal(r.status, 200, icon.src);
    assert.equal(r.headers.get('content-type').split(';')[0], icon.type, icon.src);
  }
  const sw = await fetch(`${server.url}/sw.js`);
  assert.match(sw.headers.get('content-type'), /javascript/);
});

test('with the server stopped, the page reopens and plays whole games of tic-tac-toe and SOS against the perfect computer', async () => {
  const page = await newPage(browser, server);
  await page.goto('/?player=perfect');
  await page.locator('.board-canvas').waitFor();
  // Wait until the service worker controls the page (the first load installs it).
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
    }
  });

  await server.kill();
  await page.reload();
  await page.locator('.board-canvas').waitFor();
  assert.equal(await page.title(), 'Play · Triad');
  // Play the first empty square each turn, as X; the computer (O) answers from the page.
  const result = page.locator('.result-card');
  const count = (board) => [...board].filter((c) => c !== '-').length;
  for (;;) {
    const board = await boardOf(page);
    if (outcomeOf('tic-tac-toe', board)) break;
    if (count(board) % 2 === 1) {
      await page.waitForTimeout(50);
      continue;
    }
    await clickCell(page, board.indexOf('-'));
    await waitForBoard(page, (b) => count(b) > count(board));
  }
  await result.waitFor();
  // The perfect computer never loses.
  assert.match(await result.innerText(), /The computer wins|Draw/);
  await screenshot(page, 'offline-game');
  // Its review too comes from the page's solver.
  const final = await boardOf(page);
  await page.getByRole('link', { name: 'Review' }).click();
  await page.locator('.review-moves .move-btn').first().waitFor();
  await waitForBoard(page, final);
  assert.match(await page.locator('.review-accuracy').innerText(), /X accuracy/);

  // SOS, still offline: the page's solver plays it too (an S in the first empty square
  // each turn), and never loses.
  await page.goto('/?game=sos&player=perfect');
  await page.locator('.mark-picker').waitFor();
  let board = await boardOf(page);
  while (!outcomeOf('sos', board)) {
    if (count(board) % 2 === 1) {
      board = await waitForBoard(page, (b) => count(b) % 2 === 0 || outcomeOf('sos', b) !== null);
      continue;
    }
    await page.locator('.board.is-interactive').waitFor();
    const cell = board.indexOf('-');
    await clickCell(page, cell);
    board = await waitForBoard(page, (b) => b[cell] !== '-');
  }
  await result.waitFor();
  assert.match(await result.innerText(), /The computer wins|Draw/);
  await screenshot(page, 'offline-sos');
  // Nothing failed but the requests to the stopped server.
  assert.deepEqual(
    page.errors.filter((e) => !/ERR_CONNECTION_REFUSED|Failed to fetch|WebSocket|net::/.test(e)),
    [],
  );
});
