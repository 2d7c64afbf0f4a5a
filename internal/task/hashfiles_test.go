package task

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
)

// hashFixture writes a task whose scorers read a JSON schema (which $refs a
// second file), a file:// rubric, and whose system prompt is a file.
func hashFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cases.jsonl", `{"question": "q1", "answer": "{\"total\": 1}"}`+"\n")
	write("prompts/system.txt", "You are terse.")
	write("rubrics/polite.md", "The reply is polite.")
	write("schemas/invoice.json", `{"type": "object", "properties": {"total": {"$ref": "defs/money.json"}}, "required": ["total"]}`)
	write("schemas/defs/money.json", `{"type": "number"}`)
	write("assay.yaml", `dataset: {path: cases.jsonl, expected: answer}
prompt:
  system: file://prompts/system.txt
  user: "{{.question}}"
output: {format: json}
targets:
  - {name: m, provider: openai, model: gpt-x, api_key_env: K}
  - {name: grader, provider: openai, model: gpt-y, api_key_env: K}
scorers:
  - {name: valid, type: json_schema, schema: file://schemas/invoice.json, primary: true}
  - {name: polite, type: judge, target: grader, rubric: file://rubrics/polite.md}
`)
	return dir
}

func loadHashes(t *testing.T, dir string) (*spec.Spec, string, string) {
	t.Helper()
	tk, err := Load(filepath.Join(dir, "assay.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tk.Spec, tk.Spec.ScorersHash(), tk.Spec.PromptHash()
}

// TestHashesCoverFiles: editing any file a scorer or the prompt reads —
// the schema, a file it $refs, the rubric, the prompt file — changes the
// scorers (or prompt) hash, and Files names the file with its new hash.
// Before, a schema edit changed no hash: diff said "same" and a resume
// mixed the two schemas.
func TestHashesCoverFiles(t *testing.T) {
	for _, tc := range []struct {
		file    string
		body    string
		scorers bool // the scorers hash must change (else the prompt hash)
	}{
		{file: "schemas/invoice.json", body: `{"type": "object", "required": ["total", "currency"]}`, scorers: true},
		{file: "schemas/defs/money.json", body: `{"type": "string"}`, scorers: true},
		{file: "rubrics/polite.md", body: "The reply is rude.", scorers: true},
		{file: "prompts/system.txt", body: "You are verbose."},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := hashFixture(t)
			sp, scorers, prompt := loadHashes(t, dir)
			before := digestOf(t, sp, tc.file)
			// Loading again with nothing changed gives the same hashes.
			if _, s2, p2 := loadHashes(t, dir); s2 != scorers || p2 != prompt {
				t.Fatalf("hashes not stable: %s/%s then %s/%s", scorers, prompt, s2, p2)
			}
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			sp2, scorers2, prompt2 := loadHashes(t, dir)
			if tc.scorers {
				if scorers2 == scorers {
					t.Errorf("editing %s left the scorers hash at %s", tc.file, scorers)
				}
				if prompt2 != prompt {
					t.Errorf("editing %s changed the prompt hash", tc.file)
				}
			} else {
				if prompt2 == prompt {
					t.Errorf("editing %s left the prompt hash at %s", tc.file, prompt)
				}
				if scorers2 != scorers {
					t.Errorf("editing %s changed the scorers hash", tc.file)
				}
			}
			if after := digestOf(t, sp2, tc.file); after.SHA256 == before.SHA256 {
				t.Errorf("Files has the same hash for %s after the edit", tc.file)
			}
		})
	}
}

func digestOf(t *testing.T, sp *spec.Spec, path string) spec.FileDigest {
	t.Helper()
	for _, f := range sp.Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("Files has no %s: %+v", path, sp.Files)
	return spec.FileDigest{}
}

// TestRubricFileIsRead: a file:// rubric is the file's text, not the
// literal "file://…" (which a judge would have graded by).
func TestRubricFileIsRead(t *testing.T) {
	sp, _, _ := loadHashes(t, hashFixture(t))
	sc := sp.Scorers[1]
	if sc.Rubric != "The reply is polite." || sc.RubricFile != "rubrics/polite.md" {
		t.Fatalf("rubric %q from %q", sc.Rubric, sc.RubricFile)
	}
}

// TestSecondCompileUsesHashedSchema: run.go compiles the scorers a second
// time (with live judges) after the run record took the scorers hash; a
// schema edited in between must not be what scores, or the hash would name
// a schema the run never used.
func TestSecondCompileUsesHashedSchema(t *testing.T) {
	dir := hashFixture(t)
	sp, hash, _ := loadHashes(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "schemas/defs/money.json"), []byte(`{"type": "string"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	set, probs := scorer.Compile(sp)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if got := sp.ScorersHash(); got != hash {
		t.Errorf("a second compile changed the scorers hash: %s → %s", hash, got)
	}
	// Under the hashed schema a number total is valid; under the edited one
	// it is not.
	found := false
	for _, sc := range set.Score(context.Background(), &dataset.Case{ID: "c1"}, &record.Result{Raw: `{"total": 5}`}) {
		if sc.Scorer == "valid" {
			found = true
			if !sc.Pass {
				t.Errorf("the second compile used the edited schema: %s", sc.Reason)
			}
		}
	}
	if !found {
		t.Fatal("no score from the json_schema scorer")
	}
	// A fresh load reads the edit (and so hashes differently).
	if _, h2, _ := loadHashes(t, dir); h2 == hash {
		t.Error("a fresh load did not see the edit")
	}
}

// TestSchemaRefBounded: a file a schema $refs is read bounded, like a
// prompt file; a huge one is a problem at the scorer, not a read of it all.
func TestSchemaRefBounded(t *testing.T) {
	dir := hashFixture(t)
	big := `{"type": "number", "description": "` + strings.Repeat("x", spec.MaxPromptBytes) + `"}`
	if err := os.WriteFile(filepath.Join(dir, "schemas/defs/money.json"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(filepath.Join(dir, "assay.yaml"))
	if err == nil || !strings.Contains(err.Error(), "schema does not compile") || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Fatalf("want a schema problem saying the file is too large, got %v", err)
	}
}
