"""The harness itself: a server starts, a player logs in and is credited."""


def test_a_new_player_is_logged_in_and_credited(server):
    player = server.new_player(deposit=2_000_000)
    status, me = server.get("/api/me", player.token)
    assert status == 200, me
    assert me["address"] == player.address
    assert int(me["balance"]) == 2_000_000


def test_two_servers_are_separate(start_server):
    a, b = start_server(), start_server()
    assert a.url != b.url
    player = a.new_player()
    status, body = b.get("/api/me", player.token)
    assert status == 401, body
