package spec

import (
	"slices"
	"strings"
	"testing"
)

func TestLoadSection(t *testing.T) {
	src := base + `load:
  allow: [https://llm.internal.example.com/v1, "http://10.0.0.7:8000"]
  slo: {p95: 2s, ttft95: 500ms, errors: 1%}
  gate:
    - {metric: p95, at: 20, max_rise: 20%}
    - {metric: errors, at: 20, max_rise: 2pt}
    - {metric: ttft95, at: 5.5, max_rise: 300ms}
`
	sp, ps := parse(t, src)
	if ps != nil {
		t.Fatal(ps)
	}
	l := sp.Load
	if l == nil || !slices.Equal(l.Allow, []string{"https://llm.internal.example.com/v1", "http://10.0.0.7:8000"}) ||
		len(l.Gate) != 3 || l.Gate[2] != (LoadRule{Metric: "ttft95", At: 5.5, MaxRise: "300ms"}) {
		t.Fatalf("decoded %+v", l)
	}
	if got, want := l.SLOString(), "p95=2s,ttft95=500ms,errors=1%"; got != want {
		t.Errorf("SLOString = %q, want %q", got, want)
	}
	if sp, ps := parse(t, base); ps != nil || sp.Load != nil || sp.Load.SLOString() != "" || sp.Load.Allows("http://x") {
		t.Errorf("no section: %+v %v", sp.Load, ps)
	}
}

func TestLoadAllows(t *testing.T) {
	l := &LoadTest{Allow: []string{"https://LLM.internal.example.com/v1/", "http://10.0.0.7:8000"}}
	for u, want := range map[string]bool{
		"https://llm.internal.example.com/v1":          true,
		"https://llm.internal.example.com:443/v1":      true, // the scheme's port
		"https://llm.internal.example.com/v1/":         true,
		"https://llm.internal.example.com/v1/chat":     true, // under the listed path
		"https://llm.internal.example.com/v10":         false,
		"https://llm.internal.example.com/":            false,
		"http://llm.internal.example.com/v1":           false, // another scheme
		"https://llm.internal.example.com:8443/v1":     false,
		"https://llm.internal.example.com.evil.io/v1":  false,
		"http://10.0.0.7:8000/v1":                      true,
		"http://10.0.0.7/v1":                           false,
		"https://user:pw@llm.internal.example.com/v1":  false, // never with credentials
		"not a url at all":                             false,
		"":                                             false,
		"ftp://llm.internal.example.com/v1":            false,
		"https://llm.internal.example.com/v1?x=1#frag": false,
	} {
		if got := l.Allows(u); got != want {
			t.Errorf("Allows(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestLoadProblems(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"bad urls", "load:\n  allow: ['', 'ftp://x', 'https://u:p@h/v1', 'http:///v1', 'https://h/v1?k=v']\n", []string{
			"s.yaml:10:11: load.allow[0] is empty (a target's base URL, such as https://llm.internal.example.com/v1)",
			`s.yaml:10:15: load.allow[1] "ftp://x" needs the scheme http:// or https:// (a target's base URL, such as https://llm.internal.example.com/v1)`,
			`s.yaml:10:26: load.allow[2] "https://u:xxxxx@h/v1" must not carry a user or password (credentials belong in the target's api_key_env) (a target's base URL, such as https://llm.internal.example.com/v1)`,
			`s.yaml:10:46: load.allow[3] "http:///v1" has no host (a target's base URL, such as https://llm.internal.example.com/v1)`,
			`s.yaml:10:60: load.allow[4] "https://h/v1?k=v" must not have a query or fragment (a target's base URL, such as https://llm.internal.example.com/v1)`,
		}},
		{"bad slo", "load:\n  slo:\n    p95: fast\n    ttft95: -1s\n    errors: '0.01'\n", []string{
			`s.yaml:11:10: load.slo.p95 "fast" is not a duration (a positive duration such as 2s or 500ms)`,
			`s.yaml:12:13: load.slo.ttft95 "-1s" is not a duration (a positive duration such as 2s or 500ms)`,
			`s.yaml:13:13: load.slo.errors "0.01" is not a percentage (write it with %) (a percentage such as 1% or 0.5%)`,
		}},
		{"slo over 100%", "load:\n  slo: {errors: 150%}\n", []string{
			`s.yaml:10:17: load.slo.errors "150%" is not a percentage between 0% and 100% (a percentage such as 1% or 0.5%)`,
		}},
		{"bad rules", "load:\n  gate:\n    - {metric: p59, at: 20, max_rise: 20%}\n    - {metric: errors, at: 0, max_rise: 300ms}\n    - {metric: p95, max_rise: 2pt}\n    - {at: 5}\n", []string{
			`s.yaml:11:16: unknown metric "p59" (did you mean "p95"? one of p95, p99, ttft95, errors)`,
			"s.yaml:12:28: load.gate[1].at must be above 0, got 0 (the requests per second (or concurrency) of the step to compare)",
			`s.yaml:12:41: load.gate[1].max_rise "300ms" is a duration, which the errors metric does not take (a relative rise such as 20% or percentage points such as 2pt)`,
			"s.yaml:13:7: load.gate[2].at is missing (the requests per second (or concurrency) of the step to compare, one of the levels a load test runs)",
			`s.yaml:13:31: load.gate[2].max_rise "2pt" is in percentage points, which only the errors metric takes (a relative rise such as 20% or an absolute one such as 300ms)`,
			"s.yaml:14:7: load.gate[3].metric is missing (one of p95, p99, ttft95, errors)",
			"s.yaml:14:7: load.gate[3].max_rise is missing (a relative rise such as 20% or an absolute one such as 300ms)",
		}},
		{"bad rise", "load:\n  gate: [{metric: p99, at: 1, max_rise: lots}]\n", []string{
			`s.yaml:10:41: load.gate[0].max_rise "lots" is not a percentage, a duration or percentage points (a relative rise such as 20% or an absolute one such as 300ms)`,
		}},
		{"unknown key", "load:\n  allowed: [http://x]\n", []string{
			`s.yaml:10:3: unknown key "allowed" in load (did you mean "allow"? valid keys are: allow, gate, slo)`,
		}},
		{"at not a number", "load:\n  gate: [{metric: p99, at: fast, max_rise: 10%}]\n", []string{
			`load.gate[0].at must be a number`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := parse(t, base+tc.src)
			got := ps.Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems lack %q:\n%s", w, got)
				}
			}
			if len(ps) != len(tc.want) {
				t.Errorf("%d problems, want %d:\n%s", len(ps), len(tc.want), got)
			}
		})
	}
}

// FuzzLoadSection: any text under load: loads or is refused without a
// panic, every problem located, and Allows answers for any URL.
func FuzzLoadSection(f *testing.F) {
	for _, s := range []string{
		"  allow: [https://h/v1]\n  slo: {p95: 2s, errors: 1%}\n",
		"  gate: [{metric: errors, at: 2, max_rise: 2pt}]\n",
		"  allow: ['http://[::1]:80/x']\n",
		"  slo: {ttft95: 1e400s}\n",
		"  gate: [{metric: p95, at: .nan, max_rise: '%'}]\n",
	} {
		f.Add(s, "http://[::1]/x")
	}
	f.Fuzz(func(t *testing.T, body, u string) {
		sp, err := Parse("s.yaml", []byte(base+"load:\n"+body))
		if err != nil {
			if !strings.Contains(err.Error(), "s.yaml:") {
				t.Fatalf("a problem without its place: %v", err)
			}
			return
		}
		_ = sp.Load.Allows(u)
		_ = sp.Load.SLOString()
	})
}
