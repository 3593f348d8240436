// The harness for the official JavaScript clients' tests: a real `triad serve` per test, on
// a free port of 127.0.0.1 with a fresh SQLite file in a temporary directory and an owner
// key made here (so tests can deposit). Players are keys made with `triad keygen` and logged
// in with `triad login`, as a user of the CLI would.
//
// TRIAD_BIN is the binary under test (default: target/debug/triad from the repository root).
// TRIAD_INTEROP_LOGS=1 copies the servers' logs to standard error.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { requestJson, spawnServer, stopServer } from '../../e2e/lib/serve.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TRIAD_BIN = process.env.TRIAD_BIN
  ? path.resolve(process.env.TRIAD_BIN)
  : path.join(ROOT, 'target', 'debug', 'triad');

const run = promisify(execFile);

/** What `triad ARGS` prints, trimmed; throws with its standard error. */
export async function triad(args, env = process.env) {
  try {
    const { stdout } = await run(TRIAD_BIN, args, { env, timeout: 60_000 });
    return stdout.trim();
  } catch (e) {
    throw new Error(`triad ${args.join(' ')} failed: ${e.stderr || e.message}`);
  }
}

/** Starts `triad serve` with a fresh database; `args` are more flags. */
export async function startServer({ args = [] } = {}) {
  const server = new Server(mkdtempSync(path.join(tmpdir(), 'triad-interop-')));
  await server.start(args);
  return server;
}

export class Server {
  constructor(dir) {
    this.dir = dir;
    this.bin = TRIAD_BIN;
    this.url = '';
    this.child = null;
    this.players = 0;
    this.env = {
      ...process.env,
      HOME: dir,
      TRIAD_LOG: process.env.TRIAD_LOG ?? 'warn',
      TRIAD_KEY_FILE: path.join(dir, 'no-key.json'),
    };
  }

  async start(extra) {
    const ownerKey = path.join(this.dir, 'owner.json');
    const ownerAddress = await triad(['keygen', '--key-file', ownerKey], this.env);
    const args = [
      'serve',
      '--database', path.join(this.dir, 'triad.db'),
      '--owner', ownerAddress,
      '--rate-per-ip', '100000',
      '--rate-burst', '100000',
      '--rate-per-address', '100000',
      ...extra,
    ];
    const { child, url } = await spawnServer(TRIAD_BIN, args, { dir: this.dir, logs: !!process.env.TRIAD_INTEROP_LOGS });
    this.child = child;
    this.url = url;
    this.owner = { keyFile: ownerKey, address: ownerAddress, token: await this.login(ownerKey) };
  }

  /** A bearer token for the key in `keyFile`, by `triad login`. */
  login(keyFile) {
    return triad(['login', '--server', this.url, '--key-file', keyFile], this.env);
  }

  /** A new key, logged in; `deposit` minor units credited by the owner. */
  async newPlayer({ deposit = 0 } = {}) {
    this.players += 1;
    const keyFile = path.join(this.dir, `player-${this.players}.json`);
    const address = await triad(['keygen', '--key-file', keyFile], this.env);
    const player = { keyFile, address, token: await this.login(keyFile) };
    if (deposit) await this.request('POST', '/api/ledger/deposit', { to: address, amount: String(deposit) }, this.owner.token);
    return player;
  }

  /** A JSON request; throws with the API's answer on an error status. */
  request(method, pathname, body, token) {
    return requestJson(this.url, method, pathname, body, token);
  }

  async stop() {
    await stopServer(this.child);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
