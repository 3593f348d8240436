-- Triad schema, version 5: each event carries the smallest id of a match that could still
-- have an event when it was written (the engine's oldest match in memory; older ones are
-- finished for good). An inbox's catch-up after an event derives a match's own events
-- from `match_players` for those matches only, instead of probing every match the address
-- ever played. Events stored before this version have none: the catch-up then looks at
-- every match, as before.
ALTER TABLE events ADD COLUMN match_floor BIGINT;
