// Package blind owns the blinded vendor exchange: a sample of inputs with
// opaque IDs, shuffled, with no expected values, tags or internal IDs
// (export), and a sealed key kept locally that maps a vendor's answers back
// to the cases (import), refusing any mismatch.
package blind

// ExportResult is what `assay export --blind` wrote.
type ExportResult struct {
	Sample string `json:"sample"`
	Key    string `json:"key"`
	Cases  int    `json:"cases"`
}

// ImportResult is what `assay import` did.
type ImportResult struct {
	RunID  string `json:"run_id"`
	Target string `json:"target"`
	Cases  int    `json:"cases"`
}
