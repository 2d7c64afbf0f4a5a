-- How many secrets (values of the variables a spec's targets name) were
-- replaced in a result's raw output or error before it was stored. A
-- result stored before this version counts 0.

ALTER TABLE results ADD COLUMN redactions INTEGER NOT NULL DEFAULT 0;
