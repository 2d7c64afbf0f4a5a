package task

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/spec"
)

// FuzzHistoryRows feeds arbitrary dataset files to the check of every
// case's message history (prompt.messages_field), in both formats: it never
// panics, and every problem it reports is at a line of the dataset.
func FuzzHistoryRows(f *testing.F) {
	f.Add(`{"h": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [{"id": "c", "name": "f", "arguments": {"x": 1e999}}]}, {"role": "tool", "tool_call_id": "c", "content": "ok"}]}`+"\n", false)
	f.Add(`{"h": "[{\"role\": \"tool\"}]"}`+"\n"+`{"h": null}`+"\n"+`{"h": [[]]}`+"\n", false)
	f.Add("h\n\"[{\"\"role\"\": \"\"user\"\", \"\"content\"\": \"\"x\"\"}]\"\nnot json\n", true)
	f.Add(`{"h": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}]}]}`+"\n", false)
	f.Fuzz(func(t *testing.T, src string, csv bool) {
		if len(src) > 1<<14 {
			return
		}
		dir := t.TempDir()
		name, format := "d.jsonl", "jsonl"
		if csv {
			name, format = "d.csv", "csv"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		sp := &spec.Spec{File: filepath.Join(dir, "assay.yaml"), Dir: dir,
			Dataset: spec.Dataset{Path: name, Format: format, ID: spec.DefaultID},
			Prompt:  spec.Prompt{MessagesField: "h"}}
		info, err := dataset.Scan(sp)
		var ps spec.Problems
		if err != nil && !errors.As(err, &ps) {
			return
		}
		if info == nil {
			return
		}
		probs, err := checkHistories(sp, info)
		if err != nil {
			t.Fatalf("checkHistories: %v", err)
		}
		for _, p := range probs {
			if p.File != info.Path || p.Line < 1 || p.Col < 1 || p.Msg == "" {
				t.Fatalf("bad problem %#v", p)
			}
		}
		if len(probs) > dataset.MaxProblems+1 {
			t.Fatalf("%d problems: the cap is not applied", len(probs))
		}
	})
}
