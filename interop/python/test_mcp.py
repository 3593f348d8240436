"""Triad's MCP server through the official Python MCP SDK's client (`mcp`, pinned).

Over streamable HTTP (`/mcp` on `triad serve`, with the login token in the Authorization
header) and over stdio (`triad mcp` spawned as a desktop client spawns it), in the protocol
version the client negotiates by default (2026-07-28, found with `server/discover`) and in
the previous one (2025-11-25, with the `initialize` handshake: `mode="legacy"`):

- the tools are listed;
- whole games of tic-tac-toe and SOS against the computer, played to the end by choosing
  among the legal moves the tools list;
- a game between two MCP clients (challenge and accept), one following the match with a
  resource subscription, the other with wait_for_turn;
- a refused move comes back as a tool error with the REST API's stable code, and the match
  is unchanged.
"""

import asyncio
import random

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TOOLS = {
    "play_computer",
    "challenge",
    "list_challenges",
    "accept_challenge",
    "decline_challenge",
    "join_queue",
    "leave_queue",
    "get_match",
    "legal_moves",
    "make_move",
    "resign",
    "claim_timeout",
    "rematch",
    "wait_for_turn",
    "analyze_position",
    "my_balance",
    "my_stats",
    "list_tournaments",
    "join_tournament",
    "leave_tournament",
    "follow_tournament",
}

# (transport, mode): mode "auto" negotiates the newest version (2026-07-28), "legacy" the
# handshake era's newest (2025-11-25).
WAYS = [("http", "auto"), ("http", "legacy"), ("stdio", "auto"), ("stdio", "legacy")]
IDS = [f"{t}-{m}" for t, m in WAYS]


def connect(server, player, transport, mode, **kwargs):
    """An MCP client of `server` acting as `player`."""
    if transport == "http":
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {player.token}"},
            timeout=httpx2.Timeout(30, read=300),
        )
        target = streamable_http_client(f"{server.url}/mcp", http_client=http)
    else:
        target = StdioServerParameters(
            command=str(server.bin),
            args=["mcp", "--server", server.url, "--key-file", str(player.key_file)],
        )
    return Client(target, mode=mode, read_timeout_seconds=60, **kwargs)


def expected_version(mode):
    return "2026-07-28" if mode == "auto" else "2025-11-25"


async def call(client, tool, arguments):
    """A tool call that must succeed; its structured content."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} {arguments}: {result.content[0].text}"
    assert result.content and result.content[0].text, "every answer has a text form"
    return result.structured_content


async def my_move(client, match_id, rng):
    """Plays one legal move, chosen among those the tools list."""
    legal = await call(client, "legal_moves", {"match_id": match_id})
    assert legal["your_turn"], legal
    assert legal["moves"], legal
    move = rng.choice(legal["moves"])
    answer = await call(
        client,
        "make_move",
        {"match_id": match_id, "cell": move["cell"], "mark": move["mark"]},
    )
    return answer["match"]


async def play_out(client, match_id, rng):
    """Plays `match_id` to its end, waiting for the opponent with wait_for_turn."""
    for _ in range(40):
        waited = await call(client, "wait_for_turn", {"match_id": match_id})
        if waited["finished"]:
            return waited["match"]
        if waited["your_turn"]:
            await my_move(client, match_id, rng)
    raise AssertionError(f"match {match_id} did not end")


@pytest.mark.parametrize(("transport", "mode"), WAYS, ids=IDS)
def test_the_tools_are_listed(server, transport, mode):
    player = server.new_player()

    async def run():
        async with connect(server, player, transport, mode) as client:
            assert client.protocol_version == expected_version(mode)
            tools = await client.list_tools()
            names = {tool.name for tool in tools.tools}
            assert TOOLS <= names, TOOLS - names
            for tool in tools.tools:
                assert tool.description and len(tool.description) > 20, tool.name
                assert tool.input_schema["type"] == "object", tool.name
            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == ["play"]
            prompt = await client.get_prompt("play", {"game": "sos"})
            assert "make_move" in prompt.messages[0].content.text
            rules = await client.read_resource("triad://rules/tic-tac-toe")
            assert "three" in rules.contents[0].text.lower()

    asyncio.run(run())


@pytest.mark.parametrize(("transport", "mode"), WAYS, ids=IDS)
@pytest.mark.parametrize("game", ["tic-tac-toe", "sos"])
def test_whole_games_against_the_computer(server, transport, mode, game):
    player = server.new_player()
    rng = random.Random(f"{transport}{mode}{game}")

    async def run():
        async with connect(server, player, transport, mode) as client:
            started = await call(
                client, "play_computer", {"game": game, "level": "casual"}
            )
            match_id = started["match"]["id"]
            end = await play_out(client, match_id, rng)
            assert end["phase"] == "finished"
            assert end["outcome"]["reason"] in ("win", "draw"), end["outcome"]
            # The server agrees.
            status, view = server.get(f"/api/matches/{match_id}")
            assert status == 200 and view["phase"] == "finished"
            assert view["board"] == end["board"]
            stats = await call(client, "my_stats", {})
            assert stats["address"] == player.address

    asyncio.run(run())


@pytest.mark.parametrize(("transport", "mode"), WAYS, ids=IDS)
def test_a_refused_move_changes_nothing(server, transport, mode):
    player = server.new_player()

    async def run():
        async with connect(server, player, transport, mode) as client:
            started = await call(client, "play_computer", {"game": "tic-tac-toe"})
            match_id = started["match"]["id"]
            await call(client, "make_move", {"match_id": match_id, "cell": 4})
            status, before = server.get(f"/api/matches/{match_id}")
            assert status == 200 and before["seq"] == 2
            refused = await client.call_tool(
                "make_move", {"match_id": match_id, "cell": 4}
            )
            assert refused.is_error
            error = refused.structured_content
            assert error["error"] == "cell_occupied", error
            assert error["message"], error
            assert f"code {error['code']}" in refused.content[0].text
            # The REST API refuses the same move with the same stable code.
            status, rest = server.post(
                f"/api/matches/{match_id}/moves",
                {"seq": 3, "cell": 4, "mark": "X"},
                token=player.token,
            )
            assert status == 409 and rest["code"] == error["code"], rest
            status, after = server.get(f"/api/matches/{match_id}")
            assert after == before

    asyncio.run(run())


# Alice follows the match as 2025-11-25 clients do; the SDK warns that 2026-07-28 removed it.
@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
@pytest.mark.parametrize(
    ("alice_way", "bob_way"),
    [(("http", "legacy"), ("http", "auto")), (("stdio", "legacy"), ("stdio", "auto"))],
    ids=["http", "stdio"],
)
def test_two_mcp_clients_play_each_other(server, alice_way, bob_way):
    """Alice (2025-11-25) challenges Bob (2026-07-28); Alice follows the match with
    resources/subscribe; Bob hears the match change through subscriptions/listen, then
    waits with wait_for_turn."""
    alice, bob = server.new_player(), server.new_player()
    rng = random.Random(7)
    updates: asyncio.Queue = asyncio.Queue()

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/resources/updated":
            await updates.put(message.params.uri)

    async def alice_plays(client, match_id, started):
        uri = f"triad://matches/{match_id}"
        await client.subscribe_resource(uri)
        await started.wait()
        while True:
            view = await call(client, "get_match", {"match_id": match_id})
            if view["phase"] == "finished":
                return view
            if view["phase"] in ("ready", "in_progress") and view["turn_address"] == alice.address:
                await my_move(client, match_id, rng)
                continue
            # The opponent's turn: the subscription says when the match changes.
            assert await asyncio.wait_for(updates.get(), 30) == uri

    async def run():
        async with (
            connect(server, alice, *alice_way, message_handler=on_message) as a,
            connect(server, bob, *bob_way) as b,
        ):
            challenged = await call(
                a, "challenge", {"opponent": bob.address, "game": "tic-tac-toe"}
            )
            match_id = challenged["match"]["id"]
            listed = await call(b, "list_challenges", {})
            assert [m["id"] for m in listed["incoming"]] == [match_id]
            uri = f"triad://matches/{match_id}"
            started = asyncio.Event()
            alice_task = asyncio.create_task(alice_plays(a, match_id, started))
            async with b.listen(resource_subscriptions=[uri]) as subscription:
                await call(
                    b,
                    "accept_challenge",
                    {"match_id": match_id, "game": "tic-tac-toe", "stake": "0"},
                )
                started.set()
                # The match started (and Alice moves): Bob hears it on his subscription.
                event = await asyncio.wait_for(subscription.__anext__(), 30)
                assert event.uri == uri
            end = await play_out(b, match_id, rng)
            alice_end = await asyncio.wait_for(alice_task, 60)
            assert end["phase"] == alice_end["phase"] == "finished"
            assert end["board"] == alice_end["board"]

    asyncio.run(run())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_stdio_logs_in_again_when_the_token_expires(start_server, mode):
    """`triad mcp` outlives its login token: the server refuses the expired token (401)
    and the bridge logs in again with the key and resends."""
    server = start_server("--session-ttl-ms", "1500")
    player = server.new_player()

    async def run():
        async with connect(server, player, "stdio", mode) as client:
            await call(client, "my_balance", {})
            await asyncio.sleep(2.5)
            started = await call(client, "play_computer", {"game": "sos"})
            assert started["match"]["phase"] in ("ready", "in_progress")

    asyncio.run(run())


def test_two_mcp_clients_play_a_tournament(server):
    """The owner opens a one-round Swiss event; two official MCP clients find it with
    list_tournaments, enter with join_tournament, get their game from follow_tournament,
    play it with wait_for_turn and make_move, and read the final standings."""
    alice, bob = server.new_player(), server.new_player()
    status, created = server.post(
        "/api/tournaments",
        {"name": "MCP cup", "game": "tic-tac-toe", "format": "swiss", "rounds": 1,
         "starts_in_seconds": 2},
        server.owner.token,
    )
    assert status == 201, created
    tournament_id = created["tournament"]["id"]
    rng = random.Random(11)

    async def plays(client):
        listed = await call(client, "list_tournaments", {})
        assert tournament_id in [t["id"] for t in listed["tournaments"]]
        await call(client, "join_tournament", {"tournament_id": tournament_id})
        for _ in range(20):
            followed = await call(client, "follow_tournament", {"tournament_id": tournament_id})
            if followed["finished"]:
                return followed["tournament"]
            if followed["your_game"] is not None:
                await play_out(client, followed["your_game"], rng)
        raise AssertionError("the tournament did not end")

    async def run():
        async with connect(server, alice, "http", "auto") as a, connect(server, bob, "stdio", "legacy") as b:
            return await asyncio.gather(plays(a), plays(b))

    ends = asyncio.run(run())
    for end in ends:
        assert end["phase"] == "finished"
        assert [s["player"]["bot"] for s in end["standings"]] == [True, True], "MCP players are bots"
        assert sum(s["score"] for s in end["standings"]) == 2, "one game: two points given out"
