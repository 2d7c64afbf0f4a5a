package spec

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

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

// LoadMetrics are the metrics a load gate rule may hold.
var LoadMetrics = []string{"p95", "p99", "ttft95", "errors"}

// Bounds of the load: section.
const (
	MaxLoadAllow = 100
	MaxLoadRules = 100
)

// SLOString writes the section's SLO as --slo reads it
// ("p95=2s,ttft95=500ms,errors=1%"; "" when none is set).
func (l *LoadTest) SLOString() string {
	if l == nil || l.SLO == nil {
		return ""
	}
	var parts []string
	for _, p := range [][2]string{{"p95", l.SLO.P95}, {"ttft95", l.SLO.TTFT95}, {"errors", l.SLO.Errors}} {
		if strings.TrimSpace(p[1]) != "" {
			parts = append(parts, p[0]+"="+strings.TrimSpace(p[1]))
		}
	}
	return strings.Join(parts, ",")
}

// Allows reports whether base, a target's base URL, is one load.allow
// lists: the same scheme, host and port (an absent port is the scheme's),
// and a path equal to the listed one or under it.
func (l *LoadTest) Allows(base string) bool {
	if l == nil {
		return false
	}
	b, err := parseAllowURL(base)
	if err != nil {
		return false
	}
	for _, a := range l.Allow {
		u, err := parseAllowURL(a)
		if err != nil {
			continue
		}
		if u.Scheme == b.Scheme && u.Host == b.Host && (u.Path == b.Path || u.Path == "" || strings.HasPrefix(b.Path, u.Path+"/")) {
			return true
		}
	}
	return false
}

// withoutPassword is raw with a URL's password replaced by xxxxx
// (url.URL.Redacted), for a message: a problem never repeats a credential
// (CI logs keep what validate prints).
func withoutPassword(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil && strings.Contains(raw, "@"):
		return "(a URL with an @, not shown)"
	case err != nil:
		return raw
	}
	return u.Redacted()
}

// parseAllowURL parses an http(s) base URL with its scheme and host
// lowercased, the scheme's default port written, and no trailing slash.
func parseAllowURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, errors.New("is not a URL")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("needs the scheme http:// or https://")
	case u.User != nil:
		return nil, errors.New("must not carry a user or password (credentials belong in the target's api_key_env)")
	case u.Hostname() == "":
		return nil, errors.New("has no host")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("must not have a query or fragment")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	u.Host = net.JoinHostPort(strings.ToLower(u.Hostname()), port)
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

// checkLoad checks the load: section: allowed URLs, the SLO's values and
// the gate rules.
func (v *validator) checkLoad() {
	l := v.s.Load
	if l == nil {
		return
	}
	const urlHint = "a target's base URL, such as https://llm.internal.example.com/v1"
	if len(l.Allow) > MaxLoadAllow {
		v.at("load.allow", fmt.Sprintf("at most %d URLs", MaxLoadAllow), "load.allow lists %d URLs", len(l.Allow))
	}
	for i, a := range l.Allow {
		key := fmt.Sprintf("load.allow[%d]", i)
		if strings.TrimSpace(a) == "" {
			v.at(key, urlHint, "%s is empty", key)
			continue
		}
		if _, err := parseAllowURL(a); err != nil {
			v.at(key, urlHint, "%s %s %v", key, shortQuote(withoutPassword(a)), err)
		}
	}
	if s := l.SLO; s != nil {
		for _, d := range []struct{ key, val string }{{"p95", s.P95}, {"ttft95", s.TTFT95}} {
			if d.val == "" {
				continue
			}
			if x, err := time.ParseDuration(strings.TrimSpace(d.val)); err != nil || x <= 0 {
				v.at("load.slo."+d.key, "a positive duration such as 2s or 500ms", "load.slo.%s %s is not a duration", d.key, shortQuote(d.val))
			}
		}
		if s.Errors != "" {
			if _, err := loadPercent(s.Errors); err != nil {
				v.at("load.slo.errors", "a percentage such as 1% or 0.5%", "load.slo.errors %s %v", shortQuote(s.Errors), err)
			}
		}
	}
	if len(l.Gate) > MaxLoadRules {
		v.at("load.gate", fmt.Sprintf("at most %d rules", MaxLoadRules), "load.gate has %d rules", len(l.Gate))
	}
	for i, r := range l.Gate {
		key := fmt.Sprintf("load.gate[%d]", i)
		metricHint := "one of " + strings.Join(LoadMetrics, ", ")
		switch {
		case r.Metric == "":
			v.at(key, metricHint, "%s.metric is missing", key)
		case !contains(LoadMetrics, r.Metric):
			hint := metricHint
			if near := nearest(r.Metric, LoadMetrics); near != "" {
				hint = fmt.Sprintf("did you mean %q? %s", near, metricHint)
			}
			v.at(key+".metric", hint, "unknown metric %s", shortQuote(r.Metric))
		}
		switch {
		case !v.written(key + ".at"):
			v.at(key, "the requests per second (or concurrency) of the step to compare, one of the levels a load test runs", "%s.at is missing", key)
		case !(r.At > 0) || math.IsInf(r.At, 0):
			v.at(key+".at", "the requests per second (or concurrency) of the step to compare", "%s.at must be above 0, got %v", key, r.At)
		}
		riseHint := "a relative rise such as 20% or an absolute one such as 300ms"
		if r.Metric == "errors" {
			riseHint = "a relative rise such as 20% or percentage points such as 2pt"
		}
		if r.MaxRise == "" {
			v.at(key, riseHint, "%s.max_rise is missing", key)
			continue
		}
		if err := checkRise(r.Metric, r.MaxRise); err != nil {
			v.at(key+".max_rise", riseHint, "%s.max_rise %s %v", key, shortQuote(r.MaxRise), err)
		}
	}
}

// checkRise checks a rule's max_rise for its metric: "N%" relative for
// any metric, a duration for a latency, "Npt" percentage points for
// errors.
func checkRise(metric, s string) error {
	s = strings.TrimSpace(s)
	if num, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) {
			return errors.New("is not a percentage of at least 0%")
		}
		return nil
	}
	if num, ok := strings.CutSuffix(s, "pt"); ok {
		if metric != "errors" && metric != "" {
			return fmt.Errorf("is in percentage points, which only the errors metric takes")
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f < 0 || f > 100 {
			return errors.New("is not a number of percentage points between 0pt and 100pt")
		}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return errors.New("is not a percentage, a duration or percentage points")
	}
	if metric == "errors" {
		return errors.New("is a duration, which the errors metric does not take")
	}
	return nil
}

// loadPercent reads "1%" as 0.01.
func loadPercent(s string) (float64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	if !ok {
		return 0, errors.New("is not a percentage (write it with %)")
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || f < 0 || f > 100 {
		return 0, errors.New("is not a percentage between 0% and 100%")
	}
	return f / 100, nil
}
