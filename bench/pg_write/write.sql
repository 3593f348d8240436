-- `write_batches(variant, lo, hi, all_topics)`: writes the batches lo..hi of `batches`
-- (build.sql), each in a transaction of its own, with the cluster's write statement
-- (`WRITE_BATCH` without its `pg_notify`, which is the same for every variant), and
-- records the statement's time and its commit's apart in `timings`. `all_topics` writes
-- the match topics' rows too (schema 7).
CREATE TABLE IF NOT EXISTS timings (variant text, i int, us float8, commit_us float8);
CREATE OR REPLACE PROCEDURE write_batches(variant text, lo int, hi int, all_topics bool)
LANGUAGE plpgsql AS $$
DECLARE r record; t0 timestamptz; t1 timestamptz;
BEGIN
  FOR r IN SELECT * FROM batches WHERE i BETWEEN lo AND hi ORDER BY i LOOP
    t0 := clock_timestamp();
    WITH
     e AS (INSERT INTO events (seq, at_ms, match_id, kind, body, match_floor)
       SELECT seq, at_ms, match_id, kind, body, match_floor FROM json_to_recordset(r.ev)
       AS x(seq BIGINT, at_ms BIGINT, match_id BIGINT, kind TEXT, body TEXT, match_floor BIGINT)),
     t AS (INSERT INTO event_topics (topic, seq)
       SELECT topic, seq FROM json_to_recordset(CASE WHEN all_topics THEN r.tp_all ELSE r.tp END)
       AS x(topic TEXT, seq BIGINT)),
     m AS (INSERT INTO matches (id, game, stake, origin, phase, reason, created_ms, updated_ms, body)
       SELECT id, game, stake, origin, phase, reason, created_ms, updated_ms, body
       FROM json_to_recordset(r.mt) AS x(id BIGINT, game TEXT, stake TEXT, origin TEXT,
         phase TEXT, reason TEXT, created_ms BIGINT, updated_ms BIGINT, body TEXT)
       ON CONFLICT (id) DO UPDATE SET phase = excluded.phase, reason = excluded.reason,
       updated_ms = excluded.updated_ms, body = excluded.body)
    INSERT INTO match_players (address, match_id)
       SELECT address, match_id FROM json_to_recordset(r.pl) AS x(address TEXT, match_id BIGINT)
       ON CONFLICT DO NOTHING;
    t1 := clock_timestamp();
    COMMIT;
    INSERT INTO timings VALUES (variant, r.i, extract(epoch FROM t1 - t0) * 1e6,
      extract(epoch FROM clock_timestamp() - t1) * 1e6);
    COMMIT;
  END LOOP;
END $$;
