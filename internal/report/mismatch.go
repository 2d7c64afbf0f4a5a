package report

import (
	"errors"
	"io"

	"github.com/assay-eval/assay/internal/difficulty"
)

// MismatchFormats are `assay mismatch`'s formats.
func MismatchFormats() []Format[*difficulty.Mismatch] {
	return []Format[*difficulty.Mismatch]{
		{Name: "text", Aliases: []string{""}, Render: MismatchText},
		JSONFormat[*difficulty.Mismatch](),
	}
}

// MismatchText renders the comparison as plain text.
func MismatchText(w io.Writer, m *difficulty.Mismatch) error {
	return errors.New("mismatch: the text report is not built yet")
}
