package cli

import (
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// specRedactor hides the value of every variable a target of sp (candidate
// or judge) names — its api_key_env (or the default key variable a hosted
// target without one reads) and each entry of an exec target's env: — read
// through getenv, the same lookup the providers use. Every provider built
// from sp is wrapped with it, so a key one program or server echoes is
// replaced whichever target's reply or error carries it. Values shorter
// than provider.MinSecretLen are not hidden.
func specRedactor(sp *spec.Spec, getenv func(string) string) *provider.Redactor {
	var secrets []provider.Secret
	seen := map[string]bool{}
	add := func(name string) {
		if name == "" || seen[name] {
			return
		}
		seen[name] = true
		if v := getenv(name); v != "" {
			secrets = append(secrets, provider.Secret{Name: name, Value: v})
		}
	}
	for i := range sp.Targets {
		t := &sp.Targets[i]
		add(t.APIKeyEnv)
		if t.APIKeyEnv == "" && t.BaseURL == "" {
			add(defaultKeyEnv[t.Provider])
		}
		for _, name := range t.Env {
			add(name)
		}
	}
	return provider.NewRedactor(secrets)
}
