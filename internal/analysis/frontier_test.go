package analysis

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

func tgt(name string, rate, cost, p95 float64) Target {
	t := Target{Name: name, N: 100}
	t.Primary.Rate = rate
	t.CostUSD.PerCase = cost
	t.LatencyMS.P95 = p95
	return t
}

func TestPareto(t *testing.T) {
	ts := []Target{
		tgt("best-expensive", 0.90, 0.010, 900),
		tgt("cheap", 0.80, 0.001, 900),
		tgt("dominated", 0.78, 0.002, 950), // worse than cheap on all three
		tgt("fast", 0.70, 0.005, 200),
		tgt("tie-of-cheap", 0.80, 0.001, 900), // equal to cheap: neither dominates
		{Name: "no-results"},
	}
	got := pareto(ts)
	want := []string{"best-expensive", "cheap", "fast", "tie-of-cheap"}
	if !slices.Equal(got, want) {
		t.Errorf("pareto = %v, want %v", got, want)
	}
}

func TestWorstListKeepsCostlyThenSilentFirst(t *testing.T) {
	offers := []FailureExample{
		{CaseID: "1", Shape: "loud", Kind: "timeout", ErrorCost: 9},
		{CaseID: "2", Shape: "silent", Kind: "wrong", ErrorCost: 1},
		{CaseID: "3", Shape: "loud", Kind: "empty", ErrorCost: 1},
		{CaseID: "4", Shape: "silent", Kind: "wrong", ErrorCost: 5},
		{CaseID: "5", Shape: "silent", Kind: "wrong", ErrorCost: 1},
		{CaseID: "6", Shape: "loud", Kind: "refusal", ErrorCost: 50},
	}
	// Costlier first (expected error cost); at equal cost silent before
	// loud; among equals, the earlier stored. -1 keeps them all.
	for n, want := range map[int][]string{3: {"6", "1", "4"}, -1: {"6", "1", "4", "2", "5", "3"}} {
		w := newWorstList(n)
		for _, f := range offers {
			f.Target = "a"
			w.offer(f)
		}
		var ids []string
		for _, f := range w.list() {
			ids = append(ids, f.CaseID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("worst of %d = %v, want %v", n, ids, want)
		}
		if w.next != len(offers) {
			t.Errorf("worst of %d counted %d failures, want %d", n, w.next, len(offers))
		}
	}
}

func TestWorstListFillsBoundedOutput(t *testing.T) {
	w := newWorstList(2)
	w.offer(FailureExample{Target: "a", CaseID: "x", Epoch: 1, Shape: "silent"})
	w.offer(FailureExample{Target: "a", CaseID: "y", Epoch: 1, Shape: "loud"})
	long := strings.Repeat("é", maxRawShown) // 2 bytes a rune: the cut lands mid-rune
	st := resultStore{rs: map[record.Key]record.Result{}}
	for _, r := range []record.Result{
		{CaseID: "x", Target: "a", Epoch: 1, Raw: long},
		{CaseID: "y", Target: "a", Epoch: 1, ErrorKind: "timeout", Error: "no reply within 5s"},
		{CaseID: "z", Target: "a", Epoch: 1, Raw: "not kept"},
	} {
		st.rs[r.Key()] = r
	}
	if err := w.fillResults(context.Background(), st, "run"); err != nil {
		t.Fatal(err)
	}
	got := w.list()
	if len(got[0].Raw) > maxRawShown+len("…") || !strings.HasSuffix(got[0].Raw, "…") || !strings.HasPrefix(got[0].Raw, "éé") {
		t.Errorf("long output not cut cleanly: %d bytes, ends %q", len(got[0].Raw), got[0].Raw[len(got[0].Raw)-8:])
	}
	if got[1].Raw != "no reply within 5s" {
		t.Errorf("a failed call shows %q, want its error", got[1].Raw)
	}
	for _, f := range got {
		if strings.Contains(fmt.Sprint(f), "not kept") {
			t.Error("an output that was not selected was kept")
		}
	}
}

// resultStore answers Result from a map.
type resultStore struct {
	store.Store
	rs map[record.Key]record.Result
}

func (s resultStore) Result(_ context.Context, _ string, k record.Key) (*record.Result, error) {
	r, ok := s.rs[k]
	if !ok {
		return nil, store.ErrNotFound
	}
	return &r, nil
}

func TestCoverageWarnings(t *testing.T) {
	cfg := `{"targets":[{"name":"a","params":{"temperature":0.7}},{"name":"b","params":{"temperature":0}},{"name":"grader"}],
		"scorers":[{"name":"polite","type":"judge","target":"a"},{"name":"ok","type":"judge","target":"grader"}]}`
	run := &record.Run{Targets: []string{"a", "b"}, Epochs: 1, Config: []byte(cfg)}
	ci := newCaseIndex()
	for i := 0; i < 40; i++ {
		ci.add(fmt.Sprint(i), map[string]string{"bucket": map[bool]string{true: "common", false: "edge"}[i < 35]})
	}
	ws := strings.Join(coverageWarnings(run, ci), "\n")
	for _, want := range []string{
		`bucket "edge" has 5 cases`,
		`bucket "hostile" has no cases`,
		`bucket "should-refuse" has no cases`,
		"target a samples at temperature 0.7 with one epoch",
		"judge polite is graded by a, which is also a candidate",
	} {
		if !strings.Contains(ws, want) {
			t.Errorf("warnings lack %q:\n%s", want, ws)
		}
	}
	for _, unwanted := range []string{`bucket "common"`, "target b samples", "judge ok"} {
		if strings.Contains(ws, unwanted) {
			t.Errorf("warnings wrongly mention %q:\n%s", unwanted, ws)
		}
	}
	run.Epochs = 3
	if ws := strings.Join(coverageWarnings(run, ci), "\n"); strings.Contains(ws, "temperature") {
		t.Errorf("temperature warned about with 3 epochs:\n%s", ws)
	}
}
