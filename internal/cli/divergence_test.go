package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/difficulty"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
)

// openRunView opens the store at db and returns run ref's record and view.
func openRunView(t *testing.T, db, ref string) (*record.Run, *runview.View) {
	t.Helper()
	ctx := context.Background()
	g := &Globals{DB: db, Now: time.Now, Getenv: func(string) string { return "" }}
	st, run, err := openRun(ctx, g, "test", ref)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, err := runview.FromStore(ctx, st, run)
	if err != nil {
		t.Fatal(err)
	}
	return run, v
}

// divergenceGolden is testdata/divergence_gsm.json (divergence_gsm.py).
type divergenceGolden struct {
	BenchCases int            `json:"bench_cases"`
	WorkCases  int            `json:"work_cases"`
	Tiers      map[string]int `json:"tiers"`
	KS         float64        `json:"ks"`
	MedianB    float64        `json:"median_bench"`
	MedianW    float64        `json:"median_work"`
	JS         float64        `json:"js"`
	Unseen     float64        `json:"unseen"`
}

// The profile of a real stored run — the GSM8K replay of four recorded
// configurations — holds its 1,319 questions as the prompt shows them
// (checked against the file read here), its tier tag (counted here and by
// testdata/divergence_gsm.py), its template's features and its primary
// scorer's type; rated against the 50 GSM1K problems read as a dataset
// file with another spec's prompt, its signals equal scipy's and the data
// axis is low (the same domain) while the workload's system prompt makes
// the prompt axis high.
func TestProfileOfGSM8KRun(t *testing.T) {
	t.Parallel()
	db, _ := gsm8kRun(t)
	run, view := openRunView(t, db, "latest")
	ctx := context.Background()
	bench, err := profileOf(ctx, profileSource{Name: run.ID, Run: run, View: view})
	if err != nil {
		t.Fatal(err)
	}

	data := sharedData(t)
	f, err := os.Open(filepath.Join(data, "gsm8k", "example_model_solutions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var questions []string
	tiers := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Question    string `json:"question"`
			GroundTruth string `json:"ground_truth"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		questions = append(questions, line.Question)
		tiers[fmt.Sprint(strings.Count(line.GroundTruth, "<<"))]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(bench.Inputs) != 1319 || !slices.Equal(bench.Inputs, questions) {
		t.Fatalf("inputs: %d, want the file's %d questions in order (first %.60q)", len(bench.Inputs), len(questions), bench.Inputs)
	}
	got := map[string]int{}
	for _, v := range bench.Tags["tier"] {
		got[v]++
	}
	var g divergenceGolden
	b, err := os.ReadFile(filepath.Join("testdata", "divergence_gsm.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for k, n := range tiers {
		if got[k] != n || g.Tiers[k] != n {
			t.Errorf("tier %s: %d cases in the profile, %d counted here, %d by python", k, got[k], n, g.Tiers[k])
		}
	}
	if len(got) != len(tiers) {
		t.Errorf("tiers %v, want %v", got, tiers)
	}
	want := difficulty.PromptFeatures{Chars: len("Q: {{.question}}")}
	if bench.Prompt == nil || *bench.Prompt != want || bench.ScorerType != "equals" {
		t.Errorf("prompt %+v, scorer %q; want %+v, equals", bench.Prompt, bench.ScorerType, want)
	}
	if bench.InputsWhy != "" {
		t.Errorf("InputsWhy %q for a run whose dataset is unchanged", bench.InputsWhy)
	}

	wsp := &spec.Spec{
		Dataset: spec.Dataset{Path: filepath.Join(data, "gsm1k", "gsm1k_public_50.csv"), Format: "csv", ID: spec.DefaultID, Expected: "answer"},
		Prompt:  spec.Prompt{System: "You are a careful tutor. Answer with a number.", User: "{{.question}}"},
		Scorers: []spec.Scorer{{Name: "answer", Type: "number", Primary: true}},
	}
	if p, err := profileOf(ctx, profileSource{Name: "gsm1k", Dataset: wsp}); err != nil || p.Prompt != nil || p.ScorerType != "" || !strings.Contains(p.SpecWhy, "not the prompt and scorer") {
		t.Fatalf("a dataset file whose spec is not said to describe it: prompt %v, scorer %q, why %q, err %v", p.Prompt, p.ScorerType, p.SpecWhy, err)
	}
	work, err := profileOf(ctx, profileSource{Name: "gsm1k", Dataset: wsp, SpecDescribes: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(work.Inputs) != g.WorkCases {
		t.Fatalf("workload inputs %d, want %d", len(work.Inputs), g.WorkCases)
	}
	r := difficulty.RateRubric(bench, work, nil)
	axes := map[string]difficulty.AxisRating{}
	for _, a := range r.Axes {
		axes[a.Axis] = a
	}
	signals := map[string]difficulty.Signal{}
	for _, s := range axes[difficulty.AxisData].Signals {
		signals[s.Name] = s
	}
	for name, ref := range map[string]float64{"input_length_ks": g.KS, "input_length_median_ratio": g.MedianW / g.MedianB, "vocabulary_js": g.JS, "unseen_tokens": g.Unseen} {
		if s, ok := signals[name]; !ok || math.Abs(s.Value-ref) > 1e-9 || s.High {
			t.Errorf("%s: %+v, want %v (python), low", name, s, ref)
		}
	}
	if s := signals["tag_tv:tier"]; s.Name != "" {
		t.Errorf("the workload has no tier tag, yet %+v", s)
	}
	if a := axes[difficulty.AxisData]; a.Rating != difficulty.RatingLow {
		t.Errorf("data axis %s, want low: %q", a.Rating, a.Reasons)
	}
	if a := axes[difficulty.AxisPrompt]; a.Rating != difficulty.RatingHigh || !slices.ContainsFunc(a.Signals, func(s difficulty.Signal) bool { return s.Name == "system_prompt" && s.High }) {
		t.Errorf("prompt axis %s, want high for the system prompt: %q", a.Rating, a.Reasons)
	}
	if a := axes[difficulty.AxisScoring]; a.Rating != difficulty.RatingLow {
		t.Errorf("scoring axis (equals vs number) %s, want low: %q", a.Rating, a.Reasons)
	}
	if r.Verdict != difficulty.RubricShortlistOnly {
		t.Errorf("verdict %s, want shortlist_only", r.Verdict)
	}
}

// writeDivergenceRun makes a run of a small replay spec in dir whose
// prompt shows q (and ctx) and whose dataset carries tag kind.
func writeDivergenceRun(t *testing.T, dir string) (specPath, db string) {
	t.Helper()
	var cases, outs strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&cases, `{"id":"c%d","q":"question %d?","ctx":{"n":%d},"expected":"a%d","kind":"k%d","note":"not shown"}`+"\n", i, i, i, i, i%2)
		fmt.Fprintf(&outs, `{"q":"question %d?","answer":"a%d"}`+"\n", i, i)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	writeFile(t, filepath.Join(dir, "out.jsonl"), outs.String())
	specPath = filepath.Join(dir, "assay.yaml")
	writeFile(t, specPath, `name: div
dataset: {path: cases.jsonl, id: id, expected: expected, tags: {kind: kind}}
prompt:
  messages:
    - {role: system, content: "Answer briefly."}
    - {role: user, content: "Q: 2+2?"}
    - {role: assistant, content: "4"}
    - {role: user, content: "Q: {{.q}} {{.ctx}}"}
targets:
  - {name: model, provider: replay, replay: {path: out.jsonl, join: q, output: answer}}
scorers:
  - {name: form, type: regex, pattern: "a"}
  - {name: correct, type: equals, primary: true}
`)
	db = filepath.Join(dir, "assay.db")
	if inv := runCLI(t, cliEnv{}, "run", specPath, "--db", db); inv.code != 0 {
		t.Fatalf("run: exit %d\n%s", inv.code, inv.stderr)
	}
	return specPath, db
}

// A run's inputs are the fields its prompt shows (in name order; an object
// as JSON), a field it does not show is left out; its prompt.messages'
// features are counted; once its dataset changes, the profile keeps the
// tags and the prompt but has no inputs, and says why (the hash check
// export makes). A baseline file of it gives the tags only.
func TestProfileOfRunDatasetChangedAndBaseline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, db := writeDivergenceRun(t, dir)
	run, view := openRunView(t, db, "latest")
	ctx := context.Background()
	p, err := profileOf(ctx, profileSource{Name: run.ID, Run: run, View: view})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 1; i <= 6; i++ {
		want = append(want, fmt.Sprintf("{\"n\":%d}\nquestion %d?", i, i)) // ctx before q
	}
	if !slices.Equal(p.Inputs, want) {
		t.Errorf("inputs %q, want %q", p.Inputs, want)
	}
	wantPrompt := difficulty.PromptFeatures{
		Chars:   len("Answer briefly.") + len("Q: 2+2?") + len("4") + len("Q: {{.q}} {{.ctx}}"),
		FewShot: 1, System: true, Context: true, // ctx names context
	}
	if p.Prompt == nil || *p.Prompt != wantPrompt || p.ScorerType != "equals" {
		t.Errorf("prompt %+v, scorer %q; want %+v, equals (the primary, not the first)", p.Prompt, p.ScorerType, wantPrompt)
	}
	if kinds := p.Tags["kind"]; len(kinds) != 6 || slices.Index(kinds, "k0") < 0 {
		t.Errorf("kind tag %q", kinds)
	}

	baseline := filepath.Join(dir, "base.json")
	if inv := runCLI(t, cliEnv{}, "baseline", "export", "latest", "--db", db, "-o", baseline); inv.code != 0 {
		t.Fatalf("baseline export: %s", inv.stderr)
	}
	bv, err := runview.LoadBaseline(baseline)
	if err != nil {
		t.Fatal(err)
	}
	bp, err := profileOf(ctx, profileSource{Name: baseline, View: bv})
	if err != nil {
		t.Fatal(err)
	}
	if bp.Inputs != nil || bp.Prompt != nil || bp.ScorerType != "" || !strings.Contains(bp.InputsWhy, "baseline file") || !strings.Contains(bp.SpecWhy, "baseline file") {
		t.Errorf("baseline profile: inputs %d, prompt %v, scorer %q, why %q / %q", len(bp.Inputs), bp.Prompt, bp.ScorerType, bp.InputsWhy, bp.SpecWhy)
	}
	if !slices.Equal(sortedCopy(bp.Tags["kind"]), sortedCopy(p.Tags["kind"])) {
		t.Errorf("baseline's kind tag %q, the run's %q", bp.Tags["kind"], p.Tags["kind"])
	}

	writeFile(t, filepath.Join(dir, "cases.jsonl"), `{"id":"c1","q":"changed","expected":"a1","kind":"k1"}`+"\n")
	p, err = profileOf(ctx, profileSource{Name: run.ID, Run: run, View: view})
	if err != nil {
		t.Fatal(err)
	}
	if p.Inputs != nil || !strings.Contains(p.InputsWhy, "dataset changed") || p.Prompt == nil || len(p.Tags["kind"]) != 6 {
		t.Errorf("after the dataset changed: %d inputs, why %q, prompt %v, %d kind tags", len(p.Inputs), p.InputsWhy, p.Prompt, len(p.Tags["kind"]))
	}
	r := difficulty.RateRubric(p, p, nil)
	if a := r.Axes[0]; a.Rating != difficulty.RatingUnrated || !slices.ContainsFunc(a.Reasons, func(s string) bool { return strings.Contains(s, "dataset changed") }) {
		t.Errorf("data axis after the dataset changed: %s %q", a.Rating, a.Reasons)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// A dataset file read with a spec that has no prompt: every field but the
// ID, the expected value and the tags' fields is the input, the tags come
// from the file, and the prompt and scorer are unknown, said why (even
// when the spec is said to describe the file). A file
// that cannot be read is an error.
func TestProfileOfDatasetFileWithoutPrompt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "work.jsonl")
	writeFile(t, path, `{"id":"w1","title":"Refund","body":"charged twice","answer":"billing","tier":"hard"}`+"\n"+
		`{"id":"w2","title":"Export","body":"button broken","answer":"bug","tier":"easy"}`+"\n")
	sp := &spec.Spec{Dataset: spec.Dataset{Path: path, Format: "jsonl", ID: "id", Expected: "answer", Tags: []spec.Tag{{Key: "level", Expr: "tier"}}}}
	p, err := profileOf(context.Background(), profileSource{Name: path, Dataset: sp, SpecDescribes: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"charged twice\nRefund", "button broken\nExport"}; !slices.Equal(p.Inputs, want) {
		t.Errorf("inputs %q, want %q", p.Inputs, want)
	}
	if !slices.Equal(p.Tags["level"], []string{"hard", "easy"}) {
		t.Errorf("tags %v", p.Tags)
	}
	if p.Prompt != nil || p.ScorerType != "" || !strings.Contains(p.SpecWhy, "has no prompt") {
		t.Errorf("prompt %v, scorer %q, why %q", p.Prompt, p.ScorerType, p.SpecWhy)
	}
	sp.Dataset.Path = filepath.Join(dir, "missing.jsonl")
	if _, err := profileOf(context.Background(), profileSource{Name: "missing", Dataset: sp}); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("a missing dataset file: %v", err)
	}
}

// Inline worked examples count as few-shot ("A: 72" lines), the case's own
// empty answer slot does not; tools are counted.
func TestPromptFeaturesInlineExamples(t *testing.T) {
	sp := &spec.Spec{
		Prompt: spec.Prompt{User: "Q: one?\nA: 1\n\nQ: two?\nAnswer: 2\n\nQ: {{.question}}\nA:"},
		Tools:  []spec.Tool{{Name: "calc"}, {Name: "search"}},
	}
	f := promptFeatures(sp)
	if f.FewShot != 2 || f.Tools != 2 || f.System || f.Context || f.Chars != len(sp.Prompt.User) {
		t.Errorf("features %+v, want 2 worked examples, 2 tools, %d characters", f, len(sp.Prompt.User))
	}
}
