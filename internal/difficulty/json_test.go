package difficulty

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
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
	want = intervalKeys(want)
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
	want = intervalKeys(want)
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
	for _, w := range []string{`"b":null,"se":null`, `"se_a":0.1,"se_b":null`} {
		if !strings.Contains(string(got), w) {
			t.Errorf("%s lacks %s", got, w)
		}
	}
	var back Fitted
	if err := json.Unmarshal(got, &back); err != nil || back.Cases[0].Right != 3 || back.Fit.LogLik != -12.5 {
		t.Errorf("round trip: %v %+v", err, back.Cases)
	}
}

// intervalKeys is encoding/json's output with stats.Interval's keys as
// the results write them (lo, hi: untagged fields in snake case).
func intervalKeys(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte(`{"Lo":`), []byte(`{"lo":`))
	return bytes.ReplaceAll(b, []byte(`,"Hi":`), []byte(`,"hi":`))
}

// Every key of the results' JSON is snake_case, as every assay JSON
// report's (p_value, a_only …): no Go field name leaks.
func TestJSONKeysSnakeCase(t *testing.T) {
	g := loadGolden(t)[2]
	bench, work := g.sets()
	m, err := Compare(bench, work, MismatchOptions{Replicates: 50})
	if err != nil {
		t.Fatal(err)
	}
	m.Rubric = &Rubric{Verdict: "shortlist_only", Axes: []AxisRating{{Axis: AxisData, Rating: "high", Signals: []Signal{{Name: "ks"}}}}}
	f := &Fitted{Fit: &irt.Fit{Items: []irt.Item{{ID: "c"}}, Persons: []irt.Person{{ID: "p"}}}, Cases: []CaseDifficulty{{}}, Targets: []Ability{{}},
		Curve: []irt.InfoPoint{{}}, Tiers: []Tier{{Rates: []Rate{{}}}}}
	key := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	for name, v := range map[string]any{"mismatch": m, "fitted": f} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(path string, x any)
		walk = func(path string, x any) {
			switch x := x.(type) {
			case map[string]any:
				for k, y := range x {
					if !key.MatchString(k) {
						t.Errorf("%s: key %s.%s is not snake_case", name, path, k)
					}
					walk(path+"."+k, y)
				}
			case []any:
				for _, y := range x {
					walk(path+"[]", y)
				}
			}
		}
		walk("", doc)
		for _, k := range []string{`"ranking_raw"`, `"p_adjusted"`, `"covered_share"`, `"work_share"`, `"ci":{"lo"`, `"se_b"`, `"log_lik"`} {
			if (name == "mismatch") == (k != `"se_b"` && k != `"log_lik"`) && !strings.Contains(string(b), k) {
				t.Errorf("%s lacks %s", name, k)
			}
		}
	}
}
