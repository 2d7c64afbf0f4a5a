package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// filesTask writes a task whose scorers read a JSON schema that $refs a
// second file and a file:// rubric, and whose system prompt is a file.
func filesTask(t *testing.T, dir, url string) string {
	t.Helper()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), `{"id":"c1","say":"a"}`+"\n"+`{"id":"c2","say":"b"}`+"\n")
	writeFile(t, filepath.Join(dir, "prompts/system.txt"), "Reply with an invoice.")
	writeFile(t, filepath.Join(dir, "rubrics/polite.md"), "The reply is polite.")
	writeFile(t, filepath.Join(dir, "schemas/invoice.json"), `{"type": "object", "properties": {"total": {"$ref": "defs/money.json"}}, "required": ["total"]}`)
	writeFile(t, filepath.Join(dir, "schemas/defs/money.json"), `{"type": "number"}`)
	path := filepath.Join(dir, "assay.yaml")
	writeFile(t, path, fmt.Sprintf(`name: files
dataset: {path: cases.jsonl, id: id}
prompt: {system: file://prompts/system.txt, user: "{{.say}}"}
output: {format: json}
targets:
  - {name: oa, provider: openai, model: m, base_url: %[1]s/v1}
  - {name: grader, provider: openai, model: g, base_url: %[1]s/v1}
scorers:
  - {name: valid, type: json_schema, schema: file://schemas/invoice.json, primary: true}
  - {name: polite, type: judge, target: grader, rubric: file://rubrics/polite.md}
run: {timeout: 5s, retries: 1}
`, url))
	return path
}

// TestEditedScorerFileRefusesResumeAndShowsInDiff: a JSON schema edit (or
// an edit of a file it $refs, of a file:// rubric or prompt) used to change
// no hash: a --resume mixed two schemas in one run and diff said "same".
// Now the resume is refused (exit 1) naming the file, and diff names it.
func TestEditedScorerFileRefusesResumeAndShowsInDiff(t *testing.T) {
	t.Parallel()
	_, url := startMock(t, mock.Options{Default: `{"total": 5}`})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := filesTask(t, dir, url)
	first := runJSON(t, cliEnv{}, "run", path, "--db", db, "--targets", "oa", "--no-cache")
	if first.Status != "complete" {
		t.Fatalf("first run: %+v", first)
	}

	edits := []struct{ file, body, hash string }{
		{"schemas/invoice.json", `{"type": "object", "properties": {"total": {"$ref": "defs/money.json"}}, "required": ["total", "currency"]}`, "scorers"},
		{"schemas/defs/money.json", `{"type": "string"}`, "scorers"},
		{"rubrics/polite.md", "The reply is rude.", "scorers"},
		{"prompts/system.txt", "Reply with a poem.", "prompt"},
	}
	for _, e := range edits {
		p := filepath.Join(dir, e.file)
		orig := readFileT(t, p)
		writeFile(t, p, e.body)
		inv := runCLI(t, cliEnv{}, "run", path, "--db", db, "--resume", first.RunID, "--no-cache")
		if inv.code != ExitErr {
			t.Errorf("resume after editing %s: exit %d, want %d\n%s", e.file, inv.code, ExitErr, inv.stderr)
		}
		if !regexp.MustCompile(e.hash + ` [0-9a-f]{12} → [0-9a-f]{12}`).MatchString(inv.stderr) {
			t.Errorf("resume after editing %s: stderr does not name the %s hash change:\n%s", e.file, e.hash, inv.stderr)
		}
		for _, want := range []string{e.file + " changed (read by the " + e.hash + ")", "start a new run instead"} {
			if !strings.Contains(inv.stderr, want) {
				t.Errorf("resume after editing %s: stderr lacks %q:\n%s", e.file, want, inv.stderr)
			}
		}
		writeFile(t, p, orig)
	}
	// With every file back as it was, the resume is allowed.
	if inv := runCLI(t, cliEnv{}, "run", path, "--db", db, "--resume", first.RunID, "--no-cache"); inv.code != ExitOK {
		t.Fatalf("resume with nothing changed: exit %d\n%s", inv.code, inv.stderr)
	}

	validateHash := func() string {
		t.Helper()
		inv := runCLI(t, cliEnv{}, "validate", path, "--format", "json")
		var v struct{ Hashes map[string]string }
		if err := json.Unmarshal([]byte(inv.stdout), &v); err != nil || v.Hashes["scorers"] == "" {
			t.Fatalf("validate --format json: %v\n%s%s", err, inv.stdout, inv.stderr)
		}
		return v.Hashes["scorers"]
	}
	hashBefore := validateHash()
	for _, e := range edits {
		writeFile(t, filepath.Join(dir, e.file), e.body)
	}
	if validateHash() == hashBefore {
		t.Errorf("validate shows the same scorers hash after the edits")
	}
	second := runJSON(t, cliEnv{}, "run", path, "--db", db, "--targets", "oa", "--no-cache")

	inv := runCLI(t, cliEnv{}, "diff", first.RunID, second.RunID, "--db", db, "--format", "json")
	if inv.code != ExitOK {
		t.Fatalf("diff exit %d: %s", inv.code, inv.stderr)
	}
	var d struct {
		Versions []struct {
			Name string
			Same bool
		}
		Spec struct {
			Files []struct{ Path, For, Change string }
		}
	}
	if err := json.Unmarshal([]byte(inv.stdout), &d); err != nil {
		t.Fatalf("%v\n%s", err, inv.stdout)
	}
	for _, v := range d.Versions {
		if (v.Name == "scorers_hash" || v.Name == "prompt_hash") && v.Same {
			t.Errorf("diff says %s is the same after the edits", v.Name)
		}
	}
	got := map[string]string{}
	for _, f := range d.Spec.Files {
		got[f.Path] = f.For + " " + f.Change
	}
	for _, e := range edits {
		if got[e.file] != e.hash+" changed" {
			t.Errorf("diff spec.files[%s] = %q, want %q (all: %+v)", e.file, got[e.file], e.hash+" changed", d.Spec.Files)
		}
	}
	// compare and drift warn that the definition of correct changed, and
	// name the files.
	for _, cmd := range []string{"compare", "drift"} {
		inv := runCLI(t, cliEnv{}, cmd, first.RunID, second.RunID, "--db", db)
		if !strings.Contains(inv.stdout+inv.stderr, "files: rubrics/polite.md changed, schemas/defs/money.json changed, schemas/invoice.json changed") {
			t.Errorf("%s does not name the changed scorer files:\n%s%s", cmd, inv.stdout, inv.stderr)
		}
	}
	text := runCLI(t, cliEnv{}, "diff", first.RunID, second.RunID, "--db", db)
	if !strings.Contains(text.stdout, "file schemas/invoice.json changed (read by the scorers)") {
		t.Errorf("text diff does not name the schema file:\n%s", text.stdout)
	}
}
