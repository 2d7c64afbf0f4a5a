package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// atomicReport is what these tests read of `assay report --format json`.
type atomicReport struct {
	Run struct {
		Scoring int `json:"scoring"`
	} `json:"run"`
	Targets []struct {
		Primary struct {
			Passed int `json:"passed"`
			N      int `json:"n"`
		} `json:"primary"`
		Slices map[string]map[string]struct {
			N int `json:"n"`
		} `json:"slices"`
	} `json:"targets"`
}

func readAtomicReport(t *testing.T, e cliEnv, args ...string) atomicReport {
	t.Helper()
	inv := runCLI(t, e, append([]string{"report", "--format", "json"}, args...)...)
	var rep atomicReport
	if inv.code != 0 || json.Unmarshal([]byte(inv.stdout), &rep) != nil || len(rep.Targets) != 1 {
		t.Fatalf("report %v: exit %d, %s", args, inv.code, inv.stderr)
	}
	return rep
}

// A rescore killed after writing part of its scores (1,024 of 6,000 in the
// report that found it) leaves a pending scoring: report, gate and baseline
// export keep reading the previous complete scoring, and the next rescore
// takes a new number.
func TestKilledRescoreIsNeverRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := echoTask(t, dir, 30, `  - {name: e, provider: exec, command: ["sh", "-c", "cat >/dev/null; echo '{\"output\":\"ok\"}'"]}`)
	db := filepath.Join(dir, "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}
	run := runJSON(t, e, "run", spec)
	// The rescore adds a primary scorer every output passes.
	b := readFileT(t, spec)
	writeFile(t, spec, strings.Replace(b, "run: {", "  - {name: any, type: regex, pattern: '.', primary: true}\nrun: {", 1))
	if inv := runCLI(t, e, "rescore", run.RunID); inv.code != 0 {
		t.Fatalf("rescore: %s", inv.stderr)
	}
	before := readAtomicReport(t, e, run.RunID)
	if before.Run.Scoring != 2 {
		t.Fatalf("report after one rescore reads scoring %d, want 2", before.Run.Scoring)
	}
	exportBefore := runCLI(t, e, "baseline", "export", run.RunID)
	if exportBefore.code != 0 {
		t.Fatalf("baseline export: %s", exportBefore.stderr)
	}

	// What a SIGKILL mid-rescore leaves: scoring 3 reserved, 10 of 30
	// results scored (all failing), never completed.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.ReserveScoring(ctx, run.RunID)
	if err != nil || n != 3 {
		t.Fatalf("ReserveScoring = %d, %v; want 3", n, err)
	}
	var partial []record.Score
	err = st.Results(ctx, run.RunID, func(r record.Result) error {
		if len(partial) < 10 {
			partial = append(partial, record.Score{RunID: r.RunID, Scoring: 3, CaseID: r.CaseID, Target: r.Target, Epoch: r.Epoch,
				Scorer: "any", Primary: true, Shape: "loud", Kind: "wrong"})
		}
		return nil
	})
	if err == nil {
		err = st.PutScores(ctx, partial)
	}
	st.Close()
	if err != nil {
		t.Fatal(err)
	}

	after := readAtomicReport(t, e, run.RunID)
	if after.Run.Scoring != 2 || after.Targets[0].Primary != before.Targets[0].Primary {
		t.Errorf("report with a partial scoring 3: scoring %d, primary %+v; want scoring 2, %+v", after.Run.Scoring, after.Targets[0].Primary, before.Targets[0].Primary)
	}
	if exp := runCLI(t, e, "baseline", "export", run.RunID); exp.code != 0 || exp.stdout != exportBefore.stdout {
		t.Errorf("baseline export changed after a partial scoring (exit %d, %s)", exp.code, exp.stderr)
	}
	// Scoring 2 passes every case; the partial
	// scoring 3 fails the ten it reached.
	if p := before.Targets[0].Primary; p.Passed != p.N || p.N != 30 {
		t.Fatalf("scoring 2: %+v, want 30 of 30 passed", p)
	}
	if inv := runCLI(t, e, "gate", run.RunID, "--baseline", run.RunID, "--rule", "primary min=100%"); inv.code != 0 {
		t.Errorf("gate of a run against itself with a partial scoring: exit %d, %s%s", inv.code, inv.stdout, inv.stderr)
	}
	if inv := runCLI(t, e, "report", run.RunID, "--scoring", "3"); inv.code != ExitErr || !strings.Contains(inv.stderr, "scoring 3") || !strings.Contains(inv.stderr, "incomplete") {
		t.Errorf("report --scoring 3 (pending): exit %d, %q; want exit 1 saying it is incomplete", inv.code, inv.stderr)
	}

	// The next rescore does not reuse 3, and is read once complete.
	inv := runCLI(t, e, "rescore", run.RunID, "--json")
	var sum rescoreSummary
	if inv.code != 0 || json.Unmarshal([]byte(inv.stdout), &sum) != nil || sum.Scoring != 4 {
		t.Fatalf("rescore after a killed one: exit %d, %s %s; want scoring 4", inv.code, inv.stdout, inv.stderr)
	}
	if rep := readAtomicReport(t, e, run.RunID); rep.Run.Scoring != 4 {
		t.Errorf("report after rescore 4 reads scoring %d", rep.Run.Scoring)
	}
}

// Two rescores of one run at once both used to claim scoring 3, and one was
// lost; each now reserves its own number and completes it.
func TestConcurrentRescoresGetDistinctScorings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := echoTask(t, dir, 40, `  - {name: e, provider: exec, command: ["cat"]}`)
	db := filepath.Join(dir, "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}
	run := runJSON(t, e, "run", spec)

	const n = 3
	got := make([]rescoreSummary, n)
	invs := make([]invocation, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			invs[i] = runCLI(t, e, "rescore", run.RunID, "--json")
			_ = json.Unmarshal([]byte(invs[i].stdout), &got[i])
		}()
	}
	wg.Wait()
	var nums []int
	for i, inv := range invs {
		if inv.code != 0 {
			t.Fatalf("rescore %d: exit %d, %s", i, inv.code, inv.stderr)
		}
		nums = append(nums, got[i].Scoring)
	}
	slices.Sort(nums)
	if !slices.Equal(nums, []int{2, 3, 4}) {
		t.Fatalf("concurrent rescores got scorings %v, want distinct 2, 3, 4", nums)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, sc := range nums {
		if p, err := st.ScoringPending(ctx, run.RunID, sc); err != nil || p {
			t.Errorf("scoring %d pending = %v, %v; want complete", sc, p, err)
		}
		count := 0
		if err := st.Scores(ctx, run.RunID, sc, func(record.Score) error { count++; return nil }); err != nil || count != 40 {
			t.Errorf("scoring %d has %d scores (%v), want 40", sc, count, err)
		}
	}
	if rep := readAtomicReport(t, e, run.RunID); rep.Run.Scoring != 4 {
		t.Errorf("report reads scoring %d, want 4", rep.Run.Scoring)
	}
}

// A run killed while it was recording its cases kept results whose case
// rows were never stored (176,000 of 200,000 in the report that found it),
// and a resume did not record them: slices covered 12% of the cases with no
// warning. Report, gate and baseline export now refuse such a run, and a
// resume records the cases, after which the slices add up to the run.
func TestResumeRecordsMissingCases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const cases = 30
	var b strings.Builder
	for i := 1; i <= cases; i++ {
		fmt.Fprintf(&b, `{"id":"c%d","say":"word-%d","expected":"word-%d","tier":"t%d"}`+"\n", i, i, i, i%3)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), b.String())
	spec := filepath.Join(dir, "assay.yaml")
	writeFile(t, spec, `name: tiers
dataset: {path: cases.jsonl, id: id, expected: expected, tags: {tier: tier}}
prompt: {user: "{{.say}}"}
targets:
  - {name: e, provider: exec, command: ["cat"]}
scorers:
  - {name: correct, type: equals, normalize: [trim]}
run: {timeout: 5s}
`)
	db := filepath.Join(dir, "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}
	run := runJSON(t, e, "run", spec)

	// What the kill left: 4 case rows stored, 25 results, the run interrupted.
	h, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DELETE FROM cases WHERE case_id NOT IN ('c1', 'c2', 'c3', 'c4')`,
		`DELETE FROM results WHERE case_id IN ('c26', 'c27', 'c28', 'c29', 'c30')`,
		`UPDATE runs SET status = 'interrupted'`,
	} {
		if _, err := h.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	h.Close()

	for _, args := range [][]string{
		{"report", run.RunID},
		{"baseline", "export", run.RunID, "--allow-incomplete"},
		{"gate", run.RunID, "--baseline", run.RunID, "--allow-incomplete", "--rule", "primary max_drop=5%"},
		// Every command that reads runs resolves them the same way.
		{"compare", run.RunID, run.RunID},
		{"diff", run.RunID, run.RunID},
		{"drift", run.RunID, run.RunID},
		{"plan", run.RunID},
	} {
		inv := runCLI(t, e, args...)
		if inv.code != ExitErr || !strings.Contains(inv.stderr, "21 results whose cases were never recorded") || !strings.Contains(inv.stderr, "--resume "+run.RunID) {
			t.Errorf("%s of a run with results lacking cases: exit %d, %q; want exit 1 naming the 21 results and --resume", args[0], inv.code, inv.stderr)
		}
	}

	res := runJSON(t, e, "run", spec, "--resume", run.RunID)
	if res.Status != "complete" {
		t.Fatalf("resume: %+v", res)
	}
	rep := readAtomicReport(t, e, run.RunID)
	total := 0
	for _, r := range rep.Targets[0].Slices["tier"] {
		total += r.N
	}
	if total != cases || rep.Targets[0].Primary.N != cases {
		t.Errorf("after resume: tier slices cover %d cases, primary %d; want %d each (%+v)", total, rep.Targets[0].Primary.N, cases, rep.Targets[0].Slices)
	}
}

// kill -9 in the middle of a real rescore (a slow judge, so the kill lands
// after the first batch of scores is committed): the partial scoring stays
// pending and the report keeps reading scoring 1.
func TestKill9MidRescore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := assayBinary(t)
	_, candURL := startMock(t, mock.Options{})
	_, judgeURL := startMock(t, mock.Options{Latency: 20 * time.Millisecond, Rules: []mock.Rule{
		{Match: "RUBRIC", Reply: `{"verdict": "fail", "reason": "no"}`},
	}})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	const cases = 1500
	path := echoTask(t, dir, cases, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, limits: {concurrency: 16}}
  - {name: grader, provider: openai, model: judge-1, base_url: %s/v1, limits: {concurrency: 8}}`, candURL, judgeURL))
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}
	run := runJSON(t, e, "run", path, "--targets", "oa", "--no-cache")
	if run.Status != "complete" {
		t.Fatalf("run: %+v", run)
	}
	before := readAtomicReport(t, e, run.RunID)

	b := readFileT(t, path)
	writeFile(t, path, strings.Replace(b, "run: {", "  - {name: quality, type: judge, target: grader, rubric: \"RUBRIC: the word\", primary: true}\nrun: {", 1))
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "rescore", run.RunID, "--db", db, "--no-cache", "--workers", "8")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	scored := func() int {
		h, err := sql.Open("sqlite", "file:"+db+"?mode=ro&_pragma=busy_timeout(2000)")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		var n int
		_ = h.QueryRow(`SELECT count(*) FROM scores WHERE scoring = 2`).Scan(&n)
		return n
	}
	deadline := time.Now().Add(60 * time.Second)
	for scored() == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the rescore stored nothing: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if n := scored(); n >= 2*cases {
		t.Fatalf("the rescore finished before the kill (%d scores)", n)
	}

	after := readAtomicReport(t, e, run.RunID)
	if after.Run.Scoring != 1 || after.Targets[0].Primary != before.Targets[0].Primary {
		t.Errorf("report after a killed rescore: scoring %d, primary %+v; want scoring 1, %+v", after.Run.Scoring, after.Targets[0].Primary, before.Targets[0].Primary)
	}
	if inv := runCLI(t, e, "report", run.RunID, "--scoring", "2"); inv.code != ExitErr || !strings.Contains(inv.stderr, "incomplete") {
		t.Errorf("report --scoring 2 after the kill: exit %d, %q; want exit 1 (incomplete)", inv.code, inv.stderr)
	}
}
