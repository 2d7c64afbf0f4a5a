package cli

import (
	"fmt"
	"io"
	"slices"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

// judgeProviders returns the lookup the scorer package uses to reach a judge
// target: built once per target, wrapped like a candidate (time-out, limits,
// retries, response cache). A judge that cannot be built (a key not set) is
// reported through perr.
func judgeProviders(sp *spec.Spec, g *Globals, st store.Store, noCache bool, closers *[]io.Closer, perr *error) func(string) (provider.Provider, spec.Target, error) {
	built := map[string]provider.Provider{}
	return func(name string) (provider.Provider, spec.Target, error) {
		i := slices.IndexFunc(sp.Targets, func(t spec.Target) bool { return t.Name == name })
		if i < 0 {
			return nil, spec.Target{}, fmt.Errorf("judge target %q is not defined", name)
		}
		if p, ok := built[name]; ok {
			return p, sp.Targets[i], nil
		}
		p, err := buildProvider(sp, i, g.Getenv, st, noCache, sp.Run.Retries, closers)
		if err != nil {
			if *perr == nil {
				*perr = err
			}
			return nil, sp.Targets[i], err
		}
		built[name] = p
		return p, sp.Targets[i], nil
	}
}
