-- Triad schema, version 6: players' profiles, by address.
-- A player may take a display name; `name_key` is its skeleton (the name case-folded, its
-- look-alike characters folded: `profiles::name::skeleton`), and the unique index on it is
-- what makes two players, on any node, unable to hold names that look alike. A player with
-- no name has NULL there, which the index does not count. `bot` is 1 once an agent said it
-- is one (at a login, or through MCP or A2A), and is never set back to 0. `renamed_ms` and
-- `renames` are the window of the per-player bound on renames.
CREATE TABLE profiles (
    address    TEXT   PRIMARY KEY,
    name       TEXT,
    name_key   TEXT,
    bot        BIGINT NOT NULL DEFAULT 0,
    renamed_ms BIGINT NOT NULL DEFAULT 0,
    renames    BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX profiles_name_key ON profiles (name_key);
