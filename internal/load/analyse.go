package load

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// minQuantileN is the fewest answers on which a step's p95 is bounded: a
// 95th percentile of fewer rests on one or two values, and its bootstrap
// interval does not hold its level.
const minQuantileN = 20

// Analyse turns a load test's stored steps and requests into findings:
// every step's measures with intervals, and each target's knee against
// the SLO. Targets and steps keep the order they were run in.
func Analyse(steps []record.LoadStep, reqs []record.LoadRequest, o AnalyseOptions) (*Result, error) {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return nil, fmt.Errorf("alpha %g: must be in (0, 1)", o.Alpha)
	}
	if o.Resamples == 0 {
		o.Resamples = 2000
	}
	if o.Resamples < 100 {
		return nil, fmt.Errorf("resamples %d: want at least 100", o.Resamples)
	}
	if len(steps) == 0 {
		return nil, errors.New("the load test has no step")
	}
	type key struct {
		target string
		step   int
	}
	byStep := map[key][]record.LoadRequest{}
	for _, r := range reqs {
		k := key{r.Target, r.Step}
		byStep[k] = append(byStep[k], r)
	}
	res := &Result{Mode: steps[0].Mode, SLO: o.SLO, Alpha: o.Alpha, Resamples: o.Resamples}
	at := map[string]int{}
	for _, st := range steps {
		if st.Mode != res.Mode {
			return nil, fmt.Errorf("target %s step %d: mode %s in a %s test", st.Target, st.Step, st.Mode, res.Mode)
		}
		i, ok := at[st.Target]
		if !ok {
			i = len(res.Targets)
			at[st.Target] = i
			res.Targets = append(res.Targets, TargetResult{Target: st.Target})
		}
		seed := StepSeed(o.Seed, i, st.Step)
		sr := analyseStep(st, byStep[key{st.Target, st.Step}], o.Alpha, o.Resamples, seed)
		res.Targets[i].Steps = append(res.Targets[i].Steps, sr)
	}
	seen := map[string]bool{}
	for _, st := range steps {
		why := st.Skipped
		if seen[why] || !(strings.HasPrefix(why, "not run: ") || why == "interrupted before this step" || why == "cancelled before this step") {
			continue
		}
		seen[why] = true
		n := 0
		for _, o := range steps {
			n += b2i(o.Skipped == why)
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d steps were not run: %s", n, strings.TrimPrefix(why, "not run: ")))
	}
	for i := range res.Targets {
		tr := &res.Targets[i]
		slices.SortStableFunc(tr.Steps, func(a, b StepResult) int { return cmp.Compare(a.Step, b.Step) })
		slo := o.SLO
		streamed := slices.ContainsFunc(tr.Steps, func(s StepResult) bool { return s.TTFT95.N > 0 })
		if slo.TTFT95 > 0 && !streamed {
			res.Warnings = append(res.Warnings, fmt.Sprintf("target %s streamed no answer: its time to first token was not measured, and the SLO's ttft95 is not checked for it", tr.Target))
			slo.TTFT95 = 0
		}
		for j := range tr.Steps {
			judge(&tr.Steps[j], slo, o.Alpha)
		}
		k, warn := knee(tr, slo, o.RequestsPerMonth)
		res.Knees = append(res.Knees, k)
		res.Warnings = append(res.Warnings, warn...)
	}
	return res, nil
}

// analyseStep measures one step from its requests.
func analyseStep(st record.LoadStep, reqs []record.LoadRequest, alpha float64, B int, seed uint64) StepResult {
	sr := StepResult{
		Step: st.Step, Mode: st.Mode, Level: st.Level, Started: st.Started,
		DurationMS: Num(st.DurationMS), Sent: st.Sent, Done: st.Done,
		ClientCPU: Num(st.ClientCPU), Cores: st.Cores, LatenessP95MS: Num(st.LatenessP95MS),
		Skipped: st.Skipped,
	}
	sr.Saturated, sr.SaturatedWhy = Saturated(st)
	if st.Saturated && !sr.Saturated {
		// Stored as saturated by a harness that judged it so.
		sr.Saturated, sr.SaturatedWhy = true, "the harness was the bottleneck"
	}
	nan := Estimate{Value: Num(math.NaN()), Lo: Num(math.NaN()), Hi: Num(math.NaN())}
	sr.P50, sr.P95, sr.P99, sr.TTFT50, sr.TTFT95 = nan, nan, nan, nan, nan
	sr.Throughput, sr.OutputTokensPerSec, sr.InterTokenMS = Num(math.NaN()), Num(math.NaN()), Num(math.NaN())
	sr.CostUSD, sr.CostPer1000 = 0, Num(math.NaN())
	sr.Errors = ErrorRate{Rate: Num(math.NaN()), Lo: Num(math.NaN()), Hi: Num(math.NaN())}
	if st.Skipped != "" {
		return sr
	}
	var lat, ttft, itl []float64
	kinds := map[string]int{}
	inWindow, tokens := 0, 0
	cost := 0.0
	for _, r := range reqs {
		cost += r.CostUSD
		if r.ErrorKind != "" {
			kinds[r.ErrorKind]++
			continue
		}
		sr.OK++
		lat = append(lat, r.LatencyMS)
		if !math.IsNaN(r.FirstTokenMS) {
			ttft = append(ttft, r.FirstTokenMS)
		}
		if !math.IsNaN(r.InterTokenMS) {
			itl = append(itl, r.InterTokenMS)
		}
		if r.StartMS+r.LatencyMS <= st.DurationMS {
			inWindow++
			tokens += r.OutputTokens
		}
	}
	n := len(reqs)
	if st.DurationMS > 0 {
		sec := st.DurationMS / 1000
		sr.Throughput = Num(float64(inWindow) / sec)
		sr.OutputTokensPerSec = Num(float64(tokens) / sec)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5ca1ab1e))
	lq := quantiles(rng, lat, []float64{0.5, 0.95, 0.99}, alpha, B)
	sr.P50, sr.P95, sr.P99 = lq[0], lq[1], lq[2]
	tq := quantiles(rng, ttft, []float64{0.5, 0.95}, alpha, B)
	sr.TTFT50, sr.TTFT95 = tq[0], tq[1]
	if len(itl) > 0 {
		sr.InterTokenMS = Num(mean(itl))
	}
	failed := 0
	for kind, k := range kinds {
		failed += k
		sr.ByKind = append(sr.ByKind, errorRate(kind, k, n, alpha))
	}
	slices.SortFunc(sr.ByKind, func(a, b ErrorRate) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Kind, b.Kind))
	})
	sr.Errors = errorRate("", failed, n, alpha)
	sr.CostUSD = Num(cost)
	if n > 0 {
		sr.CostPer1000 = Num(cost / float64(n) * 1000)
	}
	return sr
}

// quantiles estimates each q-quantile of xs (stats.Quantile's), with a
// percentile bootstrap interval over the values (B resamples drawn from
// rng; stats.RankQuantile counts each resample's values by rank). No
// interval is given below minQuantileN values.
func quantiles(rng *rand.Rand, xs []float64, qs []float64, alpha float64, B int) []Estimate {
	out := make([]Estimate, len(qs))
	for i, q := range qs {
		out[i] = Estimate{Value: Num(stats.Quantile(slices.Clone(xs), q)), Lo: Num(math.NaN()), Hi: Num(math.NaN()), N: len(xs)}
	}
	if len(xs) < minQuantileN {
		return out
	}
	rq := rankQuantile(xs)
	for i, q := range qs {
		ci := stats.PercentileCI(quantileReps(rng, rq, len(xs), q, B), alpha)
		out[i].Lo, out[i].Hi = Num(ci.Lo), Num(ci.Hi)
	}
	return out
}

// rankQuantile readies xs for bootstrapping its quantiles, each value a
// resampling unit of its own.
func rankQuantile(xs []float64) *stats.RankQuantile {
	cases := make([][]float64, len(xs))
	for i := range xs {
		cases[i] = xs[i : i+1]
	}
	return stats.NewRankQuantile(cases)
}

// quantileReps is B bootstrap replicates of the q-quantile of the n
// values rq was made from, drawn from rng.
func quantileReps(rng *rand.Rand, rq *stats.RankQuantile, n int, q float64, B int) []float64 {
	return stats.Bootstrap(rng, n, B, func(idx []int) float64 { return rq.Of(idx, q) })
}

func errorRate(kind string, k, n int, alpha float64) ErrorRate {
	e := ErrorRate{Kind: kind, Count: k, N: n, Rate: Num(math.NaN()), Lo: Num(math.NaN()), Hi: Num(math.NaN())}
	if n > 0 {
		ci := stats.Wilson(k, n, alpha)
		e.Rate, e.Lo, e.Hi = Num(float64(k)/float64(n)), Num(ci.Lo), Num(ci.Hi)
	}
	return e
}

// requestsToShow is the fewest requests whose Wilson upper bound, with not
// one error among them, is within an error objective of p: a step with
// fewer cannot meet it however well the server does (errors=1% needs ~380
// at 95%). 0 when p is 0 or more than a million would be needed.
func requestsToShow(p, alpha float64) int {
	if !(p > 0) {
		return 0
	}
	lo, hi := 1, 1
	for float64(stats.Wilson(0, hi, alpha).Hi) > p {
		if hi > 1_000_000 {
			return 0
		}
		lo, hi = hi, hi*2
	}
	for lo < hi { // the first n in (lo, hi] whose bound is within p
		mid := (lo + hi) / 2
		if float64(stats.Wilson(0, mid, alpha).Hi) > p {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return hi
}

// judge sets whether a step meets the SLO: every objective holds on its
// measure's upper bound. A saturated or skipped step is no evidence.
func judge(sr *StepResult, slo SLO, alpha float64) {
	sr.MeetsSLO = false
	switch {
	case sr.Skipped != "":
		sr.Why = sr.Skipped
		return
	case slo.IsZero():
		sr.Why = "no SLO to judge against"
		return
	case sr.Saturated:
		sr.Why = "not evidence: " + sr.SaturatedWhy
		return
	case sr.Errors.N == 0:
		sr.Why = "no request was measured"
		return
	}
	var broke, held []string
	bound := func(name string, e Estimate, limit time.Duration) {
		switch {
		case e.N < minQuantileN:
			broke = append(broke, fmt.Sprintf("%s rests on %d answers (at least %d needed to bound it)", name, e.N, minQuantileN))
		case float64(e.Hi) > ms(limit):
			broke = append(broke, fmt.Sprintf("%s %s, up to %s > %s", name, fmtMS(float64(e.Value)), fmtMS(float64(e.Hi)), limit))
		default:
			held = append(held, fmt.Sprintf("%s %s, up to %s ≤ %s", name, fmtMS(float64(e.Value)), fmtMS(float64(e.Hi)), limit))
		}
	}
	if slo.P95 > 0 {
		bound("p95", sr.P95, slo.P95)
	}
	if slo.TTFT95 > 0 {
		bound("ttft95", sr.TTFT95, slo.TTFT95)
	}
	if slo.ErrorsSet {
		e := sr.Errors
		if float64(e.Hi) > slo.Errors {
			msg := fmt.Sprintf("errors %s of %d, up to %s > %s", units.Pct(float64(e.Rate)), e.N, units.Pct(float64(e.Hi)), units.Pct(slo.Errors))
			if float64(e.Rate) <= slo.Errors {
				// The rate is within the objective, the data too few to
				// show it: say how many requests could.
				if need := requestsToShow(slo.Errors, alpha); need > e.N {
					msg += fmt.Sprintf(" (too few requests to show it: even with no error a step needs at least %d; lengthen --duration)", need)
				}
			}
			broke = append(broke, msg)
		} else {
			held = append(held, fmt.Sprintf("errors %s of %d, up to %s ≤ %s", units.Pct(float64(e.Rate)), e.N, units.Pct(float64(e.Hi)), units.Pct(slo.Errors)))
		}
	}
	if len(broke) > 0 {
		sr.Why = strings.Join(broke, "; ")
		return
	}
	sr.MeetsSLO = true
	sr.Why = strings.Join(held, "; ")
}

// knee finds a target's knee: the highest level met before the first
// level that broke the SLO (saturated steps are passed over: they are
// no evidence either way).
func knee(tr *TargetResult, slo SLO, perMonth float64) (Knee, []string) {
	k := Knee{Target: tr.Target, Step: -1, Throughput: Num(math.NaN()), P95Hi: Num(math.NaN()),
		CostPer1000: Num(math.NaN()), CostPerMonth: Num(math.NaN()), VolumeRPS: Num(math.NaN()), RequestsPerMonth: perMonth}
	if len(tr.Steps) > 0 {
		k.Mode = tr.Steps[0].Mode
	}
	var warnings []string
	if slo.IsZero() {
		k.Why = "no SLO given (--slo, or the spec's load.slo): a knee is the highest level that meets one"
		return k, nil
	}
	best, broke := -1, -1
	var saturatedAt []string
	for i, s := range tr.Steps {
		switch {
		case s.Skipped != "":
			continue
		case s.Saturated:
			saturatedAt = append(saturatedAt, formatLevel(s.Mode, s.Level))
		case s.MeetsSLO && broke < 0:
			best = i
		case s.MeetsSLO:
			warnings = append(warnings, fmt.Sprintf("target %s meets the SLO again at %s after breaking it at %s: the knee is put below the first break",
				tr.Target, formatLevel(s.Mode, s.Level), formatLevel(tr.Steps[broke].Mode, tr.Steps[broke].Level)))
		case broke < 0:
			broke = i
		}
	}
	if len(saturatedAt) > 0 {
		warnings = append(warnings, fmt.Sprintf("target %s: the harness was saturated at %s — those steps measured the harness, not the server, and are no evidence for the knee",
			tr.Target, strings.Join(saturatedAt, ", ")))
	}
	if perMonth > 0 {
		k.VolumeRPS = Num(perMonth / (30 * 24 * 3600))
	}
	if best < 0 {
		if broke >= 0 {
			s := tr.Steps[broke]
			k.Why = fmt.Sprintf("no level met the SLO: at %s, %s", formatLevel(s.Mode, s.Level), s.Why)
		} else {
			k.Why = "no step is evidence (every step was skipped or saturated)"
		}
		return k, warnings
	}
	s := tr.Steps[best]
	k.Found, k.Level, k.Step = true, s.Level, s.Step
	k.Throughput, k.P95Hi, k.CostPer1000 = s.Throughput, s.P95.Hi, s.CostPer1000
	k.Why = fmt.Sprintf("at %s: %s", formatLevel(s.Mode, s.Level), s.Why)
	if broke >= 0 {
		b := tr.Steps[broke]
		k.Why += fmt.Sprintf("; at %s: %s", formatLevel(b.Mode, b.Level), b.Why)
	} else {
		k.Why += "; every level tried met it: the knee is at or above the highest"
	}
	if perMonth > 0 && !math.IsNaN(float64(s.CostPer1000)) {
		k.CostPerMonth = Num(float64(s.CostPer1000) / 1000 * perMonth)
	}
	if perMonth > 0 {
		rate := s.Level
		if s.Mode == ModeConcurrency {
			rate = float64(s.Throughput)
		}
		k.Covers = rate >= float64(k.VolumeRPS)
	}
	return k, warnings
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// formatLevel writes a level with its unit: "160 rps" or "16 concurrent".
func formatLevel(mode string, level float64) string {
	v := strconv.FormatFloat(level, 'g', -1, 64)
	if mode == ModeConcurrency {
		return v + " concurrent"
	}
	return v + " rps"
}

func fmtMS(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v >= 1000:
		return strconv.FormatFloat(v/1000, 'f', 2, 64) + " s"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " ms"
}

func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// PastKnee says why a target's later steps should not run after this one
// ("" when they should): the harness skips them: its error rate is at least half, or five times
// the SLO's, or its p95's lower bound is above three times the SLO's. It
// runs between two steps, so it bootstraps the p95 alone, not every
// measure of the step as Analyse does.
func PastKnee(st record.LoadStep, reqs []record.LoadRequest, slo SLO) string {
	n := len(reqs)
	if st.Skipped != "" || n == 0 {
		return ""
	}
	var lat []float64
	failed := 0
	for _, r := range reqs {
		if r.ErrorKind != "" {
			failed++
			continue
		}
		lat = append(lat, r.LatencyMS)
	}
	rate := float64(failed) / float64(n)
	p95Lo := math.NaN()
	if slo.P95 > 0 && !st.Saturated {
		rng := rand.New(rand.NewPCG(1, 0x5ca1ab1e))
		p95Lo = float64(quantiles(rng, lat, []float64{0.95}, 0.05, 400)[0].Lo)
	}
	level := formatLevel(st.Mode, st.Level)
	switch {
	case rate >= 0.5:
		return fmt.Sprintf("skipped: past the knee at %s (errors %s of %d requests)", level, units.Pct(rate), n)
	case slo.ErrorsSet && slo.Errors > 0 && n >= 20 && rate >= 5*slo.Errors:
		return fmt.Sprintf("skipped: past the knee at %s (errors %s, at least 5× the SLO's %s)", level, units.Pct(rate), units.Pct(slo.Errors))
	case p95Lo > 3*ms(slo.P95):
		return fmt.Sprintf("skipped: past the knee at %s (p95 at least %s, above 3× the SLO's %s)", level, fmtMS(p95Lo), slo.P95)
	}
	return ""
}

// Saturated says whether the harness was the step's bottleneck, and why:
// it used at least 90% of the cores it may use, or started requests late
// by more than max(10 ms, 10% of the mean gap between arrivals) at the
// 95th percentile.
func Saturated(st record.LoadStep) (bool, string) {
	var why []string
	if st.Cores > 0 && st.ClientCPU >= 0.9*float64(st.Cores) {
		why = append(why, fmt.Sprintf("it used %.2f of its %d cores", st.ClientCPU, st.Cores))
	}
	limit := 10.0
	if st.Mode == ModeRate && st.Level > 0 {
		limit = max(limit, 0.1*1000/st.Level)
	}
	if st.LatenessP95MS > limit {
		what := "started requests late"
		if st.Mode == ModeConcurrency {
			what = "its goroutines woke late"
		}
		why = append(why, fmt.Sprintf("%s by %s at the 95th percentile (limit %s)", what, fmtMS(st.LatenessP95MS), fmtMS(limit)))
	}
	if len(why) == 0 {
		return false, ""
	}
	return true, "the harness was the bottleneck: " + joinAnd(why)
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// StepSeed derives a step's seed from a test's: distinct per target and
// step. It seeds a step's (or a gate check's) bootstrap here, and a step's
// arrivals in the harness.
func StepSeed(seed uint64, target, step int) uint64 {
	x := seed ^ uint64(target)<<32 ^ uint64(step)
	// splitmix64's finaliser.
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
