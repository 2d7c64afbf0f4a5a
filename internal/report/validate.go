package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/spec"
)

// Validation is what `assay validate` found: its --format json, and what
// its text shows on stdout (the warnings go to stderr, the problems back
// to the caller as the command's error).
type Validation struct {
	Spec     string            `json:"spec"`
	Valid    bool              `json:"valid"`
	Name     string            `json:"name,omitempty"`
	Cases    int               `json:"cases"`
	Targets  int               `json:"targets"`
	Scorers  int               `json:"scorers"`
	Hashes   map[string]string `json:"hashes,omitempty"`
	Problems spec.Problems     `json:"problems"`
	Warnings []string          `json:"warnings"`
	Health   *dataset.Health   `json:"health,omitempty"`

	// Candidates are the targets a run calls by default; Judges the
	// targets that only grade them.
	Candidates []string `json:"candidates,omitempty"`
	Judges     []string `json:"judges,omitempty"`

	// DatasetLimit is the spec's dataset.limit and Strict --strict: the
	// health text says what they mean for it.
	DatasetLimit int  `json:"-"`
	Strict       bool `json:"-"`
}

// ValidationText writes a validation for a terminal: when there is no
// problem, the spec's summary and hashes; then the dataset's health, when
// checked.
func ValidationText(w io.Writer, v *Validation) error {
	var b strings.Builder
	if len(v.Problems) == 0 {
		fmt.Fprintf(&b, "%s: ok — spec %q, %s, %s, %s\n",
			v.Spec, v.Name, nounCount(v.Cases, "case"), nounCount(v.Targets, "target"), nounCount(v.Scorers, "scorer"))
		fmt.Fprintf(&b, "  spec %s\n  dataset %s (cases; file %s)\n  prompt %s\n  scorers %s\n", v.Hashes["spec"], v.Hashes["dataset"], v.Hashes["dataset_file"], v.Hashes["prompt"], v.Hashes["scorers"])
		if len(v.Judges) > 0 {
			fmt.Fprintf(&b, "  candidates %s; judges %s (they grade, they are not run or ranked)\n", strings.Join(v.Candidates, ", "), strings.Join(v.Judges, ", "))
		}
	}
	if v.Health != nil {
		if len(v.Problems) == 0 {
			fmt.Fprintln(&b)
		}
		healthText(&b, v.Health, v.DatasetLimit, v.Strict)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ValidationJSON writes a validation as indented JSON, with <, > and &
// as they are (a spec's paths and messages are read by people and
// scripts, not pasted into HTML).
func ValidationJSON(w io.Writer, v *Validation) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// nounCount is "1 case", "26 cases": a count as written (no separators,
// as scripts read validate's line) with its noun.
func nounCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
