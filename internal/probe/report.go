package probe

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// Report is the probe's result (`assay probe contamination --format json`).
type Report struct {
	Spec    string  `json:"spec"`
	TwinSet SetInfo `json:"twin_set"`
	Cases   Cases   `json:"cases"`
	Runs    Runs    `json:"runs"`
	Method  Method  `json:"method"`
	// Targets are the findings, in the order the targets were probed.
	Targets []Finding `json:"targets"`
	// Flagged names the targets whose verdict is contaminated?.
	Flagged  []string `json:"flagged"`
	Warnings []string `json:"warnings,omitempty"`
}

// SetInfo describes the twin set used.
type SetInfo struct {
	ID string `json:"id"`
	// Source is "file:<path>", "rewriter:<target>", or "stored" (--twins-set).
	Source string `json:"source"`
	// Stored counts the set's twins found in the store before this probe;
	// Added those this probe stored (read from the file or rewritten).
	Stored int `json:"stored"`
	Added  int `json:"added"`
	// JoinField is the twin file's field that holds each twin's case ID
	// ("line": joined by line or row number).
	JoinField string `json:"join_field,omitempty"`
	// RewritePromptHash and Fields say how a rewriter's twins were made.
	RewritePromptHash string   `json:"rewrite_prompt_hash,omitempty"`
	Fields            []string `json:"fields,omitempty"`
}

// Cases counts the cases and what was left out.
type Cases struct {
	// Dataset is the cases read; Paired those probed (with a twin, within --limit).
	Dataset int `json:"dataset"`
	Paired  int `json:"paired"`
	// NoTwin counts the cases without a twin (left out); NoTwinIDs lists the first of them.
	NoTwin    int      `json:"no_twin"`
	NoTwinIDs []string `json:"no_twin_ids,omitempty"`
	// RewriteFailed counts the cases the rewriter made no usable twin for
	// (left out, and tried again by the next probe), by kind; the first
	// failures are listed with their reasons.
	RewriteFailed   int            `json:"rewrite_failed"`
	RewriteByKind   map[string]int `json:"rewrite_failed_by_kind,omitempty"`
	RewriteFailures []Failure      `json:"rewrite_failures,omitempty"`
}

// MaxListed bounds the case IDs and failures a report lists.
const MaxListed = 20

// Runs are the two stored runs: `assay report RUN` works on each.
type Runs struct {
	Original string `json:"original"`
	Twins    string `json:"twins"`
}

// Method says how the findings were decided.
type Method struct {
	Test       string  `json:"test"`
	CIMethod   string  `json:"ci_method"`
	CILevel    float64 `json:"ci_level"`
	RateCI     string  `json:"rate_ci_method"`
	RateLevel  float64 `json:"rate_ci_level"`
	Alpha      float64 `json:"alpha"`
	MinDrop    float64 `json:"min_drop"`
	Adjustment string  `json:"p_adjustment"`
	Family     int     `json:"family"`
}

// NewMethod describes Assess under o for a family of k targets.
func NewMethod(o Options, k int) Method {
	return Method{Test: TestName, CIMethod: CIMethod, CILevel: round4(1 - 2*o.Alpha), RateCI: "wilson", RateLevel: round4(1 - o.Alpha),
		Alpha: o.Alpha, MinDrop: o.MinDrop, Adjustment: Adjustment, Family: k}
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Verdicts reads what one run says of each target's cases: the run's view
// under its latest scoring (runview.FromStoreWith, verdicts only), of
// which the probe reads each target's primary verdict on epoch 1 (it makes
// one call per case) and the calls that failed with an error (a time-out,
// a refused request …: no answer, so no evidence about the wording), which
// are left out of the pairing and counted (SetErrors).
func Verdicts(ctx context.Context, st record.Reader, runID string) (*runview.View, error) {
	run, err := st.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	return runview.FromStoreWith(ctx, st, run, runview.Options{Unscored: true, VerdictsOnly: true})
}

// Tables pairs each target's verdicts on the originals (A) with those on
// the twins (B), by case ID, over the cases with an answer in both.
func Tables(targets []string, orig, twins *runview.View) []stats.PairTable {
	at := make(map[string]int, len(twins.Cases))
	for k, c := range twins.Cases {
		at[c.ID] = k
	}
	out := make([]stats.PairTable, len(targets))
	for i, name := range targets {
		t := &out[i]
		for ci, c := range orig.Cases {
			k, ok := at[c.ID]
			if !ok {
				continue
			}
			a, okA := firstVerdict(orig, name, ci)
			b, okB := firstVerdict(twins, name, k)
			if !okA || !okB {
				continue
			}
			switch {
			case a && b:
				t.Both++
			case a:
				t.AOnly++
			case b:
				t.BOnly++
			default:
				t.Neither++
			}
		}
	}
	return out
}

// firstVerdict is target name's primary verdict on case i's first epoch,
// and whether there is one: a call that returned and was scored.
func firstVerdict(v *runview.View, name string, i int) (pass, ok bool) {
	t := v.Target(name)
	if t == nil {
		return false, false
	}
	p := t.Pass[v.Primary]
	j := i * v.Epochs
	if p == nil || j >= len(p) || !t.Behaved(j) || p[j] < 0 {
		return false, false
	}
	return p[j] == 1, true
}

// firstErrors counts target name's calls on a first epoch that failed with
// an error.
func firstErrors(v *runview.View, name string) int {
	t := v.Target(name)
	if t == nil {
		return 0
	}
	n := 0
	for j := 0; j < len(t.Errored); j += v.Epochs {
		if t.Failed(j) {
			n++
		}
	}
	return n
}

// SetErrors records each target's failed calls in its finding.
func SetErrors(fs []Finding, orig, twins *runview.View) {
	for i := range fs {
		fs[i].OriginalErrors = firstErrors(orig, fs[i].Target)
		fs[i].TwinErrors = firstErrors(twins, fs[i].Target)
	}
}

// Finish fills the flagged targets and the warnings from the findings.
func (r *Report) Finish() {
	r.Flagged = []string{}
	o := Options{Alpha: r.Method.Alpha, MinDrop: r.Method.MinDrop}
	dropped := 0
	for i := range r.Targets {
		f := &r.Targets[i]
		if f.Flagged() {
			r.Flagged = append(r.Flagged, f.Target)
		}
		if float64(f.Drop) > o.MinDrop {
			dropped++
		}
		if f.OriginalErrors+f.TwinErrors > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("target %s: %d calls on the originals and %d on the twins failed with an error; those cases are left out of its pairing (an error says nothing about the wording)", f.Target, f.OriginalErrors, f.TwinErrors))
		}
		switch {
		case f.N == 0:
			r.Warnings = append(r.Warnings, fmt.Sprintf("target %s has no case scored on both the original and its twin: nothing can be said of it", f.Target))
		case float64(f.CI[1]) < 0:
			r.Warnings = append(r.Warnings, fmt.Sprintf("target %s did better on the twins than on the originals (%s points, interval below zero): the twins may be easier than the originals", f.Target, units.SignedPts(-float64(f.Drop))))
		case f.Verdict == VerdictClean && float64(f.CI[1]) > o.MinDrop:
			r.Warnings = append(r.Warnings, fmt.Sprintf("target %s: %d paired cases cannot rule out a drop of up to %s points (the interval's upper end); more cases would tell", f.Target, f.N, units.Pts(float64(f.CI[1]))))
		}
	}
	if len(r.Targets) >= 2 && dropped == len(r.Targets) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("every target dropped by more than %s points: when clean targets drop too, the twins are likely harder than the originals, and the drop says little about any one target", units.Plain(100*o.MinDrop)))
	}
	if r.TwinSet.JoinField == "line" {
		r.Warnings = append(r.Warnings, "the twins were joined to the cases by line number: line N of the twin file is taken as the twin of case N, so the two files must be aligned line for line (a fresh set such as GSM1K is not a line-by-line twin of GSM8K)")
	}
	if r.Cases.NoTwin > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d of %d cases have no twin and were left out", r.Cases.NoTwin, r.Cases.Dataset))
	}
	if r.Cases.RewriteFailed > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the rewriter made no usable twin for %d cases (%s): they were left out, and the next probe asks again", r.Cases.RewriteFailed, kindList(r.Cases.RewriteByKind)))
	}
}

func kindList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
