// Records the requests the official A2A JavaScript client (@a2a-js/sdk 1.3.0) sends to
// Triad's A2A endpoint, in 1.0 and through its 0.3-compatibility transport, byte for
// byte, into a2a-sdk-js-requests.json (see README.md).
// Run from interop/js (where the SDK is installed) against a fresh `triad serve`:
//
//     node ../../testdata/a2a-sdk-capture.mjs http://127.0.0.1:8080 TOKEN > ../../testdata/a2a-sdk-js-requests.json

import { Role } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';

const [url, token] = process.argv.slice(2);
const requests = [];
const fetchImpl = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${token}`);
  if (init.body) {
    requests.push({
      'a2a-version': headers.get('A2A-Version'),
      accept: headers.get('Accept'),
      'content-type': headers.get('Content-Type'),
      body: init.body,
    });
  }
  return fetch(input, { ...init, headers });
};
const legacyCompat = { enabled: true };
const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat })],
});
const client = await new ClientFactory(options).createFromUrl(url);
// The 0.3-compatibility transport: the card's 0.3 interface alone.
const card = await new DefaultAgentCardResolver({ legacyCompat }).resolve(url);
const legacy = await new ClientFactory(options).createFromAgentCard({
  ...card,
  supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3'),
});
const message = (action, payload, n, metadata) => ({
  message: {
    messageId: `m-${requests.length}`,
    role: Role.ROLE_USER,
    taskId: n ? `triad-task-${n}` : '',
    contextId: n ? `triad-match-${n}` : '',
    parts: [
      { content: { $case: 'text', value: 'hi' } },
      { content: { $case: 'data', value: { appId: 'tic-tac-toe', action, payload } } },
    ],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  },
});
const move = { seq: 1, replyTo: 0, position: 4, mark: 'X', board: ['', '', '', '', 'X', '', '', '', ''] };
// Match 1: propose, a move, GetTask, CancelTask.
await client.sendMessage(message('propose', { seq: 0, role: 'X' }, 0, { level: 'random' }));
await client.sendMessage(message('move', move, 1));
await client.getTask({ id: 'triad-task-1', tenant: '', historyLength: 5 });
await client.cancelTask({ id: 'triad-task-1', tenant: '', metadata: undefined });
// Match 2: SendStreamingMessage, SubscribeToTask (its first event), CancelTask.
for await (const _ of client.sendMessageStream(message('propose', { seq: 0, role: 'X' }))) {
  // every event
}
for await (const _ of client.resubscribeTask({ id: 'triad-task-2', tenant: '' })) {
  break;
}
await client.cancelTask({ id: 'triad-task-2', tenant: '', metadata: undefined });
// 0.3 compatibility, match 3: message/send, a propose and a move.
await legacy.sendMessage(message('propose', { seq: 0, role: 'X' }));
const move3 = message('move', move, 3);
move3.message.taskId = '';
await legacy.sendMessage(move3);
console.log(JSON.stringify({ producer: '@a2a-js/sdk 1.3.0 (JavaScript), testdata/a2a-sdk-capture.mjs', requests }, null, 1));
