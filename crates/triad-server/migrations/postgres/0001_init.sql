-- Triad schema, version 1 (PostgreSQL).
-- The event log is the source of truth; every other table is a projection of it, written
-- in the same transaction as the events it derives from.

CREATE TABLE events (
    seq      BIGINT PRIMARY KEY,   -- the engine's global sequence number, 1, 2, 3, ...
    at_ms    BIGINT NOT NULL,
    match_id BIGINT,
    kind     TEXT   NOT NULL,
    body     TEXT   NOT NULL       -- the event as JSON
);

-- Which realtime topics an event was published on ('match:7', 'inbox:0x…', 'lobby'), so a
-- client that reconnects can catch up on exactly its topics.
CREATE TABLE event_topics (
    topic TEXT   NOT NULL,
    seq   BIGINT NOT NULL,
    PRIMARY KEY (topic, seq)
);

-- The latest state of every match, kept forever (the engine forgets finished matches).
CREATE TABLE matches (
    id         BIGINT PRIMARY KEY,
    game       TEXT   NOT NULL,
    stake      TEXT   NOT NULL,    -- u64 in decimal
    origin     TEXT   NOT NULL,
    phase      TEXT   NOT NULL,
    reason     TEXT,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    body       TEXT   NOT NULL     -- the match as JSON
);

CREATE TABLE match_players (
    address  TEXT   NOT NULL,
    match_id BIGINT NOT NULL,
    PRIMARY KEY (address, match_id)
);
CREATE INDEX match_players_by_match ON match_players (match_id);

-- Each player's side of every transfer that touched their balance.
CREATE TABLE ledger_entries (
    address  TEXT   NOT NULL,
    seq      BIGINT NOT NULL,
    amount   TEXT   NOT NULL,      -- signed decimal: credits positive, debits negative
    reason   TEXT   NOT NULL,
    match_id BIGINT,
    PRIMARY KEY (address, seq)
);

-- Login sessions; only a hash of each token is kept.
CREATE TABLE sessions (
    token_hash TEXT   PRIMARY KEY,
    address    TEXT   NOT NULL,
    public_key TEXT   NOT NULL,
    created_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);

-- Settings that must stay fixed for the life of the database (the engine's seed).
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
