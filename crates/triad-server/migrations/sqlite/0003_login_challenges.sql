-- Triad schema, version 3: pending login challenges, shared by every node.
-- With several nodes on one PostgreSQL database a client may get its challenge from one
-- node and log in through another; each challenge is taken (deleted) by the first login
-- attempt that names it, on whichever node, so it is used once. A single SQLite node keeps
-- its challenges in memory and leaves this table empty.
CREATE TABLE login_challenges (
    id         TEXT   PRIMARY KEY,
    public_key TEXT   NOT NULL,
    message    TEXT   NOT NULL,   -- the exact text to sign, as the challenge returned it
    expires_ms BIGINT NOT NULL
);
CREATE INDEX login_challenges_expiry ON login_challenges (expires_ms);
