"""Triad's A2A server, driven by the official A2A Python client (a2a-sdk 1.3.0).

The client resolves the agent card and picks its transport as it does for any agent: A2A
1.0 (SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask) from the
card's 1.0 interface, and 0.3 (message/send, message/stream) through the SDK's own 0.3-compatibility
transport, which it picks when the card offers only the 0.3 interface. Whole games of
tic-tac-toe and SOS against the computer, one of them streamed; a refused move comes back
with Triad's stable code and changes nothing.
"""

import asyncio
import json
import random

import httpx
import pytest
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
    TaskState,
)
from a2a.utils.errors import InvalidParamsError
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict

EMPTY = [""] * 9


class Wire:
    """The JSON-RPC methods and A2A-Version headers the client sent, read off the wire."""

    def __init__(self):
        self.sent = []

    async def hook(self, request):
        if request.method == "POST":
            body = json.loads(request.content)
            self.sent.append((body["method"], request.headers.get("a2a-version")))


def http_client(player, wire):
    return httpx.AsyncClient(
        headers={"Authorization": f"Bearer {player.token}"},
        event_hooks={"request": [wire.hook]},
        timeout=30,
    )


async def client_for(server, http, version, streaming=False):
    """The SDK's client for the card's interface of `version` ("1.0", or "0.3" alone)."""
    card = await A2ACardResolver(http, server.url).get_agent_card()
    if version == "0.3":
        legacy = [i for i in card.supported_interfaces if i.protocol_version == "0.3"]
        assert legacy, "the card offers a 0.3 interface"
        del card.supported_interfaces[:]
        card.supported_interfaces.extend(legacy)
    config = ClientConfig(httpx_client=http, streaming=streaming)
    return ClientFactory(config).create(card)


def data_part(action, app, payload):
    value = struct_pb2.Value()
    ParseDict({"appId": app, "action": action, "payload": payload}, value)
    return Part(data=value)


def actions_of(parts):
    """The app actions of a message's parts, as (action, payload)."""
    out = []
    for part in parts:
        if part.HasField("data"):
            d = MessageToDict(part.data)
            out.append((d["action"], d["payload"]))
    return out


class Player:
    """Plays one game from its own board: random legal moves, the computer's applied."""

    def __init__(self, app, role):
        self.app = app
        self.role = role
        self.board = list(EMPTY)
        self.seq = 0
        self.result = None
        self.rng = random.Random(7)

    def hear(self, actions):
        for action, payload in actions:
            if action == "move":
                self.board[int(payload["position"])] = payload["mark"]
                self.seq = int(payload["seq"])
                assert payload["board"] == self.board, (payload, self.board)
            elif action == "result":
                self.result = payload

    def move(self):
        cell = self.rng.choice([i for i, c in enumerate(self.board) if c == ""])
        mark = self.role if self.app == "tic-tac-toe" else self.rng.choice("SO")
        self.board[cell] = mark
        self.seq += 1
        return {
            "seq": self.seq,
            "replyTo": self.seq - 1,
            "position": cell,
            "mark": mark,
            "board": list(self.board),
        }


def user_message(part, task_id="", context_id="", level=None):
    message = Message(
        role=Role.ROLE_USER,
        message_id=f"m-{random.randrange(1 << 30)}",
        parts=[Part(text="my move"), part],
        task_id=task_id,
        context_id=context_id,
    )
    if level:
        message.metadata.update({"level": level})
    return message


async def events(client, message):
    return [e async for e in client.send_message(SendMessageRequest(message=message))]


async def play_1_0(server, player, app, role, streaming):
    """A whole game in A2A 1.0; the task at its end and the methods sent."""
    wire = Wire()
    async with http_client(player, wire) as http:
        client = await client_for(server, http, "1.0", streaming=streaming)
        me = Player(app, role)

        async def turn(part, task=None):
            got = await events(
                client,
                user_message(
                    part,
                    task_id=task.id if task else "",
                    context_id=task.context_id if task else "",
                ),
            )
            if streaming:
                # The task as it took the message, then the status it came to.
                assert [e.WhichOneof("payload") for e in got] == ["task", "status_update"]
                assert got[0].task.status.state == TaskState.TASK_STATE_WORKING
                update = got[1].status_update
                status, task_id = update.status, update.task_id
            else:
                assert [e.WhichOneof("payload") for e in got] == ["task"]
                status, task_id = got[0].task.status, got[0].task.id
            me.hear(actions_of(status.message.parts))
            return status, task_id, (got[0].task if got[0].HasField("task") else None)

        status, task_id, task = await turn(
            data_part("propose", app, {"seq": 0, "role": role})
        )
        assert task_id.startswith("triad-task-")
        assert task.context_id.startswith("triad-match-")
        accept = actions_of(status.message.parts)[0]
        assert accept[0] == "accept"
        while status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            status, _, _ = await turn(data_part("move", app, me.move()), task)
        assert status.state == TaskState.TASK_STATE_COMPLETED
        assert me.result is not None, "the last status message carries the result"
        final = await client.get_task(GetTaskRequest(id=task_id))
        assert final.status.state == TaskState.TASK_STATE_COMPLETED
        record = actions_of(final.artifacts[0].parts)
        assert [a for a, _ in record].count("move") == me.seq
        assert record[-1] == ("result", me.result)
        await client.close()
    methods = {m for m, _ in wire.sent}
    assert methods == {"SendStreamingMessage" if streaming else "SendMessage", "GetTask"}
    assert {v for _, v in wire.sent} == {"1.0"}
    match_id = int(task_id.removeprefix("triad-task-"))
    return match_id, me


def check_recorded(server, match_id, me):
    status, view = server.get(f"/api/matches/{match_id}")
    assert status == 200
    assert view["origin"] == "computer"
    assert view["outcome"]["reason"] in ("win", "draw")
    if me.app == "tic-tac-toe":
        # The perfect computer never loses tic-tac-toe.
        assert me.result.get("winner") != me.role, me.result


def test_the_card_offers_1_0_and_0_3_from_the_public_url(server):
    async def main():
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, server.url).get_agent_card()
        interfaces = [
            (i.url, i.protocol_binding, i.protocol_version)
            for i in card.supported_interfaces
        ]
        assert interfaces == [
            (f"{server.url}/a2a", "JSONRPC", "1.0"),
            (f"{server.url}/a2a", "JSONRPC", "0.3"),
        ]
        assert card.capabilities.streaming
        assert [s.id for s in card.skills] == ["tic-tac-toe", "sos"]
        assert all("seed-4" not in s.tags for s in card.skills)
        scheme = card.security_schemes["bearer"].http_auth_security_scheme
        assert scheme.scheme == "bearer"

    asyncio.run(main())


def test_tic_tac_toe_in_1_0(server):
    player = server.new_player()
    match_id, me = asyncio.run(play_1_0(server, player, "tic-tac-toe", "O", False))
    check_recorded(server, match_id, me)


def test_sos_in_1_0_streamed(server):
    player = server.new_player()
    match_id, me = asyncio.run(play_1_0(server, player, "sos", "first", True))
    check_recorded(server, match_id, me)


def test_tic_tac_toe_and_sos_in_0_3_compatibility(server):
    """0.3 through the SDK's own compatibility transport: message/send, and message/stream
    for the streamed game."""
    player = server.new_player()

    async def game(client, app, role):
        me = Player(app, role)
        got = await events(client, user_message(data_part("propose", app, {"seq": 0, "role": role})))
        assert [e.WhichOneof("payload") for e in got] == ["message"]
        reply = got[0].message
        assert reply.role == Role.ROLE_AGENT
        context = reply.context_id
        assert context.startswith("triad-match-")
        assert actions_of(reply.parts)[0][0] == "accept"
        me.hear(actions_of(reply.parts))
        while me.result is None:
            got = await events(client, user_message(data_part("move", app, me.move()), context_id=context))
            assert got[0].message.context_id == context
            me.hear(actions_of(got[0].message.parts))
        return int(context.removeprefix("triad-match-")), me

    async def main():
        wire = Wire()
        async with http_client(player, wire) as http:
            client = await client_for(server, http, "0.3")
            streamed = await client_for(server, http, "0.3", streaming=True)
            results = [await game(client, "tic-tac-toe", "X"), await game(streamed, "sos", "second")]
            await client.close()
            await streamed.close()
        assert [m for m, _ in wire.sent].count("message/stream") >= 2
        assert {m for m, _ in wire.sent} == {"message/send", "message/stream"}
        assert {v for _, v in wire.sent} == {"0.3"}
        return results

    for match_id, me in asyncio.run(main()):
        check_recorded(server, match_id, me)


def test_a_refused_move_has_the_stable_code_and_changes_nothing(server):
    player = server.new_player()

    async def main():
        wire = Wire()
        async with http_client(player, wire) as http:
            client = await client_for(server, http, "1.0")
            got = await events(client, user_message(data_part("propose", "tic-tac-toe", {"seq": 0, "role": "O"})))
            task = got[0].task
            match_id = int(task.id.removeprefix("triad-task-"))
            before = server.get(f"/api/matches/{match_id}")
            # A legal move on a board that is not the game's (one more X on it): refused
            # as a state conflict. The cell is a free one, whichever the computer took.
            me = Player("tic-tac-toe", "O")
            me.hear(actions_of(task.status.message.parts))
            assert me.board.count("X") == 1, "the computer, X, moved first"
            tampered = me.move()
            forged = next(i for i, c in enumerate(tampered["board"]) if c == "")
            tampered["board"][forged] = "X"
            with pytest.raises(InvalidParamsError) as refused:
                await events(client, user_message(data_part("move", "tic-tac-toe", tampered), task.id, task.context_id))
            assert refused.value.data["code"] == "223"
            assert refused.value.data["error"] == "state_conflict"
            assert "board" in str(refused.value)
            assert server.get(f"/api/matches/{match_id}") == before
            # The same refusal over 0.3 carries the code as a number.
            legacy = await client_for(server, http, "0.3")
            with pytest.raises(InvalidParamsError) as refused:
                await events(legacy, user_message(data_part("move", "tic-tac-toe", tampered), context_id=task.context_id))
            assert server.get(f"/api/matches/{match_id}") == before
            await legacy.close()
            await client.close()

    asyncio.run(main())


def test_a_task_can_be_read_followed_and_canceled(server):
    """GetTask reads a game, SubscribeToTask follows it move by move, CancelTask calls it
    off (an abort: TASK_STATE_CANCELED), which ends the subscription."""
    player = server.new_player()

    async def main():
        async with http_client(player, Wire()) as http, http_client(player, Wire()) as http2:
            client = await client_for(server, http, "1.0")
            follower = await client_for(server, http2, "1.0", streaming=True)
            propose = data_part("propose", "tic-tac-toe", {"seq": 0, "role": "X"})
            task = (await events(client, user_message(propose, level="random")))[0].task
            assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            heard = []
            started = asyncio.Event()

            async def follow():
                async for event in follower.subscribe(SubscribeToTaskRequest(id=task.id)):
                    heard.append(event)
                    started.set()

            following = asyncio.create_task(follow())
            await asyncio.wait_for(started.wait(), 10)
            assert heard[0].task.id == task.id
            me = Player("tic-tac-toe", "X")
            move = data_part("move", "tic-tac-toe", me.move())
            got = await events(client, user_message(move, task.id, task.context_id))
            me.hear(actions_of(got[0].task.status.message.parts))
            read = await client.get_task(GetTaskRequest(id=task.id))
            assert read.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert [a for a, _ in actions_of(read.artifacts[0].parts)] == ["move", "move"]
            canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            await asyncio.wait_for(following, 10)
            updates = [e.status_update for e in heard[1:]]
            assert updates[-1].status.state == TaskState.TASK_STATE_CANCELED
            # The follower heard my move, the computer's, and the end.
            heard_actions = [a for u in updates for a, _ in actions_of(u.status.message.parts)]
            assert heard_actions == ["move", "move", "result"], heard_actions
            await client.close()
            await follower.close()
        return int(task.id.removeprefix("triad-task-"))

    match_id = asyncio.run(main())
    status, view = server.get(f"/api/matches/{match_id}")
    assert status == 200
    assert view["outcome"]["reason"] == "aborted"
