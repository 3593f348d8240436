// @ts-check
/**
 * Formatting and parsing of what the page shows: hex, amounts, addresses, durations.
 * @module
 */

/** Minor units per coin: amounts travel as whole minor units (decimal strings). */
export const UNITS_PER_COIN = 1_000_000n;
const DECIMALS = 6;

/**
 * Lowercase hex of bytes.
 * @param {Uint8Array} bytes
 */
export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Bytes of a hex string (an even number of hex digits, either case).
 * @param {string} text
 * @returns {Uint8Array}
 */
export function fromHex(text) {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) {
    throw new Error('not a hex string');
  }
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/**
 * An amount in minor units (a decimal string or bigint) as coins: at least two decimals,
 * at most six, with a real minus sign for debits. `1800000` → `1.80`.
 * @param {string | bigint} minor
 * @param {{ sign?: boolean }} [options] sign: show `+` on credits
 */
export function formatAmount(minor, options = {}) {
  let v = typeof minor === 'bigint' ? minor : BigInt(minor);
  const negative = v < 0n;
  if (negative) v = -v;
  const whole = v / UNITS_PER_COIN;
  let frac = (v % UNITS_PER_COIN).toString().padStart(DECIMALS, '0').replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  const grouped = whole.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const sign = negative ? '\u2212' : options.sign && v > 0n ? '+' : '';
  return `${sign}${grouped}.${frac}`;
}

/**
 * What a balance short of an amount says, in coins: one sentence, the amount, the balance
 * (when known) and what to do.
 * @param {bigint} needed minor units
 * @param {bigint | null} balance minor units
 */
export function notEnoughText(needed, balance) {
  const have = balance === null ? '' : ` and your balance is ${formatAmount(balance)}`;
  return `Not enough: this needs ${formatAmount(needed)}${have}. Lower the amount or get a deposit first.`;
}

/**
 * Parses coins typed by a person (`1`, `0.5`, `2.25`) into minor units. Refuses anything
 * else with a message that says what to type.
 * @param {string} text
 * @returns {bigint}
 */
export function parseAmount(text) {
  const t = text.trim().replace(/,/g, '');
  if (t === '') return 0n;
  const m = /^(\d+)(?:\.(\d*))?$/.exec(t);
  if (!m) throw new Error('Type an amount such as 1 or 0.25.');
  const frac = m[2] ?? '';
  if (frac.length > DECIMALS) throw new Error(`Amounts have at most ${DECIMALS} decimals.`);
  return BigInt(m[1]) * UNITS_PER_COIN + BigInt(frac.padEnd(DECIMALS, '0') || '0');
}

/**
 * `0x1234…abcd`: an address short enough for a line, still recognisable.
 * @param {string} address
 */
export function shortAddress(address) {
  return address.length > 14 ? `${address.slice(0, 6)}\u2026${address.slice(-4)}` : address;
}

/** Whether a string is an address: 0x and 64 hex digits. @param {string} text */
export function isAddress(text) {
  return /^0x[0-9a-fA-F]{64}$/.test(text.trim());
}

/**
 * A countdown: `0:42`, `1:05`, `1:02:03`; never negative.
 * @param {number} ms
 */
export function formatCountdown(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** The display name of a game. @param {string} game */
export function gameName(game) {
  return game === 'sos' ? 'SOS' : 'Tic-tac-toe';
}

/**
 * Standard competition ranking ("1, 1, 3"): equal keys share a rank, and the next rank
 * skips as many places as were shared. `keys` are in ranking order.
 * @param {number[]} keys
 * @returns {number[]}
 */
export function competitionRanks(keys) {
  return keys.map((key) => keys.indexOf(key) + 1);
}

/** A moment in the user's locale: date and time, short. @param {number} ms */
export function formatWhen(ms) {
  return new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(ms));
}
