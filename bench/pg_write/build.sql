-- The batches `bench/pg_write.sh` writes: :batches batches of 100 consecutive events of
-- the log (after its first 1,000), each as the JSON arrays the cluster's write statement
-- (`WRITE_BATCH`, crates/triad-server/src/store/log.rs) reads, every key (seq, match id)
-- shifted by :off past the log's own. `tp` holds the topic rows schema 8 stores (the log's
-- own `event_topics`); `tp_all` adds a row for each event's match topic, as schema 7
-- stored them.
CREATE TABLE batches AS
WITH r AS (SELECT b AS i, 1000 + b * 100 AS lo, 1000 + (b + 1) * 100 AS hi
           FROM generate_series(0, :batches - 1) b)
SELECT i,
  (SELECT json_agg(json_build_object('seq', seq + :off, 'at_ms', at_ms,
      'match_id', match_id + :off, 'kind', kind, 'body', body,
      'match_floor', coalesce(match_floor, 0) + :off) ORDER BY seq)
     FROM events WHERE seq > lo AND seq <= hi) AS ev,
  (SELECT coalesce(json_agg(json_build_object('topic', topic, 'seq', seq + :off) ORDER BY seq), '[]')
     FROM event_topics WHERE seq > lo AND seq <= hi) AS tp,
  (SELECT coalesce(json_agg(json_build_object('topic', topic, 'seq', seq + :off) ORDER BY seq), '[]')
     FROM (SELECT topic, seq FROM event_topics WHERE seq > lo AND seq <= hi
           UNION ALL
           SELECT 'match:' || (match_id + :off), seq FROM events
           WHERE match_id IS NOT NULL AND seq > lo AND seq <= hi) t) AS tp_all,
  (SELECT coalesce(json_agg(json_build_object('id', m.id + :off, 'game', game, 'stake', stake,
      'origin', origin, 'phase', phase, 'reason', reason, 'created_ms', created_ms,
      'updated_ms', updated_ms, 'body', m.body)), '[]')
     FROM matches m WHERE m.id IN (SELECT match_id FROM events
       WHERE kind <> 'moved' AND seq > lo AND seq <= hi)) AS mt,
  (SELECT coalesce(json_agg(json_build_object('address', p.address, 'match_id', p.match_id + :off)), '[]')
     FROM match_players p WHERE p.match_id IN (SELECT match_id FROM events
       WHERE kind IN ('challenge_issued', 'game_started') AND seq > lo AND seq <= hi)) AS pl
FROM r;
