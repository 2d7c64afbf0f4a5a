package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// checkFormat refuses a --format that is not one of formats, naming them.
func checkFormat(format string, formats []string) error {
	if slices.Contains(formats, format) {
		return nil
	}
	return usageError{fmt.Errorf("--format %q: formats are %s", format, strings.Join(formats, ", "))}
}

// writeOut writes a file in place (a special file such as a CI runner's
// step summary stays where it is).
func writeOut(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeFileAtomic writes a file through a temporary file in the same
// directory, renamed into place once complete.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	dir, name := ".", path
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		dir, name = path[:i+1], path[i+1:]
	}
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
