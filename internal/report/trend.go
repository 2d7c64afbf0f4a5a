package report

import "github.com/assay-eval/assay/internal/trend"

// TrendFormats are `assay trend`'s formats.
func TrendFormats() []Format[*trend.Report] {
	return []Format[*trend.Report]{JSONFormat[*trend.Report]()}
}
