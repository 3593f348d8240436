'use strict';
// The load generator of Triad's peer benchmark: it plays complete tic-tac-toe games
// against the boardgame.io server (server.js) the way boardgame.io's own clients do, and
// measures the server as `triad bench` measures Triad.
//
//   node loadgen.js --url http://127.0.0.1:PORT [--server-pid PID]
//        [--concurrency 10] [--games 1000] [--warmup max(concurrency,100)] [--seed 1]
//        [--label NAME] [--deadline-s 300] [--game-timeout-s 60]
//   node loadgen.js --dump-moves N [--seed 1]      # the move scripts, one JSON line each
//
// One game: the Lobby API creates a match and joins both players (each gets its
// credentials); each player opens its own socket.io connection with boardgame.io's
// `Client` and `SocketIO` transport and syncs; then they play game i of the seeded move
// scripts (scripts.js), the mover calling `moves.clickCell`. A move's latency runs from
// that call until the opponent's client sees the cell filled. The game passes when the
// last move's opponent sees the ending that the script predicts.
//
// --warmup games (indices from 1,000,000, not measured) come first, then games
// 0..games-1 with --concurrency of them in flight. The result, printed as the last line
// of stdout, is a report in `triad bench`'s format (one series, one point), so that
// bench/compare.js reads both alike: setup_ms runs from the lobby's first call until both
// players are synced, game_ms from there until the end.

const { performance } = require('perf_hooks');
const os = require('os');
const { LobbyClient, Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { TicTacToe } = require('./game');
const { script, dumpLine } = require('./scripts');
const { options, cpuSeconds, statusMb, machineSeconds, exitWithParent } = require('./lib');

const opts = options(process.argv.slice(2), {
  seed: '1', concurrency: '10', games: '1000', label: 'boardgame.io (in memory)',
  'deadline-s': '300', 'game-timeout-s': '60',
});
const SEED = Number(opts.seed) >>> 0;

if (opts['dump-moves'] !== undefined) {
  const lines = [];
  for (let i = 0; i < Number(opts['dump-moves']); i++) lines.push(dumpLine(SEED, i));
  process.stdout.write(lines.map((l) => `${l}\n`).join(''));
  process.exit(0);
}

const URL_ = (opts.url || '').replace(/\/$/, '');
if (!URL_) {
  console.error('loadgen: --url is required');
  process.exit(2);
}
const SERVER_PID = opts['server-pid'] ? Number(opts['server-pid']) : null;
const CONCURRENCY = Number(opts.concurrency);
const GAMES = Number(opts.games);
const WARMUP = opts.warmup !== undefined ? Number(opts.warmup) : Math.max(CONCURRENCY, 100);
const GAME_TIMEOUT_MS = Number(opts['game-timeout-s']) * 1000;
const now = () => performance.now();

const lobby = new LobbyClient({ server: URL_ });
// One engine.io connection per player (`forceNew`), as two browsers would have, on the
// WebSocket transport from the start, and no reconnection: a dropped game fails.
const multiplayer = SocketIO({
  server: URL_,
  socketOpts: { forceNew: true, transports: ['websocket'], reconnection: false },
});

// ------------------------------------------------------------------------ one game --

/** A player's client; `onChange` runs on every state it receives. */
function player(matchID, playerID, credentials, onChange) {
  const client = Client({ game: TicTacToe, numPlayers: 2, multiplayer, matchID, playerID, credentials, debug: false });
  const p = { id: playerID, state: null, client };
  client.subscribe((state) => {
    if (state) p.state = state;
    onChange(p);
  });
  return p;
}

/** Every game still running, to abort at the deadline. */
const running = new Set();

/**
 * Plays game `index`; resolves to its measures ({setupMs, gameMs, latencies}), or
 * rejects with an Error whose message starts with the stage that failed.
 */
async function playGame(index) {
  const { cells, result } = script(SEED, index);
  const t0 = now();
  const { matchID } = await lobby.createMatch(TicTacToe.name, { numPlayers: 2 });
  const joined = [];
  for (const playerID of ['0', '1']) {
    joined.push(await lobby.joinMatch(TicTacToe.name, matchID, { playerID, playerName: `p${playerID}` }));
  }
  return new Promise((resolve, reject) => {
    let tReady = null;
    let ply = 0; // moves the opponent has seen so far
    let sent = null; // the move on its way: { by, cell, at }
    let done = false;
    const latencies = [];
    const players = [];
    const end = (error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      running.delete(abort);
      for (const p of players) p.client.stop();
      if (error) reject(new Error(error));
      else resolve({ setupMs: tReady - t0, gameMs: now() - tReady, latencies });
    };
    const abort = () => end('aborted');
    running.add(abort);
    const timer = setTimeout(() => end(tReady === null ? 'connect_timeout' : 'game_timeout'), GAME_TIMEOUT_MS);

    // The player whose turn it is sends the script's next move, on the next tick (not
    // inside the client's subscriber).
    const move = (p) => {
      if (sent || ply >= cells.length || p.id !== String(ply % 2)) return;
      const { ctx } = p.state;
      if (ctx.gameover || ctx.currentPlayer !== p.id) return;
      sent = { by: p.id, cell: cells[ply], at: 0 };
      setImmediate(() => {
        if (done) return;
        sent.at = now();
        p.client.moves.clickCell(sent.cell);
      });
    };

    const onChange = (p) => {
      if (done || !p.state) return;
      if (tReady === null) {
        // Both players hold their first state: the server already sends each of them
        // every update. (Waiting for `isConnected` in the match data instead can hang:
        // boardgame.io may drop one of the two players' concurrent metadata writes.)
        if (players.length === 2 && players.every((q) => q.state)) {
          tReady = now();
          move(players[0]);
        }
        return;
      }
      const { G, ctx } = p.state;
      if (sent && sent.at > 0 && p.id !== sent.by && G.cells[sent.cell] === sent.by) {
        latencies.push(now() - sent.at);
        sent = null;
        ply++;
        if (ply === cells.length) {
          const ok = ctx.gameover && (result.draw ? ctx.gameover.draw === true : ctx.gameover.winner === result.winner);
          return end(ok ? null : `wrong_result: ${JSON.stringify(ctx.gameover)}`);
        }
        if (ctx.gameover) return end(`early_gameover: ${JSON.stringify(ctx.gameover)}`);
      }
      move(p);
    };

    joined.forEach((j, i) => players.push(player(matchID, String(i), j.playerCredentials, onChange)));
    for (const p of players) p.client.start();
  });
}

// -------------------------------------------------------------------------- phases --

/** Plays games first..first+count-1 with CONCURRENCY in flight; what they measured. */
async function phase(first, count, deadline) {
  const sink = { ok: 0, failed: 0, moves: 0, errors: {}, samples: [], latency: [], setup: [], game: [] };
  let next = first;
  const worker = async () => {
    while (next < first + count && now() < deadline) {
      const index = next++;
      try {
        const g = await playGame(index);
        sink.ok++;
        sink.moves += g.latencies.length;
        sink.latency.push(...g.latencies);
        sink.setup.push(g.setupMs);
        sink.game.push(g.gameMs);
      } catch (e) {
        const stage = String(e.message).split(':')[0] || 'lobby';
        sink.failed++;
        sink.errors[stage] = (sink.errors[stage] || 0) + 1;
        if (sink.samples.length < 5) sink.samples.push(`game ${index}: ${e.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
  return sink;
}

const round = (x, places) => (Number.isFinite(x) ? Math.round(x * 10 ** places) / 10 ** places : null);

/** Nearest-rank percentiles in ms, as `triad bench` computes them. */
function summary(sample) {
  const s = Float64Array.from(sample).sort();
  const n = s.length;
  const at = (p) => (n ? round(s[Math.min(n, Math.max(1, Math.ceil((p / 100) * n))) - 1], 3) : null);
  const mean = n ? round(s.reduce((a, b) => a + b, 0) / n, 3) : null;
  return { n, mean, p50: at(50), p95: at(95), p99: at(99), max: n ? round(s[n - 1], 3) : null };
}

async function main() {
  const deadline = now() + Number(opts['deadline-s']) * 1000;
  const stop = setTimeout(() => { for (const abort of [...running]) abort(); }, deadline - now());
  const warm = WARMUP > 0 ? await phase(1000000, WARMUP, deadline) : { ok: 0, failed: 0 };

  const machine0 = machineSeconds();
  const server0 = SERVER_PID ? cpuSeconds(SERVER_PID) : NaN;
  const self0 = process.cpuUsage();
  const rssStart = SERVER_PID ? statusMb(SERVER_PID, 'VmRSS') : NaN;
  let rssPeak = rssStart;
  const sampler = setInterval(() => { if (SERVER_PID) rssPeak = Math.max(rssPeak, statusMb(SERVER_PID, 'VmRSS')); }, 100);
  const t1 = now();
  const m = await phase(0, GAMES, deadline);
  const wall = (now() - t1) / 1000;
  clearInterval(sampler);
  clearTimeout(stop);

  const serverCpu = SERVER_PID ? cpuSeconds(SERVER_PID) - server0 : NaN;
  const selfUsage = process.cpuUsage(self0);
  const selfCpu = (selfUsage.user + selfUsage.system) / 1e6;
  const machine1 = machineSeconds();
  const point = {
    concurrency: CONCURRENCY, games: GAMES, warmup_ok: warm.ok, warmup_failed: warm.failed,
    games_ok: m.ok, games_failed: m.failed, errors: m.errors, error_samples: m.samples, moves: m.moves,
    wall_s: round(wall, 2), games_per_s: round(m.ok / wall, 2), moves_per_s: round(m.moves / wall, 2),
    move_latency_ms: summary(m.latency), setup_ms: summary(m.setup), game_ms: summary(m.game),
    server: SERVER_PID ? {
      cpu_s: round(serverCpu, 2), cpu_util: round(serverCpu / wall, 2),
      cpu_ms_per_game: m.ok ? round((serverCpu * 1000) / m.ok, 3) : null,
      rss_start_mb: round(rssStart, 2), rss_peak_measured_mb: round(rssPeak, 2),
      vmhwm_mb: round(statusMb(SERVER_PID, 'VmHWM'), 2),
    } : null,
    // Other processes' CPU during the phase, in cores (the machine's busy time minus the
    // server's and this process's): if it is not about 0, the run was contended.
    other_cores: round((machine1.busy - machine0.busy - (SERVER_PID ? serverCpu : 0) - selfCpu) / wall, 2),
    loadgen_cpu_s: round(selfCpu, 2),
  };
  const report = {
    tool: 'bench/peer/loadgen.js',
    params: {
      server: URL_, seed: SEED, games: GAMES, warmup: WARMUP, game_timeout_s: Number(opts['game-timeout-s']),
      flow: 'lobby create+join', client: 'boardgame.io Client + SocketIO', transport: 'websocket',
      node: process.version, steal_cores: round((machine1.steal - machine0.steal) / wall, 2),
      loadavg1: os.loadavg()[0],
    },
    series: [{ label: opts.label, points: [point] }],
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  // Let the sockets close, then exit whatever is still open.
  setTimeout(() => process.exit(m.failed || warm.failed ? 1 : 0), 200).unref();
}

exitWithParent('loadgen');
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
