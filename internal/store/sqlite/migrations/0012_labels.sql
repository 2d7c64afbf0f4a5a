-- People's labels of a run's outputs.
--
-- label_queues hold the labeling queues of a run: a named, seeded sample of
-- its outputs shown blind to a labeler; queue_items their outputs at their
-- shuffled positions, each with the hash of the output it shows, the stratum
-- it was drawn from and its weight (stratum size / items drawn from it).
-- labels hold one person's verdict on one output: pass, fail (with a reason)
-- or skip, with the corrected output when given; queue is '' for a label
-- given outside a queue (an import without one). A labeler has one label per
-- output and queue: a new one replaces it, so importing a file twice stores
-- nothing twice. Labels refer to the run, not to its results: a result
-- replaced by --retry-errors keeps its labels, whose output_hash then no
-- longer matches (calibration counts them, does not use them).

CREATE TABLE label_queues (
	run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name    TEXT NOT NULL,
	judge   TEXT NOT NULL,
	size    INTEGER NOT NULL,
	seed    INTEGER NOT NULL, -- the uint64 seed's bits
	strata  TEXT NOT NULL,    -- JSON array: "target", "judge", "slice:<key>"
	created INTEGER,
	PRIMARY KEY (run_id, name)
) STRICT;

CREATE TABLE queue_items (
	run_id      TEXT NOT NULL,
	queue       TEXT NOT NULL,
	position    INTEGER NOT NULL,
	case_id     TEXT NOT NULL,
	target      TEXT NOT NULL,
	epoch       INTEGER NOT NULL,
	output_hash TEXT NOT NULL,
	stratum     TEXT NOT NULL,
	weight      REAL NOT NULL,
	PRIMARY KEY (run_id, queue, position),
	FOREIGN KEY (run_id, queue) REFERENCES label_queues (run_id, name) ON DELETE CASCADE
) STRICT;

CREATE TABLE labels (
	id          INTEGER PRIMARY KEY,
	run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	case_id     TEXT NOT NULL,
	target      TEXT NOT NULL,
	epoch       INTEGER NOT NULL,
	output_hash TEXT NOT NULL,
	queue       TEXT NOT NULL,
	labeler     TEXT NOT NULL,
	verdict     TEXT NOT NULL,
	reason      TEXT NOT NULL,
	corrected   TEXT NOT NULL,
	created     INTEGER,
	UNIQUE (run_id, case_id, target, epoch, queue, labeler)
) STRICT;

-- Labels stream by run and creation time; undo finds a labeler's latest in
-- a queue.
CREATE INDEX labels_by_created ON labels (run_id, created);
CREATE INDEX labels_by_queue ON labels (run_id, queue, labeler, created);
