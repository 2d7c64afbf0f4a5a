-- The scorers hash each rescore was made with.
--
-- A rescore applies the current spec's parser and scorers, which may differ
-- from the run's (runs.scorers_hash). scorings.scorers_hash records the
-- hash of the definition of correct the scoring used, so a report of a
-- rescored run says which one it reads. '' when not recorded (scorings
-- made before this version); scoring 1 is the run's own and has no row.

ALTER TABLE scorings ADD COLUMN scorers_hash TEXT NOT NULL DEFAULT '';
