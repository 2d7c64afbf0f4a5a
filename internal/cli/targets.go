package cli

import (
	"io"
	"slices"

	"github.com/assay-eval/assay/internal/provider/builtin"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

// providers is the registry targets are built from: Globals.Providers,
// else assay's own (provider/builtin).
func (g *Globals) providers() *registry.Registry {
	if g.Providers == nil {
		return builtin.Registry()
	}
	return g.Providers
}

// buildOptions wrap a spec's providers: keys from g's environment, the
// store as the response cache (refreshed, not read, under noCache), the
// spec's run.retries.
func buildOptions(g *Globals, sp *spec.Spec, st store.Store, noCache bool) registry.BuildOptions {
	o := registry.BuildOptions{Getenv: g.Getenv, NoCache: noCache, Retries: sp.Run.Retries, Now: g.Now}
	if st != nil {
		o.Cache = st
	}
	return o
}

// candidateTargets builds the provider of each named target of sp (every
// name must be one) through the registry (registry.BuildEach). Spec
// problems are collected so that all are reported at once; any other
// error stops.
func candidateTargets(sp *spec.Spec, names []string, g *Globals, st store.Store, noCache bool, closers *[]io.Closer) ([]runner.Target, spec.Problems, error) {
	ps, problems, err := g.providers().BuildEach(sp, names, buildOptions(g, sp, st, noCache), closers)
	if err != nil || len(problems) > 0 {
		return nil, problems, err
	}
	targets := make([]runner.Target, len(names))
	for k, name := range names {
		i := slices.IndexFunc(sp.Targets, func(t spec.Target) bool { return t.Name == name })
		targets[k] = runner.Target{Spec: &sp.Targets[i], Provider: ps[k]}
	}
	return targets, nil, nil
}
