-- Load tests (assay load). A load test is a run of kind 'load'; every run
-- stored before this version is an evaluation run, kind ''.
--
-- load_steps hold one row per target × step: the level offered (requests/s
-- in an open loop, concurrent requests in a closed one), the measured
-- window, what was sent and answered, the harness's own CPU and lateness,
-- whether it was the bottleneck, and why a step was skipped ('' when it
-- ran). load_requests hold one row per request made, in start order within
-- its step. Times are microseconds since the Unix epoch as elsewhere (NULL
-- for the zero time); first_token_ms and inter_token_ms are NULL when
-- there was no streamed token (NaN in the record). Both cascade from runs,
-- and DeleteRun deletes them explicitly as well.

ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT '';

CREATE TABLE load_steps (
	run_id          TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target          TEXT NOT NULL,
	step            INTEGER NOT NULL,
	mode            TEXT NOT NULL,
	level           REAL NOT NULL,
	started         INTEGER,
	duration_ms     REAL NOT NULL,
	sent            INTEGER NOT NULL,
	done            INTEGER NOT NULL,
	client_cpu      REAL NOT NULL,
	cores           INTEGER NOT NULL,
	lateness_p95_ms REAL NOT NULL,
	saturated       INTEGER NOT NULL,
	skipped         TEXT NOT NULL,
	PRIMARY KEY (run_id, target, step)
) STRICT;

CREATE TABLE load_requests (
	run_id         TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target         TEXT NOT NULL,
	step           INTEGER NOT NULL,
	seq            INTEGER NOT NULL,
	case_id        TEXT NOT NULL,
	start_ms       REAL NOT NULL,
	latency_ms     REAL NOT NULL,
	first_token_ms REAL,
	inter_token_ms REAL,
	input_tokens   INTEGER NOT NULL,
	output_tokens  INTEGER NOT NULL,
	cost_usd       REAL NOT NULL,
	error_kind     TEXT NOT NULL,
	status         INTEGER NOT NULL,
	PRIMARY KEY (run_id, target, step, seq)
) STRICT;
