-- batches of 100 consecutive events of the bench's log, keys shifted by :off
DROP TABLE IF EXISTS batches;
CREATE TABLE batches AS
SELECT b AS i,
  (SELECT json_agg(json_build_object('seq', seq + :off, 'at_ms', at_ms, 'match_id', match_id + :off, 'kind', kind, 'body', body, 'match_floor', coalesce(match_floor,0) + :off) ORDER BY seq)
     FROM events WHERE seq > 1000 + b*100 AND seq <= 1000 + (b+1)*100) AS ev,
  (SELECT coalesce(json_agg(json_build_object('topic', CASE WHEN topic LIKE 'match:%' THEN 'match:' || (substr(topic, 7)::bigint + :off) ELSE topic END, 'seq', seq + :off) ORDER BY seq), '[]')
     FROM event_topics WHERE seq > 1000 + b*100 AND seq <= 1000 + (b+1)*100) AS tp,
  (SELECT coalesce(json_agg(json_build_object('topic', topic, 'seq', seq + :off) ORDER BY seq), '[]')
     FROM event_topics WHERE topic NOT LIKE 'match:%' AND seq > 1000 + b*100 AND seq <= 1000 + (b+1)*100) AS tp_nomatch,
  (SELECT coalesce(json_agg(json_build_object('id', m.id + :off, 'game', game, 'stake', stake, 'origin', origin, 'phase', phase, 'reason', reason, 'created_ms', created_ms, 'updated_ms', updated_ms, 'body', m.body)), '[]')
     FROM matches m WHERE m.id IN (SELECT match_id FROM events WHERE kind <> 'moved' AND seq > 1000 + b*100 AND seq <= 1000 + (b+1)*100)) AS mt,
  (SELECT coalesce(json_agg(json_build_object('address', p.address, 'match_id', p.match_id + :off)), '[]')
     FROM match_players p WHERE p.match_id IN (SELECT match_id FROM events WHERE kind IN ('challenge_issued','game_started') AND seq > 1000 + b*100 AND seq <= 1000 + (b+1)*100)) AS pl
FROM generate_series(0, 299) b;
