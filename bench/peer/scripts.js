'use strict';
// The seeded move scripts that both Triad's `triad bench` and this peer's load generator
// play, so that the two servers are measured on the very same games.
//
// Game i plays the cells of a Fisher-Yates shuffle of 0..8 in order (player "0" on even
// plies, "1" on odd ones) until the game ends. The shuffle draws from mulberry32, seeded
// with (seed * 1000003 + i) mod 2^32. `triad bench --dump-moves N` prints the same lines
// as `node loadgen.js --dump-moves N`; Triad's tests compare the two for several seeds.

const { isVictory, isDraw } = require('./game');

/** mulberry32: a generator of numbers in [0, 1) from a 32-bit state. */
function mulberry32(seed) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Game `index` of `seed`: its cells in the order played, and how the tutorial's rules end it. */
function script(seed, index) {
  const next = mulberry32((Math.imul(seed, 1000003) + index) >>> 0);
  const order = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  for (let k = 8; k > 0; k--) {
    const j = Math.floor(next() * (k + 1));
    [order[k], order[j]] = [order[j], order[k]];
  }
  const cells = Array(9).fill(null);
  for (let ply = 0; ply < 9; ply++) {
    const player = String(ply % 2);
    cells[order[ply]] = player;
    const played = order.slice(0, ply + 1);
    if (isVictory(cells)) return { cells: played, result: { winner: player } };
    if (isDraw(cells)) return { cells: played, result: { draw: true } };
  }
  throw new Error('nine marks always end the game');
}

/** One line of `--dump-moves`: {"game":i,"cells":[…],"result":{…}}. */
function dumpLine(seed, index) {
  return JSON.stringify({ game: index, ...script(seed, index) });
}

module.exports = { script, dumpLine };
