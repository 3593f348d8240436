-- Triad schema, version 9: the archive of the tournaments that ended.
-- The engine held every tournament in memory for good, so a server's memory grew with
-- every tournament it ever ran. Now a tournament that finishes or is cancelled is written
-- here by the batch that ends it (its last change: nothing changes a tournament after
-- its end), and the engine forgets it after the retention window of finished matches.
-- The API reads the engine first, then this table. `body` is the tournament as JSON
-- (`triad_engine::Tournament`). The tournaments that ended before this version stay in
-- the engine's memory, where they are (`tournaments_archived_from_seq`, a setting).
CREATE TABLE tournaments (
    id       BIGINT PRIMARY KEY,
    phase    TEXT    NOT NULL,     -- finished or cancelled
    ended_ms BIGINT  NOT NULL,
    body     TEXT    NOT NULL
);
