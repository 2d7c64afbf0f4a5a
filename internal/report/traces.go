package report

import "github.com/assay-eval/assay/internal/traces"

// IngestFormats are `assay ingest`'s formats.
func IngestFormats() []Format[*traces.IngestResult] {
	return []Format[*traces.IngestResult]{JSONFormat[*traces.IngestResult]()}
}
