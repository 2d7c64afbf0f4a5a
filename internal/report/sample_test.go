package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/sample"
)

// hostileName is a model name and stratum value as a trace could carry them.
const hostileName = "evil\x1b[2J<script>alert(1)</script>|*x*\u202e"

func traceScoresFixture() *sample.ScoreReport {
	return &sample.ScoreReport{
		RunID: "r1", Status: "complete", SampleID: "week48", Level: 0.95, Traces: 52,
		Since: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
		Scorers: []string{"json"}, Primary: "json", Skipped: []string{"exact: equals compares with an expected value, which a trace has none of"},
		Rates: []sample.Estimate{
			{Model: "alpha", Scorer: "json", N: 20, Population: 240, Rate: 0.85, Lo: 0.6277, Hi: 0.9501, Unweighted: 0.85},
			{Model: hostileName, Scorer: "json", N: 12, Population: 12, Rate: 0.75, Lo: 0.75, Hi: 0.75, Unweighted: 0.75},
		},
	}
}

func TestTraceScoresFormats(t *testing.T) {
	r := NewRegistry().TraceScores
	if got := strings.Join(r.Names(), ","); got != "text,markdown,json,html" {
		t.Errorf("formats %s", got)
	}
	rep := traceScoresFixture()
	render := func(f string) string {
		var b bytes.Buffer
		if err := r.Render(&b, f, rep); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	text := render("text")
	if !strings.Contains(strings.Join(strings.Fields(text), " "), "alpha json 85.0% [62.8, 95.0] 85.0% 20 240") {
		t.Errorf("text lacks alpha's row:\n%s", text)
	}
	for _, want := range []string{"skipped exact: equals compares", "window [2026-11-23T00:00:00Z, 2026-11-30T00:00:00Z), 52 traces scored"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	md := render("markdown")
	if !strings.Contains(md, "| alpha | json | 85.0% | [62.8, 95.0] | 85.0% | 20 | 240 |") {
		t.Errorf("markdown:\n%s", md)
	}
	page := render("html")
	for name, out := range map[string]string{"text": text, "markdown": md, "html": page} {
		if strings.Contains(out, "\x1b") || strings.Contains(out, "\u202e") || name != "text" && strings.Contains(out, "<script>") {
			t.Errorf("%s passes the hostileName model name on:\n%q", name, out)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;") || !strings.Contains(md, `\|`) {
		t.Errorf("the hostileName name is not shown escaped")
	}
	var back sample.ScoreReport
	if err := json.Unmarshal([]byte(render("json")), &back); err != nil || back.Rates[1].Model != hostileName {
		t.Errorf("json round trip: %v %+v", err, back)
	}
}

func TestSampleText(t *testing.T) {
	s := &record.Sample{ID: "week48", Seed: 7, By: []string{"route"}, Per: 2,
		Since:  time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC),
		Strata: []record.SampleStratum{{Key: "route=/a", Population: 9, Drawn: 2}, {Key: "route=" + hostileName, Population: 1, Drawn: 1}}}
	var b bytes.Buffer
	if err := NewRegistry().Sample.Render(&b, "text", s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"assay sample week48 (seed 7)", "window [2026-11-23T00:00:00Z, now)",
		"stratified by route, 2 per stratum: 3 drawn from 10 traces in 2 strata", "route=/a"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "route=/a 9 2 4.5") {
		t.Errorf("text lacks the stratum's row:\n%s", out)
	}
	if strings.Contains(out, "\x1b") || strings.Contains(out, "\u202e") {
		t.Errorf("the hostileName stratum passes on:\n%q", out)
	}
}

// What the privacy redaction replaced in the scored traces is counted in
// every format (the issue: "counted in the report"), and only when it
// replaced something.
func TestTraceScoresCountRedactions(t *testing.T) {
	r := NewRegistry().TraceScores
	rep := traceScoresFixture()
	rep.Redacted, rep.Redactions = 7, 11
	for _, f := range []string{"text", "markdown", "html"} {
		var b bytes.Buffer
		if err := r.Render(&b, f, rep); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); !strings.Contains(out, "privacy: 11 values replaced by ") || !strings.Contains(out, " in 7 of the 52 traces scored") {
			t.Errorf("%s does not count the redactions:\n%s", f, b.String())
		}
	}
	var b bytes.Buffer
	rep.Redacted, rep.Redactions = 0, 0
	if err := r.Render(&b, "text", rep); err != nil || strings.Contains(b.String(), "privacy") {
		t.Errorf("a sample with nothing redacted says: %v\n%s", err, b.String())
	}
	b.Reset()
	rep.Redacted, rep.Redactions = 3, 5
	if err := r.Render(&b, "json", rep); err != nil || !strings.Contains(b.String(), `"redacted_traces": 3`) || !strings.Contains(b.String(), `"redactions": 5`) {
		t.Errorf("json: %v\n%s", err, b.String())
	}
}
