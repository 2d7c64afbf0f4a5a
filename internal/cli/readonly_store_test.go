package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/store/storetest"
)

// A store on a read-only mount or CI cache can be analysed: report, gate,
// baseline export, compare, diff, drift and plan read it without writing a
// byte, and rescore says why it cannot write instead of half-working.
func TestReadOnlyStoreIsReadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	for range 2 {
		if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db); inv.code != 0 {
			t.Fatalf("run: %s", inv.stderr)
		}
	}
	runs := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "json")
	if runs.code != 0 {
		t.Fatalf("report: %s", runs.stderr)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}

	ro := filepath.Join(storetest.ReadOnly(t, dir), "assay.db")
	if f, err := os.OpenFile(ro, os.O_WRONLY, 0); err == nil {
		f.Close()
		t.Fatalf("%s is still writable", ro)
	}

	out := filepath.Join(t.TempDir(), "baseline.json")
	for _, args := range [][]string{
		{"report", "latest", "--format", "json"},
		{"report", "latest", "--format", "html", "-o", filepath.Join(t.TempDir(), "r.html")},
		{"baseline", "export", "latest", "-o", out},
		{"gate", "latest", "--baseline", out},
		{"compare", "latest", "latest"},
		{"diff", "latest", "latest"},
		{"drift", "latest", "latest"},
		{"plan", "latest"},
		{"runs", "--json"},
		{"export", "latest", "-o", filepath.Join(t.TempDir(), "rows.parquet")},
		{"difficulty", "latest", "--tag", "tier", "--levels", "easy,medium,hard", "--format", "html", "-o", filepath.Join(t.TempDir(), "d.html")},
		{"mismatch", "--benchmark", "latest", "--workload", "latest", "--tag", "tier", "--levels", "easy,medium,hard", "--format", "json"},
	} {
		inv := runCLI(t, cliEnv{}, append(args, "--db", ro)...)
		if inv.code != 0 {
			t.Errorf("%s on a read-only store: exit %d\n%s", strings.Join(args, " "), inv.code, inv.stderr)
		}
	}
	inv := runCLI(t, cliEnv{}, "rescore", "latest", "--db", ro)
	if inv.code == 0 || !strings.Contains(inv.stderr, "read") {
		t.Errorf("rescore on a read-only store: exit %d, stderr %q; want an error saying it is read-only", inv.code, inv.stderr)
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("the read-only store's file changed")
	}
}

// Where there is no store, every command that reads one says so and
// creates nothing: not the store, not its directory. Every command of the
// root must be classified here, so a new command that reads runs is
// covered (or a test fails saying to classify it).
func TestNoStoreHere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, ".assay", "assay.db")
	baseline := filepath.Join(t.TempDir(), "baseline.json") // absent: the store is looked at first or the file's absence named
	out := filepath.Join(t.TempDir(), "out")
	reads := map[string][][]string{
		"report":   {{"report"}, {"report", "latest", "--format", "json"}, {"report", "0123abcd", "--format", "html", "-o", out + ".html"}},
		"rescore":  {{"rescore", "latest"}},
		"compare":  {{"compare", "latest", "latest"}},
		"diff":     {{"diff", "latest", "latest"}},
		"drift":    {{"drift", "latest", "latest"}},
		"plan":     {{"plan", "latest"}, {"plan", "latest", "--slices"}},
		"gate":     {{"gate", "latest", "--baseline", "latest"}},
		"baseline": {{"baseline", "export", "latest", "-o", baseline}},
		// Commands other parts add; covered once they are registered.
		"runs":   {{"runs"}, {"runs", "--json"}, {"runs", "rm", "0123abcd"}},
		"export": {{"export", "latest", "--format", "jsonl", "-o", out + ".jsonl"}},
		"cache":  {{"cache", "stats"}, {"cache", "clear"}},
		// Labels and the pages over them.
		"calibrate": {{"calibrate", "latest", "--judge", "grader"}, {"calibrate", "latest", "--judge", "grader", "--labels", baseline}},
		"labels": {{"labels", "export", "latest"}, {"labels", "export", "--all", "-o", out + ".labels"}, {"labels", "queues"},
			{"labels", "queue", "latest", "--name", "q", "--size", "5"}, {"labels", "import", baseline}},
		"serve": {{"serve", "--addr", "127.0.0.1:0"}},
		"trend": {{"trend"}, {"trend", "--spec", "support", "--format", "html", "-o", out + ".html"}},
		// Difficulty on one axis.
		"difficulty": {{"difficulty"}, {"difficulty", "latest", "--tag", "tier", "--format", "html", "-o", out + ".html"}},
		"mismatch":   {{"mismatch", "--benchmark", "latest", "--workload", "latest"}, {"mismatch", "--benchmark", "0123abcd", "--workload", "latest", "--tag", "tier"}},
		// Production traces.
		"sample":       {{"sample", "--window", "7d", "--per", "model=5"}, {"sample", "--size", "5", "--format", "json", "-o", out + ".sample"}},
		"score-traces": {{"score-traces", filepath.Join(dir, "eval.yaml"), "--sample", "s"}},
		"promote":      {{"promote", "absent.yaml"}, {"promote", "absent.yaml", "--run", "0123abcd", "--dry-run"}},
		// Copying between stores: --from must exist; --to is not created.
		"store": {{"store", "copy", "--from", db, "--to", out + ".db"}},
	}
	// Commands that take a spec, write runs, or need no store.
	others := map[string]bool{"validate": true, "run": true, "mock": true, "selftest": true, "probe": true, "init": true, "collect": true,
		"completion": true, "help": true, "version": true, "ingest": true, "import": true,
		"load": true, "worker": true}

	root := newRootCommand(&Globals{})
	for _, c := range root.Commands() {
		name := c.Name()
		if _, ok := reads[name]; !ok && !others[name] {
			t.Errorf("command %s is not classified in TestNoStoreHere: if it reads the store, add its invocations to reads", name)
		}
	}
	for name, invs := range reads {
		if c, _, err := root.Find([]string{name}); err != nil || c == root {
			continue // not (yet) a command
		}
		for _, args := range invs {
			inv := runCLI(t, cliEnv{}, append(args, "--db", db)...)
			if inv.code != ExitErr || !strings.Contains(inv.stderr, "no store here") {
				t.Errorf("%s without a store: exit %d, stderr %q; want exit 1 saying no store here", strings.Join(args, " "), inv.code, inv.stderr)
			}
		}
	}
	// The default store path too (ASSAY_DB, then ./.assay/assay.db).
	inv := runCLI(t, cliEnv{env: map[string]string{"ASSAY_DB": db}}, "report")
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "no store here") {
		t.Errorf("report with ASSAY_DB and no store: exit %d, stderr %q", inv.code, inv.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".assay")); !os.IsNotExist(err) {
		t.Errorf("a command that reads created %s", filepath.Join(dir, ".assay"))
	}
	for _, f := range []string{baseline, out + ".html", out + ".jsonl", out + ".labels", out + ".sample", out + ".db"} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("a command that found no store wrote %s", f)
		}
	}
}
