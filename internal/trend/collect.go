package trend

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// Reader is what Collect reads: the runs and their verdicts, and the
// samples they scored (whose items carry each trace's weight and stratum).
type Reader interface {
	record.Reader
	Sample(ctx context.Context, id string) (*record.Sample, error)
}

// Source says which verdicts Collect reads.
type Source struct {
	// Spec keeps the runs of the spec with this name ("" every spec's).
	Spec string
	// Scorer is the scorer whose verdicts count ("" each run's primary).
	Scorer string
}

// UnknownScorerError is Collect's answer when no run read has a verdict
// of the scorer asked for: a usage error, naming the scorers there are.
type UnknownScorerError struct {
	Scorer string
	Known  []string
}

func (e *UnknownScorerError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("scorer %q: the score-traces runs have no verdicts at all", e.Scorer)
	}
	return fmt.Sprintf("scorer %q: no score-traces run has its verdicts; their scorers are %s", e.Scorer, strings.Join(e.Known, ", "))
}

// Collect reads the scored traces of every complete score-traces run
// (record.Run.Sample set; of src.Spec's when given) from the store, newest
// run first: each sampled trace (a case: its Tags' model, its sample item's
// weight and stratum, and its result's time) with the verdict of the run's latest complete scoring —
// src.Scorer's, or the primary scorer's. A trace several runs scored counts
// once, with the newest run's verdict (of the runs that have one). The
// Report returned carries what was read and left out; Compute fills it.
func Collect(ctx context.Context, r Reader, src Source) ([]Observation, *Report, error) {
	runs, err := r.ListRuns(ctx, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("listing runs: %w", err)
	}
	rep := &Report{Spec: src.Spec, Scorer: src.Scorer, Runs: []string{}, Scorers: []string{}}
	var obs []Observation
	seen := map[string]bool{}      // trace IDs with a verdict taken
	noVerdict := map[string]bool{} // trace IDs sampled without one (so far)
	known := map[string]bool{}     // every scorer of the runs read
	used := map[string]bool{}      // the scorers whose verdicts were taken
	incomplete := 0
	slices.SortStableFunc(runs, func(a, b record.Run) int { return b.Started.Compare(a.Started) })
	for _, run := range runs {
		if run.Sample == "" || (src.Spec != "" && run.Spec != src.Spec) {
			continue
		}
		if run.Status != record.StatusComplete {
			incomplete++
			continue
		}
		scoring, err := r.LatestScoring(ctx, run.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", run.ID, err)
		}
		if scoring == 0 {
			continue
		}
		names, err := r.ScorerNames(ctx, run.ID, scoring)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", run.ID, err)
		}
		for _, n := range names {
			known[n] = true
		}
		hash, err := r.ScoringScorersHash(ctx, run.ID, scoring)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", run.ID, err)
		}
		verdicts := map[string]record.Score{}
		err = r.Scores(ctx, run.ID, scoring, func(s record.Score) error {
			if (src.Scorer == "" && s.Primary) || (src.Scorer != "" && s.Scorer == src.Scorer) {
				verdicts[s.CaseID] = s
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: reading scores: %w", run.ID, err)
		}
		// A trace's weight and stratum are its sample's (a case's weight
		// is the cost of a wrong answer in an evaluation run).
		smp, err := r.Sample(ctx, run.Sample)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: reading its sample %s: %w", run.ID, run.Sample, err)
		}
		items := make(map[string]record.SampleItem, len(smp.Items))
		for _, it := range smp.Items {
			items[it.TraceID] = it
		}
		// A trace's time is its result's (score-traces stores the call's
		// start there); a case tag would make every trace its own slice.
		times := map[string]time.Time{}
		err = r.Results(ctx, run.ID, func(res record.Result) error {
			if _, ok := verdicts[res.CaseID]; ok {
				times[res.CaseID] = res.CreatedAt
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: reading results: %w", run.ID, err)
		}
		rep.Runs = append(rep.Runs, run.ID)
		err = r.Cases(ctx, run.ID, func(c record.Case) error {
			v, ok := verdicts[c.ID]
			switch {
			case seen[c.ID]:
				rep.Duplicates++
				return nil
			case !ok:
				noVerdict[c.ID] = true
				return nil
			}
			seen[c.ID] = true
			used[v.Scorer] = true
			t := times[c.ID]
			if t.IsZero() {
				rep.Untimed++
				return nil
			}
			model := c.Tags["model"]
			if model == "" {
				model = v.Target
			}
			it, ok := items[c.ID]
			if !ok {
				return fmt.Errorf("run %s: trace %s is not in its sample %s", run.ID, c.ID, run.Sample)
			}
			obs = append(obs, Observation{
				TraceID: c.ID, RunID: run.ID, Model: model, Time: t.UTC(),
				Sample: run.Sample, Stratum: it.Stratum, Weight: it.Weight, Pass: v.Pass,
				ScorersHash: hash,
			})
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: reading cases: %w", run.ID, err)
		}
	}
	for id := range noVerdict {
		if !seen[id] {
			rep.NoVerdict++
		}
	}
	for n := range used {
		rep.Scorers = append(rep.Scorers, n)
	}
	slices.Sort(rep.Scorers)
	if len(rep.Runs) == 0 && incomplete == 0 {
		return nil, nil, ErrNoTraces
	}
	if src.Scorer != "" && !known[src.Scorer] {
		var ks []string
		for k := range known {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return nil, nil, &UnknownScorerError{Scorer: src.Scorer, Known: ks}
	}
	if incomplete > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d score-traces runs not complete were left out", incomplete))
	}
	if rep.Untimed > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d traces had no readable time tag and were left out", rep.Untimed))
	}
	// Oldest first, so Compute's windows fill in time order.
	slices.SortStableFunc(obs, func(a, b Observation) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.TraceID, b.TraceID)
	})
	return obs, rep, nil
}

// Build reads the scored traces (Collect) and computes the report
// (Compute).
func Build(ctx context.Context, r Reader, src Source, o Options) (*Report, error) {
	obs, rep, err := Collect(ctx, r, src)
	if err != nil {
		return nil, err
	}
	return Compute(obs, o, rep)
}
