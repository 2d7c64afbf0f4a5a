package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
	"github.com/assay-eval/assay/internal/store/storetest"
)

// rowsOf counts, straight from the database file, the rows a run owns in
// each table, and the response cache's rows.
func rowsOf(t *testing.T, db, runID string) map[string]int {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out := map[string]int{}
	for _, table := range []string{"runs", "cases", "results", "scores", "scorings", "leases", "cache"} {
		q := "SELECT count(*) FROM " + table + " WHERE run_id = ?"
		args := []any{runID}
		switch table {
		case "runs":
			q = "SELECT count(*) FROM runs WHERE id = ?"
		case "cache":
			q, args = "SELECT count(*) FROM cache", nil
		}
		var n int
		if err := d.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		out[table] = n
	}
	return out
}

// `assay runs` lists the runs newest first with their spec, targets,
// status, cases, epochs and scorings; --limit bounds the list and says
// there are more.
func TestRunsList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	specPath := writeRetrySpec(t, dir, newRLServer(t).url)
	e := cliEnv{}
	older := runJSON(t, e, "run", specPath, "--db", db)
	newer := runJSON(t, e, "run", specPath, "--db", db, "--limit", "4")
	if inv := runCLI(t, e, "rescore", older.RunID, "--db", db); inv.code != 0 {
		t.Fatalf("rescore: %s", inv.stderr)
	}

	inv := runCLI(t, e, "runs", "--json", "--db", db)
	if inv.code != 0 {
		t.Fatalf("runs --json: exit %d, %s", inv.code, inv.stderr)
	}
	var list []runListing
	if err := json.Unmarshal([]byte(inv.stdout), &list); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, inv.stdout)
	}
	if len(list) != 2 || list[0].ID != newer.RunID || list[1].ID != older.RunID {
		t.Fatalf("runs --json listed %+v; want the newer run, then the older", list)
	}
	if l := list[1]; l.Spec != "retry" || strings.Join(l.Targets, ",") != "oa" || l.Status != "complete" || l.Cases != 6 || l.Epochs != 1 || l.Scorings != 2 || l.Created.IsZero() {
		t.Errorf("older run listed as %+v; want spec retry, target oa, complete, 6 cases, 1 epoch, 2 scorings", l)
	}
	if l := list[0]; l.Cases != 4 || l.Scorings != 1 {
		t.Errorf("newer run listed as %+v; want 4 cases, 1 scoring", l)
	}

	inv = runCLI(t, e, "runs", "--db", db)
	lines := strings.Split(strings.TrimSpace(inv.stdout), "\n")
	if inv.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "SCORINGS") ||
		!strings.HasPrefix(lines[1], newer.RunID) || !strings.Contains(lines[2], "complete") {
		t.Errorf("runs: exit %d\n%s", inv.code, inv.stdout)
	}
	inv = runCLI(t, e, "runs", "--limit", "1", "--json", "--db", db)
	if err := json.Unmarshal([]byte(inv.stdout), &list); err != nil || len(list) != 1 || !strings.Contains(inv.stderr, "--limit 0") {
		t.Errorf("runs --limit 1: %d runs, stderr %q", len(list), inv.stderr)
	}
	if inv := runCLI(t, e, "runs", "--limit", "-1", "--db", db); inv.code != ExitUsage {
		t.Errorf("runs --limit -1: exit %d", inv.code)
	}
}

// `assay runs rm` deletes a run with everything under it and nothing else:
// the other run and the response cache stay. An unknown ID, a run a live
// process is writing, or a read-only store deletes nothing.
func TestRunsRm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	srv := newRLServer(t)
	specPath := writeRetrySpec(t, dir, srv.url)
	e := cliEnv{}
	gone := runJSON(t, e, "run", specPath, "--db", db)
	kept := runJSON(t, e, "run", specPath, "--db", db, "--no-cache")
	if inv := runCLI(t, e, "rescore", gone.RunID, "--db", db); inv.code != 0 {
		t.Fatalf("rescore: %s", inv.stderr)
	}
	before := rowsOf(t, db, gone.RunID)
	if before["cases"] != 6 || before["results"] != 6 || before["scores"] != 12 || before["cache"] == 0 {
		t.Fatalf("the run to delete holds %v; want 6 cases, 6 results, 12 scores, and a filled cache", before)
	}
	keptBefore := rowsOf(t, db, kept.RunID)

	// An unknown ID beside a real one: nothing is deleted.
	inv := runCLI(t, e, "runs", "rm", gone.RunID, "nosuchrun", "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, `"nosuchrun"`) || !strings.Contains(inv.stderr, "nothing was deleted") {
		t.Errorf("rm with an unknown ID: exit %d, stderr %q", inv.code, inv.stderr)
	}
	if got := rowsOf(t, db, gone.RunID); got["runs"] != 1 || got["results"] != 6 {
		t.Fatalf("a refused rm deleted: %v", got)
	}
	if inv := runCLI(t, e, "runs", "rm", "--db", db); inv.code != ExitUsage {
		t.Errorf("rm without a run: exit %d", inv.code)
	}

	// A run a live process (this one) holds the lease of is refused
	// without --force.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	now := time.Now()
	if err := st.AcquireLease(ctx, store.Lease{RunID: gone.RunID, Holder: "test", PID: os.Getpid(), Host: host, Acquired: now, Heartbeat: now}, now.Add(-time.Minute), false); err != nil {
		t.Fatal(err)
	}
	st.Close()
	inv = runCLI(t, e, "runs", "rm", gone.RunID, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "being written by another process") || !strings.Contains(inv.stderr, "--force") {
		t.Errorf("rm of a leased run: exit %d, stderr %q", inv.code, inv.stderr)
	}
	if got := rowsOf(t, db, gone.RunID); got["runs"] != 1 {
		t.Fatalf("rm of a leased run deleted it")
	}

	// A read-only store: a clear error, nothing deleted (a subtest: it is
	// skipped where no read-only mount can be made).
	t.Run("read-only store", func(t *testing.T) {
		roDir := t.TempDir()
		roDB := filepath.Join(roDir, "assay.db")
		for _, sfx := range []string{"", "-wal", "-shm"} {
			if _, err := os.Stat(db + sfx); err == nil {
				copyFile(t, db+sfx, roDB+sfx)
			}
		}
		ro := filepath.Join(storetest.ReadOnly(t, roDir), "assay.db")
		inv := runCLI(t, e, "runs", "rm", gone.RunID, "--force", "--db", ro)
		if inv.code != ExitErr || !strings.Contains(inv.stderr, "read-only") || !strings.Contains(inv.stderr, "nothing was deleted") {
			t.Errorf("rm on a read-only store: exit %d, stderr %q", inv.code, inv.stderr)
		}
		if inv := runCLI(t, e, "runs", "--db", ro); inv.code != 0 || !strings.Contains(inv.stdout, gone.RunID) {
			t.Errorf("runs on a read-only store: exit %d, %s", inv.code, inv.stderr)
		}
	})

	inv = runCLI(t, e, "runs", "rm", gone.RunID[:len(gone.RunID)-2], "--force", "--db", db)
	if inv.code != 0 {
		t.Fatalf("rm --force: exit %d, %s", inv.code, inv.stderr)
	}
	if want := "removed run " + gone.RunID + " (retry, complete): 6 cases, 6 results, 12 scores in 2 scorings and its lease"; !strings.Contains(inv.stdout, want) {
		t.Errorf("rm said %q; want %q", inv.stdout, want)
	}
	after := rowsOf(t, db, gone.RunID)
	for table, n := range after {
		if table != "cache" && n != 0 {
			t.Errorf("%d rows of the deleted run left in %s", n, table)
		}
	}
	if after["cache"] != before["cache"] {
		t.Errorf("the cache went from %d to %d entries; rm must leave it", before["cache"], after["cache"])
	}
	if got := rowsOf(t, db, kept.RunID); got["results"] != keptBefore["results"] || got["scores"] != keptBefore["scores"] || got["cases"] != keptBefore["cases"] {
		t.Errorf("the other run changed: %v, was %v", got, keptBefore)
	}
	if inv := runCLI(t, e, "report", gone.RunID, "--db", db); inv.code == 0 || !strings.Contains(inv.stderr, "not found") {
		t.Errorf("report of a deleted run: exit %d, %s", inv.code, inv.stderr)
	}
	// Running the spec again is served from the kept cache: no new calls.
	calls := srv.count("word-1")
	if again := runJSON(t, e, "run", specPath, "--db", db); again.SpendUSD != 0 || srv.count("word-1") != calls {
		t.Errorf("the run after rm called the server again (%d → %d calls)", calls, srv.count("word-1"))
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
