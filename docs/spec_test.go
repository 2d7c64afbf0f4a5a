// Package docs holds the user documentation. Its test holds docs/spec.md to
// the code: every spec key, scorer type, scorer parameter and CEL variable
// assay accepts is documented there and everything documented there is
// accepted, and the page's example exec program runs as the page says.
package docs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	execprov "github.com/assay-eval/assay/internal/provider/exec"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
)

// writtenKeys are keys the spec loader accepts that are not yaml-tagged
// fields of the spec types (the decoder reads them itself).
var writtenKeys = []string{"dataset.tags",
	"tools", "tools[].name", "tools[].description", "tools[].parameters",
	"response_format", "response_format.json_schema", "response_format.json_schema.name",
	"response_format.json_schema.schema", "response_format.json_schema.strict"}

func readSpecDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("spec.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section returns the lines under the "## title" heading, up to the next
// heading of that level.
func section(t *testing.T, doc, title string) []string {
	t.Helper()
	var out []string
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			if in {
				break
			}
			in = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == title
			continue
		}
		if in {
			out = append(out, line)
		}
	}
	if !in && out == nil {
		t.Fatalf("docs/spec.md has no section %q", "## "+title)
	}
	return out
}

var firstCell = regexp.MustCompile("^\\| `([^`]+)` \\|")

// tableKeys returns the first cells of the table rows in lines whose first
// cell is one code span.
func tableKeys(lines []string) []string {
	var keys []string
	for _, l := range lines {
		if m := firstCell.FindStringSubmatch(l); m != nil {
			keys = append(keys, m[1])
		}
	}
	return keys
}

// specKeys walks the spec types by their yaml tags: every key a spec may
// write, as a dotted path with [] for list entries.
func specKeys(prefix string, t reflect.Type, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		*out = append(*out, path)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct:
			specKeys(path, ft, out)
		case ft.Kind() == reflect.Slice && elemStruct(ft.Elem()):
			specKeys(path+"[]", ft.Elem(), out)
		case ft.Kind() == reflect.Map && elemStruct(ft.Elem()):
			// A mapping of names to structs (agent.tools): NAME stands
			// for any key.
			specKeys(path+".NAME", ft.Elem(), out)
		}
	}
}

func elemStruct(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// diffSets reports what one side has that the other lacks; add says how
// to document a missing one.
func diffSets(t *testing.T, what, add string, code, doc []string) {
	t.Helper()
	inCode := map[string]bool{}
	for _, k := range code {
		inCode[k] = true
	}
	inDoc := map[string]bool{}
	for _, k := range doc {
		if inDoc[k] {
			t.Errorf("docs/spec.md lists %s %q twice", what, k)
		}
		inDoc[k] = true
	}
	var missing, extra []string
	for k := range inCode {
		if !inDoc[k] {
			missing = append(missing, k)
		}
	}
	for k := range inDoc {
		if !inCode[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, k := range missing {
		t.Errorf("%s %q is accepted by assay but not documented in docs/spec.md: %s", what, k, add)
	}
	for _, k := range extra {
		t.Errorf("docs/spec.md documents %s %q, which assay does not accept", what, k)
	}
}

// Every key the spec types accept has a row under "## Spec keys", and
// every row names a key assay accepts.
func TestSpecKeysDocumented(t *testing.T) {
	var code []string
	specKeys("", reflect.TypeOf(spec.Spec{}), &code)
	code = append(code, writtenKeys...)
	if !slices.Contains(code, "targets[].limits.rpm") || !slices.Contains(code, "gate.rules[].max_drop") {
		t.Fatalf("the walk of the spec types missed nested keys: %v", code)
	}
	diffSets(t, "spec key", "add a row for it under \"## Spec keys\" (key, type, default, meaning)", code, tableKeys(section(t, readSpecDoc(t), "Spec keys")))
}

// writtenKeys are really accepted by the loader (so the list above is not
// stale), and an undocumented key is refused, as the page says.
func TestSpecDocStrictness(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cases.jsonl"), []byte(`{"q": "a", "a": "b", "t": "x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "dataset: {path: cases.jsonl, expected: a, tags: {tier: t}}\nprompt: {user: '{{.q}}'}\ntargets: [{name: m, provider: exec, command: [app]}]\nscorers: [{type: equals}]\n"
	if _, err := spec.Parse(filepath.Join(dir, "assay.yaml"), []byte(base)); err != nil {
		t.Fatalf("a spec with dataset.tags: %v", err)
	}
	written := base + "tools: [{name: f, description: d, parameters: {type: object}}]\n" +
		"response_format: {json_schema: {name: r, schema: {type: object}, strict: true}}\n"
	if _, err := spec.Parse(filepath.Join(dir, "assay.yaml"), []byte(written)); err != nil {
		t.Fatalf("a spec with tools and response_format: %v", err)
	}
	_, err := spec.Parse(filepath.Join(dir, "assay.yaml"), []byte(base+"colour: blue\n"))
	if err == nil || !strings.Contains(err.Error(), "assay.yaml:5:1") {
		t.Fatalf("an unknown key: got %v, want a problem at assay.yaml:5:1", err)
	}
}

var paramsLine = regexp.MustCompile(`^Parameters: (.*)\.$`)
var typeHeading = regexp.MustCompile("^### `([a-z_]+)`$")

// Every scorer type has a "### `type`" heading under "## Scorers" whose
// "Parameters:" line names exactly the parameters the type takes.
func TestScorerTypesDocumented(t *testing.T) {
	lines := section(t, readSpecDoc(t), "Scorers")
	doc := map[string][]string{}
	var cur string
	for _, l := range lines {
		if m := typeHeading.FindStringSubmatch(l); m != nil {
			cur = m[1]
			if _, dup := doc[cur]; dup {
				t.Errorf("scorer type %q has two headings", cur)
			}
			doc[cur] = nil
			continue
		}
		if m := paramsLine.FindStringSubmatch(l); m != nil && cur != "" {
			if m[1] == "none" {
				doc[cur] = []string{}
				continue
			}
			for _, p := range strings.Split(m[1], ", ") {
				doc[cur] = append(doc[cur], strings.Trim(p, "`"))
			}
		}
	}
	code := scorer.TypeParams()
	var codeTypes, docTypes []string
	for k := range code {
		codeTypes = append(codeTypes, k)
	}
	for k := range doc {
		docTypes = append(docTypes, k)
	}
	diffSets(t, "scorer type", "add a \"### `TYPE`\" heading under \"## Scorers\" with a \"Parameters:\" line and when it passes", codeTypes, docTypes)
	for typ, params := range code {
		got, ok := doc[typ]
		if !ok {
			continue
		}
		if got == nil {
			t.Errorf("scorer %s: no \"Parameters:\" line under its heading (write \"Parameters: none.\" when it takes none)", typ)
			continue
		}
		diffSets(t, "parameter of scorer "+typ+":", "name it on the \"Parameters:\" line under its heading (and give it a scorers[] row under \"## Spec keys\" if it is a new key)", params, got)
	}
}

// The CEL table lists exactly the variables a cel scorer may read and the
// keys of meta.
func TestCELVariablesDocumented(t *testing.T) {
	vars, meta := scorer.CELVariables()
	if len(vars) == 0 || len(meta) == 0 {
		t.Fatalf("no CEL variables (%v) or meta keys (%v) from the scorer package", vars, meta)
	}
	var code []string
	code = append(code, vars...)
	for _, k := range meta {
		code = append(code, "meta."+k)
	}
	diffSets(t, "CEL variable", "add a row for it under \"## CEL variables\"", code, tableKeys(section(t, readSpecDoc(t), "CEL variables")))
}

func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is needed to run the documented exec example")
		}
		t.Skip("no python3")
	}
	return py
}

func execProvider(t *testing.T, dir string, env ...string) *execprov.Provider {
	t.Helper()
	tg := &spec.Target{Name: "app", Provider: "exec", Command: []string{python(t), "app.py"}, Env: env}
	p, err := execprov.New(tg, dir, execprov.Options{Getenv: os.Getenv, Withhold: []string{"answer"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func complete(t *testing.T, p provider.Provider, req *provider.Request) (*provider.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.Complete(ctx, req)
}

// The page's example program runs as an exec target and replies as the
// page says: an answer with usage and model, or an error the run records
// as a loud exec_error.
func TestExecExampleRuns(t *testing.T) {
	doc := readSpecDoc(t)
	_, rest, ok := strings.Cut(doc, "### Example program")
	if !ok {
		t.Fatal("docs/spec.md has no \"### Example program\"")
	}
	_, rest, ok = strings.Cut(rest, "```python\n")
	program, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("no ```python block under \"### Example program\"")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.py"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	p := execProvider(t, dir)
	resp, err := complete(t, p, &provider.Request{
		CaseID: "17", Epoch: 1,
		Messages: []provider.Message{{Role: "user", Content: "What is the capital of France?"}},
		Vars:     map[string]any{"question": "What is the capital of France?"},
	})
	if err != nil {
		t.Fatalf("the example program failed: %v", err)
	}
	if resp.Text != "Paris" || resp.Model != "table-v1" || resp.Usage.Input != 6 || resp.Usage.Output != 1 {
		t.Errorf("reply %+v: want Paris from table-v1 with usage 6 in, 1 out", resp)
	}
	_, err = complete(t, p, &provider.Request{CaseID: "18", Epoch: 1, Vars: map[string]any{"question": "Who?"}})
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.KindExec || !strings.Contains(err.Error(), "no answer for case 18") {
		t.Errorf("an unknown question: got %v, want an exec_error naming case 18", err)
	}
}

// The request a program reads has exactly the keys the page's request
// table lists, and never the expected answer.
func TestExecRequestDocumented(t *testing.T) {
	dir := t.TempDir()
	echo := "import json, sys\nreq = json.load(sys.stdin)\njson.dump({'output': json.dumps(req)}, sys.stdout)\n"
	if err := os.WriteFile(filepath.Join(dir, "app.py"), []byte(echo), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err := complete(t, execProvider(t, dir), &provider.Request{
		CaseID: "17", Epoch: 2, Model: "my-rag",
		Messages:       []provider.Message{{Role: "user", Content: "hi"}},
		Vars:           map[string]any{"question": "q", "answer": "secret"},
		Tools:          []provider.Tool{{Name: "search", Parameters: json.RawMessage(`{"type":"object"}`)}},
		ToolChoice:     provider.ToolChoiceAuto,
		ResponseFormat: &provider.ResponseFormat{Name: "answer", Schema: json.RawMessage(`{"type":"object"}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(resp.Text), &got); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	_, req, _ := strings.Cut(readSpecDoc(t), "### Request")
	req, _, _ = strings.Cut(req, "### Reply")
	diffSets(t, "exec request key", "add a row for it to the request table under \"### Request\"", keys, tableKeys(strings.Split(req, "\n")))
	if got["epoch"] != 2.0 {
		t.Errorf("epoch %v, want 2 as sent", got["epoch"])
	}
	if vars, _ := got["vars"].(map[string]any); vars["answer"] != nil || vars["question"] != "q" {
		t.Errorf("vars %v: want the question and not the withheld answer", got["vars"])
	}
}
