package stats

import (
	"math"
	"strconv"
	"testing"
)

// goldenFloat reads a JSON number, or null as NaN (the golden scripts write
// undefined results as null; encoding/json has no NaN).
type goldenFloat float64

func (g *goldenFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*g = goldenFloat(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*g = goldenFloat(f)
	return err
}

// sameFloat compares with close9, treating NaN as equal to NaN.
func sameFloat(got float64, want goldenFloat) bool {
	w := float64(want)
	if math.IsNaN(w) || math.IsNaN(got) {
		return math.IsNaN(w) && math.IsNaN(got)
	}
	return close9(got, w)
}

type meansGolden struct {
	MeanSE []struct {
		Name, Source string
		Xs           []float64
		Mean, SE     goldenFloat
	} `json:"mean_se"`
	Clustered []struct {
		Name, Source string
		Xs           []float64
		Clusters     []string
		Mean, SE     goldenFloat
	}
	Epochs []struct {
		Name, Source string
		Scores       [][]float64
		CaseMeans    []goldenFloat `json:"case_means"`
		WithinVar    goldenFloat   `json:"within_var"`
	}
}

// TestMeanSEMatchesStatsmodels: the mean and its standard error match
// statsmodels' intercept-only OLS (or exact rational arithmetic for data
// offset by 1e9, where naive float sums lose the spread); see
// testdata/means.py.
func TestMeanSEMatchesStatsmodels(t *testing.T) {
	var g meansGolden
	loadGolden(t, "testdata/means.json", &g)
	if len(g.MeanSE) < 8 {
		t.Fatalf("only %d mean_se vectors", len(g.MeanSE))
	}
	for _, v := range g.MeanSE {
		m, se := MeanSE(v.Xs)
		if !sameFloat(m, v.Mean) || !sameFloat(se, v.SE) {
			t.Errorf("%s: MeanSE = (%.15g, %.15g), %s (%.15g, %.15g)", v.Name, m, se, v.Source, v.Mean, v.SE)
		}
	}
}

// TestClusteredMeanSEMatchesStatsmodels: the cluster-robust standard error
// matches statsmodels' OLS(y, ones).fit(cov_type="cluster") (CR1), with ""
// meaning "its own cluster".
func TestClusteredMeanSEMatchesStatsmodels(t *testing.T) {
	var g meansGolden
	loadGolden(t, "testdata/means.json", &g)
	if len(g.Clustered) < 6 {
		t.Fatalf("only %d clustered vectors", len(g.Clustered))
	}
	for _, v := range g.Clustered {
		m, se := ClusteredMeanSE(v.Xs, v.Clusters)
		if !sameFloat(m, v.Mean) || !sameFloat(se, v.SE) {
			t.Errorf("%s: ClusteredMeanSE = (%.15g, %.15g), %s (%.15g, %.15g)", v.Name, m, se, v.Source, v.Mean, v.SE)
		}
	}
}

// TestClusteredReducesToMeanSE: with every case in its own cluster the
// clustered standard error is the ordinary one, and correlated clusters
// widen it (the reason to cluster at all).
func TestClusteredReducesToMeanSE(t *testing.T) {
	xs := []float64{1, 0, 1, 1, 0, 1, 0.5, 0.25, 1, 1, 0, 0}
	ids := make([]string, len(xs))
	for i := range ids {
		ids[i] = "case-" + strconv.Itoa(i)
	}
	m0, se0 := MeanSE(xs)
	for name, labels := range map[string][]string{"unique labels": ids, "empty labels": make([]string, len(xs))} {
		m, se := ClusteredMeanSE(xs, labels)
		if math.Abs(m-m0) > 1e-15 || math.Abs(se-se0) > 1e-15 {
			t.Errorf("%s: ClusteredMeanSE = (%g, %g), MeanSE (%g, %g)", name, m, se, m0, se0)
		}
	}
	// Pairs of identical scores, one cluster per pair: the information is
	// that of 6 cases, not 12, so the standard error grows.
	var pairs []float64
	var tags []string
	for i, x := range xs[:6] {
		pairs = append(pairs, x, x)
		tags = append(tags, strconv.Itoa(i), strconv.Itoa(i))
	}
	_, naive := MeanSE(pairs)
	_, clustered := ClusteredMeanSE(pairs, tags)
	if !(clustered > 1.3*naive) {
		t.Errorf("duplicated cases: clustered SE %g not clearly above naive %g", clustered, naive)
	}
}

func TestMeanEdgeCases(t *testing.T) {
	nan := math.NaN()
	check := func(name string, got, want float64) {
		t.Helper()
		if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	m, se := MeanSE(nil)
	check("MeanSE(nil) mean", m, nan)
	check("MeanSE(nil) se", se, nan)
	m, se = MeanSE([]float64{1, nan, 0})
	check("MeanSE(NaN) mean", m, nan)
	check("MeanSE(NaN) se", se, nan)
	m, se = MeanSE([]float64{1, math.Inf(1)})
	check("MeanSE(Inf) mean", m, math.Inf(1))
	check("MeanSE(Inf) se", se, nan)

	m, se = ClusteredMeanSE(nil, nil)
	check("ClusteredMeanSE(nil) mean", m, nan)
	check("ClusteredMeanSE(nil) se", se, nan)
	m, se = ClusteredMeanSE([]float64{1, 0}, []string{"a"})
	check("ClusteredMeanSE(mismatch) mean", m, nan)
	check("ClusteredMeanSE(mismatch) se", se, nan)
	m, se = ClusteredMeanSE([]float64{1, 0, 1}, []string{"a", "a", "a"})
	check("ClusteredMeanSE(one cluster) mean", m, 2.0/3)
	check("ClusteredMeanSE(one cluster) se", se, nan)

	means, within := EpochMeans(nil)
	if len(means) != 0 {
		t.Errorf("EpochMeans(nil) means = %v", means)
	}
	check("EpochMeans(nil) within", within, nan)

	check("NormalCI bad alpha", NormalCI(0.5, 0.1, 0).Lo, nan)
	check("NormalCI negative se", NormalCI(0.5, -0.1, 0.05).Hi, nan)
	check("NormalCI NaN se", NormalCI(0.5, nan, 0.05).Hi, nan)
	check("NormalCI NaN mean", NormalCI(nan, 0.1, 0.05).Lo, nan)
}

// TestEpochMeansMatchesNumpy: per-case means and the mean within-case
// variance match numpy (testdata/means.py), including ragged cases, a case
// with one epoch (no variance information) and one with none (NaN mean).
func TestEpochMeansMatchesNumpy(t *testing.T) {
	var g meansGolden
	loadGolden(t, "testdata/means.json", &g)
	if len(g.Epochs) < 4 {
		t.Fatalf("only %d epoch vectors", len(g.Epochs))
	}
	for _, v := range g.Epochs {
		means, within := EpochMeans(v.Scores)
		if len(means) != len(v.CaseMeans) {
			t.Errorf("%s: %d case means, want %d", v.Name, len(means), len(v.CaseMeans))
			continue
		}
		for i := range means {
			if !sameFloat(means[i], v.CaseMeans[i]) {
				t.Errorf("%s: case %d mean %.15g, numpy %.15g", v.Name, i, means[i], v.CaseMeans[i])
			}
		}
		if !sameFloat(within, v.WithinVar) {
			t.Errorf("%s: within-case variance %.15g, numpy %.15g", v.Name, within, v.WithinVar)
		}
	}
}

// TestNormalCI: the 95% interval is mean ± 1.959963984540054·se (the
// standard normal 0.975 quantile, to 16 digits) and the 90% one uses
// 1.6448536269514722.
func TestNormalCI(t *testing.T) {
	for _, tc := range []struct{ alpha, z float64 }{{0.05, 1.959963984540054}, {0.1, 1.6448536269514722}} {
		got := NormalCI(0.7, 0.02, tc.alpha)
		if math.Abs(got.Lo-(0.7-tc.z*0.02)) > 1e-12 || math.Abs(got.Hi-(0.7+tc.z*0.02)) > 1e-12 {
			t.Errorf("NormalCI(0.7, 0.02, %g) = %v", tc.alpha, got)
		}
	}
}

// TestMeanSEPrecision: a million scores offset by 1e9 keep their spread; a
// naive sum of squares (Σx² - n·mean²) would return garbage here.
func TestMeanSEPrecision(t *testing.T) {
	const n = 1_000_000
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 1e9 + float64(i%2) // alternating 1e9, 1e9+1
	}
	m, se := MeanSE(xs)
	// Exact: mean 1e9+0.5, sample variance 0.25·n/(n-1).
	wantSE := math.Sqrt(0.25 * n / (n - 1) / n)
	if m != 1e9+0.5 || math.Abs(se-wantSE) > 1e-12*wantSE {
		t.Errorf("MeanSE = (%.17g, %.17g), want (%.17g, %.17g)", m, se, 1e9+0.5, wantSE)
	}
}
