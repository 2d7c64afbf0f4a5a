package report

import (
	"errors"
	"io"

	"github.com/assay-eval/assay/internal/difficulty"
)

// DifficultyFormats are `assay difficulty`'s formats.
func DifficultyFormats() []Format[*difficulty.Fitted] {
	return []Format[*difficulty.Fitted]{
		{Name: "text", Aliases: []string{""}, Render: DifficultyText},
		JSONFormat[*difficulty.Fitted](),
	}
}

// DifficultyText renders the fit as plain text.
func DifficultyText(w io.Writer, f *difficulty.Fitted) error {
	return errors.New("difficulty: the text report is not built yet")
}
