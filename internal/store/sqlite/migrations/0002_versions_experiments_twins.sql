-- Versioning and integrity records.
--
-- runs gain the hash of the scorer configuration, the assay version that made
-- them and the experiment they belong to (a name shared by the variants a
-- team tries before choosing one; '' when none).
--
-- twins hold the paired variants of cases that contamination probes compare
-- against the originals: one row per case of a twin set. A set is named by a
-- content hash of what made it (the original dataset, and the twin file or
-- the rewriter target and its recorded prompt), so a probe re-runs on the
-- stored twins without asking a rewriter again.

ALTER TABLE runs ADD COLUMN scorers_hash  TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN assay_version TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN experiment    TEXT NOT NULL DEFAULT '';

CREATE INDEX runs_by_experiment ON runs (experiment, started);

CREATE TABLE twins (
	set_id     TEXT NOT NULL,
	case_id    TEXT NOT NULL,
	source     TEXT NOT NULL, -- "file:<path>" or "rewriter:<target>"
	fields     TEXT NOT NULL, -- JSON object: the twin case's fields
	created    INTEGER,
	PRIMARY KEY (set_id, case_id)
) STRICT;
