-- Triad schema, version 6: sessions by expiry, so the periodic purge of expired sessions
-- (and of expired login challenges, already indexed) reads only what it deletes.
CREATE INDEX sessions_expiry ON sessions (expires_ms);
