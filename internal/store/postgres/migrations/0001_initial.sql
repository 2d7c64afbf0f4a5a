-- The assay store on PostgreSQL: the same records as the SQLite store's
-- fourteen migrations, in their final shape.
--
-- Encoding, as in the SQLite store: every string that comes from outside
-- (case IDs, target and scorer names, model output, reasons, JSON fields) is
-- BYTEA, so output that is not valid UTF-8 or holds NUL bytes survives byte
-- for byte and sorts bytewise (SQLite's BINARY order). Times are BIGINT
-- microseconds since the Unix epoch, NULL for the zero time. Booleans are
-- BOOLEAN; floats DOUBLE PRECISION; a uint64 seed is stored as its bits.

CREATE TABLE runs (
	id            TEXT PRIMARY KEY,
	spec          BYTEA NOT NULL,
	spec_path     BYTEA NOT NULL,
	spec_hash     TEXT NOT NULL,
	dataset_hash  TEXT NOT NULL,
	prompt_hash   TEXT NOT NULL,
	git_commit    TEXT NOT NULL,
	targets       BYTEA NOT NULL, -- JSON array of target names
	cases         BIGINT NOT NULL,
	epochs        BIGINT NOT NULL,
	status        TEXT NOT NULL,
	started       BIGINT,
	ended         BIGINT,
	config        BYTEA,          -- the resolved spec as JSON
	scorers_hash  TEXT NOT NULL DEFAULT '',
	assay_version TEXT NOT NULL DEFAULT '',
	experiment    BYTEA NOT NULL DEFAULT '',
	host          BYTEA NOT NULL DEFAULT '',
	file_hash     TEXT NOT NULL DEFAULT '',
	sample        TEXT NOT NULL DEFAULT '',
	kind          TEXT NOT NULL DEFAULT '',
	-- The order runs were created in (SQLite's rowid): of runs that
	-- started in the same microsecond, the latest is the one created last.
	seq           BIGSERIAL NOT NULL
);
-- NULLS FIRST as in SQLite, where NULL sorts below every number.
CREATE INDEX runs_by_started ON runs (started NULLS FIRST, seq);
CREATE INDEX runs_by_experiment ON runs (experiment, started NULLS FIRST, seq);

CREATE TABLE cases (
	run_id   TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	case_id  BYTEA NOT NULL,
	line     BIGINT NOT NULL,
	expected BYTEA, -- JSON; NULL when the case has none
	tags     BYTEA, -- JSON object; NULL when the case has none
	weight   DOUBLE PRECISION,
	PRIMARY KEY (run_id, case_id)
);
CREATE INDEX cases_by_line ON cases (run_id, line, case_id);

CREATE TABLE results (
	id             BIGSERIAL PRIMARY KEY,
	run_id         TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	case_id        BYTEA NOT NULL,
	target         BYTEA NOT NULL,
	epoch          BIGINT NOT NULL,
	raw            BYTEA NOT NULL,
	parsed         BYTEA NOT NULL,
	parse_error    BYTEA NOT NULL,
	finish_reason  BYTEA NOT NULL,
	input_tokens   BIGINT NOT NULL,
	output_tokens  BIGINT NOT NULL,
	cached_tokens  BIGINT NOT NULL,
	cost_usd       DOUBLE PRECISION NOT NULL,
	latency_ms     DOUBLE PRECISION NOT NULL,
	first_token_ms DOUBLE PRECISION NOT NULL,
	attempts       BIGINT NOT NULL,
	error_kind     BYTEA NOT NULL,
	error          BYTEA NOT NULL,
	model          BYTEA NOT NULL,
	fingerprint    BYTEA NOT NULL,
	from_cache     BOOLEAN NOT NULL,
	created_at     BIGINT,
	redactions     BIGINT NOT NULL DEFAULT 0,
	retries        BIGINT NOT NULL DEFAULT 0,
	saved_usd      DOUBLE PRECISION NOT NULL DEFAULT 0,
	tool_calls     BYTEA,
	turns          BYTEA,
	-- One result per case × target × epoch: the unit of work, which a
	-- retried job (a killed worker's) must never store twice.
	UNIQUE (run_id, case_id, target, epoch)
);

CREATE TABLE scores (
	id          BIGSERIAL PRIMARY KEY,
	run_id      TEXT NOT NULL,
	scoring     BIGINT NOT NULL,
	case_id     BYTEA NOT NULL,
	target      BYTEA NOT NULL,
	epoch       BIGINT NOT NULL,
	scorer      BYTEA NOT NULL,
	is_primary  BOOLEAN NOT NULL,
	pass        BOOLEAN NOT NULL,
	value       DOUBLE PRECISION NOT NULL,
	shape       BYTEA NOT NULL,
	kind        BYTEA NOT NULL,
	reason      BYTEA NOT NULL,
	error_cost  DOUBLE PRECISION NOT NULL,
	judge_cost  DOUBLE PRECISION NOT NULL,
	parse_note  BYTEA NOT NULL DEFAULT '',
	fields      BYTEA NOT NULL DEFAULT '',
	judge_saved DOUBLE PRECISION NOT NULL DEFAULT 0,
	UNIQUE (run_id, scoring, case_id, target, epoch, scorer),
	FOREIGN KEY (run_id, case_id, target, epoch)
		REFERENCES results (run_id, case_id, target, epoch) ON DELETE CASCADE
);
CREATE INDEX scores_by_result ON scores (run_id, case_id, target, epoch);

CREATE TABLE cache (
	key        TEXT PRIMARY KEY,
	response   BYTEA NOT NULL,
	created_at BIGINT NOT NULL,
	target     BYTEA NOT NULL DEFAULT ''
);
CREATE INDEX cache_by_target ON cache (target);

CREATE TABLE twins (
	set_id  BYTEA NOT NULL,
	case_id BYTEA NOT NULL,
	source  BYTEA NOT NULL, -- "file:<path>" or "rewriter:<target>"
	fields  BYTEA NOT NULL, -- JSON object: the twin case's fields
	created BIGINT,
	PRIMARY KEY (set_id, case_id)
);

CREATE TABLE scorings (
	run_id       TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	scoring      BIGINT NOT NULL CHECK (scoring >= 1),
	status       TEXT NOT NULL CHECK (status IN ('pending', 'complete')),
	created      BIGINT,
	scorers_hash TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (run_id, scoring)
);

CREATE TABLE leases (
	run_id    TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	holder    TEXT NOT NULL,
	pid       BIGINT NOT NULL,
	host      BYTEA NOT NULL,
	acquired  BIGINT NOT NULL,
	heartbeat BIGINT NOT NULL
);

CREATE TABLE label_queues (
	run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name    BYTEA NOT NULL,
	judge   BYTEA NOT NULL,
	size    BIGINT NOT NULL,
	seed    BIGINT NOT NULL, -- the uint64 seed's bits
	strata  BYTEA NOT NULL,  -- JSON array: "target", "judge", "slice:<key>"
	created BIGINT,
	seq     BIGSERIAL, -- the order stored (SQLite's rowid), after created
	PRIMARY KEY (run_id, name)
);

CREATE TABLE queue_items (
	run_id      TEXT NOT NULL,
	queue       BYTEA NOT NULL,
	position    BIGINT NOT NULL,
	case_id     BYTEA NOT NULL,
	target      BYTEA NOT NULL,
	epoch       BIGINT NOT NULL,
	output_hash TEXT NOT NULL,
	stratum     BYTEA NOT NULL,
	weight      DOUBLE PRECISION NOT NULL,
	PRIMARY KEY (run_id, queue, position),
	FOREIGN KEY (run_id, queue) REFERENCES label_queues (run_id, name) ON DELETE CASCADE
);

CREATE TABLE labels (
	id          BIGSERIAL PRIMARY KEY,
	run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	case_id     BYTEA NOT NULL,
	target      BYTEA NOT NULL,
	epoch       BIGINT NOT NULL,
	output_hash TEXT NOT NULL,
	queue       BYTEA NOT NULL,
	labeler     BYTEA NOT NULL,
	verdict     BYTEA NOT NULL,
	reason      BYTEA NOT NULL,
	corrected   BYTEA NOT NULL,
	created     BIGINT,
	UNIQUE (run_id, case_id, target, epoch, queue, labeler)
);
CREATE INDEX labels_by_created ON labels (run_id, created);
CREATE INDEX labels_by_queue ON labels (run_id, queue, labeler, created);

CREATE TABLE traces (
	id             BYTEA PRIMARY KEY, -- from outside: any bytes, ordered bytewise
	trace_id       BYTEA NOT NULL,
	span_id        BYTEA NOT NULL,
	source         BYTEA NOT NULL,
	time           BIGINT,
	latency_ms     DOUBLE PRECISION NOT NULL,
	operation      BYTEA NOT NULL,
	provider       BYTEA NOT NULL,
	model          BYTEA NOT NULL,
	response_model BYTEA NOT NULL,
	input_tokens   BIGINT NOT NULL,
	output_tokens  BIGINT NOT NULL,
	cost_usd       DOUBLE PRECISION NOT NULL,
	priced         BOOLEAN NOT NULL,
	system         BYTEA NOT NULL,
	input          BYTEA NOT NULL, -- JSON array of messages, or null
	output         BYTEA NOT NULL, -- JSON array of messages, or null
	finish_reason  BYTEA NOT NULL,
	error_type     BYTEA NOT NULL,
	attributes     BYTEA,          -- JSON object; NULL when none
	resource       BYTEA,          -- JSON object; NULL when none
	redactions     BIGINT NOT NULL,
	received       BIGINT
);
CREATE INDEX traces_by_time ON traces (time NULLS FIRST, id, model); -- SQLite's order: no time first

CREATE TABLE samples (
	id        TEXT PRIMARY KEY,
	created   BIGINT,
	since     BIGINT,
	until     BIGINT,
	filter    BYTEA NOT NULL,
	strata_by BYTEA NOT NULL, -- JSON array of the strata keys
	per       BIGINT NOT NULL,
	seed      BIGINT NOT NULL, -- the uint64 seed's bits
	seq       BIGSERIAL -- the order stored (SQLite's rowid), after created
);
CREATE INDEX samples_by_created ON samples (created NULLS FIRST, seq);

CREATE TABLE sample_strata (
	sample_id  TEXT NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
	position   BIGINT NOT NULL,
	key        BYTEA NOT NULL,
	population BIGINT NOT NULL,
	drawn      BIGINT NOT NULL,
	PRIMARY KEY (sample_id, position),
	UNIQUE (sample_id, key)
);

CREATE TABLE sample_items (
	sample_id TEXT NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
	position  BIGINT NOT NULL,
	trace_id  BYTEA NOT NULL,
	stratum   BYTEA NOT NULL,
	weight    DOUBLE PRECISION NOT NULL,
	PRIMARY KEY (sample_id, position),
	UNIQUE (sample_id, trace_id) -- drawn without replacement
);

CREATE TABLE load_steps (
	run_id          TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target          BYTEA NOT NULL,
	step            BIGINT NOT NULL,
	mode            TEXT NOT NULL,
	level           DOUBLE PRECISION NOT NULL,
	started         BIGINT,
	duration_ms     DOUBLE PRECISION NOT NULL,
	sent            BIGINT NOT NULL,
	done            BIGINT NOT NULL,
	client_cpu      DOUBLE PRECISION NOT NULL,
	cores           BIGINT NOT NULL,
	lateness_p95_ms DOUBLE PRECISION NOT NULL,
	saturated       BOOLEAN NOT NULL,
	skipped         BYTEA NOT NULL,
	PRIMARY KEY (run_id, target, step)
);

CREATE TABLE load_requests (
	run_id         TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target         BYTEA NOT NULL,
	step           BIGINT NOT NULL,
	seq            BIGINT NOT NULL,
	case_id        BYTEA NOT NULL,
	start_ms       DOUBLE PRECISION NOT NULL,
	latency_ms     DOUBLE PRECISION NOT NULL,
	first_token_ms DOUBLE PRECISION,
	inter_token_ms DOUBLE PRECISION,
	input_tokens   BIGINT NOT NULL,
	output_tokens  BIGINT NOT NULL,
	cost_usd       DOUBLE PRECISION NOT NULL,
	error_kind     BYTEA NOT NULL,
	status         BIGINT NOT NULL,
	PRIMARY KEY (run_id, target, step, seq)
);
