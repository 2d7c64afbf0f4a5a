package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A render that fails part-way never leaves a truncated file: -o FILE is
// written into a temporary file renamed into place only once the render
// succeeded, so a new path stays absent, an existing file keeps its bytes
// and permissions, and no temporary file is left in the directory.
func TestWriteOutputFailedRenderLeavesNoFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	failing := func(w io.Writer) error {
		io.WriteString(w, "<html><body>half a page")
		return errors.New("render failed")
	}
	fresh := filepath.Join(dir, "report.html")
	if err := writeOutput(fresh, failing); err == nil || !strings.Contains(err.Error(), "render failed") {
		t.Fatalf("a failed render: err %v", err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed render left %s (stat: %v)", fresh, err)
	}

	old := filepath.Join(dir, "old.html")
	if err := os.WriteFile(old, []byte("the previous report\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput(old, failing); err == nil {
		t.Fatal("a failed render over an existing file returned no error")
	}
	if b, _ := os.ReadFile(old); string(b) != "the previous report\n" {
		t.Errorf("a failed render changed the existing file: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left in the directory: %v", entries)
	}

	// A render that succeeds replaces the file whole and keeps its mode.
	if err := writeOutput(old, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); string(b) != "new\n" {
		t.Errorf("after a good render: %q", b)
	}
	if fi, _ := os.Stat(old); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the existing file's 0600", fi.Mode().Perm())
	}
	if err := writeOutput(fresh, func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o644 {
		t.Errorf("a new file's mode %v, want 0644", fi.Mode().Perm())
	}

	// Through a symbolic link the file it points to is replaced.
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(old, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := writeOutput(link, func(w io.Writer) error { _, err := io.WriteString(w, "via link\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if b, _ := os.ReadFile(old); string(b) != "via link\n" {
		t.Errorf("through the link: %q", b)
	}
}

// A path that is not a regular file (a device, a pipe) is written in place.
func TestWriteOutputSpecialFileInPlace(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Skip(err)
	}
	if err := writeOutput(os.DevNull, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Errorf("writing %s: %v", os.DevNull, err)
	}
}
