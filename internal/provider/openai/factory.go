package openai

import (
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/spec"
)

// Info describes provider openai to the spec's checks: a hosted model
// (OPENAI_API_KEY, OPENAI_BASE_URL), cached, able to judge.
func Info() spec.ProviderInfo {
	return spec.ProviderInfo{
		Name: "openai", Hosted: true, KeyEnv: "OPENAI_API_KEY", BaseURLEnv: "OPENAI_BASE_URL",
		Cacheable: true, CanJudge: true,
		Keys: []string{"headers", "api_key_file"}, Required: []string{"model"},
	}
}

// Factory registers provider openai (provider/builtin).
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
