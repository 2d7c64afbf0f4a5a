package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/pgtest"
)

// The commands TestCommandsOnPostgres leaves out, each run on an SQLite
// file and on a PostgreSQL store side by side: each must succeed on both,
// and where the output is deterministic the two stores' outputs must agree
// (run IDs and clock times aside).

// pgBothStores is an SQLite file and a fresh PostgreSQL schema, in that order.
func pgBothStores(t *testing.T) []string {
	t.Helper()
	pg := pgtest.URL(t)
	return []string{filepath.Join(t.TempDir(), "assay.db"), pg}
}

// pgMust runs assay on the store db and fails the test unless it exits 0.
func pgMust(t *testing.T, env cliEnv, db string, args ...string) invocation {
	t.Helper()
	inv := runCLI(t, env, append([]string{"--db", db}, args...)...)
	if inv.code != 0 {
		t.Fatalf("%s: assay %s: exit %d\n%s%s", storeName(db), strings.Join(args, " "), inv.code, inv.stdout, inv.stderr)
	}
	return inv
}

// pgRunIDs lists the store's run IDs, newest first, as `runs --json` does.
func pgRunIDs(t *testing.T, env cliEnv, db string) []string {
	t.Helper()
	inv := pgMust(t, env, db, "runs", "--json")
	var listed []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &listed); err != nil {
		t.Fatalf("%s: runs --json: %v\n%s", storeName(db), err, inv.stdout)
	}
	ids := make([]string, len(listed))
	for i, r := range listed {
		ids[i] = r.ID
	}
	return ids
}

// pgNormJSON decodes out and normalises it as normalize does, for each
// of the run IDs (they become <run> alike: what matters is that both stores
// print the same thing, not which run is which).
func pgNormJSON(t *testing.T, db, what, out string, ids ...string) any {
	t.Helper()
	if len(ids) == 0 {
		ids = []string{"\x00 no run"} // normalize replaces the empty string everywhere
	}
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%s: %s: %v\n%s", storeName(db), what, err, out)
	}
	for _, id := range ids {
		doc = normalize(doc, id)
	}
	return doc
}

// clockTime is an RFC 3339 time as the text reports print it.
var clockTime = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?`)

// interval is a bracketed interval as the text reports print one.
var interval = regexp.MustCompile(` ?\[[0-9.]+, [0-9.]+\]`)

// pgDropF1Intervals drops the intervals of the F1 column of Markdown
// tables: bootstrap intervals whose seed is made from the run's ID, as
// normalize drops f1_ci.
func pgDropF1Intervals(md string) string {
	lines := strings.Split(md, "\n")
	inF1 := false
	for i, l := range lines {
		switch {
		case strings.HasSuffix(l, "| F1 |"):
			inF1 = true
		case !strings.HasPrefix(l, "|"):
			inF1 = false
		case inF1:
			cut := strings.LastIndex(strings.TrimSuffix(l, "|"), "|")
			lines[i] = l[:cut] + interval.ReplaceAllString(l[cut:], "")
		}
	}
	return strings.Join(lines, "\n")
}

// pgNormText replaces the run IDs and clock times in a text output.
func pgNormText(out string, ids ...string) string {
	for i, id := range ids {
		out = strings.ReplaceAll(out, id, "<run"+string(rune('1'+i))+">")
	}
	return clockTime.ReplaceAllString(out, "<time>")
}

// pgSame fails the test when the two stores' outputs of what differ.
func pgSame(t *testing.T, what string, got map[string]any, dbs []string) {
	t.Helper()
	a, b := got[dbs[0]], got[dbs[1]]
	if reflect.DeepEqual(a, b) {
		return
	}
	if sa, ok := a.(string); ok {
		la, lb := strings.Split(sa, "\n"), strings.Split(b.(string), "\n")
		for i := range max(len(la), len(lb)) {
			var x, y string
			if i < len(la) {
				x = la[i]
			}
			if i < len(lb) {
				y = lb[i]
			}
			if x != y {
				t.Errorf("%s differs between SQLite and PostgreSQL from line %d:\n--- sqlite\n%s\n--- postgres\n%s", what, i+1, x, y)
				return
			}
		}
	}
	ja, _ := json.MarshalIndent(a, "", " ")
	jb, _ := json.MarshalIndent(b, "", " ")
	t.Errorf("%s differs between SQLite and PostgreSQL:\n--- sqlite\n%s\n--- postgres\n%s", what, ja, jb)
}

// plan, drift and the Markdown report of two runs of the quickstart.
func TestRunCommandsOnPostgres(t *testing.T) {
	t.Parallel()
	dbs := pgBothStores(t)
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	env := cliEnv{env: map[string]string{}}

	outs := map[string]map[string]any{}
	put := func(what, db string, v any) {
		if outs[what] == nil {
			outs[what] = map[string]any{}
		}
		outs[what][db] = v
	}
	for _, db := range dbs {
		pgMust(t, env, db, "run", spec)
		pgMust(t, env, db, "run", spec, "--no-cache")
		ids := pgRunIDs(t, env, db)
		if len(ids) != 2 {
			t.Fatalf("%s: %d runs; want 2", storeName(db), len(ids))
		}
		older, newer := ids[1], ids[0]

		put("plan --json", db, pgNormJSON(t, db, "plan --json", pgMust(t, env, db, "plan", older, "--json").stdout, older))
		put("plan", db, pgNormText(pgMust(t, env, db, "plan", older).stdout, older))
		put("plan --gate --json", db, pgNormJSON(t, db, "plan --gate", pgMust(t, env, db, "plan", older, "--gate", "--json").stdout, older))
		put("drift --format json", db, pgNormJSON(t, db, "drift", pgMust(t, env, db, "drift", older, newer, "--format", "json").stdout, older, newer))
		put("drift", db, pgNormText(pgMust(t, env, db, "drift", older, newer).stdout, older, newer))
		put("report --format markdown", db, pgDropF1Intervals(pgNormText(pgMust(t, env, db, "report", older, "--format", "markdown").stdout, older)))
	}
	for what, got := range outs {
		pgSame(t, what, got, dbs)
	}
}

// labels queue/queues/export/import and calibrate, on the same runs in
// both stores (made in an SQLite file and copied, runs only, into each).
func TestLabelsCommandsOnPostgres(t *testing.T) {
	t.Parallel()
	dbs := pgBothStores(t)
	dir := t.TempDir()
	env := cliEnv{env: map[string]string{}}

	seed := filepath.Join(dir, "seed.db")
	labeledRun(t, seed, "run-one")
	calibrationStore(t, seed, "run-fit", 33, 3, 2, 12, 700, 7)
	at := time.Date(2026, 12, 3, 9, 0, 0, 123456000, time.UTC)
	putLabelsDB(t, seed,
		labelOf("run-one", "c01", "a", "first", "ann", record.LabelPass, at),
		labelOf("run-one", "c03", "b", "first", "ann", record.LabelFail, at.Add(time.Second)),
		labelOf("run-one", "c03", "b", "first", "bob", record.LabelSkip, at.Add(2*time.Second)))
	file := filepath.Join(dir, "labels.jsonl")
	pgMust(t, env, seed, "labels", "export", "--all", "-o", file)

	outs := map[string]map[string]any{}
	put := func(what, db string, v any) {
		if outs[what] == nil {
			outs[what] = map[string]any{}
		}
		outs[what][db] = v
	}
	for _, db := range dbs {
		mustCLI(t, "store", "copy", "--from", seed, "--to", db, "--what", "runs")
		put("labels queue", db, pgMust(t, env, db, "labels", "queue", "run-one", "--name", "first", "--size", "8", "--seed", "3", "--judge", "judge").stdout)
		imported := pgMust(t, env, db, "labels", "import", file).stdout
		if want := "imported 53 labels: 53 new or changed, 0 already stored\n"; imported != want {
			t.Errorf("%s: labels import: %q; want %q", storeName(db), imported, want)
		}
		put("labels import again", db, pgMust(t, env, db, "labels", "import", file, "--format", "json").stdout)
		put("labels queues --json", db, pgNormJSON(t, db, "labels queues --json", pgMust(t, env, db, "labels", "queues", "--json").stdout))
		put("labels queues run-one", db, pgMust(t, env, db, "labels", "queues", "run-one").stdout)
		if got, want := pgMust(t, env, db, "labels", "export", "--all").stdout, readFileT(t, file); got != want {
			t.Errorf("%s: labels export --all is not the imported file:\n%s\nwant:\n%s", storeName(db), got, want)
		}
		put("labels export run-one", db, pgMust(t, env, db, "labels", "export", "run-one").stdout)
		put("calibrate --format json", db, pgNormJSON(t, db, "calibrate", pgMust(t, env, db, "calibrate", "run-fit", "--judge", "grader", "--format", "json").stdout))
		put("calibrate --queue", db, pgMust(t, env, db, "calibrate", "run-fit", "--judge", "grader", "--queue", "q").stdout)
	}
	for what, got := range outs {
		pgSame(t, what, got, dbs)
	}
}

// cache stats/clear on a run against the in-process mock (the replay
// targets of the quickstart never reach the cache), and load: a short load
// test whose report renders on both stores (its timings are not compared).
func TestMockCommandsOnPostgres(t *testing.T) {
	t.Parallel()
	dbs := pgBothStores(t)
	_, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	spec := loadTask(t, dir, 5, fmt.Sprintf(`  - {name: local, provider: openai, model: m, base_url: %s/v1}`, url), "")
	env := cliEnv{env: map[string]string{}}

	outs := map[string]map[string]any{}
	put := func(what, db string, v any) {
		if outs[what] == nil {
			outs[what] = map[string]any{}
		}
		outs[what][db] = v
	}
	for _, db := range dbs {
		pgMust(t, env, db, "run", spec)
		// The mock's replies carry a counter and a clock time: their bytes
		// are not compared, the entries per target are.
		var stats struct {
			Targets []struct {
				Target  string `json:"target"`
				Entries int    `json:"entries"`
			} `json:"targets"`
		}
		if inv := pgMust(t, env, db, "cache", "stats", "--json"); json.Unmarshal([]byte(inv.stdout), &stats) != nil {
			t.Fatalf("%s: cache stats --json:\n%s", storeName(db), inv.stdout)
		}
		if len(stats.Targets) != 1 || stats.Targets[0].Target != "local" || stats.Targets[0].Entries != 5 {
			t.Errorf("%s: cache stats --json = %+v; want 5 entries of local", storeName(db), stats)
		}
		put("cache stats --json", db, stats)
		put("cache clear --target nobody", db, pgMust(t, env, db, "cache", "clear", "--target", "nobody").stdout)
		put("cache clear --target local", db, pgMust(t, env, db, "cache", "clear", "--target", "local", "--json").stdout)
		put("cache clear", db, pgMust(t, env, db, "cache", "clear").stdout)
		if got, want := pgMust(t, env, db, "cache", "stats").stdout, "the response cache is empty\n"; got != want {
			t.Errorf("%s: cache stats after cache clear: %q; want %q", storeName(db), got, want)
		}

		inv := pgMust(t, env, db, "load", spec, "--rate", "10", "--duration", "500ms", "--cases", "3", "--format", "json")
		var load struct {
			Run struct {
				ID   string `json:"id"`
				Kind string `json:"kind"`
			} `json:"run"`
		}
		if err := json.Unmarshal([]byte(inv.stdout), &load); err != nil || load.Run.ID == "" || load.Run.Kind != record.KindLoad {
			t.Fatalf("%s: load --format json: %+v, %v\n%s", storeName(db), load, err, inv.stdout)
		}
		pgMust(t, env, db, "report", load.Run.ID)
		pgMust(t, env, db, "report", load.Run.ID, "--format", "json")
	}
	for what, got := range outs {
		pgSame(t, what, got, dbs)
	}
}
