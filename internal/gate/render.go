package gate

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Formats are the output formats of the gate.
var Formats = []string{"text", "markdown", "json", "junit"}

// Render writes the result in one of Formats.
func Render(w io.Writer, format string, r *Result) error {
	switch format {
	case "text":
		return Text(w, r)
	case "markdown":
		return Markdown(w, r)
	case "json":
		return JSON(w, r)
	case "junit":
		return JUnit(w, r)
	}
	return fmt.Errorf("unknown gate format %q: formats are %s", format, strings.Join(Formats, ", "))
}

// JSON writes the result as indented JSON (undefined numbers are null).
func JSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func verdictWord(v string) string {
	switch v {
	case Fail:
		return "FAIL"
	case Inconclusive:
		return "INCONCLUSIVE"
	}
	return "PASS"
}

func tally(r *Result) string {
	return fmt.Sprintf("%d failed, %d inconclusive, %d passed", r.Failed, r.Inconclusive, r.Passed)
}

func sideText(s Side) string {
	parts := []string{}
	if s.Run.Spec != "" {
		parts = append(parts, "spec "+s.Run.Spec)
	}
	parts = append(parts, "dataset "+shortHash(s.Run.DatasetHash))
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

func rulesText(r *Result) string {
	s := strings.Join(r.Rules, "; ")
	if r.DefaultRules {
		s += " (the default: no rules configured)"
	}
	return s
}

// Text writes the result for a terminal or a CI log.
func Text(w io.Writer, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "assay gate: %s (%s)\n", verdictWord(r.Verdict), tally(r))
	fmt.Fprintf(&b, "  candidate: %s\n", visible(sideText(r.Candidate)))
	fmt.Fprintf(&b, "  baseline:  %s\n", visible(sideText(r.Baseline)))
	fmt.Fprintf(&b, "  %s cases compared · alpha %g", count(r.Cases), r.Alpha)
	if r.Strict {
		b.WriteString(" · strict")
	}
	fmt.Fprintf(&b, " · rules: %s\n", visible(rulesText(r)))
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "\ntarget %s: %s\n", visible(t.Name), verdictWord(t.Verdict))
		if t.Reason != "" {
			fmt.Fprintf(&b, "  %s\n", visible(t.Reason))
		}
		for _, c := range t.Checks {
			fmt.Fprintf(&b, "  %-12s %s\n", verdictWord(c.Verdict), visible(c.Rule))
			fmt.Fprintf(&b, "  %-12s %s\n", "", visible(c.Reason))
		}
		if t.Outputs > 0 {
			fmt.Fprintf(&b, "  outputs identical to the baseline: %s of %s\n", count(t.IdenticalOutputs), count(t.Outputs))
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		for _, wn := range r.Warnings {
			fmt.Fprintf(&b, "  - %s\n", visible(wn))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var mdIcon = map[string]string{Pass: "✅", Fail: "❌", Inconclusive: "⚠️"}

// Markdown writes the result for a pull-request comment or a CI job
// summary ($GITHUB_STEP_SUMMARY): a headline, one table row per check with
// its numbers, the reasons, and the warnings. Every value that came from a
// spec, a dataset, a baseline file or a provider is escaped.
func Markdown(w io.Writer, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s assay gate: %s\n\n", mdIcon[r.Verdict], r.Verdict)
	fmt.Fprintf(&b, "%s · %s cases compared · α = %g", mdText(tally(r)), count(r.Cases), r.Alpha)
	if r.Strict {
		b.WriteString(" · strict (point estimates decide)")
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "- **Candidate:** %s\n", mdText(sideText(r.Candidate)))
	fmt.Fprintf(&b, "- **Baseline:** %s\n", mdText(sideText(r.Baseline)))
	fmt.Fprintf(&b, "- **Rules:** %s\n\n", mdText(rulesText(r)))

	b.WriteString("| Target | Rule | Verdict | Baseline | Candidate | Δ | CI | p | n | Allowed |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---|---:|---:|---:|\n")
	for _, t := range r.Targets {
		if t.Missing {
			fmt.Fprintf(&b, "| %s | %s | %s **%s** | | | | | | %s | |\n", mdText(t.Name), "target measured", mdIcon[Fail], Fail, count(t.Cases))
			continue
		}
		for _, c := range t.Checks {
			allowed := mdCell(amount(c.Metric, float64(c.Threshold)))
			ciCell := mdCell(interval(c.Metric, c.CI, c.Kind == "worsening"))
			if c.Kind != "worsening" {
				op := "≥ "
				if c.Kind == "ceiling" {
					op = "≤ "
				}
				allowed = op + mdCell(value(c.Metric, float64(c.Threshold)))
			}
			fmt.Fprintf(&b, "| %s | %s | %s %s | %s | %s | %s | %s | %s | %s | %s |\n",
				mdText(t.Name), mdText(c.Rule), mdIcon[c.Verdict], mdVerdict(c.Verdict),
				mdCell(value(c.Metric, float64(c.Baseline))), mdCell(value(c.Metric, float64(c.Candidate))),
				mdCell(delta(c.Metric, float64(c.Delta))), ciCell, mdCell(pval(float64(c.PValue))), count(c.N), allowed)
		}
	}
	b.WriteString("\n")
	// Why: what failed or is inconclusive in the open, what passed folded.
	var open, folded []string
	for _, t := range r.Targets {
		if t.Missing {
			open = append(open, fmt.Sprintf("- %s **%s** · %s: %s", mdIcon[Fail], Fail, mdText(t.Name), mdText(t.Reason)))
		}
		for _, c := range t.Checks {
			line := fmt.Sprintf("- %s **%s** · %s · %s: %s", mdIcon[c.Verdict], c.Verdict, mdText(t.Name), mdText(c.Rule), mdText(c.Reason))
			if c.Verdict == Pass {
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
			fp = append(fp, fmt.Sprintf("- %s: %s of %s outputs identical to the baseline", mdText(t.Name), count(t.IdenticalOutputs), count(t.Outputs)))
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

// mdCell escapes one of our own formatted numbers: "$0.0012 … $0.0015"
// would open GitHub's inline math, and "<0.0001" is written as text.
func mdCell(s string) string {
	return strings.NewReplacer("$", `\$`, "<", "&lt;").Replace(s)
}

func mdVerdict(v string) string {
	if v == Fail {
		return "**fail**"
	}
	return v
}

// JUnit XML, the subset CI systems read: one <testsuite> per target, one
// <testcase> per check; a failed check carries a <failure>, an
// inconclusive one is <skipped> with its reason (it does not fail the
// build), and every check's reason is in <system-out>.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit writes the result as JUnit XML. All text is XML-escaped, and
// characters XML 1.0 cannot carry are written as \xNN.
func JUnit(w io.Writer, r *Result) error {
	doc := junitSuites{Name: "assay gate"}
	props := []junitProperty{
		{Name: "candidate", Value: visible(sideText(r.Candidate))},
		{Name: "baseline", Value: visible(sideText(r.Baseline))},
		{Name: "alpha", Value: fmt.Sprint(r.Alpha)},
		{Name: "strict", Value: fmt.Sprint(r.Strict)},
		{Name: "cases", Value: fmt.Sprint(r.Cases)},
	}
	for i, wn := range r.Warnings {
		props = append(props, junitProperty{Name: fmt.Sprintf("warning.%d", i+1), Value: visible(wn)})
	}
	for _, t := range r.Targets {
		s := junitSuite{Name: "gate: " + visible(t.Name), Properties: props}
		class := "assay.gate." + visible(t.Name)
		if t.Missing {
			s.Cases = append(s.Cases, junitCase{Name: "target measured", Classname: class,
				Failure: &junitFailure{Message: visible(t.Reason), Type: "missing_target", Body: visible(t.Reason)}})
		}
		for _, c := range t.Checks {
			jc := junitCase{Name: visible(c.Rule), Classname: class, SystemOut: visible(c.Reason)}
			switch c.Verdict {
			case Fail:
				jc.Failure = &junitFailure{Message: visible(c.Reason), Type: "regression", Body: visible(c.Reason)}
			case Inconclusive:
				jc.Skipped = &junitSkipped{Message: "inconclusive: " + visible(c.Reason)}
			}
			s.Cases = append(s.Cases, jc)
		}
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
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
