package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

type scorerTally struct {
	pass, judgeErr, tie, n int
	judgeCost              float64
}

func tallyScores(t *testing.T, db, runID string, scoring int) map[string]map[string]*scorerTally {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[string]map[string]*scorerTally{}
	err = st.Scores(ctx, runID, scoring, func(s record.Score) error {
		if out[s.Scorer] == nil {
			out[s.Scorer] = map[string]*scorerTally{}
		}
		tl := out[s.Scorer][s.Target]
		if tl == nil {
			tl = &scorerTally{}
			out[s.Scorer][s.Target] = tl
		}
		tl.n++
		if s.Pass {
			tl.pass++
		}
		switch s.Kind {
		case "judge_error":
			tl.judgeErr++
			if s.Shape != "loud" || s.Pass {
				t.Errorf("judge_error scored %s pass=%v; it must be a loud failure", s.Shape, s.Pass)
			}
		case "tie":
			tl.tie++
		}
		tl.judgeCost += s.JudgeCost
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A judge from the spec grades through the same runner as a candidate: its
// unusable verdicts are loud judge_errors that stay in the denominator, its
// cost is kept apart from the candidate's, pairwise verdicts are judged in
// both orders, and a rescore calls no candidate and (through the cache) no
// judge again.
func TestJudgeRunAndRescore(t *testing.T) {
	t.Parallel()
	// Two candidates with different outputs, so no judge prompt repeats
	// (identical prompts would rightly be served from the cache).
	cand, candURL := startMock(t, mock.Options{})
	baseSrv, baseURL := startMock(t, mock.Options{Default: "nope"})
	judge, judgeURL := startMock(t, mock.Options{Rules: []mock.Rule{
		{Match: "word-7", Reply: "Looks fine to me."}, // prose: not a verdict
		{Match: "RUBRIC-SINGLE", Reply: `{"verdict": "pass", "reason": "says the word"}`},
		{Match: "RUBRIC-PAIR", Reply: `{"winner": "tie", "reason": "identical"}`},
	}})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, 10, fmt.Sprintf(`  - {name: oa, provider: openai, model: m1, base_url: %s/v1}
  - {name: base, provider: openai, model: m2, base_url: %s/v1}
  - {name: grader, provider: openai, model: judge-1, base_url: %s/v1, price: {input_per_mtok: 1000, output_per_mtok: 1000}}`, candURL, baseURL, judgeURL))
	b := readFileT(t, path)
	b = b[:len(b)-len("run: {timeout: 5s, retries: 8}\n")] + `  - {name: quality, type: judge, target: grader, rubric: "RUBRIC-SINGLE: the output is the requested word"}
  - {name: vs_base, type: judge, mode: pairwise, target: grader, baseline: base, rubric: "RUBRIC-PAIR: which output is the requested word"}
run: {timeout: 5s, retries: 2}
`
	writeFile(t, path, b)

	s := runJSON(t, cliEnv{}, "run", path, "--db", db, "--targets", "oa,base")
	if s.Status != "complete" || s.Stored != 20 {
		t.Fatalf("run: %+v", s)
	}
	if s.SpendUSD != 0 {
		t.Errorf("candidate spend %v: the judge's cost was charged to the candidates", s.SpendUSD)
	}
	got := tallyScores(t, db, s.RunID, 1)
	for _, tg := range []string{"oa", "base"} {
		q := got["quality"][tg]
		if q == nil || q.n != 10 || q.pass != 9 || q.judgeErr != 1 || q.judgeCost <= 0 {
			t.Errorf("quality/%s = %+v; want 10 scored, 9 pass, 1 judge_error, a judge cost", tg, q)
		}
	}
	if p := got["vs_base"]["oa"]; p == nil || p.n != 10 || p.tie != 9 || p.judgeErr != 1 || p.pass != 0 {
		t.Errorf("vs_base/oa = %+v; want 9 ties and 1 judge_error, no pass", p)
	}
	if got["vs_base"]["base"] != nil {
		t.Errorf("the baseline got a pairwise score against itself")
	}
	judgeCalls := judge.Stats().Requests
	// 20 single verdicts, plus two orders for each of the 9 usable pairs and
	// at least one call for case 7.
	if judgeCalls < 20+18+1 || judgeCalls > 20+20 {
		t.Errorf("%d judge calls, want 39 or 40", judgeCalls)
	}

	inv := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "json")
	var rep struct {
		Targets []struct {
			Name         string
			JudgeCostUSD float64                 `json:"judge_cost_usd"`
			CostUSD      struct{ Total float64 } `json:"cost_usd"`
			Pairwise     []struct {
				Scorer, Baseline                 string
				Wins, Ties, Losses, Undecided, N int
				WinRate                          float64 `json:"win_rate"`
			} `json:"pairwise"`
		}
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err, inv.stderr)
	}
	for _, tg := range rep.Targets {
		if tg.JudgeCostUSD <= 0 || tg.CostUSD.Total != 0 {
			t.Errorf("%s: judge cost %v, own cost %v; want judge cost apart and own cost 0", tg.Name, tg.JudgeCostUSD, tg.CostUSD.Total)
		}
		// The pairwise judge in the report: 9 ties (not failures, not
		// losses) and the judge error undecided, on oa only.
		switch {
		case tg.Name == "oa" && (len(tg.Pairwise) != 1 || tg.Pairwise[0].Scorer != "vs_base" || tg.Pairwise[0].Baseline != "base" ||
			tg.Pairwise[0].Ties != 9 || tg.Pairwise[0].Wins != 0 || tg.Pairwise[0].Losses != 0 || tg.Pairwise[0].Undecided != 1 || tg.Pairwise[0].N != 9):
			t.Errorf("oa's pairwise findings %+v; want vs_base against base: 9 ties, 0 wins, 0 losses, 1 undecided", tg.Pairwise)
		case tg.Name == "base" && len(tg.Pairwise) != 0:
			t.Errorf("the baseline has pairwise findings against itself: %+v", tg.Pairwise)
		}
	}

	candCalls := cand.Stats().Requests + baseSrv.Stats().Requests
	inv = runCLI(t, cliEnv{}, "rescore", "latest", "--db", db, "--json")
	if inv.code != 0 {
		t.Fatalf("rescore exit %d: %s", inv.code, inv.stderr)
	}
	var rs rescoreSummary
	if err := json.Unmarshal([]byte(inv.stdout), &rs); err != nil {
		t.Fatal(err)
	}
	if rs.Scoring != 2 || rs.Results != 20 {
		t.Errorf("rescore: %+v, want scoring 2 of 20 results", rs)
	}
	if n := cand.Stats().Requests + baseSrv.Stats().Requests; n != candCalls {
		t.Errorf("rescore called the candidates %d times", n-candCalls)
	}
	if n := judge.Stats().Requests; n != judgeCalls {
		t.Errorf("rescore called the judge %d more times; its verdicts were cached", n-judgeCalls)
	}
	again := tallyScores(t, db, s.RunID, 2)
	for name, byTarget := range got {
		for tg, v := range byTarget {
			w := again[name][tg]
			if w == nil || w.pass != v.pass || w.n != v.n || w.judgeErr != v.judgeErr || w.tie != v.tie {
				t.Errorf("%s/%s: scoring 1 %+v, scoring 2 %+v", name, tg, v, w)
			}
		}
	}
}

// rescore applies the current spec's scorers as a new scoring; reports use
// the latest scoring unless told otherwise.
func TestRescoreAppliesChangedScorers(t *testing.T) {
	t.Parallel()
	srv, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, 30, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1}`, url))
	s := runJSON(t, cliEnv{}, "run", path, "--db", db)
	calls := srv.Stats().Requests
	// Now every output starting with "word" passes.
	b := readFileT(t, path)
	writeFile(t, path, b[:len(b)-len("run: {timeout: 5s, retries: 8}\n")]+"  - {name: prefix, type: regex, pattern: '^word-', primary: true}\nrun: {timeout: 5s, retries: 8}\n")
	inv := runCLI(t, cliEnv{}, "rescore", s.RunID, "--db", db)
	if inv.code != 0 {
		t.Fatalf("rescore: %s", inv.stderr)
	}
	if srv.Stats().Requests != calls {
		t.Error("rescore called the candidate")
	}
	primary := func(args ...string) (string, int) {
		inv := runCLI(t, cliEnv{}, append([]string{"report", s.RunID, "--db", db, "--format", "json"}, args...)...)
		var rep struct {
			Targets []struct {
				Primary struct {
					Scorer string
					Passed int
				}
			}
		}
		if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil || len(rep.Targets) != 1 {
			t.Fatalf("report: %v %s", err, inv.stderr)
		}
		return rep.Targets[0].Primary.Scorer, rep.Targets[0].Primary.Passed
	}
	if name, n := primary(); name != "prefix" || n != 30 {
		t.Errorf("latest scoring: primary %s passed %d, want prefix 30", name, n)
	}
	if name, n := primary("--scoring", "1"); name != "correct" || n != 20 {
		t.Errorf("scoring 1: primary %s passed %d, want correct 20", name, n)
	}
}
