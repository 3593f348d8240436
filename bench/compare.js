'use strict';
// Merges one compare.sh run (the peer's results and every `triad bench` point) into one
// report in `triad bench`'s format, and prints the table of ratios Triad / peer.
//   node bench/compare.js <out dir>   → <out dir>/combined.json, table on stdout
const fs = require('fs');
const path = require('path');

const dir = process.argv[2];
if (!dir) { console.error('usage: node bench/compare.js <out dir>'); process.exit(2); }
const files = fs.readdirSync(dir);

const series = [];
const bySeries = {};
for (const f of files.filter((f) => /^triad-.*\.json$/.test(f)).sort()) {
  const r = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  const rep = Number((f.match(/-r(\d+)\.json$/) || [])[1] || 1);
  for (const s of r.series) {
    if (!bySeries[s.label]) { bySeries[s.label] = { label: s.label, points: [] }; series.push(bySeries[s.label]); }
    for (const p of s.points) bySeries[s.label].points.push({ ...p, repeat: rep });
  }
}
// The peer: bench/peer/loadgen.js's reports (peer-c<C>-r<R>.json, `triad bench`'s format),
// or one peer.json in the format of the older runs' results (bench/results/run1..run17).
// SKIP_PEER=1 leaves neither: Triad's tables only, no ratios.
const peer = { label: 'boardgame.io (in memory)', points: [] };
for (const f of files.filter((f) => /^peer-c\d+-r\d+\.json$/.test(f)).sort()) {
  const rep = Number(f.match(/-r(\d+)\.json$/)[1]);
  const text = fs.readFileSync(path.join(dir, f), 'utf8').trim();
  if (!text) { console.error(`${f} is empty: that peer run failed`); continue; }
  const r = JSON.parse(text);
  peer.label = r.series[0].label;
  for (const p of r.series[0].points) peer.points.push({ ...p, repeat: rep });
}
const legacyFile = path.join(dir, 'peer.json');
const legacy = fs.existsSync(legacyFile) ? JSON.parse(fs.readFileSync(legacyFile, 'utf8')) : null;
for (const r of legacy ? legacy.results : []) {
  if (r.error) { console.error(`peer run failed: c=${r.run.concurrency} rep=${r.run.rep}: ${r.error}`); continue; }
  peer.points.push({
    concurrency: r.run.concurrency, repeat: r.run.rep, games: r.params.games,
    warmup_ok: r.warmup_ok, warmup_failed: r.warmup_failed, games_ok: r.games_ok,
    games_failed: r.games_failed, errors: r.errors, moves: r.moves, wall_s: r.wall_s,
    games_per_s: r.games_per_s, moves_per_s: r.moves_per_s, move_latency_ms: r.move_latency_ms,
    setup_ms: r.connect_ms, game_ms: r.game_ms,
    server: { cpu_s: r.server.cpu_s, cpu_util: r.server.cpu_util, cpu_ms_per_game: r.server.cpu_ms_per_game,
      rss_start_mb: r.server.rss_start_mb, rss_peak_measured_mb: r.server.rss_peak_measured_mb,
      vmhwm_mb: r.server.vmhwm_mb },
    other_cores: r.background.other_cores, loadgen_cpu_s: r.loadgen.cpu_s,
  });
}
const peerRaw = peer.points.length ? { meta: legacy ? legacy.meta : { tool: 'bench/peer/loadgen.js' } } : null;
if (!peerRaw) console.error(`no peer results in ${dir}: Triad's figures only, no ratios`);
if (peerRaw) series.push(peer);
fs.writeFileSync(path.join(dir, 'combined.json'), JSON.stringify({
  tool: 'bench/compare.js', params: { peer_meta: peerRaw ? peerRaw.meta : null }, series }, null, 2) + '\n');

// Mean over the repeats, with the spread (min-max) to show the noise.
const metrics = {
  'games/s': (p) => p.games_per_s,
  'p50 ms': (p) => p.move_latency_ms.p50,
  'p99 ms': (p) => p.move_latency_ms.p99,
  'CPU ms/game': (p) => p.server && p.server.cpu_ms_per_game,
  'peak RSS MB': (p) => p.server && p.server.vmhwm_mb,
  'other cores': (p) => p.other_cores,
};
// A point with failed games is listed below the tables, never averaged in.
function stat(points, c, f) {
  const v = points.filter((p) => p.concurrency === c && !p.games_failed).map(f).filter((x) => typeof x === 'number');
  if (!v.length) return null;
  return { mean: v.reduce((a, b) => a + b, 0) / v.length, min: Math.min(...v), max: Math.max(...v), n: v.length };
}
const fmt = (x) => (x === null ? '-' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const cell = (s) => (s ? (s.n > 1 ? `${fmt(s.mean)} (${fmt(s.min)}–${fmt(s.max)})` : fmt(s.mean)) : '-');
const concs = [...new Set(series.flatMap((s) => s.points.map((p) => p.concurrency)))].sort((a, b) => a - b);
const failed = series.flatMap((s) => s.points.filter((p) => p.games_failed > 0).map((p) => `${s.label} c=${p.concurrency} r=${p.repeat}: ${p.games_failed} failed ${JSON.stringify(p.errors)}`));

for (const s of series) {
  console.log(`\n### ${s.label}: mean of repeats (min–max)\n`);
  console.log(`| concurrency | ${Object.keys(metrics).join(' | ')} | failed games |`);
  console.log(`|---:|${Object.keys(metrics).map(() => '---:').join('|')}|---:|`);
  for (const c of concs) {
    const pts = s.points.filter((p) => p.concurrency === c);
    if (!pts.length) continue;
    const failedGames = pts.reduce((a, p) => a + (p.games_failed || 0), 0);
    console.log(`| ${c} | ${Object.values(metrics).map((f) => cell(stat(s.points, c, f))).join(' | ')} | ${failedGames} |`);
  }
}
for (const s of peerRaw ? series.filter((s) => s !== peer) : []) {
  console.log(`\n### Ratios ${s.label} / ${peer.label} (means; CPU and latency: lower is better, games/s: higher is better)\n`);
  const keys = ['games/s', 'p50 ms', 'p99 ms', 'CPU ms/game', 'peak RSS MB'];
  console.log(`| concurrency | ${keys.join(' | ')} |`);
  console.log(`|---:|${keys.map(() => '---:').join('|')}|`);
  for (const c of concs) {
    const r = keys.map((k) => {
      const a = stat(s.points, c, metrics[k]);
      const b = stat(peer.points, c, metrics[k]);
      return a && b && b.mean ? `${fmt(a.mean / b.mean)}×` : '-';
    });
    console.log(`| ${c} | ${r.join(' | ')} |`);
  }
}
if (failed.length) { console.log('\nFailed games:'); for (const f of failed) console.log(`- ${f}`); }
