package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// writeOutput writes a rendered document to path atomically: into a
// temporary file in the same directory, renamed over path once the render
// and the close have succeeded. A render that fails part-way leaves no
// file behind, and a file already at path as it was. An existing file
// keeps its permissions (a new one is 0644); a symbolic link is followed,
// so the file it points to is replaced, not the link. A path that exists
// and is not a regular file (a terminal, a pipe, /dev/stdout) has nothing
// to rename over and is written in place.
func writeOutput(path string, r report.Reporter) error {
	mode := fs.FileMode(0o644)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	switch fi, err := os.Stat(path); {
	case err == nil && !fi.Mode().IsRegular():
		return writeInPlace(path, r)
	case err == nil:
		mode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone after the rename; removes a failed render
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := r(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writeInPlace writes to a special file, which is opened, not replaced.
func writeInPlace(path string, r report.Reporter) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if err := r(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
