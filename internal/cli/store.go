package cli

import (
	"context"
	"fmt"

	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// openStore opens the store at g.DB.
func openStore(ctx context.Context, g *Globals) (store.Store, error) {
	db, err := sqlite.Open(ctx, g.DB)
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", g.DB, err)
	}
	return db, nil
}

// openExistingStore opens the store at g.DB for a command that reads runs:
// it never creates one ("no store here" when there is none), and a store on
// a read-only mount or CI cache opens read-only.
func openExistingStore(ctx context.Context, g *Globals) (store.Store, error) {
	db, err := sqlite.OpenExisting(ctx, g.DB)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// openRun opens an existing store and resolves a run reference (an ID, an
// ID prefix or latest). An error resolving it is prefixed with what (the
// command, e.g. "report: …"). The caller closes the store.
func openRun(ctx context.Context, g *Globals, what, ref string) (store.Store, *store.Run, error) {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	run, err := getRun(ctx, st, what, ref)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, run, nil
}

// getRun resolves a run reference for a command that reads the run, and
// refuses a run some of whose results reference a case the store has no
// row for (a run killed while recording its cases): slices, expected values
// and weights come from the case rows, so anything read from it would cover
// only part of the cases without saying so. `assay run --resume` records
// the missing cases. Errors are prefixed with what.
func getRun(ctx context.Context, st store.Store, what, ref string) (*store.Run, error) {
	run, err := st.GetRun(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	n, err := st.ResultsWithoutCase(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if n > 0 {
		return nil, fmt.Errorf("%s: run %s has %d results whose cases were never recorded (the run was stopped while storing its cases); record them with: assay run %s --resume %s",
			what, run.ID, n, run.SpecPath, run.ID)
	}
	return run, nil
}

// openRunPair is openRun for the commands that take two runs, before and
// after.
func openRunPair(ctx context.Context, g *Globals, what, before, after string) (store.Store, *store.Run, *store.Run, error) {
	st, a, err := openRun(ctx, g, what, before)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := getRun(ctx, st, what, after)
	if err != nil {
		st.Close()
		return nil, nil, nil, err
	}
	return st, a, b, nil
}

// requireComplete refuses a run that did not finish (interrupted or failed)
// unless allowed: it measured only some cases, so a verdict or a baseline
// made of it would stand for cases it never saw.
func requireComplete(what string, run *store.Run, allow bool) error {
	if run.Status == store.StatusComplete || allow {
		return nil
	}
	return fmt.Errorf("%s %s is %s, not complete: it did not measure every case; finish it (assay run SPEC --resume %s) or pass --allow-incomplete to use the results it stored", what, run.ID, run.Status, run.ID)
}

// requireScoring refuses an explicitly chosen scoring that is pending: a
// rescore that is still writing it, or was stopped before it finished.
// (Scoring 0, the latest, never picks a pending scoring.)
func requireScoring(ctx context.Context, st store.Store, what string, run *store.Run, scoring int) error {
	if scoring == 0 {
		return nil
	}
	pending, err := st.ScoringPending(ctx, run.ID, scoring)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if pending {
		return fmt.Errorf("%s: scoring %d of run %s is incomplete (its rescore is running or was stopped); rescore again (assay rescore %s) or pick a complete scoring", what, scoring, run.ID, run.ID)
	}
	return nil
}
