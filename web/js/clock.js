// @ts-check
/**
 * The server's clock, as best the page knows it. Deadlines (a move's time limit, when a
 * wait may be cancelled) are in the server's time; the page learns the difference from
 * the WebSocket's `subscribed` message (`now_ms`), from the times of live events and from
 * the events a command returns, so countdowns stay right even when this device's clock is
 * off.
 *
 * Each sample is a lower bound: the server's clock read `serverMs` some time (the trip
 * here) before the page saw it. So the estimate is the largest offset seen over the last
 * few minutes: the sample with the shortest trip, while an old sample still ages out if
 * this device's clock is set back.
 * @module
 */

const WINDOW_MS = 5 * 60 * 1000;
/** @type {{ offset: number, seenAt: number }[]} */
let samples = [];
let offsetMs = 0;
/** @type {Set<() => void>} */
const listeners = new Set();

/**
 * Records that the server's clock read `serverMs` (about) now.
 * @param {number} serverMs
 */
export function syncClock(serverMs) {
  const now = Date.now();
  samples = samples.filter((s) => now - s.seenAt < WINDOW_MS);
  samples.push({ offset: serverMs - now, seenAt: now });
  const next = Math.max(...samples.map((s) => s.offset));
  // Ignore jitter below a few milliseconds; a real change (a jump) is applied at once.
  if (Math.abs(next - offsetMs) < 5) return;
  offsetMs = next;
  for (const fn of listeners) fn();
}

/**
 * How long from `now` until just after the next instant in step with `anchor` (every `ms`
 * from it, either way in time): 5 ms after it, so that a countdown read then has changed.
 * @param {number} now
 * @param {number} anchor
 * @param {number} ms
 */
export function untilNextTick(now, anchor, ms) {
  const since = (((now - anchor) % ms) + ms) % ms;
  return ms - since + 5;
}

/** The server's time now, in ms since the epoch. */
export function serverNow() {
  return Date.now() + offsetMs;
}

/**
 * Calls `fn` whenever the estimate changes; returns the function that stops it.
 * @param {() => void} fn
 */
export function onClockChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/**
 * Calls `fn` now and then every `ms` in step with `anchor` (by default the server's whole
 * seconds), and when the estimate changes, until stopped. A countdown to a deadline passes
 * the deadline as its anchor: its text (whole seconds left, rounded up) changes when the
 * time left crosses a whole second, which is in step with the deadline, not with the
 * clock's seconds. Ticking on the clock's seconds instead would show each number up to a
 * second too long, and the first one, right after a move, for up to two seconds.
 * @param {() => void} fn
 * @param {number} [ms]
 * @param {() => number} [anchor] a time (server ms) the ticks fall in step with
 * @returns {() => void} stop
 */
export function every(fn, ms = 1000, anchor = () => 0) {
  let stopped = false;
  /** @type {number} */
  let timer = 0;
  const tick = () => {
    if (stopped) return;
    fn();
    if (stopped) return;
    timer = window.setTimeout(tick, untilNextTick(serverNow(), anchor(), ms));
  };
  tick();
  const off = onClockChange(fn);
  return () => {
    stopped = true;
    window.clearTimeout(timer);
    off();
  };
}
