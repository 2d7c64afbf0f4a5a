package selftest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/assay-eval/assay/internal/selftest/findings"
)

// The report's types are findings' (plain data report renders without
// reaching the scorers); selftest builds them under these names.
type (
	Report        = findings.Report
	Rule          = findings.Rule
	NullModelInfo = findings.NullModelInfo
	ScorerReport  = findings.ScorerReport
	CellReport    = findings.CellReport
	Finding       = findings.Finding
	Example       = findings.Example
)

// example is an Example with the position of its case, by which merge
// keeps the first ones whatever the scheduling.
type example struct {
	Example
	index int
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
				if ct := total.chance[chanceKey(m.Name, si.name)]; si.ownChance() && ct != nil && ct.n > 0 {
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
					Rate: cr.Rate, CI: cr.CI, Chance: cr.Chance, Examples: make([]Example, len(c.examples))}
				for i, e := range c.examples {
					f.Examples[i] = e.Example
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
