-- The first schema of the assay store.
--
-- Times are INTEGER microseconds since the Unix epoch (UTC), NULL for the zero
-- time. JSON is TEXT. Tables are STRICT so a wrong type is an error, not a
-- silent conversion. Results and scores keep an integer rowid (their rows can
-- hold megabytes of model output, which WITHOUT ROWID tables handle badly) and
-- a unique key that makes re-inserting a result a no-op.

CREATE TABLE runs (
	id           TEXT PRIMARY KEY,
	spec         TEXT NOT NULL,
	spec_path    TEXT NOT NULL,
	spec_hash    TEXT NOT NULL,
	dataset_hash TEXT NOT NULL,
	prompt_hash  TEXT NOT NULL,
	git_commit   TEXT NOT NULL,
	targets      TEXT NOT NULL, -- JSON array of target names
	cases        INTEGER NOT NULL,
	epochs       INTEGER NOT NULL,
	status       TEXT NOT NULL,
	started      INTEGER,
	ended        INTEGER,
	config       BLOB           -- the resolved spec as JSON
) STRICT;

-- "latest" and ListRuns: newest start first, ties by insertion (rowid).
CREATE INDEX runs_by_started ON runs (started);

CREATE TABLE cases (
	run_id   TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	case_id  TEXT NOT NULL,
	line     INTEGER NOT NULL,
	expected TEXT, -- JSON; NULL when the case has none
	tags     TEXT, -- JSON object; NULL when the case has none
	weight   REAL,
	PRIMARY KEY (run_id, case_id)
) STRICT;

-- Cases, results and scores stream in dataset order.
CREATE INDEX cases_by_line ON cases (run_id, line, case_id);

CREATE TABLE results (
	id             INTEGER PRIMARY KEY,
	run_id         TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	case_id        TEXT NOT NULL,
	target         TEXT NOT NULL,
	epoch          INTEGER NOT NULL,
	raw            TEXT NOT NULL,
	parsed         TEXT NOT NULL,
	parse_error    TEXT NOT NULL,
	finish_reason  TEXT NOT NULL,
	input_tokens   INTEGER NOT NULL,
	output_tokens  INTEGER NOT NULL,
	cached_tokens  INTEGER NOT NULL,
	cost_usd       REAL NOT NULL,
	latency_ms     REAL NOT NULL,
	first_token_ms REAL NOT NULL,
	attempts       INTEGER NOT NULL,
	error_kind     TEXT NOT NULL,
	error          TEXT NOT NULL,
	model          TEXT NOT NULL,
	fingerprint    TEXT NOT NULL,
	from_cache     INTEGER NOT NULL,
	created_at     INTEGER,
	-- One result per case × target × epoch; also the order results stream
	-- in within a case, and the resume lookup (DoneKeys).
	UNIQUE (run_id, case_id, target, epoch)
) STRICT;

CREATE TABLE scores (
	id         INTEGER PRIMARY KEY,
	run_id     TEXT NOT NULL,
	scoring    INTEGER NOT NULL,
	case_id    TEXT NOT NULL,
	target     TEXT NOT NULL,
	epoch      INTEGER NOT NULL,
	scorer     TEXT NOT NULL,
	is_primary INTEGER NOT NULL,
	pass       INTEGER NOT NULL,
	value      REAL NOT NULL,
	shape      TEXT NOT NULL,
	kind       TEXT NOT NULL,
	reason     TEXT NOT NULL,
	error_cost REAL NOT NULL,
	judge_cost REAL NOT NULL,
	-- One verdict per scorer on a result in a scoring; also the stream order
	-- within a case, and MAX(scoring) for LatestScoring.
	UNIQUE (run_id, scoring, case_id, target, epoch, scorer),
	FOREIGN KEY (run_id, case_id, target, epoch)
		REFERENCES results (run_id, case_id, target, epoch) ON DELETE CASCADE
) STRICT;

-- Deleting a result finds its scores (foreign key enforcement).
CREATE INDEX scores_by_result ON scores (run_id, case_id, target, epoch);

CREATE TABLE cache (
	key        TEXT PRIMARY KEY,
	response   BLOB NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
