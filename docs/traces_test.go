package docs

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/traces"
)

// fenced returns the body of the first ``` block of the given language in
// doc.
func fenced(t *testing.T, doc, lang string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "```"+lang+"\n")
	if !ok {
		t.Fatalf("no ```%s block", lang)
	}
	body, _, _ := strings.Cut(rest, "```")
	return body
}

// The example of docs/traces.md does what the page says: the spec loads,
// and its log line is stored as the trace the page describes.
func TestTracesDocExample(t *testing.T) {
	b, err := os.ReadFile("traces.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cases.jsonl"), []byte(`{"question": "q", "answer": "a"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Parse(filepath.Join(dir, "assay.yaml"), []byte(fenced(t, doc, "yaml")))
	if err != nil {
		t.Fatalf("the page's spec: %v", err)
	}
	// The line is shown wrapped; in the file it is one line.
	line := strings.ReplaceAll(strings.TrimSpace(fenced(t, doc, "json")), "\n", "")
	j, err := traces.NewJSONL(sp.Traces, "gateway.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tr, p := j.Line(1, []byte(line))
	if p != nil {
		t.Fatalf("the page's line: %v", p)
	}
	red, err := traces.NewRedactor(sp.Traces.Redact)
	if err != nil {
		t.Fatal(err)
	}
	red.Trace(tr)
	traces.Price(tr, sp.Traces.Prices)

	var attrs map[string]any
	if err := json.Unmarshal(tr.Attributes, &attrs); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	calls := tr.OutputToolCalls()
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"id", tr.ID, "req-81f2"},
		{"system", tr.System, "You are the support bot of Example Ltd."},
		{"user message", tr.Input[len(tr.Input)-1].Content, "Where is order [REDACTED:order_id]? Mail me at [REDACTED:email]"},
		{"tool call", len(calls) == 1 && calls[0].Name == "track_order", true},
		{"arguments", calls[0].Arguments, `{"order": "[REDACTED:order_id]"}`},
		{"model", tr.Model, "gpt-4o"},
		{"tokens", [2]int{tr.InputTokens, tr.OutputTokens}, [2]int{412, 23}},
		{"cost", math.Round(tr.CostUSD*1e8) / 1e8, 0.00126},
		{"latency", tr.LatencyMS, 912.0},
		{"time", tr.Time, time.Date(2026, 11, 23, 9, 14, 3, 120e6, time.UTC)},
		{"attributes", strings.Join(keys, ","), "customer_tier,region,route"},
		{"redactions", tr.Redactions, 3},
	} {
		if c.got != c.want {
			t.Errorf("%s: the page says %v, the code gives %v", c.what, c.want, c.got)
		}
	}
	if !strings.Contains(doc, "costing $0.00126") || !strings.Contains(doc, "Three values were redacted") {
		t.Error("the page's description of the example changed: update this test with it")
	}
}
