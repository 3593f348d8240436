// @ts-check
/**
 * The app's entry point: the header (wallet address, balance, connection), the navigation
 * (Play, Online, Puzzles, Tournaments, Leaderboard, Wallet), and the router that mounts one view at a time.
 *
 * Pages are real paths (`/online`, `/match/7`, `/player/0x…`), served as this page by the
 * server (`crates/triad-server/src/web.rs`, `PAGES`: keep the two lists in step), so every
 * screen has a URL to share or reload.
 * @module
 */

import { announce, copyButton, h, ICONS, icon, replace, toast } from './dom.js';
import { formatAmount, gameName, shortAddress } from './format.js';
import { realtime } from './realtime.js';
import { identity, onInbox, onSession, session, startSession } from './session.js';
import * as leaderboard from './views/leaderboard.js';
import * as match from './views/match.js';
import * as online from './views/online.js';
import * as play from './views/play.js';
import * as player from './views/player.js';
import * as puzzles from './views/puzzles.js';
import * as review from './views/review.js';
import * as tournament from './views/tournament.js';
import * as tournaments from './views/tournaments.js';
import * as wallet from './views/wallet.js';

/**
 * @typedef {{ params: Record<string, string>, query: URLSearchParams, navigate: (path: string) => void, section: (nav: string) => void }} ViewContext
 * @typedef {{ pattern: RegExp, names: string[], nav: string, title: string, mount: (root: HTMLElement, ctx: ViewContext) => () => void }} Route
 */

/** @type {Route[]} */
const ROUTES = [
  { pattern: /^\/(?:play)?$/, names: [], nav: 'play', title: 'Play', mount: play.mount },
  { pattern: /^\/online$/, names: [], nav: 'online', title: 'Online', mount: online.mount },
  { pattern: /^\/match\/(\d+)$/, names: ['id'], nav: 'online', title: 'Match', mount: match.mount },
  { pattern: /^\/leaderboard$/, names: [], nav: 'leaderboard', title: 'Leaderboard', mount: leaderboard.mount },
  { pattern: /^\/player\/([^/]+)$/, names: ['address'], nav: 'leaderboard', title: 'Player', mount: player.mount },
  { pattern: /^\/wallet$/, names: [], nav: 'wallet', title: 'Wallet', mount: wallet.mount },
  { pattern: /^\/review\/(\d+)$/, names: ['id'], nav: 'online', title: 'Review', mount: review.mount },
  { pattern: /^\/review$/, names: [], nav: 'play', title: 'Review', mount: review.mount },
  { pattern: /^\/puzzles$/, names: [], nav: 'puzzles', title: 'Puzzles', mount: puzzles.mount },
  { pattern: /^\/tournaments$/, names: [], nav: 'tournaments', title: 'Tournaments', mount: tournaments.mount },
  { pattern: /^\/tournament\/(\d+)$/, names: ['id'], nav: 'tournaments', title: 'Tournament', mount: tournament.mount },
];

/** @type {{ id: string, href: string, label: string, short?: string, icon: string[] }[]} */
const NAV = [
  { id: 'play', href: '/', label: 'Play', icon: ICONS.play },
  { id: 'online', href: '/online', label: 'Online', icon: ICONS.online },
  { id: 'puzzles', href: '/puzzles', label: 'Puzzles', icon: ICONS.puzzle },
  { id: 'tournaments', href: '/tournaments', label: 'Tournaments', short: 'Tourneys', icon: ICONS.bracket },
  { id: 'leaderboard', href: '/leaderboard', label: 'Leaderboard', short: 'Ranks', icon: ICONS.trophy },
  { id: 'wallet', href: '/wallet', label: 'Wallet', icon: ICONS.wallet },
];

const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const header = /** @type {HTMLElement} */ (document.getElementById('header'));
/** @type {(() => void) | null} */
let unmount = null;
let inboxBadge = 0;

/** @param {string} path */
function navigate(path) {
  if (path !== location.pathname + location.search) history.pushState(null, '', path);
  route();
}

function route() {
  unmount?.();
  unmount = null;
  const path = location.pathname;
  const found = ROUTES.map((r) => ({ r, m: r.pattern.exec(path) })).find((x) => x.m);
  main.replaceChildren();
  if (!found || !found.m) {
    document.title = 'Not found · Triad';
    replace(main, h('section', { class: 'view card not-found' }, h('h1', { class: 'page-title', text: 'There is nothing here' }), h('p', {}, h('a', { href: '/', text: 'Play a game' }), ' instead.')));
    renderHeader('');
    return;
  }
  const { r, m } = found;
  /** @type {Record<string, string>} */
  const params = {};
  r.names.forEach((name, i) => {
    params[name] = decodeURIComponent(m[i + 1]);
  });
  document.title = `${r.title === 'Match' || r.title === 'Tournament' ? `${r.title} #${params.id}` : r.title} · Triad`;
  if (r.nav === 'online') inboxBadge = 0;
  renderHeader(r.nav);
  // A view may say which section it belongs to once it knows (a tournament's match).
  const section = (/** @type {string} */ nav) => {
    if (header.dataset.current !== nav) renderHeader(nav);
  };
  unmount = r.mount(main, { params, query: new URLSearchParams(location.search), navigate, section });
  main.focus({ preventScroll: true });
  window.scrollTo(0, 0);
}

const account = h('div', { class: 'account' });
const navHost = h('div', { class: 'nav-host' });
header.replaceChildren(
  h(
    'div',
    { class: 'header-inner' },
    h('a', { class: 'brand', href: '/', 'aria-label': 'Triad, home' }, h('img', { src: '/favicon.svg', alt: '', width: '28', height: '28' }), h('span', { class: 'brand-name', text: 'Triad' })),
    navHost,
    account,
  ),
);

/**
 * Renders the navigation with `current` marked, and the account.
 * @param {string} current
 */
function renderHeader(current) {
  header.dataset.current = current;
  replace(
    navHost,
    h(
      'nav',
      { class: 'nav', 'aria-label': 'Main' },
      NAV.map((item) =>
        h(
          'a',
          { class: `nav-link${item.short ? ' has-short' : ''}`, href: item.href, title: item.short ? item.label : null, 'aria-current': item.id === current ? 'page' : false, dataset: { nav: item.id } },
          icon(item.icon),
          h('span', { class: 'nav-label', text: item.label }),
          // A phone's tab bar has room for a short word only. One of the two labels is
          // displayed, so the link's accessible name is always the word on screen.
          item.short ? h('span', { class: 'nav-label-short', text: item.short }) : null,
          item.id === 'online' && inboxBadge > 0 ? h('span', { class: 'badge', 'aria-label': `${inboxBadge} new`, text: String(inboxBadge) }) : null,
        ),
      ),
    ),
  );
  renderAccount();
}

/** The player's address, the balance and the connection, rebuilt only when they change. */
function renderAccount() {
  const w = identity();
  const key = `${w?.address}|${session.me?.balance}|${realtime.status}`;
  if (account.dataset.key === key) return;
  account.dataset.key = key;
  replace(account, ...accountChip());
}

/** @returns {(Node | null)[]} */
function accountChip() {
  const w = identity();
  const dot = h('span', { class: `conn conn-${realtime.status}`, title: connectionText(), role: 'img', 'aria-label': connectionText() });
  if (!w) return [dot];
  const me = session.me;
  return [
    me ? h('a', { class: 'balance-chip', href: '/wallet', title: 'Your balance', 'data-balance': me.balance }, h('span', { class: 'balance-label', text: 'Balance' }), h('strong', { text: formatAmount(me.balance) })) : null,
    h(
      'span',
      { class: 'address-chip', title: w.address },
      dot,
      h('a', { class: 'mono', href: '/wallet', id: 'header-address', 'data-address': w.address, text: shortAddress(w.address) }),
      copyButton(() => w.address, 'address'),
    ),
  ];
}

function connectionText() {
  return {
    connecting: 'Connecting…',
    open: 'Live',
    reconnecting: 'Reconnecting…',
    offline: 'Offline: moves will catch up when you are back',
  }[realtime.status];
}

// Links inside the app navigate without reloading.
document.addEventListener('click', (event) => {
  const e = /** @type {MouseEvent} */ (event);
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = /** @type {HTMLElement} */ (e.target).closest('a');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith('/api/')) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});
window.addEventListener('popstate', route);

/** The connection banner's text: play on this device needs no connection. @param {string} first */
function offlineText(first) {
  return header.dataset.current === 'play'
    ? `${first} Play on this device goes on as usual.`
    : `${first} The game will catch up when you are back.`;
}

// The header follows the session and the connection.
onSession(() => renderAccount());
let lastStatus = realtime.status;
let bannerTimer = 0;
realtime.onStatus((status) => {
  renderAccount();
  const banner = /** @type {HTMLElement} */ (document.getElementById('offline'));
  window.clearTimeout(bannerTimer);
  if (status === 'open' || status === 'connecting') {
    banner.hidden = true;
  } else if (status === 'offline') {
    banner.textContent = offlineText('You are offline.');
    banner.hidden = false;
  } else {
    // A reconnection that succeeds at once is not worth a banner.
    bannerTimer = window.setTimeout(() => {
      banner.textContent = offlineText('Reconnecting to Triad…');
      banner.hidden = false;
    }, 1500);
  }
  if (status === 'open' && (lastStatus === 'offline' || lastStatus === 'reconnecting')) announce('Back online.');
  lastStatus = status;
});

// Incoming challenges anywhere in the app: a toast with a way to answer, and a badge.
onInbox((event, info) => {
  const k = event.kind;
  if (!info.live || k.type !== 'challenge_issued' || k.opponent !== session.me?.address) return;
  if (header.dataset.current !== 'online') {
    inboxBadge++;
    renderHeader(header.dataset.current ?? '');
    toast(`${shortAddress(k.challenger)} challenges you to ${gameName(k.game)}${Number(k.stake) ? ` for ${formatAmount(String(k.stake))}` : ''}.`, {
      action: { label: 'Answer', run: () => navigate('/online') },
    });
  }
});

realtime.start();
route();
startSession();

// The service worker keeps a copy of the app's files, so the page opens and plays against
// the computer with no server (web/sw.js). A browser without one simply goes without.
if ('serviceWorker' in navigator) {
  navigator.serviceWorker.register('/sw.js').catch(() => {});
}
