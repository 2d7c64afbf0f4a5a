package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/store/pgtest"
)

// TestCommandsOnPostgres runs the everyday commands on a PostgreSQL store
// and on an SQLite file side by side: each must succeed on both, and the
// reports must agree on every number (run IDs and clock times aside).
func TestCommandsOnPostgres(t *testing.T) {
	pg := pgtest.URL(t)
	lite := filepath.Join(t.TempDir(), "assay.db")
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	env := cliEnv{env: map[string]string{}}

	reports := map[string]any{}
	for _, db := range []string{lite, pg} {
		name := storeName(db)
		must := func(args ...string) invocation {
			t.Helper()
			inv := runCLI(t, env, append([]string{"--db", db}, args...)...)
			if inv.code != 0 {
				t.Fatalf("%s: assay %s: exit %d\n%s%s", name, strings.Join(args, " "), inv.code, inv.stdout, inv.stderr)
			}
			return inv
		}
		must("run", spec)
		runs := must("runs", "--json")
		var listed []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(runs.stdout), &listed); err != nil || len(listed) != 1 || listed[0].Status != "complete" {
			t.Fatalf("%s: runs --json = %s (%v): want one complete run", name, runs.stdout, err)
		}
		id := listed[0].ID
		must("rescore", id)
		rep := must("report", id, "--format", "json")
		var doc any
		if err := json.Unmarshal([]byte(rep.stdout), &doc); err != nil {
			t.Fatalf("%s: report --format json: %v", name, err)
		}
		reports[db] = normalize(doc, id)
		must("report", id, "--format", "html", "-o", filepath.Join(t.TempDir(), "r.html"))
		must("export", id, "--format", "jsonl", "-o", filepath.Join(t.TempDir(), "r.jsonl"))
		must("diff", id, id)
		must("compare", id, id)
		must("gate", id, "--baseline", id)
		must("baseline", "export", id, "-o", filepath.Join(t.TempDir(), "baseline.json"))
		must("labels", "queue", id, "--name", "first", "--size", "10")
		must("cache", "stats")
		must("runs", "rm", id)
		if inv := runCLI(t, env, "--db", db, "report", id); inv.code == 0 {
			t.Fatalf("%s: report of a deleted run succeeded:\n%s", name, inv.stdout)
		}
	}
	if !reflect.DeepEqual(reports[lite], reports[pg]) {
		a, _ := json.MarshalIndent(reports[lite], "", " ")
		b, _ := json.MarshalIndent(reports[pg], "", " ")
		t.Fatalf("the JSON reports differ between SQLite and PostgreSQL:\n--- sqlite\n%s\n--- postgres\n%s", a, b)
	}
}

// TestPostgresPasswordNeverShown: an error opening a PostgreSQL store
// names it without its password.
func TestPostgresPasswordNeverShown(t *testing.T) {
	inv := runCLI(t, cliEnv{env: map[string]string{}}, "--db", "postgres://bob:hunter2secret@127.0.0.1:1/assay?sslmode=disable&connect_timeout=2", "runs")
	if inv.code == 0 {
		t.Fatal("runs on an unreachable PostgreSQL store succeeded")
	}
	if strings.Contains(inv.stdout+inv.stderr, "hunter2secret") {
		t.Fatalf("the password shows:\n%s%s", inv.stdout, inv.stderr)
	}
	if !strings.Contains(inv.stderr, "127.0.0.1") {
		t.Fatalf("the error does not name the store:\n%s", inv.stderr)
	}
}

// A libpq keyword connection string is refused (exit 2), by every door to
// a store, before anything is created: taken for an SQLite path it became a
// file named with the password, and every message showed it.
func TestKeywordConnStringRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	// Led by a path into dir, so that were it taken for an SQLite path the
	// file would be made there, where the test looks.
	dsn := filepath.Join(dir, "db") + " host=127.0.0.1 user=bob password=hunter2secret dbname=assay"
	lite := filepath.Join(dir, "a.db")
	if inv := runCLI(t, cliEnv{env: map[string]string{}}, "run", spec, "--db", lite); inv.code != 0 {
		t.Fatalf("run on SQLite: exit %d\n%s", inv.code, inv.stderr)
	}
	for _, args := range [][]string{
		{"--db", dsn, "run", spec},
		{"--db", dsn, "runs"},
		{"--db", dsn, "run", spec, "--distributed"},
		{"--db", dsn, "worker"},
		{"store", "copy", "--from", lite, "--to", dsn},
		{"store", "copy", "--from", dsn, "--to", lite},
	} {
		inv := runCLI(t, cliEnv{env: map[string]string{}}, args...)
		if inv.code != ExitUsage || !strings.Contains(inv.stderr, "keyword connection string") || !strings.Contains(inv.stderr, "postgres://USER@HOST") {
			t.Errorf("%q: exit %d, stderr %s; want exit 2 asking for a URL", args, inv.code, inv.stderr)
		}
		if strings.Contains(inv.stdout+inv.stderr, "hunter2secret") {
			t.Errorf("%q: the password shows:\n%s%s", args, inv.stdout, inv.stderr)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), "hunter2secret") {
			t.Errorf("a file named with the password was created: %q", e.Name())
		}
	}
}

// hostLoadWarning starts the report's warning that the machine was busy
// during a run: it quotes the load, which differs from run to run.
const hostLoadWarning = "the host was saturated"

// normalize drops what differs between two runs of one spec by design:
// the run's ID, clock times, the warning of a saturated host, and the F1
// bootstrap intervals, whose seed is made from the run's ID (the byte-for-byte comparison of one run in both
// stores is storecopy's test).
func normalize(v any, runID string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k == "f1_ci" || k == "macro_f1_ci" {
				continue
			}
			out[k] = normalize(e, runID)
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if w, ok := e.(string); ok && strings.HasPrefix(w, hostLoadWarning) {
				continue // the machine's load while the run ran, not anything stored
			}
			out = append(out, normalize(e, runID))
		}
		return out
	case string:
		if _, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return "<time>"
		}
		return strings.ReplaceAll(x, runID, "<run>")
	}
	return v
}
