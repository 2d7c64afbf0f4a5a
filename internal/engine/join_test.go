package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

// failingPut is a store whose PutResults fails: the disk filled up just
// as the joined target's results were written.
type failingPut struct{ store.Store }

func (failingPut) PutResults(context.Context, []record.Result, []record.Score) error {
	return errors.New("disk full")
}

// JoinRun adds a target to a complete run whole or not at all: when its
// results cannot be written, the run keeps its targets, results and
// scores as they were, and its lease is free; when they can, the target
// has one result per case given, scored in scoring 1.
func TestJoinRunWholeOrNothing(t *testing.T) {
	const n = 12
	v := setup(t, n)
	ctx := context.Background()
	e := v.engine()
	run, err := e.Start(ctx, v.task, engine.StartOptions{Targets: []string{"fake"}, Epochs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Execute(ctx, engine.ExecuteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	run.Close()
	id := run.Record.ID

	// The vendor answers the first 5 cases, every one right.
	sp := v.task.Spec
	sp.Targets = append(sp.Targets, spec.Target{Name: "vendor", Provider: "blind-import", Limits: spec.Limits{Concurrency: 2}})
	var cases []*dataset.Case
	if err := engine.DatasetCases(v.task, 5)(func(c *dataset.Case) error { cases = append(cases, c); return nil }); err != nil {
		t.Fatal(err)
	}
	vendor := provider.Func(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
		return &provider.Response{Text: "other", Attempts: 1}, nil
	})
	var closers engine.Closers
	defer closers.Close()
	set, err := e.Scorers(sp, false, &closers)
	if err != nil {
		t.Fatal(err)
	}
	kit := &engine.Kit{Targets: []runner.Target{{Spec: &sp.Targets[len(sp.Targets)-1], Provider: vendor}}, Scorers: set}

	bad := *e
	bad.Store = failingPut{v.st}
	_, err = bad.JoinRun(ctx, v.task, id, engine.JoinOptions{Kit: kit, Cases: cases}, engine.ExecuteOptions{})
	if err == nil || !strings.Contains(err.Error(), "disk full; nothing was added to it") {
		t.Fatalf("JoinRun over a failing store: %v", err)
	}
	after, err := v.st.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after.Targets, []string{"fake"}) || len(results(t, v.st, id)) != n {
		t.Errorf("after a failed join: targets %q, %d results; want [fake], %d", after.Targets, len(results(t, v.st, id)), n)
	}
	if sc, _ := scoresOf(t, v.st, id, 1); sc != n {
		t.Errorf("after a failed join: %d scores, want %d", sc, n)
	}
	if l, err := v.st.GetLease(ctx, id); err != nil || l != nil {
		t.Errorf("lease after a failed join: %v, %v; want released", l, err)
	}

	j, err := e.JoinRun(ctx, v.task, id, engine.JoinOptions{Kit: kit, Cases: cases}, engine.ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Results != 5 || !slices.Equal(j.Scorings, []int{1}) || !slices.Equal(j.Run.Targets, []string{"fake", "vendor"}) {
		t.Errorf("joined %+v", j)
	}
	var vendorResults int
	for _, r := range results(t, v.st, id) {
		if r.Target == "vendor" {
			vendorResults++
		}
	}
	// The vendor answers "other": right only on case c3 (expected other).
	if sc, passed := scoresOf(t, v.st, id, 1); vendorResults != 5 || sc != n+5 || passed != (n-n/3)+1 {
		t.Errorf("after the join: %d vendor results, %d scores, %d passed; want 5, %d, %d", vendorResults, sc, passed, n+5, n-n/3+1)
	}
}
