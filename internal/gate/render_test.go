package gate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"unicode"
)

// hostileNames are target names, tag values and fingerprints a baseline
// file or a provider could carry.
var hostileNames = []string{
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

// hostileResult gates snapshots whose target names, tag values and
// fingerprints are hostile, with one failing, one inconclusive and one
// passing check per target, a missing target and warnings.
func hostileResult(t *testing.T) *Result {
	t.Helper()
	n := 100
	tags := make([]map[string]string, n)
	for i := range tags {
		tags[i] = map[string]string{"tier": hostileNames[i%len(hostileNames)]}
	}
	var bts, cts []*Target
	for i, name := range hostileNames[:4] {
		bt := testTarget(name, passes(n, 80), nil, nil, nil, "b")
		ct := testTarget(name, passes(n, 60), nil, nil, nil, "c")
		ct.Fingerprints = []Fingerprint{{Model: hostileNames[(i+5)%len(hostileNames)], System: "<b>fp</b>", Count: n}}
		bts, cts = append(bts, bt), append(cts, ct)
	}
	bts = append(bts, testTarget(hostileNames[7], passes(n, 80), nil, nil, nil, "b"))
	base := testSnap("b", "sha256:d", 1, ids(n), tags, bts...)
	cand := testSnap("c", "sha256:d", 1, ids(n), tags, cts...)
	cand.Source = hostileNames[0] + ".json"
	rs, err := RulesFromFlags([]string{
		"primary max_drop=5%",
		"primary[tier=" + strings.ReplaceAll(hostileNames[2], "]", "") + "] max_drop=50%",
		"primary min=0.7",
		"cost_per_case max=$1",
	}, []string{"correct"}, []string{"tier"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Evaluate(base, cand, rs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The Markdown summary cannot be made to add HTML, links, images, table
// cells, headings or mentions by what came from data, and shows it all.
func TestMarkdownEscapesHostileText(t *testing.T) {
	res := hostileResult(t)
	var b bytes.Buffer
	if err := Markdown(&b, res); err != nil {
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
			c := len(mdCells(line))
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
	for _, h := range hostileNames[:4] {
		if !strings.Contains(doc, mdText(h)) {
			t.Errorf("target %q is not shown escaped", h)
		}
	}
	if !strings.Contains(doc, "| "+mdText(hostileNames[7])+" | target measured | ❌ **fail** |") {
		t.Errorf("the missing target's row is missing:\n%s", doc)
	}
	// $…$ would be GitHub math: every dollar is escaped.
	if strings.Contains(strings.ReplaceAll(doc, `\$`, ""), "$") {
		t.Errorf("an unescaped $ in:\n%s", doc)
	}
}

// mdCells splits a table row on unescaped pipes.
func mdCells(row string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row):
			cur.WriteByte(row[i])
			cur.WriteByte(row[i+1])
			i++
		case row[i] == '|':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	out = append(out, cur.String())
	return out[1 : len(out)-1]
}

// The JUnit XML parses, counts what it holds, and carries hostile names as
// text.
func TestJUnitParsesWithHostileText(t *testing.T) {
	res := hostileResult(t)
	var b bytes.Buffer
	if err := JUnit(&b, res); err != nil {
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
	if doc.Suites[0].Name != "gate: "+hostileNames[0] || doc.Suites[1].Name != "gate: "+hostileNames[1] {
		t.Errorf("suite names %q, %q", doc.Suites[0].Name, doc.Suites[1].Name)
	}
	if s := b.String(); strings.Contains(s, "<script>") || strings.Contains(s, "<injected/>") || strings.ContainsRune(s, 0x1b) || strings.ContainsRune(s, 0) {
		t.Errorf("raw markup or control characters in the XML")
	}
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil && !strings.Contains(c.Failure.Message, "confirmed drop") && !strings.Contains(c.Failure.Message, "below the floor") {
			t.Errorf("failure message %q does not say why", c.Failure.Message)
		}
		if c.Skipped != nil && !strings.HasPrefix(c.Skipped.Message, "inconclusive: ") {
			t.Errorf("skipped %q", c.Skipped.Message)
		}
	}
}

// The JSON output parses; undefined numbers are null, never NaN.
func TestJSONAndText(t *testing.T) {
	res := hostileResult(t)
	var b bytes.Buffer
	if err := JSON(&b, res); err != nil {
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
	if doc.Verdict != Fail || doc.Targets[0].Name != hostileNames[0] {
		t.Errorf("json %+v", doc)
	}
	for _, c := range doc.Targets[0].Checks {
		if strings.Contains(c.Rule, "min=") && c.PValue != nil {
			t.Errorf("a floor has a p-value %v; want null", *c.PValue)
		}
	}
	b.Reset()
	if err := Text(&b, res); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsFunc(b.String(), func(r rune) bool { return (unicode.IsControl(r) && r != '\n') || isBidiControl(r) }) {
		t.Errorf("text output carries control characters")
	}
	if !strings.HasPrefix(b.String(), "assay gate: FAIL (") {
		t.Errorf("text starts %q", b.String()[:40])
	}
}
