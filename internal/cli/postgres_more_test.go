package cli

import (
	"context"
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
	"github.com/assay-eval/assay/internal/store/sqlite"
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
	lines := strings.Split(out, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.Contains(l, hostLoadWarning) { // the machine's load, not the store's
			kept = append(kept, l)
		}
	}
	return clockTime.ReplaceAllString(strings.Join(kept, "\n"), "<time>")
}

// pgOuts collects each output by what and store.
type pgOuts map[string]map[string]any

func (o pgOuts) put(what, db string, v any) {
	if o[what] == nil {
		o[what] = map[string]any{}
	}
	o[what][db] = v
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

	outs := pgOuts{}
	for _, db := range dbs {
		pgMust(t, env, db, "run", spec)
		pgMust(t, env, db, "run", spec, "--no-cache")
		ids := pgRunIDs(t, env, db)
		if len(ids) != 2 {
			t.Fatalf("%s: %d runs; want 2", storeName(db), len(ids))
		}
		older, newer := ids[1], ids[0]

		outs.put("plan --json", db, pgNormJSON(t, db, "plan --json", pgMust(t, env, db, "plan", older, "--json").stdout, older))
		outs.put("plan", db, pgNormText(pgMust(t, env, db, "plan", older).stdout, older))
		outs.put("plan --gate --json", db, pgNormJSON(t, db, "plan --gate", pgMust(t, env, db, "plan", older, "--gate", "--json").stdout, older))
		outs.put("drift --format json", db, pgNormJSON(t, db, "drift", pgMust(t, env, db, "drift", older, newer, "--format", "json").stdout, older, newer))
		outs.put("drift", db, pgNormText(pgMust(t, env, db, "drift", older, newer).stdout, older, newer))
		outs.put("report --format markdown", db, pgDropF1Intervals(pgNormText(pgMust(t, env, db, "report", older, "--format", "markdown").stdout, older)))
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

	outs := pgOuts{}
	for _, db := range dbs {
		mustCLI(t, "store", "copy", "--from", seed, "--to", db, "--what", "runs")
		outs.put("labels queue", db, pgMust(t, env, db, "labels", "queue", "run-one", "--name", "first", "--size", "8", "--seed", "3", "--judge", "judge").stdout)
		imported := pgMust(t, env, db, "labels", "import", file).stdout
		if want := "imported 53 labels: 53 new or changed, 0 already stored\n"; imported != want {
			t.Errorf("%s: labels import: %q; want %q", storeName(db), imported, want)
		}
		outs.put("labels import again", db, pgMust(t, env, db, "labels", "import", file, "--format", "json").stdout)
		outs.put("labels queues --json", db, pgNormJSON(t, db, "labels queues --json", pgMust(t, env, db, "labels", "queues", "--json").stdout))
		outs.put("labels queues run-one", db, pgMust(t, env, db, "labels", "queues", "run-one").stdout)
		if got, want := pgMust(t, env, db, "labels", "export", "--all").stdout, readFileT(t, file); got != want {
			t.Errorf("%s: labels export --all is not the imported file:\n%s\nwant:\n%s", storeName(db), got, want)
		}
		outs.put("labels export run-one", db, pgMust(t, env, db, "labels", "export", "run-one").stdout)
		outs.put("calibrate --format json", db, pgNormJSON(t, db, "calibrate", pgMust(t, env, db, "calibrate", "run-fit", "--judge", "grader", "--format", "json").stdout))
		outs.put("calibrate --queue", db, pgMust(t, env, db, "calibrate", "run-fit", "--judge", "grader", "--queue", "q").stdout)
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

	outs := pgOuts{}
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
		outs.put("cache stats --json", db, stats)
		outs.put("cache clear --target nobody", db, pgMust(t, env, db, "cache", "clear", "--target", "nobody").stdout)
		outs.put("cache clear --target local", db, pgMust(t, env, db, "cache", "clear", "--target", "local", "--json").stdout)
		outs.put("cache clear", db, pgMust(t, env, db, "cache", "clear").stdout)
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

// addedID is the ID promote gives an added case: a hash of its fields,
// which name the run it was promoted from.
var addedID = regexp.MustCompile(`-added-[0-9a-f]{8}`)

// The traces flow: ingest a log; sample stored traces, score the sample
// (score-traces), promote its failures into a dataset, trend; and import a
// vendor's answers to a blind export. The traces are made in an SQLite file
// and copied (traces only) into each store.
func TestTracesCommandsOnPostgres(t *testing.T) {
	t.Parallel()
	dbs := pgBothStores(t)
	env := cliEnv{env: map[string]string{}}
	_, ingestSpecPath, _, logPath := ingestSetup(t)

	seed := filepath.Join(t.TempDir(), "seed.db")
	st, err := sqlite.Open(context.Background(), seed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PutTraces(context.Background(), promoteTraces()); err != nil {
		t.Fatal(err)
	}
	st.Close()

	blindDir := t.TempDir()
	blind := blindSpec(t, blindDir, 12)
	sampleFile := filepath.Join(blindDir, "sample.jsonl")
	pgMust(t, env, seed, "export", "--blind", blind, "-o", sampleFile, "--seed", "11")
	answers := filepath.Join(blindDir, "answers.jsonl")
	writeFile(t, answers, strings.Join(simulateVendor(t, sampleFile), "\n")+"\n")

	outs := pgOuts{}
	for _, db := range dbs {
		outs.put("ingest", db, pgNormJSON(t, db, "ingest", pgMust(t, env, db, "ingest", ingestSpecPath, logPath, "--format", "json").stdout))
		outs.put("ingest again", db, pgNormJSON(t, db, "ingest", pgMust(t, env, db, "ingest", ingestSpecPath, logPath, "--format", "json").stdout))

		mustCLI(t, "store", "copy", "--from", seed, "--to", db, "--what", "traces")
		dir := t.TempDir()
		data, spec := promoteTask(t, dir)
		outs.put("sample", db, pgNormJSON(t, db, "sample", pgMust(t, env, db, "sample", "--since", "2026-11-24", "--until", "2026-11-25", "--size", "50", "--seed", "1", "--name", "day", "--format", "json").stdout))
		inv := pgMust(t, env, db, "score-traces", spec, "--sample", "day", "--format", "json")
		var scored struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(inv.stdout), &scored); err != nil || scored.RunID == "" {
			t.Fatalf("%s: score-traces --format json: %v\n%s", storeName(db), err, inv.stdout)
		}
		outs.put("score-traces", db, pgNormJSON(t, db, "score-traces", inv.stdout, scored.RunID))
		outs.put("report of score-traces", db, pgNormJSON(t, db, "report", pgMust(t, env, db, "report", scored.RunID, "--format", "json").stdout, scored.RunID))
		outs.put("trend", db, pgNormJSON(t, db, "trend", pgMust(t, env, db, "trend", "--format", "json").stdout, scored.RunID))
		promoted := func(out string) string {
			return addedID.ReplaceAllString(strings.ReplaceAll(out, dir, "<dir>"), "-added-<hash>")
		}
		outs.put("promote --dry-run", db, pgNormJSON(t, db, "promote --dry-run",
			promoted(pgMust(t, env, db, "promote", spec, "--dry-run", "--format", "json").stdout), scored.RunID))
		res := pgNormJSON(t, db, "promote", promoted(pgMust(t, env, db, "promote", spec, "--format", "json").stdout), scored.RunID)
		if m, ok := res.(map[string]any); ok {
			delete(m, "sha256_after") // the added cases name the run they came from
		}
		outs.put("promote", db, res)
		outs.put("promoted dataset", db, promoted(strings.ReplaceAll(readFileT(t, data), scored.RunID, "<run>")))

		inv = pgMust(t, env, db, "import", answers, "--key", sampleFile+".key", "--as", "vendor-x", "--format", "json")
		var imported struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(inv.stdout), &imported); err != nil || imported.RunID == "" {
			t.Fatalf("%s: import --format json: %v\n%s", storeName(db), err, inv.stdout)
		}
		outs.put("import", db, pgNormJSON(t, db, "import", inv.stdout, imported.RunID))
		outs.put("report of import", db, pgNormJSON(t, db, "report", pgMust(t, env, db, "report", imported.RunID, "--format", "json").stdout, imported.RunID))
	}
	for what, got := range outs {
		pgSame(t, what, got, dbs)
	}
}

// difficulty and mismatch on a run of the quickstart with a difficulty:
// section (an overlay), as TestMismatchAnswersFromWorkloadRun makes it.
func TestDifficultyCommandsOnPostgres(t *testing.T) {
	t.Parallel()
	dbs := pgBothStores(t)
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	overlay := filepath.Join(t.TempDir(), "difficulty.yaml")
	writeFile(t, overlay, `difficulty:
  tag: tier
  levels: [easy, medium, hard]
  rubric:
    stakes: {rating: high, why: "tickets route refunds without review"}
`)
	env := cliEnv{env: map[string]string{}}

	outs := pgOuts{}
	for _, db := range dbs {
		pgMust(t, env, db, "run", spec, "-f", overlay)
		ids := pgRunIDs(t, env, db)
		outs.put("difficulty", db, pgNormJSON(t, db, "difficulty", pgMust(t, env, db, "difficulty", "latest", "--tag", "tier", "--levels", "easy,medium,hard", "--format", "json").stdout, ids...))
		outs.put("mismatch", db, pgNormJSON(t, db, "mismatch", pgMust(t, env, db, "mismatch", "--benchmark", "latest", "--workload", "latest", "--format", "json", "--replicates", "50").stdout, ids...))
	}
	for what, got := range outs {
		pgSame(t, what, got, dbs)
	}
}
