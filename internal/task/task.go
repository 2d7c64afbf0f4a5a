// Package task loads and checks an evaluation task as one unit — the spec,
// its dataset, its prompt templates and its scorers — and reports every
// problem across them at once, each as FILE:LINE:COL. `assay validate` and
// `assay run` both start here, so a run never begins on a task that would
// fail part-way. It must not import the runner, providers or store.
package task

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/prompt"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
)

// Task is a spec with its dataset scanned, its prompt compiled and its
// scorers built.
type Task struct {
	Spec    *spec.Spec
	Dataset *dataset.Info
	Prompt  *prompt.Template
	Scorers *scorer.Set
}

// Load loads the spec at path and checks everything it refers to. The error
// is spec.Problems (every problem found, sorted by file — the spec first —
// then position) when the task is invalid, or another error when the spec
// file itself cannot be read.
//
// Where the spec loader and the scorer compiler both locate a problem at
// the same place (output.extract, a scorer's name), the spec's message is
// kept and the other dropped, so one mistake is reported once.
func Load(path string) (*Task, error) {
	return LoadWith(path, spec.Options{})
}

// LoadWith is Load with the spec read through spec.LoadWith: ${VAR}
// looked up through o.Getenv and o.Overlays merged over it.
func LoadWith(path string, o spec.Options) (*Task, error) {
	sp, err := spec.LoadWith(path, o)
	var probs spec.Problems
	if err != nil {
		if !errors.As(err, &probs) {
			return nil, err
		}
	}
	if sp == nil {
		return nil, probs
	}
	t := &Task{Spec: sp}

	if sp.Dataset.Path != "" && (sp.Dataset.Format == "jsonl" || sp.Dataset.Format == "csv") {
		info, err := dataset.Scan(sp)
		var dp spec.Problems
		switch {
		case errors.As(err, &dp):
			probs = append(probs, dp...)
		case err != nil:
			return nil, err
		}
		t.Dataset = info
		if info != nil {
			probs = append(probs, checkCalls(sp, info.Count)...)
		}
	}

	tmpl, err := CompilePrompt(sp)
	var pe *prompt.ParseError
	switch {
	case errors.As(err, &pe):
		path := "prompt." + pe.Which
		probs = append(probs, sp.Problemf(path, "the prompt is a Go text/template, e.g. \"Q: {{.question}}\"", "%s does not parse: %s", path, pe.Msg()))
	case err != nil:
		return nil, err
	default:
		t.Prompt = tmpl
		if t.Dataset != nil && len(t.Dataset.Fields) > 0 {
			probs = append(probs, checkFields(sp, tmpl, t.Dataset)...)
			hp, err := checkHistories(sp, t.Dataset)
			if err != nil {
				return nil, err
			}
			probs = append(probs, hp...)
		}
	}

	set, sprobs := scorer.Compile(sp)
	t.Scorers = set
	probs = append(probs, dropSamePosition(sprobs, probs)...)

	if len(probs) > 0 {
		return t, probs.Sort(sp.File)
	}
	return t, nil
}

// checkCalls reports a run of more than spec.MaxCalls calls (cases ×
// targets × epochs), located at run.epochs. Epochs outside their own range
// are reported by the spec.
func checkCalls(sp *spec.Spec, cases int) spec.Problems {
	e := sp.Run.Epochs
	if e < 1 || e > spec.MaxEpochs || len(sp.Targets) == 0 {
		return nil
	}
	if n := int64(cases) * int64(len(sp.Targets)) * int64(e); n > spec.MaxCalls {
		return spec.Problems{sp.Problemf("run.epochs", "use dataset.limit, fewer targets or fewer epochs",
			"the run would make %d calls (%d cases × %d targets × %d epochs); at most %d are allowed", n, cases, len(sp.Targets), e, spec.MaxCalls)}
	}
	return nil
}

// checkFields reports template fields the dataset lacks entirely, or lacks
// in some rows (rendering would fail there: missingkey=error).
func checkFields(sp *spec.Spec, tmpl *prompt.Template, info *dataset.Info) spec.Problems {
	var probs spec.Problems
	report := func(which string, fields []string) {
		path := "prompt." + which
		for _, f := range fields {
			st, ok := info.Stats[f]
			switch {
			case !ok:
				hint := ""
				if near := spec.Nearest(f, info.Fields); near != "" {
					hint = fmt.Sprintf("did you mean %q?", near)
				}
				probs = append(probs, sp.Problemf(path, hint, "%s references field %q that the dataset lacks (fields: %s)", path, f, dataset.FieldList(info.Fields)))
			case st.FirstMissing > 0:
				probs = append(probs, sp.Problemf(path, "every case needs each field the prompt uses", "%s references field %q that %d of %d cases lack (first at %s:%d)", path, f, info.Rows-st.Rows, info.Rows, info.Path, st.FirstMissing))
			}
		}
	}
	for _, pf := range tmpl.PartFields() {
		report(pf.Which, pf.Fields)
	}
	if h := tmpl.History(); h != "" {
		report("messages_field", []string{h})
	}
	return probs
}

// CompilePrompt compiles the spec's prompt: prompt.messages when set, else
// the system template (when there is one) and the user template (unless
// prompt.messages_field alone is the prompt), with the history field.
func CompilePrompt(sp *spec.Spec) (*prompt.Template, error) {
	p := &sp.Prompt
	var parts []prompt.Part
	if len(p.Messages) > 0 {
		for i, m := range p.Messages {
			parts = append(parts, prompt.Part{Which: fmt.Sprintf("messages[%d].content", i), Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID})
		}
		return prompt.CompileMessages(parts, p.MessagesField)
	}
	if p.System != "" {
		parts = append(parts, prompt.Part{Which: "system", Role: "system", Content: p.System})
	}
	if p.User != "" || p.MessagesField == "" {
		parts = append(parts, prompt.Part{Which: "user", Role: "user", Content: p.User})
	}
	return prompt.CompileMessages(parts, p.MessagesField)
}

// checkHistories reads every case's message history (prompt.messages_field)
// and reports each that is not one at its line in the dataset, up to
// dataset.MaxProblems, so a bad row stops validate and run before any call
// rather than failing its calls. Rows the dataset reported are skipped.
func checkHistories(sp *spec.Spec, info *dataset.Info) (spec.Problems, error) {
	field := sp.Prompt.MessagesField
	if field == "" || !slices.Contains(info.Fields, field) {
		return nil, nil
	}
	r, err := dataset.Open(sp)
	if err != nil {
		return nil, nil // reported by Scan
	}
	defer r.Close()
	var probs spec.Problems
	more := 0
	for {
		c, err := r.Next()
		if err == io.EOF {
			break
		}
		var rowProbs spec.Problems
		if errors.As(err, &rowProbs) {
			continue
		}
		if err != nil {
			return nil, err
		}
		v, ok := c.Vars[field]
		if !ok {
			continue // reported as a field some cases lack
		}
		if _, err := prompt.ParseHistory(field, v); err != nil {
			if len(probs) >= dataset.MaxProblems {
				more++
				continue
			}
			he, _ := err.(*prompt.HistoryError)
			hint := ""
			if he != nil {
				hint = he.Hint
			}
			probs = append(probs, spec.Problem{File: info.Path, Line: c.Line, Col: 1, Msg: err.Error(), Hint: hint})
		}
	}
	if more > 0 {
		last := probs[len(probs)-1]
		probs = append(probs, spec.Problem{File: info.Path, Line: last.Line, Col: 1, Msg: fmt.Sprintf("… and %d more cases with a bad message history", more)})
	}
	return probs, nil
}

// dropSamePosition returns the problems of extra that are not at a position
// (file, line, column) already reported in base.
func dropSamePosition(extra, base spec.Problems) spec.Problems {
	type key struct {
		file      string
		line, col int
	}
	have := map[key]bool{}
	for _, p := range base {
		have[key{p.File, p.Line, p.Col}] = true
	}
	var out spec.Problems
	for _, p := range extra {
		if !have[key{p.File, p.Line, p.Col}] {
			out = append(out, p)
		}
	}
	return out
}
