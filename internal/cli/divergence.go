package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/difficulty"
	"github.com/assay-eval/assay/internal/export"
	"github.com/assay-eval/assay/internal/prompt"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/runview"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/task"
)

// profileSource is one side of assay mismatch as the divergence rubric
// reads it, one of:
//   - a stored run: Run (its record, carrying its resolved spec) and View
//     (its view: the cases it measured and their tags);
//   - a baseline file: View only (a baseline holds case IDs and tags, not
//     the cases' inputs or the spec);
//   - a dataset file: Dataset, a spec whose dataset section reads the file
//     (Dataset.Dataset.Path). Its prompt and scorers are taken as the ones
//     the file's cases are run with only when SpecDescribes is set: the
//     workload's side of assay mismatch given the workload's SPEC. Without
//     it the file's prompt and scorer are unknown (a benchmark file is not
//     run with the workload's prompt).
//
// Name names the side in the profile (a run ID, a file's path).
type profileSource struct {
	Name          string
	Run           *record.Run
	View          *runview.View
	Dataset       *spec.Spec
	SpecDescribes bool
}

// profileOf builds the divergence rubric's profile of one side: its
// cases' input texts (the fields the prompt shows), its tags, its prompt
// template's features and its primary scorer's type. A run's inputs are
// re-read from its dataset only when the file still holds the cases the
// run measured (export.OpenInputs checks the hash); otherwise the profile
// has no inputs and InputsWhy says why, and the rubric leaves what needs
// them unrated. What cannot be known (a baseline's inputs and spec) is
// said the same way, never an error. An error is returned only for a
// dataset file that cannot be read.
func profileOf(ctx context.Context, src profileSource) (*difficulty.Profile, error) {
	p := &difficulty.Profile{Name: src.Name}
	switch {
	case src.Run != nil:
		if src.View != nil {
			p.Tags = viewTags(src.View)
		}
		sp, err := spec.Stored(src.Run.Config, src.Run.SpecPath)
		if err != nil {
			p.SpecWhy = fmt.Sprintf("run %s: %v", src.Run.ID, err)
			p.InputsWhy = p.SpecWhy
			return p, nil
		}
		describeSpec(p, sp)
		in, err := export.OpenInputs(src.Run)
		if err != nil {
			p.InputsWhy = err.Error()
			return p, nil
		}
		in.Close()
		var measured map[string]bool
		if src.View != nil {
			measured = make(map[string]bool, len(src.View.Cases))
			for _, c := range src.View.Cases {
				measured[c.ID] = true
			}
		}
		inputs, tags, err := readInputs(ctx, sp, measured)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			p.InputsWhy = fmt.Sprintf("run %s: reading its dataset: %v", src.Run.ID, err)
			return p, nil
		}
		if src.View == nil {
			p.Tags = tags // no view: the dataset's tags
		}
		p.Inputs = inputs
	case src.Dataset != nil:
		sp := src.Dataset
		switch {
		case src.SpecDescribes && hasPrompt(sp):
			describeSpec(p, sp)
		case src.SpecDescribes:
			p.SpecWhy = fmt.Sprintf("the spec given for the dataset file %s has no prompt", sp.Dataset.Path)
		default:
			p.SpecWhy = fmt.Sprintf("the dataset file %s holds cases, not the prompt and scorer they are run with", sp.Dataset.Path)
		}
		inputs, tags, err := readInputs(ctx, sp, nil)
		if err != nil {
			return nil, fmt.Errorf("reading the dataset %s: %w", sp.Resolve(sp.Dataset.Path), err)
		}
		p.Inputs, p.Tags = inputs, tags
	case src.View != nil:
		p.Tags = viewTags(src.View)
		p.InputsWhy = fmt.Sprintf("the baseline file %s holds case IDs and tags, not the cases' inputs", src.View.Source)
		p.SpecWhy = fmt.Sprintf("the baseline file %s does not carry the run's spec", src.View.Source)
	default:
		p.InputsWhy = "nothing is known of this side"
		p.SpecWhy = p.InputsWhy
	}
	return p, nil
}

// readInputs reads sp's dataset: its cases' input texts (inputText) and
// tags, of the cases in only (every case when only is nil).
func readInputs(ctx context.Context, sp *spec.Spec, only map[string]bool) (inputs []string, tags map[string][]string, err error) {
	tpl := promptTemplate(sp)
	inputs, tags = []string{}, map[string][]string{}
	err = dataset.Each(sp, func(c *dataset.Case) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if only == nil || only[c.ID] {
			inputs = append(inputs, inputText(sp, tpl, c))
			for k, v := range c.Tags {
				tags[k] = append(tags[k], v)
			}
		}
		return nil
	})
	return inputs, tags, err
}

// viewTags are a view's tags: per key, the values of the cases that have
// one.
func viewTags(v *runview.View) map[string][]string {
	tags := map[string][]string{}
	for _, k := range v.TagKeys() {
		values, idx := v.TagColumn(k)
		for _, x := range idx {
			if x != 0 {
				tags[k] = append(tags[k], values[x-1])
			}
		}
	}
	return tags
}

// hasPrompt reports whether sp has a prompt template (a spec made only to
// read a dataset file has none).
func hasPrompt(sp *spec.Spec) bool {
	return sp.Prompt.User != "" || sp.Prompt.System != "" || len(sp.Prompt.Messages) > 0
}

// describeSpec sets the profile's prompt features and primary scorer type
// from a spec.
func describeSpec(p *difficulty.Profile, sp *spec.Spec) {
	p.Prompt = promptFeatures(sp)
	p.ScorerType = primaryScorerType(sp)
	if p.ScorerType == "" {
		p.SpecWhy = "the spec has no scorers"
	}
}

// answeredExample matches a line of a template that shows an answer: an
// inline worked example ("A: 72", "Answer: …"). The case's own answer slot
// ("A:" with nothing after it) does not match.
var answeredExample = regexp.MustCompile(`(?m)^[ \t]*(?:A|Answer)[ \t]*:[ \t]*\S`)

// contextField matches the name of a field that carries retrieved context.
var contextField = regexp.MustCompile(`(?i)context|ctx|document|docs|passage|retriev|chunk|snippet|evidence`)

// promptFeatures are a spec's prompt template's features: its characters
// (the templates' text as written, placeholders included); its worked
// examples — assistant messages of prompt.messages, and lines of the
// templates that show an answer ("A: …", "Answer: …"); the tools offered;
// retrieved context — a field the templates show whose name says context
// (or ctx), document (or docs), passage, retrieved, chunk, snippet or
// evidence; and a system prompt.
func promptFeatures(sp *spec.Spec) *difficulty.PromptFeatures {
	f := &difficulty.PromptFeatures{Tools: len(sp.Tools)}
	texts := []string{sp.Prompt.System, sp.Prompt.User}
	f.System = sp.Prompt.System != ""
	if len(sp.Prompt.Messages) > 0 {
		texts = texts[:0]
		for _, m := range sp.Prompt.Messages {
			texts = append(texts, m.Content)
			switch m.Role {
			case "system":
				f.System = true
			case "assistant":
				f.FewShot++
			}
		}
	}
	for _, t := range texts {
		f.Chars += utf8.RuneCountInString(t)
		f.FewShot += len(answeredExample.FindAllStringIndex(t, -1))
	}
	if tpl := promptTemplate(sp); tpl != nil {
		f.Context = slices.ContainsFunc(tpl.Fields(), contextField.MatchString)
	}
	return f
}

// primaryScorerType is the type of the spec's primary scorer (the first
// scorer when none is marked primary), several joined by commas; "" when
// the spec has no scorers.
func primaryScorerType(sp *spec.Spec) string {
	var types []string
	for _, s := range sp.Scorers {
		if s.Primary {
			types = append(types, s.Type)
		}
	}
	if len(types) == 0 && len(sp.Scorers) > 0 {
		types = append(types, sp.Scorers[0].Type)
	}
	return strings.Join(types, ",")
}

// promptTemplate compiles sp's prompt as a run does (task.CompilePrompt);
// nil when it has none or it does not compile (a stored spec's prompt
// compiled when the run was made).
func promptTemplate(sp *spec.Spec) *prompt.Template {
	if !hasPrompt(sp) {
		return nil
	}
	tpl, err := task.CompilePrompt(sp)
	if err != nil {
		return nil
	}
	return tpl
}

// inputText is a case's input as the rubric compares it: the fields the
// prompt shows, in name order, joined by newlines (a string as it is,
// another value as JSON). Without a prompt that shows a field, every field
// but the ID, the expected value, the weight and the tags' fields.
func inputText(sp *spec.Spec, tpl *prompt.Template, c *dataset.Case) string {
	var fields []string
	if tpl != nil {
		fields = tpl.Fields()
	}
	if len(fields) == 0 {
		skip := map[string]bool{sp.Dataset.ID: true, sp.Dataset.Expected: true, sp.Dataset.Weight: true}
		for _, t := range sp.Dataset.Tags {
			skip[t.Expr] = true
		}
		for k := range c.Vars {
			if !skip[k] {
				fields = append(fields, k)
			}
		}
		slices.Sort(fields)
	}
	var b strings.Builder
	for _, f := range fields {
		v, ok := c.Vars[f]
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if s, ok := v.(string); ok {
			b.WriteString(s)
			continue
		}
		j, err := json.Marshal(v)
		if err != nil {
			j = []byte(fmt.Sprint(v))
		}
		b.Write(j)
	}
	return b.String()
}
