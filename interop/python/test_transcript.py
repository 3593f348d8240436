"""Signed transcripts checked by a second verifier, in Python (verify_transcript.py, from
docs/transcript.md): a match played on a real server, its transcript and the server's key
fetched over HTTP, verified; tampered copies refused."""

import json

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from verify_transcript import Refused, check_signed_move, verify


def play_to_a_win(server):
    """Alice challenges Bob for a stake and wins with the top row; returns the match id."""
    alice, bob = server.new_player(deposit=1000), server.new_player(deposit=1000)
    status, body = server.post(
        "/api/challenges", {"opponent": bob.address, "game": "tic-tac-toe", "stake": "100", "first": "challenger"}, alice.token
    )
    assert status == 201, body
    match_id = body["match"]["id"]
    status, body = server.post(f"/api/challenges/{match_id}/accept", {}, bob.token)
    assert status == 201, body
    for seq, (who, cell, mark) in enumerate(
        [(alice, 0, "X"), (bob, 3, "O"), (alice, 1, "X"), (bob, 4, "O"), (alice, 2, "X")], start=1
    ):
        status, body = server.post(f"/api/matches/{match_id}/moves", {"seq": seq, "cell": cell, "mark": mark}, who.token)
        assert status == 201, body
    return match_id


def test_a_transcript_from_a_real_server_verifies_and_tampered_copies_do_not(server):
    match_id = play_to_a_win(server)
    key = httpx.get(server.url + "/.well-known/triad-transcript-key", timeout=30).json()
    assert key["algorithm"] == "ed25519"
    response = httpx.get(f"{server.url}/api/matches/{match_id}/transcript", timeout=30)
    assert response.status_code == 200, response.text
    data = response.content
    t = verify(data, key["public_key"])
    assert t["match_id"] == match_id
    assert t["server_key"]["key_id"] == key["key_id"]
    assert '"type":"game_ended"' in "".join(t["events"])

    text = data.decode()
    # A changed move, a changed link, a changed signature, a space, another key.
    for tampered, says in [
        (text.replace('\\"cell\\":3', '\\"cell\\":5', 1), "links["),
        (text.replace(t["links"][0], t["links"][0][:-1] + ("0" if t["links"][0][-1] != "0" else "1"), 1), "links[0]"),
        (text.replace(t["signature"], ("1" if t["signature"][0] == "0" else "0") + t["signature"][1:], 1), "signature"),
        (text.replace(": ", ":  ", 1), "the file"),
        # The head (after the last link, which is the same text).
        (text[: text.rindex(t["head"])] + t["links"][0] + text[text.rindex(t["head"]) + 64 :], "head"),
    ]:
        assert tampered != text
        with pytest.raises(Refused) as refused:
            verify(tampered.encode(), key["public_key"])
        assert str(refused.value).startswith(says), refused.value
    with pytest.raises(Refused, match="not the server's key you trust"):
        verify(data, "11" * 32)

    # Every byte of the file with its lowest bit flipped (the Rust tests try every bit
    # flip and more replacements of every byte against `triad verify`'s checks).
    for at in range(len(data)):
        tampered = bytearray(data)
        tampered[at] ^= 0x01
        with pytest.raises(Refused):
            verify(bytes(tampered), key["public_key"])


def test_an_unfinished_match_has_no_transcript(server):
    alice, bob = server.new_player(deposit=1000), server.new_player(deposit=1000)
    status, body = server.post("/api/challenges", {"opponent": bob.address, "game": "tic-tac-toe"}, alice.token)
    assert status == 201, body
    status, body = server.get(f"/api/matches/{body['match']['id']}/transcript")
    assert (status, body["code"], body["error"]) == (409, 238, "match_not_finished")


def test_an_agents_game_sent_with_triad_apps_carries_the_players_signatures(server):
    """The protocol's example game, each message sent with `triad apps send` (which signs it
    with the sender's key): the transcript carries the signed messages, which verify, and
    a message changed after the fact does not."""
    from conftest import run_triad

    alice, bob = server.new_player(), server.new_player()
    script = [
        (alice, bob, "propose", '{"seq":0,"role":"X"}'),
        (bob, alice, "accept", '{"seq":0,"role":"O"}'),
        (alice, bob, "move", '{"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]}'),
        (bob, alice, "move", '{"seq":2,"replyTo":1,"position":1,"mark":"O","board":["","O","","","X","","","",""]}'),
        (alice, bob, "move", '{"seq":3,"replyTo":2,"position":0,"mark":"X","board":["X","O","","","X","","","",""]}'),
        (bob, alice, "move", '{"seq":4,"replyTo":3,"position":2,"mark":"O","board":["X","O","O","","X","","","",""]}'),
        (alice, bob, "move", '{"seq":5,"replyTo":4,"position":8,"mark":"X","board":["X","O","O","","X","","","","X"]}'),
    ]
    for sender, recipient, action, payload in script:
        run_triad(
            "apps", "send", recipient.address, "tic-tac-toe", action, "--payload", payload,
            "--server", server.url, "--key-file", str(sender.key_file), env=server.env,
        )
    status, page = server.get(f"/api/matches?player={alice.address}")
    assert status == 200, page
    match_id = page["matches"][0]["id"]
    key = httpx.get(server.url + "/.well-known/triad-transcript-key", timeout=30).json()["public_key"]
    data = httpx.get(f"{server.url}/api/matches/{match_id}/transcript", timeout=30).content
    t = verify(data, key)
    assert [m["action"] for m in t["messages"]] == [a for _, _, a, _ in script]
    assert t["messages"][2]["from"] == alice.address
    assert len(t["links"]) == len(t["events"]) + len(script)
    # Alice's first move, claimed to have been elsewhere.
    text = data.decode()
    tampered = text.replace('\\"position\\":4', '\\"position\\":3', 1)
    assert tampered != text
    with pytest.raises(Refused, match=r"messages\[2\]\.signature"):
        verify(tampered.encode(), key)


def test_the_documented_examples_verify():
    """docs/transcript-examples/: a staked match and an agents' game with the players'
    signatures, and the key that signed them."""
    import json
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "docs" / "transcript-examples"
    key = json.loads((examples / "key.json").read_text())["public_key"]
    staked = verify((examples / "staked.json").read_bytes(), key)
    assert staked["messages"] == []
    agents = verify((examples / "agents.json").read_bytes(), key)
    assert [m["action"] for m in agents["messages"]] == ["propose", "accept"] + ["move"] * 5


def test_moves_signed_by_their_players_are_checked_by_the_python_verifier(server):
    """Moves sent with the players' signatures (as the web app's wallet signs them, the text
    of docs/transcript.md made here from the document alone): the Python verifier checks
    each, and a transcript whose player's signature does not match is refused at that event."""
    key = httpx.get(server.url + "/.well-known/triad-transcript-key", timeout=30).json()
    alice, bob = server.new_player(), server.new_player()
    status, body = server.post("/api/challenges", {"opponent": bob.address, "game": "tic-tac-toe", "stake": "0"}, alice.token)
    assert status == 201, body
    match_id = body["match"]["id"]
    status, body = server.post(f"/api/challenges/{match_id}/accept", {}, bob.token)
    assert status == 201, body

    def signed(player, seq, cell, mark):
        secret = json.loads(player.key_file.read_text())
        private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(secret["secret_key"]))
        text = (
            f"triad-move/v1\nserver: {key['key_id']}\nmatch: {match_id}\nseq: {seq}\n"
            f"cell: {cell}\nmark: {mark}\nby: {player.address}"
        )
        return {"public_key": secret["public_key"], "signature": private.sign(text.encode()).hex()}

    for seq, (who, cell, mark) in enumerate(
        [(alice, 0, "X"), (bob, 3, "O"), (alice, 1, "X"), (bob, 4, "O"), (alice, 2, "X")], start=1
    ):
        move = {"seq": seq, "cell": cell, "mark": mark, "signature": signed(who, seq, cell, mark)}
        status, body = server.post(f"/api/matches/{match_id}/moves", move, who.token)
        assert status == 201, body
    data = httpx.get(f"{server.url}/api/matches/{match_id}/transcript", timeout=30).content
    t = verify(data, key["public_key"])
    moved = [json.loads(e)["kind"] for e in t["events"] if '"type":"moved"' in e]
    assert len(moved) == 5 and all("signed" in k for k in moved)

    # Bob's signature swapped for Alice's: refused at Bob's event (the check the verifier
    # makes of every signed move before the chain).
    events = [json.loads(e) for e in t["events"]]
    index = {k["kind"]["seq"]: i for i, k in enumerate(events) if k["kind"]["type"] == "moved"}
    forged = events[index[2]]
    forged["kind"]["signed"]["signature"] = events[index[1]]["kind"]["signed"]["signature"]
    with pytest.raises(Refused, match=rf"events\[{index[2]}\]\.signed\.signature"):
        check_signed_move(index[2], json.dumps(forged), key["key_id"], match_id)
    # Untouched, it passes.
    check_signed_move(index[2], t["events"][index[2]], key["key_id"], match_id)
