-- Triad schema, version 4 (PostgreSQL). On SQLite this version rebuilds the log's tables
-- around their keys; PostgreSQL's B-tree primary keys need no such change. What both needed:
-- a node following the log (`Store::events_after`) reads the topics of a range of `seq`,
-- which the key (topic, seq) cannot serve; without this index every catch-up read the
-- whole table.
CREATE INDEX event_topics_by_seq ON event_topics (seq);
