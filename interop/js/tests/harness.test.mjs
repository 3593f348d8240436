// The harness itself: a server starts, a player logs in and is credited.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { startServer } from '../harness.mjs';

test('a new player is logged in and credited', async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const player = await server.newPlayer({ deposit: 2_000_000 });
  const me = await server.request('GET', '/api/me', undefined, player.token);
  assert.equal(me.address, player.address);
  assert.equal(BigInt(me.balance), 2_000_000n);
});
