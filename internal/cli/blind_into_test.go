package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// intoSpec writes a spec of n cases (CASE-000 …) with two replay targets:
// model-a answers case i right unless i%4 == 0, model-b unless i%3 == 0.
// The prompt is blindSpec's, so simulateVendor answers its sample (right
// on the even cases).
func intoSpec(t *testing.T, dir string, n int) string {
	t.Helper()
	writeCodeWords(t, dir, n, false, map[string]func(int) bool{
		"a": func(i int) bool { return i%4 == 0 },
		"b": func(i int) bool { return i%3 == 0 },
	})
	p := filepath.Join(dir, "assay.yaml")
	writeFile(t, p, intoSpecYAML("Question: {{.question}}", "correct"))
	return p
}

// intoSpecYAML is intoSpec's spec with this user template and primary
// scorer name (another name is other scorers).
func intoSpecYAML(user, scorer string) string {
	return `name: into-test
dataset: {path: cases.jsonl, id: id, expected: answer}
prompt:
  system: "Answer with the code word."
  user: "` + user + `"
targets:
  - {name: model-a, provider: replay, replay: {path: recorded.jsonl, join: question, output: a}}
  - {name: model-b, provider: replay, replay: {path: recorded.jsonl, join: question, output: b}}
scorers:
  - {name: ` + scorer + `, type: equals, primary: true}
`
}

// intoRun runs the spec and returns the run's ID.
func intoRun(t *testing.T, spec, db string) string {
	t.Helper()
	if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db); inv.code != 0 {
		t.Fatalf("run: exit %d\n%s", inv.code, inv.stderr)
	}
	var runs []struct {
		ID string `json:"id"`
	}
	inv := runCLI(t, cliEnv{}, "runs", "--db", db, "--json")
	if err := json.Unmarshal([]byte(inv.stdout), &runs); err != nil || len(runs) == 0 {
		t.Fatalf("runs %s: %v", inv.stdout, err)
	}
	return runs[0].ID
}

// blindSample exports a blinded sample of n cases and writes a simulated
// vendor's answers; it returns the answers' and the key's paths.
func blindSample(t *testing.T, dir, spec string, n int) (answers, key string) {
	t.Helper()
	sample := filepath.Join(dir, fmt.Sprintf("sample-%d.jsonl", n))
	if inv := runCLI(t, cliEnv{}, "export", "--blind", spec, "-o", sample, "--cases", fmt.Sprint(n), "--seed", "5", "--force"); inv.code != 0 {
		t.Fatalf("export --blind: exit %d\n%s", inv.code, inv.stderr)
	}
	answers = filepath.Join(dir, fmt.Sprintf("answers-%d.jsonl", n))
	writeFile(t, answers, strings.Join(simulateVendor(t, sample), "\n")+"\n")
	return answers, sample + ".key"
}

type intoReport struct {
	Run struct {
		Scoring int `json:"scoring"`
	} `json:"run"`
	Targets []struct {
		Name    string `json:"name"`
		N       int    `json:"n"`
		Primary struct {
			Passed int `json:"passed"`
			N      int `json:"n"`
		} `json:"primary"`
	} `json:"targets"`
	Comparisons []intoComparison `json:"comparisons"`
	Warnings    []string         `json:"warnings"`
}

type intoComparison struct {
	A     string  `json:"a"`
	B     string  `json:"b"`
	N     int     `json:"n"`
	Delta float64 `json:"delta"`
	AOnly int     `json:"a_only"`
	BOnly int     `json:"b_only"`
}

func intoReportOf(t *testing.T, db, run string, args ...string) intoReport {
	t.Helper()
	inv := runCLI(t, cliEnv{}, append([]string{"report", run, "--db", db, "--format", "json"}, args...)...)
	if inv.code != 0 {
		t.Fatalf("report: exit %d\n%s", inv.code, inv.stderr)
	}
	var rep intoReport
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// import --into: a blinded sample of 12 of a run's 30 cases, answered by
// a simulated vendor, joins the run (rescored once, so in scorings 1 and
// 2) as a third target; the run's report pairs the vendor with each of
// the run's targets on the 12 shared cases, with counts computed here
// from the cases the sample drew.
func TestBlindImportInto(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := intoSpec(t, dir, 30)
	db := filepath.Join(dir, "assay.db")
	run := intoRun(t, spec, db)
	if inv := runCLI(t, cliEnv{}, "rescore", run, "--db", db); inv.code != 0 {
		t.Fatalf("rescore: exit %d\n%s", inv.code, inv.stderr)
	}
	answers, key := blindSample(t, dir, spec, 12)

	// Interrupted before any answer is scored: the run is as it was.
	sig := make(chan os.Signal, 1)
	sig <- os.Interrupt
	inv := runCLI(t, cliEnv{interrupts: sig}, "import", answers, "--key", key, "--as", "vendor-x", "--into", run, "--db", db)
	if inv.code != ExitInterrupted || !strings.Contains(inv.stderr, "nothing was added to run "+run+" (it is as it was)") {
		t.Errorf("interrupted import: exit %d\n%s", inv.code, inv.stderr)
	}
	if rep := intoReportOf(t, db, run); len(rep.Targets) != 2 {
		t.Fatalf("an interrupted import changed the run: %+v", rep.Targets)
	}

	inv = runCLI(t, cliEnv{}, "import", answers, "--key", key, "--as", "vendor-x", "--into", "latest", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("import --into: exit %d\n%s", inv.code, inv.stderr)
	}
	var im struct {
		RunID    string   `json:"run_id"`
		Cases    int      `json:"cases"`
		Into     bool     `json:"into"`
		Targets  []string `json:"targets"`
		RunCases int      `json:"run_cases"`
		Scorings []int    `json:"scorings"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &im); err != nil || im.RunID != run || im.Cases != 12 || !im.Into || im.RunCases != 30 ||
		!slices.Equal(im.Targets, []string{"model-a", "model-b", "vendor-x"}) || !slices.Equal(im.Scorings, []int{1, 2}) {
		t.Fatalf("import --into summary %s: %v", inv.stdout, err)
	}

	// The cases the sample drew, from the vendor's rows of the run.
	rows := filepath.Join(dir, "rows.jsonl")
	if inv := runCLI(t, cliEnv{}, "export", run, "-o", rows, "--db", db); inv.code != 0 {
		t.Fatalf("export rows: %s", inv.stderr)
	}
	var drawn []int
	for _, r := range sampleLines(t, rows) {
		if r["target"] != "vendor-x" {
			continue
		}
		var n int
		fmt.Sscanf(r["case_id"].(string), "CASE-%d", &n)
		if want := n%2 == 0; r["pass"] != want {
			t.Errorf("vendor on %s: pass %v, want %v", r["case_id"], r["pass"], want)
		}
		drawn = append(drawn, n)
	}
	if len(drawn) != 12 {
		t.Fatalf("the vendor has %d rows, want 12", len(drawn))
	}
	vendor := func(n int) bool { return n%2 == 0 }
	others := map[string]func(int) bool{
		"model-a": func(n int) bool { return n%4 != 0 },
		"model-b": func(n int) bool { return n%3 != 0 },
	}

	for _, scoring := range []string{"1", "2"} {
		rep := intoReportOf(t, db, run, "--scoring", scoring)
		if fmt.Sprint(rep.Run.Scoring) != scoring {
			t.Errorf("report --scoring %s reads scoring %d", scoring, rep.Run.Scoring)
		}
		var names []string
		for _, tg := range rep.Targets {
			names = append(names, tg.Name)
			want := 30
			if tg.Name == "vendor-x" {
				want = 0
				for _, n := range drawn {
					if vendor(n) {
						want++
					}
				}
				if tg.Primary.N != 12 || tg.Primary.Passed != want {
					t.Errorf("scoring %s: vendor-x passed %d of %d, want %d of 12", scoring, tg.Primary.Passed, tg.Primary.N, want)
				}
			} else if tg.Primary.N != want {
				t.Errorf("scoring %s: %s has %d cases, want %d", scoring, tg.Name, tg.Primary.N, want)
			}
		}
		if !slices.Equal(names, []string{"model-a", "model-b", "vendor-x"}) {
			t.Fatalf("scoring %s: report targets %q", scoring, names)
		}
		for other, pass := range others {
			i := slices.IndexFunc(rep.Comparisons, func(c intoComparison) bool {
				return c.A == other && c.B == "vendor-x"
			})
			if i < 0 {
				t.Fatalf("scoring %s: no comparison of %s with vendor-x in %+v", scoring, other, rep.Comparisons)
			}
			c := rep.Comparisons[i]
			var otherOnly, vendorOnly, otherPass, vendorPass int
			for _, n := range drawn {
				o, v := pass(n), vendor(n)
				switch {
				case o && !v:
					otherOnly++
				case v && !o:
					vendorOnly++
				}
				if o {
					otherPass++
				}
				if v {
					vendorPass++
				}
			}
			delta := float64(otherPass-vendorPass) / 12
			if c.N != 12 || c.AOnly != otherOnly || c.BOnly != vendorOnly || fmt.Sprintf("%.4f", c.Delta) != fmt.Sprintf("%.4f", delta) {
				t.Errorf("scoring %s: %s vs vendor-x: n %d, %s only %d, vendor only %d, delta %g; want 12, %d, %d, %.4f",
					scoring, other, c.N, other, c.AOnly, c.BOnly, c.Delta, otherOnly, vendorOnly, delta)
			}
		}
		if !slices.ContainsFunc(rep.Warnings, func(w string) bool {
			return strings.Contains(w, "vendor-x") && strings.Contains(w, "target vendor-x has results on 12 of the run's 30 cases")
		}) {
			t.Errorf("scoring %s: no warning that vendor-x covers 12 of 30 cases: %q", scoring, rep.Warnings)
		}
	}

	// A rescore after the import scores the vendor's stored answers too.
	if inv := runCLI(t, cliEnv{}, "rescore", run, "--db", db); inv.code != 0 {
		t.Fatalf("rescore after import: exit %d\n%s", inv.code, inv.stderr)
	}
	if rep := intoReportOf(t, db, run); rep.Run.Scoring != 3 || len(rep.Targets) != 3 || rep.Targets[2].Primary.N != 12 {
		t.Errorf("scoring %d after a rescore: targets %+v", rep.Run.Scoring, rep.Targets)
	}

	// The same name again is refused.
	inv = runCLI(t, cliEnv{}, "import", answers, "--key", key, "--as", "vendor-x", "--into", run, "--db", db)
	want := "import: cannot add the target to run " + run + ": it already has a target vendor-x: store the answers under another --as; nothing was stored"
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, want) {
		t.Errorf("a second import as vendor-x: exit %d\n%s\nwant %q", inv.code, inv.stderr, want)
	}
	// Under another name it is a fourth target; the text summary says
	// beside whom, in which scorings, and the coverage.
	inv = runCLI(t, cliEnv{}, "import", answers, "--key", key, "--as", "vendor-y", "--into", run, "--db", db)
	for _, want := range []string{
		run + ": 12 answer(s) of " + answers + " added as target vendor-y beside model-a, model-b, vendor-x, scored in scoring(s) 1, 2, 3\n",
		"the answers cover 12 of the run's 30 cases: comparisons with vendor-y pair those 12\n",
	} {
		if inv.code != 0 || !strings.Contains(inv.stdout, want) {
			t.Errorf("import --into as vendor-y: exit %d\n%s%s\nwant %q", inv.code, inv.stdout, inv.stderr, want)
		}
	}
}

// What import --into refuses, storing nothing: a run of another dataset
// version, prompt or scorers, a target name the run has, a run that is not
// complete, a run a live writer holds.
func TestBlindImportIntoRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := intoSpec(t, dir, 8)
	db := filepath.Join(dir, "assay.db")
	ctx := context.Background()

	// Runs made before the dataset, the prompt, the scorers and the
	// targets changed; the sample is of the spec as it is at the end.
	data := filepath.Join(dir, "cases.jsonl")
	oldData := readFileT(t, data)
	writeFile(t, data, oldData+`{"id":"CASE-new","question":"Another?","answer":"x"}`+"\n")
	otherData := intoRun(t, spec, db)
	writeFile(t, data, oldData)
	writeFile(t, spec, intoSpecYAML("Q: {{.question}}", "correct"))
	otherPrompt := intoRun(t, spec, db)
	writeFile(t, spec, intoSpecYAML("Question: {{.question}}", "right"))
	otherScorers := intoRun(t, spec, db)
	writeFile(t, spec, intoSpecYAML("Question: {{.question}}", "correct"))
	good := intoRun(t, spec, db)
	answers, key := blindSample(t, dir, spec, 5)

	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	interrupted := intoRun(t, spec, db)
	r, err := st.GetRun(ctx, interrupted)
	if err != nil {
		t.Fatal(err)
	}
	r.Status = record.StatusInterrupted
	if err := st.UpdateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	otherSpec := filepath.Join(dir, "other.yaml")
	writeFile(t, otherSpec, strings.Replace(intoSpecYAML("Question: {{.question}}", "correct"), "name: into-test", "name: other-spec", 1))
	otherName := intoRun(t, otherSpec, db)
	held := intoRun(t, spec, db)
	host, _ := os.Hostname()
	now := time.Now()
	if err := st.AcquireLease(ctx, store.Lease{RunID: held, Holder: "test", PID: os.Getpid(), Host: host, Acquired: now, Heartbeat: now}, now.Add(-time.Minute), false); err != nil {
		t.Fatal(err)
	}
	st.Close()

	refused := "import: cannot add the target to run "
	cases := []struct {
		run, as string
		code    int
		want    string
	}{
		{otherData, "vendor", ExitInvalid, refused + otherData + ": it measured another version of the dataset (dataset "},
		{otherPrompt, "vendor", ExitInvalid, refused + otherPrompt + ": it was made with another prompt (prompt hash "},
		{otherScorers, "vendor", ExitInvalid, refused + otherScorers + ": its latest scoring (1) was made with other scorers (scorers hash "},
		{interrupted, "vendor", ExitInvalid, refused + interrupted + ": it is interrupted, not complete: finish it first (assay run --resume " + interrupted + "); nothing was stored"},
		{otherName, "vendor", ExitInvalid, refused + otherName + `: it is a run of spec "other-spec", not of "into-test" (` + spec + "); nothing was stored"},
		{"nosuchrun", "vendor", ExitErr, `import --into nosuchrun: run "nosuchrun": not found`},
		{held, "vendor", ExitErr, "import: adding a target to " + held + ": run " + held + " is being written by another process (pid " + fmt.Sprint(os.Getpid())},
	}
	for _, c := range cases {
		inv := runCLI(t, cliEnv{}, "import", answers, "--key", key, "--as", c.as, "--into", c.run, "--db", db)
		if inv.code != c.code || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("--into %s: exit %d\n%s\nwant exit %d with %q", c.run, inv.code, inv.stderr, c.code, c.want)
		}
	}
	// No store: none is made.
	nodb := filepath.Join(dir, "none.db")
	inv := runCLI(t, cliEnv{}, "import", answers, "--key", key, "--as", "vendor", "--into", "latest", "--db", nodb)
	if _, err := os.Stat(nodb); inv.code == 0 || !os.IsNotExist(err) {
		t.Errorf("--into with no store: exit %d, %v\n%s", inv.code, err, inv.stderr)
	}
	// A target the run has that the spec no longer does.
	writeFile(t, spec, strings.Replace(intoSpecYAML("Question: {{.question}}", "correct"),
		"  - {name: model-b, provider: replay, replay: {path: recorded.jsonl, join: question, output: b}}\n", "", 1))
	inv = runCLI(t, cliEnv{}, "import", answers, "--key", key, "--as", "model-b", "--into", good, "--db", db)
	want := refused + good + ": it already has a target model-b: store the answers under another --as; nothing was stored"
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, want) {
		t.Errorf("--as model-b: exit %d\n%s\nwant %q", inv.code, inv.stderr, want)
	}

	// Every refused run still has its two targets and no third.
	st, err = sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{otherData, otherPrompt, otherScorers, otherName, interrupted, held, good} {
		r, err := st.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		st.Results(ctx, id, func(r record.Result) error {
			n++
			return nil
		})
		if len(r.Targets) != 2 || n != 2*r.Cases {
			t.Errorf("refused run %s now has targets %q and %d results", id, r.Targets, n)
		}
	}
}
