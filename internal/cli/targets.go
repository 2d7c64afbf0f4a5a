package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/anthropic"
	"github.com/assay-eval/assay/internal/provider/exec"
	"github.com/assay-eval/assay/internal/provider/openai"
	"github.com/assay-eval/assay/internal/provider/replay"
	"github.com/assay-eval/assay/internal/runner"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

// defaultKeyEnv is the variable read when a hosted target names none.
var defaultKeyEnv = map[string]string{"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}

// apiKey reads the target's key from its api_key_file, else from the
// environment. A target with its own base_url and no api_key_env needs no
// key (local servers rarely check one); one whose base URL came from
// OPENAI_BASE_URL or ANTHROPIC_BASE_URL sends the default key variable's
// value when it is set and none otherwise. The key is returned to the
// caller only; it is never stored or printed.
func apiKey(sp *spec.Spec, i int, getenv func(string) string) (string, error) {
	t := &sp.Targets[i]
	if t.APIKeyFile != "" {
		return readKeyFile(sp, i)
	}
	name := t.APIKeyEnv
	if name == "" {
		if t.BaseURL != "" && t.BaseURLEnv == "" {
			return "assay-no-key", nil
		}
		name = defaultKeyEnv[t.Provider]
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

// candidateTargets builds the provider of each named target of sp (every
// name must be one), wrapped as buildProvider does. Spec problems (a key
// not set, an exec target's environment …) are collected so that all are
// reported at once; any other error stops.
func candidateTargets(sp *spec.Spec, names []string, g *Globals, st store.Store, noCache bool, closers *[]io.Closer) ([]runner.Target, spec.Problems, error) {
	var targets []runner.Target
	var problems spec.Problems
	for _, name := range names {
		i := slices.IndexFunc(sp.Targets, func(t spec.Target) bool { return t.Name == name })
		p, err := buildProvider(sp, i, g.Getenv, st, noCache, sp.Run.Retries, closers)
		if err != nil {
			var ps spec.Problems
			if errors.As(err, &ps) {
				problems = append(problems, ps...)
				continue
			}
			return nil, nil, err
		}
		targets = append(targets, runner.Target{Spec: &sp.Targets[i], Provider: p})
	}
	return targets, problems, nil
}

// buildProvider makes target i's provider and wraps it with the redaction
// of every secret the spec names (specRedactor), its time-out, limits,
// retries and (for hosted models) the response cache (refreshed, not read,
// under noCache). A provider
// that holds resources (replay keeps its file open) is added to closers.
func buildProvider(sp *spec.Spec, i int, getenv func(string) string, st store.Store, noCache bool, retries int, closers *[]io.Closer) (provider.Provider, error) {
	t := &sp.Targets[i]
	var p provider.Provider
	var err error
	cacheable := false
	switch t.Provider {
	case "openai", "anthropic":
		key, kerr := apiKey(sp, i, getenv)
		if kerr != nil {
			return nil, kerr
		}
		hc := httpClient(t.Limits.Concurrency)
		if t.Provider == "openai" {
			p, err = openai.New(t, key, hc)
		} else {
			p, err = anthropic.New(t, key, hc)
		}
		cacheable = true
	case "exec":
		if ps := execEnvProblems(sp, i, getenv); len(ps) > 0 {
			return nil, ps
		}
		p, err = exec.New(t, sp.Dir, execOptions(sp, getenv))
	case "replay":
		p, err = replay.New(t, sp.Dir)
	default:
		return nil, fmt.Errorf("target %s: unknown provider %q", t.Name, t.Provider)
	}
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name, err)
	}
	if c, ok := p.(io.Closer); ok {
		*closers = append(*closers, c)
	}
	o := provider.WrapOptions{
		Timeout: sp.TargetTimeout(t),
		Limits:  t.Limits,
		Retry:   provider.RetryOptions{Max: retries},
		Redact:  specRedactor(sp, getenv),
	}
	if cacheable {
		// --no-cache skips the read but stores the fresh reply, so a later
		// cached call gets it rather than the stale one it bypassed.
		o.Cache = st
		o.CacheRefresh = noCache
		o.Scope = provider.CacheScope{Provider: t.Provider, BaseURL: t.BaseURL, Model: t.Model, Target: t.Name, Headers: t.Headers}
	}
	if t.Provider == "replay" {
		// Recorded outputs answer at once and never fail transiently.
		o.Retry.Max = 0
	}
	return provider.Wrap(p, o), nil
}

// httpClient is tuned for many calls in flight to one host: without enough
// idle connections per host, every call past the second would dial anew.
func httpClient(concurrency int) *http.Client {
	if concurrency < 8 {
		concurrency = 8
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4 * concurrency,
		MaxIdleConnsPerHost:   2 * concurrency,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: tr}
}
