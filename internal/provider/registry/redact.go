package registry

import (
	"maps"
	"slices"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// Redactor hides the value of every variable a target of sp (candidate
// or judge) names — its api_key_env (or the default key variable a hosted
// target without one reads), each entry of an exec target's env:, each
// variable interpolated into a header and the header's whole value, each
// variable an agent's tool handler names in env: — and the key in its
// api_key_file, read through getenv, the same lookup the
// providers use. Every provider built from sp is wrapped with it, so a key
// one program or server echoes is replaced whichever target's reply or
// error carries it. Values shorter than provider.MinSecretLen are not
// hidden.
func (r *Registry) Redactor(sp *spec.Spec, getenv func(string) string) *provider.Redactor {
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
		if t.APIKeyEnv == "" && t.APIKeyFile == "" && (t.BaseURL == "" || t.BaseURLEnv != "") {
			if f, ok := r.Lookup(t.Provider); ok {
				add(f.Info.KeyEnv)
			}
		}
		for _, name := range t.Env {
			add(name)
		}
		// A header value taken from the environment is a secret like a
		// key: each variable in it, and the whole value as sent.
		for _, name := range t.HeaderVars {
			add(name)
		}
		if len(t.HeaderVars) > 0 {
			for _, h := range t.HeaderNames {
				if v := t.Headers[h]; v != "" && !seen["header "+h+"="+v] {
					seen["header "+h+"="+v] = true
					secrets = append(secrets, provider.Secret{Name: "header " + h, Value: v})
				}
			}
		}
		if t.APIKeyFile != "" {
			if key, err := readKeyFile(sp, i); err == nil {
				secrets = append(secrets, provider.Secret{Name: "api_key_file", Value: key})
			}
		}
	}
	// An agent's exec tool handlers get the variables their env: names:
	// a handler may echo one into its result, sent to the model and stored.
	if a := sp.Agent; a != nil {
		for _, tool := range slices.Sorted(maps.Keys(a.Tools)) {
			for _, name := range a.Tools[tool].Env {
				add(name)
			}
		}
	}
	return provider.NewRedactor(secrets)
}
