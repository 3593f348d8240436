-- Triad schema, version 8: a match's topic is derived from the log, not stored.
-- Every event of a match is published on `match:<its match_id>` and on no other match's
-- topic (`hub::topics`), so its `event_topics` row said again what `events.match_id` says.
-- Those rows were most of the table (all but the lobby's, the tournaments' and some
-- inboxes'), and most of a move's write: a move wrote two rows (its event and its topic)
-- and three index entries; now one row and two entries (its event's key and the index
-- below). The index serves a match's catch-up (`MATCH_EVENTS`) and an inbox's derived half
-- (`INBOX_EVENTS`); a node following the log takes an event's match topic from its
-- `match_id`.
CREATE INDEX events_by_match ON events (match_id, seq);
-- (LIKE, not a range: under the database's collation 'match;' need not sort after them.)
DELETE FROM event_topics WHERE topic LIKE 'match:%';
