package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/task"
)

// JoinOptions describe a target added to a complete run (assay import
// --into): its answers are made by Kit's one target, on Cases.
type JoinOptions struct {
	// Kit holds the new target (one, a target of the task's spec that the
	// run does not have) and the scorers.
	Kit *Kit
	// Cases are the cases the new target answers: some or all of the
	// run's (a blinded sample of --cases N answers N).
	Cases []*dataset.Case
	// CommitEvery bounds how long a finished result waits in the batched
	// writer (which, here, stages it in memory).
	CommitEvery time.Duration
}

// Joined is what JoinRun did.
type Joined struct {
	// Run is the run as stored now, the new target among its Targets.
	Run *record.Run
	// Results is how many results of the new target were stored.
	Results int
	// Scorings are the scorings the new target was scored in.
	Scorings []int
	// Interrupted: stopped before every answer was scored; nothing was
	// stored and the run is as it was.
	Interrupted bool
}

// JoinRefusedError is JoinRun's answer when the run cannot take the
// target: nothing was written.
type JoinRefusedError struct {
	RunID  string
	Reason string
}

func (e *JoinRefusedError) Error() string {
	return fmt.Sprintf("cannot add the target to run %s: %s", e.RunID, e.Reason)
}

// JoinRun adds a target to the complete run runID, as if the run had
// called it: the run must be of the task's dataset version and prompt, and
// its latest scoring made with the task's scorers; it must have one epoch,
// every one of opts.Cases, and no target of that name. The target's calls
// go through the run's lifecycle (its lease, the runner and its batched
// writer, the scorers) with the writes staged in memory; once every call
// is scored, the run's Targets and the results with their scores — in
// scoring 1 and in every later complete scoring made with the same scorers
// — are written, the results in one transaction. A failure or an
// interrupt before that leaves the run as it was; if the results cannot be
// stored, the Targets are put back.
func (e *Engine) JoinRun(ctx context.Context, t *task.Task, runID string, o JoinOptions, x ExecuteOptions) (Joined, error) {
	if o.Kit == nil || len(o.Kit.Targets) != 1 {
		return Joined{}, errors.New("JoinRun: the kit must hold exactly the target to add")
	}
	rec, err := e.Store.GetRun(ctx, runID)
	if err != nil {
		return Joined{}, err
	}
	name := o.Kit.Targets[0].Spec.Name
	scorings, err := e.joinable(ctx, t, rec, name, o)
	if err != nil {
		return Joined{}, err
	}
	if err := e.RequireNoWriter(ctx, "adding a target to "+rec.ID, rec); err != nil {
		return Joined{}, err
	}

	staged := &stagedStore{Store: e.Store}
	se := *e
	se.Store = staged
	cp := *rec
	cp.Targets, cp.Cases, cp.Epochs = []string{name}, len(o.Cases), 1
	r := &Run{e: &se, Record: &cp, Task: t, cases: CaseList(o.Cases), commitEvery: o.CommitEvery}
	defer r.Close()
	if r.lease, err = e.TakeLease(ctx, rec.ID, false); err != nil {
		return Joined{}, fmt.Errorf("adding a target to %s: %w", rec.ID, err)
	}
	if err := r.build(o.Kit, false); err != nil {
		return Joined{}, err
	}
	sum, err := r.Execute(ctx, x)
	if r.leaseLost {
		return Joined{}, fmt.Errorf("run %s: %w; nothing was added to it", rec.ID, store.ErrLeaseLost)
	}
	if err != nil {
		return Joined{}, fmt.Errorf("run %s: %w; nothing was added to it", rec.ID, err)
	}
	// An interrupt at any time before the write adds nothing, even one
	// that came after the last answer was scored.
	if sum.Interrupted || runner.Closed(x.Stop) || len(staged.results) < len(o.Cases) || ctx.Err() != nil {
		return Joined{Run: rec, Interrupted: true}, nil
	}

	// The scores of every scoring the target joins: the runner's scoring-1
	// verdicts, copied to each later scoring of the same scorers.
	var scores []record.Score
	for _, s := range scorings {
		for _, sc := range staged.scores {
			sc.Scoring = s
			scores = append(scores, sc)
		}
	}
	// Written whatever happens to ctx now: an interrupt must not split
	// the Targets from the results.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	now := *rec
	now.Targets = append(slices.Clone(rec.Targets), name)
	if err := e.Store.UpdateRun(wctx, &now); err != nil {
		return Joined{}, fmt.Errorf("run %s: %w; nothing was added to it", rec.ID, err)
	}
	if err := e.Store.PutResults(wctx, staged.results, scores); err != nil {
		if uerr := e.Store.UpdateRun(wctx, rec); uerr != nil {
			return Joined{}, fmt.Errorf("run %s: storing the results: %w; and putting its targets back: %v (its targets list %s, which has no results)", rec.ID, err, uerr, name)
		}
		return Joined{}, fmt.Errorf("run %s: storing the results: %w; nothing was added to it", rec.ID, err)
	}
	return Joined{Run: &now, Results: len(staged.results), Scorings: scorings}, nil
}

// joinable checks that run can take target name on o.Cases and returns the
// scorings the target is scored in.
func (e *Engine) joinable(ctx context.Context, t *task.Task, run *record.Run, name string, o JoinOptions) ([]int, error) {
	sp := t.Spec
	refuse := func(format string, args ...any) error {
		return &JoinRefusedError{RunID: run.ID, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case run.Status != record.StatusComplete:
		return nil, refuse("it is %s, not complete: finish it first (assay run --resume %s)", run.Status, run.ID)
	case run.Spec != sp.Name:
		return nil, refuse("it is a run of spec %q, not of %q (%s)", run.Spec, sp.Name, sp.File)
	case run.Sample != "":
		return nil, refuse("it scored the traffic sample %s, not the spec's dataset", run.Sample)
	case slices.Contains(run.Targets, name):
		return nil, refuse("it already has a target %s: store the answers under another --as", name)
	}
	if d := DatasetChanged(run, t.Dataset); d != "" {
		return nil, refuse("it measured another version of the dataset (%s): the answers are to this version's cases", d)
	}
	if ph := sp.PromptHash(); run.PromptHash != ph {
		return nil, refuse("it was made with another prompt (prompt hash %s, the spec's %s): the answers are to the prompt the spec renders now", Short(run.PromptHash), Short(ph))
	}
	if run.Epochs != 1 {
		return nil, refuse("it has %d epochs and the answers are one per case: import into a run of one epoch", run.Epochs)
	}
	if pw := o.Kit.Scorers.Pairwise(); len(pw) > 0 {
		return nil, refuse("the spec has pairwise judges (%s), which judge every target against the baseline once the run's results all exist: import without --into", strings.Join(pw, ", "))
	}
	latest, err := e.Store.LatestScoring(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	want := sp.ScorersHash()
	if h, err := e.Store.ScoringScorersHash(ctx, run.ID, latest); err != nil {
		return nil, err
	} else if h != want {
		return nil, refuse("its latest scoring (%d) was made with other scorers (scorers hash %s, the spec's %s): rescore it with this spec first (assay rescore %s), then import into it", latest, Short(h), Short(want), run.ID)
	}
	var scorings []int
	for s := 1; s <= latest; s++ {
		if s > 1 {
			if pending, err := e.Store.ScoringPending(ctx, run.ID, s); err != nil {
				return nil, err
			} else if pending {
				continue
			}
		}
		if h, err := e.Store.ScoringScorersHash(ctx, run.ID, s); err != nil {
			return nil, err
		} else if h == want {
			scorings = append(scorings, s)
		}
	}
	have := map[string]bool{}
	if err := e.Store.Cases(ctx, run.ID, func(c record.Case) error {
		have[c.ID] = true
		return nil
	}); err != nil {
		return nil, err
	}
	var missing []string
	for _, c := range o.Cases {
		if !have[c.ID] {
			missing = append(missing, fmt.Sprintf("%q", c.ID))
		}
	}
	if len(missing) > 0 {
		return nil, refuse("%d of the %d answered cases are not cases of the run (it measured %d), e.g. %s: import into a run of the whole dataset",
			len(missing), len(o.Cases), run.Cases, strings.Join(missing[:min(3, len(missing))], ", "))
	}
	return scorings, nil
}

// stagedStore keeps what the runner's writer commits in memory, for
// JoinRun to write at once; everything else is the store's.
type stagedStore struct {
	store.Store
	mu      sync.Mutex
	results []record.Result
	scores  []record.Score
}

func (s *stagedStore) PutResults(ctx context.Context, results []record.Result, scores []record.Score) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results = append(s.results, results...)
	s.scores = append(s.scores, scores...)
	return nil
}

func (s *stagedStore) ReplaceResults(ctx context.Context, results []record.Result, scores []record.Score) error {
	return errors.New("a staged run replaces no result")
}

func (s *stagedStore) PutScores(ctx context.Context, scores []record.Score) error {
	return errors.New("a staged run stores no later scoring")
}

func (s *stagedStore) ReplaceScores(ctx context.Context, scores []record.Score) error {
	return s.PutScores(ctx, scores)
}

// PutCases stores nothing: the run has the cases.
func (s *stagedStore) PutCases(ctx context.Context, cases []record.Case) error { return nil }

func (s *stagedStore) UpdateRun(ctx context.Context, r *record.Run) error {
	return errors.New("a staged run is not updated")
}
