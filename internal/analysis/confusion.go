package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/stats"
)

// A label scorer is an equals scorer whose expected values are scalars that
// take between 2 and MaxClasses distinct values once normalised as the
// scorer normalises them: a classifier graded against its labels. For such
// a scorer every target gets a confusion matrix and per-class precision,
// recall and F1 (Classes), and every two targets a per-class comparison of
// recall (ClassComparison).
//
// The matrix agrees with the scorer's verdicts: a result the scorer passed
// is predicted as its expected label (the diagonal counts exactly the
// passes); a failed result is predicted as the label its parsed output
// names when that is another label, else as ClassOther (an answer outside
// the label set, or not a single value) or ClassNone (no answer: a provider
// error, an unparseable or empty output). Neither column is a class:
// precision, recall and F1 are taken over the labels only, as
// sklearn.metrics.f1_score(y_true, y_pred, labels=Labels) does, with
// sklearn's zero_division=0 (a class never predicted has precision 0, and
// F1 is 0 when precision and recall are).
const (
	// MaxClasses bounds the label set: more distinct expected values than
	// this is not a classification.
	MaxClasses = 50
	// ClassOther is the predicted column of answers outside the label set.
	ClassOther = "(other)"
	// ClassNone is the predicted column of results with no answer.
	ClassNone = "(none)"
	// classBootstrap is the number of bootstrap resamples behind the F1
	// intervals (and the precision and recall intervals with epochs).
	classBootstrap = 4000
)

// Classes is one target's confusion matrix under a label scorer.
type Classes struct {
	Scorer string `json:"scorer"`
	// Labels are the classes: the distinct expected values, normalised as
	// the scorer normalises them, the most frequent first (ties by name).
	Labels []string `json:"labels"`
	// Matrix has a row per label (the expected one) and a column per label
	// (the predicted one) followed by ClassOther and ClassNone.
	Matrix [][]int `json:"matrix"`
	// N is the number of results counted (every one the scorer scored on a
	// case with an expected label).
	N        int          `json:"n"`
	PerClass []ClassStats `json:"per_class"`
	// MacroF1 is the unweighted mean of the classes' F1, with its interval.
	MacroF1   float64    `json:"macro_f1"`
	MacroF1CI [2]float64 `json:"macro_f1_ci"`
	// PRMethod names the precision and recall intervals: "wilson" (one
	// epoch) or "bootstrap" (percentile, resampling cases with all their
	// epochs). F1Method names the F1 intervals: "bca" (the bias-corrected
	// and accelerated bootstrap over cases) or "percentile" where BCa is
	// undefined (every resample on one side, as for an F1 of 0 or 1).
	PRMethod string `json:"pr_ci_method"`
	F1Method string `json:"f1_ci_method"`
}

// ClassStats is one class of a confusion matrix.
type ClassStats struct {
	Label string `json:"label"`
	// Support is how many results expected this label (the row's sum),
	// Predicted how many were predicted as it (the column's sum), TP both.
	Support     int        `json:"support"`
	Predicted   int        `json:"predicted"`
	TP          int        `json:"tp"`
	Precision   float64    `json:"precision"`
	PrecisionCI [2]float64 `json:"precision_ci"`
	Recall      float64    `json:"recall"`
	RecallCI    [2]float64 `json:"recall_ci"`
	F1          float64    `json:"f1"`
	F1CI        [2]float64 `json:"f1_ci"`
	// F1Method is the interval method of this class's F1, which can differ
	// from class to class: "bca"; "percentile" where BCa is undefined; or
	// "bound" where every resample gives the same F1 (0: no case of the
	// class or prediction of it ever right; or 1), the bootstrap then
	// saying nothing: [0, 2u/(1+u)] for u the recall's upper bound, since
	// F1 ≤ 2R/(1+R), or [min of the precision's and recall's lower
	// bounds, 1], since F1 ≥ min(P, R).
	F1Method string `json:"f1_ci_method"`
}

// ClassComparison compares two targets' recall on one class: the cases
// that expect the label, paired (epoch 1 of each), by the McNemar score
// test with Tango's interval. PAdjusted is Holm's over the classes of the
// same pair of targets.
type ClassComparison struct {
	A       string     `json:"a"`
	B       string     `json:"b"`
	Label   string     `json:"label"`
	N       int        `json:"n"`
	RecallA float64    `json:"recall_a"`
	RecallB float64    `json:"recall_b"`
	Delta   float64    `json:"delta"`
	CI      [2]float64 `json:"ci"`
	PValue  float64    `json:"p_value"`
	// PAdjusted is Holm's adjustment over this pair's classes.
	PAdjusted float64 `json:"p_adjusted"`
	AOnly     int     `json:"a_only"`
	BOnly     int     `json:"b_only"`
}

// labelScorer is the equals scorer a run's spec names, with its
// normalisers: the primary one if it is an equals scorer, else the first.
func labelScorer(config []byte) (name string, normalize []string, ok bool) {
	var sp struct {
		Scorers []struct {
			Name      string   `json:"name"`
			Type      string   `json:"type"`
			Primary   bool     `json:"primary"`
			Normalize []string `json:"normalize"`
		} `json:"scorers"`
	}
	if len(config) == 0 || json.Unmarshal(config, &sp) != nil {
		return "", nil, false
	}
	for _, s := range sp.Scorers {
		if s.Type != "equals" || (ok && !s.Primary) {
			continue
		}
		name, normalize, ok = s.Name, s.Normalize, true
		if s.Primary {
			break
		}
	}
	return name, normalize, ok
}

// normalizeLabel applies the scorer's normalisers, in order, as the scorer
// does (internal/scorer normalize.go; TestLabelNormaliseMatchesScorer).
func normalizeLabel(names []string, s string) string {
	for _, n := range names {
		switch n {
		case "trim":
			s = strings.TrimSpace(s)
		case "lower":
			s = strings.ToLower(s)
		case "collapse_spaces":
			var b strings.Builder
			in := false
			for _, r := range s {
				if unicode.IsSpace(r) {
					if !in {
						b.WriteByte(' ')
					}
					in = true
					continue
				}
				in = false
				b.WriteRune(r)
			}
			s = b.String()
		case "no_commas":
			s = strings.ReplaceAll(s, ",", "")
		case "nfc":
			s = norm.NFC.String(s)
		}
	}
	return s
}

// labelText is a JSON value as a label: a string as it is, a number as
// written, a boolean as true/false. ok is false for null, objects and
// arrays (and for bytes that are not JSON).
func labelText(raw []byte) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// labelCase is one case of one target: its expected class and, per epoch,
// the predicted column (a label index, or K for ClassOther, K+1 for
// ClassNone; -1 when the epoch was not scored).
type labelCase struct {
	exp  int
	pred []int
}

// addClasses gives every target of rep its Classes, and rep its
// ClassComparisons, when the run has a label scorer.
func addClasses(ctx context.Context, st record.Reader, run *record.Run, scoring int, rep *Report, alpha float64) error {
	scorer, normalize, ok := labelScorer(run.Config)
	if !ok || scoring == 0 {
		return nil
	}
	// The cases' expected labels: every one a scalar, 2..MaxClasses of them.
	caseIx := map[string]int{}
	var expText []string
	support := map[string]int{}
	scalar := true
	err := st.Cases(ctx, run.ID, func(c record.Case) error {
		if string(c.Expected) == "" || string(c.Expected) == "null" {
			return nil // no expected label: not in the matrix
		}
		s, ok := labelText(c.Expected)
		if !ok {
			scalar = false
			return nil
		}
		s = normalizeLabel(normalize, s)
		caseIx[c.ID] = len(expText)
		expText = append(expText, s)
		support[s]++
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading cases: %w", err)
	}
	if !scalar || len(support) < 2 || len(support) > MaxClasses {
		return nil
	}
	labels := make([]string, 0, len(support))
	for l := range support {
		labels = append(labels, l)
	}
	slices.SortFunc(labels, func(a, b string) int {
		if support[a] != support[b] {
			return support[b] - support[a]
		}
		return strings.Compare(a, b)
	})
	K := len(labels)
	labelIx := make(map[string]int, K)
	for i, l := range labels {
		labelIx[l] = i
	}
	epochs := max(run.Epochs, 1)
	// What each result's output names: a label, ClassOther or ClassNone.
	named := map[string][]int{} // target → case × epoch
	slot := func(target string) []int {
		v := named[target]
		if v == nil {
			v = make([]int, len(expText)*epochs)
			for i := range v {
				v[i] = -1
			}
			named[target] = v
		}
		return v
	}
	err = st.Results(ctx, run.ID, func(r record.Result) error {
		i, ok := caseIx[r.CaseID]
		if !ok || r.Epoch < 1 || r.Epoch > epochs {
			return nil
		}
		col := K + 1
		if r.ErrorKind == "" && r.ParseError == "" {
			if s, ok := labelText([]byte(r.Parsed)); ok {
				s = normalizeLabel(normalize, s)
				switch l, isLabel := labelIx[s]; {
				case isLabel:
					col = l
				case s != "":
					col = K
				}
			} else if p := strings.TrimSpace(r.Parsed); p != "" && p != "null" {
				col = K // an object or an array: an answer, not a label
			}
		}
		slot(r.Target)[i*epochs+r.Epoch-1] = col
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading results: %w", err)
	}
	// The scorer's verdicts decide the diagonal.
	pred := map[string][]int{}
	err = st.Scores(ctx, run.ID, scoring, func(s record.Score) error {
		if s.Scorer != scorer {
			return nil
		}
		i, ok := caseIx[s.CaseID]
		if !ok || s.Epoch < 1 || s.Epoch > epochs {
			return nil
		}
		p := pred[s.Target]
		if p == nil {
			p = make([]int, len(expText)*epochs)
			for j := range p {
				p[j] = -1
			}
			pred[s.Target] = p
		}
		j := i*epochs + s.Epoch - 1
		exp := labelIx[expText[i]]
		switch col := K + 1; {
		case s.Pass:
			p[j] = exp
		default:
			if n := named[s.Target]; n != nil && n[j] >= 0 {
				col = n[j]
			}
			if col == exp {
				col = K // the scorer failed it, whatever its text says
			}
			p[j] = col
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading scores: %w", err)
	}
	byTarget := map[string][]labelCase{}
	for ti := range rep.Targets {
		t := &rep.Targets[ti]
		p := pred[t.Name]
		if p == nil {
			continue
		}
		cases := make([]labelCase, len(expText))
		for i := range cases {
			cases[i] = labelCase{exp: labelIx[expText[i]], pred: p[i*epochs : (i+1)*epochs]}
		}
		byTarget[t.Name] = cases
		rng := rand.New(rand.NewPCG(seedOf(run.ID, t.Name, scorer), 1))
		c := classStats(cases, labels, alpha, epochs, rng, classBootstrap)
		c.Scorer = scorer
		t.Classes = c
	}
	rep.ClassComparisons = classComparisons(rep.Targets, byTarget, labels, alpha)
	return nil
}

// seedOf makes the bootstrap's seed from what it describes, so a report
// is the same each time it is made.
func seedOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// classTally counts a confusion matrix's margins.
type classTally struct {
	tp, pred, sup []float64
}

func newClassTally(k int) classTally {
	return classTally{tp: make([]float64, k), pred: make([]float64, k), sup: make([]float64, k)}
}

func (t classTally) reset() {
	clear(t.tp)
	clear(t.pred)
	clear(t.sup)
}

// add counts case c with weight w (−1 removes it).
func (t classTally) add(c labelCase, w float64) {
	k := len(t.tp)
	for _, p := range c.pred {
		if p < 0 {
			continue
		}
		t.sup[c.exp] += w
		if p < k {
			t.pred[p] += w
			if p == c.exp {
				t.tp[c.exp] += w
			}
		}
	}
}

// prf is precision, recall and F1 of class i, with zero_division = 0.
func (t classTally) prf(i int) (p, r, f float64) {
	if t.pred[i] > 0 {
		p = t.tp[i] / t.pred[i]
	}
	if t.sup[i] > 0 {
		r = t.tp[i] / t.sup[i]
	}
	// F1 = 2·TP/(predicted + support): the harmonic mean without its 0/0.
	if d := t.pred[i] + t.sup[i]; d > 0 {
		f = 2 * t.tp[i] / d
	}
	return p, r, f
}

// stats writes each class's precision, recall and F1 (3 per class) and
// then the macro-F1 into out. For a resample (resample true), a figure the
// resample cannot define is NaN rather than sklearn's 0: precision with
// no prediction of the class, recall and F1 with no case of it. Those
// resamples say nothing about the figure and are left out of its interval
// (which is then conditional on the class being drawn), instead of
// dragging it to 0; a resample's macro-F1 is the mean over the classes it
// drew.
func (t classTally) stats(out []float64, resample bool) {
	k := len(t.tp)
	macro, defined := 0.0, 0
	for i := range k {
		p, r, f := t.prf(i)
		if resample && t.pred[i] == 0 {
			p = math.NaN()
		}
		if resample && t.sup[i] == 0 {
			r, f = math.NaN(), math.NaN()
		}
		out[3*i], out[3*i+1], out[3*i+2] = p, r, f
		if !math.IsNaN(f) {
			macro += f
			defined++
		}
	}
	out[3*k] = math.NaN()
	if defined > 0 {
		out[3*k] = macro / float64(defined)
	}
}

// classStats computes a target's confusion matrix and per-class figures
// from its cases. The F1 intervals (and the macro-F1's) are BCa bootstrap
// intervals over cases, each case resampled with all its epochs; precision
// and recall have Wilson intervals when each case ran once, else the
// percentile bootstrap's.
//
// Cases that are alike (the same expected label and the same predictions)
// contribute alike, and there are few kinds of case however many cases
// there are (at most K·(K+2) with one epoch). So a resample draws how many
// of each kind it holds, a multinomial draw made as successive binomials,
// which is the case resampling of the ordinary bootstrap at a cost in kinds
// rather than cases; and the jackknife leaves out one case of each kind,
// weighting its value by the kind's count.
func classStats(cases []labelCase, labels []string, alpha float64, epochs int, rng *rand.Rand, B int) *Classes {
	K := len(labels)
	c := &Classes{Labels: labels, Matrix: make([][]int, K), PerClass: make([]ClassStats, K)}
	for i := range c.Matrix {
		c.Matrix[i] = make([]int, K+2)
	}
	tally := newClassTally(K)
	kindOf := map[string]int{}
	var kinds []labelCase
	var count []float64
	n := 0 // cases with at least one scored epoch
	for _, lc := range cases {
		scored := false
		for _, p := range lc.pred {
			if p >= 0 {
				c.Matrix[lc.exp][p]++
				c.N++
				scored = true
			}
		}
		if !scored {
			continue
		}
		n++
		tally.add(lc, 1)
		key := fmt.Sprint(lc.exp, lc.pred)
		k, ok := kindOf[key]
		if !ok {
			k = len(kinds)
			kindOf[key] = k
			kinds = append(kinds, lc)
			count = append(count, 0)
		}
		count[k]++
	}
	// The kinds in a fixed order, so the same data gives the same draws.
	order := make([]int, len(kinds))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if kinds[a].exp != kinds[b].exp {
			return kinds[a].exp - kinds[b].exp
		}
		return slices.Compare(kinds[a].pred, kinds[b].pred)
	})
	theta := make([]float64, 3*K+1)
	tally.stats(theta, false)
	reps := make([][]float64, 3*K+1)
	accel := make([]float64, 3*K+1)
	if n > 1 {
		row := make([]float64, 3*K+1)
		bt := newClassTally(K)
		bin := distuv.Binomial{Src: rng}
		for range B {
			bt.reset()
			left, mass := float64(n), float64(n)
			for _, k := range order {
				if left <= 0 {
					break
				}
				drawn := left
				if p := count[k] / mass; p < 1 {
					bin.N, bin.P = left, p
					drawn = bin.Rand()
				}
				bt.add(kinds[k], drawn)
				left -= drawn
				mass -= count[k]
			}
			bt.stats(row, true)
			for j, x := range row {
				if !math.IsNaN(x) {
					reps[j] = append(reps[j], x)
				}
			}
		}
		// Jackknife: one case of each kind left out, weighted by its count.
		jack := make([][]float64, len(kinds))
		for k, lc := range kinds {
			tally.add(lc, -1)
			jack[k] = make([]float64, 3*K+1)
			tally.stats(jack[k], true)
			tally.add(lc, 1)
		}
		for j := range accel {
			accel[j] = weightedAcceleration(jack, count, j)
		}
	}
	interval := func(j int) ([2]float64, string) {
		if n < 2 || len(reps[j]) == 0 {
			return [2]float64{0, 1}, "percentile"
		}
		iv, method := stats.BCaCIAccel(reps[j], theta[j], accel[j], alpha), "bca"
		if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
			iv, method = stats.PercentileCI(reps[j], alpha), "percentile"
		}
		if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
			return [2]float64{0, 1}, "percentile"
		}
		return [2]float64{round4(iv.Lo), round4(iv.Hi)}, method
	}
	c.PRMethod = stats.MethodWilson
	if epochs > 1 {
		c.PRMethod = "bootstrap"
	}
	for i, l := range labels {
		cs := ClassStats{Label: l, Support: int(tally.sup[i]), Predicted: int(tally.pred[i]), TP: int(tally.tp[i])}
		cs.Precision, cs.Recall, cs.F1 = round4(theta[3*i]), round4(theta[3*i+1]), round4(theta[3*i+2])
		if epochs > 1 {
			cs.PrecisionCI = percentileOr01(reps[3*i], alpha, n > 1)
			cs.RecallCI = percentileOr01(reps[3*i+1], alpha, n > 1)
			// Every resample alike (none right, or all): the bootstrap
			// says nothing; Wilson's interval counting each case once
			// (its epochs as one answer) does.
			if n > 1 && constant(reps[3*i]) {
				cs.PrecisionCI = wilsonCases(cs.TP, cs.Predicted, epochs, alpha)
			}
			if n > 1 && constant(reps[3*i+1]) {
				cs.RecallCI = wilsonCases(cs.TP, cs.Support, epochs, alpha)
			}
		} else {
			pw := stats.Wilson(cs.TP, cs.Predicted, alpha)
			rw := stats.Wilson(cs.TP, cs.Support, alpha)
			cs.PrecisionCI = [2]float64{round4(pw.Lo), round4(pw.Hi)}
			cs.RecallCI = [2]float64{round4(rw.Lo), round4(rw.Hi)}
		}
		cs.F1CI, cs.F1Method = interval(3*i + 2)
		if n > 1 && constant(reps[3*i+2]) {
			// F1 = 2PR/(P+R) lies between min(P, R) and 2R/(1+R): bounds
			// from the precision and recall intervals where the bootstrap
			// has none (no class case ever right, or every one).
			cs.F1CI, cs.F1Method = [2]float64{0, round4(2 * cs.RecallCI[1] / (1 + cs.RecallCI[1]))}, "bound"
			if cs.F1 == 1 {
				cs.F1CI = [2]float64{math.Min(cs.PrecisionCI[0], cs.RecallCI[0]), 1}
			}
		}
		c.PerClass[i] = cs
	}
	c.MacroF1 = round4(theta[3*K])
	c.MacroF1CI, c.F1Method = interval(3 * K)
	return c
}

// constant reports whether every replicate is the same.
func constant(reps []float64) bool {
	for _, x := range reps {
		if x != reps[0] {
			return false
		}
	}
	return len(reps) > 0
}

// wilsonCases is the Wilson interval of k of n answers made over epochs,
// counted as k/epochs of n/epochs cases (whole cases, rounded up): as if a
// case's epochs were one answer, the most they can be.
func wilsonCases(k, n, epochs int, alpha float64) [2]float64 {
	nc := (n + epochs - 1) / epochs
	kc := (k + epochs - 1) / epochs
	if k < n {
		kc = min(kc, nc-1)
	}
	if k == 0 {
		kc = 0
	}
	w := stats.Wilson(kc, nc, alpha)
	return [2]float64{round4(w.Lo), round4(w.Hi)}
}

// weightedAcceleration is stats.BCaAcceleration of the jackknife values
// in which kind k's value jack[k][j] appears count[k] times.
func weightedAcceleration(jack [][]float64, count []float64, j int) float64 {
	var n, mean float64
	for k := range jack {
		if !math.IsNaN(jack[k][j]) {
			n += count[k]
			mean += count[k] * jack[k][j]
		}
	}
	if n < 2 {
		return math.NaN()
	}
	mean /= n
	var s2, s3 float64
	for k := range jack {
		if math.IsNaN(jack[k][j]) {
			continue // this case was its class's only one
		}
		d := mean - jack[k][j]
		s2 += count[k] * d * d
		s3 += count[k] * d * d * d
	}
	return s3 / (6 * s2 * math.Sqrt(s2))
}

// percentileOr01 is the percentile interval of reps, or [0, 1] when there
// are none.
func percentileOr01(reps []float64, alpha float64, ok bool) [2]float64 {
	if !ok {
		return [2]float64{0, 1}
	}
	iv := stats.PercentileCI(reps, alpha)
	if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
		return [2]float64{0, 1}
	}
	return [2]float64{round4(iv.Lo), round4(iv.Hi)}
}

// classComparisons compares every two targets' recall class by class, on
// the cases of the class that both targets answered in epoch 1, with
// Holm's adjustment over the classes of each pair.
func classComparisons(targets []Target, byTarget map[string][]labelCase, labels []string, alpha float64) []ClassComparison {
	var out []ClassComparison
	for ai := range targets {
		for bi := ai + 1; bi < len(targets); bi++ {
			a, b := byTarget[targets[ai].Name], byTarget[targets[bi].Name]
			if a == nil || b == nil {
				continue
			}
			tables := make([]stats.PairTable, len(labels))
			for i := range a {
				pa, pb := a[i].pred[0], b[i].pred[0]
				if pa < 0 || pb < 0 {
					continue
				}
				t := &tables[a[i].exp]
				okA, okB := pa == a[i].exp, pb == b[i].exp
				switch {
				case okA && okB:
					t.Both++
				case okA:
					t.AOnly++
				case okB:
					t.BOnly++
				default:
					t.Neither++
				}
			}
			start := len(out)
			var ps []float64
			for l, t := range tables {
				p, err := stats.PairedBinaryTable(t, alpha)
				if err != nil {
					continue // no case of this class answered by both
				}
				out = append(out, ClassComparison{A: targets[ai].Name, B: targets[bi].Name, Label: labels[l], N: p.N,
					RecallA: round4(p.MeanA), RecallB: round4(p.MeanB), Delta: round4(p.Delta),
					CI: [2]float64{round4(p.CI.Lo), round4(p.CI.Hi)}, PValue: p.PValue, AOnly: p.AOnly, BOnly: p.BOnly})
				ps = append(ps, p.PValue)
			}
			for i, q := range stats.Holm(ps) {
				out[start+i].PAdjusted = q
			}
		}
	}
	return out
}
