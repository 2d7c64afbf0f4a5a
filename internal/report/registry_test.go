package report

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/plan"
)

// Every document is found by name, its formats listed in the order help
// shows them; an unknown format or document is an error naming the valid
// ones.
func TestRegistryLookup(t *testing.T) {
	reg := NewRegistry()
	for doc, want := range map[string][]string{
		"report": {"text", "json", "markdown", "html", "junit"},
		"gate":   {"text", "markdown", "json", "junit"},
		"diff":   {"text", "json", "markdown"},
		"drift":  {"text", "json", "markdown"},
		"plan":   {"text", "json"},
	} {
		got, err := reg.Formats(doc)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Formats(%q) = %v, %v; want %v", doc, got, err, want)
		}
	}
	if _, err := reg.Formats("pdf-book"); err == nil || !strings.Contains(err.Error(), "documents are: ") || !strings.Contains(err.Error(), "gate") {
		t.Errorf("an unknown document: %v", err)
	}

	_, err := reg.Diff.Reporter("html", &analysis.RunDiff{})
	var uf *UnknownFormatError
	if !errors.As(err, &uf) || !slices.Equal(uf.Valid, []string{"text", "json", "markdown"}) {
		t.Fatalf("an unknown format: %v", err)
	}
	if want := `unknown diff format "html" (formats are: text, json, markdown)`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// An alias renders as its format and is not listed.
	var md, alias bytes.Buffer
	d := &analysis.RunDiff{}
	if err := reg.Diff.Render(&md, "markdown", d); err != nil {
		t.Fatal(err)
	}
	if err := reg.Diff.Render(&alias, "md", d); err != nil || md.String() != alias.String() {
		t.Errorf("md is markdown: %v", err)
	}
}

// The JSON of a plan is the plan package's struct, whatever its mode; its
// text form is chosen by the result's type.
func TestPlanDocument(t *testing.T) {
	reg := NewRegistry()
	res, err := plan.FromDiscordance(plan.Options{Alpha: 0.05, Power: 0.8, PDisc: 0.12, Delta: 0.03})
	if err != nil {
		t.Fatal(err)
	}
	var js, text bytes.Buffer
	if err := reg.Plan.Render(&js, "json", res); err != nil || !strings.HasPrefix(js.String(), "{\n  \"mode\": \"paired\",") {
		t.Errorf("json: %v\n%s", err, js.String())
	}
	if err := reg.Plan.Render(&text, "text", res); err != nil || !strings.Contains(text.String(), "cases needed") {
		t.Errorf("text: %v\n%s", err, text.String())
	}
}
