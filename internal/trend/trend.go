// Package trend owns `assay trend`: scored production traces' pass rates per
// model by week, with intervals, and a drop flagged when a week's rate is
// below the week before's by a two-sample test, multiplicity-corrected.
package trend

// Report is `assay trend`'s result.
type Report struct {
	Level float64 `json:"level"`
}
