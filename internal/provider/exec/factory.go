package exec

import (
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/spec"
)

// Info describes provider exec to the spec's checks: the user's program
// (command:, given the variables env: names), able to judge, not cached.
func Info() spec.ProviderInfo {
	return spec.ProviderInfo{
		Name: "exec", CanJudge: true,
		Keys: []string{"command", "env"}, Required: []string{"command"},
	}
}

// Factory registers provider exec (provider/builtin). Each call runs in its
// own directory under assay's TMPDIR, with the named variables from
// assay's environment, and never sees the dataset's expected field.
func Factory() registry.Factory {
	return registry.Factory{Info: Info(), New: func(t *spec.Target, env registry.Env) (provider.Provider, error) {
		p, err := New(t, env.SpecDir, Options{Getenv: env.Getenv, TempDir: env.TempDir, Withhold: env.Withhold, Now: env.Now})
		if err != nil {
			return nil, err
		}
		return p, nil
	}}
}
