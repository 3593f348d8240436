// Triad's A2A server, driven by the official JavaScript client (@a2a-js/sdk 1.3.0): it
// resolves the agent card, picks the 1.0 JSON-RPC interface, and plays a whole game of
// tic-tac-toe against the computer (SendMessage), reads the task (GetTask), then plays a
// game of SOS streamed (SendStreamingMessage) and calls it off (CancelTask); a refused
// move comes back with Triad's stable code. Its 0.3-compatibility transport (legacyCompat)
// plays a game through the card's 0.3 interface with `message/send`.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Role, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';

import { startServer } from '../harness.mjs';

/**
 * A client acting as `token`; `sent` collects the JSON-RPC methods and A2A-Version headers.
 * With `legacy`, the SDK's 0.3-compatibility transport, given the card's 0.3 interface
 * alone (of two interfaces at one URL, the SDK takes the 1.0 one).
 */
async function clientFor(url, token, sent, legacy = false) {
  const fetchImpl = (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${token}`);
    if (init.body) {
      sent.push([JSON.parse(init.body).method, headers.get('A2A-Version')]);
    }
    return fetch(input, { ...init, headers });
  };
  const legacyCompat = { enabled: legacy };
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat })],
  });
  const factory = new ClientFactory(options);
  if (!legacy) {
    return factory.createFromUrl(url);
  }
  const card = await new DefaultAgentCardResolver({ legacyCompat }).resolve(url);
  const interfaces = card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3');
  assert.equal(interfaces.length, 1, 'the card offers a 0.3 interface');
  return factory.createFromAgentCard({ ...card, supportedInterfaces: interfaces });
}

function message(app, action, payload, task) {
  return {
    message: {
      messageId: `m-${Math.random().toString(36).slice(2)}`,
      role: Role.ROLE_USER,
      taskId: task?.id ?? '',
      contextId: task?.contextId ?? '',
      parts: [
        { content: { $case: 'text', value: 'my move' } },
        { content: { $case: 'data', value: { appId: app, action, payload } } },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
  };
}

/** The app actions of a message's parts, as [action, payload]. */
function actions(parts) {
  return (parts ?? [])
    .filter((p) => p.content?.$case === 'data')
    .map((p) => [p.content.value.action, p.content.value.payload]);
}

/** One player's board: hears the computer, picks a random empty cell. */
function player(app, role) {
  const me = { board: Array(9).fill(''), seq: 0, result: null };
  me.hear = (list) => {
    for (const [action, payload] of list) {
      if (action === 'move') {
        me.board[payload.position] = payload.mark;
        me.seq = payload.seq;
        assert.deepEqual(payload.board, me.board);
      } else if (action === 'result') {
        me.result = payload;
      }
    }
  };
  me.move = () => {
    const empty = me.board.flatMap((c, i) => (c === '' ? [i] : []));
    const cell = empty[Math.floor(Math.random() * empty.length)];
    const mark = app === 'tic-tac-toe' ? role : Math.random() < 0.5 ? 'S' : 'O';
    me.board[cell] = mark;
    me.seq += 1;
    return { seq: me.seq, replyTo: me.seq - 1, position: cell, mark, board: [...me.board] };
  };
  return me;
}

/** The task of a SendMessage result (the SDK hands back the task itself). */
function taskOf(result) {
  return result.payload?.$case === 'task' ? result.payload.value : result.task ?? result;
}

test('a whole game of tic-tac-toe, then SOS streamed and canceled', async () => {
  const server = await startServer();
  try {
    const alice = await server.newPlayer();
    const sent = [];
    const client = await clientFor(server.url, alice.token, sent);
    const me = player('tic-tac-toe', 'O');
    let task = taskOf(await client.sendMessage(message('tic-tac-toe', 'propose', { seq: 0, role: 'O' })));
    assert.match(task.id, /^triad-task-\d+$/);
    assert.match(task.contextId, /^triad-match-\d+$/);
    const answer = actions(task.status.message.parts);
    assert.equal(answer[0][0], 'accept');
    me.hear(answer);
    while (task.status.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      task = taskOf(await client.sendMessage(message('tic-tac-toe', 'move', me.move(), task)));
      me.hear(actions(task.status.message?.parts));
    }
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.ok(me.result, 'the last answer carries the result');
    // The perfect computer never loses.
    assert.notEqual(me.result.winner, 'O');
    const read = await client.getTask({ id: task.id, tenant: '' });
    assert.equal(read.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(actions(read.artifacts[0].parts).at(-1), ['result', me.result]);

    // SOS, streamed: the task as it took the propose, then the state it came to.
    const events = [];
    for await (const event of client.sendMessageStream(message('sos', 'propose', { seq: 0, role: 'first' }))) {
      events.push(event);
    }
    const kinds = events.map((e) => e.payload?.$case ?? e.kind);
    assert.deepEqual(kinds, ['task', 'statusUpdate']);
    const sos = events[0].payload.value;
    assert.equal(events[1].payload.value.status.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    // A refused move: a board that is not the game's. Triad's code, and nothing changes.
    const before = await client.getTask({ id: sos.id, tenant: '' });
    const tampered = { seq: 1, replyTo: 0, position: 0, mark: 'S', board: ['S', 'O', '', '', '', '', '', '', ''] };
    await assert.rejects(client.sendMessage(message('sos', 'move', tampered, sos)), (e) => {
      const info = (e.data ?? []).find((d) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');
      assert.equal(info?.metadata?.code, '223', JSON.stringify(e.data));
      assert.equal(info.metadata.error, 'state_conflict');
      return true;
    });
    const after = await client.getTask({ id: sos.id, tenant: '' });
    assert.deepEqual(actions(after.artifacts[0].parts), actions(before.artifacts[0].parts));
    const canceled = await client.cancelTask({ id: sos.id, tenant: '', metadata: undefined });
    assert.equal(canceled.status.state, TaskState.TASK_STATE_CANCELED);

    const methods = new Set(sent.map(([m]) => m));
    assert.deepEqual([...methods].sort(), ['CancelTask', 'GetTask', 'SendMessage', 'SendStreamingMessage']);
    assert.deepEqual([...new Set(sent.map(([, v]) => v))], ['1.0']);
  } finally {
    await server.stop();
  }
});

test('a whole game of tic-tac-toe through the 0.3-compatibility transport', async () => {
  const server = await startServer();
  try {
    const bob = await server.newPlayer();
    const sent = [];
    const client = await clientFor(server.url, bob.token, sent, true);
    const me = player('tic-tac-toe', 'X');
    let reply = await client.sendMessage(message('tic-tac-toe', 'propose', { seq: 0, role: 'X' }));
    // A 0.3 answer: the agent's message itself.
    const answer = reply.payload?.$case === 'message' ? reply.payload.value : reply;
    assert.equal(answer.role, Role.ROLE_AGENT);
    assert.match(answer.contextId, /^triad-match-\d+$/);
    assert.deepEqual(actions(answer.parts), [['accept', { seq: 0, role: 'O' }]]);
    const context = { id: '', contextId: answer.contextId };
    while (!me.result) {
      reply = await client.sendMessage(message('tic-tac-toe', 'move', me.move(), context));
      const m = reply.payload?.$case === 'message' ? reply.payload.value : reply;
      assert.equal(m.contextId, answer.contextId);
      me.hear(actions(m.parts));
    }
    assert.notEqual(me.result.winner, 'X');
    assert.deepEqual([...new Set(sent.map(([m]) => m))], ['message/send']);
    assert.deepEqual([...new Set(sent.map(([, v]) => v))], ['0.3']);
  } finally {
    await server.stop();
  }
});
