package gate

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/runview"
)

// A run gated against its own baseline file (written and read back) passes
// with every output identical, as against the run itself. The round trip
// itself is internal/runview's TestBaselineRoundTripAndSize; this is the
// gating half of that test, moved here with the gate.
func TestBaselineRoundTripGatesAsItself(t *testing.T) {
	s := realisticSnap(1000)
	var b bytes.Buffer
	if err := runview.WriteBaseline(&b, s); err != nil {
		t.Fatal(err)
	}
	got, err := runview.ReadBaseline("b.json", &b)
	if err != nil {
		t.Fatal(err)
	}
	// Gating a run against its own baseline file passes with every output
	// identical, as against the run itself: even under --strict, which
	// needs the data to show each check within its limit (so no limit of
	// zero, which no data can show).
	res, err := Evaluate(got, s, mustRules(t, "primary max_drop=1pt", "cost_per_case max_rise=0.1%", "latency_p95 max_rise=0.1%", "loud_rate max_rise=1pt"), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, e := range s.Targets[0].Errored {
		if e {
			failed++
		}
	}
	// Failed calls have no output to compare; every other output is identical.
	if tr := res.Targets[0]; res.Verdict != Pass || failed == 0 || tr.Outputs != 1000-failed || tr.IdenticalOutputs != tr.Outputs {
		t.Errorf("self against its baseline file: %s, %d of %d identical, %d failed calls", res.Verdict, tr.IdenticalOutputs, tr.Outputs, failed)
	}
}

// realisticSnap is a run of n cases × 2 targets with two scorers, two tags,
// costs priced from token counts, latencies with fractions of a
// millisecond, and a few failures of each shape.
func realisticSnap(n int) *runview.View {
	tags := make([]map[string]string, n)
	for i := range tags {
		tags[i] = map[string]string{"tier": fmt.Sprint(i % 9), "bucket": []string{"common", "edge", "hostile", "should-refuse"}[i%4]}
	}
	var targets []*runview.Target
	for ti, name := range []string{"gpt-4o-mini", "claude-haiku"} {
		t := runview.NewTarget(name, []string{"correct", "format"}, n)
		for j := range n {
			in, out := 400+(j*37)%300, 20+(j*11)%90
			t.CostUSD[j] = (float64(in)*0.15 + float64(out)*0.6) / 1e6 * float64(ti+1)
			t.LatencyMS[j] = 300 + float64((j*7919)%2400) + float64(j%10)/7
			t.OutputHash[j] = runview.OutputSum(fmt.Sprint(name, j))
			pass := (j*13+ti)%5 != 0
			t.Pass["correct"][j] = int8(b2i(pass))
			t.Pass["format"][j] = int8(b2i(j%17 != 0))
			switch {
			case pass:
				t.Shape[j] = runview.ShapePass
			case j%3 == 0:
				t.Shape[j] = runview.ShapeLoud
				t.SetKind(j, []string{"timeout", "unparseable", "refusal"}[j%3])
			default:
				t.Shape[j] = runview.ShapeSilent
				t.SetKind(j, "wrong")
			}
		}
		t.Fingerprints = []runview.Fingerprint{{Model: name + "-2026-01-01", System: "fp_a1b2c3", Count: n - 3}, {Model: name + "-2026-01-01", System: "fp_d4e5f6", Count: 3}}
		t.Cached = nil // a file does not hold it
		for j := range n {
			t.Errored[j] = t.KindAt(j) == "timeout"
		}
		t.TemperatureKnown = true
		t.ConfigHash = runview.OutputHash(name)
		if ti == 0 {
			t.Temperature = new(0.0)
		}
		targets = append(targets, t)
	}
	s := testSnap("20261202-101010-abcdef", "sha256:"+strings.Repeat("ab", 32), 1, ids(n), tags, targets...)
	s.Scorers = []string{"correct", "format"}
	s.Run.GitCommit = strings.Repeat("f", 40)
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
