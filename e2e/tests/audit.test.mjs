// Lighthouse's accessibility and best-practices audits of every screen, logged in, at a
// phone's width (390 px), and of the main ones at a desktop's (1280 px), in Debian's
// Chromium. Every audit
// must pass; the one exception is the console line Chromium writes for the API's 404 on
// the page of a match that does not exist (the page itself answers that the match is not
// there). A summary of the scores goes to artifacts/lighthouse/summary.json.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import lighthouse from 'lighthouse';
import { chromium } from 'playwright-core';

import { CHROMIUM, CHROMIUM_FLAGS, COIN, ROOT, apiPlayer, openLoggedIn, playMatch, startServer } from '../lib/harness.mjs';

const SETTINGS = {
  output: 'json',
  logLevel: 'error',
  onlyCategories: ['accessibility', 'best-practices'],
  // Keep the login in the shared profile: the screens are the logged-in ones.
  disableStorageReset: true,
  throttlingMethod: 'provided',
  // The app's pages settle in well under these (Lighthouse's defaults are a second each).
  pauseAfterFcpMs: 250,
  pauseAfterLoadMs: 250,
  networkQuietThresholdMs: 250,
  cpuQuietThresholdMs: 250,
};
// Every screen at the phone's width; at the desktop's, the screens whose layout differs most.
const DESKTOP_SCREENS = new Set(['play', 'online', 'match', 'review', 'leaderboard', 'wallet']);
const FORMS = [
  { label: '390', formFactor: 'mobile', screenEmulation: { mobile: true, width: 390, height: 844, deviceScaleFactor: 2, disabled: false } },
  { label: '1280', formFactor: 'desktop', screenEmulation: { mobile: false, width: 1280, height: 800, deviceScaleFactor: 1, disabled: false } },
];

let server;
let context;
let profile;
before(async () => {
  server = await startServer();
  // A persistent profile, so that Lighthouse's own tab shares the page's storage, and a
  // DevTools port for Lighthouse to drive it.
  profile = mkdtempSync(path.join(os.tmpdir(), 'triad-audit-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_FLAGS, '--remote-debugging-port=0'],
    baseURL: server.url,
    reducedMotion: 'reduce',
  });
});
after(async () => {
  await context?.close();
  await server?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** Audits that failed, as lines for the assertion's message; `allowed` filters out one exception. */
function failures(lhr, screen, allowed) {
  const out = [];
  for (const audit of Object.values(lhr.audits)) {
    if (!['binary', 'numeric', 'metricSavings'].includes(audit.scoreDisplayMode) || audit.score === null || audit.score >= 1) continue;
    const items = audit.details?.items ?? [];
    if (allowed?.(audit, items)) continue;
    const where = items
      .slice(0, 3)
      .map((i) => i.node?.selector ?? i.description ?? i.source ?? JSON.stringify(i).slice(0, 120))
      .join(' | ');
    out.push(`${screen}: ${audit.id} (${audit.title}) at ${where}`);
  }
  return out;
}

test('every screen passes Lighthouse accessibility and best practices', async () => {
  const page = context.pages()[0] ?? (await context.newPage());
  const me = await openLoggedIn(page);
  await server.deposit(me, 25n * COIN);
  const port = Number(readFileSync(path.join(profile, 'DevToolsActivePort'), 'utf8').split('\n')[0]);

  // Something on every screen: history (wins and losses), a live match of mine, a live
  // match to watch, a pending challenge, a tournament open for entries.
  const [a, b, c, d] = await Promise.all([apiPlayer(server), apiPlayer(server), apiPlayer(server), apiPlayer(server)]);
  const reviewId = await playMatch(a, b, [0, 3, 1, 4, 2]);
  await playMatch(b, c, [4, 0, 8, 2, 1, 7, 5, 3, 6]);
  const watchId = await (async () => {
    const created = await a.call('POST', '/api/challenges', { opponent: c.address, game: 'sos', stake: '0' });
    await c.call('POST', `/api/challenges/${created.match.id}/accept`);
    await a.call('POST', `/api/matches/${created.match.id}/moves`, { seq: 1, cell: 4, mark: 'O' });
    return created.match.id;
  })();
  const mine = await d.call('POST', '/api/challenges', { opponent: me, game: 'tic-tac-toe', stake: '0', first: 'challenger' });
  await page.goto('/online');
  await page.locator('.challenge-row').getByRole('button', { name: 'Accept' }).click();
  await page.waitForURL(/\/match\/\d+$/);
  await d.call('POST', `/api/matches/${mine.match.id}/moves`, { seq: 1, cell: 4, mark: 'X' });
  await b.call('POST', '/api/challenges', { opponent: me, game: 'tic-tac-toe', stake: '0' });
  const created = await server.request(
    'POST',
    '/api/tournaments',
    { name: 'Friday Arena', game: 'tic-tac-toe', format: 'arena', minutes: 30, starts_in_seconds: 3600, entry: 'everyone', entry_fee: '0' },
    server.ownerToken,
  );
  const tournamentId = created.tournament.id;
  await a.call('POST', `/api/tournaments/${tournamentId}/join`);

  const screens = [
    ['play', '/'],
    ['play-sos', '/?game=sos'],
    ['online', '/online'],
    ['match', `/match/${mine.match.id}`],
    ['watch', `/match/${watchId}`],
    ['finished', `/match/${reviewId}`],
    ['review', `/review/${reviewId}`],
    ['leaderboard', '/leaderboard'],
    ['player', `/player/${a.address}`],
    ['wallet', '/wallet'],
    ['puzzles', '/puzzles'],
    ['tournaments', '/tournaments'],
    ['tournament', `/tournament/${tournamentId}`],
    ['match-missing', '/match/99999'],
  ];
  // The one console error a page may log: Chromium's line for the API's 404 of the
  // match the page says does not exist.
  const missing404 = (audit, items) =>
    audit.id === 'errors-in-console' && items.length > 0 && items.every((i) => i.source === 'network' && /\/api\/matches\/99999$/.test(i.sourceLocation?.url ?? ''));

  const found = [];
  const summary = {};
  for (const form of FORMS) {
    for (const [name, pathname] of screens) {
      if (form.label === '1280' && !DESKTOP_SCREENS.has(name)) continue;
      const screen = `${form.label}-${name}`;
      const result = await lighthouse(server.url + pathname, { ...SETTINGS, port, formFactor: form.formFactor, screenEmulation: form.screenEmulation });
      const lhr = result?.lhr;
      assert.ok(lhr && !lhr.runtimeError, `${screen}: Lighthouse could not audit ${pathname}: ${lhr?.runtimeError?.message}`);
      summary[screen] = Object.fromEntries(Object.values(lhr.categories).map((c) => [c.id, c.score]));
      found.push(...failures(lhr, screen, name === 'match-missing' ? missing404 : undefined));
    }
  }
  const dir = path.join(ROOT, 'artifacts', 'lighthouse');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  assert.deepEqual(found, [], `Lighthouse found:\n${found.join('\n')}`);
});
