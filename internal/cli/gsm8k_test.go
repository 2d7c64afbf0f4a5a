package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

var gsm8kConfigs = []string{"6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"}

// gsm8kSpec replays the four recorded configurations of Cobbe et al. (2021)
// over the 1,319 GSM8K test problems, scoring the final "A: N" line.
func gsm8kSpec(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gsm8k.yaml")
	writeFile(t, path, gsm8kSpecText(filepath.Join(data, "gsm8k", "example_model_solutions.jsonl")))
	return path
}

func gsm8kSpecText(solutions string) string {
	spec := fmt.Sprintf(`name: gsm8k-recorded
dataset:
  path: %q
  id: line
  expected: ground_truth
  expected_extract: 'A:\s*(.+)$'
  tags:
    tier: 'string(size(case.ground_truth.split("<<")) - 1)'
prompt:
  user: "Q: {{.question}}"
targets:
`, solutions)
	for _, c := range gsm8kConfigs {
		spec += fmt.Sprintf("  - {name: %s, provider: replay, replay: {path: %q, join: question, output: %s.solution}}\n", c, solutions, c)
	}
	spec += `output:
  extract: 'A:\s*(.+)$'
scorers:
  - name: correct
    type: equals
    normalize: [trim, no_commas]
    primary: true
`
	return spec
}

// gsm8kShared holds the one replay of gsm8kSpec a test process makes: the
// tests that only read that run (its scores, report and exports) each get a
// copy of its store instead of replaying 5,276 results again.
var gsm8kShared struct {
	once sync.Once
	dir  string
	sum  runSummary
	err  error
}

// gsm8kRun returns a store holding a complete replay of gsm8kSpec (a copy
// of the one made per process: the caller may write to it) and the run's
// --json summary.
func gsm8kRun(t *testing.T) (db string, sum runSummary) {
	t.Helper()
	data := sharedData(t)
	g := &gsm8kShared
	g.once.Do(func() {
		g.dir, g.err = os.MkdirTemp("", "assay-gsm8k-")
		if g.err != nil {
			return
		}
		spec := filepath.Join(g.dir, "gsm8k.yaml")
		solutions := filepath.Join(data, "gsm8k", "example_model_solutions.jsonl")
		g.err = os.WriteFile(spec, []byte(gsm8kSpecText(solutions)), 0o644)
		if g.err != nil {
			return
		}
		inv := runCLI(t, cliEnv{env: map[string]string{}}, "run", spec, "--db", filepath.Join(g.dir, "assay.db"), "--json")
		if inv.code != 0 {
			g.err = fmt.Errorf("gsm8k run: exit %d\n%s", inv.code, inv.stderr)
			return
		}
		g.err = json.Unmarshal([]byte(inv.stdout), &g.sum)
	})
	if g.err != nil {
		t.Fatal(g.err)
	}
	return copyStore(t, filepath.Join(g.dir, "assay.db")), g.sum
}

// copyStore copies the store at src (its database file and write-ahead
// log) to a new temporary directory and returns the copy's path.
func copyStore(t *testing.T, src string) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "assay.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(src + suffix)
		if errors.Is(err, fs.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(db+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// gsm8kCanarySpecText is a spec whose one target, canary, replays one
// recorded GSM8K configuration.
func gsm8kCanarySpecText(solutions, config string) string {
	return fmt.Sprintf(`name: gsm8k-canary
dataset: {path: %q, id: line, expected: ground_truth, expected_extract: 'A:\s*(.+)$'}
prompt: {user: "Q: {{.question}}"}
targets:
  - {name: canary, provider: replay, replay: {path: %q, join: question, output: %s.solution}}
output: {extract: 'A:\s*(.+)$'}
scorers:
  - {name: correct, type: equals, normalize: [trim, no_commas], primary: true}
`, solutions, solutions, config)
}

// gsm8kCanaryShared holds the one pair of canary runs a test process
// makes: the 175B verifier's replay, then the 6B verifier's under the same
// target name, in one store. The drift tests that only read them each get
// a copy of that store instead of replaying 2 × 1,319 results again.
var gsm8kCanaryShared struct {
	once sync.Once
	dir  string
	a, b runSummary
	err  error
}

// gsm8kCanaryRuns returns a store holding the canary pair (a copy of the
// one made per process: the caller may write to it) and the two runs'
// --json summaries, 175B's first.
func gsm8kCanaryRuns(t *testing.T) (db string, a, b runSummary) {
	t.Helper()
	data := sharedData(t)
	g := &gsm8kCanaryShared
	g.once.Do(func() {
		g.dir, g.err = os.MkdirTemp("", "assay-gsm8k-canary-")
		if g.err != nil {
			return
		}
		solutions := filepath.Join(data, "gsm8k", "example_model_solutions.jsonl")
		for _, r := range []struct {
			config string
			sum    *runSummary
		}{{"175b_verification", &g.a}, {"6b_verification", &g.b}} {
			spec := filepath.Join(g.dir, r.config+".yaml")
			if g.err = os.WriteFile(spec, []byte(gsm8kCanarySpecText(solutions, r.config)), 0o644); g.err != nil {
				return
			}
			inv := runCLI(t, cliEnv{}, "run", spec, "--db", filepath.Join(g.dir, "assay.db"), "--json")
			if inv.code != 0 {
				g.err = fmt.Errorf("gsm8k canary run of %s: exit %d\n%s", r.config, inv.code, inv.stderr)
				return
			}
			if g.err = json.Unmarshal([]byte(inv.stdout), r.sum); g.err != nil {
				return
			}
		}
	})
	if g.err != nil {
		t.Fatal(g.err)
	}
	return copyStore(t, filepath.Join(g.dir, "assay.db")), g.a, g.b
}

// The authors' own grading (is_correct) and ours must agree on every one of
// the 4 × 1,319 recorded results, and the run must hold exactly one result
// per case per target.
func TestGSM8KReplayAgreesWithAuthors(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	db, sum := gsm8kRun(t)
	e := cliEnv{env: map[string]string{}}
	if sum.Status != "complete" || sum.Stored != 4*1319 || sum.Errors != 0 {
		t.Fatalf("summary %+v, want complete with 5276 results, no errors", sum)
	}

	// The authors' verdicts, by line number.
	want := map[record.Key]bool{}
	f, err := os.Open(filepath.Join(data, "gsm8k", "example_model_solutions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		for _, c := range gsm8kConfigs {
			var v struct {
				IsCorrect bool `json:"is_correct"`
			}
			if err := json.Unmarshal(rec[c], &v); err != nil {
				t.Fatal(err)
			}
			want[record.Key{CaseID: strconv.Itoa(line), Target: c, Epoch: 1}] = v.IsCorrect
		}
	}
	if len(want) != 4*1319 {
		t.Fatalf("read %d verdicts", len(want))
	}

	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seen := map[record.Key]bool{}
	disagree := 0
	err = st.Scores(ctx, sum.RunID, 1, func(s record.Score) error {
		if s.Scorer != "correct" {
			return nil
		}
		k := record.Key{CaseID: s.CaseID, Target: s.Target, Epoch: s.Epoch}
		if seen[k] {
			t.Errorf("score for %v twice", k)
		}
		seen[k] = true
		w, ok := want[k]
		if !ok {
			t.Errorf("score for unknown key %v", k)
		} else if s.Pass != w {
			disagree++
			if disagree <= 5 {
				t.Errorf("%v: we say pass=%v, the authors say %v (%s)", k, s.Pass, w, s.Reason)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(want) || disagree != 0 {
		t.Fatalf("%d of %d results scored, %d disagreements with is_correct", len(seen), len(want), disagree)
	}

	// One result per case per target, and the report counts them so.
	inv := runCLI(t, e, "report", "latest", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("report exit %d: %s", inv.code, inv.stderr)
	}
	var rep struct {
		Targets []struct {
			Name    string
			N       int
			Primary struct{ Passed, N int }
		}
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	// Pass counts from the authors' data (computed independently above).
	passes := map[string]int{}
	for k, v := range want {
		if v {
			passes[k.Target]++
		}
	}
	if len(rep.Targets) != 4 {
		t.Fatalf("%d targets in the report", len(rep.Targets))
	}
	for _, tg := range rep.Targets {
		if tg.N != 1319 || tg.Primary.N != 1319 || tg.Primary.Passed != passes[tg.Name] {
			t.Errorf("%s: n=%d primary %d/%d, want 1319 and %d/1319", tg.Name, tg.N, tg.Primary.Passed, tg.Primary.N, passes[tg.Name])
		}
	}
}
