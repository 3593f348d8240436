-- Triad schema, version 7: the service's heartbeat, one row (`id` 1).
-- Every node writes it about once a second: `alive_ms` is the latest time a node was
-- known to be alive (by the clock of the node that wrote it, never moved back), `beats`
-- counts the writes. A node that starts reads it first: when it is older than the grace
-- period and no other node still beats (`beats` stands still), the whole service was down,
-- and the node gives the outage back to the clocks (`ResumeClocks`) before it serves.
CREATE TABLE heartbeat (
    id       BIGINT PRIMARY KEY,
    alive_ms BIGINT NOT NULL,
    beats    BIGINT NOT NULL
);
