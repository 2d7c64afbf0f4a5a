package load

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/assay-eval/assay/internal/record"
)

// golden is testdata/load_stats.json, made by testdata/load_stats.py with
// numpy and statsmodels.
type golden struct {
	B     int `json:"B"`
	Seeds int `json:"seeds"`
	Steps []struct {
		Name     string    `json:"name"`
		Latency  []float64 `json:"latency"`
		TTFT     []float64 `json:"ttft"`
		Measures map[string]struct {
			Point float64 `json:"point"`
			Lo    mcValue `json:"lo"`
			Hi    mcValue `json:"hi"`
		} `json:"measures"`
	} `json:"steps"`
	Wilson []struct {
		K, N   int
		Lo, Hi float64
	} `json:"wilson"`
	Gate []struct {
		Name    string    `json:"name"`
		Base    []float64 `json:"base"`
		Cand    []float64 `json:"cand"`
		MaxRise string    `json:"max_rise"`
		BaseP95 float64   `json:"base_p95"`
		CandP95 float64   `json:"cand_p95"`
		Lo      mcValue   `json:"lo"`
		Hi      mcValue   `json:"hi"`
	} `json:"gate"`
}

// mcValue is a bootstrap endpoint's mean and standard deviation over the
// reference's seeds.
type mcValue struct{ Mean, SD float64 }

func readGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile("testdata/load_stats.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// near checks one bootstrap endpoint against the reference's: our single
// run and the mean of its seeds differ by Monte Carlo error, whose spread
// is the per-run SD (times √(1 + 1/seeds) for the mean's own error).
func near(t *testing.T, what string, got float64, want mcValue, seeds int) {
	t.Helper()
	tol := 4*want.SD*math.Sqrt(1+1/float64(seeds)) + 1e-9*math.Abs(want.Mean)
	if math.Abs(got-want.Mean) > tol {
		t.Errorf("%s: %g; numpy's bootstrap %g ± %g (sd over seeds)", what, got, want.Mean, want.SD)
	}
}

// A step's percentiles equal numpy's np.quantile, and their bootstrap
// intervals over requests agree with numpy's within Monte Carlo error.
func TestStepStatisticsAgainstNumpy(t *testing.T) {
	g := readGolden(t)
	for _, s := range g.Steps {
		t.Run(s.Name, func(t *testing.T) {
			st := record.LoadStep{Target: "t", Mode: ModeRate, Level: 10, DurationMS: 60000, Cores: 2}
			var reqs []record.LoadRequest
			for i := range s.Latency {
				reqs = append(reqs, record.LoadRequest{Target: "t", Seq: i, StartMS: float64(i), LatencyMS: s.Latency[i],
					FirstTokenMS: s.TTFT[i], InterTokenMS: math.NaN()})
			}
			res, err := Analyse([]record.LoadStep{st}, reqs, AnalyseOptions{Resamples: g.B, Seed: 11})
			if err != nil {
				t.Fatal(err)
			}
			sr := res.Targets[0].Steps[0]
			got := map[string]Estimate{
				"latency 0.5": sr.P50, "latency 0.95": sr.P95, "latency 0.99": sr.P99,
				"ttft 0.5": sr.TTFT50, "ttft 0.95": sr.TTFT95,
			}
			for name, want := range s.Measures {
				e := got[name]
				if math.Abs(float64(e.Value)-want.Point) > 1e-9*want.Point {
					t.Errorf("%s: %v; np.quantile %v", name, e.Value, want.Point)
				}
				near(t, name+" lower bound", float64(e.Lo), want.Lo, g.Seeds)
				near(t, name+" upper bound", float64(e.Hi), want.Hi, g.Seeds)
			}
		})
	}
}

// Error rates carry statsmodels' Wilson interval.
func TestErrorRateWilson(t *testing.T) {
	for _, w := range readGolden(t).Wilson {
		st := record.LoadStep{Target: "t", Mode: ModeRate, Level: 1, DurationMS: 1000}
		var reqs []record.LoadRequest
		for i := range w.N {
			r := record.LoadRequest{Target: "t", Seq: i, LatencyMS: 1, FirstTokenMS: math.NaN(), InterTokenMS: math.NaN()}
			if i < w.K {
				r.ErrorKind, r.Status = "server_error", 503
			}
			reqs = append(reqs, r)
		}
		res, err := Analyse([]record.LoadStep{st}, reqs, AnalyseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e := res.Targets[0].Steps[0].Errors
		if e.Count != w.K || e.N != w.N || math.Abs(float64(e.Lo)-w.Lo) > 1e-12 || math.Abs(float64(e.Hi)-w.Hi) > 1e-12 {
			t.Errorf("%d of %d: %+v; statsmodels [%v, %v]", w.K, w.N, e, w.Lo, w.Hi)
		}
	}
}

// The gate's one-sided bounds of a p95 rise beyond the allowance agree
// with numpy's, and decide: no change passes, a 10% rise against 20%
// allowed on these samples is inconclusive, 60% fails.
func TestGateAgainstNumpy(t *testing.T) {
	g := readGolden(t)
	verdicts := map[string]string{"same": Pass, "slower by 10%": Inconclusive, "slower by 60%": Fail}
	for _, c := range g.Gate {
		t.Run(c.Name, func(t *testing.T) {
			data := func(xs []float64) Data {
				d := Data{Steps: []record.LoadStep{{Target: "t", Step: 0, Mode: ModeRate, Level: 20, DurationMS: 1000}}}
				for i, x := range xs {
					d.Requests = append(d.Requests, record.LoadRequest{Target: "t", Seq: i, LatencyMS: x, FirstTokenMS: math.NaN()})
				}
				return d
			}
			res, err := Gate(data(c.Base), data(c.Cand), []Rule{{Metric: MetricP95, At: 20, MaxRise: c.MaxRise}}, GateOptions{Resamples: g.B, Seed: 4})
			if err != nil {
				t.Fatal(err)
			}
			ch := res.Checks[0]
			if math.Abs(float64(ch.Base)-c.BaseP95) > 1e-9 || math.Abs(float64(ch.Cand)-c.CandP95) > 1e-9 {
				t.Errorf("p95 %v → %v; numpy %v → %v", ch.Base, ch.Cand, c.BaseP95, c.CandP95)
			}
			near(t, "lower bound", float64(ch.Lo), c.Lo, g.Seeds)
			near(t, "upper bound", float64(ch.Hi), c.Hi, g.Seeds)
			if ch.Verdict != verdicts[c.Name] || res.Verdict != ch.Verdict {
				t.Errorf("verdict %s (gate %s): %s", ch.Verdict, res.Verdict, ch.Why)
			}
		})
	}
}
