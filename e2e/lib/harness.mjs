// The end-to-end harness: a real `triad serve` on a free port with a fresh SQLite file in
// a temporary directory, an owner key made here (so tests can deposit), and Debian's
// Chromium driven headless by playwright-core.
//
// TRIAD_BIN is the binary to test (default: target/debug/triad from the repository root).
// CHROMIUM overrides /usr/bin/chromium. Screenshots go to artifacts/screenshots/.

import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { requestJson, spawnServer, stopServer } from './serve.mjs';

import { addressOf } from '../../web/js/wallet.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TRIAD_BIN = path.resolve(ROOT, process.env.TRIAD_BIN ?? 'target/debug/triad');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT, 'artifacts', 'screenshots');

/** The flags that work on this kind of machine (closed network, no GPU, root). */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** One coin, in minor units. */
export const COIN = 1_000_000n;

/** An Ed25519 key made with Node's crypto, and its Sui address. */
export function makeKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, publicKeyHex: Buffer.from(raw).toString('hex'), address: addressOf(new Uint8Array(raw)) };
}

/** A key from a 32-byte seed (hex), as `triad keygen` and the Sui SDK take it. */
export function keyFromSeed(seedHex) {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(seedHex, 'hex')]);
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  const jwk = privateKey.export({ format: 'jwk' });
  const raw = Buffer.from(jwk.x, 'base64url');
  return { privateKey, publicKeyHex: raw.toString('hex'), address: addressOf(new Uint8Array(raw)) };
}

/**
 * Starts `triad serve` on 127.0.0.1 with a fresh database. Options: `devClock`, `args`
 * (more flags). Resolves once the server prints where it listens.
 */
export async function startServer(options = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'triad-e2e-'));
  const owner = makeKey();
  const args = [
    'serve',
    '--database', path.join(dir, 'triad.db'),
    '--owner', owner.address,
    '--rate-per-ip', '100000',
    '--rate-burst', '100000',
    '--rate-per-address', '100000',
    ...(options.devClock ? ['--dev-clock', 'true'] : []),
    ...(options.args ?? []),
  ];
  const server = new Server(dir, owner, args);
  await server.spawn('127.0.0.1:0');
  server.ownerToken = await server.login(owner);
  return server;
}

export class Server {
  constructor(dir, owner, args) {
    this.dir = dir;
    this.owner = owner;
    this.args = args;
    this.url = '';
    this.child = null;
    this.ownerToken = '';
  }

  /** Runs the binary, listening on `addr`; resolves with the URL once it listens. */
  async spawn(addr) {
    const { child, url } = await spawnServer(TRIAD_BIN, this.args, { dir: this.dir, addr, logs: !!process.env.TRIAD_E2E_LOGS });
    this.child = child;
    this.url = url;
    return url;
  }

  /** Stops the process (SIGTERM: a graceful shutdown) and starts it again on the same port and database. */
  async restart() {
    await this.kill();
    const port = new URL(this.url).port;
    await this.spawn(`127.0.0.1:${port}`);
  }

  async kill() {
    await stopServer(this.child);
  }

  /** A JSON request; throws with the API's message on an error status. */
  request(method, pathname, body, token) {
    return requestJson(this.url, method, pathname, body, token);
  }

  /** Logs a key in with a plain Ed25519 signature of the challenge; returns the token. */
  async login(key) {
    const challenge = await this.request('POST', '/api/auth/challenge', { public_key: key.publicKeyHex });
    const signature = sign(null, Buffer.from(challenge.message, 'utf8'), key.privateKey).toString('hex');
    const session = await this.request('POST', '/api/auth/login', { challenge_id: challenge.challenge_id, public_key: key.publicKeyHex, signature });
    return session.token;
  }

  /** The owner credits play money. */
  async deposit(to, amount) {
    await this.request('POST', '/api/ledger/deposit', { to, amount: String(amount) }, this.ownerToken);
  }

  /** A player's public record. */
  player(address) {
    return this.request('GET', `/api/players/${address}`);
  }

  /** A balance, via a token. */
  async balance(token) {
    return BigInt((await this.request('GET', '/api/me', undefined, token)).balance);
  }

  /** Moves the dev clock, as the owner (the only one who may). */
  advance(ms) {
    return this.request('POST', '/api/dev/clock', { advance_ms: ms }, this.ownerToken);
  }

  async stop() {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Launches Chromium headless, each launch with a fresh profile directory. */
export function launchBrowser() {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/** Sizes for screenshots and layout checks. */
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
export const NARROW = { width: 320, height: 640 };

/** The three widths every screen is looked at: a label, the viewport, the page options. */
export const SIZES = [
  { label: '1280', viewport: DESKTOP, options: {} },
  { label: '390', viewport: PHONE, options: { deviceScaleFactor: 2, isMobile: true, hasTouch: true } },
  { label: '320', viewport: NARROW, options: { deviceScaleFactor: 2, isMobile: true, hasTouch: true } },
];

/** A player driven through the API (a fresh key, logged in), for the other side of a screen. */
export async function apiPlayer(server) {
  const key = makeKey();
  const token = await server.login(key);
  const call = (method, p, body) => server.request(method, p, body, token);
  return { ...key, token, call };
}

/**
 * Plays a whole free challenge match between two API players, `x` first; `cells` in order
 * (for SOS, `'S4'` or `'O4'`, or a bare cell for an O). Returns the match's id.
 */
export async function playMatch(x, o, cells, game = 'tic-tac-toe') {
  const created = await x.call('POST', '/api/challenges', { opponent: o.address, game, stake: '0', first: 'challenger' });
  const id = created.match.id;
  await o.call('POST', `/api/challenges/${id}/accept`);
  for (const [i, cell] of cells.entries()) {
    const mark = game === 'sos' ? (typeof cell === 'string' ? cell[0] : 'O') : i % 2 ? 'O' : 'X';
    const at = typeof cell === 'string' ? Number(cell.slice(1)) : cell;
    await (i % 2 ? o : x).call('POST', `/api/matches/${id}/moves`, { seq: i + 1, cell: at, mark });
  }
  return id;
}

/**
 * A new page in its own context (its own storage, so its own wallet), with console errors
 * collected for the test to assert on.
 */
export async function newPage(browser, server, options = {}) {
  const context = await browser.newContext({
    baseURL: server.url,
    viewport: options.viewport ?? DESKTOP,
    deviceScaleFactor: options.deviceScaleFactor ?? 1,
    isMobile: options.isMobile ?? false,
    hasTouch: options.hasTouch ?? false,
    colorScheme: options.colorScheme ?? 'light',
    reducedMotion: 'reduce',
  });
  const page = await context.newPage();
  collectErrors(page);
  return page;
}

/**
 * Collects `page`'s errors in `page.errors` for the test to assert on: uncaught
 * exceptions, and console errors, each refused API call named with its error code.
 */
export function collectErrors(page) {
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  // The API's refusals by URL, with the error code the server gave, to name in the line
  // the console prints for each (which says only the status).
  const refusals = new Map();
  page.on('response', async (r) => {
    if (r.status() < 400 || !new URL(r.url()).pathname.startsWith('/api/')) return;
    const code = await r.json().then((b) => b?.error?.code ?? b?.code, () => null);
    refusals.set(r.url(), `${r.request().method()} ${new URL(r.url()).pathname}${code ? `: ${code}` : ''}`);
  });
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const url = m.text().startsWith('Failed to load resource') ? m.location().url : '';
    page.errors.push(url ? `${m.text()} (${refusals.get(url) ?? url})` : m.text());
  });
}

/** Opens the app and waits until the wallet is logged in; returns the address. */
export async function openLoggedIn(page, pathname = '/wallet') {
  await page.goto(pathname);
  const chip = page.locator('#header-address');
  // Attached, not visible: the narrowest phones fold the address away.
  await chip.waitFor({ state: 'attached' });
  await page.locator('.balance-chip').waitFor({ state: 'attached', timeout: 15_000 });
  return chip.getAttribute('data-address');
}

/**
 * Holds an answer on its way to the page: the first answer to a GET of `url` (a Playwright
 * glob) whose JSON `stale` accepts is fetched from the server at once (so it is as of
 * then) and reaches the page only after `release()`. Every other answer passes, and
 * `freshSince()` counts those `stale` refused that reached the page while one was held. A
 * race a loaded machine makes, made on purpose: an older answer arriving after a newer one.
 * @returns {Promise<{ held: Promise<void>, release: () => void, delivered: Promise<void>, freshSince: () => number }>}
 */
export async function holdAnswer(page, url, stale = () => true) {
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  let onHeld;
  const held = new Promise((resolve) => (onHeld = resolve));
  let onDelivered;
  const delivered = new Promise((resolve) => (onDelivered = resolve));
  let holding = false;
  let fresh = 0;
  await page.route(url, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    const response = await route.fetch();
    const isStale = stale(await response.json());
    if (!holding && isStale) {
      holding = true;
      onHeld();
      await gate;
      await route.fulfill({ response });
      onDelivered();
      return;
    }
    await route.fulfill({ response });
    if (holding && !isStale) fresh++;
  });
  return { held, release, delivered, freshSince: () => fresh };
}

/**
 * Holds the first GET of a URL that `matches` accepts on its way to the server and, after
 * `release()`, fails it as a connection the network dropped. Every other request passes. A
 * race a flaky network makes, made on purpose: an older read's failure arriving after a
 * newer read's answer.
 * @param {import('playwright').Page} page
 * @param {(url: URL) => boolean} matches
 * @returns {Promise<{ held: Promise<void>, release: () => void, failed: Promise<void> }>}
 */
export async function holdThenFail(page, matches) {
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  let onHeld;
  const held = new Promise((resolve) => (onHeld = resolve));
  let onFailed;
  const failed = new Promise((resolve) => (onFailed = resolve));
  let holding = false;
  await page.route(matches, async (route) => {
    if (holding || route.request().method() !== 'GET') return route.continue();
    holding = true;
    onHeld();
    await gate;
    await route.abort('connectionreset');
    onFailed();
  });
  return { held, release, failed };
}

/** The board's 9-character state, as drawn. */
export function boardOf(page) {
  return page.locator('.board').getAttribute('data-board');
}

/** Waits until the board shows `expected` (a string or a predicate). */
export async function waitForBoard(page, expected, timeout = 10_000) {
  const test = typeof expected === 'function' ? expected : (b) => b === expected;
  const started = Date.now();
  let last = '';
  while (Date.now() - started < timeout) {
    last = await boardOf(page);
    if (last !== null && test(last)) return last;
    await page.waitForTimeout(25);
  }
  throw new Error(`the board never became ${expected}; it is ${last}`);
}

/**
 * The inner texts of every element `locator` matches, once `test` accepts them (within
 * `timeout`). Views re-render on live events; a read in the middle of one can see a stale
 * or not-yet-laid-out element, so assertions on texts that arrive live go through this.
 */
export async function textsWhen(locator, test, timeout = 10_000) {
  const started = Date.now();
  let last = [];
  while (Date.now() - started < timeout) {
    last = await locator.allInnerTexts();
    if (test(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return last;
}

/** Clicks the centre of a square on the canvas, as a person would. */
export async function clickCell(page, cell) {
  const box = await page.locator('.board-canvas').boundingBox();
  // The board's geometry (board.js): 2 % padding, tiles separated by 2.8 % gaps.
  const size = box.width;
  const pad = size * 0.02;
  const gap = size * 0.028;
  const tile = (size - 2 * pad - 2 * gap) / 3;
  const x = box.x + pad + (cell % 3) * (tile + gap) + tile / 2;
  const y = box.y + pad + Math.floor(cell / 3) * (tile + gap) + tile / 2;
  await page.mouse.click(x, y);
}

/** The number of marks on a board. */
export function marks(board) {
  return [...board].filter((c) => c !== '-').length;
}

/** Saves a screenshot under artifacts/screenshots/. */
export async function screenshot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: false });
}

/** A small seeded random generator (mulberry32), so test strategies replay. */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
