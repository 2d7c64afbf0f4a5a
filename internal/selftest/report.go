package selftest

import (
	"fmt"
	"slices"
	"strings"
)

// Report is a selftest's findings. Rates are fractions in [0,1].
type Report struct {
	Spec        string `json:"spec"`
	SpecPath    string `json:"spec_path"`
	SpecHash    string `json:"spec_hash"`
	DatasetHash string `json:"dataset_hash,omitempty"`
	Cases       int    `json:"cases"`
	Seed        int64  `json:"seed"`
	JudgeVia    string `json:"judge_via"`
	Rule        Rule   `json:"rule"`
	// Headline is the score that decides the verdict: the primary scorer,
	// or "primary" when several are combined.
	Headline      string          `json:"headline"`
	NullModels    []NullModelInfo `json:"null_models"`
	Scorers       []ScorerReport  `json:"scorers"`
	Findings      []Finding       `json:"findings"`
	Notes         []string        `json:"notes,omitempty"`
	Verdict       string          `json:"verdict"`
	JudgeRequests int             `json:"judge_requests"` // verdicts asked for; the response cache may have served some
	JudgeCost     float64         `json:"judge_cost_usd"`
	ElapsedMS     float64         `json:"elapsed_ms"`
}

// Rule states the decision rule, so a reader of the JSON knows it.
type Rule struct {
	Method     string  `json:"method"`     // wilson
	Confidence float64 `json:"confidence"` // simultaneous, per scorer
	Adjustment string  `json:"adjustment"` // bonferroni over the scorer's cells
	Margin     float64 `json:"margin"`
	Text       string  `json:"text"`
}

// NullModelInfo describes one null model as run.
type NullModelInfo struct {
	Name    string  `json:"name"`
	About   string  `json:"about"`
	Cases   int     `json:"cases"`
	Chance  float64 `json:"chance"`
	Basis   string  `json:"chance_basis"`
	Skipped string  `json:"skipped,omitempty"`
}

// ScorerReport is one score's results, a cell per null model and mode.
type ScorerReport struct {
	Name     string       `json:"name"`
	Type     string       `json:"type"`
	Role     string       `json:"role"`
	Primary  bool         `json:"primary"`
	Headline bool         `json:"headline"`
	Skipped  string       `json:"skipped,omitempty"`
	Note     string       `json:"note,omitempty"`
	Tests    int          `json:"tests"`
	Results  []CellReport `json:"results,omitempty"`
}

// CellReport is one null model in one mode on one score.
type CellReport struct {
	Null    string     `json:"null"`
	Mode    string     `json:"mode"`
	Passed  int        `json:"passed"`
	N       int        `json:"n"`
	Rate    float64    `json:"rate"`
	CI      [2]float64 `json:"ci"`
	Chance  float64    `json:"chance"`
	Above   bool       `json:"above_chance"`
	Skipped string     `json:"skipped,omitempty"`
}

// Finding is a cell clearly above chance.
type Finding struct {
	Severity string     `json:"severity"`
	Scorer   string     `json:"scorer"`
	Type     string     `json:"type"`
	Null     string     `json:"null"`
	Mode     string     `json:"mode"`
	Passed   int        `json:"passed"`
	N        int        `json:"n"`
	Rate     float64    `json:"rate"`
	CI       [2]float64 `json:"ci"`
	Chance   float64    `json:"chance"`
	Examples []Example  `json:"examples"`
}

// Example is one case a null model passed on. Output and Parsed are clipped;
// they are model-shaped text and must be escaped wherever shown.
type Example struct {
	CaseID string `json:"case_id"`
	Output string `json:"output"`
	Parsed string `json:"parsed,omitempty"`
	Reason string `json:"reason"`
	index  int
}

// build turns the tallies into the report: cells with intervals, findings
// and the verdict.
func build(rep *Report, total *tally, infos []*scorerInfo, models []NullModel, combine string) {
	chance := map[string]float64{}
	for i := range rep.NullModels {
		nm := &rep.NullModels[i]
		if ct := total.chance[nm.Name]; ct != nil && ct.n > 0 {
			nm.Cases = ct.n
			nm.Chance = float64(ct.hits) / float64(ct.n)
		}
		chance[nm.Name] = nm.Chance
	}
	headlineSkipped := false
	for _, si := range infos {
		sr := ScorerReport{Name: si.name, Type: si.typ, Role: roleOf(si.typ), Primary: si.primary, Headline: si.headline, Skipped: si.skipped, Note: si.note}
		if si.typ == "combined" {
			sr.Role = RoleCombined
			sr.Note = strings.TrimSpace(fmt.Sprintf("%s of %s passes. %s", combine, strings.Join(si.combinedOf, ", "), si.note))
		}
		if si.skipped != "" {
			if si.headline {
				headlineSkipped = true
			}
			rep.Scorers = append(rep.Scorers, sr)
			continue
		}
		// K: the cells tested on this scorer.
		for _, m := range models {
			for _, mode := range []string{ModeRaw, ModeParsed} {
				if c := total.cells[cellKey{m.Name, mode, si.name}]; c != nil && c.n > 0 {
					sr.Tests++
				}
			}
		}
		for _, m := range models {
			for _, mode := range []string{ModeRaw, ModeParsed} {
				cr := CellReport{Null: m.Name, Mode: mode, Chance: chance[m.Name]}
				if ct := total.chance[chanceKey(m.Name, si.name)]; si.project != nil && ct != nil && ct.n > 0 {
					cr.Chance = float64(ct.hits) / float64(ct.n)
				}
				c := total.cells[cellKey{m.Name, mode, si.name}]
				if c == nil || c.n == 0 {
					cr.Skipped = "n/a"
					if mode == ModeParsed && si.readsRaw {
						cr.Skipped = "judges the raw output or the call, not the parsed output: parsed mode is raw mode"
					}
					sr.Results = append(sr.Results, cr)
					continue
				}
				cr.Passed, cr.N = c.passed, c.n
				cr.Rate = float64(c.passed) / float64(c.n)
				iv, above := Decide(c.passed, c.n, cr.Chance, sr.Tests)
				cr.CI = [2]float64{iv.Lo, iv.Hi}
				cr.Above = above
				sr.Results = append(sr.Results, cr)
				if !above {
					continue
				}
				f := Finding{Scorer: si.name, Type: si.typ, Null: m.Name, Mode: mode, Passed: cr.Passed, N: cr.N,
					Rate: cr.Rate, CI: cr.CI, Chance: cr.Chance, Examples: c.examples}
				if f.Examples == nil {
					f.Examples = []Example{}
				}
				switch {
				case si.headline:
					f.Severity = SeverityExploitable
				case si.primary || sr.Role == RoleCorrectness:
					f.Severity = SeverityWarning
				default:
					f.Severity = SeverityNote
				}
				rep.Findings = append(rep.Findings, f)
			}
		}
		rep.Scorers = append(rep.Scorers, sr)
	}
	rep.Verdict = VerdictSound
	switch {
	case slices.ContainsFunc(rep.Findings, func(f Finding) bool { return f.Severity == SeverityExploitable }):
		rep.Verdict = VerdictExploitable
	case headlineSkipped:
		rep.Verdict = VerdictIncomplete
		rep.Notes = append(rep.Notes, fmt.Sprintf("the headline score %s was not attacked: its judge was skipped, so this selftest proves nothing about it; run with --judge-via target (calls the grader) or --judge-via mock (a gullible stand-in)", rep.Headline))
	}
	for _, nm := range rep.NullModels {
		if nm.Skipped != "" {
			rep.Notes = append(rep.Notes, fmt.Sprintf("null model %s not run: %s", nm.Name, nm.Skipped))
		}
	}
	for _, sr := range rep.Scorers {
		if sr.Skipped != "" && !sr.Headline {
			rep.Notes = append(rep.Notes, fmt.Sprintf("scorer %s not attacked: %s", sr.Name, sr.Skipped))
		}
	}
}

func chanceBasis(name string) string {
	switch name {
	case NullConstant:
		return "share of cases whose expected value is the most common one"
	case NullShuffled:
		return "share of cases whose shuffled-in value equals their own expected value (exact, for this permutation)"
	case NullRefusal:
		return "share of cases in the should-refuse bucket"
	case NullLong:
		return "0: no expected value is a megabyte of prose"
	}
	return "share of cases whose expected value is this output (0 unless the data says otherwise)"
}
