// Package registry owns how a spec's target becomes a working provider: the
// list of registered providers (each a Factory: its description for the
// spec's checks, spec.ProviderInfo, and a constructor), the target's key
// (api_key_env, api_key_file or the provider's default variable), the
// variables an exec-like target is given, the redaction of every secret the
// spec names, and the standard wrappers (time-out, limits, retries, the
// response cache for cacheable providers). Registries are built explicitly
// (provider/builtin has assay's own); there is no package-level list.
// It must not import the runner, scorer or store.
package registry

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// Env is what a constructor gets besides its target.
type Env struct {
	// SpecDir is the spec's directory: relative paths resolve against it.
	SpecDir string
	// Key is a hosted target's key ("" for other providers, or a local
	// server that needs none: then "assay-no-key").
	Key string
	// HTTP is a client tuned for the target's concurrency (hosted
	// providers only; nil otherwise).
	HTTP *http.Client
	// Getenv reads assay's own environment.
	Getenv func(string) string
	// TempDir is assay's TMPDIR ("" for the system's).
	TempDir string
	// Withhold names case fields never sent to the target (the expected
	// answer).
	Withhold []string
	// Now is the process's one clock (cli's Globals.Now), never nil. A
	// provider measures a reply's latency and time to first token as the
	// difference of two readings: monotonic with time.Now (Go's readings
	// carry the monotonic clock), exact with a test's fake clock.
	Now func() time.Time
}

// Factory is one registered provider.
type Factory struct {
	Info spec.ProviderInfo
	New  func(t *spec.Target, env Env) (provider.Provider, error)
}

// Registry is a set of providers by name, in registration order.
type Registry struct {
	fs []Factory
}

// New registers fs in order. A name registered twice, or a factory without
// a name or constructor, is a programming error and panics.
func New(fs ...Factory) *Registry {
	r := &Registry{}
	for _, f := range fs {
		if f.Info.Name == "" || f.New == nil {
			panic("registry: a provider needs a name and a constructor")
		}
		if _, dup := r.Lookup(f.Info.Name); dup {
			panic("registry: provider " + f.Info.Name + " registered twice")
		}
		r.fs = append(r.fs, f)
	}
	return r
}

// Lookup returns the provider registered as name.
func (r *Registry) Lookup(name string) (Factory, bool) {
	for _, f := range r.fs {
		if f.Info.Name == name {
			return f, true
		}
	}
	return Factory{}, false
}

// Infos describes every registered provider, in registration order: what
// spec.Options.Providers takes.
func (r *Registry) Infos() []spec.ProviderInfo {
	out := make([]spec.ProviderInfo, len(r.fs))
	for i, f := range r.fs {
		out[i] = f.Info
	}
	return out
}

// Names are the registered providers' names, in registration order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.fs))
	for i, f := range r.fs {
		out[i] = f.Info.Name
	}
	return out
}

// BuildOptions say how Build wraps a provider.
type BuildOptions struct {
	// Getenv reads assay's environment (keys, env: variables, TMPDIR).
	Getenv func(string) string
	// Cache is the response cache (the store) for cacheable providers; nil
	// disables it.
	Cache provider.Cache
	// NoCache (--no-cache) skips the cache's read but stores the fresh
	// reply, so a later cached call gets it rather than the stale one.
	NoCache bool
	// Retries is the number of retries after the first attempt
	// (run.retries).
	Retries int
	// Now is the clock providers read (Env.Now); nil means time.Now.
	Now func() time.Time
	// Limiter, when set, gives a target's limiter shared by every process
	// calling it (assay worker), in place of the in-process one; nil for
	// a target keeps the in-process one.
	Limiter func(t *spec.Target) provider.SharedLimiter
}

func (o BuildOptions) getenv(name string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(name)
}

// Build makes target name's provider and wraps it with the redaction of
// every secret the spec names, its time-out, limits, retries and (for
// cacheable providers) the response cache. A provider that holds
// resources (replay keeps its file open) is added to closers. Problems of
// the spec or environment (a key not set, a variable env: names unset)
// come back as spec.Problems.
func (r *Registry) Build(sp *spec.Spec, name string, o BuildOptions, closers *[]io.Closer) (provider.Provider, error) {
	i := slices.IndexFunc(sp.Targets, func(t spec.Target) bool { return t.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("no target named %q", name)
	}
	t := &sp.Targets[i]
	f, ok := r.Lookup(t.Provider)
	if !ok {
		return nil, fmt.Errorf("target %s: unknown provider %q (registered providers are: %s)", t.Name, t.Provider, strings.Join(r.Names(), ", "))
	}
	env := Env{SpecDir: sp.Dir, Getenv: o.Getenv, TempDir: o.getenv("TMPDIR"), Now: o.Now}
	if env.Now == nil {
		env.Now = time.Now
	}
	if sp.Dataset.Expected != "" {
		env.Withhold = []string{sp.Dataset.Expected}
	}
	if f.Info.Hosted {
		key, err := apiKey(sp, i, f.Info, o.getenv)
		if err != nil {
			return nil, err
		}
		env.Key, env.HTTP = key, HTTPClient(t.Limits.Concurrency)
	}
	if ps := envProblems(sp, i, f.Info, o.getenv); len(ps) > 0 {
		return nil, ps
	}
	p, err := f.New(t, env)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name, err)
	}
	if c, ok := p.(io.Closer); ok {
		*closers = append(*closers, c)
	}
	w := provider.WrapOptions{
		Timeout: sp.TargetTimeout(t),
		Limits:  provider.Limits(t.Limits),
		Retry:   provider.RetryOptions{Max: o.Retries},
		Redact:  r.Redactor(sp, o.getenv),
	}
	if f.Info.Cacheable && o.Cache != nil {
		w.Cache = o.Cache
		w.CacheRefresh = o.NoCache
		w.Scope = provider.CacheScope{Provider: t.Provider, BaseURL: t.BaseURL, Model: t.Model, Target: t.Name, Headers: t.Headers}
	}
	if f.Info.NoRetry {
		w.Retry.Max = 0
	}
	if o.Limiter != nil {
		w.Shared = o.Limiter(t)
	}
	return provider.Wrap(p, w), nil
}

// BuildEach builds the provider of each named target (every name must be
// one), in order. Spec problems (a key not set, an exec target's
// environment …) are collected so that all are reported at once; any other
// error stops.
func (r *Registry) BuildEach(sp *spec.Spec, names []string, o BuildOptions, closers *[]io.Closer) ([]provider.Provider, spec.Problems, error) {
	var out []provider.Provider
	var problems spec.Problems
	for _, name := range names {
		p, err := r.Build(sp, name, o, closers)
		if err != nil {
			var ps spec.Problems
			if errors.As(err, &ps) {
				problems = append(problems, ps...)
				out = append(out, nil)
				continue
			}
			return nil, nil, err
		}
		out = append(out, p)
	}
	return out, problems, nil
}

// Judges returns the lookup the scorer package uses to reach a judge
// target: built once per target, wrapped like a candidate (time-out,
// limits, retries, response cache). A judge that cannot be built (a key not
// set) is reported through perr, the first such error kept.
func (r *Registry) Judges(sp *spec.Spec, o BuildOptions, closers *[]io.Closer, perr *error) func(string) (provider.Provider, spec.Target, error) {
	built := map[string]provider.Provider{}
	return func(name string) (provider.Provider, spec.Target, error) {
		i := slices.IndexFunc(sp.Targets, func(t spec.Target) bool { return t.Name == name })
		if i < 0 {
			return nil, spec.Target{}, fmt.Errorf("judge target %q is not defined", name)
		}
		if p, ok := built[name]; ok {
			return p, sp.Targets[i], nil
		}
		p, err := r.Build(sp, name, o, closers)
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

// KeyProblems reports target i's key and environment problems without
// building it: missing are variables not set (validate warns, run stops),
// unusable a key that is set but that no call could send (a problem for
// validate too).
func (r *Registry) KeyProblems(sp *spec.Spec, i int, getenv func(string) string) (missing, unusable spec.Problems) {
	t := &sp.Targets[i]
	f, ok := r.Lookup(t.Provider)
	if !ok {
		return nil, nil // spec.Load has reported it
	}
	if f.Info.Hosted {
		_, err := apiKey(sp, i, f.Info, getenv)
		var kf keyFlawError
		var ps spec.Problems
		switch {
		case errors.As(err, &kf):
			unusable = append(unusable, kf.ps...)
		case errors.As(err, &ps):
			missing = append(missing, ps...)
		}
	}
	missing = append(missing, envProblems(sp, i, f.Info, getenv)...)
	return missing, unusable
}

// HTTPClient is tuned for many calls in flight to one host: without enough
// idle connections per host, every call past the second would dial anew.
func HTTPClient(concurrency int) *http.Client {
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
