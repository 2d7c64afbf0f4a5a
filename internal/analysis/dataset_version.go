package analysis

import (
	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
)

// runDataset is the dataset version a stored run recorded.
func runDataset(r *record.Run) dataset.Version {
	return dataset.Version{Hash: r.DatasetHash, File: r.FileHash}
}

// datasetRows are the version rows a diff shows for the dataset: its
// version as compared (m: by content, or by bytes when a side predates
// content hashes) and the file's byte hash.
func datasetRows(m dataset.Match, before, after dataset.Version) []VersionChange {
	return []VersionChange{
		{Name: "dataset_hash", Before: before.Hash, After: after.Hash, Same: m.Same && !m.Unknown || before.Hash == after.Hash},
		{Name: "dataset_file_hash", Before: before.Bytes(), After: after.Bytes(), Same: before.Bytes() == after.Bytes()},
	}
}
