package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/analysis"
)

// JUnit XML, the subset CI systems read (Jenkins, GitLab, GitHub test
// reporters): <testsuites> of <testsuite> of <testcase>, with <failure>,
// <skipped> and <system-out>. The decision report (JUnit) and the gate
// (GateJUnit) write the same types; attributes one of them has no value for
// are left out.

type junitSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	// Skipped is written when set (the gate skips inconclusive checks; the
	// decision report skips nothing and leaves it out).
	Skipped *int         `xml:"skipped,attr,omitempty"`
	Time    string       `xml:"time,attr,omitempty"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr,omitempty"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
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
	Time      string        `xml:"time,attr,omitempty"`
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

// writeJUnit writes doc as an indented XML document.
func writeJUnit(w io.Writer, doc junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// JUnit writes the run as JUnit XML: one <testsuite> per target (in the
// report's order; targets only the rows name come after), one <testcase>
// per row — a case × target × epoch — named by the case ID (with the epoch
// when the run has several), a <failure> for each failed row carrying its
// shape, kind and reason, and the model's output in <system-out> so a CI
// system shows what the model said. All text is XML-escaped; characters
// XML 1.0 cannot carry (most control characters) are written as \xNN.
//
// rows are the run's results under the primary scorer; see
// analysis.ResultRow.
func JUnit(w io.Writer, rep *analysis.Report, rows []analysis.ResultRow) error {
	order := make([]string, 0, len(rep.Targets))
	byTarget := map[string][]analysis.ResultRow{}
	for _, t := range rep.Targets {
		if _, ok := byTarget[t.Name]; !ok {
			order = append(order, t.Name)
			byTarget[t.Name] = nil
		}
	}
	multiEpoch := rep.Run.Epochs > 1
	for _, r := range rows {
		if _, ok := byTarget[r.Target]; !ok {
			order = append(order, r.Target)
		}
		byTarget[r.Target] = append(byTarget[r.Target], r)
		if r.Epoch > 1 {
			multiEpoch = true
		}
	}
	spec := rep.Run.Spec
	if spec == "" {
		spec = "assay"
	}
	out := junitSuites{Name: xmlText("assay " + spec + " " + rep.Run.ID)}
	var total float64
	for _, name := range order {
		s := junitSuite{
			Name:      xmlText(name),
			Timestamp: xmlText(rep.Run.Started),
			Properties: []junitProperty{
				{"run", xmlText(rep.Run.ID)},
				{"spec", xmlText(rep.Run.Spec)},
				{"spec_hash", xmlText(rep.Run.SpecHash)},
				{"dataset_hash", xmlText(rep.Run.DatasetHash)},
				{"prompt_hash", xmlText(rep.Run.PromptHash)},
			},
		}
		if rep.Run.GitCommit != "" {
			s.Properties = append(s.Properties, junitProperty{"git_commit", xmlText(rep.Run.GitCommit)})
		}
		var suiteTime float64
		classname := xmlText(spec + "." + name)
		for _, r := range byTarget[name] {
			c := junitCase{
				Name:      xmlText(r.CaseID),
				Classname: classname,
				Time:      seconds(r.LatencyMS),
				SystemOut: xmlText(r.Raw),
			}
			if multiEpoch {
				c.Name = xmlText(fmt.Sprintf("%s (epoch %d)", r.CaseID, r.Epoch))
			}
			if !r.Pass {
				c.Failure = junitFailureOf(r)
				s.Failures++
			}
			s.Tests++
			suiteTime += r.LatencyMS
			s.Cases = append(s.Cases, c)
		}
		s.Time = seconds(suiteTime)
		total += suiteTime
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	out.Time = seconds(total)
	return writeJUnit(w, out)
}

func junitFailureOf(r analysis.ResultRow) *junitFailure {
	shape, kind := r.Shape, r.Kind
	if shape == "" {
		shape = "fail"
	}
	if kind == "" {
		kind = "fail"
	}
	msg := shape + ": " + kind
	if r.Reason != "" {
		msg += ": " + r.Reason
	}
	var body strings.Builder
	fmt.Fprintf(&body, "shape: %s\nkind: %s\n", shape, kind)
	if r.Reason != "" {
		fmt.Fprintf(&body, "reason: %s\n", r.Reason)
	}
	if r.Expected != "" {
		fmt.Fprintf(&body, "expected: %s\n", r.Expected)
	}
	return &junitFailure{Message: xmlText(truncate(msg, 500)), Type: xmlText(kind), Body: xmlText(body.String())}
}

// seconds formats milliseconds as JUnit's seconds.
func seconds(msec float64) string { return strconv.FormatFloat(msec/1000, 'f', 3, 64) }

// xmlText keeps the characters XML 1.0 can carry and writes the others as
// \xNN (encoding/xml would silently turn them into U+FFFD). Newlines and
// tabs stay; bidi controls are shown too.
func xmlText(s string) string { return visible(s, true) }
