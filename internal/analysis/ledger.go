package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// Ledger is the selection ledger of a run that belongs to an experiment:
// how many variants were tried before this one was chosen, and what is
// left of its lead once that is accounted for.
//
// A variant is a (run, target) pair that scored the same primary scorer on
// the same dataset, in a run of the experiment that started no later than
// this one. Variants that measured another dataset, or another definition
// of correct (scorers hash), cannot be compared: they are listed in
// Excluded and not counted in Variants.
type Ledger struct {
	Experiment string `json:"experiment"`
	// Scorer is the primary scorer every counted variant was scored by.
	Scorer string  `json:"scorer"`
	Alpha  float64 `json:"alpha"`
	// Variants is N, the variants tried, this run's targets included; Runs
	// is how many runs they came from.
	Variants int `json:"variants"`
	Runs     int `json:"runs"`
	// Chosen is the variant this report is about: the run's top target.
	// Its VsReference is the lead being judged.
	Chosen LedgerVariant `json:"chosen"`
	// Reference is what every variant is compared with: the experiment's
	// first variant (ReferenceFrom "first_variant") or the one named by
	// --reference ("option").
	Reference     LedgerVariant `json:"reference"`
	ReferenceFrom string        `json:"reference_from"`
	// Family is the number of comparisons the Holm correction spans: N−1,
	// every variant but the reference against the reference.
	Family int `json:"family"`
	// UncorrectedVerdict is what the chosen variant's comparison says on
	// its own p-value; Verdict what it says after the correction (a_better
	// means the chosen variant beats the reference). Survives is Verdict ==
	// a_better.
	UncorrectedVerdict string `json:"uncorrected_verdict"`
	Verdict            string `json:"verdict"`
	Survives           bool   `json:"survives"`
	// Sigma is the standard error of a variant's primary rate (the root
	// mean square of the variants' standard errors); ExpectedMaxZ is
	// E[max of N standard normals]; Inflation = Sigma·ExpectedMaxZ is how
	// far the best of N identical variants lands above their common rate
	// on average. DeflatedRate is the chosen rate less that inflation.
	Sigma        float64 `json:"sigma"`
	ExpectedMaxZ float64 `json:"expected_max_z"`
	Inflation    float64 `json:"inflation"`
	DeflatedRate float64 `json:"deflated_rate"`
	// Summary says in words whether the chosen lead survives.
	Summary string `json:"summary"`
	// Tried lists every counted variant, oldest run first.
	Tried    []LedgerVariant   `json:"tried"`
	Excluded []ExcludedVariant `json:"excluded,omitempty"`
	Notes    []string          `json:"notes,omitempty"`
}

// LedgerVariant is one variant tried in an experiment.
type LedgerVariant struct {
	Run     string `json:"run"`
	Target  string `json:"target"`
	Started string `json:"started,omitempty"`
	// Rate is the primary rate (epochs averaged per case first), over
	// Cases scored cases; SE its standard error across cases.
	Rate      float64 `json:"rate"`
	Cases     int     `json:"cases"`
	SE        float64 `json:"se"`
	Reference bool    `json:"reference,omitempty"`
	Chosen    bool    `json:"chosen,omitempty"`
	// VsReference compares the variant (A) with the reference (B), paired
	// by case; PAdjusted is Holm's over the Family. Absent for the
	// reference, and when the two share fewer than two scored cases.
	VsReference *Comparison `json:"vs_reference,omitempty"`
}

// Name is "target@run".
func (v LedgerVariant) Name() string { return v.Target + "@" + v.Run }

// ExcludedVariant is a (run, target) of the experiment that could not be
// compared with the chosen variant.
type ExcludedVariant struct {
	Run    string `json:"run"`
	Target string `json:"target"`
	// Reason is "dataset" (another dataset hash), "scorers" (another scorer
	// configuration or primary scorer) or "unscored" (no primary scores).
	Reason string `json:"reason"`
}

// Reasons a variant is excluded from the ledger.
const (
	ExcludedDataset  = "dataset"
	ExcludedScorers  = "scorers"
	ExcludedUnscored = "unscored"
)

// ErrUnknownReference is wrapped by the error Analyze returns when
// Options.Reference names no comparable variant of the experiment.
var ErrUnknownReference = errors.New("the reference is not a variant of this experiment")

// VariantRef names a variant: a run of the experiment (its ID or a unique
// prefix) and, optionally, one of its targets (default: the run's first).
type VariantRef struct {
	Run    string
	Target string
}

// IsZero reports whether no variant is named.
func (r VariantRef) IsZero() bool { return r.Run == "" }

func (r VariantRef) String() string {
	if r.Target == "" {
		return r.Run
	}
	return r.Run + ":" + r.Target
}

// maxVariantRef bounds the length of a --reference value.
const maxVariantRef = 1024

// ParseVariantRef parses "RUN" or "RUN:TARGET" (the --reference option):
// RUN is a run ID or a unique prefix of one (letters, digits, '-', '_',
// '.'); TARGET, after the first ':', is a target name of that run.
func ParseVariantRef(s string) (VariantRef, error) {
	const valid = "want RUN or RUN:TARGET: a run of the experiment (its ID or a unique prefix) and optionally one of its targets"
	if len(s) > maxVariantRef {
		return VariantRef{}, fmt.Errorf("reference is %d bytes long (at most %d): %s", len(s), maxVariantRef, valid)
	}
	if !utf8.ValidString(s) {
		return VariantRef{}, fmt.Errorf("reference %q is not valid UTF-8: %s", s, valid)
	}
	if strings.TrimSpace(s) == "" {
		return VariantRef{}, errors.New("reference is empty: " + valid)
	}
	run, target, hasTarget := strings.Cut(s, ":")
	if run == "" {
		return VariantRef{}, fmt.Errorf("reference %q names no run before ':': %s", s, valid)
	}
	for _, c := range run {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return VariantRef{}, fmt.Errorf("reference %q: run ID %q has the character %q; run IDs hold letters, digits, '-', '_' and '.' (%s)", s, run, c, valid)
		}
	}
	if hasTarget {
		if target == "" {
			return VariantRef{}, fmt.Errorf("reference %q names no target after ':': %s", s, valid)
		}
		if i := strings.IndexFunc(target, unicode.IsControl); i >= 0 {
			return VariantRef{}, fmt.Errorf("reference %q: the target name holds a control character at byte %d: %s", s, len(run)+1+i, valid)
		}
	}
	return VariantRef{Run: run, Target: target}, nil
}

// ledgerVariant is a variant with its primary verdicts, on a case index
// shared by every variant of the ledger.
type ledgerVariant struct {
	LedgerVariant
	pass *verdicts
}

// selectionLedger builds the ledger of run: it reads the runs of the
// run's experiment that started up to and including it, keeps the (run,
// target) pairs comparable with it, and judges the run's top target.
// pass and ci are the run's own primary verdicts, as the report has them.
func selectionLedger(ctx context.Context, st record.Reader, run *record.Run, rep *Report, pass map[string]*verdicts, ci *caseIndex, o Options) (*Ledger, error) {
	scorer := ""
	for _, t := range rep.Targets {
		if t.Primary.Scorer != "" {
			scorer = t.Primary.Scorer
			break
		}
	}
	runs, err := st.ExperimentRuns(ctx, run.Experiment)
	if err != nil {
		return nil, fmt.Errorf("selection ledger: %w", err)
	}
	later := 0
	if i := slices.IndexFunc(runs, func(r record.Run) bool { return r.ID == run.ID }); i >= 0 {
		later = len(runs) - (i + 1)
		runs = runs[:i+1]
	} else {
		runs = append(runs, *run)
	}
	// One case index for every variant, without tags: the comparisons
	// against the reference are overall only.
	li := newCaseIndex()
	var vs []ledgerVariant
	var excluded []ExcludedVariant
	incomplete := 0
	counted := map[string]bool{}
	for i := range runs {
		r := &runs[i]
		// The dataset by content (by bytes for a run made before content
		// hashes: dataset.CompareVersions).
		sameData := dataset.CompareVersions("run", runDataset(r), "run", runDataset(run)).Same
		if !sameData || r.ScorersHash != run.ScorersHash {
			reason := ExcludedDataset
			if sameData {
				reason = ExcludedScorers
			}
			for _, tg := range r.Targets {
				excluded = append(excluded, ExcludedVariant{Run: r.ID, Target: tg, Reason: reason})
			}
			continue
		}
		var byTarget map[string]*verdicts
		var scorerOf map[string]string
		var targets []string
		if r.ID == run.ID {
			byTarget, scorerOf = map[string]*verdicts{}, map[string]string{}
			for _, t := range rep.Targets {
				targets = append(targets, t.Name)
				if t.Primary.Scorer != "" && pass[t.Name] != nil {
					byTarget[t.Name] = ledgerReindex(pass[t.Name], ci, li)
					scorerOf[t.Name] = t.Primary.Scorer
				}
			}
		} else {
			byTarget, scorerOf, err = ledgerVerdicts(ctx, st, r, li)
			if err != nil {
				return nil, fmt.Errorf("selection ledger: run %s: %w", r.ID, err)
			}
			targets = slices.Clone(r.Targets)
			for name := range byTarget {
				if !slices.Contains(targets, name) {
					targets = append(targets, name)
				}
			}
		}
		started := r.Started.UTC().Format("2006-01-02T15:04:05Z")
		for _, tg := range targets {
			v := byTarget[tg]
			switch {
			case v == nil || len(v.v) == 0:
				excluded = append(excluded, ExcludedVariant{Run: r.ID, Target: tg, Reason: ExcludedUnscored})
			case scorerOf[tg] != scorer:
				excluded = append(excluded, ExcludedVariant{Run: r.ID, Target: tg, Reason: ExcludedScorers})
			default:
				vs = append(vs, ledgerVariant{LedgerVariant: LedgerVariant{Run: r.ID, Target: tg, Started: started}, pass: v})
				if !counted[r.ID] && r.Status != record.StatusComplete {
					incomplete++
				}
				counted[r.ID] = true
			}
		}
	}
	l := &Ledger{Experiment: run.Experiment, Scorer: scorer, Alpha: o.Alpha, Excluded: excluded, Runs: len(counted)}
	// The chosen variant: the run's top target.
	chosen := -1
	for i := range vs {
		if vs[i].Run != run.ID {
			continue
		}
		vs[i].Rate, vs[i].Cases = ledgerRate(vs[i].pass)
		if chosen < 0 || vs[i].Rate > vs[chosen].Rate {
			chosen = i
		}
	}
	if chosen < 0 {
		l.Variants = len(vs)
		l.Summary = "This run has no primary scores, so no variant of it can be judged against the experiment."
		l.Notes = ledgerExcludedNotes(excluded, len(vs))
		return l, nil
	}
	ref := 0
	l.ReferenceFrom = "first_variant"
	if !o.Reference.IsZero() {
		if ref, err = ledgerReference(vs, runs, o.Reference); err != nil {
			return nil, err
		}
		l.ReferenceFrom = "option"
	}
	built := buildLedger(vs, li, chosen, ref, o.Alpha, o.Margin, o.Test)
	built.Experiment, built.Scorer, built.Excluded, built.Runs, built.ReferenceFrom =
		l.Experiment, l.Scorer, l.Excluded, l.Runs, l.ReferenceFrom
	for _, v := range built.Tried {
		if v.VsReference != nil {
			v.VsReference.Scorer = scorer
		}
	}
	built.Notes = append(built.Notes, ledgerExcludedNotes(excluded, built.Variants)...)
	if later > 0 {
		built.Notes = append(built.Notes, fmt.Sprintf("%s of the experiment started after this one: not counted here (each run's report counts what was tried up to it).",
			ledgerCount(later, "run", "runs")))
	}
	if incomplete > 0 {
		built.Notes = append(built.Notes, fmt.Sprintf("%s of the experiment did not complete: %s counted on the cases scored.",
			ledgerCount(incomplete, "run", "runs"), ledgerTheir(incomplete)))
	}
	return &built, nil
}

func ledgerTheir(n int) string {
	if n == 1 {
		return "its variants are"
	}
	return "their variants are"
}

// buildLedger judges variant chosen against variant ref among vs (every
// variant's verdicts on the case index ci): each variant but the reference
// is compared with it, paired by case, and the N−1 p-values are
// Holm-adjusted; the expected best-of-N inflation σ·E[max of N] deflates
// the chosen rate. It is the whole statistical content of the ledger, with
// no I/O: Experiment, Scorer, Runs, ReferenceFrom and Excluded are left to
// the caller.
func buildLedger(vs []ledgerVariant, ci *caseIndex, chosen, ref int, alpha, margin float64, test string) Ledger {
	if alpha == 0 {
		alpha = 0.05
	}
	if margin == 0 {
		margin = stats.DefaultEquivalenceMargin
	}
	if test == "" {
		test = stats.TestMcNemarScore
	}
	n := len(vs)
	l := Ledger{Alpha: alpha, Variants: n, Family: max(0, n-1)}
	var sumSq float64
	ses := 0
	for i := range vs {
		v := &vs[i]
		v.Rate, v.Cases = ledgerRate(v.pass)
		v.SE = ledgerSE(v.pass)
		if !anyNaN(v.SE) {
			sumSq += v.SE * v.SE
			ses++
		} else {
			v.SE = 0
		}
		v.Rate, v.SE = round6(v.Rate), round6(v.SE)
	}
	// Every variant but the reference against the reference; a comparison
	// that cannot be made still counts in the family (as p = 1).
	var ps []float64
	var idx []int
	for i := range vs {
		if i == ref {
			continue
		}
		c, ok := pairDense(vs[i].pass, vs[ref].pass, ci, pairing{alpha: alpha, margin: margin, test: test})
		idx = append(idx, i)
		if !ok {
			ps = append(ps, math.NaN())
			continue
		}
		c.A, c.B, c.Scorer, c.Slices = vs[i].Name(), vs[ref].Name(), "", nil
		vs[i].VsReference = &c
		ps = append(ps, c.PValue)
	}
	adj := stats.Holm(ps)
	for j, i := range idx {
		c := vs[i].VsReference
		if c == nil {
			continue
		}
		c.PAdjusted = adj[j]
		c.Verdict = stats.Verdict(c.Delta, stats.Interval{Lo: c.CI[0], Hi: c.CI[1]}, adj[j], alpha, margin)
	}
	vs[ref].Reference = true
	vs[chosen].Chosen = true
	l.Tried = make([]LedgerVariant, n)
	for i := range vs {
		l.Tried[i] = vs[i].LedgerVariant
	}
	l.Chosen, l.Reference = l.Tried[chosen], l.Tried[ref]
	if ses > 0 {
		l.Sigma = round6(math.Sqrt(sumSq / float64(ses)))
	}
	l.ExpectedMaxZ = round6(stats.ExpectedMaxNormal(n))
	l.Inflation = round6(l.Sigma * l.ExpectedMaxZ)
	l.DeflatedRate = round6(math.Max(0, l.Chosen.Rate-l.Inflation))
	l.Verdict, l.UncorrectedVerdict = stats.VerdictInconclusive, stats.VerdictInconclusive
	if c := l.Chosen.VsReference; c != nil {
		l.Verdict = c.Verdict
		l.UncorrectedVerdict = stats.Verdict(c.Delta, stats.Interval{Lo: c.CI[0], Hi: c.CI[1]}, c.PValue, alpha, margin)
	}
	l.Survives = l.Verdict == stats.VerdictABetter
	l.Summary = ledgerSummary(&l)
	// A better variant was tried before: the run's top target is not the
	// experiment's best.
	best := 0
	for i := range l.Tried {
		if l.Tried[i].Rate > l.Tried[best].Rate {
			best = i
		}
	}
	if l.Tried[best].Rate > l.Chosen.Rate {
		l.Notes = append(l.Notes, fmt.Sprintf("%s scored higher (%s) than the chosen variant (%s).",
			l.Tried[best].Name(), units.Pct(l.Tried[best].Rate), units.Pct(l.Chosen.Rate)))
	}
	return l
}

// ledgerSummary says whether the chosen variant's lead over the reference
// survives the correction for the variants tried.
func ledgerSummary(l *Ledger) string {
	c := l.Chosen.VsReference
	nv := ledgerCount(l.Variants, "variant", "variants")
	switch {
	case l.Variants == 1:
		return "Only one variant has been tried in this experiment: there is no selection to correct for."
	case l.Chosen.Reference:
		return fmt.Sprintf("The chosen variant %s is the reference itself: it has no lead to test. %s tried.", l.Chosen.Name(), nv)
	case c == nil:
		return fmt.Sprintf("The chosen variant %s and the reference %s share too few scored cases to compare; %s tried.",
			l.Chosen.Name(), l.Reference.Name(), nv)
	}
	lead := fmt.Sprintf("%s points [%s, %s]", ledgerPts(c.Delta), ledgerPts(c.CI[0]), ledgerPts(c.CI[1]))
	p := fmt.Sprintf("p = %s on its own, %s after Holm over %s",
		ledgerP(c.PValue), ledgerP(c.PAdjusted), ledgerCount(l.Family, "comparison", "comparisons"))
	switch {
	case l.Survives:
		return fmt.Sprintf("The lead of %s over the reference %s (%s) survives the correction for %s tried: %s.",
			l.Chosen.Name(), l.Reference.Name(), lead, nv, p)
	case c.Delta <= 0:
		return fmt.Sprintf("The chosen variant %s does not lead the reference %s (%s); %s tried.",
			l.Chosen.Name(), l.Reference.Name(), lead, nv)
	case l.UncorrectedVerdict == stats.VerdictABetter:
		return fmt.Sprintf("The lead of %s over the reference %s (%s) does not survive the correction for %s tried: %s. "+
			"Alone it would look like a win; as the best of %d it is within what picking the best of identical variants produces.",
			l.Chosen.Name(), l.Reference.Name(), lead, nv, p, l.Variants)
	default:
		return fmt.Sprintf("The lead of %s over the reference %s (%s) is not significant, before or after the correction for %s tried: %s.",
			l.Chosen.Name(), l.Reference.Name(), lead, nv, p)
	}
}

// ledgerExcludedNotes says which variants could not be compared and what that
// does to the correction.
func ledgerExcludedNotes(ex []ExcludedVariant, counted int) []string {
	var byReason = map[string]int{}
	for _, e := range ex {
		byReason[e.Reason]++
	}
	var parts []string
	if n := byReason[ExcludedDataset]; n > 0 {
		parts = append(parts, ledgerCount(n, "variant", "variants")+" measured another dataset")
	}
	if n := byReason[ExcludedScorers]; n > 0 {
		parts = append(parts, ledgerCount(n, "variant", "variants")+" used another definition of correct (scorers hash or primary scorer)")
	}
	var notes []string
	if len(parts) > 0 {
		k := byReason[ExcludedDataset] + byReason[ExcludedScorers]
		notes = append(notes, fmt.Sprintf("%s: not compared and not counted in N. If they competed for the same choice, N is really %d and this correction is too lenient.",
			strings.Join(parts, "; "), counted+k))
	}
	if n := byReason[ExcludedUnscored]; n > 0 {
		notes = append(notes, ledgerCount(n, "target", "targets")+" of the experiment's runs had no primary scores and were not counted.")
	}
	return notes
}

// ledgerReference resolves ref among the variants: the run by exact ID or
// unique prefix (among the experiment's runs), the target by name or the
// run's first variant.
func ledgerReference(vs []ledgerVariant, runs []record.Run, ref VariantRef) (int, error) {
	var ids []string
	for _, r := range runs {
		if r.ID == ref.Run {
			ids = []string{r.ID}
			break
		}
		if strings.HasPrefix(r.ID, ref.Run) {
			ids = append(ids, r.ID)
		}
	}
	switch {
	case len(ids) == 0:
		return 0, fmt.Errorf("--reference %s: no run of the experiment up to this one has an ID starting %q; its variants are %s: %w",
			ref, ref.Run, ledgerVariantList(vs), ErrUnknownReference)
	case len(ids) > 1:
		return 0, fmt.Errorf("--reference %s: %q starts the IDs of %d runs (%s); give more of the ID: %w", ref, ref.Run, len(ids), strings.Join(ids, ", "), ErrUnknownReference)
	}
	for i, v := range vs {
		if v.Run == ids[0] && (ref.Target == "" || v.Target == ref.Target) {
			return i, nil
		}
	}
	what := "no variant"
	if ref.Target != "" {
		what = "no variant " + strconv.Quote(ref.Target)
	}
	return 0, fmt.Errorf("--reference %s: run %s has %s comparable with this run (same dataset, scorers and primary scorer); the variants are %s: %w",
		ref, ids[0], what, ledgerVariantList(vs), ErrUnknownReference)
}

func ledgerVariantList(vs []ledgerVariant) string {
	const show = 12
	names := make([]string, 0, min(len(vs), show))
	for i, v := range vs {
		if i == show {
			names = append(names, fmt.Sprintf("… (%d more)", len(vs)-show))
			break
		}
		names = append(names, v.Run+":"+v.Target)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// ledgerVerdicts reads the primary verdicts of a run's latest scoring
// into the run's view (its primary scores only, as the report's view holds
// them), and lays them onto the case index ci, with each target's primary
// scorer.
func ledgerVerdicts(ctx context.Context, st record.Reader, run *record.Run, ci *caseIndex) (map[string]*verdicts, map[string]string, error) {
	scoring, err := st.LatestScoring(ctx, run.ID)
	if err != nil || scoring == 0 {
		return nil, nil, err
	}
	b := runview.NewBuilder(run, scoring, runview.Options{VerdictsOnly: true, ScoresWithoutResults: true, VerdictsAndTimings: true})
	scorer := map[string]string{}
	var targets []string
	err = st.Scores(ctx, run.ID, scoring, func(s record.Score) error {
		if !s.Primary {
			return nil
		}
		if _, ok := scorer[s.Target]; !ok {
			scorer[s.Target] = s.Scorer
			targets = append(targets, s.Target)
		}
		b.AddScore(&s)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	v := b.View()
	from := casesOf(v)
	// Every case of the view has a primary score: numbered onto ci in the
	// order the scores named them.
	for i := range from.len() {
		ci.add(from.id(i), nil)
	}
	pass := map[string]*verdicts{}
	for _, name := range targets {
		pass[name] = ledgerReindex(viewColumn(v, v.Target(name), scorer[name]), from, ci)
	}
	return pass, scorer, nil
}

// ledgerReindex copies verdicts from the case index from onto the case index to.
func ledgerReindex(vs *verdicts, from, to *caseIndex) *verdicts {
	out := newVerdicts(vs.epochs)
	for i := range from.len() {
		if (i+1)*vs.epochs > len(vs.v) {
			break
		}
		j := -1
		for e, x := range vs.v[i*vs.epochs : (i+1)*vs.epochs] {
			if x < 0 {
				continue
			}
			if j < 0 {
				j = to.add(from.id(i), nil)
			}
			out.set(j, e+1, x == 1)
		}
	}
	return out
}

// ledgerRate is the mean over cases of each case's mean verdict, and the
// number of cases scored.
func ledgerRate(vs *verdicts) (float64, int) {
	var sum float64
	n := 0
	for i := 0; (i+1)*vs.epochs <= len(vs.v); i++ {
		if m, k := vs.mean(i); k > 0 {
			sum += m
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// ledgerSE is the standard error of a variant's rate across cases (its
// epochs averaged per case first); NaN with fewer than two cases.
func ledgerSE(vs *verdicts) float64 {
	var means []float64
	for i := 0; (i+1)*vs.epochs <= len(vs.v); i++ {
		if m, k := vs.mean(i); k > 0 {
			means = append(means, m)
		}
	}
	_, se := stats.MeanSE(means)
	return se
}

func ledgerCount(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// ledgerPts formats a difference of rates in points with a sign: "+6.0".
func ledgerPts(d float64) string { return fmt.Sprintf("%+.1f", 100*d) }

// ledgerP formats a p-value for a sentence.
func ledgerP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p < 0.0001:
		return "<0.0001"
	default:
		return strconv.FormatFloat(p, 'f', 4, 64)
	}
}
