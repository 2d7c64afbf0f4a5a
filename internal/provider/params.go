package provider

// Params are the sampling parameters sent with a request. Nil means the
// provider's default (nil temperature is not 0, which is greedy). They have
// the fields of the spec's params (spec.Params), converted where a target's
// request is made: provider.Params(t.Params).
type Params struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MaxTokens   *int     `json:"max_tokens,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	Stop        []string `json:"stop,omitempty"`
}

// Limits bound the load on one target (WithLimits): calls in flight,
// requests and tokens per minute; 0 is unlimited. They have the fields of
// the spec's limits (spec.Limits), converted where a target's provider is
// wrapped (provider/registry).
type Limits struct {
	Concurrency int `json:"concurrency,omitempty"`
	RPM         int `json:"rpm,omitempty"`
	TPM         int `json:"tpm,omitempty"`
}
