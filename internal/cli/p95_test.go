package cli

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// The report's p95 latency of a target (analysis) and the gate's p95 of
// the same target are one number: both read the run's view (runview) and
// take stats' one quantile of it. The latencies are drawn so that the
// other ways a p95 used to be computed give other numbers: a latency with
// more digits than a view keeps (the report read the raw value), and order
// statistics at which interpolating from the lower neighbour (the old
// report's and gate's a + t·(b − a)) differs in its last bits from numpy's,
// which stats follows. So the test fails if either went back to its own
// quantile, or the report stopped reading the view.
func TestReportAndGateP95Agree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const cases, epochs = 40, 2
	lower := func(a, b, t float64) float64 { return a + t*(b-a) }
	// Draw latencies (with errors and a negative, which neither counts as
	// a latency) until their p95 tells the two interpolations apart.
	var lat []float64
	var failed []bool
	found := false
	for seed := uint64(1); seed < 1000 && !found; seed++ {
		rng := rand.New(rand.NewPCG(seed, 95))
		lat, failed = make([]float64, cases*epochs), make([]bool, cases*epochs)
		var kept []float64
		for j := range lat {
			lat[j] = 100 + 900*rng.Float64() // e.g. 734.1538672920912 ms: more digits than a view keeps
			failed[j] = j%7 == 3             // 11 failures: 69 latencies, whose p95 lies 0.6 of the way between two
			if !failed[j] {
				kept = append(kept, runview.Latency(&record.Result{LatencyMS: lat[j]}))
			}
		}
		slices.Sort(kept)
		h := 0.95 * float64(len(kept)-1)
		lo := int(math.Floor(h))
		found = h-float64(lo) >= 0.5 && lower(kept[lo], kept[lo+1], h-float64(lo)) != stats.QuantileSorted(kept, 0.95)
	}
	if !found {
		t.Fatal("no seed gave latencies whose p95 tells numpy's interpolation from the lower neighbour's")
	}

	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	started := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	run := &record.Run{ID: record.NewRunID(started), Spec: "p95", SpecHash: "sha256:s", DatasetHash: "sha256:d",
		PromptHash: "sha256:p", ScorersHash: "sha256:c", Cases: cases, Epochs: epochs, Targets: []string{"m"},
		Status: record.StatusComplete, Started: started, Ended: started}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var cs []record.Case
	var rs []record.Result
	var ss []record.Score
	for i := range cases {
		id := fmt.Sprintf("c%d", i+1)
		cs = append(cs, record.Case{RunID: run.ID, ID: id, Line: i + 1, Expected: []byte(`"4"`)})
		for e := 1; e <= epochs; e++ {
			j := i*epochs + e - 1
			r := record.Result{RunID: run.ID, CaseID: id, Target: "m", Epoch: e, Raw: "A: 4", Model: "m-1",
				LatencyMS: lat[j], FirstTokenMS: lat[j] / 3, Attempts: 1, CreatedAt: started}
			if failed[j] {
				r.Raw, r.ErrorKind = "", "timeout"
			}
			rs = append(rs, r)
			pass := !failed[j] && j%5 != 0
			shape := map[bool]string{true: "pass", false: "silent"}[pass]
			ss = append(ss, record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: "m", Epoch: e, Scorer: "correct",
				Primary: true, Pass: pass, Value: map[bool]float64{true: 1}[pass], Shape: shape})
		}
	}
	if err := st.PutCases(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, rs, ss); err != nil {
		t.Fatal(err)
	}

	rep, err := analysis.Analyze(ctx, st, run, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	view, err := runview.FromStore(ctx, st, run)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := gate.RulesFromFlags([]string{"latency_p95 max_rise=10%", "ttft_p95 max_rise=10%"}, view.Scorers, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gate.Evaluate(view, view, rules, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gateP95 := map[string]float64{}
	for _, c := range res.Targets[0].Checks {
		gateP95[c.Metric] = float64(c.Candidate)
	}
	report := rep.Targets[0].LatencyMS
	if report.FirstToken == nil {
		t.Fatal("the report has no time to first token")
	}
	want := stats.Quantile(view.Target("m").Latencies(), 0.95)
	if report.P95 != gateP95["latency_p95"] || report.P95 != want {
		t.Errorf("p95 latency: report %.17g, gate %.17g, stats.Quantile of the view %.17g: they must be one number", report.P95, gateP95["latency_p95"], want)
	}
	wantFT := stats.Quantile(view.Target("m").FirstTokens(), 0.95)
	if report.FirstToken.P95 != gateP95["ttft_p95"] || report.FirstToken.P95 != wantFT {
		t.Errorf("p95 time to first token: report %.17g, gate %.17g, stats.Quantile of the view %.17g: they must be one number", report.FirstToken.P95, gateP95["ttft_p95"], wantFT)
	}
}
