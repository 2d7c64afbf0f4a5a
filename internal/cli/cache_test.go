package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/store/sqlite"
	"github.com/assay-eval/assay/internal/store/storetest"
)

// judgedTask writes an echo task (see echoTask) with two priced candidates
// and a judge scorer graded by a third target, grader, which no candidate
// list names: a judge only.
//
// The candidates' mock echoes model m1's prompt and answers "nope" to m2,
// so no two judge prompts are the same (the judge is not told which
// target wrote the output, and identical prompts are rightly served from
// the cache).
func judgedTask(t *testing.T, dir, candURL, judgeURL string, extra string) string {
	t.Helper()
	path := echoTask(t, dir, 6, fmt.Sprintf(`  - {name: oa, provider: openai, model: m1, base_url: %s/v1, price: {input_per_mtok: 1000, output_per_mtok: 1000}}
  - {name: ob, provider: openai, model: m2, base_url: %s/v1, price: {input_per_mtok: 2000, output_per_mtok: 2000}}
  - {name: grader, provider: openai, model: judge-1, base_url: %s/v1, price: {input_per_mtok: 1000, output_per_mtok: 1000}}`, candURL, candURL, judgeURL))
	b := readFileT(t, path)
	b = strings.Replace(b, "run: {timeout: 5s, retries: 8}\n", `  - {name: quality, type: judge, target: grader, rubric: "RUBRIC-Q: the output is the requested word"}
run: {timeout: 5s, retries: 1}
`+extra, 1)
	writeFile(t, path, b)
	return path
}

// candidates is the candidates' mock: m1 echoes, m2 says nope.
var candidates = mock.Options{Rules: []mock.Rule{{Model: "m2", Match: "", Reply: "nope"}}}

type reportTargets struct {
	Targets []struct {
		Name          string
		JudgeCostUSD  float64 `json:"judge_cost_usd"`
		JudgeSavedUSD float64 `json:"judge_saved_usd"`
		CostUSD       struct {
			Total    float64
			SavedUSD float64 `json:"saved_usd"`
			PerCase  float64 `json:"per_case"`
		} `json:"cost_usd"`
		Scorers map[string]struct{ Passed, N int }
		Judges  []struct {
			Scorer   string
			CostUSD  float64 `json:"cost_usd"`
			SavedUSD float64 `json:"saved_usd"`
		}
	}
	Comparisons []struct{ A, B string }
	Ranking     []struct{ Targets []string }
	Pareto      []string
}

func judgeReportJSON(t *testing.T, db, run string, args ...string) reportTargets {
	t.Helper()
	inv := runCLI(t, cliEnv{}, append([]string{"report", run, "--db", db, "--format", "json"}, args...)...)
	var rep reportTargets
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatalf("report: exit %d: %v\n%s", inv.code, err, inv.stderr)
	}
	return rep
}

// A target that is only a judge grades the candidates and is none of them:
// a run without --targets calls the candidates alone, its summary names the
// judge apart, and the report's targets, comparisons, ranking and frontier
// hold the candidates only. candidates: lists a judge explicitly, and
// --targets may name one.
func TestJudgeTargetIsNotACandidate(t *testing.T) {
	t.Parallel()
	_, candURL := startMock(t, candidates)
	judge, judgeURL := startMock(t, mock.Options{Rules: []mock.Rule{
		{Match: "RUBRIC-Q", Reply: `{"verdict": "pass", "reason": "fine"}`},
	}})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := judgedTask(t, dir, candURL, judgeURL, "")

	s := runJSON(t, cliEnv{}, "run", path, "--db", db)
	if !slices.Equal(s.Targets, []string{"oa", "ob"}) || !slices.Equal(s.Judges, []string{"grader"}) {
		t.Fatalf("run --json: targets %q, judges %q; want the candidates oa, ob and the judge grader apart", s.Targets, s.Judges)
	}
	if s.Total != 12 || s.Stored != 12 {
		t.Errorf("run stored %d of %d results; want 6 cases × 2 candidates", s.Stored, s.Total)
	}
	if n := judge.Stats().Requests; n != 12 {
		t.Errorf("the judge got %d requests; want 12 verdicts (it is not called as a candidate)", n)
	}
	rep := judgeReportJSON(t, db, s.RunID)
	var names []string
	for _, tg := range rep.Targets {
		names = append(names, tg.Name)
	}
	if !slices.Equal(names, []string{"oa", "ob"}) {
		t.Errorf("report targets %q; want oa, ob", names)
	}
	for _, c := range rep.Comparisons {
		if c.A == "grader" || c.B == "grader" {
			t.Errorf("report compares the judge: %+v", c)
		}
	}
	for _, g := range rep.Ranking {
		if slices.Contains(g.Targets, "grader") {
			t.Errorf("report ranks the judge: %+v", rep.Ranking)
		}
	}
	if slices.Contains(rep.Pareto, "grader") || len(rep.Pareto) == 0 {
		t.Errorf("Pareto frontier %q; want candidates only", rep.Pareto)
	}
	text := runCLI(t, cliEnv{}, "report", s.RunID, "--db", db)
	for _, line := range strings.Split(text.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "grader" {
			t.Errorf("the text report has a row for the judge: %q", line)
		}
	}
	inv := runCLI(t, cliEnv{}, "run", path, "--db", db, "--limit", "1")
	if inv.code != 0 || !strings.Contains(inv.stderr, "candidates: oa, ob") || !regexp.MustCompile(`judges[^\n]*: grader`).MatchString(inv.stderr) {
		t.Errorf("run's text summary does not name the candidates and the judge apart (exit %d):\n%s", inv.code, inv.stderr)
	}

	if v := runCLI(t, cliEnv{}, "validate", path); !strings.Contains(v.stdout, "candidates oa, ob; judges grader") {
		t.Errorf("validate does not name the candidates and the judge apart:\n%s", v.stdout)
	}

	// --targets naming the judge is asking for it.
	s = runJSON(t, cliEnv{}, "run", path, "--db", db, "--targets", "grader", "--limit", "2")
	if !slices.Equal(s.Targets, []string{"grader"}) || s.Stored != 2 {
		t.Errorf("--targets grader: targets %q, stored %d; want the judge run as asked", s.Targets, s.Stored)
	}

	// candidates: makes the judge a candidate too.
	withList := judgedTask(t, t.TempDir(), candURL, judgeURL, "candidates: [oa, grader]\n")
	s = runJSON(t, cliEnv{}, "run", withList, "--db", db, "--limit", "2")
	if !slices.Equal(s.Targets, []string{"oa", "grader"}) || len(s.Judges) != 0 {
		t.Errorf("candidates: [oa, grader]: targets %q, judges %q; want oa and grader as candidates", s.Targets, s.Judges)
	}
}

// A candidates: entry that names no target is a spec problem located at
// its line and column, with the nearest name.
func TestCandidatesListIsValidated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := judgedTask(t, dir, "http://127.0.0.1:9", "http://127.0.0.1:9", "candidates: [oa, gradr, oa]\n")
	inv := runCLI(t, cliEnv{}, "validate", path)
	if inv.code != ExitInvalid {
		t.Fatalf("validate: exit %d, want %d\n%s", inv.code, ExitInvalid, inv.stderr)
	}
	line := strings.Count(readFileT(t, path)[:strings.Index(readFileT(t, path), "candidates:")], "\n") + 1
	for _, want := range []string{
		fmt.Sprintf("assay.yaml:%d:", line),
		`no target named "gradr"`,
		`did you mean "grader"?`,
		`"oa" is listed twice`,
	} {
		if !strings.Contains(inv.stderr, want) {
			t.Errorf("validate output lacks %q:\n%s", want, inv.stderr)
		}
	}
	// A spec whose every target is a judge has no candidate to run.
	only := filepath.Join(t.TempDir(), "assay.yaml")
	single := `name: s
dataset: {path: cases.jsonl, id: id, expected: expected}
prompt: {user: "{{.say}}"}
targets:
  - {name: grader, provider: openai, model: judge-1, base_url: "http://127.0.0.1:9/v1"}
scorers:
  - {name: quality, type: judge, target: grader, rubric: "r"}
`
	writeFile(t, only, single)
	writeFile(t, filepath.Join(filepath.Dir(only), "cases.jsonl"), `{"id":"c1","say":"x","expected":"x"}`+"\n")
	inv = runCLI(t, cliEnv{}, "validate", only)
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, "every target is a judge") || !strings.Contains(inv.stderr, "candidates:") {
		t.Errorf("a spec with only a judge: exit %d\n%s", inv.code, inv.stderr)
	}
}

// The cache is honest: a cached judge verdict is never billed again (its
// cost is 0, its price reported as saved); --no-cache calls the judge anew
// and stores the fresh verdicts over the stale ones, so a later plain
// rescore agrees with the refreshed one; a judge that mostly fails is loud.
func TestRescoreNoCacheRefreshesJudgeVerdicts(t *testing.T) {
	// Not parallel: the judge is restarted on the port it had, which a
	// parallel test's server could take in between.
	_, candURL := startMock(t, candidates)
	passing, judgeURL := startMock(t, mock.Options{Rules: []mock.Rule{
		{Match: "RUBRIC-Q", Reply: `{"verdict": "pass", "reason": "fine"}`},
	}})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := judgedTask(t, dir, candURL, judgeURL, "")
	s := runJSON(t, cliEnv{}, "run", path, "--db", db)
	if s.Stored != 12 || s.SpendUSD <= 0 || s.SavedUSD != 0 {
		t.Fatalf("first run: %+v; want 12 results paid, nothing saved", s)
	}
	first := judgeReportJSON(t, db, s.RunID)

	// The judge now fails every output, on the same address (the cache key
	// holds the base URL, so only the answers changed).
	u, err := url.Parse(judgeURL)
	if err != nil {
		t.Fatal(err)
	}
	passing.Close()
	failing := mock.New(mock.Options{Addr: u.Host, Rules: []mock.Rule{
		{Match: "RUBRIC-Q", Reply: `{"verdict": "fail", "reason": "changed my mind"}`},
	}})
	if _, err := failing.Start(); err != nil {
		t.Fatalf("restarting the judge on %s: %v", u.Host, err)
	}
	t.Cleanup(failing.Close)

	rescore := func(args ...string) (rescoreSummary, string) {
		t.Helper()
		inv := runCLI(t, cliEnv{}, append([]string{"rescore", s.RunID, "--db", db, "--json"}, args...)...)
		var rs rescoreSummary
		if err := json.Unmarshal([]byte(inv.stdout), &rs); err != nil || inv.code != 0 {
			t.Fatalf("rescore %v: exit %d, %v\n%s", args, inv.code, err, inv.stderr)
		}
		return rs, inv.stderr
	}
	// A plain rescore is served from the cache: the old verdicts, $0.
	rs, _ := rescore()
	if q := rs.Scorers["quality"]; q.Passed != 12 || rs.JudgeCostUSD != 0 || rs.JudgeSavedUSD <= 0 || failing.Stats().Requests != 0 {
		t.Errorf("cached rescore: quality %+v, judge cost %v saved %v, %d judge calls; want the cached passes at $0 with their price saved and no call",
			q, rs.JudgeCostUSD, rs.JudgeSavedUSD, failing.Stats().Requests)
	}
	saved := rs.JudgeSavedUSD
	// --no-cache asks the judge again and stores what it says now.
	rs, _ = rescore("--no-cache")
	if q := rs.Scorers["quality"]; q.Passed != 0 || q.N != 12 || rs.JudgeCostUSD <= 0 || rs.JudgeSavedUSD != 0 || failing.Stats().Requests != 12 {
		t.Errorf("rescore --no-cache: quality %+v, judge cost %v saved %v, %d judge calls; want 12 fresh fails, paid",
			q, rs.JudgeCostUSD, rs.JudgeSavedUSD, failing.Stats().Requests)
	}
	paid := rs.JudgeCostUSD
	// A later plain rescore agrees with the refreshed verdicts, for free.
	rs, _ = rescore()
	if q := rs.Scorers["quality"]; q.Passed != 0 || q.N != 12 || rs.JudgeCostUSD != 0 || failing.Stats().Requests != 12 {
		t.Errorf("rescore after the refresh: quality %+v, judge cost %v, %d judge calls; want the refreshed fails from the cache at $0",
			q, rs.JudgeCostUSD, failing.Stats().Requests)
	}
	if math.Abs(rs.JudgeSavedUSD-paid) > 1e-12 || saved <= 0 {
		t.Errorf("saved %v after paying %v for the same verdicts; want the avoided cost equal to what they cost", rs.JudgeSavedUSD, paid)
	}
	rep := judgeReportJSON(t, db, s.RunID)
	for _, tg := range rep.Targets {
		if tg.JudgeCostUSD != 0 || tg.JudgeSavedUSD <= 0 || tg.Scorers["quality"].Passed != 0 {
			t.Errorf("report of the cached scoring, %s: judge cost %v saved %v, quality %+v; want $0 billed, the price saved, the refreshed verdicts",
				tg.Name, tg.JudgeCostUSD, tg.JudgeSavedUSD, tg.Scorers["quality"])
		}
		if len(tg.Judges) != 1 || tg.Judges[0].Scorer != "quality" || tg.Judges[0].CostUSD != 0 || tg.Judges[0].SavedUSD != tg.JudgeSavedUSD {
			t.Errorf("report of the cached scoring, %s: judges %+v; want quality at $0 with %v saved", tg.Name, tg.Judges, tg.JudgeSavedUSD)
		}
	}

	// A second run of the candidates is served from the cache too: nothing
	// billed, the price saved, and the per-case cost (the model's) the same.
	s2 := runJSON(t, cliEnv{}, "run", path, "--db", db)
	if s2.SpendUSD != 0 || math.Abs(s2.SavedUSD-s.SpendUSD) > 1e-12 {
		t.Errorf("cached run: spent %v, saved %v; want $0 and the first run's %v saved", s2.SpendUSD, s2.SavedUSD, s.SpendUSD)
	}
	again := judgeReportJSON(t, db, s2.RunID)
	for i, tg := range again.Targets {
		was := first.Targets[i].CostUSD
		if tg.CostUSD.Total != 0 || math.Abs(tg.CostUSD.SavedUSD-was.Total) > 1e-12 || math.Abs(tg.CostUSD.PerCase-was.PerCase) > 1e-12 || was.PerCase <= 0 {
			t.Errorf("%s from the cache: cost %+v; want total 0, saved %v, per case %v as when paid", tg.Name, tg.CostUSD, was.Total, was.PerCase)
		}
	}

	// A judge whose replies are no verdicts fails loudly, in every format.
	failing.Close()
	prose := mock.New(mock.Options{Addr: u.Host, Default: "I would rather not say."})
	if _, err := prose.Start(); err != nil {
		t.Fatalf("restarting the judge on %s: %v", u.Host, err)
	}
	t.Cleanup(prose.Close)
	rs, stderr := rescore("--no-cache")
	if q := rs.Scorers["quality"]; q.JudgeErrors != 12 {
		t.Errorf("prose judge: quality %+v; want 12 judge errors", q)
	}
	if want := "judge scorer quality failed on 12 of 12 verdicts"; !strings.Contains(stderr, want) {
		t.Errorf("rescore --json stderr lacks %q:\n%s", want, stderr)
	}
	inv := runCLI(t, cliEnv{}, "rescore", s.RunID, "--db", db)
	if !strings.Contains(inv.stderr, "WARNING: judge scorer quality failed on 12 of 12") || !strings.Contains(inv.stdout, "12 judge errors") {
		t.Errorf("text rescore does not say the judge failed:\nstdout %s\nstderr %s", inv.stdout, inv.stderr)
	}
}

// assay cache stats counts entries per target (entries from before targets
// were recorded under "(unknown target)"); cache clear removes all or one
// target's and says how many; neither creates a store, and clear refuses a
// read-only one.
func TestCacheStatsAndClear(t *testing.T) {
	t.Parallel()
	_, candURL := startMock(t, candidates)
	_, judgeURL := startMock(t, mock.Options{Rules: []mock.Rule{
		{Match: "RUBRIC-Q", Reply: `{"verdict": "pass", "reason": "fine"}`},
	}})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")

	missing := filepath.Join(dir, "none", "assay.db")
	for _, args := range [][]string{{"cache", "stats"}, {"cache", "clear"}} {
		inv := runCLI(t, cliEnv{}, append(args, "--db", missing)...)
		if inv.code == 0 || !strings.Contains(inv.stderr, "no store here") {
			t.Errorf("%v without a store: exit %d, %s", args, inv.code, inv.stderr)
		}
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("cache commands created %s", filepath.Dir(missing))
	}

	path := judgedTask(t, dir, candURL, judgeURL, "")
	runJSON(t, cliEnv{}, "run", path, "--db", db)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CachePut(ctx, "legacy-key", "", []byte(`{"text":"old"}`)); err != nil {
		t.Fatal(err)
	}
	st.Close()

	type line struct {
		Target  string
		Entries int64
		Bytes   int64
		Oldest  string
	}
	stats := func(args ...string) map[string]line {
		t.Helper()
		inv := runCLI(t, cliEnv{}, append([]string{"cache", "stats", "--json", "--db", db}, args...)...)
		var out struct{ Targets []line }
		if err := json.Unmarshal([]byte(inv.stdout), &out); err != nil {
			t.Fatalf("cache stats: exit %d, %v\n%s", inv.code, err, inv.stderr)
		}
		m := map[string]line{}
		for _, l := range out.Targets {
			m[l.Target] = l
		}
		return m
	}
	// Each candidate's 6 replies and the judge's 12 verdicts (6 outputs of
	// each candidate), and the one legacy entry.
	all := stats()
	for name, n := range map[string]int64{"oa": 6, "ob": 6, "grader": 12, "(unknown target)": 1} {
		if l := all[name]; l.Entries != n || l.Bytes <= 0 || l.Oldest == "" {
			t.Errorf("cache stats %s: %+v; want %d entries with bytes and dates", name, l, n)
		}
	}
	if one := stats("--target", "grader"); len(one) != 1 || one["grader"].Entries != 12 {
		t.Errorf("cache stats --target grader = %+v", one)
	}
	text := runCLI(t, cliEnv{}, "cache", "stats", "--db", db)
	if !strings.Contains(text.stdout, "(unknown target)") || !regexp.MustCompile(`(?m)^grader\s+12\s`).MatchString(text.stdout) {
		t.Errorf("cache stats text:\n%s", text.stdout)
	}

	// Read-only: stats reads it, clear refuses and removes nothing.
	roDir := t.TempDir()
	for _, f := range []string{"assay.db", "assay.db-wal", "assay.db-shm"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			writeFile(t, filepath.Join(roDir, f), string(b))
		}
	}
	ro := filepath.Join(storetest.ReadOnly(t, roDir), "assay.db")
	if inv := runCLI(t, cliEnv{}, "cache", "stats", "--db", ro); inv.code != 0 || !strings.Contains(inv.stdout, "grader") {
		t.Errorf("cache stats on a read-only store: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	if inv := runCLI(t, cliEnv{}, "cache", "clear", "--db", ro); inv.code == 0 || !strings.Contains(inv.stderr, "read-only") || !strings.Contains(inv.stderr, "nothing was removed") {
		t.Errorf("cache clear on a read-only store: exit %d, %s", inv.code, inv.stderr)
	}

	inv := runCLI(t, cliEnv{}, "cache", "clear", "--target", "grader", "--db", db)
	if inv.code != 0 || !strings.Contains(inv.stdout, "removed 12 entries") {
		t.Errorf("cache clear --target grader: exit %d, %s%s", inv.code, inv.stdout, inv.stderr)
	}
	left := stats()
	if _, ok := left["grader"]; ok || left["oa"].Entries != 6 || left["(unknown target)"].Entries != 1 {
		t.Errorf("after clearing grader: %+v; want oa, ob and the legacy entry kept", left)
	}
	inv = runCLI(t, cliEnv{}, "cache", "clear", "--target", "(unknown target)", "--db", db)
	if inv.code != 0 || !strings.Contains(inv.stdout, "removed 1 entry") {
		t.Errorf("cache clear of the legacy entries: %s%s", inv.stdout, inv.stderr)
	}
	inv = runCLI(t, cliEnv{}, "cache", "clear", "--db", db)
	if inv.code != 0 || !strings.Contains(inv.stdout, "removed 12 entries") {
		t.Errorf("cache clear: %s%s", inv.stdout, inv.stderr)
	}
	if inv := runCLI(t, cliEnv{}, "cache", "stats", "--db", db); !strings.Contains(inv.stdout, "empty") {
		t.Errorf("cache stats after clear: %s", inv.stdout)
	}
}
