package report

import (
	"github.com/assay-eval/assay/internal/blind"
	"github.com/assay-eval/assay/internal/promote"
)

// PromoteFormats are `assay promote`'s formats.
func PromoteFormats() []Format[*promote.Result] {
	return []Format[*promote.Result]{JSONFormat[*promote.Result]()}
}

// BlindExportFormats are `assay export --blind`'s formats.
func BlindExportFormats() []Format[*blind.ExportResult] {
	return []Format[*blind.ExportResult]{JSONFormat[*blind.ExportResult]()}
}

// BlindImportFormats are `assay import`'s formats.
func BlindImportFormats() []Format[*blind.ImportResult] {
	return []Format[*blind.ImportResult]{JSONFormat[*blind.ImportResult]()}
}
