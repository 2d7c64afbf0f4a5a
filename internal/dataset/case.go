// Package dataset owns the cases: streaming JSONL and CSV readers that turn
// rows into Case values (stable ID, variables, expected value, tags, weight),
// report malformed rows, duplicate IDs and repeated keys with their line
// numbers, and hash the parsed cases (canonical.go) so the dataset's
// version is its content, not its bytes; the bytes' hash is kept as the
// file's. JSON
// numbers keep their written form (json.Number) from the file to the
// scorers. It must not import the
// runner, providers, scorer or store.
package dataset

// Case is one row of the dataset.
type Case struct {
	// ID is stable across runs: the value of the spec's id field, or the
	// 1-based line (JSONL) or row (CSV, header excluded) number.
	ID string `json:"id"`
	// Line is the 1-based line in the file where the row starts.
	Line int `json:"line"`
	// Vars are the row's fields, as decoded (JSON values with numbers as
	// json.Number; CSV gives strings).
	Vars map[string]any `json:"vars"`
	// Expected is the reference value (after expected_extract), or nil when
	// the spec names no expected field.
	Expected any `json:"expected,omitempty"`
	// Tags are slice keys → values, from fields or CEL expressions.
	Tags map[string]string `json:"tags,omitempty"`
	// Weight is the cost of a wrong answer; HasWeight tells whether the row set one.
	Weight    float64 `json:"weight,omitempty"`
	HasWeight bool    `json:"has_weight,omitempty"`
}
