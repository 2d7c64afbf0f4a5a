package report

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
)

// What a CI system reads back from the JUnit file.
type readSuites struct {
	XMLName  xml.Name    `xml:"testsuites"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Suites   []readSuite `xml:"testsuite"`
}

type readSuite struct {
	Name       string `xml:"name,attr"`
	Tests      int    `xml:"tests,attr"`
	Failures   int    `xml:"failures,attr"`
	Time       string `xml:"time,attr"`
	Properties []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
	Cases []readCase `xml:"testcase"`
}

type readCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Body    string `xml:",chardata"`
	} `xml:"failure"`
	SystemOut *string `xml:"system-out"`
}

// junitRows are results for the fixture's three targets: two cases each
// plus a second epoch, with hostile outputs and characters XML 1.0 cannot
// carry.
func junitRows(names [3]string) []analysis.ResultRow {
	var rows []analysis.ResultRow
	for i, n := range names {
		rows = append(rows,
			analysis.ResultRow{Target: n, CaseID: "gsm8k-0001", Epoch: 1, Pass: true, Shape: "pass", Raw: "A: 18", LatencyMS: 812},
			analysis.ResultRow{Target: n, CaseID: "gsm8k-0002" + hostile[i], Epoch: 1, Pass: false, Shape: "silent", Kind: "wrong",
				Reason: "expected 42, got 41 " + hostile[(i+1)%3], Expected: "42",
				Raw: "A: 41\x00\x01\x08\x0b\x0c\x1b[2J\ufffe ]]> " + hostile[(i+2)%3] + "\r\nnext line", LatencyMS: 1530.4},
			analysis.ResultRow{Target: n, CaseID: "gsm8k-0001", Epoch: 2, Pass: i != 1, Shape: map[bool]string{true: "pass", false: "loud"}[i != 1],
				Kind: map[bool]string{true: "", false: "timeout"}[i != 1], LatencyMS: 60000},
		)
	}
	return rows
}

func TestJUnit(t *testing.T) {
	rep := hostileReport()
	rep.Run.Epochs = 2
	names := [3]string{rep.Targets[0].Name, rep.Targets[1].Name, rep.Targets[2].Name}
	rows := junitRows(names)
	// A target only the rows name gets a suite too, after the report's.
	rows = append(rows, analysis.ResultRow{Target: "extra", CaseID: "c", Epoch: 1, Pass: true, Shape: "pass"})
	var b bytes.Buffer
	if err := JUnit(&b, rep, rows); err != nil {
		t.Fatal(err)
	}
	out := b.Bytes()
	// Nothing XML 1.0 forbids reaches the file.
	for i, c := range out {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			t.Fatalf("byte %#x at %d is not allowed in XML 1.0", c, i)
		}
	}
	if bytes.Contains(out, []byte("\uFFFE")) {
		t.Fatalf("U+FFFE is not allowed in XML 1.0")
	}
	var got readSuites
	if err := xml.Unmarshal(out, &got); err != nil {
		t.Fatalf("the JUnit file does not parse: %v\n%s", err, out)
	}
	if got.Tests != 10 || got.Failures != 4 {
		t.Errorf("testsuites: %d tests, %d failures; want 10 and 4", got.Tests, got.Failures)
	}
	if len(got.Suites) != 4 {
		t.Fatalf("%d suites, want one per target (4)", len(got.Suites))
	}
	for i, s := range got.Suites[:3] {
		if s.Name != names[i] {
			t.Errorf("suite %d is %q, want %q (the report's target order)", i, s.Name, names[i])
		}
		if s.Tests != 3 || len(s.Cases) != 3 {
			t.Errorf("suite %q: tests=%d with %d cases, want 3", s.Name, s.Tests, len(s.Cases))
		}
		wantFail := 1
		if i == 1 {
			wantFail = 2
		}
		if s.Failures != wantFail {
			t.Errorf("suite %q: failures=%d, want %d", s.Name, s.Failures, wantFail)
		}
		props := map[string]string{}
		for _, p := range s.Properties {
			props[p.Name] = p.Value
		}
		if props["dataset_hash"] != rep.Run.DatasetHash || props["run"] != rep.Run.ID {
			t.Errorf("suite %q properties %v lack the run and its hashes", s.Name, props)
		}
		// One test case per case × epoch, named so they differ.
		if s.Cases[0].Name != "gsm8k-0001 (epoch 1)" || s.Cases[2].Name != "gsm8k-0001 (epoch 2)" {
			t.Errorf("case names %q, %q do not tell the epochs apart", s.Cases[0].Name, s.Cases[2].Name)
		}
		if s.Cases[1].Name != "gsm8k-0002"+hostile[i]+" (epoch 1)" {
			t.Errorf("hostile case ID not kept as text: %q", s.Cases[1].Name)
		}
		if s.Cases[0].Failure != nil {
			t.Errorf("a passing result has a failure element")
		}
		if s.Cases[0].Time != "0.812" || s.Cases[1].Time != "1.530" {
			t.Errorf("times %q, %q; want seconds 0.812, 1.530", s.Cases[0].Time, s.Cases[1].Time)
		}
		f := s.Cases[1].Failure
		if f == nil {
			t.Fatalf("suite %q: the failed result has no failure element", s.Name)
		}
		if f.Type != "wrong" || !strings.HasPrefix(f.Message, "silent: wrong: expected 42, got 41 "+hostile[(i+1)%3]) {
			t.Errorf("failure type %q message %q", f.Type, f.Message)
		}
		for _, want := range []string{"shape: silent", "kind: wrong", "reason: expected 42, got 41", "expected: 42"} {
			if !strings.Contains(f.Body, want) {
				t.Errorf("failure body %q lacks %q", f.Body, want)
			}
		}
		so := s.Cases[1].SystemOut
		wantOut := `A: 41\x00\x01\x08\x0b\x0c\x1b[2J\ufffe ]]> ` + hostile[(i+2)%3] + "\nnext line"
		if so == nil || *so != wantOut {
			t.Errorf("system-out = %q, want the output with the forbidden characters shown: %q", deref(so), wantOut)
		}
	}
	if tc := got.Suites[1].Cases[2]; tc.Failure == nil || tc.Failure.Type != "timeout" || !strings.HasPrefix(tc.Failure.Message, "loud: timeout") {
		t.Errorf("the timed-out result: %+v", tc.Failure)
	}
	if got.Suites[3].Name != "extra" || len(got.Suites[3].Cases) != 1 {
		t.Errorf("the target only rows name: %+v", got.Suites[3])
	}
	// A second, independent XML parser (expat, through Python) accepts it.
	if py, err := exec.LookPath("python3"); err == nil {
		path := filepath.Join(t.TempDir(), "junit.xml")
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(py, "-c", "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); print(r.tag, len(r.findall('testsuite/testcase')))", path)
		res, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(res)) != "testsuites 10" {
			t.Errorf("python's XML parser: %v: %s", err, res)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

// One epoch: test cases are named by the case ID alone.
func TestJUnitSingleEpochNames(t *testing.T) {
	rep := smallReport()
	rows := []analysis.ResultRow{
		{Target: "candidate-a", CaseID: "7", Epoch: 1, Pass: true},
		{Target: "candidate-b", CaseID: "7", Epoch: 1, Pass: false, Shape: "loud", Kind: "empty"},
	}
	var b bytes.Buffer
	if err := JUnit(&b, rep, rows); err != nil {
		t.Fatal(err)
	}
	var got readSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Suites) != 2 || got.Suites[0].Cases[0].Name != "7" || got.Suites[1].Cases[0].Name != "7" {
		t.Fatalf("suites %+v", got.Suites)
	}
	if got.Suites[0].Cases[0].Classname != "ticket-triage.candidate-a" {
		t.Errorf("classname %q, want spec.target", got.Suites[0].Cases[0].Classname)
	}
	if f := got.Suites[1].Cases[0].Failure; f == nil || f.Message != "loud: empty" {
		t.Errorf("failure %+v", f)
	}
}

func FuzzJUnit(f *testing.F) {
	for _, s := range []string{hostScript, hostImg, hostTextarea, "]]>", "\x00\x1b\ufffe\uffff", "a\r\nb\rc", "\xff\xfe", "&amp;&#0;"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, id, raw string) {
		rep := &analysis.Report{Run: analysis.RunInfo{ID: id, Spec: id}, Targets: []analysis.Target{{Name: id}}}
		rows := []analysis.ResultRow{{Target: id, CaseID: id, Epoch: 1, Kind: id, Reason: raw, Raw: raw, Expected: id}}
		var b bytes.Buffer
		if err := JUnit(&b, rep, rows); err != nil {
			t.Fatal(err)
		}
		var got readSuites
		if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("unparseable for id %q raw %q: %v", id, raw, err)
		}
		if len(got.Suites) != 1 || len(got.Suites[0].Cases) != 1 {
			t.Fatalf("suites %+v", got.Suites)
		}
		c := got.Suites[0].Cases[0]
		if c.Name != visible(id, true) {
			t.Fatalf("case name %q, want %q", c.Name, visible(id, true))
		}
		if want := visible(raw, true); raw != "" && deref(c.SystemOut) != want {
			t.Fatalf("system-out %q, want %q", deref(c.SystemOut), want)
		}
		if c.Failure == nil {
			t.Fatalf("a failed row has no failure element")
		}
	})
}
