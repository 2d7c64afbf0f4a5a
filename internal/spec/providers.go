package spec

import "strings"

// ProviderInfo describes one provider to the spec's checks: what a target
// of that provider must and may set. The spec never switches on a
// provider's name; it reads the infos its load options carry (the CLI
// passes the provider registry's, provider/builtin). Each provider package
// declares its own.
type ProviderInfo struct {
	// Name is what a target writes as provider:.
	Name string
	// Hosted is a model behind an HTTP API: base_url must be an http(s)
	// URL, BaseURLEnv supplies one when the target sets none, and the key
	// comes from api_key_env, api_key_file or KeyEnv.
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
	// target). Recorded outputs, say, cannot: NoJudge then says why
	// ("returns recorded outputs, not verdicts").
	CanJudge bool
	NoJudge  string
	// NoRetry: calls never fail transiently (recorded outputs), so they
	// are never retried.
	NoRetry bool
	// NoSeed, when set, says why params.seed is refused (the API has none).
	NoSeed string
	// Keys are the target keys, of those only some providers read
	// (command, env, replay, headers, api_key_file), that this one reads;
	// one of the others set on its target is a problem.
	Keys []string
	// Required are the keys a target of this provider must set (of model,
	// command and replay).
	Required []string
	// Check, when set, reports further problems of a target at path
	// (targets[i]); report locates each at the written key it names.
	Check func(t *Target, path string, report func(at, hint, format string, args ...any))
}

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

// DefaultProviders describe the providers assay ships (openai, anthropic,
// exec, replay) for a spec loaded without Options.Providers: tests, and
// callers that only read a spec. They are data, the same the provider
// packages declare (provider/builtin's test holds the two equal); the CLI
// passes its registry's.
func DefaultProviders() []ProviderInfo {
	return []ProviderInfo{
		{Name: "openai", Hosted: true, KeyEnv: "OPENAI_API_KEY", BaseURLEnv: "OPENAI_BASE_URL",
			Cacheable: true, CanJudge: true,
			Keys: []string{"headers", "api_key_file"}, Required: []string{"model"}},
		{Name: "anthropic", Hosted: true, KeyEnv: "ANTHROPIC_API_KEY", BaseURLEnv: "ANTHROPIC_BASE_URL",
			Cacheable: true, CanJudge: true, NoSeed: "the Anthropic Messages API has no seed",
			Keys: []string{"headers", "api_key_file"}, Required: []string{"model"}},
		{Name: "exec", CanJudge: true,
			Keys: []string{"command", "env"}, Required: []string{"command"}},
		{Name: "replay", NoRetry: true, NoJudge: "returns recorded outputs, not verdicts",
			Keys: []string{"replay"}, Required: []string{"replay"}},
	}
}

// infos are the providers the spec was checked against: its load
// options', else (a spec built in code, say) DefaultProviders.
func (s *Spec) infos() []ProviderInfo {
	if s.providers == nil {
		return DefaultProviders()
	}
	return s.providers
}

// ProviderInfo describes provider name as the spec was checked against
// it; false when no provider of that name was known.
func (s *Spec) ProviderInfo(name string) (ProviderInfo, bool) {
	for _, p := range s.infos() {
		if p.Name == name {
			return p, true
		}
	}
	return ProviderInfo{}, false
}

// JudgeProviders names the providers whose targets may grade, for a hint:
// "an openai, anthropic or exec target".
func (s *Spec) JudgeProviders() string {
	var names []string
	for _, p := range s.infos() {
		if p.CanJudge {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return "no provider can grade"
	}
	list := names[0]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	}
	article := "a "
	if strings.ContainsRune("aeiou", rune(list[0])) {
		article = "an "
	}
	return article + list + " target"
}

// providerNames are the known providers' names, in order.
func (s *Spec) providerNames() []string {
	out := make([]string, len(s.infos()))
	for i, p := range s.infos() {
		out[i] = p.Name
	}
	return out
}

// readers names the providers that read target key k, for a hint:
// "provider exec", "providers openai and anthropic".
func (s *Spec) readers(k string) string {
	var names []string
	for _, p := range s.infos() {
		if p.Reads(k) {
			names = append(names, p.Name)
		}
	}
	switch len(names) {
	case 0:
		return "no provider"
	case 1:
		return "provider " + names[0]
	}
	return "providers " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// checkProvider checks what target t (at p) of a known provider must set.
func (v *validator) checkProvider(t *Target, p string, info ProviderInfo) {
	if info.Requires("model") && t.Model == "" {
		v.at(p+".model", "the model name the server expects", "%s.model is required for provider %s", p, t.Provider)
	}
	if info.Hosted && t.BaseURL != "" {
		if msg := checkURL(t.BaseURL); msg != "" {
			v.at(p+".base_url", "e.g. http://127.0.0.1:11434/v1", "%s.base_url %s", p, msg)
		}
	}
	if info.NoSeed != "" && t.Params.Seed != nil {
		v.at(p+".params.seed", "remove seed; repeat cases with --epochs to measure the variance instead",
			"%s.params.seed: %s", p, info.NoSeed)
	}
	if info.Requires("command") && (len(t.Command) == 0 || t.Command[0] == "") {
		v.at(p+".command", `e.g. command: ["./bin/app", "--eval"]`, "%s.command is required for provider %s", p, t.Provider)
	}
	if info.Requires("replay") {
		v.checkReplay(t, p)
	}
	if info.Check != nil {
		info.Check(t, p, v.at)
	}
}
