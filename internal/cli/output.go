package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/atomicfile"
	"github.com/assay-eval/assay/internal/report"
)

// The printer: every command's result goes out through printOut — to stdout,
// or to the file -o names, written atomically — rendered by a
// report.Reporter looked up in the report registry (report.NewRegistry) by
// --format. Diagnostics go to stderr and are not output.

// checkFormat refuses a --format that is not one of formats, naming them.
func checkFormat(format string, formats []string) error {
	if slices.Contains(formats, format) {
		return nil
	}
	return usageError{fmt.Errorf("--format %q: formats are %s", format, strings.Join(formats, ", "))}
}

// printOut writes a command's result: to stdout when path is empty, else to
// the file path (writeOutput).
func printOut(stdout io.Writer, path string, r report.Reporter) error {
	if path == "" {
		return r(stdout)
	}
	return writeOutput(path, r)
}

// writeJSONOut prints v as indented JSON, as every --json output is.
func writeJSONOut(w io.Writer, v any) error { return report.JSONOf(v)(w) }

// writeOutput writes a rendered document to path whole or not at all
// (atomicfile.Write).
func writeOutput(path string, r report.Reporter) error { return atomicfile.Write(path, r) }
