package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/storetest"
)

func openTemp(t testing.TB, opts ...Option) *DB {
	t.Helper()
	d, err := Open(context.Background(), filepath.Join(t.TempDir(), "assay.db"), opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store { return openTemp(t, WithClock(now)) })
}

// pragma reads an integer or text PRAGMA through a fresh connection that
// is not part of the store.
func pragma(t *testing.T, path, name string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func execSQL(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestOpenCreatesDirectoriesAndSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "deep", "er", ".assay", "assay.db")
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := d.CreateRun(ctx, &record.Run{ID: "r1", Status: record.StatusRunning, Started: time.Now()}); err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got, want := pragma(t, path, "user_version"), latestVersion(t); got != want {
		t.Errorf("user_version = %s, want %s", got, want)
	}
	if got := pragma(t, path, "journal_mode"); got != "wal" {
		t.Errorf("journal_mode = %s, want wal (persistent in the file)", got)
	}

	// Re-opening applies nothing and keeps the data.
	d, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("re-Open: %v", err)
	}
	defer d.Close()
	if _, err := d.GetRun(ctx, "r1"); err != nil {
		t.Errorf("GetRun after re-open: %v", err)
	}
	if got, want := pragma(t, path, "user_version"), latestVersion(t); got != want {
		t.Errorf("user_version after re-open = %s, want %s", got, want)
	}
}

// latestVersion is the number of the newest embedded migration.
func latestVersion(t *testing.T) string {
	t.Helper()
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(ms[len(ms)-1].version)
}

// A store written by the first schema opens under the current one with its
// runs intact, and the new columns read as empty.
func TestUpgradeFromFirstSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	b, err := migrationFiles.ReadFile("migrations/0001_initial.sql")
	if err != nil {
		t.Fatal(err)
	}
	execSQL(t, path, string(b), fmt.Sprintf("PRAGMA application_id = %d", applicationID), "PRAGMA user_version = 1",
		`INSERT INTO runs (id, spec, spec_path, spec_hash, dataset_hash, prompt_hash, git_commit, targets, cases, epochs, status, started, ended, config)
		 VALUES ('old', 'triage', 'a.yaml', 'sha256:s', 'sha256:d', 'sha256:p', '', '["m"]', 3, 1, 'complete', 1, 2, NULL)`,
		`INSERT INTO results (run_id, case_id, target, epoch, raw, parsed, parse_error, finish_reason, input_tokens, output_tokens,
			cached_tokens, cost_usd, latency_ms, first_token_ms, attempts, error_kind, error, model, fingerprint, from_cache, created_at)
		 VALUES ('old', 'c1', 'm', 1, 'x', 'x', '', 'stop', 0, 0, 0, 0, 0, 0, 1, '', '', 'm', '', 0, 1)`,
		`INSERT INTO scores (run_id, scoring, case_id, target, epoch, scorer, is_primary, pass, value, shape, kind, reason, error_cost, judge_cost)
		 VALUES ('old', 1, 'c1', 'm', 1, 'exact', 1, 1, 1, 'pass', '', '', 0, 0),
		        ('old', 2, 'c1', 'm', 1, 'exact', 1, 0, 0, 'loud', 'wrong', '', 0, 0)`)
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open of a first-schema store: %v", err)
	}
	defer d.Close()
	r, err := d.GetRun(ctx, "old")
	if err != nil {
		t.Fatalf("GetRun after upgrade: %v", err)
	}
	if r.SpecHash != "sha256:s" || r.Cases != 3 || r.ScorersHash != "" || r.Experiment != "" || r.Sample != "" || r.Kind != "" {
		t.Errorf("upgraded run = %+v", r)
	}
	// Scorings made before scorings had a status count as complete, and a
	// new rescore numbers after them.
	if n, err := d.LatestScoring(ctx, "old"); err != nil || n != 2 {
		t.Errorf("LatestScoring of an upgraded store = %d, %v; want 2", n, err)
	}
	if n, err := d.ReserveScoring(ctx, "old"); err != nil || n != 3 {
		t.Errorf("ReserveScoring in an upgraded store = %d, %v; want 3", n, err)
	}
	if got, want := pragma(t, path, "user_version"), latestVersion(t); got != want {
		t.Errorf("user_version after upgrade = %s, want %s", got, want)
	}
}

func TestConnectionSettings(t *testing.T) {
	d := openTemp(t)
	ctx := context.Background()
	for _, pool := range []struct {
		name string
		db   *sql.DB
	}{{"writer", d.w}, {"reader", d.r}} {
		for pragma, want := range map[string]string{
			"journal_mode": "wal",
			"synchronous":  "1", // NORMAL
			"foreign_keys": "1",
			"busy_timeout": "10000",
		} {
			var got string
			if err := pool.db.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
				t.Fatalf("%s: PRAGMA %s: %v", pool.name, pragma, err)
			}
			if got != want {
				t.Errorf("%s: PRAGMA %s = %s, want %s", pool.name, pragma, got, want)
			}
		}
	}
	for pragma, want := range map[string]string{
		"cache_size":         fmt.Sprint(-writerCacheKiB),
		"wal_autocheckpoint": fmt.Sprint(writerCheckpointPages),
	} {
		var got string
		if err := d.w.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatalf("writer: PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("writer: PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
	if _, err := d.r.ExecContext(ctx, "INSERT INTO cache (key, response, created_at) VALUES ('k', x'00', 0)"); err == nil {
		t.Errorf("a write through the read pool succeeded; readers must be read-only")
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "assay.db")
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	execSQL(t, path, "PRAGMA user_version = 999")
	_, err = Open(context.Background(), path)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a schema-999 store: err = %v, want ErrNewerSchema", err)
	}
	for _, want := range []string{"999", "upgrade assay"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The refused file is untouched.
	if got := pragma(t, path, "user_version"); got != "999" {
		t.Errorf("user_version after a refused open = %s, want 999", got)
	}
}

func TestOpenRefusesForeignDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	execSQL(t, path, "CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('keep me')")
	_, err := Open(context.Background(), path)
	if !errors.Is(err, ErrNotAssay) {
		t.Fatalf("Open of another program's database: err = %v, want ErrNotAssay", err)
	}
	var n int
	db, _ := sql.Open("sqlite", path)
	defer db.Close()
	if err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name = 'runs'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the refused database was migrated (runs tables: %d, %v)", n, err)
	}
}

func TestOpenBadPaths(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("this is not a database\n", 400)), 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
	}{
		{"", "give the path of a database file"},
		{":memory:", "give the path of a database file"},
		{"file:x.db?mode=memory", "give the path of a database file"},
		{dir, "is a directory"},
		{garbage, "not a database"},
		{filepath.Join(notDir, "assay.db"), "creating the store's directory"},
	} {
		d, err := Open(context.Background(), tc.path)
		if err == nil {
			d.Close()
			t.Errorf("Open(%q) succeeded", tc.path)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q): error %q does not say %q", tc.path, err, tc.want)
		}
	}
}

func TestOpenPathWithURICharacters(t *testing.T) {
	// '?', '#', '%' and spaces are part of the file name, not a URI query.
	path := filepath.Join(t.TempDir(), "we?ird #dir%20", "a&b=c.db")
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	d.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the database is not at the path given: %v", err)
	}
}

func TestMigrationFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	good, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := migrationFiles.ReadFile("migrations/" + good[0].name)
	fsys := fstest.MapFS{
		"migrations/0001_initial.sql": {Data: first},
		"migrations/0002_broken.sql":  {Data: []byte("CREATE TABLE added (x INTEGER);\nALTER TABLE no_such_table ADD COLUMN y INTEGER;")},
	}
	ms, err := loadMigrations(fsys)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	defer w.Close()
	err = migrate(ctx, w, ms)
	if err == nil || !strings.Contains(err.Error(), "0002_broken.sql") {
		t.Fatalf("migrate with a broken 0002: err = %v, want an error naming 0002_broken.sql", err)
	}
	var version, added int
	if err := w.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != 1 {
		t.Errorf("user_version = %d, want 1 (0001 applied, 0002 rolled back)", version)
	}
	if err := w.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name = 'added'").Scan(&added); err != nil {
		t.Fatal(err)
	}
	if added != 0 {
		t.Errorf("the first statement of the failed migration was kept")
	}
}

func TestLoadMigrationsRejectsBadSets(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"gap":        {"migrations/0001_a.sql": {}, "migrations/0003_c.sql": {}},
		"repeat":     {"migrations/0001_a.sql": {}, "migrations/0001_b.sql": {}},
		"zero":       {"migrations/0000_a.sql": {}},
		"unnumbered": {"migrations/initial.sql": {}},
		"empty":      {},
	} {
		if _, err := loadMigrations(fsys); err == nil {
			t.Errorf("%s: loadMigrations accepted the set", name)
		}
	}
	if SchemaVersion() < 1 {
		t.Errorf("SchemaVersion() = %d: the embedded migrations do not load", SchemaVersion())
	}
}

func TestTwoProcessesShareAFile(t *testing.T) {
	// Two stores on one file (as two assay processes would be) write
	// concurrently without SQLITE_BUSY errors and see each other's commits.
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.CreateRun(ctx, &record.Run{ID: "shared", Status: record.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for i, d := range []*DB{a, b} {
		go func() {
			for n := range 40 {
				r := record.Result{RunID: "shared", CaseID: "c", Target: string(rune('a' + i)), Epoch: n + 1}
				if err := d.PutResults(ctx, []record.Result{r}, nil); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent writer: %v", err)
		}
	}
	keys, err := b.DoneKeys(ctx, "shared")
	if err != nil || len(keys) != 80 {
		t.Errorf("DoneKeys = %d, %v; want 80 results from two writers", len(keys), err)
	}
}

func TestQualifiedColumnsMatch(t *testing.T) {
	// The join queries select the same columns as the plain ones.
	for _, tc := range []struct{ plain, qualified, alias string }{
		{resultColumns, resultColumnsR, "r."},
		{scoreColumns, scoreColumnsS, "s."},
	} {
		plain := strings.Fields(strings.ReplaceAll(tc.plain, ",", " "))
		qualified := strings.Fields(strings.ReplaceAll(tc.qualified, ",", " "))
		for i := range qualified {
			qualified[i] = strings.TrimPrefix(qualified[i], tc.alias)
		}
		if !slices.Equal(plain, qualified) {
			t.Errorf("%s columns differ:\n%q\n%q", tc.alias, plain, qualified)
		}
	}
}

func TestStreamingQueriesUseIndexes(t *testing.T) {
	// Streaming must not copy a run's results into a temporary sort table
	// (memory and disk proportional to the run): every query walks indexes.
	// A sort of the last ORDER BY terms is a sort within one case's rows
	// (bounded by targets × epochs × scorers), which is fine.
	d := openTemp(t)
	for name, q := range map[string]string{
		"resultsOfCases":        resultsOfCases,
		"resultsOfUnknownCases": resultsOfUnknownCases,
		"scoresOfCases":         scoresOfCases,
		"scoresOfUnknownCases":  scoresOfUnknownCases,
		"latestRun":             latestRun,
	} {
		rows, err := d.r.Query("EXPLAIN QUERY PLAN "+q, "r", 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			if strings.Contains(step, "TEMP B-TREE") && !strings.Contains(step, "FOR LAST") || strings.HasPrefix(step, "SCAN") && !strings.Contains(step, "INDEX") {
				t.Errorf("%s: the plan sorts or scans a whole table (%q); plan: %q", name, step, plan)
			}
		}
	}
}
