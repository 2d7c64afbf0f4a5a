-- Records a user's first real task needs.
--
-- scores.parse_note says how the scoring's parser read the output when it
-- had to tolerate something around the value ('' when the output was the
-- value alone or was not parsed): 'fenced' (a ```json fence), 'prose' (text
-- around one JSON value). The report counts them per target: a model that
-- wraps its JSON in chatter is a format failure in many workloads.
--
-- scores.fields is a field scorer's per-field outcome as a JSON array of
-- {"field": path, "status": ok|wrong|missing} in the scorer's field order
-- ('' for other scorers), from which the report builds a per-field table.
--
-- cache.target names the target whose reply a cache entry holds, so a user
-- can count or clear one target's entries ('' for entries stored before
-- this version).
--
-- runs.host is what the run saw of its host as JSON (cores, load samples),
-- so the report can warn when the host was saturated and latencies measure
-- the machine rather than the model ('' when not recorded).
--
-- results.retries counts how many times --retry-errors re-called a result
-- that had failed loudly for a provider reason (0 for a first call).

ALTER TABLE scores ADD COLUMN parse_note TEXT NOT NULL DEFAULT '';
ALTER TABLE scores ADD COLUMN fields     TEXT NOT NULL DEFAULT '';
ALTER TABLE cache  ADD COLUMN target     TEXT NOT NULL DEFAULT '';
ALTER TABLE runs   ADD COLUMN host       TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN retries   INTEGER NOT NULL DEFAULT 0;

CREATE INDEX cache_by_target ON cache (target);
