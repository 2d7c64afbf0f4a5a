package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeNamedReplaySpec writes a spec named name (file FILE.yaml) whose one
// target replays answers from out.jsonl over cases.jsonl in dir.
func writeNamedReplaySpec(t *testing.T, dir, file, name string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "cases.jsonl")); err != nil {
		var cases, outs strings.Builder
		for i := 1; i <= 4; i++ {
			fmt.Fprintf(&cases, `{"id":"c%d","q":"q%d","expected":"a%d"}`+"\n", i, i, i)
			fmt.Fprintf(&outs, `{"q":"q%d","answer":"a%d"}`+"\n", i, i)
		}
		writeFile(t, filepath.Join(dir, "cases.jsonl"), cases.String())
		writeFile(t, filepath.Join(dir, "out.jsonl"), outs.String())
	}
	path := filepath.Join(dir, file+".yaml")
	writeFile(t, path, `name: `+name+`
dataset: {path: cases.jsonl, id: id, expected: expected}
prompt: {user: "{{.q}}"}
targets:
  - {name: model, provider: replay, replay: {path: out.jsonl, join: q, output: answer}}
scorers:
  - {name: correct, type: equals}
`)
	return path
}

// With a spec at hand, latest is the newest run of that spec, not the
// newest run in the store: two specs share one store, the other spec ran
// last, and each command that takes --spec (or run's SPEC) still finds
// its own spec's run; an explicit run of another spec is refused, and a
// spec with no run says so by name.
func TestLatestOfSpec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	a := writeNamedReplaySpec(t, dir, "a", "alpha")
	b := writeNamedReplaySpec(t, dir, "b", "beta")
	c := writeNamedReplaySpec(t, dir, "c", "gamma")
	e := cliEnv{}
	runA := runJSON(t, e, "run", a, "--db", db).RunID
	runB := runJSON(t, e, "run", b, "--db", db).RunID
	if runA == "" || runB == "" || runA == runB {
		t.Fatalf("runs %q and %q", runA, runB)
	}

	reportRun := func(args ...string) string {
		t.Helper()
		inv := runCLI(t, e, append([]string{"report", "--db", db, "--format", "json"}, args...)...)
		if inv.code != 0 {
			t.Fatalf("report %v: exit %d: %s", args, inv.code, inv.stderr)
		}
		var r struct {
			Run struct {
				ID string `json:"id"`
			} `json:"run"`
		}
		if err := json.Unmarshal([]byte(inv.stdout), &r); err != nil {
			t.Fatal(err)
		}
		return r.Run.ID
	}
	if got := reportRun("latest"); got != runB {
		t.Errorf("report latest without a spec: run %s, want the newest run %s", got, runB)
	}
	if got := reportRun("latest", "--spec", a); got != runA {
		t.Errorf("report latest --spec a.yaml: run %s, want alpha's run %s", got, runA)
	}

	inv := runCLI(t, e, "rescore", "latest", "--spec", a, "--db", db, "--json")
	var rs struct {
		RunID string `json:"run_id"`
	}
	if inv.code != 0 || json.Unmarshal([]byte(inv.stdout), &rs) != nil || rs.RunID != runA {
		t.Errorf("rescore latest --spec a.yaml: exit %d, %s %s; want a rescore of %s", inv.code, inv.stdout, inv.stderr, runA)
	}

	out := filepath.Join(dir, "base.json")
	if inv := runCLI(t, e, "baseline", "export", "latest", "--spec", a, "--db", db, "-o", out); inv.code != 0 {
		t.Fatalf("baseline export latest --spec: exit %d: %s", inv.code, inv.stderr)
	}
	if body := readFileT(t, out); !strings.Contains(body, runA) || strings.Contains(body, runB) {
		t.Errorf("baseline export latest --spec a.yaml is not of run %s", runA)
	}

	if inv := runCLI(t, e, "gate", "latest", "--spec", a, "--baseline", runA, "--db", db, "--format", "json"); inv.code != 0 || !strings.Contains(inv.stdout, runA) || strings.Contains(inv.stdout, runB) {
		t.Errorf("gate latest --spec a.yaml: exit %d, want alpha's run %s gated against itself: %s %s", inv.code, runA, inv.stdout, inv.stderr)
	}

	// run SPEC --resume latest resumes the newest run of SPEC: alpha's run
	// is complete, so it says so (beta's would be refused as changed).
	inv = runCLI(t, e, "run", a, "--resume", "latest", "--db", db)
	if inv.code != 0 || !strings.Contains(inv.stderr, "run "+runA+" is already complete") {
		t.Errorf("run a.yaml --resume latest: exit %d: %s; want alpha's run %s, complete", inv.code, inv.stderr, runA)
	}

	inv = runCLI(t, e, "report", runB, "--spec", a, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, `is a run of spec "beta"`) || !strings.Contains(inv.stderr, `"alpha"`) {
		t.Errorf("report of beta's run with --spec a.yaml: exit %d: %s; want a refusal naming both specs", inv.code, inv.stderr)
	}
	inv = runCLI(t, e, "report", "latest", "--spec", c, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, `latest run of spec "gamma"`) {
		t.Errorf("report latest of a spec with no run: exit %d: %s; want an error naming gamma", inv.code, inv.stderr)
	}
}
