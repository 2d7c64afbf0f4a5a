// Package atomicfile owns writing an output file so that it is whole or
// absent: every command's -o (reports, gate results, baseline files) and
// assay export write through Write.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes path atomically: write fills a temporary file in the same
// directory, which is synced and renamed over path once write and the
// close have succeeded. A write that fails part-way leaves no file behind,
// and a file already at path as it was. An existing file keeps its
// permissions (a new one is 0644); a symbolic link is followed, so the file
// it points to is replaced, not the link. A path that exists and is not a
// regular file (a terminal, a pipe, /dev/stdout) has nothing to rename
// over and is written in place.
//
// Errors of the file system name path ("writing PATH: …"), never the
// temporary file; write's own error is returned as it is.
func Write(path string, write func(io.Writer) error) error {
	mode := fs.FileMode(0o644)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	switch fi, err := os.Stat(path); {
	case err == nil && !fi.Mode().IsRegular():
		return writeInPlace(path, write)
	case err == nil:
		mode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return fsError(path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fsError(path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone after the rename; removes a failed write
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fsError(path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fsError(path, err)
	}
	if err := f.Close(); err != nil {
		return fsError(path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fsError(path, err)
	}
	return nil
}

// writeInPlace writes to a special file, which is opened, not replaced.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fsError(path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fsError(path, err)
	}
	return nil
}

// fsError says what went wrong writing path, without the temporary
// file's name a *fs.PathError would carry.
func fsError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return fmt.Errorf("writing %s: %w", path, err)
}
