// Starting and stopping a real `triad serve`: shared by the browser tests' harness
// (`e2e/lib/harness.mjs`) and the agent clients' harness (`interop/js/harness.mjs`). Plain
// Node, no packages, so either can import it.

import { spawn } from 'node:child_process';
import path from 'node:path';

/**
 * Runs `bin args… --addr addr` in `dir` (its HOME too, with no key file of its own).
 * Resolves with `{child, url}` once the server prints where it listens; rejects with its
 * standard error if it exits first or takes more than 20 s. `logs` copies its log to ours.
 */
export function spawnServer(bin, args, { dir, addr = '127.0.0.1:0', logs = false }) {
  const child = spawn(bin, [...args, '--addr', addr], {
    cwd: dir,
    env: { ...process.env, TRIAD_LOG: process.env.TRIAD_LOG ?? 'warn', HOME: dir, TRIAD_KEY_FILE: path.join(dir, 'no-key.json') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
    if (logs) process.stderr.write(d);
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`triad serve did not start in 20 s:\n${stderr}`)), 20_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`triad serve exited (${code}) before listening; is ${bin} built?\n${stderr}`));
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${bin}: ${e.message}; build it with cargo build -p triad or set TRIAD_BIN`));
    });
  });
}

/** Stops a server: SIGTERM (a graceful shutdown), then SIGKILL after 8 s. */
export async function stopServer(child) {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 8000))]);
  if (child.exitCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * A JSON request to the server at `url`; throws with the API's answer (its `status` and
 * parsed `body` on the error) on an error status.
 */
export async function requestJson(url, method, pathname, body, token) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(url + pathname, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const json = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const error = new Error(`${method} ${pathname}: ${response.status} ${text}`);
    error.status = response.status;
    error.body = json;
    throw error;
  }
  return json;
}
