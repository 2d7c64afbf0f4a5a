package difficulty

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/irt"
	"github.com/assay-eval/assay/internal/stats"
)

// Fitted is `assay difficulty`'s result.
type Fitted struct {
	Scale      Scale            `json:"scale"`
	Sources    []string         `json:"sources"` // run IDs / files read
	Fit        *irt.Fit         `json:"fit"`
	Cases      []CaseDifficulty `json:"cases"` // sorted hardest first
	Targets    []Ability        `json:"targets"`
	Curve      []irt.InfoPoint  `json:"curve"`     // test information over the ability axis
	Separates  [2]float64       `json:"separates"` // the θ range where the test SE is below SeparateSE
	SeparateSE float64          `json:"separate_se"`
	Tiers      []Tier           `json:"tiers"` // when a tag is also given: per tier the fitted mean difficulty and per-target rates
	Warnings   []string         `json:"warnings"`
	// SeparatesFound is false when the test SE is above SeparateSE
	// everywhere on the curve (Separates is then zero).
	SeparatesFound bool `json:"separates_found"`
	// Dropped counts the cases no target has a scored result on (left out
	// of the fit).
	Dropped int `json:"dropped"`
	// Level is the level of the abilities' intervals (FitOptions.Level,
	// 0.95 by default).
	Level float64 `json:"level"`
}

// CaseDifficulty is one case's fitted difficulty.
type CaseDifficulty struct {
	ID      string  `json:"id"`
	B       float64 `json:"b"`
	SE      float64 `json:"se"`
	A       float64 `json:"a"`
	Right   int     `json:"right"`
	Trials  int     `json:"trials"`
	Extreme bool    `json:"extreme"`
	Tag     string  `json:"tag"`
}

// Ability is one target's fitted ability.
type Ability struct {
	Target string  `json:"target"`
	Theta  float64 `json:"theta"`
	SE     float64 `json:"se"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Right  int     `json:"right"`
	Trials int     `json:"trials"`
}

// Tier is one value of the difficulty tag: its cases' fitted mean
// difficulty and each target's rate on them.
type Tier struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
	Cases int     `json:"cases"`
	MeanB float64 `json:"mean_b"`
	Rates []Rate  `json:"rates"`
}

// Rate is one target's pass rate on some cases, over their scored trials
// (epochs included), with its Wilson interval.
type Rate struct {
	Target string         `json:"target"`
	Passed int            `json:"passed"`
	N      int            `json:"n"`
	Rate   float64        `json:"rate"`
	CI     stats.Interval `json:"ci"`
}

// FitOptions configures Fit. Model "" is Rasch. PriorSD 0 takes irt's
// default weak priors (finite difficulties for all-right and all-wrong
// cases), > 0 sets their SD, < 0 fits without priors (plain marginal ML,
// as ltm), leaving out the cases every target got right or wrong. Points 0 is irt's default grid; Level 0 is 0.95. Tag (with
// Levels for a non-numeric tag) adds the per-tier view.
type FitOptions struct {
	Model   string
	PriorSD float64
	Points  int
	Level   float64
	Tag     string
	Levels  []string
}

// MinTargets2PLWithoutPrior is the fewest targets Fit takes for 2PL
// without a prior. On the four GSM8K configurations such a fit runs its
// 500 iterations without converging (three minutes), holds 731 of 731
// cases at a parameter bound and has no standard errors.
const MinTargets2PLWithoutPrior = 50

// separateSE is the test standard error of ability below which the set
// separates targets: two targets one standard deviation of ability apart
// are told apart at the 5% level when 1.96·√2·SE < 1.
const separateSE = 1 / (1.96 * math.Sqrt2)

// Fit joins sets by case ID (common items) and target name (common
// respondents) and fits an item-response model to the targets' right
// answers and trials. It refuses fewer than two targets and a design whose
// targets and cases fall into groups that share no result (their scales
// could not be linked), naming the groups.
func Fit(sets []*Set, o FitOptions) (*Fitted, error) {
	if len(sets) == 0 {
		return nil, errors.New("no runs to fit difficulty from")
	}
	model := irt.Model(o.Model)
	switch model {
	case "":
		model = irt.Rasch
	case irt.Rasch, irt.TwoPL:
	default:
		return nil, fmt.Errorf("model %q: valid models are %s, %s", o.Model, irt.Rasch, irt.TwoPL)
	}
	if o.Level != 0 && !(o.Level > 0 && o.Level < 1) {
		return nil, fmt.Errorf("level %g: must be strictly between 0 and 1 (0.95 for 95%% intervals)", o.Level)
	}
	level := o.Level
	if level == 0 {
		level = 0.95
	}
	out := &Fitted{Scale: Scale{Source: SourceFitted, Model: string(model), Tag: o.Tag, Levels: o.Levels}, SeparateSE: separateSE, Level: level}
	var persons, items []string
	pIdx, iIdx := map[string]int{}, map[string]int{}
	tagOf := map[string]string{}
	for _, s := range sets {
		if s == nil {
			return nil, errors.New("a nil set")
		}
		out.Sources = append(out.Sources, s.Name)
		for i, id := range s.Cases {
			if _, ok := iIdx[id]; !ok {
				iIdx[id] = len(items)
				items = append(items, id)
			}
			if o.Tag != "" && s.Tags != nil && s.Scale.Tag == o.Tag && s.Tags[i] != "" {
				if _, ok := tagOf[id]; !ok {
					tagOf[id] = s.Tags[i]
				}
			}
		}
		if err := s.checkTargets(s.Name); err != nil {
			return nil, err
		}
		for _, t := range s.Targets {
			if _, ok := pIdx[t.Name]; !ok {
				pIdx[t.Name] = len(persons)
				persons = append(persons, t.Name)
			}
		}
	}
	if len(items) == 0 {
		return nil, errors.New("the runs have no cases")
	}
	full := irt.NewData(persons, items)
	for _, s := range sets {
		for _, t := range s.Targets {
			p := pIdx[t.Name]
			for i, id := range s.Cases {
				if t.Trials[i] > 0 {
					full.Add(p, iIdx[id], int(t.Right[i]), int(t.Trials[i]))
				}
			}
		}
	}
	// Without a prior a case every target got right (or wrong) has an
	// infinite difficulty: it is left out, as it tells nothing of where
	// the others lie.
	extreme := 0
	if o.PriorSD < 0 {
		extreme = dropExtreme(full)
	}
	d, dropped, droppedTargets := answered(full)
	out.Dropped = dropped
	if unanswered := dropped - extreme; unanswered > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d cases have no scored result from any target and are left out of the fit", unanswered))
	}
	if extreme > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d cases every target got right or every target got wrong are left out of the fit: "+
			"without a prior their difficulty is infinite (the default weak prior keeps them)", extreme))
	}
	if len(droppedTargets) > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("targets with no scored result are left out: %s", strings.Join(droppedTargets, ", ")))
	}
	if len(d.Items) == 0 && extreme > 0 {
		return nil, errors.New("no case is left to fit: every case is all right or all wrong, or has no scored result")
	}
	if len(d.Persons) == 0 {
		return nil, errors.New("the runs have no scored result: fitting difficulty needs scored results of at least 2 targets")
	}
	if len(d.Persons) < 2 {
		return nil, fmt.Errorf("fitting difficulty needs scored results of at least 2 targets; the runs have %d (%s): "+
			"add runs of other targets on the same cases, or give the difficulty as a tag", len(d.Persons), strings.Join(d.Persons, ", "))
	}
	if err := connected(d); err != nil {
		return nil, err
	}
	if model == irt.TwoPL && o.PriorSD < 0 && len(d.Persons) < MinTargets2PLWithoutPrior {
		return nil, fmt.Errorf("2PL without a prior needs the results of at least %d targets (these runs have %d): "+
			"each case's discrimination rests on the targets' answers to it alone, and with so few the fit does not converge; "+
			"keep the default weak prior, or fit rasch", MinTargets2PLWithoutPrior, len(d.Persons))
	}
	prior := o.PriorSD
	switch {
	case prior == 0:
		prior = -1
	case prior < 0:
		prior = 0
	}
	f, err := irt.Estimate(d, irt.Options{Model: model, Points: o.Points, PriorSD: prior, Level: level})
	if err != nil {
		return nil, fmt.Errorf("fitting %s: %w", model, err)
	}
	out.Fit = f
	out.Warnings = append(out.Warnings, f.Warnings...)
	for _, it := range f.Items {
		out.Cases = append(out.Cases, CaseDifficulty{ID: it.ID, B: it.B, SE: it.SEB, A: it.A,
			Right: it.Right, Trials: it.Trials, Extreme: it.Extreme, Tag: tagOf[it.ID]})
	}
	slices.SortStableFunc(out.Cases, func(a, b CaseDifficulty) int {
		return cmp.Or(cmp.Compare(b.B, a.B), strings.Compare(a.ID, b.ID))
	})
	lo, hi := -4.0, 4.0
	for _, p := range f.Persons {
		out.Targets = append(out.Targets, Ability{Target: p.ID, Theta: p.Theta, SE: p.SE, Lo: p.Lo, Hi: p.Hi, Right: p.Right, Trials: p.Trials})
		if !math.IsNaN(p.Theta) && !math.IsInf(p.Theta, 0) {
			lo, hi = math.Min(lo, p.Theta-1), math.Max(hi, p.Theta+1)
		}
	}
	lo, hi = math.Max(lo, -8), math.Min(hi, 8)
	out.Curve = f.Curve(lo, hi, int(math.Round((hi-lo)*10))+1)
	out.Separates, out.SeparatesFound = separates(out.Curve, out.SeparateSE)
	if !out.SeparatesFound {
		out.Warnings = append(out.Warnings, fmt.Sprintf("the test's standard error of ability is above %.2f everywhere: this set cannot tell apart targets one standard deviation apart", out.SeparateSE))
	}
	if o.Tag != "" {
		tiers, err := tiersOf(d, f, tagOf, o, 1-level, func(w string) { out.Warnings = append(out.Warnings, w) })
		if err != nil {
			return nil, err
		}
		out.Tiers = tiers
	}
	return out, nil
}

// answered returns the data without the cases and targets that have no
// trial, and what it left out.
func answered(d *irt.Data) (*irt.Data, int, []string) {
	np, ni := len(d.Persons), len(d.Items)
	pHas, iHas := make([]bool, np), make([]bool, ni)
	for p := range np {
		for i := range ni {
			if d.Trials[p*ni+i] > 0 {
				pHas[p], iHas[i] = true, true
			}
		}
	}
	var persons, items []string
	var pk, ik []int
	var droppedTargets []string
	for p, ok := range pHas {
		if ok {
			persons, pk = append(persons, d.Persons[p]), append(pk, p)
		} else {
			droppedTargets = append(droppedTargets, d.Persons[p])
		}
	}
	for i, ok := range iHas {
		if ok {
			items, ik = append(items, d.Items[i]), append(ik, i)
		}
	}
	out := irt.NewData(persons, items)
	for a, p := range pk {
		for b, i := range ik {
			out.Add(a, b, int(d.Right[p*ni+i]), int(d.Trials[p*ni+i]))
		}
	}
	return out, ni - len(items), droppedTargets
}

// dropExtreme empties the cases whose every scored trial is right, or
// every one wrong, and returns how many it emptied.
func dropExtreme(d *irt.Data) int {
	np, ni := len(d.Persons), len(d.Items)
	n := 0
	for i := range ni {
		right, trials := int32(0), int32(0)
		for p := range np {
			right += d.Right[p*ni+i]
			trials += d.Trials[p*ni+i]
		}
		if trials == 0 || (right > 0 && right < trials) {
			continue
		}
		for p := range np {
			d.Right[p*ni+i], d.Trials[p*ni+i] = 0, 0
		}
		n++
	}
	return n
}

// connected refuses a design whose person–item graph falls apart, naming
// each part's targets and some of its cases.
func connected(d *irt.Data) error {
	np, ni := len(d.Persons), len(d.Items)
	parent := make([]int, np+ni)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for p := range np {
		for i := range ni {
			if d.Trials[p*ni+i] > 0 {
				a, b := find(p), find(np+i)
				if a != b {
					parent[a] = b
				}
			}
		}
	}
	type part struct {
		targets, cases []string
	}
	var parts []*part
	byRoot := map[int]*part{}
	get := func(r int) *part {
		if byRoot[r] == nil {
			byRoot[r] = &part{}
			parts = append(parts, byRoot[r])
		}
		return byRoot[r]
	}
	for p := range np {
		pt := get(find(p))
		pt.targets = append(pt.targets, d.Persons[p])
	}
	for i := range ni {
		pt := get(find(np + i))
		pt.cases = append(pt.cases, d.Items[i])
	}
	if len(parts) < 2 {
		return nil
	}
	var desc []string
	for _, pt := range parts {
		shown := pt.cases[:min(3, len(pt.cases))]
		more := ""
		if len(pt.cases) > len(shown) {
			more = ", …"
		}
		desc = append(desc, fmt.Sprintf("targets %s with %d %s (%s%s)", strings.Join(pt.targets, ", "),
			len(pt.cases), plural(len(pt.cases), "case", "cases"), strings.Join(shown, ", "), more))
	}
	return fmt.Errorf("the results fall into %d groups that share no target and no case, so one difficulty scale cannot link them: %s; "+
		"add results of a target on cases of both groups, or fit each group apart", len(parts), strings.Join(desc, "; "))
}

// separates returns the widest run of the curve around its peak where
// the test SE is below se.
func separates(curve []irt.InfoPoint, se float64) ([2]float64, bool) {
	peak := -1
	for k, p := range curve {
		if p.SE < se && (peak < 0 || p.Info > curve[peak].Info) {
			peak = k
		}
	}
	if peak < 0 {
		return [2]float64{}, false
	}
	lo, hi := peak, peak
	for lo > 0 && curve[lo-1].SE < se {
		lo--
	}
	for hi+1 < len(curve) && curve[hi+1].SE < se {
		hi++
	}
	return [2]float64{curve[lo].Theta, curve[hi].Theta}, true
}

// tiersOf groups the fitted cases by their tag value: mean fitted
// difficulty and each target's rate per tier, tiers in the tag's order.
func tiersOf(d *irt.Data, f *irt.Fit, tagOf map[string]string, o FitOptions, alpha float64, warn func(string)) ([]Tier, error) {
	labels := make([]string, len(d.Items))
	for i, id := range d.Items {
		labels[i] = tagOf[id]
	}
	values, err := TagValues(o.Tag, d.Items, labels, nil, o.Levels)
	if err != nil {
		return nil, err
	}
	if allNaN(values) {
		return nil, fmt.Errorf("no fitted case has the tag %q", o.Tag)
	}
	if n := countNaN(values); n > 0 {
		warn(fmt.Sprintf("%d of the %d fitted cases have no value of the tag %q and are in no tier", n, len(values), o.Tag))
	}
	// One tier per value, with what its rates and mean difficulty sum.
	type tally struct {
		t              Tier
		passed, trials []int // per target
		bSum           float64
		bN             int
	}
	byValue := map[float64]*tally{}
	var tiers []*tally
	ni := len(d.Items)
	for i, v := range values {
		if math.IsNaN(v) {
			continue
		}
		t := byValue[v]
		if t == nil {
			t = &tally{t: Tier{Label: valueLabel(v, o.Levels), Value: v},
				passed: make([]int, len(d.Persons)), trials: make([]int, len(d.Persons))}
			byValue[v] = t
			tiers = append(tiers, t)
		}
		t.t.Cases++
		if b := f.Items[i].B; !math.IsNaN(b) && !math.IsInf(b, 0) { // f.Items are d.Items, in order
			t.bSum += b
			t.bN++
		}
		for p := range d.Persons {
			t.passed[p] += int(d.Right[p*ni+i])
			t.trials[p] += int(d.Trials[p*ni+i])
		}
	}
	slices.SortFunc(tiers, func(a, b *tally) int { return cmp.Compare(a.t.Value, b.t.Value) })
	out := make([]Tier, len(tiers))
	for k, t := range tiers {
		if t.bN > 0 {
			t.t.MeanB = t.bSum / float64(t.bN)
		}
		for p, name := range d.Persons {
			r := Rate{Target: name, Passed: t.passed[p], N: t.trials[p], CI: stats.Wilson(t.passed[p], t.trials[p], alpha)}
			if r.N > 0 {
				r.Rate = float64(r.Passed) / float64(r.N)
			}
			t.t.Rates = append(t.t.Rates, r)
		}
		out[k] = t.t
	}
	return out, nil
}

func countNaN(xs []float64) int {
	n := 0
	for _, x := range xs {
		if math.IsNaN(x) {
			n++
		}
	}
	return n
}
