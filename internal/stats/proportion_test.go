package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// loadGolden reads a golden-vector file written by one of testdata/*.py.
func loadGolden(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// close9 reports whether got matches a reference value computed by an exact
// method: within 1e-9 relative, or 1e-14 absolute for values near zero (a
// Jeffreys lower bound at k = 0 can be 1e-9 itself, where an absolute 1e-9
// would accept anything).
func close9(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Abs(want)+1e-14
}

// TestWilsonMatchesStatsmodels checks against golden vectors produced by
// statsmodels' proportion_confint(method="wilson"); see testdata/wilson.py.
func TestWilsonMatchesStatsmodels(t *testing.T) {
	var golden []struct {
		K, N          int
		Alpha, Lo, Hi float64
	}
	loadGolden(t, "testdata/wilson.json", &golden)
	if len(golden) < 10 {
		t.Fatalf("only %d golden vectors", len(golden))
	}
	for _, g := range golden {
		got := Wilson(g.K, g.N, g.Alpha)
		if math.Abs(got.Lo-g.Lo) > 1e-9 || math.Abs(got.Hi-g.Hi) > 1e-9 {
			t.Errorf("Wilson(%d, %d, %g) = [%.10f, %.10f], statsmodels [%.10f, %.10f]", g.K, g.N, g.Alpha, got.Lo, got.Hi, g.Lo, g.Hi)
		}
	}
}

// TestProportionCIMatchesStatsmodels checks all three methods, through the
// dispatcher and directly, against statsmodels' proportion_confint on the
// edge cases in testdata/intervals.py (k = 0, k = n, n = 1, n up to 100,000,
// alpha 0.01, 0.05 and 0.1).
func TestProportionCIMatchesStatsmodels(t *testing.T) {
	var golden []struct {
		Method        string
		K, N          int
		Alpha, Lo, Hi float64
	}
	loadGolden(t, "testdata/intervals.json", &golden)
	direct := map[string]func(k, n int, alpha float64) Interval{
		MethodWilson:         Wilson,
		MethodClopperPearson: ClopperPearson,
		MethodJeffreys:       Jeffreys,
	}
	seen := map[string]int{}
	for _, g := range golden {
		seen[g.Method]++
		got, err := ProportionCI(g.Method, g.K, g.N, g.Alpha)
		if err != nil {
			t.Errorf("ProportionCI(%q, %d, %d, %g): %v", g.Method, g.K, g.N, g.Alpha, err)
			continue
		}
		if !close9(got.Lo, g.Lo) || !close9(got.Hi, g.Hi) {
			t.Errorf("ProportionCI(%q, %d, %d, %g) = [%.12g, %.12g], statsmodels [%.12g, %.12g]",
				g.Method, g.K, g.N, g.Alpha, got.Lo, got.Hi, g.Lo, g.Hi)
		}
		if d := direct[g.Method](g.K, g.N, g.Alpha); d != got {
			t.Errorf("%s(%d, %d, %g) = %v, dispatcher %v", g.Method, g.K, g.N, g.Alpha, d, got)
		}
	}
	for _, m := range ProportionMethods() {
		if seen[m] < 50 {
			t.Errorf("only %d golden vectors for %s", seen[m], m)
		}
	}
}

// TestProportionBoundaries locks the conventions a reader of a report sees
// at the edges: an exact interval reaches 0 (1) when nothing (everything)
// passed, Jeffreys follows statsmodels and does not, and no trials means
// the whole of [0, 1].
func TestProportionBoundaries(t *testing.T) {
	for _, n := range []int{1, 20, 2000} {
		for _, f := range []struct {
			name string
			fn   func(k, n int, alpha float64) Interval
		}{{"Wilson", Wilson}, {"ClopperPearson", ClopperPearson}} {
			if got := f.fn(0, n, 0.05); got.Lo != 0 {
				t.Errorf("%s(0, %d) lower = %g, want exactly 0", f.name, n, got.Lo)
			}
			if got := f.fn(n, n, 0.05); got.Hi != 1 {
				t.Errorf("%s(%d, %d) upper = %g, want exactly 1", f.name, n, n, got.Hi)
			}
		}
		if got := Jeffreys(0, n, 0.05); !(got.Lo > 0) {
			t.Errorf("Jeffreys(0, %d) lower = %g, want > 0 as statsmodels", n, got.Lo)
		}
		if got := Jeffreys(n, n, 0.05); !(got.Hi < 1) {
			t.Errorf("Jeffreys(%d, %d) upper = %g, want < 1 as statsmodels", n, n, got.Hi)
		}
	}
	for _, m := range ProportionMethods() {
		got, err := ProportionCI(m, 0, 0, 0.05)
		if err != nil || got != (Interval{0, 1}) {
			t.Errorf("ProportionCI(%q, 0, 0) = %v, %v; want [0, 1]", m, got, err)
		}
	}
}

// TestProportionIntervalsNested: a wider confidence level never gives a
// narrower interval, and every interval contains the observed rate (except
// Jeffreys at k = 0 and k = n, which by statsmodels' convention excludes the
// boundary; see TestProportionBoundaries).
func TestProportionIntervalsNested(t *testing.T) {
	for _, m := range ProportionMethods() {
		for _, n := range []int{1, 7, 50, 1319} {
			for k := 0; k <= n; k += 1 + n/13 {
				wide, _ := ProportionCI(m, k, n, 0.01)
				mid, _ := ProportionCI(m, k, n, 0.05)
				narrow, _ := ProportionCI(m, k, n, 0.1)
				p := float64(k) / float64(n)
				if !(wide.Lo <= mid.Lo && mid.Lo <= narrow.Lo && narrow.Hi <= mid.Hi && mid.Hi <= wide.Hi) {
					t.Errorf("%s(%d, %d): 99%% %v, 95%% %v, 90%% %v not nested", m, k, n, wide, mid, narrow)
				}
				jeffreysEdge := m == MethodJeffreys && (k == 0 || k == n)
				if (!jeffreysEdge && !(mid.Lo <= p && p <= mid.Hi)) || mid.Lo < 0 || mid.Hi > 1 {
					t.Errorf("%s(%d, %d) = %v does not contain %g within [0, 1]", m, k, n, mid, p)
				}
			}
		}
	}
}

func TestProportionCIBadInput(t *testing.T) {
	for _, tc := range []struct {
		method   string
		k, n     int
		alpha    float64
		contains []string
	}{
		{"wald", 1, 2, 0.05, []string{`"wald"`, "wilson, clopper_pearson, jeffreys"}},
		{"", 1, 2, 0.05, []string{"valid methods are"}},
		{"Wilson", 1, 2, 0.05, []string{`"Wilson"`, "wilson"}},
		{"wilson", 3, 2, 0.05, []string{"3 successes in 2 trials", "0 <= successes <= trials"}},
		{"jeffreys", -1, 2, 0.05, []string{"-1 successes"}},
		{"clopper_pearson", 0, -1, 0.05, []string{"-1 trials"}},
		{"wilson", 1, 2, 0, []string{"alpha 0", "strictly between 0 and 1"}},
		{"wilson", 1, 2, 1, []string{"alpha 1"}},
		{"jeffreys", 1, 2, math.NaN(), []string{"alpha NaN"}},
		{"clopper_pearson", 1, 2, 95, []string{"alpha 95"}},
	} {
		got, err := ProportionCI(tc.method, tc.k, tc.n, tc.alpha)
		if err == nil {
			t.Errorf("ProportionCI(%q, %d, %d, %g) = %v, want an error", tc.method, tc.k, tc.n, tc.alpha, got)
			continue
		}
		for _, s := range tc.contains {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("ProportionCI(%q, %d, %d, %g) error %q does not mention %q", tc.method, tc.k, tc.n, tc.alpha, err, s)
			}
		}
		if !math.IsNaN(got.Lo) || !math.IsNaN(got.Hi) {
			t.Errorf("ProportionCI(%q, ...) on error = %v, want NaN interval", tc.method, got)
		}
	}
}

// TestProportionNoPanic: the direct functions never panic (gonum's quantile
// functions do on a probability outside [0, 1]) and answer NaN.
func TestProportionNoPanic(t *testing.T) {
	for _, f := range []func(k, n int, alpha float64) Interval{Wilson, ClopperPearson, Jeffreys} {
		for _, in := range []struct {
			k, n  int
			alpha float64
		}{{1, 2, -0.5}, {1, 2, 2}, {1, 2, math.NaN()}, {1, 2, math.Inf(1)}, {3, 2, 0.05}, {-1, 2, 0.05}, {0, -5, 0.05}} {
			got := f(in.k, in.n, in.alpha)
			if !math.IsNaN(got.Lo) || !math.IsNaN(got.Hi) {
				t.Errorf("f(%d, %d, %g) = %v, want NaN interval", in.k, in.n, in.alpha, got)
			}
		}
	}
}

func TestWilsonNoData(t *testing.T) {
	if got := Wilson(0, 0, 0.05); got != (Interval{0, 1}) {
		t.Errorf("Wilson(0,0) = %v, want [0,1]", got)
	}
}

// ExampleProportionCI shows the dispatcher on a GSM8K-sized run. The
// expected output is statsmodels' proportion_confint(742, 1319) rounded.
func ExampleProportionCI() {
	for _, m := range ProportionMethods() {
		iv, err := ProportionCI(m, 742, 1319, 0.05)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-15s [%.4f, %.4f]\n", m, iv.Lo, iv.Hi)
	}
	// Output:
	// wilson          [0.5356, 0.5891]
	// clopper_pearson [0.5353, 0.5895]
	// jeffreys        [0.5357, 0.5892]
}

// FuzzProportionCI: for any input the dispatcher either returns an error or
// an interval inside [0, 1] with Lo <= Hi; it never panics (gonum's quantile
// functions panic on probabilities outside [0, 1]).
func FuzzProportionCI(f *testing.F) {
	f.Add("wilson", 3, 10, 0.05)
	f.Add("clopper_pearson", 0, 1, 0.1)
	f.Add("jeffreys", 100000, 100000, 0.01)
	f.Add("jeffreys", 1, 2, -1.0)
	f.Add("beta", 1, 2, 0.05)
	f.Fuzz(func(t *testing.T, method string, k, n int, alpha float64) {
		// Keep n to sizes a run can have, so one input cannot take minutes.
		if n > 1e7 {
			n %= 1e7
		}
		iv, err := ProportionCI(method, k, n, alpha)
		if err != nil {
			return
		}
		if !(0 <= iv.Lo && iv.Lo <= iv.Hi && iv.Hi <= 1) {
			t.Errorf("ProportionCI(%q, %d, %d, %g) = %v", method, k, n, alpha, iv)
		}
	})
}
