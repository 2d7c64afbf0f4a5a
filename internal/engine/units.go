package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/task"
)

// Units is a stored run opened to execute some of its units on behalf of
// the process that holds its lease (assay worker running the jobs
// `assay run --distributed` enqueued): it takes no lease, records no
// cases and sets no status — the submitter does all three — and writes
// results through the same runner, scorers and duplicate-free PutResults
// as a local run.
type Units struct {
	e      *Engine
	Record *record.Run
	// Task holds the run's spec, prompt and scorers (no dataset: the
	// cases come with the units).
	Task *task.Task
	// FromFile says the spec was read from its file (the run's spec path,
	// with the run's overlays, hashing as the run's), not rebuilt from the
	// resolved spec the run stored.
	FromFile bool
	Kit      Kit
	closers  Closers
}

// OpenUnits opens the stored run rec for executing its units. The spec
// is read from the run's spec file when this machine has it and it is
// unchanged (its hash is the run's), else rebuilt from the resolved spec
// the run stored, which lacks header values (never stored): a target
// that sends headers then needs the spec file. Files the spec names by
// path (an exec program, a replay file, a file:// schema or rubric, a
// tool handler) must be at the same paths either way. noCache calls
// every target anew (run --no-cache), storing the fresh replies.
func (e *Engine) OpenUnits(ctx context.Context, rec *record.Run, so spec.Options, noCache bool) (*Units, error) {
	sp, fromFile := e.unitsSpec(rec, so)
	if sp == nil {
		stored, err := spec.Stored(rec.Config, rec.SpecPath)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", rec.ID, err)
		}
		for _, t := range stored.Targets {
			if len(t.HeaderNames) > 0 && slices.Contains(rec.Targets, t.Name) {
				return nil, fmt.Errorf("run %s: target %s sends headers, whose values a run never stores: this worker needs the spec file %s (unchanged) to call it", rec.ID, t.Name, rec.SpecPath)
			}
		}
		sp = stored
	}
	tmpl, err := task.CompilePrompt(sp)
	if err != nil {
		return nil, fmt.Errorf("run %s: the prompt: %w", rec.ID, err)
	}
	u := &Units{e: e, Record: rec, Task: &task.Task{Spec: sp, Prompt: tmpl}, FromFile: fromFile}
	r := &Run{e: e, Record: rec, Task: u.Task}
	if err := r.build(nil, noCache); err != nil {
		r.closers.Close()
		return nil, err
	}
	u.Kit, u.closers = r.Kit, r.closers
	u.Task.Scorers = r.Kit.Scorers
	return u, nil
}

// unitsSpec is the run's spec read from its file with the run's overlays,
// when that reads and hashes as the run's; nil otherwise.
func (e *Engine) unitsSpec(rec *record.Run, so spec.Options) (*spec.Spec, bool) {
	if rec.SpecPath == "" || rec.SpecHash == "" {
		return nil, false
	}
	var c struct {
		Overlays []string `json:"overlays"`
	}
	if json.Unmarshal(rec.Config, &c) != nil {
		return nil, false
	}
	so.Overlays = c.Overlays
	sp, err := spec.LoadWith(rec.SpecPath, so)
	if err != nil || sp == nil || sp.Hash != rec.SpecHash {
		return nil, false
	}
	return sp, true
}

// Close closes the providers the units built.
func (u *Units) Close() { u.closers.Close() }

// Execute calls target on every epoch of the given cases except the keys
// in done, through the runner (its workers, the target's wrapped
// provider — with the engine's shared limiter when it has one —, its
// scorers, one batched writer committing with PutResults, which never
// stores a key twice). Stop and ctx act as in Run.Execute. The run's
// pairwise judges are not run: the submitter runs them once every unit
// is stored.
func (u *Units) Execute(ctx context.Context, target string, cases []*dataset.Case, done map[record.Key]struct{}, o ExecuteOptions) (Summary, error) {
	i := slices.IndexFunc(u.Kit.Targets, func(t runner.Target) bool { return t.Spec.Name == target })
	if i < 0 {
		return Summary{}, fmt.Errorf("run %s has no target %q", u.Record.ID, target)
	}
	t := u.Task
	sum, err := runner.Run(ctx, runner.Options{
		RunID:      u.Record.ID,
		Targets:    u.Kit.Targets[i : i+1],
		Epochs:     u.Record.Epochs,
		Cases:      CaseList(cases),
		Render:     func(c *dataset.Case) ([]provider.Message, error) { return t.Prompt.Render(c.Vars) },
		Offer:      runner.OfferOf(t.Spec),
		Agent:      u.Kit.Agent,
		Score:      u.Kit.Scorers.Score,
		Store:      u.e.Store,
		Done:       done,
		Stop:       o.Stop,
		Progress:   o.Progress,
		Now:        u.e.Now,
		Sequential: true,
	})
	if err == nil && len(sum.Unavailable) > 0 {
		err = &UnavailableError{Target: target, Reason: sum.Unavailable[0].Reason}
	}
	return sum, err
}

// UnavailableError is a target given up while executing units (its
// circuit breaker tripped): the units not made stay missing.
type UnavailableError struct{ Target, Reason string }

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("target %s is unavailable: %s", e.Target, e.Reason)
}

// IsUnavailable reports whether err is a target given up.
func IsUnavailable(err error) bool {
	var ue *UnavailableError
	return errors.As(err, &ue)
}

// Cases streams the run's cases (the dataset's first Record.Cases, or the
// cases Start was given).
func (r *Run) Cases() Cases { return r.cases }

// ExecuteElsewhere stands for Execute when other processes execute the
// run's units (assay worker, from the jobs `run --distributed` enqueued):
// wait blocks until they are done or stopped and returns what was stored
// during this invocation (Stored, Errors, spend; Interrupted when
// stopped). Then, when every unit is stored, the pairwise judges run here
// as in Execute. A lease another process breaks cancels wait's context.
// Finish records the status from the results stored.
func (r *Run) ExecuteElsewhere(ctx context.Context, wait func(ctx context.Context) (Summary, error)) (Summary, error) {
	r.executed = true
	leaseCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if r.lease != nil {
		go func() {
			select {
			case <-r.lease.Lost():
				cancel(store.ErrLeaseLost)
			case <-leaseCtx.Done():
			}
		}()
	}
	sum, err := wait(leaseCtx)
	if err == nil && !sum.Interrupted && sum.Stored+len(r.Done) >= r.Total() && len(r.Kit.Scorers.Pairwise()) > 0 {
		err = r.e.storePairs(leaseCtx, r.Kit.Scorers, r.cases, r.Record.ID, 1, 8, nil)
	}
	r.leaseLost = errors.Is(context.Cause(leaseCtx), store.ErrLeaseLost)
	r.sum, r.execErr = sum, err
	return sum, err
}
