package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/longtest"

	"github.com/assay-eval/assay/internal/runview"
)

// The calibrated tests' z and one-sided p match statsmodels'
// proportions_ztest (testdata/drift_calibration.py).
func TestTwoProportionZMatchesStatsmodels(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "drift_calibration.json"))
	if err != nil {
		t.Fatal(err)
	}
	var refs []struct {
		X1, N1, X0, N0 int
		Alternative    string
		Z              float64
		PValue         float64 `json:"p_value"`
	}
	if err := json.Unmarshal(b, &refs); err != nil {
		t.Fatal(err)
	}
	if len(refs) < 6 {
		t.Fatalf("%d reference rows", len(refs))
	}
	for _, r := range refs {
		got := TwoProportionZ(r.X1, r.N1, r.X0, r.N0, r.Alternative)
		if math.Abs(got.Z-r.Z) > 1e-9 || math.Abs(got.PValue-r.PValue) > 1e-9*math.Max(r.PValue, 1e-12) {
			t.Errorf("%+v: got z %v p %v", r, got.Z, got.PValue)
		}
	}
	// No variation in the pooled sample: nothing shows a difference.
	if p := TwoProportionZ(30, 30, 30, 30, "smaller").PValue; p != 1 {
		t.Errorf("all identical on both sides: p %v, want 1", p)
	}
	if p := TwoProportionZ(0, 0, 3, 30, "larger").PValue; p != 1 {
		t.Errorf("empty canary: p %v, want 1", p)
	}
}

// simModel is how one run of a model answers a case: its canonical output
// with probability q (identical across runs, the case's canonical verdict),
// else an output of its own whose verdict is the canonical one flipped with
// probability r.
type simModel struct{ q, r float64 }

// Self-agreement of the merely non-deterministic model: 85% identical
// outputs and 3% verdict flips between two runs. q² = 0.85; with
// s = (1−q)·r the chance a run's verdict is not the canonical one, the flip
// rate is 2s(1−s) = 0.03.
func noisyModel() simModel {
	q := math.Sqrt(0.85)
	s := (1 - math.Sqrt(1-2*0.03)) / 2
	return simModel{q: q, r: s / (1 - q)}
}

// A real behaviour change: the canary keeps its canonical output on 70% of
// the cases and its verdict is off the canonical one with s′ such that the
// flip rate against the noisy baseline is s(1−s′) + s′(1−s) = 0.15.
func changedModel() simModel {
	base := noisyModel()
	s := (1 - base.q) * base.r
	s2 := (0.15 - s) / (1 - 2*s)
	return simModel{q: 0.70, r: s2 / 0.30}
}

// simSnapshot is a run of one target at temperature 0 over the cases whose
// canonical verdicts are canon, epochs per case, drawn from m.
func simSnapshot(rng *rand.Rand, id string, canon []int8, epochs int, m simModel) *runview.View {
	n := len(canon) * epochs
	zero := 0.0
	tg := &runview.Target{Name: "canary", Pass: map[string][]int8{"correct": make([]int8, n)}, Shape: make([]byte, n), Kind: make([]int32, n),
		CostUSD: make([]float64, n), LatencyMS: make([]float64, n), OutputHash: make([]uint64, n), Errored: make([]bool, n),
		Cached: make([]bool, n), Temperature: &zero, TemperatureKnown: true}
	s := &runview.View{Run: runview.RunInfo{ID: id, DatasetHash: "sha256:d", PromptHash: "sha256:p", ScorersHash: "sha256:s", Epochs: epochs},
		Source: id + ".json", Scorers: []string{"correct"}, Primary: "correct", Epochs: epochs, Targets: []*runview.Target{tg}}
	for i, v := range canon {
		s.AddCase(fmt.Sprintf("c%03d", i), nil)
		for e := range epochs {
			j := i*epochs + e
			tg.LatencyMS[j] = 100
			tg.OutputHash[j] = uint64(i) // the canonical output of case i
			verdict := v
			if rng.Float64() >= m.q {
				tg.OutputHash[j] = rng.Uint64() | 1<<63 // an output of its own
				if rng.Float64() < m.r {
					verdict = 1 - v
				}
			}
			tg.Pass["correct"][j] = verdict
			tg.Shape[j] = runview.ShapePass
			if verdict == 0 {
				tg.Shape[j] = runview.ShapeSilent
			}
		}
	}
	return s
}

// simNights runs nights simulated nights of a calibrated canary (a
// baseline of two epochs, so drift calibrates with them) or an
// uncalibrated one (one epoch), with the canary drawn from canary, and
// returns the share flagged drifted.
func simNights(t *testing.T, seed uint64, nights, cases int, calibrated bool, canary simModel) float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 19))
	epochs := 1
	if calibrated {
		epochs = 2
	}
	flagged := 0
	for range nights {
		canon := make([]int8, cases)
		for i := range canon {
			if rng.Float64() < 0.8 {
				canon[i] = 1
			}
		}
		before := BaselineDriftSide(simSnapshot(rng, "base", canon, epochs, noisyModel()))
		after := BaselineDriftSide(simSnapshot(rng, "night", canon, 1, canary))
		r, err := DriftSides(before, after, DriftOptions{})
		if err != nil {
			t.Fatal(err)
		}
		td := r.Targets[0]
		if (td.Calibration != nil) != calibrated || len(r.CannotJudge) > 0 {
			t.Fatalf("calibration %+v, cannot judge %q; want calibrated %v", td.Calibration, r.CannotJudge, calibrated)
		}
		if td.Verdict == DriftDrifted {
			flagged++
		}
	}
	return float64(flagged) / float64(nights)
}

// Seeded simulation of nightly canaries on 200 cases at α = 0.05, each
// night with a fresh baseline (two epochs: the calibration) and canary.
// A model that is merely non-deterministic (85% identical outputs, 3%
// verdict flips between two runs of itself) is flagged in at most α plus
// three standard errors of the simulation; a real behaviour change (15%
// flips against the baseline, 64.5% identical) is flagged nearly always.
// Uncalibrated (a one-epoch baseline) the 85% identical outputs at
// temperature 0 alone (far below the 95% threshold) raise no alarm.
// Measured (seeds fixed): false alarms 0.95% of 2000 nights calibrated
// (three tests at α/3 each), 1.15% uncalibrated (the exact test of the
// flips' direction alone, at α); the change is flagged on 100% of 500.
func TestDriftCalibratedSimulation(t *testing.T) {
	longtest.Skip(t)
	const alpha, nights = 0.05, 2000
	limit := alpha + 3*math.Sqrt(alpha*(1-alpha)/nights)
	noisy := simNights(t, 1, nights, 200, true, noisyModel())
	if noisy > limit {
		t.Errorf("calibrated, merely non-deterministic: flagged %.2f%% of nights, want ≤ %.2f%%", 100*noisy, 100*limit)
	}
	unc := simNights(t, 2, nights, 200, false, noisyModel())
	if unc > limit {
		t.Errorf("uncalibrated, merely non-deterministic: flagged %.2f%% of nights, want ≤ %.2f%% (the identical-output rate must not alarm alone)", 100*unc, 100*limit)
	}
	changed := simNights(t, 3, 500, 200, true, changedModel())
	if changed < 0.9 {
		t.Errorf("calibrated, behaviour changed (15%% flips): flagged %.1f%% of nights, want ≥ 90%%", 100*changed)
	}
	t.Logf("flagged: noisy calibrated %.2f%%, noisy uncalibrated %.2f%%, changed %.1f%% (limit %.2f%%)", 100*noisy, 100*unc, 100*changed, 100*limit)
}

// The simulated models have the self-agreement they are said to have.
func TestSimModelRates(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	canon := make([]int8, 20000)
	for i := range canon {
		canon[i] = int8(i % 2)
	}
	a := simSnapshot(rng, "a", canon, 1, noisyModel()).Targets[0]
	b := simSnapshot(rng, "b", canon, 1, noisyModel()).Targets[0]
	c := simSnapshot(rng, "c", canon, 1, changedModel()).Targets[0]
	rate := func(x, y *runview.Target) (ident, flip float64) {
		for j := range x.OutputHash {
			if x.OutputHash[j] == y.OutputHash[j] {
				ident++
			}
			if x.Pass["correct"][j] != y.Pass["correct"][j] {
				flip++
			}
		}
		return ident / float64(len(canon)), flip / float64(len(canon))
	}
	if i, f := rate(a, b); math.Abs(i-0.85) > 0.01 || math.Abs(f-0.03) > 0.005 {
		t.Errorf("noisy vs noisy: %.3f identical, %.3f flips; want 0.85, 0.03", i, f)
	}
	if i, f := rate(a, c); math.Abs(i-0.645) > 0.01 || math.Abs(f-0.15) > 0.01 {
		t.Errorf("noisy vs changed: %.3f identical, %.3f flips; want 0.645, 0.15", i, f)
	}
}

// Every call of the canary failed (a bad key): no pair has an output on
// both sides, so nothing is compared, the verdict is "cannot judge" (never
// drifted) and the reason names the count, the run and the error kind.
// A few failed calls are left out of the flips and counted apart.
func TestDriftErrorsAreNotDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	canon := make([]int8, 152)
	for i := range canon {
		canon[i] = int8(i % 3 % 2)
	}
	before := simSnapshot(rng, "good", canon, 1, simModel{q: 1})
	after := simSnapshot(rng, "night", canon, 1, simModel{q: 1})
	at := after.Targets[0]
	for j := range at.Errored {
		at.Errored[j], at.Pass["correct"][j], at.Shape[j], at.OutputHash[j] = true, 0, runview.ShapeLoud, 0
		at.SetKind(j, "auth")
	}
	r, err := DriftSides(BaselineDriftSide(before), BaselineDriftSide(after), DriftOptions{})
	if err != nil {
		t.Fatal(err)
	}
	td := r.Targets[0]
	if td.Verdict != DriftCannotJudge || len(r.Drifted) != 0 || td.Flips.N != 0 || td.Identical.N != 0 || td.Excluded.Pairs != 152 || td.Excluded.After["auth"] != 152 {
		t.Errorf("%+v: want cannot judge, nothing compared, 152 pairs left out (auth)", td)
	}
	want := "cannot judge: 152 of 152 calls of canary in baseline file night.json (run night) failed: auth"
	if len(r.CannotJudge) != 1 || r.CannotJudge[0] != want {
		t.Errorf("cannot judge %q, want %q", r.CannotJudge, want)
	}

	// 5 of 152 fail with a timeout on cases that passed: they are left out,
	// not counted as 5 pass→fail flips.
	after = simSnapshot(rng, "night", canon, 1, simModel{q: 1})
	at = after.Targets[0]
	failed := 0
	for j := range at.Errored {
		if canon[j] == 1 && failed < 5 {
			at.Errored[j], at.Pass["correct"][j], at.Shape[j] = true, 0, runview.ShapeLoud
			at.SetKind(j, "timeout")
			failed++
		}
	}
	r, err = DriftSides(BaselineDriftSide(before), BaselineDriftSide(after), DriftOptions{})
	if err != nil {
		t.Fatal(err)
	}
	td = r.Targets[0]
	if td.Verdict != DriftStable || td.Flips.N != 147 || td.Flips.Flipped != 0 || td.Identical.N != 147 || td.Identical.Identical != 147 ||
		td.Excluded.Pairs != 5 || td.Excluded.After["timeout"] != 5 || len(td.Excluded.Before) != 0 || td.Health.After.Failed != 5 || td.Health.After.Calls != 152 {
		t.Errorf("%+v: want stable, 147 compared, 5 left out (timeout, after)", td)
	}
	if !strings.Contains(strings.Join(td.Notes, "\n"), "5 pairs left out") {
		t.Errorf("notes %q: want the 5 pairs left out said", td.Notes)
	}
}

// Flipped cases are listed, pass→fail first, all of them.
func TestDriftListsFlippedCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	canon := make([]int8, 40)
	for i := range canon {
		canon[i] = 1
	}
	before := simSnapshot(rng, "b", canon, 1, simModel{q: 1})
	after := simSnapshot(rng, "a", canon, 1, simModel{q: 1})
	bt, at := before.Targets[0], after.Targets[0]
	bt.Pass["correct"][3] = 0 // case 3: fail→pass
	for _, j := range []int{30, 5, 17} {
		at.Pass["correct"][j] = 0 // pass→fail
	}
	r, err := DriftSides(BaselineDriftSide(before), BaselineDriftSide(after), DriftOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Targets[0].FlippedCases
	want := []DriftFlippedCase{{"c005", 1, "pass_to_fail"}, {"c017", 1, "pass_to_fail"}, {"c030", 1, "pass_to_fail"}, {"c003", 1, "fail_to_pass"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("flipped %v, want %v", got, want)
	}
}
