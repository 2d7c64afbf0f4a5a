package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/assay-eval/assay/internal/analysis"
)

// diffWithOutputs is a diff whose one flipped case has these outputs, and
// whose model fingerprint and case ID are hostile too.
func diffWithOutputs(before, after string) *analysis.RunDiff {
	return &analysis.RunDiff{
		Before:   analysis.RunInfo{ID: "a", Spec: "s"},
		After:    analysis.RunInfo{ID: "b", Spec: "s"},
		Versions: []analysis.VersionChange{{Name: "spec_hash", Before: "sha256:1", After: "sha256:2"}},
		Spec:     &analysis.SpecDiff{Prompt: []analysis.FieldChange{{Field: "prompt.user", Before: `"` + before + `"`, After: `"` + after + `"`}}},
		Cases:    analysis.CaseDiff{Added: 1, AddedIDs: []string{after}},
		Models: []analysis.TargetModels{{Target: "t", Before: []analysis.ModelCount{{Model: "m", Fingerprint: before, Results: 1}},
			After: []analysis.ModelCount{{Model: after, Results: 1}}, Changed: true}},
		Flips: []analysis.TargetFlips{{Target: "t", Scorer: "correct", Paired: 1, PassToFail: 1,
			Cases: []analysis.FlippedCase{{CaseID: before, Epoch: 1, Direction: analysis.PassToFail, Expected: after, Before: before, After: after}}}},
	}
}

// safeForTerminal reports the first rune a terminal would act on rather
// than show: control characters other than the newline, and bidirectional
// controls that reorder what is shown.
func safeForTerminal(s string) (rune, bool) {
	for _, r := range s {
		if r == '\n' {
			continue
		}
		if unicode.IsControl(r) || isBidiControl(r) || r == 0x2028 || r == 0x2029 {
			return r, false
		}
	}
	return 0, true
}

func TestRunDiffTextEscapes(t *testing.T) {
	hostile := "\x1b[2J\x1b]0;title\x07line1\r\nline2\u202eevil\u2028\x00\xff"
	var b bytes.Buffer
	if err := RunDiffText(&b, diffWithOutputs(hostile, "ok")); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if r, ok := safeForTerminal(out); !ok {
		t.Fatalf("rune %U reaches the terminal:\n%q", r, out)
	}
	if !strings.Contains(out, `before: "\x1b[2J\x1b]0;title\aline1\r\nline2\u202eevil\u2028\x00\xff"`) {
		t.Errorf("the output is not shown quoted with escapes:\n%s", out)
	}
}

func TestDiffQuotedKeepsBothEnds(t *testing.T) {
	s := strings.Repeat("a", 500) + "THE ANSWER"
	q := diffQuoted(s, 300)
	if !strings.HasSuffix(q, `THE ANSWER"`) || !strings.HasPrefix(q, `"aaaa`) || !strings.Contains(q, "… (210 characters) …") {
		t.Errorf("diffQuoted = %s", q)
	}
	if diffQuoted("short", 300) != `"short"` {
		t.Error("a short output is shown whole")
	}
}

// Whatever the outputs, the text and Markdown diffs and the drift text
// keep every control character off the terminal, and an output cannot add
// a line to the text diff.
func FuzzDiffRenderersEscape(f *testing.F) {
	f.Add("word", "other")
	f.Add("\x1b[31mred\x1b[0m", "line\nforged: line")
	f.Add("\u202eabc", "\r\x00\xff\xfe")
	f.Add(strings.Repeat("é\n", 400), "`````")
	f.Fuzz(func(t *testing.T, before, after string) {
		var ref, b bytes.Buffer
		if err := RunDiffText(&ref, diffWithOutputs("x", "y")); err != nil {
			t.Fatal(err)
		}
		if err := RunDiffText(&b, diffWithOutputs(before, after)); err != nil {
			t.Fatal(err)
		}
		if r, ok := safeForTerminal(b.String()); !ok {
			t.Fatalf("text diff: rune %U reaches the terminal", r)
		}
		if got, want := strings.Count(b.String(), "\n"), strings.Count(ref.String(), "\n"); got != want {
			t.Fatalf("text diff has %d lines, want %d: an output added lines\n%s", got, want, b.String())
		}
		b.Reset()
		if err := RunDiffMarkdown(&b, diffWithOutputs(before, after)); err != nil {
			t.Fatal(err)
		}
		if r, ok := safeForTerminal(strings.ReplaceAll(b.String(), "\t", " ")); !ok {
			t.Fatalf("markdown diff: rune %U passed through", r)
		}
		b.Reset()
		dr := &analysis.DriftReport{Targets: []analysis.TargetDrift{{Target: before, Verdict: analysis.DriftDrifted,
			Reasons: []string{after}, Notes: []string{before},
			Fingerprints: analysis.DriftFingerprints{Before: []analysis.ModelCount{{Model: before, Fingerprint: after}}}}},
			Drifted: []string{before}, Warnings: []string{after}, BeforeFile: after}
		if err := DriftText(&b, dr); err != nil {
			t.Fatal(err)
		}
		if r, ok := safeForTerminal(b.String()); !ok {
			t.Fatalf("drift text: rune %U reaches the terminal", r)
		}
	})
}

// From a baseline file, drift names the file (escaped) and shows a
// temperature the file does not record as unknown, never as unset.
func TestDriftFromBaselineFileRendering(t *testing.T) {
	zero := 0.0
	r := &analysis.DriftReport{Alpha: 0.05, Drifted: []string{},
		Before:     analysis.RunInfo{ID: "r1", Spec: "canary", Started: "2025-01-01T00:00:00Z"},
		After:      analysis.RunInfo{ID: "r2", Spec: "canary", Started: "2025-01-02T00:00:00Z"},
		BeforeFile: "ci/canary_baseline\x1b.json",
		Targets: []analysis.TargetDrift{
			{Target: "a", Verdict: analysis.DriftStable, Temperature: analysis.DriftTemperature{After: &zero, BeforeUnknown: true}},
			{Target: "b", Verdict: analysis.DriftStable, Temperature: analysis.DriftTemperature{BeforeUnknown: true}},
			{Target: "c", Verdict: analysis.DriftStable, Temperature: analysis.DriftTemperature{Before: &zero, After: &zero, Zero: true}},
		}}
	var text, md strings.Builder
	if err := DriftText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := DriftMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"before r1 (canary, started 2025-01-01T00:00:00Z), from the baseline file ci/canary_baseline", "unknown→0", "unknown→unset", "a       stable"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String()+md.String(), "\x1b") {
		t.Errorf("the file name's escape reached the output:\n%q\n%q", text.String(), md.String())
	}
	if strings.Contains(text.String(), "after  r2 (canary, started 2025-01-02T00:00:00Z),") {
		t.Errorf("the after run is not from a file:\n%s", text.String())
	}
	for _, want := range []string{"The before run is read from the baseline file ci/canary\\_baseline", "| unknown→0 |", "| 0 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}
