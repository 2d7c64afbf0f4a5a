package report

import (
	"errors"
	"io"

	"github.com/assay-eval/assay/internal/record"
)

// LoadReport is what `assay load` and `assay report` of a load run render:
// the run and its stored steps.
type LoadReport struct {
	Run   *record.Run
	Steps []record.LoadStep
}

// LoadFormats are `assay load`'s formats.
func LoadFormats() []Format[*LoadReport] {
	notYet := func(io.Writer, *LoadReport) error { return errors.New("the load report is not written yet") }
	return []Format[*LoadReport]{
		{Name: "text", Aliases: []string{""}, Render: notYet},
		{Name: "markdown", Aliases: []string{"md"}, Render: notYet},
		{Name: "json", Render: notYet},
		{Name: "html", Render: notYet},
	}
}
