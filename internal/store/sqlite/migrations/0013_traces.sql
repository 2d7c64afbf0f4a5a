-- Production traffic: traces, the samples drawn from them, and the sample a
-- run scored.
--
-- traces hold one model call each (an OTLP GenAI span received by assay
-- collect, a JSONL line read by assay ingest), keyed by the trace's ID:
-- storing it again stores nothing. Times are microseconds since the Unix
-- epoch as elsewhere (NULL for the zero time). input and output are the
-- conversation as JSON arrays of messages ("null" when the trace had none);
-- attributes and resource are JSON objects as given, NULL when absent.
-- Traces stream by time then ID (traces_by_time, which also holds the
-- model, so a model's traces in a window are found in the index). One
-- index, not one per filter: traces arrive by the thousand a second, and
-- each index costs every insert.
--
-- samples are recorded draws from the traces (assay sample): the population
-- they were drawn from (time window, filter, strata keys), the seed, the
-- strata with their sizes and draws (sample_strata, in the sampler's order)
-- and the drawn traces with their strata and weights (sample_items, in draw
-- order, each trace at most once: samples are drawn without replacement).
-- Items name traces by ID without a foreign key, so a sample keeps its
-- record if traces are ever pruned.
--
-- runs.sample is the ID of the sample a score-traces run scored ('' for an
-- evaluation run and every run stored before this version).

CREATE TABLE traces (
	id             TEXT PRIMARY KEY,
	trace_id       TEXT NOT NULL,
	span_id        TEXT NOT NULL,
	source         TEXT NOT NULL,
	time           INTEGER,
	latency_ms     REAL NOT NULL,
	operation      TEXT NOT NULL,
	provider       TEXT NOT NULL,
	model          TEXT NOT NULL,
	response_model TEXT NOT NULL,
	input_tokens   INTEGER NOT NULL,
	output_tokens  INTEGER NOT NULL,
	cost_usd       REAL NOT NULL,
	priced         INTEGER NOT NULL,
	system         TEXT NOT NULL,
	input          TEXT NOT NULL, -- JSON array of messages, or null
	output         TEXT NOT NULL, -- JSON array of messages, or null
	finish_reason  TEXT NOT NULL,
	error_type     TEXT NOT NULL,
	attributes     TEXT,          -- JSON object; NULL when none
	resource       TEXT,          -- JSON object; NULL when none
	redactions     INTEGER NOT NULL,
	received       INTEGER
) STRICT;

CREATE INDEX traces_by_time ON traces (time, id, model);

CREATE TABLE samples (
	id        TEXT PRIMARY KEY,
	created   INTEGER,
	since     INTEGER,
	until     INTEGER,
	filter    TEXT NOT NULL,
	strata_by TEXT NOT NULL, -- JSON array of the strata keys
	per       INTEGER NOT NULL,
	seed      INTEGER NOT NULL -- the uint64 seed's bits
) STRICT;

CREATE INDEX samples_by_created ON samples (created);

CREATE TABLE sample_strata (
	sample_id  TEXT NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
	position   INTEGER NOT NULL,
	key        TEXT NOT NULL,
	population INTEGER NOT NULL,
	drawn      INTEGER NOT NULL,
	PRIMARY KEY (sample_id, position),
	UNIQUE (sample_id, key)
) STRICT;

CREATE TABLE sample_items (
	sample_id TEXT NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
	position  INTEGER NOT NULL,
	trace_id  TEXT NOT NULL,
	stratum   TEXT NOT NULL,
	weight    REAL NOT NULL,
	PRIMARY KEY (sample_id, position),
	UNIQUE (sample_id, trace_id) -- drawn without replacement
) STRICT;

ALTER TABLE runs ADD COLUMN sample TEXT NOT NULL DEFAULT '';
