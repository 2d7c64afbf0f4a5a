-- The dataset's file hash beside its content hash.
--
-- runs.dataset_hash is the dataset's version: from this version on, a hash
-- of the parsed cases (IDs, fields, expected values, tags, weights in a
-- canonical encoding), so line ends, a byte-order mark, CSV quoting and
-- JSONL key order do not change it. runs.file_hash is the hash of the
-- file's bytes. '' for runs made before this version: their dataset_hash
-- is the byte hash (see docs/versioning.md).

ALTER TABLE runs ADD COLUMN file_hash TEXT NOT NULL DEFAULT '';
