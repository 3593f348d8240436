// The solver in the page (web/js/solver.js), which plays the computer and reviews games
// with no server: what it weighs, and how long its first use of each game takes (the
// whole table, solved then). Run with Node, whose V8 is the engine of Chromium's pages:
//
//   node bench/solver-page.mjs            # RUNS=30 by default
//
// Each run imports a fresh copy of the module (its tables empty, its code cold), as a
// page that has just loaded it.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';

const RUNS = Number(process.env.RUNS ?? 30);
const web = new URL('../web/js/', import.meta.url);

const weigh = (name) => {
  const bytes = readFileSync(new URL(name, web));
  return { file: `web/js/${name}`, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const sizes = [weigh('solver.js'), weigh('rules.js')];
const first = {};
const warm = {};
for (const game of ['tic-tac-toe', 'sos']) {
  const cold = [];
  let solver;
  for (let i = 0; i < RUNS; i++) {
    solver = await import(new URL(`solver.js?run=${game}-${i}`, web).href);
    const t0 = performance.now();
    solver.valueOf(game, '---------');
    cold.push(performance.now() - t0);
  }
  first[game] = { median_ms: median(cold), min_ms: Math.min(...cold), max_ms: Math.max(...cold) };
  // Once solved: the analysis of the empty board (every move's value), as the computer
  // asks before each move.
  const n = 10_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) solver.analyze(game, '---------');
  warm[game] = { analyze_us: ((performance.now() - t0) * 1000) / n };
}
console.log(JSON.stringify({ node: process.version, runs: RUNS, sizes, first_use: first, solved: warm }, null, 2));
