package difficulty

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/irt"
	"github.com/assay-eval/assay/internal/stats"
)

// TestJSONFinite: the results write as encoding/json writes them, field
// for field, and a number that is not finite becomes null instead of
// making the report unwritable.
func TestJSONFinite(t *testing.T) {
	type plainFitted Fitted
	type plainMismatch Mismatch
	f := &Fitted{
		Scale:   Scale{Source: SourceFitted, Model: "2pl", Levels: []string{"a", "<b>"}},
		Sources: []string{"run-1"},
		Fit:     &irt.Fit{Model: irt.TwoPL, LogLik: -12.5, Items: []irt.Item{{ID: "c1", A: 1, B: 0.25, SEA: 0.1, SEB: 0.2}}, Warnings: []string{"w"}},
		Cases:   []CaseDifficulty{{ID: "c1", B: 0.25, SE: 0.2, A: 1, Right: 3, Trials: 4, Tag: "x\"y"}},
		Targets: []Ability{{Target: "t", Theta: -0.5, SE: 0.3, Lo: -1.1, Hi: 0.1, Right: 3, Trials: 4}},
		Curve:   []irt.InfoPoint{{Theta: 0, Info: 4, SE: 0.5}},
		Tiers:   []Tier{{Label: "a", Cases: 1, Rates: []Rate{{Target: "t", Passed: 1, N: 2, Rate: 0.5, CI: stats.Interval{Lo: 0.1, Hi: 0.9}}}}},
	}
	got, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal((*plainFitted)(f))
	if !bytes.Equal(got, want) {
		t.Errorf("finite Fitted:\n got %s\nwant %s", got, want)
	}
	g := loadGolden(t)[2]
	bench, work := g.sets()
	m, err := Compare(bench, work, MismatchOptions{Replicates: 50})
	if err != nil {
		t.Fatal(err)
	}
	got, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want, _ = json.Marshal((*plainMismatch)(m))
	if !bytes.Equal(got, want) {
		t.Errorf("Mismatch differs from encoding/json's:\n got %.300s\nwant %.300s", got, want)
	}

	f.Cases[0].SE = math.NaN()
	f.Cases[0].B = math.Inf(1)
	f.Fit.Items[0].SEB = math.NaN()
	got, err = json.Marshal(f)
	if err != nil {
		t.Fatalf("a NaN standard error made the result unwritable: %v", err)
	}
	for _, w := range []string{`"B":null,"SE":null`, `"SEA":0.1,"SEB":null`} {
		if !strings.Contains(string(got), w) {
			t.Errorf("%s lacks %s", got, w)
		}
	}
	var back Fitted
	if err := json.Unmarshal(got, &back); err != nil || back.Cases[0].Right != 3 || back.Fit.LogLik != -12.5 {
		t.Errorf("round trip: %v %+v", err, back.Cases)
	}
}
