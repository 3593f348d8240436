"""`triad agent --a2a` against an A2A agent built with the official Python SDK's server.

The agent here is written the way the SDK's documentation shows: an `AgentExecutor` behind
`DefaultRequestHandler`, the JSON-RPC routes (with 0.3 compatibility) and the card route on
Starlette, served by uvicorn. It plays tic-tac-toe by the A2A tic-tac-toe protocol's app
actions, always taking the first empty cell, and declares the result when it moves last.
Triad's agent plays it in 1.0 and in 0.3, perfect play against it never loses, and what the
SDK agent received is what the protocol says.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import uvicorn
from starlette.applications import Starlette

from a2a.helpers import get_data_parts, new_data_part, new_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes.agent_card_routes import create_agent_card_routes
from a2a.server.routes.jsonrpc_routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

ROOT = Path(__file__).resolve().parents[2]
TRIAD_BIN = Path(os.environ.get("TRIAD_BIN", ROOT / "target" / "debug" / "triad")).resolve()
LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def winner(board: list[str]) -> str | None:
    for a, b, c in LINES:
        if board[a] and board[a] == board[b] == board[c]:
            return board[a]
    return None


def action(name: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"appId": "tic-tac-toe", "action": name, "payload": payload}


class FirstEmptyCell(AgentExecutor):
    """Tic-tac-toe by the protocol's app actions: the first empty cell, honest results."""

    def __init__(self) -> None:
        self.boards: dict[str, list[str]] = {}
        self.marks: dict[str, str] = {}
        self.received: list[dict[str, Any]] = []

    def _move(self, context_id: str) -> list[dict[str, Any]]:
        board, mark = self.boards[context_id], self.marks[context_id]
        cell = board.index("")
        board[cell] = mark
        seq = 9 - board.count("")
        out = [action("move", {"seq": seq, "replyTo": seq - 1, "position": cell, "mark": mark, "board": list(board)})]
        if winner(board):
            out.append(action("result", {"outcome": "win", "winner": mark}))
        elif "" not in board:
            out.append(action("result", {"outcome": "draw"}))
        return out

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        context_id = context.context_id
        answer: list[dict[str, Any]] = []
        for data in get_data_parts(context.message.parts):
            self.received.append(data)
            payload = data["payload"]
            if data["action"] == "propose":
                mine = "O" if payload["role"] == "X" else "X"
                self.boards[context_id] = [""] * 9
                self.marks[context_id] = mine
                answer.append(action("accept", {"seq": 0, "role": mine}))
                if mine == "X":
                    answer += self._move(context_id)
            elif data["action"] == "move":
                board = self.boards[context_id]
                board[int(payload["position"])] = payload["mark"]
                if not winner(board) and "" in board:
                    answer += self._move(context_id)
        parts = [new_data_part(a) for a in answer] or [new_text_part("noted")]
        await event_queue.enqueue_event(new_message(parts, context_id=context_id))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sdk_agent() -> Iterator[tuple[str, FirstEmptyCell]]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="SDK tic-tac-toe",
        description="Plays the first empty cell.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"{url}/a2a", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=f"{url}/a2a", protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=False),
        default_input_modes=["application/json"],
        default_output_modes=["application/json"],
        skills=[AgentSkill(id="tic-tac-toe", name="Tic-tac-toe", description="The A2A tic-tac-toe protocol", tags=["game"])],
    )
    executor = FirstEmptyCell()
    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    app = Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, "/a2a", enable_v0_3_compat=True),
        ]
    )
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the SDK agent did not start"
        time.sleep(0.05)
    yield url, executor
    server.should_exit = True
    thread.join(timeout=10)


def play(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAD_")}
    return subprocess.run(
        [str(TRIAD_BIN), "agent", "--a2a", url, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_triad_agent_plays_an_sdk_agent(sdk_agent: tuple[str, FirstEmptyCell], version: str) -> None:
    url, executor = sdk_agent
    done = play(url, "--a2a-version", version, "--games", "4", "--seed", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    games = [line for line in done.stdout.splitlines() if line.startswith("game ")]
    assert len(games) == 4, done.stdout
    for line in games:
        assert f" over A2A {version} " in line, line
        assert " vs SDK tic-tac-toe " in line, line
        # Perfect play never loses to the first empty cell.
        assert ": won (" in line or ": drew (" in line, line
    assert "as X" in games[0] and "as O" in games[1], games
    # The SDK agent got the protocol's actions: a proposal per game, moves, and results.
    actions = [d["action"] for d in executor.received]
    assert actions.count("propose") == 4, actions
    assert "move" in actions and "result" in actions, actions
    first = executor.received[0]
    assert first == action("propose", {"seq": 0.0, "role": "X"}), first


def test_the_newest_version_is_spoken_by_default(sdk_agent: tuple[str, FirstEmptyCell]) -> None:
    url, _ = sdk_agent
    done = play(url, "--role", "O")
    assert done.returncode == 0, done.stdout + done.stderr
    assert " over A2A 1.0 as O vs SDK tic-tac-toe " in done.stdout, done.stdout
