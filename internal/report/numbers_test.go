package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/probe"
	"github.com/assay-eval/assay/internal/selftest/findings"
	"github.com/assay-eval/assay/internal/units"
)

// The integrity outputs write their numbers in the units forms every other
// output uses: a selftest's judge cost in dollars as the report writes
// them, a probe's adjusted p-values as the report's, a dataset's
// near-duplicate similarity and small-bucket half-width by units.
func TestIntegrityNumbersAreUnits(t *testing.T) {
	st := &findings.Report{Spec: "s", Headline: "exact", Verdict: findings.VerdictSound, JudgeRequests: 40, JudgeCost: 0.01512, ElapsedMS: 1250}
	var b bytes.Buffer
	if err := SelftestText(&b, st); err != nil {
		t.Fatal(err)
	}
	if want := "judge verdicts requested: 40 (judge cost " + units.USD(0.01512) + ")"; !strings.Contains(b.String(), want) || units.USD(0.01512) != "$0.0151" {
		t.Errorf("selftest text lacks %q:\n%s", want, b.String())
	}

	r := &probe.Report{Spec: "s", Method: probe.NewMethod(probe.DefaultOptions(), 3), Targets: []probe.Finding{
		{Target: "tiny", N: 12, PAdjusted: 0.0000123, Drop: 1, Verdict: probe.VerdictContaminated},
		{Target: "some", N: 12, PAdjusted: 0.000488, Drop: 0.5, Verdict: probe.VerdictContaminated},
		{Target: "none", N: 12, PAdjusted: 1, Verdict: probe.VerdictClean},
		{Target: "nan", PAdjusted: probe.Num(math.NaN())},
	}}
	b.Reset()
	if err := ProbeText(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  <0.0001  ", "  0.00049  ", "  1  ", "–  "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("probe text lacks %q:\n%s", want, b.String())
		}
	}

	h := &dataset.Health{Path: "d.jsonl", Cases: 4, Near: dataset.NearDuplicates{Threshold: 0.9, Pairs: 1, Cases: 2,
		List: []dataset.NearPair{{A: dataset.CaseRef{ID: "1", Line: 1}, B: dataset.CaseRef{ID: "2", Line: 2}, Similarity: 0.9375}}},
		Tags: []dataset.TagHealth{{Key: "bucket", Values: []dataset.ValueCount{{Value: "x", Count: 3, Share: 0.75, Small: true, HalfWidth: 0.3789}}}}}
	b.Reset()
	if err := DatasetHealthText(&b, h, 0, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(token overlap ≥ 0.9)", "line 1 ~ line 2  0.94  ", "up to ±38 points"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("health text lacks %q:\n%s", want, b.String())
		}
	}
	if ws := h.Warnings(); len(ws) != 1 || !strings.Contains(ws[0], "(token overlap ≥ 0.9)") {
		t.Errorf("warnings %q: the threshold as the text writes it", ws)
	}
}
