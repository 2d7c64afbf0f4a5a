package registry

import (
	"fmt"

	"github.com/assay-eval/assay/internal/spec"
)

// apiKey reads hosted target i's key from its api_key_file, else from the
// environment. A target with its own base_url and no api_key_env needs no
// key (local servers rarely check one); one whose base URL came from the
// provider's base-URL variable (OPENAI_BASE_URL, say) sends the default key
// variable's value when it is set and none otherwise. The key is returned
// to the caller only; it is never stored or printed.
func apiKey(sp *spec.Spec, i int, info spec.ProviderInfo, getenv func(string) string) (string, error) {
	t := &sp.Targets[i]
	if t.APIKeyFile != "" {
		return readKeyFile(sp, i)
	}
	name := t.APIKeyEnv
	if name == "" {
		if t.BaseURL != "" && t.BaseURLEnv == "" {
			return "assay-no-key", nil
		}
		name = info.KeyEnv
		if t.BaseURLEnv != "" && getenv(name) == "" {
			return "assay-no-key", nil
		}
	}
	key := getenv(name)
	if key == "" {
		path := fmt.Sprintf("targets[%d].api_key_env", i)
		if t.APIKeyEnv == "" {
			path = fmt.Sprintf("targets[%d]", i)
		}
		return "", spec.Problems{sp.Problemf(path, "export it, or set api_key_env to the variable that holds the key",
			"target %s: environment variable %s is not set", t.Name, showEnvName(name))}
	}
	if flaw := spec.KeyValueFlaw(key); flaw != "" {
		// An HTTP header cannot carry it: every call would fail. Said
		// before any call, the key shown masked.
		path := fmt.Sprintf("targets[%d].api_key_env", i)
		if t.APIKeyEnv == "" {
			path = fmt.Sprintf("targets[%d]", i)
		}
		return "", keyFlawError{spec.Problems{sp.Problemf(path, "set the variable to the key alone: a key read from a file or pasted with echo often ends with a newline",
			"target %s: the key in environment variable %s %s: %s", t.Name, showEnvName(name), flaw, spec.MaskSecret(key))}}
	}
	return key, nil
}

// keyFlawError is a key that is set but that no call could send (see
// spec.KeyValueFlaw): a problem for validate too, where a key not set is
// only a warning.
type keyFlawError struct{ ps spec.Problems }

func (e keyFlawError) Error() string { return e.ps.Error() }
func (e keyFlawError) Unwrap() error { return e.ps }

// showEnvName is a variable name for a message; one that looks like a
// pasted secret (spec.Load reports it) is masked, never shown.
func showEnvName(name string) string {
	if spec.LooksLikeSecret(name) {
		return spec.MaskSecret(name)
	}
	return name
}

// envProblems reports each variable target i names in env: (a provider
// that reads env:, exec) that is unset (or empty) in assay's environment,
// located at the entry. It names the variable, never a value. run stops on
// these before any call; validate warns.
func envProblems(sp *spec.Spec, i int, info spec.ProviderInfo, getenv func(string) string) spec.Problems {
	t := &sp.Targets[i]
	if !info.Reads("env") {
		return nil
	}
	var ps spec.Problems
	for j, name := range t.Env {
		if getenv(name) == "" {
			ps = append(ps, sp.Problemf(fmt.Sprintf("targets[%d].env[%d]", i, j),
				"export it before running assay, or remove it from env",
				"target %s: environment variable %s is not set", t.Name, showEnvName(name)))
		}
	}
	return ps
}
