package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/runview"
)

// gateHostileNames are target names, tag values and fingerprints a
// baseline file or a provider could carry.
var gateHostileNames = []string{
	"<script>alert(1)</script>",
	"evil|cell|break",
	"[click](https://evil.example)",
	"![img](x.png)",
	"@someone",
	"# heading",
	"`code` **bold** _it_ ~~s~~",
	"line\nbreak\r\nand\x00nul\x1b[31m",
	"]]><injected/>",
	"\u202eevil\u2066",
	"&amp; &lt;",
	"1. list",
	"- item",
	"$x^2$",
}

// gateSnap is a snapshot of the cases c1…cn with the tags and targets
// given, one epoch, scorer "correct".
func gateSnap(id string, tags []map[string]string, targets ...*runview.Target) *runview.View {
	s := &runview.View{
		Run: runview.RunInfo{ID: id, Spec: "test", SpecHash: "sha256:spec", DatasetHash: "sha256:d", PromptHash: "sha256:prompt",
			ScorersHash: "sha256:scorers", Epochs: 1, Scoring: 1, Created: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		Source: "run " + id, Scorers: []string{"correct"}, Primary: "correct", Epochs: 1, Targets: targets,
	}
	for i := range tags {
		s.AddCase(fmt.Sprintf("c%d", i+1), tags[i])
	}
	return s
}

// gateTarget is a target with a result for each of n cases: the first
// passed pass "correct", the others fail silently; 0.001 USD and 100 ms
// each; outputs "out-<j>-<salt>".
func gateTarget(name string, n, passed int, salt string) *runview.Target {
	t := &runview.Target{Name: name, Pass: map[string][]int8{"correct": make([]int8, n)}, Shape: make([]byte, n), Kind: make([]int32, n),
		CostUSD: make([]float64, n), LatencyMS: make([]float64, n), OutputHash: make([]uint64, n),
		Fingerprints: []runview.Fingerprint{{Model: "m-1", System: "fp_1", Count: n}}}
	for j := range n {
		if j < passed {
			t.Pass["correct"][j], t.Shape[j] = 1, runview.ShapePass
		} else {
			t.Shape[j] = runview.ShapeSilent
			t.SetKind(j, "wrong")
		}
		t.CostUSD[j], t.LatencyMS[j] = 0.001, 100
		t.OutputHash[j] = runview.OutputSum(fmt.Sprintf("out-%d-%s", j, salt))
	}
	return t
}

// hostileGateResult gates snapshots whose target names, tag values and
// fingerprints are hostile, with one failing, one inconclusive and one
// passing check per target, a missing target and warnings.
func hostileGateResult(t *testing.T) *gate.Result {
	t.Helper()
	names := gateHostileNames
	n := 100
	tags := make([]map[string]string, n)
	for i := range tags {
		tags[i] = map[string]string{"tier": names[i%len(names)]}
	}
	var bts, cts []*runview.Target
	for i, name := range names[:4] {
		bt := gateTarget(name, n, 80, "b")
		ct := gateTarget(name, n, 60, "c")
		ct.Fingerprints = []runview.Fingerprint{{Model: names[(i+5)%len(names)], System: "<b>fp</b>", Count: n}}
		bts, cts = append(bts, bt), append(cts, ct)
	}
	bts = append(bts, gateTarget(names[7], n, 80, "b"))
	base := gateSnap("b", tags, bts...)
	cand := gateSnap("c", tags, cts...)
	cand.Source = names[0] + ".json"
	rs, err := gate.RulesFromFlags([]string{
		"primary max_drop=5%",
		"primary[tier=" + strings.ReplaceAll(names[2], "]", "") + "] max_drop=50%",
		"primary min=0.7",
		"cost_per_case max=$1",
	}, []string{"correct"}, []string{"tier"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := gate.Evaluate(base, cand, rs, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The gate's Markdown summary cannot be made to add HTML, links, images,
// table cells, headings or mentions by what came from data, and shows it
// all.
func TestGateMarkdownEscapesHostileText(t *testing.T) {
	res := hostileGateResult(t)
	var b bytes.Buffer
	if err := GateMarkdown(&b, res); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	ours := map[string]bool{"<details>": true, "<summary>": true, "</summary>": true, "</details>": true}
	cols := 0
	for n, line := range strings.Split(doc, "\n") {
		for i := strings.IndexByte(line, '<'); i >= 0; {
			rest := line[i:]
			j := strings.IndexByte(rest, '>')
			if j < 0 {
				t.Errorf("line %d: a bare <: %q", n+1, line)
				break
			}
			if !ours[rest[:j+1]] {
				t.Errorf("line %d: raw HTML %q", n+1, rest[:j+1])
			}
			k := strings.IndexByte(line[i+1:], '<')
			if k < 0 {
				break
			}
			i += 1 + k
		}
		if strings.Contains(line, "](") {
			t.Errorf("line %d: a link or image: %q", n+1, line)
		}
		if strings.HasPrefix(line, "|") {
			c := len(cells(line))
			if cols == 0 {
				cols = c
			} else if c != cols {
				t.Errorf("line %d has %d cells, the table %d: %q", n+1, c, cols, line)
			}
		} else {
			cols = 0
		}
		if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "### ") {
			t.Errorf("line %d: a heading from data: %q", n+1, line)
		}
		if strings.ContainsFunc(line, func(r rune) bool { return unicode.IsControl(r) || isBidiControl(r) }) {
			t.Errorf("line %d: control characters: %q", n+1, line)
		}
	}
	if strings.Contains(doc, "@someone") {
		t.Errorf("a target name would mention someone")
	}
	for _, h := range gateHostileNames[:4] {
		if !strings.Contains(doc, mdText(h)) {
			t.Errorf("target %q is not shown escaped", h)
		}
	}
	if !strings.Contains(doc, "| "+mdText(gateHostileNames[7])+" | target measured | ❌ **fail** |") {
		t.Errorf("the missing target's row is missing:\n%s", doc)
	}
	// $…$ would be GitHub math: every dollar is escaped.
	if strings.Contains(strings.ReplaceAll(doc, `\$`, ""), "$") {
		t.Errorf("an unescaped $ in:\n%s", doc)
	}
}

// The gate's JUnit XML parses, counts what it holds, and carries hostile
// names as text.
func TestGateJUnitParsesWithHostileText(t *testing.T) {
	res := hostileGateResult(t)
	var b bytes.Buffer
	if err := GateJUnit(&b, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Tests int    `xml:"tests,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, b.String())
	}
	if len(doc.Suites) != len(res.Targets) || doc.Tests != res.Failed+res.Inconclusive+res.Passed || doc.Failures != res.Failed || doc.Skipped != res.Inconclusive {
		t.Errorf("counts: %d suites, %d tests, %d failures, %d skipped; result %d failed (with the missing target) %d inconclusive %d passed",
			len(doc.Suites), doc.Tests, doc.Failures, doc.Skipped, res.Failed, res.Inconclusive, res.Passed)
	}
	if res.Failed == 0 || res.Inconclusive == 0 || res.Passed == 0 {
		t.Errorf("the hostile result should hold every verdict: %d/%d/%d", res.Failed, res.Inconclusive, res.Passed)
	}
	if doc.Suites[0].Name != "gate: "+gateHostileNames[0] || doc.Suites[1].Name != "gate: "+gateHostileNames[1] {
		t.Errorf("suite names %q, %q", doc.Suites[0].Name, doc.Suites[1].Name)
	}
	if s := b.String(); strings.Contains(s, "<script>") || strings.Contains(s, "<injected/>") || strings.ContainsRune(s, 0x1b) || strings.ContainsRune(s, 0) {
		t.Errorf("raw markup or control characters in the XML")
	}
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil && !strings.Contains(c.Failure.Message, "more than the 4.0 pts allowed") && !strings.Contains(c.Failure.Message, "below the floor") {
			t.Errorf("failure message %q does not say why", c.Failure.Message)
		}
		if c.Skipped != nil && !strings.HasPrefix(c.Skipped.Message, "inconclusive: ") {
			t.Errorf("skipped %q", c.Skipped.Message)
		}
	}
}

// The gate's JSON output parses; undefined numbers are null, never NaN.
// Its text output carries no control characters.
func TestGateJSONAndText(t *testing.T) {
	res := hostileGateResult(t)
	var b bytes.Buffer
	if err := GateJSON(&b, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Verdict string
		Targets []struct {
			Name   string
			Checks []struct {
				Rule, Verdict string
				PValue        *float64 `json:"p_value"`
				N             int
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if doc.Verdict != gate.Fail || doc.Targets[0].Name != gateHostileNames[0] {
		t.Errorf("json %+v", doc)
	}
	for _, c := range doc.Targets[0].Checks {
		if strings.Contains(c.Rule, "min=") && c.PValue != nil {
			t.Errorf("a floor has a p-value %v; want null", *c.PValue)
		}
	}
	b.Reset()
	if err := GateText(&b, res); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsFunc(b.String(), func(r rune) bool { return (unicode.IsControl(r) && r != '\n') || isBidiControl(r) }) {
		t.Errorf("text output carries control characters")
	}
	if !strings.HasPrefix(b.String(), "assay gate: FAIL (") {
		t.Errorf("text starts %q", b.String()[:40])
	}
	// The run says what it controls: Holm over every check that could be
	// tested (a check with no case is not), at most alpha false fails.
	tested := 0
	for _, tr := range res.Targets {
		for _, c := range tr.Checks {
			if c.N > 0 {
				tested++
			}
		}
	}
	want := fmt.Sprintf("Holm over the run's %d checks: a run with no limit truly crossed fails with at most 5%% chance", tested)
	if tested < 2 || !strings.Contains(b.String(), want) {
		t.Errorf("text does not say %q:\n%s", want, b.String())
	}
	var md bytes.Buffer
	if err := GateMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "A check fails when") || !strings.Contains(md.String(), want) || !strings.Contains(md.String(), "| One-sided 95% bounds | p (fail, Holm) |") {
		t.Errorf("markdown does not say %q or lacks the bounds column:\n%s", want, md.String())
	}
}
