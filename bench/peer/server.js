'use strict';
// The peer of Triad's benchmark: a boardgame.io server hosting the tutorial tic-tac-toe
// (game.js), its matches kept in memory (boardgame.io's default), on 127.0.0.1 only.
//
//   node server.js [--port 0] [--max-lifetime-s 3600]
//
// When it listens it prints one line of JSON, {"ready":true,"port":P,"pid":N,"node":V}.
// It exits on SIGTERM or SIGINT, when the process that started it goes away, and after
// --max-lifetime-s whatever happens, so that no benchmark leaves one behind.

const { Server, Origins } = require('boardgame.io/server');
const { TicTacToe } = require('./game');
const { options, exitWithParent } = require('./lib');

const opts = options(process.argv.slice(2), { port: '0', 'max-lifetime-s': '3600' });

const server = Server({ games: [TicTacToe], origins: [Origins.LOCALHOST] });

// Server.run() listens through koa-socket-2, which binds every interface: bind loopback.
server.app.listen = (port, callback) => server.app.server.listen(port, '127.0.0.1', callback);

server.run({
  port: Number(opts.port),
  callback: () => {
    const { port } = server.app.server.address();
    process.stdout.write(`${JSON.stringify({ ready: true, port, pid: process.pid, node: process.version })}\n`);
  },
});

exitWithParent('server');
setTimeout(() => {
  console.error(`server: ${opts['max-lifetime-s']} s is its maximum lifetime, exiting`);
  process.exit(3);
}, Number(opts['max-lifetime-s']) * 1000).unref();
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
