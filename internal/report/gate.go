package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/units"
)

// Renderers for `assay gate`: a *gate.Result as text (a terminal or a CI
// log), Markdown (a pull-request comment or a CI job summary), JSON and
// JUnit. Target names, rules, reasons, sources and warnings come from a
// spec, a dataset, a baseline file or a provider: all are escaped. The
// checks' numbers are written with the gate's own unit formatters
// (gate.FormatValue …), the ones its reasons are written with, so a table
// row and its reason agree.

// Gate writes the result in one of the gate document's formats.
func Gate(w io.Writer, format string, r *gate.Result) error {
	return NewRegistry().Gate.Render(w, format, r)
}

// GateJSON writes the result as indented JSON (undefined numbers are null).
func GateJSON(w io.Writer, r *gate.Result) error { return writeJSON(w, r) }

func gateVerdictWord(v string) string {
	switch v {
	case gate.Fail:
		return "FAIL"
	case gate.Inconclusive:
		return "INCONCLUSIVE"
	}
	return "PASS"
}

func gateTally(r *gate.Result) string {
	return fmt.Sprintf("%d failed, %d inconclusive, %d passed", r.Failed, r.Inconclusive, r.Passed)
}

// gateSide names a run compared: where it came from, its spec, dataset and
// commit.
func gateSide(s gate.Side) string {
	parts := []string{}
	if s.Run.Spec != "" {
		parts = append(parts, "spec "+s.Run.Spec)
	}
	parts = append(parts, "dataset "+gate.ShortHash(s.Run.DatasetHash))
	if s.Run.GitCommit != "" {
		c := s.Run.GitCommit
		if len(c) > 12 {
			c = c[:12]
		}
		parts = append(parts, "git "+c)
	}
	src := s.Source
	if !strings.HasPrefix(src, "run ") {
		src += " (run " + s.Run.ID + ")"
	}
	return src + ", " + strings.Join(parts, ", ")
}

// gateDecision says how a check is decided and what the run's false-fail
// rate is.
func gateDecision(r *gate.Result) string {
	lv := units.PlainPct(1 - r.Alpha)
	fam := "the run's one check"
	if r.Family != 1 {
		fam = fmt.Sprintf("the run's %d checks", r.Family)
	}
	s := fmt.Sprintf("a check fails when its one-sided %s bound is beyond the limit (Holm over %s: a run with no limit truly crossed fails with at most %s chance), passes when the other bound is within it",
		lv, fam, units.PlainPct(r.FalseFailRate))
	if r.Strict {
		return s + "; otherwise it fails (--strict)"
	}
	return s + "; otherwise it is inconclusive and passes (--strict fails it)"
}

func gateRules(r *gate.Result) string {
	s := strings.Join(r.Rules, "; ")
	if r.DefaultRules {
		s += " (the default: no rules configured)"
	}
	switch r.RulesFrom {
	case gate.RulesBaseline:
		s += " · from the baseline's spec"
	case gate.RulesCandidate:
		s += " · from the candidate's spec"
	case gate.RulesFlags:
		s += " · from --rule"
	}
	if r.RulesHash != "" {
		s += " (rules " + r.RulesHash + ")"
	}
	return s
}

// gateRuleChangesHead introduces the rule changes of the candidate's spec.
func gateRuleChangesHead(r *gate.Result) string {
	switch {
	case r.RulesFrom == gate.RulesBaseline && r.RelaxedRules > 0:
		return fmt.Sprintf("the candidate's spec relaxes %d of the baseline's gate rules: the gate FAILS (the baseline's rules were applied; pass --rules-from candidate to apply the candidate's on purpose)", r.RelaxedRules)
	case r.RulesFrom == gate.RulesBaseline:
		return "the candidate's spec changes the gate rules (the baseline's rules were applied)"
	case r.RulesFrom == gate.RulesCandidate:
		return "the candidate's spec changes the gate rules, and they were applied (--rules-from candidate)"
	}
	return "the candidate's spec changes the gate rules (not applied: --rule decides)"
}

// gateRuleChangeFails says whether a rule change fails the gate.
func gateRuleChangeFails(r *gate.Result, c gate.RuleChange) bool {
	return c.Relaxed && r.RulesFrom == gate.RulesBaseline
}

// GateText writes the result for a terminal or a CI log.
func GateText(w io.Writer, r *gate.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "assay gate: %s (%s)\n", gateVerdictWord(r.Verdict), gateTally(r))
	if len(r.RuleChanges) > 0 {
		fmt.Fprintf(&b, "  %s:\n", gateRuleChangesHead(r))
		for _, c := range r.RuleChanges {
			mark := "   "
			if gateRuleChangeFails(r, c) {
				mark = "!! "
			}
			fmt.Fprintf(&b, "  %s%s\n", mark, oneLine(c.String()))
		}
	}
	fmt.Fprintf(&b, "  candidate: %s\n", oneLine(gateSide(r.Candidate)))
	fmt.Fprintf(&b, "  baseline:  %s\n", oneLine(gateSide(r.Baseline)))
	fmt.Fprintf(&b, "  %s cases compared · alpha %s", units.Count(r.Cases), units.Plain(r.Alpha))
	if r.Strict {
		b.WriteString(" · strict")
	}
	fmt.Fprintf(&b, " · rules: %s\n", oneLine(gateRules(r)))
	fmt.Fprintf(&b, "  %s\n", gateDecision(r))
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "\ntarget %s: %s\n", oneLine(t.Name), gateVerdictWord(t.Verdict))
		if t.Reason != "" {
			fmt.Fprintf(&b, "  %s\n", oneLine(t.Reason))
		}
		for _, c := range t.Checks {
			fmt.Fprintf(&b, "  %-12s %s\n", gateVerdictWord(c.Verdict), oneLine(c.Rule))
			fmt.Fprintf(&b, "  %-12s %s\n", "", oneLine(c.Reason))
		}
		if t.Outputs > 0 {
			fmt.Fprintf(&b, "  outputs identical to the baseline: %s of %s\n", units.Count(t.IdenticalOutputs), units.Count(t.Outputs))
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		for _, wn := range r.Warnings {
			fmt.Fprintf(&b, "  - %s\n", oneLine(wn))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var gateIcon = map[string]string{gate.Pass: "✅", gate.Fail: "❌", gate.Inconclusive: "⚠️"}

// GateMarkdown writes the result for a pull-request comment or a CI job
// summary ($GITHUB_STEP_SUMMARY): a headline, one table row per check with
// its numbers, the reasons, and the warnings.
func GateMarkdown(w io.Writer, r *gate.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s assay gate: %s\n\n", gateIcon[r.Verdict], r.Verdict)
	// The rules a change touched come first: a reviewer must see that a
	// pull request loosened its own gate before any number.
	if len(r.RuleChanges) > 0 {
		fmt.Fprintf(&b, "**%s.**\n\n", mdText(strings.ToUpper(gateRuleChangesHead(r)[:1])+gateRuleChangesHead(r)[1:]))
		for _, c := range r.RuleChanges {
			icon := "ℹ️"
			if gateRuleChangeFails(r, c) {
				icon = gateIcon[gate.Fail]
			} else if c.Relaxed {
				icon = gateIcon[gate.Inconclusive]
			}
			fmt.Fprintf(&b, "- %s %s\n", icon, mdText(c.String()))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s · %s cases compared · α = %s", mdText(gateTally(r)), units.Count(r.Cases), units.Plain(r.Alpha))
	if r.Strict {
		b.WriteString(" · strict (a check must show it is within its limit)")
	}
	b.WriteString("\n\n" + mdText("A"+strings.TrimPrefix(gateDecision(r), "a")) + ".\n\n")
	fmt.Fprintf(&b, "- **Candidate:** %s\n", mdText(gateSide(r.Candidate)))
	fmt.Fprintf(&b, "- **Baseline:** %s\n", mdText(gateSide(r.Baseline)))
	fmt.Fprintf(&b, "- **Rules:** %s\n\n", mdText(gateRules(r)))

	fmt.Fprintf(&b, "| Target | Rule | Verdict | Baseline | Candidate | Δ | One-sided %s bounds | p (fail, Holm) | n | Allowed |\n", units.PlainPct(1-r.Alpha))
	b.WriteString("|---|---|---|---:|---:|---:|---|---:|---:|---:|\n")
	for _, t := range r.Targets {
		if t.Missing {
			fmt.Fprintf(&b, "| %s | %s | %s **%s** | | | | | | %s | |\n", mdText(t.Name), "target measured", gateIcon[gate.Fail], gate.Fail, units.Count(t.Cases))
			continue
		}
		for _, c := range t.Checks {
			allowed := gateCell(gate.FormatAmount(c.Metric, float64(c.Threshold)))
			ciCell := gateCell(gate.FormatInterval(c.Metric, c.Bounds, c.Kind == "worsening"))
			if c.Kind != "worsening" {
				op := "≥ "
				if c.Kind == "ceiling" {
					op = "≤ "
				}
				allowed = op + gateCell(gate.FormatValue(c.Metric, float64(c.Threshold)))
			}
			fmt.Fprintf(&b, "| %s | %s | %s %s | %s | %s | %s | %s | %s | %s | %s |\n",
				mdText(t.Name), mdText(c.Rule), gateIcon[c.Verdict], gateMDVerdict(c.Verdict),
				gateCell(gate.FormatValue(c.Metric, float64(c.Baseline))), gateCell(gate.FormatValue(c.Metric, float64(c.Candidate))),
				gateCell(gate.FormatDelta(c.Metric, float64(c.Delta))), ciCell, gateCell(units.PValue(float64(c.PFailAdjusted))), units.Count(c.N), allowed)
		}
	}
	b.WriteString("\n")
	// Why: what failed or is inconclusive in the open, what passed folded.
	var open, folded []string
	for _, t := range r.Targets {
		if t.Missing {
			open = append(open, fmt.Sprintf("- %s **%s** · %s: %s", gateIcon[gate.Fail], gate.Fail, mdText(t.Name), mdText(t.Reason)))
		}
		for _, c := range t.Checks {
			line := fmt.Sprintf("- %s **%s** · %s · %s: %s", gateIcon[c.Verdict], c.Verdict, mdText(t.Name), mdText(c.Rule), mdText(c.Reason))
			if c.Verdict == gate.Pass {
				folded = append(folded, line)
			} else {
				open = append(open, line)
			}
		}
	}
	if len(open) > 0 {
		b.WriteString(strings.Join(open, "\n") + "\n\n")
	}
	if len(folded) > 0 {
		b.WriteString("<details><summary>Passed checks</summary>\n\n" + strings.Join(folded, "\n") + "\n\n</details>\n\n")
	}
	var fp []string
	for _, t := range r.Targets {
		if t.Outputs > 0 {
			fp = append(fp, fmt.Sprintf("- %s: %s of %s outputs identical to the baseline", mdText(t.Name), units.Count(t.IdenticalOutputs), units.Count(t.Outputs)))
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("**Warnings**\n\n")
		for _, wn := range r.Warnings {
			fmt.Fprintf(&b, "- ⚠️ %s\n", mdText(wn))
		}
		b.WriteString("\n")
	}
	if len(fp) > 0 {
		b.WriteString(strings.Join(fp, "\n") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// gateCell escapes one of our own formatted numbers: "$0.0012 … $0.0015"
// would open GitHub's inline math, and "<0.0001" is written as text.
func gateCell(s string) string {
	return strings.NewReplacer("$", `\$`, "<", "&lt;").Replace(s)
}

func gateMDVerdict(v string) string {
	if v == gate.Fail {
		return "**fail**"
	}
	return v
}

// GateJUnit writes the result as JUnit XML: one <testsuite> per target, one
// <testcase> per check; a failed check carries a <failure>, an inconclusive
// one is <skipped> with its reason (it does not fail the build), and every
// check's reason is in <system-out>. Text is kept to one line; characters
// XML 1.0 cannot carry are written as \xNN.
func GateJUnit(w io.Writer, r *gate.Result) error {
	skipped := 0
	doc := junitSuites{Name: "assay gate", Skipped: &skipped}
	props := []junitProperty{
		{Name: "candidate", Value: oneLine(gateSide(r.Candidate))},
		{Name: "baseline", Value: oneLine(gateSide(r.Baseline))},
		{Name: "alpha", Value: fmt.Sprint(r.Alpha)},
		{Name: "strict", Value: fmt.Sprint(r.Strict)},
		{Name: "checks_adjusted", Value: fmt.Sprint(r.Family)},
		{Name: "family_wise_false_fail_rate", Value: fmt.Sprint(r.FalseFailRate)},
		{Name: "decision", Value: gateDecision(r)},
		{Name: "cases", Value: fmt.Sprint(r.Cases)},
	}
	for i, wn := range r.Warnings {
		props = append(props, junitProperty{Name: fmt.Sprintf("warning.%d", i+1), Value: oneLine(wn)})
	}
	props = append(props, junitProperty{Name: "rules_from", Value: r.RulesFrom}, junitProperty{Name: "rules_hash", Value: r.RulesHash})
	var suites []junitSuite
	if len(r.RuleChanges) > 0 {
		s := junitSuite{Name: "gate: rules", Properties: props}
		for _, c := range r.RuleChanges {
			jc := junitCase{Name: "rule " + oneLine(c.Rule), Classname: "assay.gate.rules", SystemOut: oneLine(c.String())}
			if gateRuleChangeFails(r, c) {
				msg := oneLine(c.String() + ": " + gateRuleChangesHead(r))
				jc.Failure = &junitFailure{Message: msg, Type: "relaxed_rule", Body: msg}
			}
			s.Cases = append(s.Cases, jc)
		}
		suites = append(suites, s)
	}
	for _, t := range r.Targets {
		s := junitSuite{Name: "gate: " + oneLine(t.Name), Properties: props}
		class := "assay.gate." + oneLine(t.Name)
		if t.Missing {
			s.Cases = append(s.Cases, junitCase{Name: "target measured", Classname: class,
				Failure: &junitFailure{Message: oneLine(t.Reason), Type: "missing_target", Body: oneLine(t.Reason)}})
		}
		for _, c := range t.Checks {
			jc := junitCase{Name: oneLine(c.Rule), Classname: class, SystemOut: oneLine(c.Reason)}
			switch c.Verdict {
			case gate.Fail:
				jc.Failure = &junitFailure{Message: oneLine(c.Reason), Type: "regression", Body: oneLine(c.Reason)}
			case gate.Inconclusive:
				jc.Skipped = &junitSkipped{Message: "inconclusive: " + oneLine(c.Reason)}
			}
			s.Cases = append(s.Cases, jc)
		}
		suites = append(suites, s)
	}
	for _, s := range suites {
		for _, jc := range s.Cases {
			s.Tests++
			if jc.Failure != nil {
				s.Failures++
			}
			if jc.Skipped != nil {
				s.Skipped++
			}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	return writeJUnit(w, doc)
}
