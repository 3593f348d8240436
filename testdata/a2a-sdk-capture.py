"""Records the requests the official A2A Python client (a2a-sdk 1.3.0) sends to Triad's
A2A endpoint, byte for byte, into a2a-sdk-requests.json (see README.md).

Run against a fresh `triad serve` (the match ids in the bodies start at 1):

    python a2a-sdk-capture.py http://127.0.0.1:8080 TOKEN > a2a-sdk-requests.json
"""

import asyncio
import json
import sys

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from google.protobuf import struct_pb2
from google.protobuf.json_format import ParseDict

URL, TOKEN = sys.argv[1], sys.argv[2]
captured = []


async def record(request):
    if request.method == "POST":
        captured.append(
            {
                "a2a-version": request.headers.get("a2a-version"),
                "accept": request.headers.get("accept"),
                "content-type": request.headers.get("content-type"),
                "body": request.content.decode(),
            }
        )


def data(action, payload):
    value = struct_pb2.Value()
    ParseDict({"appId": "tic-tac-toe", "action": action, "payload": payload}, value)
    return Part(data=value)


def message(part, task="", context="", level=None):
    m = Message(role=Role.ROLE_USER, message_id=f"m-{len(captured)}", parts=[Part(text="hi"), part], task_id=task, context_id=context)
    if level:
        m.metadata.update({"level": level})
    return SendMessageRequest(message=m)


async def client(http, version, streaming):
    card = await A2ACardResolver(http, URL).get_agent_card()
    if version == "0.3":
        keep = [i for i in card.supported_interfaces if i.protocol_version == "0.3"]
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(keep)
    return ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)


async def main():
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(headers=headers, event_hooks={"request": [record]}) as http:
        move = {"seq": 1, "replyTo": 0, "position": 4, "mark": "X", "board": ["", "", "", "", "X", "", "", "", ""]}
        # 1.0, match 1: propose, a move, GetTask, CancelTask.
        c = await client(http, "1.0", False)
        [e async for e in c.send_message(message(data("propose", {"seq": 0, "role": "X"}), level="random"))]
        [e async for e in c.send_message(message(data("move", move), "triad-task-1", "triad-match-1"))]
        await c.get_task(GetTaskRequest(id="triad-task-1", history_length=5))
        await c.cancel_task(CancelTaskRequest(id="triad-task-1"))
        # 1.0 streamed, match 2: SendStreamingMessage, then SubscribeToTask (its first event), CancelTask.
        c = await client(http, "1.0", True)
        [e async for e in c.send_message(message(data("propose", {"seq": 0, "role": "X"})))]
        async for _ in c.subscribe(SubscribeToTaskRequest(id="triad-task-2")):
            break
        await c.cancel_task(CancelTaskRequest(id="triad-task-2"))
        # 0.3 compatibility, match 3: message/send, a propose and a move.
        c = await client(http, "0.3", False)
        [e async for e in c.send_message(message(data("propose", {"seq": 0, "role": "X"})))]
        [e async for e in c.send_message(message(data("move", move), context="triad-match-3"))]
    print(json.dumps({"producer": "a2a-sdk 1.3.0 (Python), testdata/a2a-sdk-capture.py", "requests": captured}, indent=1))


asyncio.run(main())
