package promote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// fakeSource is a score-traces run held in memory.
type fakeSource struct {
	scores []record.Score
	labels []record.Label
	traces map[string]*record.Trace
}

func (f *fakeSource) LatestScoring(context.Context, string) (int, error) { return 1, nil }
func (f *fakeSource) ScorerNames(context.Context, string, int) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	for _, s := range f.scores {
		if !seen[s.Scorer] {
			seen[s.Scorer] = true
			names = append(names, s.Scorer)
		}
	}
	return names, nil
}
func (f *fakeSource) Scores(_ context.Context, _ string, _ int, fn func(record.Score) error) error {
	for _, s := range f.scores {
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}
func (f *fakeSource) Labels(_ context.Context, _ string, fn func(record.Label) error) error {
	for _, l := range f.labels {
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
}
func (f *fakeSource) Trace(_ context.Context, id string) (*record.Trace, error) {
	if t, ok := f.traces[id]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("trace %s: %w", id, record.ErrNotFound)
}

// source has n failing traces t0..t(n-1) asking distinct questions, the
// last of them calling a tool in its conversation.
func source(n int) *fakeSource {
	f := &fakeSource{traces: map[string]*record.Trace{}}
	topics := []string{"refund policy", "export button", "dark mode", "password reset", "invoice address"}
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		f.scores = append(f.scores, record.Score{CaseID: id, Scorer: "fmt", Primary: true, Pass: false, Reason: "not JSON"})
		in := []record.Message{{Role: "user", Content: "Tell me about the " + topics[i%len(topics)]}}
		if i == n-1 {
			in = append(in, record.Message{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"q":1}`}}},
				record.Message{Role: "tool", ToolCallID: "c1", Content: "found"})
		}
		f.traces[id] = &record.Trace{ID: id, Model: "m", Time: time.Date(2026, 11, 30, 0, i, 0, 0, time.UTC), Input: in}
	}
	return f
}

func testSpec(t *testing.T, data string, m *spec.TracePromote) *spec.Spec {
	t.Helper()
	dir := t.TempDir()
	name := "cases.jsonl"
	format := "jsonl"
	if strings.HasPrefix(data, "id,") {
		name, format = "cases.csv", "csv"
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := &spec.Spec{Dir: dir, Dataset: spec.Dataset{Path: name, Format: format, ID: "id"}}
	if m != nil {
		sp.Traces = &spec.Traces{Promote: m}
	}
	return sp
}

var traceRun = &record.Run{ID: "r1", Sample: "s1"}

func TestPromoteRefusals(t *testing.T) {
	ctx := context.Background()
	if _, err := Promote(ctx, source(1), &record.Run{ID: "r0"}, testSpec(t, "", nil), Options{}); !errors.Is(err, ErrNotTraceRun) {
		t.Errorf("an evaluation run: %v", err)
	}
	_, err := Promote(ctx, source(1), traceRun, testSpec(t, "id,input\n1,x\n", nil), Options{})
	if err == nil || !strings.Contains(err.Error(), "set traces.promote.to (or labels.add_to) in the spec to a .jsonl file") {
		t.Errorf("a CSV dataset without to: %v", err)
	}
	_, err = Promote(ctx, source(1), traceRun, testSpec(t, "", &spec.TracePromote{Input: "id"}), Options{})
	if err == nil || !strings.Contains(err.Error(), `field "id", which holds the case's ID`) {
		t.Errorf("input mapped onto the ID field: %v", err)
	}
	_, err = Promote(ctx, source(1), traceRun, testSpec(t, "", &spec.TracePromote{Context: "trace_id"}), Options{})
	if err == nil || !strings.Contains(err.Error(), `field "trace_id"`) {
		t.Errorf("context mapped onto trace_id: %v", err)
	}
	noPrimary := source(1)
	noPrimary.scores[0].Primary = false
	_, err = Promote(ctx, noPrimary, traceRun, testSpec(t, "", nil), Options{})
	var ue *UnknownScorerError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "no primary verdict: name the scorer with --scorer (the run's scorers are fmt)") {
		t.Errorf("no primary scorer: %v", err)
	}
}

// --limit adds the first N and lists the rest; promoting to a file of its
// own dedups against it and the dataset; the conversation keeps its tool
// calls; a dataset without the input field is warned of.
func TestPromoteToOwnFileWithLimit(t *testing.T) {
	ctx := context.Background()
	sp := testSpec(t, `{"id":"a","question":"Tell me about the dark mode"}`+"\n", &spec.TracePromote{Messages: "history", To: "promoted.jsonl"})
	src := source(5)
	res, err := Promote(ctx, src, traceRun, sp, Options{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 2 || res.Added[0].TraceID != "t0" || res.Added[1].TraceID != "t1" || res.Dataset != filepath.Join(sp.Dir, "promoted.jsonl") {
		t.Fatalf("added %+v to %s", res.Added, res.Dataset)
	}
	if len(res.Skipped) != 3 || res.Skipped[0].Why != SkipLimit {
		t.Errorf("skipped %+v", res.Skipped)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `no case of the dataset has the field "input"`) {
		t.Errorf("warnings %q", res.Warnings)
	}
	// The rest: t2 repeats nothing in the dataset (its field is question,
	// not input), t0 and t1 are in promoted.jsonl already.
	res, err = Promote(ctx, src, traceRun, sp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, a := range res.Added {
		added = append(added, a.TraceID)
	}
	if strings.Join(added, ",") != "t2,t3,t4" {
		t.Errorf("second promote added %v", added)
	}
	for _, s := range res.Skipped {
		if s.Why != SkipPromoted || s.Of == nil || !strings.HasPrefix(s.Of.ID, "promoted.jsonl:") {
			t.Errorf("skip %+v: want already promoted, naming the case in promoted.jsonl", s)
		}
	}
	b, err := os.ReadFile(res.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 5 {
		t.Fatalf("promoted.jsonl:\n%s", b)
	}
	var last struct {
		History []record.Message `json:"history"`
		Input   string           `json:"input"`
		Reason  string           `json:"label_reason"`
	}
	if err := json.Unmarshal([]byte(lines[4]), &last); err != nil {
		t.Fatal(err)
	}
	if len(last.History) != 3 || last.History[1].ToolCalls[0].Arguments != `{"q":1}` || last.History[2].ToolCallID != "c1" ||
		last.Input != "Tell me about the invoice address" || last.Reason != "not JSON" {
		t.Errorf("the conversation case: %s", lines[4])
	}
	// The dataset itself is untouched.
	if d, _ := os.ReadFile(filepath.Join(sp.Dir, "cases.jsonl")); strings.Count(string(d), "\n") != 1 {
		t.Errorf("the dataset changed:\n%s", d)
	}
}
