package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// An intent classifier graded by an equals scorer gets, through the real
// commands, a confusion matrix per target with per-class precision and
// recall, and per-class recall comparisons; a hostile label is escaped in
// Markdown and HTML.
func TestReportConfusionMatrix(t *testing.T) {
	t.Parallel()
	// The mock echoes the prompt: each case's "say" is the model's answer;
	// for model m2 a prompt with "tech" in it is answered "billing".
	_, url := startMock(t, mock.Options{Rules: []mock.Rule{{Match: "tech", Reply: "billing", Model: "m2"}}})
	const hostile = "<b onmouseover=alert(1)>x|y</b>"
	dir := t.TempDir()
	var lines []string
	add := func(expected string, says ...string) {
		for _, s := range says {
			b, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("c%02d", len(lines)), "say": s, "expected": expected})
			lines = append(lines, string(b))
		}
	}
	add("billing", "billing", "billing", "BILLING", "billing", " Tech ")
	add("tech", "tech", "tech", "tech", "refund")
	add(hostile, hostile, hostile, "billing")
	writeFile(t, filepath.Join(dir, "cases.jsonl"), strings.Join(lines, "\n")+"\n")
	path := filepath.Join(dir, "assay.yaml")
	writeFile(t, path, fmt.Sprintf(`name: intents
dataset: {path: cases.jsonl, id: id, expected: expected}
prompt: {user: "{{.say}}"}
targets:
  - {name: ok, provider: openai, model: m, base_url: %s/v1}
  - {name: terse, provider: openai, model: m2, base_url: %s/v1}
scorers:
  - {name: intent, type: equals, normalize: [trim, lower]}
run: {timeout: 300ms, retries: 0}
`, url, url))
	db := filepath.Join(dir, "assay.db")
	if inv := runCLI(t, cliEnv{}, "run", path, "--db", db); inv.code != 0 {
		t.Fatalf("run exited %d: %s", inv.code, inv.stderr)
	}
	inv := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "json")
	var rep struct {
		Targets []struct {
			Name    string
			Classes *struct {
				Labels   []string
				Matrix   [][]int
				PerClass []struct {
					Label             string
					Precision, Recall float64
				} `json:"per_class"`
			}
		}
		ClassComparisons []struct {
			A, B, Label string
			N           int
			AOnly       int `json:"a_only"`
		} `json:"class_comparisons"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err, inv.stderr)
	}
	// By hand: billing cases answered billing ×4 and tech; tech cases tech
	// ×3 and refund (outside the labels); hostile ones hostile ×2 and
	// billing. terse answers the three "tech" prompts billing.
	want := map[string]string{
		"ok":    "[[4 1 0 0 0] [0 3 0 1 0] [1 0 2 0 0]]",
		"terse": "[[4 1 0 0 0] [3 0 0 1 0] [1 0 2 0 0]]",
	}
	for _, tg := range rep.Targets {
		if tg.Classes == nil {
			t.Fatalf("%s: no classes in the JSON report:\n%s", tg.Name, inv.stdout)
		}
		if got := fmt.Sprint(tg.Classes.Labels); got != "[billing tech "+hostile+"]" {
			t.Errorf("labels %s", got)
		}
		if got := fmt.Sprint(tg.Classes.Matrix); got != want[tg.Name] {
			t.Errorf("%s: matrix %s, want %s", tg.Name, got, want[tg.Name])
		}
	}
	pc := rep.Targets[0].Classes.PerClass
	// billing: 4 of 5 predicted right, 4 of 5 expected found; tech 3/4, 3/4;
	// hostile 2/2 and 2/3.
	for i, w := range [][2]float64{{0.8, 0.8}, {0.75, 0.75}, {1, 0.6667}} {
		if pc[i].Precision != w[0] || pc[i].Recall != w[1] {
			t.Errorf("%s: P %v R %v, want %v", pc[i].Label, pc[i].Precision, pc[i].Recall, w)
		}
	}
	// Recall of tech: ok found 3 of the 4 that terse missed; billing and
	// the hostile label are answered alike.
	if len(rep.ClassComparisons) != 3 || rep.ClassComparisons[1].Label != "tech" || rep.ClassComparisons[1].AOnly != 3 ||
		rep.ClassComparisons[0].AOnly != 0 || rep.ClassComparisons[2].N != 3 {
		t.Errorf("class comparisons %+v", rep.ClassComparisons)
	}
	md := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "markdown").stdout
	html := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "html").stdout
	text := runCLI(t, cliEnv{}, "report", "latest", "--db", db).stdout
	for name, doc := range map[string]string{"markdown": md, "html": html} {
		if strings.Contains(doc, "<b onmouseover") {
			t.Errorf("%s: the hostile label is not escaped", name)
		}
	}
	if !strings.Contains(md, "Confusion matrix") || !strings.Contains(html, `id="classes"`) || !strings.Contains(text, "confusion matrix of intent on ok") {
		t.Errorf("a format lacks the confusion matrix")
	}
}
