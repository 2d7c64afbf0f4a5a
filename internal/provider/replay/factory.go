package replay

import (
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/spec"
)

// Info describes provider replay to the spec's checks: recorded outputs
// (replay:), never retried (they answer at once and never fail
// transiently), never a judge (they are not verdicts).
func Info() spec.ProviderInfo {
	return spec.ProviderInfo{
		Name: "replay", NoRetry: true, NoJudge: "returns recorded outputs, not verdicts",
		Keys: []string{"replay"}, Required: []string{"replay"},
	}
}

// Factory registers provider replay (provider/builtin).
func Factory() registry.Factory {
	return registry.Factory{Info: Info(), New: func(t *spec.Target, env registry.Env) (provider.Provider, error) {
		p, err := New(t, env.SpecDir)
		if err != nil {
			return nil, err
		}
		if env.Now != nil {
			p.now = env.Now
		}
		return p, nil
	}}
}
