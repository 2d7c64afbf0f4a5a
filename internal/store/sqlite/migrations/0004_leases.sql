-- The lease on a run: the one process allowed to write its results.
--
-- assay run (new or --resume) and retries take the lease before calling any
-- provider and renew its heartbeat while they work; a second process finds
-- it held and stops before making a call, naming the holder. A lease whose
-- heartbeat is older than the taker's staleness limit is taken over, and
-- --force breaks any lease. Releasing deletes the row.

CREATE TABLE leases (
	run_id    TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	holder    TEXT NOT NULL,
	pid       INTEGER NOT NULL,
	host      TEXT NOT NULL,
	acquired  INTEGER NOT NULL,
	heartbeat INTEGER NOT NULL
) STRICT;
