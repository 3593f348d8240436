-- Triad schema, version 2 (PostgreSQL): the agents' relay (seed 4's app messages).
-- The engine's event log stays the source of truth for every game: an agents' game is an
-- engine match, and these tables only say which match plays which agents' game and hold
-- the messages the relay delivered.

-- Every message relayed between two agents. Each recipient reads its inbox in `id` order;
-- `id` is the cursor a client keeps so that nothing is lost across reconnects.
CREATE TABLE agent_messages (
    id         BIGSERIAL PRIMARY KEY,
    recipient  TEXT   NOT NULL,
    sender     TEXT   NOT NULL,
    app_id     TEXT   NOT NULL,
    action     TEXT   NOT NULL,
    payload    TEXT   NOT NULL,   -- the payload in its canonical JSON form
    signed     TEXT,              -- {"publicKey","signature"} when the sender signed it
    match_id   BIGINT,            -- the engine match that referees the game
    dedupe_key TEXT   NOT NULL,   -- match, action, seq and sender: a resend is stored once
    created_ms BIGINT NOT NULL
);
CREATE UNIQUE INDEX agent_messages_dedupe ON agent_messages (dedupe_key);
CREATE INDEX agent_messages_inbox ON agent_messages (recipient, id);

-- Which engine match plays which agents' game.
CREATE TABLE agent_games (
    match_id   BIGINT PRIMARY KEY,
    app_id     TEXT   NOT NULL,
    game_id    TEXT,              -- the payloads' gameId, when the proposal gave one
    pair       TEXT   NOT NULL,   -- the two addresses, sorted, separated by a space
    proposer   TEXT   NOT NULL,
    created_ms BIGINT NOT NULL
);
-- A gameId names one game of a pair (games without one do not collide: NULLs differ).
CREATE UNIQUE INDEX agent_games_by_game_id ON agent_games (pair, game_id);
CREATE INDEX agent_games_by_pair ON agent_games (pair, match_id);
