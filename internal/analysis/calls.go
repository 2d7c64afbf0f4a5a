package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/stats"
)

// CallReport is what a run whose results made tool calls (or ran agent
// loops) adds to its report: per target, how often the right tool was
// chosen, how many calls and model turns a case took and what one
// trajectory cost, each with its interval, and the targets compared on the
// same cases. A run without a call or a turn has none (Report.Calls is nil),
// so its report is unchanged.
type CallReport struct {
	// Agent is set when some result ran an agent loop (record.Result.Turns):
	// only then are turns per case measured.
	Agent   bool          `json:"agent,omitempty"`
	Targets []TargetCalls `json:"targets"`
	// Selection compares every two targets' tool-selection accuracy on the
	// same cases, as the primary rates are compared (McNemar score test by
	// default; paired t with epochs; CR1 t with clusters), Holm-adjusted
	// per scorer over the pairs.
	Selection []Comparison `json:"selection_comparisons,omitempty"`
	// Measures compares every two targets' calls, turns and cost per case
	// (paired t on the per-case means over epochs, CR1 t with clusters),
	// Holm-adjusted per measure over the pairs.
	Measures []MeasureComparison `json:"measure_comparisons,omitempty"`
}

// TargetCalls is one target's tool-call findings.
type TargetCalls struct {
	Target string `json:"target"`
	// Results counts the target's results; WithCalls those with at least
	// one tool call, CallOnly those whose reply was calls and no text.
	Results   int `json:"results"`
	WithCalls int `json:"with_calls"`
	CallOnly  int `json:"call_only"`
	// Selection is the tool-selection accuracy of each tool scorer: its
	// "(tool)" (tool_call) or "(tools)" (tool_calls) field, over every
	// output the scorer scored.
	Selection []SelectionRate `json:"tool_selection,omitempty"`
	// Calls is the tool calls per case (every turn's, for an agent loop).
	Calls Mean `json:"calls_per_case"`
	// Turns is the model calls per case: an agent loop's turns, 1 for a
	// single call (present when the run has agent loops).
	Turns *Mean `json:"turns_per_case,omitempty"`
	// Cost is the price of one trajectory (every turn's, cache hits at the
	// price they saved, as Cost.PerCase).
	Cost Mean `json:"cost_per_trajectory"`
}

// SelectionRate is a tool scorer's tool-selection accuracy on one target.
type SelectionRate struct {
	Scorer string `json:"scorer"`
	Field  string `json:"field"`
	Rate
}

// Mean is a per-case measure's mean over cases (each case's value the mean
// over its epochs) with Student's t interval across cases (CR1 t on G−1
// df when cases carry a cluster tag). With fewer than two cases (or
// clusters) CI is [Mean, Mean] and CIMethod empty: no interval.
type Mean struct {
	Mean float64 `json:"mean"`
	// N is the cases measured; Total the sum over every result.
	N     int        `json:"n"`
	Total float64    `json:"total"`
	SE    float64    `json:"se,omitempty"`
	CI    [2]float64 `json:"ci"`
	// CIMethod is "t" or "cr1_t".
	CIMethod string `json:"ci_method,omitempty"`
}

// Measures named in MeasureComparison.Measure.
const (
	MeasureCalls = "calls_per_case"
	MeasureTurns = "turns_per_case"
	MeasureCost  = "cost_per_trajectory"
)

// MeasureComparison is two targets' difference in a per-case measure on
// the cases both have: Delta = mean(A) − mean(B).
type MeasureComparison struct {
	Measure  string     `json:"measure"`
	A        string     `json:"a"`
	B        string     `json:"b"`
	N        int        `json:"n"`
	Delta    float64    `json:"delta"`
	SE       float64    `json:"se"`
	CI       [2]float64 `json:"ci"`
	Test     string     `json:"test"`
	DF       float64    `json:"df,omitempty"`
	Clusters int        `json:"clusters,omitempty"`
	PValue   float64    `json:"p_value"`
	// PAdjusted is Holm's over the pairs of the same measure.
	PAdjusted float64 `json:"p_adjusted"`
	// Verdict is a_higher, b_higher (the adjusted p below alpha) or
	// inconclusive.
	Verdict string `json:"verdict"`
}

// toolFields are the per-field verdicts of the tool scorers that say
// whether the right tool was chosen (scorer.ToolField, scorer.ToolsField).
var toolFields = []string{"(tool)", "(tools)"}

// callRow is what one result adds to the call measures.
type callRow struct {
	price               float64
	caseID              int32 // into callAcc.caseIDs
	target              int32 // into callAcc.targets
	epoch, calls, turns int32
	text                bool
}

// callAcc collects the results' call measures during the report's results
// pass (one goroutine). It keeps rows only for a run whose spec offers
// tools or runs an agent loop; another run that turns out to have calls
// (replayed ones, say) is read again once the pass is done (missed).
type callAcc struct {
	keep   bool
	seen   bool // a result had a call or a turn
	agent  bool
	missed bool
	rows   []callRow
	// The rows' case IDs and target names, each kept once.
	caseIDs, targets []string
	caseOf, targetOf map[string]int32
}

// newCallAcc starts the call measures of a run.
func newCallAcc(run *record.Run) *callAcc {
	var sp struct {
		Tools []json.RawMessage `json:"tools"`
		Agent json.RawMessage   `json:"agent"`
	}
	keep := len(run.Config) > 0 && json.Unmarshal(run.Config, &sp) == nil &&
		(len(sp.Tools) > 0 || (len(sp.Agent) > 0 && string(sp.Agent) != "null"))
	c := &callAcc{keep: keep}
	if keep {
		// One row per result: sized once, not grown by doubling.
		c.rows = make([]callRow, 0, max(run.Cases, 0)*max(run.Epochs, 1)*len(run.Targets))
	}
	return c
}

// add counts one result.
func (c *callAcc) add(r *record.Result) {
	if len(r.ToolCalls) > 0 || len(r.Turns) > 0 {
		c.seen = true
		if len(r.Turns) > 0 {
			c.agent = true
		}
		if !c.keep {
			c.missed = true
		}
	}
	if !c.keep {
		return
	}
	c.rows = append(c.rows, callRow{target: intern(&c.targets, &c.targetOf, r.Target), caseID: intern(&c.caseIDs, &c.caseOf, r.CaseID),
		epoch: int32(r.Epoch), calls: int32(len(r.ToolCalls)), turns: int32(max(len(r.Turns), 1)), price: r.Price(), text: r.Raw != ""})
}

// reread reads the run's results again when calls were found in a run
// whose spec did not announce them.
func (c *callAcc) reread(ctx context.Context, st record.Reader, runID string) error {
	if !c.missed {
		return nil
	}
	c.keep, c.missed, c.rows, c.caseIDs, c.targets, c.caseOf, c.targetOf = true, false, nil, nil, nil, nil, nil
	if err := st.Results(ctx, runID, func(r record.Result) error {
		c.add(&r)
		return nil
	}); err != nil {
		return fmt.Errorf("reading results for their tool calls: %w", err)
	}
	return nil
}

// callFields gives a target's verdicts of one field of a field scorer
// (nil when it has none).
type callFields func(target, scorer, field string) *verdicts

// report builds the run's CallReport (nil when no result made a call or
// ran a loop): names are the targets in the report's order, ci the view's
// cases, fields the field verdicts Analyze kept.
func (c *callAcc) report(names []string, targets []Target, ci *caseIndex, epochs int, fields callFields, o Options) *CallReport {
	if !c.seen {
		return nil
	}
	epochs = max(epochs, 1)
	// Each row's case in the view's order (-1: a case the view lacks).
	caseOf := make([]int, len(c.caseIDs))
	for k := range caseOf {
		caseOf[k] = -1
	}
	for i := range ci.len() {
		if k, ok := c.caseOf[ci.id(i)]; ok {
			caseOf[k] = i
		}
	}
	clusters := clusterLabels(ci)
	type cols struct {
		calls, turns, cost []float64  // per case × epoch, NaN when absent
		total              [3]float64 // calls, turns and cost of every result
		tc                 *TargetCalls
	}
	n := ci.len() * epochs
	byName := map[string]*cols{}
	newCols := func(name string) *cols {
		nan := func() []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = math.NaN()
			}
			return xs
		}
		return &cols{calls: nan(), turns: nan(), cost: nan(), tc: &TargetCalls{Target: name}}
	}
	for _, name := range names {
		byName[name] = newCols(name)
	}
	for _, r := range c.rows {
		target := c.targets[r.target]
		cl := byName[target]
		if cl == nil {
			continue // a result of a target the report does not list
		}
		cl.total[0] += float64(r.calls)
		cl.total[1] += float64(r.turns)
		cl.total[2] += r.price
		cl.tc.Results++
		if r.calls > 0 {
			cl.tc.WithCalls++
			if !r.text {
				cl.tc.CallOnly++
			}
		}
		i := caseOf[r.caseID]
		e := max(int(r.epoch), 1)
		if i < 0 || e > epochs {
			continue
		}
		j := i*epochs + e - 1
		cl.calls[j], cl.turns[j], cl.cost[j] = float64(r.calls), float64(r.turns), r.price
	}
	rep := &CallReport{Agent: c.agent}
	for k, name := range names {
		cl := byName[name]
		tc, tot := cl.tc, cl.total
		tc.Calls = meanOf(caseMeans(cl.calls, epochs), clusters, tot[0], o.Alpha)
		if c.agent {
			m := meanOf(caseMeans(cl.turns, epochs), clusters, tot[1], o.Alpha)
			tc.Turns = &m
		}
		tc.Cost = meanOf(caseMeans(cl.cost, epochs), clusters, tot[2], o.Alpha)
		if k < len(targets) {
			for _, frs := range sortedFieldScorers(targets[k].Fields) {
				for _, fr := range targets[k].Fields[frs] {
					if isToolField(fr.Field) {
						tc.Selection = append(tc.Selection, SelectionRate{Scorer: frs, Field: fr.Field, Rate: fr.Rate})
					}
				}
			}
		}
		rep.Targets = append(rep.Targets, *tc)
	}
	rep.Selection = selectionComparisons(names, rep.Targets, ci, fields, o)
	for _, m := range []string{MeasureCalls, MeasureTurns, MeasureCost} {
		if m == MeasureTurns && !c.agent {
			continue
		}
		var fam []MeasureComparison
		for a := 0; a < len(names); a++ {
			for b := a + 1; b < len(names); b++ {
				ca, cb := byName[names[a]], byName[names[b]]
				var xa, xb []float64
				switch m {
				case MeasureCalls:
					xa, xb = ca.calls, cb.calls
				case MeasureTurns:
					xa, xb = ca.turns, cb.turns
				default:
					xa, xb = ca.cost, cb.cost
				}
				if mc, ok := compareMeasure(caseMeans(xa, epochs), caseMeans(xb, epochs), clusters, o.Alpha); ok {
					mc.Measure, mc.A, mc.B = m, names[a], names[b]
					fam = append(fam, mc)
				}
			}
		}
		ps := make([]float64, len(fam))
		for i := range fam {
			ps[i] = fam[i].PValue
		}
		for i, p := range stats.Holm(ps) {
			fam[i].PAdjusted = p
			switch {
			case p >= o.Alpha:
				fam[i].Verdict = "inconclusive"
			case fam[i].Delta > 0:
				fam[i].Verdict = "a_higher"
			default:
				fam[i].Verdict = "b_higher"
			}
		}
		rep.Measures = append(rep.Measures, fam...)
	}
	return rep
}

// isToolField reports whether a field verdict is a tool scorer's choice of
// tool.
func isToolField(f string) bool {
	for _, t := range toolFields {
		if f == t {
			return true
		}
	}
	return false
}

// sortedFieldScorers are the field scorers of a target in name order.
func sortedFieldScorers(fields map[string][]FieldRate) []string {
	out := make([]string, 0, len(fields))
	for s := range fields {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// caseMeans is each case's mean over its epochs (NaN for a case with
// none), from values laid out case × epoch.
func caseMeans(xs []float64, epochs int) []float64 {
	out := make([]float64, len(xs)/epochs)
	for i := range out {
		sum, n := 0.0, 0
		for _, x := range xs[i*epochs : (i+1)*epochs] {
			if !math.IsNaN(x) {
				sum += x
				n++
			}
		}
		out[i] = math.NaN()
		if n > 0 {
			out[i] = sum / float64(n)
		}
	}
	return out
}

// meanOf is the Mean of the cases measured (NaN: not measured).
func meanOf(perCase []float64, clusters []string, total, alpha float64) Mean {
	var xs []float64
	var cs []string
	for i, x := range perCase {
		if math.IsNaN(x) {
			continue
		}
		xs = append(xs, x)
		if clusters != nil {
			cs = append(cs, clusters[i])
		}
	}
	m := Mean{N: len(xs), Total: round6(total)}
	if len(xs) == 0 {
		return m
	}
	var p stats.Paired
	var err error
	zeros := make([]float64, len(xs))
	if clusters != nil {
		p, err = stats.ClusteredPaired(xs, zeros, cs, alpha)
	} else {
		// The one-sample t interval: the paired t against zero.
		p, err = stats.PairedMeans(xs, zeros, alpha)
	}
	if err != nil || anyNaN(p.MeanA, p.SE, p.CI.Lo, p.CI.Hi) {
		// One case (or one cluster): a mean without an interval.
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		m.Mean = round6(sum / float64(len(xs)))
		m.CI = [2]float64{m.Mean, m.Mean}
		return m
	}
	m.Mean = round6(p.MeanA)
	m.SE, m.CIMethod = round6(p.SE), p.CIMethod
	// A count or a price is never negative.
	m.CI = [2]float64{round6(math.Max(0, p.CI.Lo)), round6(p.CI.Hi)}
	return m
}

// compareMeasure compares two targets' per-case values on the cases both
// have: paired t, or CR1 t with clusters.
func compareMeasure(a, b []float64, clusters []string, alpha float64) (MeasureComparison, bool) {
	var xa, xb []float64
	var xc []string
	for i := range a {
		if math.IsNaN(a[i]) || math.IsNaN(b[i]) {
			continue
		}
		xa, xb = append(xa, a[i]), append(xb, b[i])
		if clusters != nil {
			xc = append(xc, clusters[i])
		}
	}
	if len(xa) < 2 {
		return MeasureComparison{}, false
	}
	var p stats.Paired
	var err error
	if clusters != nil {
		p, err = stats.ClusteredPaired(xa, xb, xc, alpha)
	} else {
		p, err = stats.PairedMeans(xa, xb, alpha)
	}
	if err != nil || anyNaN(p.Delta, p.SE, p.CI.Lo, p.CI.Hi, p.PValue) {
		return MeasureComparison{}, false
	}
	if p.SE == 0 && p.Delta != 0 {
		// Every case (cluster) differs by the same amount — common for
		// small counts such as turns — and the t statistic has no variance
		// to divide by: it would claim p 0 and an interval of width 0 at
		// any n. The sign test decides instead: all n differences on one
		// side, p = 2·½ⁿ (scipy's binomtest(n, n).pvalue); the interval is
		// the sign test's for the median, Δ itself when it rejects (n ≥ 6
		// at 0.05), else from 0 to Δ.
		n := len(xa)
		if clusters != nil {
			n = p.Clusters
		}
		pv := math.Min(1, 2*math.Pow(0.5, float64(n)))
		ci := [2]float64{round6(p.Delta), round6(p.Delta)}
		if pv >= alpha {
			ci = [2]float64{round6(math.Min(0, p.Delta)), round6(math.Max(0, p.Delta))}
		}
		return MeasureComparison{N: len(xa), Delta: round6(p.Delta), CI: ci, Test: "sign", Clusters: p.Clusters, PValue: pv}, true
	}
	return MeasureComparison{N: len(xa), Delta: round6(p.Delta), SE: round6(p.SE),
		CI: [2]float64{round6(p.CI.Lo), round6(p.CI.Hi)}, Test: p.Test, DF: round6(p.DF), Clusters: p.Clusters,
		PValue: p.PValue}, true
}

// selectionComparisons compare every two targets' tool choice (the tool
// field of each tool scorer) as the primary rates are compared,
// Holm-adjusted per scorer.
func selectionComparisons(names []string, ts []TargetCalls, ci *caseIndex, fields callFields, o Options) []Comparison {
	if fields == nil {
		return nil
	}
	type sf struct{ scorer, field string }
	var order []sf
	for _, t := range ts {
		for _, s := range t.Selection {
			k := sf{s.Scorer, s.Field}
			if !slices.Contains(order, k) {
				order = append(order, k)
			}
		}
	}
	var out []Comparison
	for _, k := range order {
		var fam []Comparison
		for a := 0; a < len(names); a++ {
			for b := a + 1; b < len(names); b++ {
				c, ok := pairDense(fields(names[a], k.scorer, k.field), fields(names[b], k.scorer, k.field), ci, o.pairing())
				if !ok {
					continue
				}
				c.A, c.B, c.Scorer, c.Slices = names[a], names[b], k.scorer+" "+k.field, nil
				fam = append(fam, c)
			}
		}
		adjustOverall(fam, o.Alpha, o.Margin)
		out = append(out, fam...)
	}
	return out
}

// CallsText writes tool calls as a reader sees them, one per line:
// name(arguments), each call's arguments as the model wrote them. It is
// model output: every renderer escapes it.
func CallsText(calls []record.ToolCall) string {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// accFields reads a target's verdicts of one field of a field scorer from
// the report's accumulators.
func accFields(accs map[string]*acc) callFields {
	return func(target, scorer, field string) *verdicts {
		a := accs[target]
		if a == nil || a.fields[scorer] == nil || a.fields[scorer][field] == nil {
			return nil
		}
		return a.fields[scorer][field].vs
	}
}

// shownCalls are a reply's tool calls for display: each call's arguments
// cut at maxRawShown bytes.
func shownCalls(calls []record.ToolCall) []record.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]record.ToolCall, len(calls))
	for i, c := range calls {
		c.Arguments = cut(c.Arguments, maxRawShown)
		out[i] = c
	}
	return out
}

// ReplyText is a reply as a case view shows it: its text, then its tool
// calls (CallsText), so a reply that only called a tool shows its calls,
// not an empty output. Model output: every renderer escapes it.
func ReplyText(raw string, calls []record.ToolCall) string {
	if len(calls) == 0 {
		return raw
	}
	if raw == "" {
		return CallsText(calls)
	}
	return raw + "\n" + CallsText(calls)
}

// intern numbers s in names (once), so a row holds a small index rather
// than each result's own copy of the string.
func intern(names *[]string, index *map[string]int32, s string) int32 {
	if *index == nil {
		*index = map[string]int32{}
	}
	if i, ok := (*index)[s]; ok {
		return i
	}
	i := int32(len(*names))
	(*index)[s] = i
	*names = append(*names, s)
	return i
}
