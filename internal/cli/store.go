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

// openRun opens the store and resolves a run reference (an ID, an ID
// prefix or latest). An error resolving it is prefixed with what (the
// command, e.g. "report: …"). The caller closes the store.
func openRun(ctx context.Context, g *Globals, what, ref string) (store.Store, *store.Run, error) {
	st, err := openStore(ctx, g)
	if err != nil {
		return nil, nil, err
	}
	run, err := st.GetRun(ctx, ref)
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	return st, run, nil
}

// openRunPair is openRun for the commands that take two runs, before and
// after.
func openRunPair(ctx context.Context, g *Globals, what, before, after string) (store.Store, *store.Run, *store.Run, error) {
	st, a, err := openRun(ctx, g, what, before)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := st.GetRun(ctx, after)
	if err != nil {
		st.Close()
		return nil, nil, nil, fmt.Errorf("%s: %w", what, err)
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
