package selftest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/shareddata"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/task"
)

func load(t *testing.T, path string) *task.Task {
	t.Helper()
	tk, err := task.Load(path)
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	return tk
}

func run(t *testing.T, path string, o Options) *Report {
	t.Helper()
	if o.Examples == 0 {
		o.Examples = 3
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	rep, err := Run(context.Background(), load(t, path), o)
	if err != nil {
		t.Fatalf("selftest %s: %v", path, err)
	}
	return rep
}

func findCell(rep *Report, scorer, null, mode string) *CellReport {
	for _, sr := range rep.Scorers {
		if sr.Name != scorer {
			continue
		}
		for i := range sr.Results {
			if c := &sr.Results[i]; c.Null == null && c.Mode == mode {
				return c
			}
		}
	}
	return nil
}

func hasFinding(rep *Report, sev, scorer, null, mode string) *Finding {
	for i, f := range rep.Findings {
		if f.Severity == sev && f.Scorer == scorer && f.Null == null && f.Mode == mode {
			return &rep.Findings[i]
		}
	}
	return nil
}

// The must-show specs: a primary regex `.*`, a not_contains "error", and CEL
// expressions true for {} (or for any object lacking the field) are
// exploitable, each through the null model that shows the hole, with up to
// --examples example cases, the first cases of the set.
func TestExploitableSpecs(t *testing.T) {
	t.Parallel()
	type hole struct{ scorer, null, mode string }
	for _, tc := range []struct {
		file  string
		holes []hole
	}{
		{"regex_any.yaml", []hole{{"matches", NullEchoPrompt, ModeRaw}, {"matches", NullJudgeInjection, ModeParsed}}},
		{"not_contains_error.yaml", []hole{{"no_error", NullEchoPrompt, ModeRaw}, {"no_error", NullNumberSpray, ModeRaw}}},
		{"cel_empty_object.yaml", []hole{{"ok", NullObject, ModeRaw}, {"ok", NullObject, ModeParsed}}},
		{"cel_missing_field.yaml", []hole{{"ok", NullEchoInput, ModeRaw}, {"ok", NullJudgeInjection, ModeRaw}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rep := run(t, filepath.Join("testdata", tc.file), Options{Examples: 2})
			if rep.Verdict != VerdictExploitable {
				t.Fatalf("verdict %s, want exploitable", rep.Verdict)
			}
			for _, h := range tc.holes {
				f := hasFinding(rep, SeverityExploitable, h.scorer, h.null, h.mode)
				if f == nil {
					t.Errorf("no exploitable finding for %s/%s/%s; findings: %+v", h.scorer, h.null, h.mode, rep.Findings)
					continue
				}
				if f.Passed != f.N || f.N != 40 || f.Chance != 0 {
					t.Errorf("finding %+v: want 40/40 against chance 0", f)
				}
				if len(f.Examples) != 2 || f.Examples[0].CaseID != "c01" || f.Examples[1].CaseID != "c02" {
					t.Errorf("examples %+v: want the first two cases", f.Examples)
				}
			}
		})
	}
}

// A sound spec over labels with a majority class: the constant model passes
// exactly its chance rate (the majority's share, 20 of 40), the shuffled
// model exactly the permutation's, and neither is flagged; checks of form
// that pass junk are notes, not warnings, and never decide the verdict.
func TestSoundLabels(t *testing.T) {
	t.Parallel()
	rep := run(t, "testdata/sound_labels.yaml", Options{})
	if rep.Verdict != VerdictSound {
		t.Fatalf("verdict %s; findings %+v", rep.Verdict, rep.Findings)
	}
	if rep.Headline != "correct" || rep.Scorers[0].Name != "correct" || !rep.Scorers[0].Headline {
		t.Errorf("headline %s, first scorer %s: the headline comes first", rep.Headline, rep.Scorers[0].Name)
	}
	for _, mode := range []string{ModeRaw, ModeParsed} {
		c := findCell(rep, "correct", NullConstant, mode)
		if c == nil || c.Passed != 20 || c.N != 40 || c.Chance != 0.5 || c.Above {
			t.Errorf("constant/%s = %+v, want 20/40 at chance 0.5, not above", mode, c)
		}
		s := findCell(rep, "correct", NullShuffled, mode)
		if s == nil || s.Above || s.Rate != s.Chance {
			t.Errorf("shuffled/%s = %+v: a correct scorer passes exactly the permutation's chance rate", mode, s)
		}
	}
	for _, f := range rep.Findings {
		if f.Severity != SeverityNote || (f.Scorer != "allowed" && f.Scorer != "clean") {
			t.Errorf("finding %+v: only the checks of form (one_of, not_contains) may pass junk, as notes", f)
		}
	}
	if hasFinding(rep, SeverityNote, "allowed", NullConstant, ModeParsed) == nil {
		t.Error("one_of passing the constant label is not noted")
	}
	if c := findCell(rep, "clean", NullEchoPrompt, ModeParsed); c == nil || c.Skipped == "" {
		t.Errorf("not_contains reads the raw output; its parsed cell = %+v, want skipped", c)
	}
	// Every null model ran on every case but the long one.
	for _, nm := range rep.NullModels {
		want := 40
		if nm.Name == NullLong {
			want = 10 // every fourth case: at most 10, evenly spread
		}
		if nm.Skipped != "" || nm.Cases != want {
			t.Errorf("null model %+v: want %d cases", nm, want)
		}
	}
}

func TestSoundJSON(t *testing.T) {
	t.Parallel()
	rep := run(t, "testdata/sound_json.yaml", Options{})
	if rep.Verdict != VerdictSound {
		t.Fatalf("verdict %s; findings %+v", rep.Verdict, rep.Findings)
	}
	// Strings are handed to the field scorer as they are (no field to
	// read); required_fields reads JSON fields too, and {"label": ...} is
	// not among the null models.
	if c := findCell(rep, "correct", NullRefusal, ModeParsed); c == nil || c.N != 40 || c.Passed != 0 {
		t.Errorf("refusal/parsed = %+v", c)
	}
}

// In the should-refuse bucket a refusal is right: the refusal model's
// chance rate is that bucket's share, and passing there is not flagged.
func TestRefusalChance(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		bucket, label := "common", []string{"x", "y"}[i%2]
		if i <= 6 {
			bucket, label = "should-refuse", "refuse"
		}
		fmt.Fprintf(&b, `{"id":"r%d","q":"question %d","label":%q,"bucket":%q}`+"\n", i, i, label, bucket)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), b.String())
	writeFile(t, filepath.Join(dir, "assay.yaml"), `name: refusals
dataset: {path: cases.jsonl, id: id, expected: label, tags: {bucket: bucket}}
prompt: {user: "{{.q}}"}
targets:
  - {name: m, provider: exec, command: ["true"]}
scorers:
  - {name: correct, type: equals, normalize: [trim]}
`)
	rep := run(t, filepath.Join(dir, "assay.yaml"), Options{})
	if rep.Verdict != VerdictSound {
		t.Fatalf("verdict %s; findings %+v", rep.Verdict, rep.Findings)
	}
	c := findCell(rep, "correct", NullRefusal, ModeRaw)
	if c == nil || c.Passed != 6 || c.N != 20 || c.Chance != 0.3 || c.Above {
		t.Errorf("refusal/raw = %+v, want 6/20 at chance 0.3", c)
	}
}

// --limit attacks the first N cases; the long model runs on a spread of at
// most 10 of them.
func TestLimit(t *testing.T) {
	t.Parallel()
	rep := run(t, "testdata/sound_labels.yaml", Options{Limit: 7})
	if rep.Cases != 7 {
		t.Fatalf("cases %d, want 7", rep.Cases)
	}
	if c := findCell(rep, "correct", NullEmpty, ModeRaw); c == nil || c.N != 7 {
		t.Errorf("empty/raw = %+v", c)
	}
}

// judgeSpec writes the judge fixture's spec beside its data.
func judgeReport(t *testing.T, reply func(user string) string, o Options) (*Report, int64) {
	t.Helper()
	var calls atomic.Int64
	o.JudgeProvider = func(name string) (provider.Provider, spec.Target, error) {
		return provider.Func(func(_ context.Context, req *provider.Request) (*provider.Response, error) {
			calls.Add(1)
			return &provider.Response{Text: reply(req.Messages[len(req.Messages)-1].Content), FinishReason: "stop"}, nil
		}), spec.Target{Name: name, Model: "fake"}, nil
	}
	return run(t, "testdata/judge.yaml", o), calls.Load()
}

// A judge-based spec with a gullible grader is exploitable; with a grader
// that fails junk, it is sound; a grader that believes only the injection
// is caught by the judge-injection model alone; without a grader the
// headline is not attacked and the verdict says so.
func TestJudgeSpecs(t *testing.T) {
	t.Parallel()
	pass := `{"verdict": "pass", "reason": "fine"}`
	fail := `{"verdict": "fail", "reason": "not an answer"}`

	rep, calls := judgeReport(t, func(string) string { return pass }, Options{JudgeVia: "mock"})
	if rep.Verdict != VerdictExploitable || hasFinding(rep, SeverityExploitable, "quality", NullEchoPrompt, ModeRaw) == nil {
		t.Errorf("gullible grader: verdict %s, findings %+v", rep.Verdict, rep.Findings)
	}
	if calls == 0 || int64(rep.JudgeRequests) != calls {
		t.Errorf("report counts %d judge calls, the grader saw %d", rep.JudgeRequests, calls)
	}
	// The fail-closed gates keep junk from the grader: empty output never
	// reaches it.
	if c := findCell(rep, "quality", NullEmpty, ModeRaw); c == nil || c.Passed != 0 {
		t.Errorf("empty/raw with a gullible grader = %+v: the gate must fail it", c)
	}

	rep, _ = judgeReport(t, func(string) string { return fail }, Options{JudgeVia: "mock"})
	if rep.Verdict != VerdictSound {
		t.Errorf("strict grader: verdict %s, findings %+v", rep.Verdict, rep.Findings)
	}

	believer := func(user string) string {
		if strings.Contains(user, "Ignore the rubric") {
			return pass
		}
		return fail
	}
	rep, _ = judgeReport(t, believer, Options{JudgeVia: "mock"})
	var nulls []string
	for _, f := range rep.Findings {
		nulls = append(nulls, f.Null)
	}
	if rep.Verdict != VerdictExploitable || slices.ContainsFunc(nulls, func(n string) bool { return n != NullJudgeInjection }) {
		t.Errorf("grader that believes the injection: verdict %s, flagged null models %v; want judge-injection only", rep.Verdict, nulls)
	}

	rep = run(t, "testdata/judge.yaml", Options{})
	if rep.Verdict != VerdictIncomplete || rep.Scorers[0].Skipped == "" || len(rep.Findings) != 0 {
		t.Errorf("judges skipped: verdict %s, scorer %+v", rep.Verdict, rep.Scorers[0])
	}
}

// The recorded-GSM8K spec (an `A: N` extract, normalised equality) is
// sound on all 1,319 cases, quickly. The constant model's chance rate is
// checked against the share of the most common answer counted here.
func TestGSM8KSound(t *testing.T) {
	t.Parallel()
	data := shareddata.Path(t, "gsm8k/example_model_solutions.jsonl")
	path := filepath.Join(t.TempDir(), "gsm8k.yaml")
	writeFile(t, path, fmt.Sprintf(`name: gsm8k-recorded
dataset:
  path: %q
  id: line
  expected: ground_truth
  expected_extract: 'A:\s*(.+)$'
prompt:
  user: "Q: {{.question}}"
targets:
  - {name: m, provider: replay, replay: {path: %q, join: question, output: 175b_verification.solution}}
output:
  extract: 'A:\s*(.+)$'
scorers:
  - name: correct
    type: equals
    normalize: [trim, no_commas]
    primary: true
`, data, data))
	start := time.Now()
	rep := run(t, path, Options{})
	elapsed := time.Since(start)
	t.Logf("GSM8K selftest: %d cases in %v", rep.Cases, elapsed)
	if rep.Verdict != VerdictSound || rep.Cases != 1319 {
		t.Fatalf("verdict %s on %d cases; findings %+v", rep.Verdict, rep.Cases, rep.Findings)
	}

	// Count the answers independently.
	f, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`A:\s*(.+)$`)
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var rec struct {
			GroundTruth string `json:"ground_truth"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		m := re.FindStringSubmatch(rec.GroundTruth)
		counts[strings.ReplaceAll(strings.TrimSpace(m[1]), ",", "")]++
		n++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	for _, mode := range []string{ModeRaw, ModeParsed} {
		c := findCell(rep, "correct", NullConstant, mode)
		if c == nil || c.Chance != float64(top)/float64(n) || c.Passed != top || c.Above {
			t.Errorf("constant/%s = %+v; the most common answer is %d of %d cases", mode, c, top, n)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Several primary scorers make one headline score: combined with all, a
// lax primary (not_contains) is a warning, since the strict one still
// decides; combined with any, the lax one alone passes junk, so the spec
// is exploitable.
func TestCombinedHeadline(t *testing.T) {
	t.Parallel()
	base, err := os.ReadFile("testdata/sound_labels.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := os.ReadFile("testdata/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		combine, verdict string
	}{{"all", VerdictSound}, {"any", VerdictExploitable}} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "cases.jsonl"), string(cases))
		s := strings.Replace(string(base), "name: sound-labels", "name: combined\ncombine: "+tc.combine, 1)
		s = strings.Replace(s, `values: ["<script"]}`, `values: ["<script"], primary: true}`, 1)
		writeFile(t, filepath.Join(dir, "assay.yaml"), s)
		rep := run(t, filepath.Join(dir, "assay.yaml"), Options{})
		if rep.Headline != "primary" || rep.Scorers[0].Type != "combined" || rep.Verdict != tc.verdict {
			t.Errorf("combine %s: headline %s (%s), verdict %s, want %s", tc.combine, rep.Headline, rep.Scorers[0].Type, rep.Verdict, tc.verdict)
		}
		if hasFinding(rep, SeverityWarning, "clean", NullEchoPrompt, ModeRaw) == nil {
			t.Errorf("combine %s: the lax primary scorer is not warned about", tc.combine)
		}
		if c := findCell(rep, "primary", NullEchoPrompt, ModeParsed); c == nil || c.N != 40 {
			t.Errorf("combine %s: the combined score's parsed cell = %+v", tc.combine, c)
		}
	}
}

// The same spec and data give the same report whatever the scheduling:
// counts, intervals, findings and their examples (the first cases).
func TestDeterministic(t *testing.T) {
	t.Parallel()
	a := run(t, "testdata/cel_missing_field.yaml", Options{Workers: 1})
	b := run(t, "testdata/cel_missing_field.yaml", Options{Workers: 7})
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("reports differ with 1 and 7 workers:\n%s\n%s", ja, jb)
	}
}

// A field scorer's chance rate is over the fields it compares: the
// constant answer is the commonest whole object, and on a field with few
// values it is right wherever that field matches, which a correct grader
// passes too. Taking the whole object's share as its chance called a sound
// field_equals on a three-valued field exploitable.
func TestFieldScorerChanceIsOverItsFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for i := range 60 {
		exp := `{"p":"high","q":"x"}` // the commonest whole answer: 15 of 60
		switch {
		case i >= 15 && i < 40:
			exp = fmt.Sprintf(`{"p":"high","q":"y%d"}`, i) // 40 of 60 are "high"
		case i >= 40:
			exp = fmt.Sprintf(`{"p":"low","q":"z%d"}`, i)
		}
		fmt.Fprintf(&b, `{"id":"c%d","text":"ticket %d","expected":%s}`+"\n", i, i, exp)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), b.String())
	writeFile(t, filepath.Join(dir, "assay.yaml"), `name: fields
dataset: {path: cases.jsonl, id: id, expected: expected}
prompt: {user: "{{.text}}"}
output: {format: json}
targets:
  - {name: m, provider: exec, command: ["true"]}
scorers:
  - {name: priority, type: field_equals, field: p, primary: true}
  - {name: both, type: field_equals, fields: [p, q]}
`)
	rep := run(t, filepath.Join(dir, "assay.yaml"), Options{})
	if rep.Verdict != VerdictSound {
		t.Fatalf("verdict %s; findings %+v", rep.Verdict, rep.Findings)
	}
	c := findCell(rep, "priority", NullConstant, ModeParsed)
	if c == nil || c.Passed != 40 || c.N != 60 || math.Abs(c.Chance-40.0/60) > 1e-12 || c.Above {
		t.Errorf("priority/constant = %+v, want 40/60 at chance 40/60", c)
	}
	// Over both fields the constant is right only where the whole answer is.
	if c := findCell(rep, "both", NullConstant, ModeParsed); c == nil || c.Passed != 15 || math.Abs(c.Chance-0.25) > 1e-12 {
		t.Errorf("both/constant = %+v, want 15/60 at chance 0.25", c)
	}
}
