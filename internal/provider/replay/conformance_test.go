package replay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/providertest"
	"github.com/assay-eval/assay/internal/spec"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		Name: "replay",
		New: func(t *testing.T, reply string) provider.Provider {
			dir := t.TempDir()
			f, err := os.Create(filepath.Join(dir, "recorded.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			enc := json.NewEncoder(f)
			for _, q := range providertest.Questions() {
				if err := enc.Encode(map[string]any{"question": q, "model_a": map[string]any{"solution": reply}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			p, err := New(&spec.Target{Name: "conformance", Replay: &spec.Replay{Path: "recorded.jsonl", Join: "question", Output: "model_a.solution"}}, dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			return p
		},
		Calls: func(t *testing.T, calls []provider.ToolCall) provider.Provider {
			// Recorded as a JSON list whose arguments are strings (as
			// written); calls and no output are a whole reply.
			var lines []string
			for _, q := range providertest.Questions() {
				b, err := json.Marshal(map[string]any{"question": q, "model_a": map[string]any{"tool_calls": calls}})
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, string(b))
			}
			return newReplay(t, spec.Replay{Join: "question", Output: "model_a.solution"}, lines...)
		},
	})
}
