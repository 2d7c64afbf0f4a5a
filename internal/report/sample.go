package report

import (
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/sample"
)

// SampleFormats are `assay sample`'s formats.
func SampleFormats() []Format[*record.Sample] {
	return []Format[*record.Sample]{JSONFormat[*record.Sample]()}
}

// TraceScoresFormats are `assay score-traces`' formats.
func TraceScoresFormats() []Format[*sample.ScoreReport] {
	return []Format[*sample.ScoreReport]{JSONFormat[*sample.ScoreReport]()}
}
