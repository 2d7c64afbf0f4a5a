package selftest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/task"
)

// coverageScorers configures one scorer of every type for
// TestEveryScorerTypeIsAttacked; a type missing here fails the test.
var coverageScorers = map[string]string{
	"equals":          `{name: s, type: equals}`,
	"contains":        `{name: s, type: contains, value: "42"}`,
	"not_contains":    `{name: s, type: not_contains, value: zzz}`,
	"regex":           `{name: s, type: regex, pattern: '^[0-9]+$'}`,
	"is_json":         `{name: s, type: is_json}`,
	"json_schema":     `{name: s, type: json_schema, schema: {type: object, required: [a]}}`,
	"required_fields": `{name: s, type: required_fields, fields: [a]}`,
	"field_equals":    `{name: s, type: field_equals, field: a}`,
	"number":          `{name: s, type: number, tolerance: 1}`,
	"similarity":      `{name: s, type: similarity}`,
	"one_of":          `{name: s, type: one_of, values: ["42", "7"]}`,
	"max_length":      `{name: s, type: max_length, max: 1000}`,
	"latency":         `{name: s, type: latency, max: 1h}`,
	"cost":            `{name: s, type: cost, max: 100}`,
	"cel":             `{name: s, type: cel, expr: 'output == expected'}`,
	"judge":           `{name: s, type: judge, target: grader, rubric: "answers the question"}`,
	"tool_call":       `{name: s, type: tool_call}`,
	"tool_calls":      `{name: s, type: tool_calls, match: subset}`,
	"no_tool_call":    `{name: s, type: no_tool_call}`,
}

// A new scorer type cannot escape selftest: every type the scorer package
// has is attacked by the null models (not skipped, some cells tested), in
// the role its metadata gives, and its metadata says truly whether it
// needs the case's expected value.
func TestEveryScorerTypeIsAttacked(t *testing.T) {
	t.Parallel()
	verdict := provider.Func(func(ctx context.Context, req *provider.Request) (*provider.Response, error) {
		return &provider.Response{Text: `{"verdict": "pass", "reason": "fine"}`, Attempts: 1}, nil
	})
	grader := func(name string) (provider.Provider, spec.Target, error) {
		return verdict, spec.Target{Name: name, Provider: "openai", Model: "m"}, nil
	}
	for _, m := range scorer.Metas() {
		t.Run(m.Type, func(t *testing.T) {
			t.Parallel()
			jsonOutput := m.Fields == scorer.FieldsAlways
			sc, ok := coverageScorers[m.Type]
			if !ok {
				t.Fatalf("scorer type %s is new: add it to coverageScorers, so selftest is shown to attack it", m.Type)
			}
			if m.Role == "" || m.Reads == "" {
				t.Fatalf("scorer type %s has no role or reads in its metadata: %+v", m.Type, m)
			}
			dir := t.TempDir()
			var cases strings.Builder
			out := "output: {extract: '^A: (.+)$'}\n"
			for i := range 6 {
				if jsonOutput {
					fmt.Fprintf(&cases, "{\"id\":\"%d\",\"q\":\"question %d\",\"a\":{\"a\":\"%d\"}}\n", i, i, i%3)
				} else {
					fmt.Fprintf(&cases, "{\"id\":\"%d\",\"q\":\"question %d\",\"a\":\"%d\"}\n", i, i, 40+i%3)
				}
			}
			if jsonOutput {
				out = "output: {format: json}\n"
			}
			src := "dataset: {path: cases.jsonl, id: id, expected: a}\nprompt: {user: \"{{.q}}\"}\n" + out +
				"targets:\n  - {name: m, provider: exec, command: [x]}\n  - {name: grader, provider: openai, model: m}\n" +
				"candidates: [m]\nscorers: [" + sc + "]\n"
			for name, body := range map[string]string{"assay.yaml": src, "cases.jsonl": cases.String()} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tk, err := task.Load(filepath.Join(dir, "assay.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Seed: 1, Examples: 1}
			if m.Judge {
				o.JudgeProvider, o.JudgeVia = grader, "mock"
			}
			rep, err := Run(context.Background(), tk, o)
			if err != nil {
				t.Fatal(err)
			}
			var sr *ScorerReport
			for i := range rep.Scorers {
				if rep.Scorers[i].Name == "s" {
					sr = &rep.Scorers[i]
				}
			}
			switch {
			case sr == nil:
				t.Fatalf("selftest reports no scorer s: %+v", rep.Scorers)
			case sr.Skipped != "":
				t.Errorf("selftest skipped a %s scorer: %s", m.Type, sr.Skipped)
			case sr.Tests == 0:
				t.Errorf("selftest tested no null model on a %s scorer", m.Type)
			}
			if sr != nil && sr.Role != string(m.Role) {
				t.Errorf("selftest reports role %s, the metadata says %s", sr.Role, m.Role)
			}

			// NeedsExpected: a case without an expected value fails loud
			// with a scorer_error exactly when the metadata says so.
			set, probs := scorer.CompileWith(tk.Spec, scorer.Options{JudgeProvider: grader})
			if len(probs) > 0 {
				t.Fatal(probs)
			}
			raw := "A: 42"
			if jsonOutput {
				raw = `{"a": "42"}`
			}
			r := record.Result{CaseID: "x", Raw: raw}
			got := set.Score(context.Background(), &dataset.Case{ID: "x", Vars: map[string]any{"q": "x"}}, &r)[0]
			if missing := got.Kind == scorer.KindScorerError && strings.Contains(got.Reason, "no expected value"); missing != m.NeedsExpected {
				t.Errorf("NeedsExpected is %v, but without an expected value the verdict is %s: %s", m.NeedsExpected, got.Kind, got.Reason)
			}
		})
	}
}
