-- The status of a scoring made after the run (rescore).
--
-- A rescore reserves its scoring number here, as 'pending', inside a write
-- transaction, so two rescores of one run at once get distinct numbers. It
-- writes its scores, then marks the scoring 'complete'. Readers that pick
-- "the latest scoring" skip a pending one, so a rescore that was killed
-- halfway is never read as the run's scores.
--
-- A scoring with no row here (scoring 1, made during the run, and every
-- scoring of a store older than this migration) counts as complete.

CREATE TABLE scorings (
	run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	scoring INTEGER NOT NULL CHECK (scoring >= 1),
	status  TEXT NOT NULL CHECK (status IN ('pending', 'complete')),
	created INTEGER,
	PRIMARY KEY (run_id, scoring)
) STRICT;
