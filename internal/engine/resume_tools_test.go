package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// A tool's schema decides replies like the prompt does: changing the file
// it is read from refuses a resume, naming the prompt hash and the file.
func TestResumeRefusedWhenAToolChanged(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("assay.yaml", "dataset: {path: d.jsonl}\nprompt: {user: '{{.q}}'}\ntools: [file://tools.json]\ntool_choice: auto\n"+
		"targets: [{name: a, provider: exec, command: [./run]}]\n")
	write("tools.json", `{"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}`)
	load := func() *spec.Spec {
		t.Helper()
		sp, err := spec.Load(filepath.Join(dir, "assay.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	before := load()
	cfg, _ := json.Marshal(before)
	run := &record.Run{ID: "r1", SpecHash: before.Hash, PromptHash: before.PromptHash(), ScorersHash: before.ScorersHash(), DatasetHash: "sha256:d", Config: cfg}
	ds := &dataset.Info{Hash: "sha256:d"}
	if err := ResumeChanged(run, load(), ds); err != nil {
		t.Fatalf("nothing changed: %v", err)
	}
	write("tools.json", `{"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "integer"}}}}`)
	err := ResumeChanged(run, load(), ds)
	if err == nil {
		t.Fatal("a changed tool must refuse the resume")
	}
	for _, want := range []string{"resuming r1: what decides its verdicts changed since the run started", "prompt ", "tools.json changed (read by the prompt)", "start a new run instead"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
