"""Signed transcripts checked by a second verifier, in Python (verify_transcript.py, from
docs/transcript.md): a match played on a real server, its transcript and the server's key
fetched over HTTP, verified; tampered copies refused."""

import httpx
import pytest

from verify_transcript import Refused, verify


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
