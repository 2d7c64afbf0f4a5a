package anthropic

import (
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/spec"
)

// Info describes provider anthropic to the spec's checks: a hosted model
// (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) without a seed, cached, able to
// judge.
func Info() spec.ProviderInfo {
	return spec.ProviderInfo{
		Name: "anthropic", Hosted: true, KeyEnv: "ANTHROPIC_API_KEY", BaseURLEnv: "ANTHROPIC_BASE_URL",
		Cacheable: true, CanJudge: true, NoSeed: "the Anthropic Messages API has no seed",
		Keys: []string{"headers", "api_key_file"}, Required: []string{"model"},
	}
}

// Factory registers provider anthropic (provider/builtin).
func Factory() registry.Factory {
	return registry.Factory{Info: Info(), New: func(t *spec.Target, env registry.Env) (provider.Provider, error) {
		p, err := New(t, env.Key, env.HTTP)
		if err != nil {
			return nil, err
		}
		if env.Now != nil {
			p.now = env.Now
		}
		return p, nil
	}}
}
