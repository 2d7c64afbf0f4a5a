package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/difficulty"
	"github.com/assay-eval/assay/internal/spec"
)

// --tag without --levels takes the levels from the run's recorded
// difficulty: section when it names the same tag (a store view's Source
// reads "run ID": the levels were never found).
func TestDifficultyTagTakesRecordedLevels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	sp := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	overlay := filepath.Join(dir, "difficulty.yaml")
	writeFile(t, overlay, "difficulty:\n  tag: tier\n  levels: [easy, medium, hard]\n")
	if inv := runCLI(t, cliEnv{}, "run", sp, "-f", overlay, "--db", db, "--targets", "model-a"); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	inv := runCLI(t, cliEnv{}, "difficulty", "--db", db, "--tag", "tier", "--format", "json")
	if inv.code != 0 {
		t.Fatalf("difficulty --tag tier: exit %d\n%s", inv.code, inv.stderr)
	}
	var f difficulty.Fitted
	if err := json.Unmarshal([]byte(inv.stdout), &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Tiers) != 3 || f.Tiers[0].Label != "easy" || f.Tiers[2].Label != "hard" {
		t.Errorf("tiers %+v, want easy, medium, hard from the recorded levels", f.Tiers)
	}
}

// With a SPEC, a workload dataset file is profiled with the SPEC's prompt
// and scorers (the prompt and scoring axes are rated, not unknown); the
// benchmark run is the same spec, so both are low.
func TestMismatchSpecDescribesWorkloadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	sp := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	if inv := runCLI(t, cliEnv{}, "run", sp, "--db", db, "--targets", "model-a"); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	cases := filepath.Join(filepath.Dir(sp), "cases.jsonl")
	inv := runCLI(t, cliEnv{}, "mismatch", sp, "--db", db, "--benchmark", "latest", "--workload", cases,
		"--tag", "tier", "--levels", "easy,medium,hard", "--format", "json", "--replicates", "50")
	if inv.code != 0 {
		t.Fatalf("mismatch: exit %d\n%s", inv.code, inv.stderr)
	}
	var m difficulty.Mismatch
	if err := json.Unmarshal([]byte(inv.stdout), &m); err != nil {
		t.Fatal(err)
	}
	if m.Rubric == nil {
		t.Fatal("no rubric")
	}
	for _, a := range m.Rubric.Axes {
		if (a.Axis == difficulty.AxisPrompt || a.Axis == difficulty.AxisScoring) && a.Rating != "low" {
			t.Errorf("%s: %s (%q), want low: the SPEC describes the workload file", a.Axis, a.Rating, a.Reasons)
		}
	}
}

// A dataset file read with a SPEC whose prompt shows no field: its input
// text is every field but the ID, the tags' and the SPEC's expected field
// (the answer is not input).
func TestMismatchDatasetSideLeavesOutExpected(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "work.jsonl")
	writeFile(t, path, `{"id": "a", "question": "two plus two", "answer": "SECRET-ANSWER-4", "steps": 1}
{"id": "b", "question": "three plus four", "answer": "SECRET-ANSWER-7", "steps": 2}
`)
	user := &spec.Spec{Dataset: spec.Dataset{ID: "id", Expected: "answer"}}
	side, err := datasetSide(context.Background(), user, path, "", difficulty.Scale{Source: difficulty.SourceTag, Tag: "steps"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := profileOf(context.Background(), side.source)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Inputs) != 2 || !strings.Contains(p.Inputs[0], "two plus two") {
		t.Fatalf("inputs %q, want the two questions", p.Inputs)
	}
	for _, in := range p.Inputs {
		if strings.Contains(in, "SECRET-ANSWER") {
			t.Errorf("input %q holds the expected answer", in)
		}
	}
}

// Given a SPEC, --benchmark latest is the newest run of that spec, not the
// newest run in the store (another spec's, with no such tag), as latest is
// for every command with a spec at hand.
func TestMismatchLatestIsTheSpecs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	sp := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	inv := runCLI(t, cliEnv{}, "run", sp, "--db", db, "--targets", "model-a", "--json")
	if inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	var first runSummary
	if err := json.Unmarshal([]byte(inv.stdout), &first); err != nil {
		t.Fatal(err)
	}
	other := echoTask(t, dir, 3, `  - {name: e, provider: exec, command: ["cat"]}`)
	runCLI(t, cliEnv{}, "run", other, "--db", db) // newer, of another spec (its calls fail: stored all the same)
	cases := filepath.Join(filepath.Dir(sp), "cases.jsonl")
	args := []string{"mismatch", "--db", db, "--benchmark", "latest", "--workload", cases,
		"--tag", "tier", "--levels", "easy,medium,hard", "--format", "json", "--replicates", "50"}
	if inv := runCLI(t, cliEnv{}, args...); inv.code != 4 || !strings.Contains(inv.stderr, `no case has the tag "tier"`) {
		t.Errorf("without a SPEC, latest is the store's newest run (the other spec's, no tier tag): exit %d\n%s", inv.code, inv.stderr)
	}
	inv = runCLI(t, cliEnv{}, append([]string{"mismatch", sp}, args[1:]...)...)
	if inv.code != 0 {
		t.Fatalf("mismatch SPEC --benchmark latest: exit %d\n%s", inv.code, inv.stderr)
	}
	var m difficulty.Mismatch
	if err := json.Unmarshal([]byte(inv.stdout), &m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Benchmark.Name, first.RunID) {
		t.Errorf("the benchmark is %q, want the quickstart's run %s", m.Benchmark.Name, first.RunID)
	}
}
