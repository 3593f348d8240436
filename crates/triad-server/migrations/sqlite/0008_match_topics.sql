-- Triad schema, version 8: a match's topic is derived from the log, not stored.
-- Every event of a match is published on `match:<its match_id>` and on no other match's
-- topic (`hub::topics`), so its `event_topics` row said again what `events.match_id` says.
-- Those rows were most of the table (all but the lobby's, the tournaments' and some
-- inboxes'). On SQLite the index below takes their place one for one (a row of the
-- WITHOUT ROWID `event_topics` for an entry keyed by match and rowid); the schema is the
-- same on both backends so that one set of statements reads both. The index serves a
-- match's catch-up (`MATCH_EVENTS`) and an inbox's derived half (`INBOX_EVENTS`); a node
-- following the log takes an event's match topic from its `match_id`.
CREATE INDEX events_by_match ON events (match_id, seq);
-- Every stored match topic ('match:' then digits) sorts between 'match:' and 'match;'
-- (SQLite compares text byte by byte), a range of the table's key.
DELETE FROM event_topics WHERE topic >= 'match:' AND topic < 'match;';
