package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/storetest"
)

// A command that only reads never creates a store: where there is none it
// says so, and nothing is left on disk.
func TestOpenExistingNoStore(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".assay", "assay.db")
	_, err := OpenExisting(context.Background(), path)
	if !errors.Is(err, ErrNoStore) || !strings.Contains(err.Error(), "--db") {
		t.Fatalf("OpenExisting of a missing store: %v; want ErrNoStore naming --db", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".assay")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenExisting created %s", filepath.Join(dir, ".assay"))
	}
}

// seedStore writes a store with one complete run and one result, closed
// (checkpointed), and returns its path.
func seedStore(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CreateRun(ctx, &record.Run{ID: "r1", Spec: "ro", Status: record.StatusComplete, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := d.PutResults(ctx, []record.Result{{RunID: "r1", CaseID: "c1", Target: "m", Epoch: 1, Raw: "ok"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A store nobody may write (a read-only mount, a CI cache) is read:
// immutable when its directory is not writable, plain read-only when only
// the file is not; either way runs and results read back and a write fails
// instead of changing the file.
func TestOpenExistingReadOnly(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		writable func(dir string) func(string) bool
	}{
		{"directory and file read-only", func(string) func(string) bool { return func(string) bool { return false } }},
		{"file read-only", func(dir string) func(string) bool { return func(p string) bool { return p == dir } }},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := seedStore(t)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			d, err := openExisting(ctx, path, c.writable(filepath.Dir(path)))
			if err != nil {
				t.Fatalf("openExisting: %v", err)
			}
			r, err := d.GetRun(ctx, "latest")
			if err != nil || r.ID != "r1" {
				t.Fatalf("GetRun = %+v, %v", r, err)
			}
			var n int
			if err := d.Results(ctx, "r1", func(res record.Result) error {
				n++
				if res.Raw != "ok" {
					t.Errorf("result raw %q", res.Raw)
				}
				return nil
			}); err != nil || n != 1 {
				t.Errorf("Results: %d, %v", n, err)
			}
			if err := d.CreateRun(ctx, &record.Run{ID: "r2", Status: record.StatusRunning}); err == nil {
				t.Errorf("a write to a read-only store succeeded")
			}
			if err := d.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(before) != string(after) {
				t.Errorf("reading a read-only store changed the file")
			}
		})
	}
}

// A read-only store of an older schema cannot be upgraded: the error says
// so and how to get past it, rather than failing on a missing column later.
func TestOpenExistingReadOnlyOldSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	b, err := migrationFiles.ReadFile("migrations/0001_initial.sql")
	if err != nil {
		t.Fatal(err)
	}
	execSQL(t, path, string(b), fmt.Sprintf("PRAGMA application_id = %d", applicationID), "PRAGMA user_version = 1")
	_, err = openExisting(context.Background(), path, func(string) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "schema is version 1") || !strings.Contains(err.Error(), "writable") {
		t.Fatalf("read-only open of a v1 store: %v; want an error naming the version and how to upgrade", err)
	}
}

// On a real read-only mount (a bind mount for root, permissions for
// anyone else) the store reads.
func TestOpenExistingOnReadOnlyMount(t *testing.T) {
	path := seedStore(t)
	dir := filepath.Dir(path)
	path = filepath.Join(storetest.ReadOnly(t, dir), "assay.db")
	if writable(path) {
		t.Fatalf("%s is still writable", path)
	}
	d, err := OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatalf("OpenExisting on a read-only mount: %v", err)
	}
	defer d.Close()
	if r, err := d.GetRun(context.Background(), "r1"); err != nil || r.Spec != "ro" {
		t.Errorf("GetRun = %+v, %v", r, err)
	}
}
