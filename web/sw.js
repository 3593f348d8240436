// @ts-check
/// <reference lib="webworker" />
/**
 * The service worker: the app opens and plays on one device with no server, as the HTML5
 * canvas game did. At install it keeps a copy of the app's files (`SHELL`: every file the
 * page loads; e2e/tests/offline.test.mjs checks the list against `web/`). Afterwards every
 * request for them still goes to the server first, so a page online is always the server's
 * current one, and the copy is refreshed from each answer; only when the server cannot be
 * reached does the copy answer. A page of the app (a navigation) falls back to the copy of
 * `/`, whose script routes on the path. The API, the WebSocket and the agents' endpoints are
 * never answered from the copy.
 */

const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));

const CACHE = 'triad-app-v1';

/** Every file the page loads. */
const SHELL = [
  '/',
  '/app.css',
  '/favicon.svg',
  '/manifest.webmanifest',
  '/icons/icon-192.png',
  '/icons/icon-512.png',
  '/fonts/inter-latin-wght.woff2',
  '/js/api.js',
  '/js/blake2b.js',
  '/js/board.js',
  '/js/clock.js',
  '/js/computer.js',
  '/js/dom.js',
  '/js/format.js',
  '/js/identity.js',
  '/js/liveboards.js',
  '/js/main.js',
  '/js/notation.js',
  '/js/realtime.js',
  '/js/rules.js',
  '/js/session.js',
  '/js/solver.js',
  '/js/wallet.js',
  '/js/walletstandard.js',
  '/js/views/leaderboard.js',
  '/js/views/match.js',
  '/js/views/online.js',
  '/js/views/play.js',
  '/js/views/puzzles.js',
  '/js/views/player.js',
  '/js/views/review.js',
  '/js/views/suiwallet.js',
  '/js/views/tournament.js',
  '/js/views/tournaments.js',
  '/js/views/wallet.js',
];

/** Paths that are the server's answers about now, never the app's files. */
const LIVE = /^\/(api|a2a|mcp|healthz|metrics|\.well-known)(\/|$)/;

sw.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL.map((path) => new Request(path, { cache: 'reload' }))))
      .then(() => sw.skipWaiting()),
  );
});

sw.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((key) => key !== CACHE).map((key) => caches.delete(key))))
      .then(() => sw.clients.claim()),
  );
});

sw.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== sw.location.origin || LIVE.test(url.pathname)) return;
  event.respondWith(fromServerElseCopy(request));
});

/**
 * The server's answer, kept as the copy when it is a file of the app; the copy when the
 * server cannot be reached.
 * @param {Request} request
 */
async function fromServerElseCopy(request) {
  const navigation = request.mode === 'navigate';
  const path = new URL(request.url).pathname;
  try {
    const response = await fetch(request);
    if (response.ok && (navigation ? path === '/' : SHELL.includes(path))) {
      const copy = response.clone();
      caches.open(CACHE).then((cache) => cache.put(navigation ? '/' : request, copy));
    }
    return response;
  } catch (error) {
    const copy = await caches.match(navigation ? '/' : request, { ignoreSearch: navigation });
    if (copy) return copy;
    throw error;
  }
}
