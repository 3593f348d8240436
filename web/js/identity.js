// @ts-check
/**
 * How a player is shown: an identicon drawn from the address, the display name when the
 * player took one, the shortened address (always: the address is the identity) and a
 * "bot" badge for bots. Profiles (`GET /api/players/{address}`: name, bot) are fetched
 * once per address and shared by every view; `rememberProfile` updates one the page
 * changed itself. Built with DOM calls only: a name is text, never markup.
 * @module
 */

import { api } from './api.js';
import { h } from './dom.js';
import { fromHex, shortAddress } from './format.js';

/** @typedef {{ name: string | null, bot: boolean }} Profile */

const SVG = 'http://www.w3.org/2000/svg';
/** Cells per side of the identicon's grid; the left half is mirrored to the right. */
const GRID = 5;

/**
 * The bytes of an address (`0x` and 64 hex digits), or of its text's UTF-8 when it is not
 * one (never thrown on: a seat without an address is drawn too).
 * @param {string} address
 * @returns {Uint8Array}
 */
function addressBytes(address) {
  try {
    return fromHex(address.replace(/^0x/i, ''));
  } catch {
    return new TextEncoder().encode(address);
  }
}

/**
 * Which cells of the identicon are filled, row by row, and its hue (0-359): a pure function
 * of the address. The hue comes from the first two bytes; cell (row, column) of the left
 * three columns is filled when bit 0 of byte 2 + row × 3 + column is set, and column 4 - c
 * mirrors column c. A Sui address is a BLAKE2b hash, so both are evenly spread.
 * @param {string} address
 * @returns {{ hue: number, cells: boolean[][] }}
 */
export function identiconPattern(address) {
  const bytes = addressBytes(address);
  const byte = (/** @type {number} */ i) => (bytes.length ? bytes[i % bytes.length] : 0);
  const hue = ((byte(0) << 8) | byte(1)) % 360;
  const half = Math.ceil(GRID / 2);
  /** @type {boolean[][]} */
  const cells = [];
  for (let row = 0; row < GRID; row++) {
    const left = Array.from({ length: half }, (_, col) => (byte(2 + row * half + col) & 1) === 1);
    cells.push([...left, ...left.slice(0, GRID - half).reverse()]);
  }
  return { hue, cells };
}

/**
 * The identicon of an address as an inline SVG, decorative (hidden from screen readers:
 * the name or address beside it is what is read).
 * @param {string} address
 * @param {number} [size] CSS pixels
 * @returns {SVGSVGElement}
 */
export function identicon(address, size = 20) {
  const { hue, cells } = identiconPattern(address);
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${GRID + 1} ${GRID + 1}`);
  svg.setAttribute('width', String(size));
  svg.setAttribute('height', String(size));
  svg.setAttribute('class', 'identicon');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.dataset.address = address;
  const back = document.createElementNS(SVG, 'rect');
  back.setAttribute('width', String(GRID + 1));
  back.setAttribute('height', String(GRID + 1));
  back.setAttribute('rx', '1');
  back.setAttribute('fill', `hsl(${hue} 45% 92%)`);
  svg.appendChild(back);
  const ink = `hsl(${hue} 60% 38%)`;
  cells.forEach((row, y) =>
    row.forEach((filled, x) => {
      if (!filled) return;
      const cell = document.createElementNS(SVG, 'rect');
      cell.setAttribute('x', String(x + 0.5));
      cell.setAttribute('y', String(y + 0.5));
      cell.setAttribute('width', '1');
      cell.setAttribute('height', '1');
      cell.setAttribute('fill', ink);
      svg.appendChild(cell);
    }),
  );
  return svg;
}

/** @type {Map<string, Promise<Profile>>} */
const profiles = new Map();
/** The profiles that have arrived, for text that cannot wait (a status line, a title). */
/** @type {Map<string, Profile>} */
const known = new Map();

/**
 * A player's display name if the page has it already, else null (ask `profileOf`).
 * @param {string} address
 */
export function knownName(address) {
  return known.get(address.toLowerCase())?.name ?? null;
}

/**
 * A player's profile, fetched once per page load (a failure is not kept, so the next
 * asks again).
 * @param {string} address
 * @returns {Promise<Profile>}
 */
export function profileOf(address) {
  const key = address.toLowerCase();
  let found = profiles.get(key);
  if (!found) {
    found = api('GET', `/api/players/${key}`, undefined, { auth: false }).then(
      (/** @type {{ name?: string | null, bot?: boolean }} */ p) => ({ name: p.name ?? null, bot: p.bot === true }),
    );
    found.then((p) => known.set(key, p), () => profiles.delete(key));
    profiles.set(key, found);
  }
  return found;
}

/**
 * Keeps a profile the page already has (a player view, or the answer to a rename), so
 * every label shows it without asking the server.
 * @param {string} address
 * @param {Profile} profile
 */
export function rememberProfile(address, profile) {
  const p = { name: profile.name ?? null, bot: profile.bot === true };
  profiles.set(address.toLowerCase(), Promise.resolve(p));
  known.set(address.toLowerCase(), p);
}

/**
 * A player as every list shows them: identicon, display name (when any), short address,
 * and a "bot" badge. With `profile` it is drawn at once; without, the address shows at
 * once and the name and badge follow when the profile arrives.
 * @param {string} address
 * @param {{ profile?: Profile | null, link?: boolean, size?: number }} [options]
 *   link: the label is a link to the player's page (default true)
 * @returns {HTMLElement}
 */
export function playerLabel(address, options = {}) {
  const { link = true, size = 20 } = options;
  const name = h('span', { class: 'player-label-name' });
  const badge = h('span', { class: 'player-label-badge' });
  const label = link
    ? h('a', { class: 'player-label', href: `/player/${address}`, title: address }, identicon(address, size), name, h('span', { class: 'mono player-label-address', text: shortAddress(address) }))
    : h('span', { class: 'player-label', title: address }, identicon(address, size), name, h('span', { class: 'mono player-label-address', text: shortAddress(address) }));
  const wrap = h('span', { class: 'player-id' }, label, badge);
  /** @param {Profile} p */
  const fill = (p) => {
    name.textContent = p.name ?? '';
    name.hidden = !p.name;
    label.classList.toggle('has-name', Boolean(p.name));
    badge.replaceChildren(...(p.bot ? [botBadge()] : []));
  };
  if (options.profile) fill(options.profile);
  else {
    name.hidden = true;
    profileOf(address).then(fill, () => {});
  }
  return wrap;
}

/** The badge beside a bot. */
export function botBadge() {
  return h('span', { class: 'tag tag-bot', title: 'An agent plays this account', text: 'bot' });
}
