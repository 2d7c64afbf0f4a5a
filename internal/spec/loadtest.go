package spec

// LoadTest is the load: section: what `assay load` may target and what it
// holds a target to. Every key is optional. (It is not named Load: that is
// the spec loader.)
type LoadTest struct {
	// Allow lists the base URLs a load test may target besides loopback
	// ones (a target whose base URL is not loopback and not listed here
	// needs --i-own-this-endpoint).
	Allow []string `yaml:"allow" json:"allow,omitempty"`
	// SLO is the service level a target's knee must meet (--slo overrides
	// it).
	SLO *LoadSLO `yaml:"slo" json:"slo,omitempty"`
	// Gate holds a load test against a baseline load test (assay gate).
	Gate []LoadRule `yaml:"gate" json:"gate,omitempty"`
}

// LoadSLO is a service level: latency and time-to-first-token 95th
// percentiles as durations ("2s", "500ms") and an error rate as a
// percentage ("1%"). An empty field is not part of the SLO.
type LoadSLO struct {
	P95    string `yaml:"p95" json:"p95,omitempty"`
	TTFT95 string `yaml:"ttft95" json:"ttft95,omitempty"`
	Errors string `yaml:"errors" json:"errors,omitempty"`
}

// LoadRule is one load gate rule: the candidate's Metric (p95, p99,
// ttft95 or errors) at the step of rate At may rise at most MaxRise over
// the base's ("20%" relative, "300ms" absolute; errors in percentage
// points, "1%").
type LoadRule struct {
	Metric  string  `yaml:"metric" json:"metric"`
	At      float64 `yaml:"at" json:"at"`
	MaxRise string  `yaml:"max_rise" json:"max_rise"`
}
