package analysis

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/units"
)

// FieldRate is one field of a field scorer (field_equals, tool_call) on one
// target: the outputs whose field was right (Passed, "ok") out of every
// output the field applies to (N), with the interval the target's rates use.
// A field applies to every output the scorer scored, except one whose score
// lists other fields and not this one (tool_call on a case that expects
// another tool's arguments). An output the scorer could not compare field by
// field (unparseable, a failed call, the wrong tool: its score lists no
// field, or the field as "unscored") is not ok; it is counted in Unscored.
// An output that passed without field verdicts (a should-refuse case that
// was refused) has no field to count.
type FieldRate struct {
	Field string `json:"field"`
	Rate
	Wrong    int `json:"wrong"`
	Missing  int `json:"missing"`
	Unscored int `json:"unscored"`
}

// JudgeStats is one judge scorer's health on one target: how many of its
// verdicts were judge errors (the judge gave no usable verdict, which
// counts as a failure of the output) and what its calls cost.
type JudgeStats struct {
	Scorer string `json:"scorer"`
	N      int    `json:"n"`
	Errors int    `json:"errors"`
	// ErrorRate is Errors/N.
	ErrorRate float64 `json:"error_rate"`
	CostUSD   float64 `json:"cost_usd"`
	// SavedUSD is what this scorer's verdicts served from the response
	// cache would have cost (never billed again; not in CostUSD).
	SavedUSD float64 `json:"saved_usd"`
}

// NotEvidence reports whether so many of the judge's verdicts failed that
// the scorer's rate measures the judge rather than the target.
func (j JudgeStats) NotEvidence() bool { return j.N > 0 && 2*j.Errors >= j.N }

// fieldAcc accumulates one field of a field scorer on one target.
type fieldAcc struct {
	vs                       *verdicts
	wrong, missing, unscored int
}

// fieldOrder keeps each field scorer's fields in the order its verdicts
// list them (first seen across targets).
type fieldOrder struct {
	scorers []string
	fields  map[string][]string
}

func (fo *fieldOrder) add(scorer, field string) {
	if fo.fields == nil {
		fo.fields = map[string][]string{}
	}
	fs, ok := fo.fields[scorer]
	if !ok {
		fo.scorers = append(fo.scorers, scorer)
	}
	if !slices.Contains(fs, field) {
		fo.fields[scorer] = append(fs, field)
	}
}

// addFields records a score's per-field verdicts (case i of the index).
func (a *acc) addFields(fo *fieldOrder, s *record.Score, i, epochs int) {
	if len(s.Fields) == 0 {
		return
	}
	if a.fields == nil {
		a.fields = map[string]map[string]*fieldAcc{}
	}
	byField := a.fields[s.Scorer]
	if byField == nil {
		byField = map[string]*fieldAcc{}
		a.fields[s.Scorer] = byField
	}
	if a.listed == nil {
		a.listed = map[string]*verdicts{}
	}
	listed := a.listed[s.Scorer]
	if listed == nil {
		listed = newVerdicts(epochs)
		a.listed[s.Scorer] = listed
	}
	listed.set(i, s.Epoch, true)
	for _, f := range s.Fields {
		fo.add(s.Scorer, f.Field)
		fa := byField[f.Field]
		if fa == nil {
			fa = &fieldAcc{vs: newVerdicts(epochs)}
			byField[f.Field] = fa
		}
		fa.vs.set(i, s.Epoch, f.Status == "ok")
		switch f.Status {
		case "wrong":
			fa.wrong++
		case "missing":
			fa.missing++
		case "unscored":
			fa.unscored++
		}
	}
}

// fieldRates are a target's per-field rates for every field scorer, each
// field over every output its scorer scored on the target (the scorer's
// verdicts in the run's view: t is the target's, ci the view's cases).
func (a *acc) fieldRates(fo *fieldOrder, view *runview.View, t *runview.Target, ci *caseIndex, alpha float64, method string, epochs int) map[string][]FieldRate {
	var out map[string][]FieldRate
	for _, scorer := range fo.scorers {
		all := viewColumn(view, t, scorer)
		if all == nil || !slices.Contains(a.order, scorer) {
			continue // the target has no score of this scorer
		}
		for _, field := range fo.fields[scorer] {
			fa := a.fields[scorer][field]
			if fa == nil {
				fa = &fieldAcc{vs: newVerdicts(epochs)}
			}
			fr := FieldRate{Field: field, Wrong: fa.wrong, Missing: fa.missing, Unscored: fa.unscored}
			// An output that failed without per-field verdicts is not ok;
			// one whose score listed other fields only, or that passed
			// without any (a should-refuse case refused), is not counted.
			listed := a.listed[scorer]
			for j, x := range all.v {
				if x != 0 {
					continue
				}
				i, epoch := j/all.epochs, j%all.epochs+1
				if fa.vs.get(i, epoch) < 0 && (listed == nil || listed.get(i, epoch) <= 0) {
					fa.vs.set(i, epoch, false)
					fr.Unscored++
				}
			}
			passed, n := fa.vs.count()
			fr.Rate = rate("", passed, n, alpha, method)
			if fr.CIMethod == "" {
				fr.CIMethod = "wilson"
			}
			primaryInterval(&fr.Rate, fa.vs, ci, alpha)
			if out == nil {
				out = map[string][]FieldRate{}
			}
			out[scorer] = append(out[scorer], fr)
		}
	}
	return out
}

// get returns case i's verdict in an epoch: -1 when not scored, 0 fail,
// 1 pass.
func (vs *verdicts) get(i, epoch int) int8 {
	if epoch < 1 || epoch > vs.epochs || (i+1)*vs.epochs > len(vs.v) {
		return -1
	}
	return vs.v[i*vs.epochs+epoch-1]
}

// count returns how many verdicts passed and how many were scored (none
// of nil).
func (vs *verdicts) count() (passed, n int) {
	if vs == nil {
		return 0, 0
	}
	for _, x := range vs.v {
		if x >= 0 {
			n++
			passed += int(x)
		}
	}
	return passed, n
}

// judgeAcc accumulates one scorer's judge errors and judge cost.
type judgeAcc struct {
	n, errors   int
	cost, saved float64
}

// judges are the target's judge scorers (typed judge in the run's spec, or
// with a judge error or a judge cost), in the scorers' order.
func (a *acc) judges(judgeTypes map[string]bool) []JudgeStats {
	var out []JudgeStats
	for _, s := range a.order {
		j := a.judge[s]
		if j == nil || (!judgeTypes[s] && j.errors == 0 && j.cost == 0 && j.saved == 0) {
			continue
		}
		js := JudgeStats{Scorer: s, N: j.n, Errors: j.errors, CostUSD: j.cost, SavedUSD: j.saved}
		if j.n > 0 {
			js.ErrorRate = round4(float64(j.errors) / float64(j.n))
		}
		out = append(out, js)
	}
	return out
}

// judgeScorers names the scorers of type judge in a run's resolved spec.
func judgeScorers(config []byte) map[string]bool {
	var sp struct {
		Scorers []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"scorers"`
	}
	out := map[string]bool{}
	if len(config) == 0 || json.Unmarshal(config, &sp) != nil {
		return out
	}
	for _, s := range sp.Scorers {
		if s.Type == "judge" {
			out[s.Name] = true
		}
	}
	return out
}

// scorerErrs counts one scorer's scorer_error verdicts on one target.
type scorerErrs struct {
	n      int
	reason string // the first one's
}

// scorerErrorWarning says that a scorer could not judge some results: a
// scorer_error is the grader's fault (its configuration, or a case's
// expected value it cannot read), yet it counts as a failure of the target,
// so a rate with many of them measures the grader.
func scorerErrorWarning(target, scorer string, e *scorerErrs, n int) string {
	return fmt.Sprintf("target %s, scorer %s: %d of %d results are scorer_error, failures of the grader counted against the target — fix the scorer or the expected values (the first: %s)",
		target, scorer, e.n, n, cutRunes(e.reason, 200))
}

// judgeWarnings say loudly, for every judge scorer that gave judge errors
// on a target, how many: those verdicts count as failures of the output.
func judgeWarnings(targets []Target) []string {
	var out []string
	for _, t := range targets {
		for _, j := range t.Judges {
			if j.Errors == 0 {
				continue
			}
			w := fmt.Sprintf("target %s, scorer %s: judge errors: %d of %d (%s)", t.Name, j.Scorer, j.Errors, j.N, units.Pct(j.ErrorRate))
			if j.NotEvidence() {
				w += " — this scorer's rate is not evidence (the judge, not the target, failed)"
			} else {
				w += " — counted as failures, so this scorer's rate understates the target"
			}
			out = append(out, w)
		}
	}
	return out
}
