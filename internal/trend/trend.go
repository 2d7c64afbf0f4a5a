// Package trend owns `assay trend`: scored production traces' pass rates per
// model by week, with intervals, and a drop flagged when a week's rate is
// below the week before's by a two-sample test, multiplicity-corrected.
//
// Compute (Compute, from plain Observations) is apart from reading the
// store (Collect, from a record.Reader) and from rendering (internal/report).
package trend

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// Observation is one scored production trace: the model that answered it,
// when, the sample stratum it was drawn from and its weight (the inverse of
// its selection probability), and the scorer's verdict.
type Observation struct {
	TraceID string
	RunID   string
	Model   string
	Time    time.Time
	// Sample is the ID of the sample the trace was drawn in and Stratum
	// its stratum there ("route=a"): the rate's variance is stratified by
	// both (each sample is its own design), the drop test's pooled variance
	// by Stratum alone (the same stratum of two weeks' samples).
	Sample  string
	Stratum string
	Weight  float64
	Pass    bool
	// ScorersHash is the scorers' definition the verdict was made with.
	ScorersHash string
}

// Options are what Compute needs besides the observations.
type Options struct {
	// Level is the confidence level of every interval (0.95); 1 − Level is
	// the family-wise error rate of the drop tests.
	Level float64
	// Window is the window's length in days; 0 or 7 is the ISO week (UTC,
	// Monday 00:00). Windows of any length start on a Monday-aligned grid
	// (1970-01-05 + k·Window days), so 7 is the ISO week.
	Window int
	// Weeks keeps the newest Weeks windows, ending at the window of the
	// newest observation (0: every window from the oldest observation).
	Weeks int
	// Since drops observations before it (zero: none dropped).
	Since time.Time
	// MinN is the fewest traces a window needs for its rate to be tested
	// or to be tested against (default DefaultMinN).
	MinN int
}

// DefaultMinN is Options.MinN's default: below it the normal
// approximation of the two-sample test is not trusted.
const DefaultMinN = 10

// Report is `assay trend`'s result.
type Report struct {
	Level float64 `json:"level"`
	// Alpha is 1 − Level: the family-wise false-alarm rate the drop tests
	// are held to (Holm across every model × window tested).
	Alpha float64 `json:"alpha"`
	// WindowDays is the window length; ISOWeeks says the windows are ISO
	// weeks (labelled 2026-W49).
	WindowDays int  `json:"window_days"`
	ISOWeeks   bool `json:"iso_weeks"`
	MinN       int  `json:"min_n"`
	// Spec is the spec whose runs were read ("" every spec's); Scorer the
	// scorer asked for ("" the runs' primary scorers); Scorers the names of
	// the scorers the verdicts came from.
	Spec    string   `json:"spec,omitempty"`
	Scorer  string   `json:"scorer,omitempty"`
	Scorers []string `json:"scorers"`
	// Runs are the score-traces runs read, newest first.
	Runs []string `json:"runs"`
	// Traces counts the traces in the windows shown; Duplicates the
	// verdicts left out because a newer run scored the same trace;
	// NoVerdict the sampled traces without a verdict of the scorer;
	// Untimed those without a readable time tag; Earlier those before
	// Since or the first window shown.
	Traces     int `json:"traces"`
	Duplicates int `json:"duplicates"`
	NoVerdict  int `json:"no_verdict"`
	Untimed    int `json:"untimed"`
	Earlier    int `json:"earlier"`
	// Windows are the windows shown, oldest first.
	Windows []Window `json:"windows"`
	// Models are the models' series, by name.
	Models []Series `json:"models"`
	// Tests is the size of the family the p-values were Holm-adjusted in;
	// Drops how many changes were flagged.
	Tests int `json:"tests"`
	Drops int `json:"drops"`
	// Notes are what a reader should know before trusting a flag.
	Notes []string `json:"notes,omitempty"`
}

// Window is one time window.
type Window struct {
	// Label is the ISO week ("2026-W49") or, for other lengths, the start
	// date ("2026-11-30").
	Label string    `json:"label"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"` // exclusive
}

// Series is one model's rates over the windows.
type Series struct {
	Model string `json:"model"`
	// Points has one entry per window shown (Report.Windows order); a
	// window without traces of the model has N 0.
	Points []Point `json:"points"`
}

// Point is one model's rate in one window.
type Point struct {
	Window string `json:"window"`
	// N is the number of scored traces, Passed how many passed;
	// Population the traffic they stand for (the sum of their weights).
	N          int     `json:"n"`
	Passed     int     `json:"passed"`
	Population float64 `json:"population,omitempty"`
	// Rate is the weighted pass rate, SE its stratified (linearised)
	// standard error, [Lo, Hi] its interval at Level (stats.WeightedMean:
	// Wilson's on the effective sample size). Zero when N is 0.
	Rate float64 `json:"rate"`
	SE   float64 `json:"se"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	// Change is the change from the baseline window, tested; nil when
	// there is none (Untested says why, when it is not the first window).
	Change   *Change `json:"change,omitempty"`
	Untested string  `json:"untested,omitempty"`
}

// Change is a window's rate against its baseline: the latest earlier
// window shown with at least MinN traces of the model.
type Change struct {
	Against string `json:"against"`
	// Delta is the rate minus the baseline's; SE = √(SE² + SE_base²) (two
	// independent samples); [Lo, Hi] the two-sided interval Delta ± z·SE at
	// Level, not adjusted for multiplicity.
	Delta float64 `json:"delta"`
	SE    float64 `json:"se"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// SE0 is Delta's standard error under the null hypothesis of no
	// change (pooledSE: each stratum's pass rate pooled over both windows).
	// Z is Delta/SE0; P the one-sided p-value Φ(Z) of H0: no drop; PAdj P
	// Holm-adjusted across every change tested; Drop is PAdj ≤ Alpha.
	SE0  float64 `json:"se0"`
	Z    float64 `json:"z"`
	P    float64 `json:"p"`
	PAdj float64 `json:"p_adjusted"`
	Drop bool    `json:"drop"`
	// ScorersChanged says the two windows' verdicts were made with
	// different scorer definitions: a change may be theirs, not the model's.
	ScorersChanged bool `json:"scorers_changed,omitempty"`
}

// superpopulation scales every weight given to stats.WeightedMean so that
// each stratum's sampling fraction n_h/Σw (its finite population
// correction) vanishes while the estimate, which depends on the weights'
// ratios only, is unchanged. A trend asks whether the model's pass rate
// changed, not what one week's finite traffic scored: each week's calls are
// themselves a draw of the model's behaviour, and the correction would
// take that variance away (a stratum sampled at 2 in 3 would count a
// third of its spread). TestDropFalseAlarmAndPower measured what keeping it
// did: a false alarm in 18% of stable replicates at a nominal 5%.
const superpopulation = 1e9

// epoch is the Monday the window grid starts from: with 7-day windows the
// grid is the ISO weeks.
var epoch = time.Date(1970, 1, 5, 0, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// windowOf returns the index of the window holding t on the grid of days-
// long windows.
func windowOf(t time.Time, days int) int64 {
	d := t.UTC().Sub(epoch)
	span := time.Duration(days) * day
	k := int64(d / span)
	if d < 0 && d%span != 0 {
		k--
	}
	return k
}

func windowAt(k int64, days int, iso bool) Window {
	start := epoch.Add(time.Duration(k) * time.Duration(days) * day)
	w := Window{Start: start, End: start.Add(time.Duration(days) * day)}
	if iso {
		y, wk := start.ISOWeek()
		w.Label = fmt.Sprintf("%04d-W%02d", y, wk)
	} else {
		w.Label = start.Format(time.DateOnly)
	}
	return w
}

// Compute estimates each model's weighted pass rate per window and tests
// each window against its baseline (the latest earlier window shown with
// at least MinN traces of the model) for a drop: z = Δ/√(SE² + SE_base²),
// one-sided p = Φ(z), Holm-adjusted across every model × window tested. rep
// carries what Collect counted (runs, scorers, left-out traces); Compute
// fills the rest.
func Compute(obs []Observation, o Options, rep *Report) (*Report, error) {
	if !(o.Level > 0 && o.Level < 1) {
		return nil, fmt.Errorf("level %g: must be strictly between 0 and 1 (0.95 for 95%% intervals)", o.Level)
	}
	days := o.Window
	if days == 0 {
		days = 7
	}
	if days < 1 {
		return nil, fmt.Errorf("window %d days: must be at least 1", days)
	}
	if o.Weeks < 0 {
		return nil, fmt.Errorf("weeks %d: must be 0 (every window) or more", o.Weeks)
	}
	minN := o.MinN
	if minN == 0 {
		minN = DefaultMinN
	}
	if minN < 2 {
		return nil, fmt.Errorf("minimum traces per window %d: must be at least 2", minN)
	}
	if rep == nil {
		rep = &Report{}
	}
	// 1 − Level to twelve decimals: 1 − 0.95 is 0.050000000000000044.
	alpha := math.Round((1-o.Level)*1e12) / 1e12
	rep.Level, rep.Alpha, rep.WindowDays, rep.ISOWeeks, rep.MinN = o.Level, alpha, days, days == 7, minN
	if rep.Scorers == nil {
		rep.Scorers = []string{}
	}
	if rep.Runs == nil {
		rep.Runs = []string{}
	}
	rep.Windows, rep.Models = []Window{}, []Series{}

	kept := obs
	if !o.Since.IsZero() {
		kept = obs[:0:0]
		for _, ob := range obs {
			if ob.Time.Before(o.Since) {
				rep.Earlier++
				continue
			}
			kept = append(kept, ob)
		}
	}
	if len(kept) == 0 {
		return rep, nil
	}
	first, last := windowOf(kept[0].Time, days), windowOf(kept[0].Time, days)
	for _, ob := range kept {
		k := windowOf(ob.Time, days)
		first, last = min(first, k), max(last, k)
	}
	if o.Weeks > 0 && last-first+1 > int64(o.Weeks) {
		first = last - int64(o.Weeks) + 1
	}
	for k := first; k <= last; k++ {
		rep.Windows = append(rep.Windows, windowAt(k, days, rep.ISOWeeks))
	}

	type cell struct {
		obs        []stats.Observation
		passed     int
		population float64
		raw        []int // indexes into kept
		hashes     map[string]bool
	}
	cells := map[string][]*cell{} // model → window index
	for i, ob := range kept {
		k := windowOf(ob.Time, days)
		if k < first {
			rep.Earlier++
			continue
		}
		cs := cells[ob.Model]
		if cs == nil {
			cs = make([]*cell, len(rep.Windows))
			cells[ob.Model] = cs
		}
		c := cs[k-first]
		if c == nil {
			c = &cell{hashes: map[string]bool{}}
			cs[k-first] = c
		}
		y := 0.0
		if ob.Pass {
			y = 1
			c.passed++
		}
		c.obs = append(c.obs, stats.Observation{Stratum: ob.Sample + "\x00" + ob.Stratum, Weight: superpopulation * ob.Weight, Y: y})
		c.raw = append(c.raw, i)
		c.population += ob.Weight
		c.hashes[ob.ScorersHash] = true
		rep.Traces++
	}
	models := make([]string, 0, len(cells))
	for m := range cells {
		models = append(models, m)
	}
	sort.Strings(models)

	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	var changes []*Change
	scorersChanged := false
	for _, m := range models {
		s := Series{Model: m, Points: make([]Point, len(rep.Windows))}
		base := -1 // the latest window with at least minN traces
		for i, c := range cells[m] {
			p := &s.Points[i]
			p.Window = rep.Windows[i].Label
			if c == nil {
				continue
			}
			e, err := stats.WeightedMean(c.obs, alpha)
			if err != nil {
				return nil, fmt.Errorf("model %s, window %s: %w", m, p.Window, err)
			}
			p.N, p.Passed, p.Population = e.N, c.passed, c.population
			// Wilson's bound at a rate of 0 or 1 can miss it by a rounding
			// (5.6e-17 above 0): the interval always holds its estimate.
			p.Rate, p.SE, p.Lo, p.Hi = e.Mean, e.SE, math.Min(e.CI.Lo, e.Mean), math.Max(e.CI.Hi, e.Mean)
			switch {
			case p.N < minN:
				p.Untested = fmt.Sprintf("%d traces, fewer than the %d a window needs to be tested", p.N, minN)
				continue
			case base < 0:
				if i > 0 {
					p.Untested = fmt.Sprintf("no earlier window shown has %d traces of %s", minN, m)
				}
			default:
				b := s.Points[base]
				ch := &Change{Against: b.Window, Delta: p.Rate - b.Rate, SE: math.Hypot(p.SE, b.SE)}
				ch.SE0 = pooledSE(kept, cells[m][base].raw, c.raw)
				if !(ch.SE0 > 0) {
					// Every stratum's traces all passed (or all failed) in
					// both windows: nothing to test.
					p.Untested = fmt.Sprintf("no variance to test: in %s and %s every stratum's traces passed alike (%s and %s passed)", b.Window, p.Window, units.Pct(b.Rate), units.Pct(p.Rate))
				} else {
					ch.Lo, ch.Hi = ch.Delta-z*ch.SE, ch.Delta+z*ch.SE
					ch.Z = ch.Delta / ch.SE0
					ch.P = distuv.UnitNormal.CDF(ch.Z)
					ch.ScorersChanged = !sameKeys(c.hashes, cells[m][base].hashes)
					scorersChanged = scorersChanged || ch.ScorersChanged
					p.Change = ch
					changes = append(changes, ch)
				}
			}
			base = i
		}
		rep.Models = append(rep.Models, s)
	}
	ps := make([]float64, len(changes))
	for i, c := range changes {
		ps[i] = c.P
	}
	for i, adj := range stats.Holm(ps) {
		changes[i].PAdj = adj
		changes[i].Drop = adj <= alpha
		if changes[i].Drop {
			rep.Drops++
		}
	}
	rep.Tests = len(changes)
	if scorersChanged {
		rep.Notes = append(rep.Notes, "some windows compared were scored with different scorer definitions (scorers hash): their change may be the scorers', not the model's")
	}
	return rep, nil
}

// pooledSE is the standard error of the difference of two windows'
// weighted pass rates under the null hypothesis that nothing changed: the
// score-type two-sample test's, as the classical pooled two-proportion z
// test is to the unpooled one. Under H0 a stratum's traces pass at the
// same rate in both windows, estimated from both: p̄_h = Σw·y / Σw over the
// stratum's traces of either window. Each window's linearised variance is
// then Σ_h p̄_h(1 − p̄_h)·Σ_{i∈h} w_i² / (Σ_i w_i)², and the difference's
// their sum (the windows' samples are independent).
//
// Why not Δ over the windows' own standard errors (the Wald test): each
// window's variance estimate moves with its rate, and in the tail that
// Holm asks of a test (a one-sided p below 0.05/21) the Wald test rejected
// 1.47 times as often as nominal at a 53% pass rate and 1.15 times at 82%,
// by an independent numpy simulation of TestDropFalseAlarmAndPower's
// design; the pooled test 0.98 and 0.84 times. Zero when every stratum's
// traces all passed (or all failed) in both windows.
func pooledSE(obs []Observation, a, b []int) float64 {
	type pool struct{ w, wy float64 }
	strata := map[string]*pool{}
	for _, xs := range [][]int{a, b} {
		for _, i := range xs {
			o := &obs[i]
			p := strata[o.Stratum]
			if p == nil {
				p = &pool{}
				strata[o.Stratum] = p
			}
			p.w += o.Weight
			if o.Pass {
				p.wy += o.Weight
			}
		}
	}
	v := 0.0
	for _, xs := range [][]int{a, b} {
		var total, sum float64
		for _, i := range xs {
			o := &obs[i]
			p := strata[o.Stratum]
			r := p.wy / p.w
			total += o.Weight
			sum += o.Weight * o.Weight * r * (1 - r)
		}
		v += sum / (total * total)
	}
	return math.Sqrt(math.Max(0, v))
}

func sameKeys(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// ErrNoTraces is Collect's answer when the store holds no score-traces run
// (of the spec asked for).
var ErrNoTraces = errors.New("no scored traces")
