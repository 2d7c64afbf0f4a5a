package harness

import (
	"math"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/load"
)

// Poisson arrivals: gaps with the rate's mean and a coefficient of
// variation of 1, exponentially distributed (Kolmogorov–Smirnov), counts
// per second with a variance equal to their mean; the same seed gives the
// same schedule and another seed another.
func TestPoissonSchedule(t *testing.T) {
	const rate = 100.0
	span := 300 * time.Second
	s, err := Schedule(load.ArrivalsPoisson, rate, span, 42)
	if err != nil {
		t.Fatal(err)
	}
	n := len(s)
	// The count is Poisson(30,000): SD 173.
	if math.Abs(float64(n)-30000) > 5*173 {
		t.Fatalf("%d arrivals in 300 s at 100/s", n)
	}
	gaps := make([]float64, n)
	prev := 0.0
	for i, at := range s {
		x := at.Seconds()
		if x < prev || at >= span {
			t.Fatalf("arrival %d at %v out of order or past the span", i, at)
		}
		gaps[i] = x - prev
		prev = x
	}
	mean, sd := meanSD(gaps)
	// The mean gap's SE is 0.01/√n ≈ 5.8e-5 s; the CV's about 1/√n.
	if math.Abs(mean-0.01) > 5*0.01/math.Sqrt(float64(n)) {
		t.Errorf("mean gap %g s; want 0.01", mean)
	}
	if cv := sd / mean; math.Abs(cv-1) > 5/math.Sqrt(float64(n)) {
		t.Errorf("gaps' coefficient of variation %g; want 1 (exponential)", cv)
	}
	// Kolmogorov–Smirnov against Exp(rate): D below the 1% critical value.
	sorted := slices.Clone(gaps)
	sort.Float64s(sorted)
	d := 0.0
	for i, g := range sorted {
		f := 1 - math.Exp(-rate*g)
		d = max(d, math.Abs(f-float64(i)/float64(n)), math.Abs(float64(i+1)/float64(n)-f))
	}
	if crit := 1.63 / math.Sqrt(float64(n)); d > crit {
		t.Errorf("KS distance %g from the exponential (1%% critical value %g)", d, crit)
	}
	// Counts per second: index of dispersion 1, SE √(2/(k−1)).
	counts := make([]float64, 300)
	for _, at := range s {
		counts[int(at/time.Second)]++
	}
	cm, csd := meanSD(counts)
	if disp := csd * csd / cm; math.Abs(disp-1) > 4*math.Sqrt(2.0/299) {
		t.Errorf("counts per second: variance/mean %g; want 1 (Poisson)", disp)
	}
	again, _ := Schedule(load.ArrivalsPoisson, rate, span, 42)
	other, _ := Schedule(load.ArrivalsPoisson, rate, span, 43)
	if !slices.Equal(s, again) || slices.Equal(s[:100], other[:100]) {
		t.Error("the schedule is not a function of its seed")
	}
}

func TestUniformSchedule(t *testing.T) {
	s, err := Schedule(load.ArrivalsUniform, 40, 1500*time.Millisecond, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 60 || s[0] != 0 || s[59] != 1475*time.Millisecond {
		t.Errorf("%d arrivals, first %v, last %v", len(s), s[0], s[len(s)-1])
	}
	for i := 1; i < len(s); i++ {
		if g := s[i] - s[i-1]; g < 25*time.Millisecond-1 || g > 25*time.Millisecond+1 {
			t.Fatalf("gap %v", g)
		}
	}
	if _, err := Schedule("bursty", 1, time.Second, 1); err == nil || err.Error() != `arrivals "bursty": want poisson or uniform` {
		t.Errorf("err %v", err)
	}
	if _, err := Schedule(load.ArrivalsPoisson, 0, time.Second, 1); err == nil || err.Error() != "rate 0: must be above 0" {
		t.Errorf("err %v", err)
	}
}

func meanSD(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

// The requests a run actually starts are the step's seeded Poisson
// schedule: as many, each started at its scheduled time (late by a little
// scheduling, never early).
func TestPoissonArrivalsAsSent(t *testing.T) {
	f := &fakeServer{Slots: 1000, Service: 2 * time.Millisecond}
	sink, err := run(t, []Target{target("fake", f, nil)}, Options{Mode: load.ModeRate, Levels: []float64{200}, Duration: 2 * time.Second, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	sched, err := Schedule(load.ArrivalsPoisson, 200, 2*time.Second, load.StepSeed(8, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.reqs) != len(sched) {
		t.Fatalf("%d requests sent for %d scheduled", len(sink.reqs), len(sched))
	}
	var late []float64
	for i, r := range sink.reqs {
		d := r.StartMS - msOf(sched[i])
		if d < -0.5 {
			t.Fatalf("request %d started %g ms before its time", i, -d)
		}
		late = append(late, d)
	}
	slices.Sort(late)
	if p50 := late[len(late)/2]; p50 > 5 {
		t.Errorf("requests started %g ms late at the median", p50)
	}
}
