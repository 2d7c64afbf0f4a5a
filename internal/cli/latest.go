package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

// "latest" with a spec at hand.
//
// A RUN argument of "latest" is the run that started last. When the
// command has a spec — run's SPEC argument (with --resume latest), or
// --spec on rescore, report, gate, export and baseline export — "latest"
// is the newest run of that spec instead: the run that started last among
// those whose recorded spec name (the spec's name:, or its file name
// without the extension when it sets none; the spec column of assay runs)
// is the given spec's name. A store holding runs of several specs then
// resolves latest per spec, and a command fails (naming the spec) when no
// run of it is stored rather than picking another spec's run.

// addSpecSelectFlag adds --spec to a command whose RUN it selects.
func addSpecSelectFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "spec", "", "the spec whose runs RUN is of: latest is then the newest run of this spec, and a run ID of another spec is refused")
}

// specName loads a spec and returns the name its runs are recorded under.
func specName(g *Globals, path string) (string, error) {
	sp, err := spec.LoadWith(path, specOptions(g, nil))
	if err != nil {
		return "", err
	}
	return sp.Name, nil
}

// latestOf resolves ref for the spec named name: "latest" becomes the ID
// of the newest run of that spec; any other ref, or an empty name, is
// returned as it is.
func latestOf(ctx context.Context, st store.Store, ref, name string) (string, error) {
	if ref != "latest" || name == "" {
		return ref, nil
	}
	runs, err := st.ListRuns(ctx, 0)
	if err != nil {
		return "", err
	}
	for _, r := range runs { // newest first
		if r.Spec == name {
			return r.ID, nil
		}
	}
	return "", fmt.Errorf("latest run of spec %q: %w (the store has no run of it; assay runs lists the stored runs and their specs)", name, store.ErrNotFound)
}

// openRunOf is openRun for a command with a --spec selecting its run
// (specPath "" for none): latest is the newest run of that spec, and, when
// refuseOther, an explicit run of another spec is refused (rescore takes
// one: its --spec also says whose scorers to apply).
func openRunOf(ctx context.Context, g *Globals, what, ref, specPath string, refuseOther bool) (store.Store, *record.Run, error) {
	if specPath == "" {
		return openRun(ctx, g, what, ref)
	}
	name, err := specName(g, specPath)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: --spec: %w", what, err)
	}
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	id, err := latestOf(ctx, st, ref, name)
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	run, err := getRun(ctx, st, what, id)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	if refuseOther && run.Spec != name {
		st.Close()
		return nil, nil, fmt.Errorf("%s: run %s is a run of spec %q, not of %s (spec %q); give a run of it, or latest", what, run.ID, run.Spec, specPath, name)
	}
	return st, run, nil
}
