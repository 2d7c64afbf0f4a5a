package spec

// ProviderInfo describes one provider to the spec's checks: what a target
// of that provider must and may set. The spec never switches on a
// provider's name; it reads the infos its load options carry (the CLI
// passes the provider registry's, provider/builtin). Each provider package
// declares its own.
type ProviderInfo struct {
	// Name is what a target writes as provider:.
	Name string
	// Hosted is a model behind an HTTP API: model is required, base_url
	// must be an http(s) URL, BaseURLEnv supplies one when the target sets
	// none, and the key comes from api_key_env, api_key_file or KeyEnv.
	Hosted bool
	// KeyEnv is the variable a hosted target reads its key from when it
	// names none (it can never be interpolated into a spec value).
	KeyEnv string
	// BaseURLEnv is the variable the provider's SDK reads for its
	// endpoint; a target that sets no base_url takes it from there.
	BaseURLEnv string
	// Cacheable replies go through the response cache.
	Cacheable bool
	// CanJudge: a target of this provider may grade (a judge scorer's
	// target). Recorded outputs, say, cannot.
	CanJudge bool
	// NoRetry: calls never fail transiently (recorded outputs), so they
	// are never retried.
	NoRetry bool
	// NoSeed, when set, says why params.seed is refused (the API has none).
	NoSeed string
	// Keys are the target keys, of those only some providers read
	// (TargetKeys), that this one reads; one of the others set on its
	// target is a problem.
	Keys []string
	// Required are the keys a target of this provider must set (of model,
	// command and replay).
	Required []string
	// Check, when set, reports further problems of a target at path
	// (targets[i]); report locates each at the written key it names.
	Check func(t *Target, path string, report func(at, hint, format string, args ...any))
}

// TargetKeys are the target keys only some providers read.
var TargetKeys = []string{"command", "env", "replay", "headers", "api_key_file"}

// Reads reports whether the provider reads target key k.
func (p ProviderInfo) Reads(k string) bool {
	for _, x := range p.Keys {
		if x == k {
			return true
		}
	}
	return false
}

// Requires reports whether a target of the provider must set key k.
func (p ProviderInfo) Requires(k string) bool {
	for _, x := range p.Required {
		if x == k {
			return true
		}
	}
	return false
}
