package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/assay-eval/assay/internal/shareddata"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// sharedData returns ../shared/data/<name> (see package shareddata for the CI rule).
func sharedData(t *testing.T, name string) string { return shareddata.Path(t, name) }

// readJSONL decodes every line of a JSONL file independently of the code
// under test.
func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("%s:%d: %v", path, len(rows)+1, err)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// Replaying the recorded GSM8K solutions over the 1,319 test problems gives
// every problem its own recorded solution, for each of the four recorded
// configurations.
func TestReplayGSM8K(t *testing.T) {
	dir := sharedData(t, "gsm8k")
	problems := readJSONL(t, filepath.Join(dir, "test.jsonl"))
	records := readJSONL(t, filepath.Join(dir, "example_model_solutions.jsonl"))
	if len(problems) != 1319 || len(records) != 1319 {
		t.Fatalf("%d problems and %d records; want 1,319 of each", len(problems), len(records))
	}
	byQuestion := map[string]map[string]any{}
	for _, r := range records {
		byQuestion[r["question"].(string)] = r
	}

	for _, config := range []string{"175b_verification", "175b_finetuning", "6b_verification", "6b_finetuning"} {
		t.Run(config, func(t *testing.T) {
			p, err := New(&spec.Target{Name: config, Provider: "replay", Replay: &spec.Replay{
				Path: "example_model_solutions.jsonl", Join: "question", Output: config + ".solution",
			}}, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if p.Len() != 1319 {
				t.Errorf("indexed %d records; want 1,319", p.Len())
			}
			for i, prob := range problems {
				q := prob["question"].(string)
				resp, err := p.Complete(context.Background(), &provider.Request{CaseID: q, Vars: prob})
				if err != nil {
					t.Fatalf("problem %d: %v", i+1, err)
				}
				want := byQuestion[q][config].(map[string]any)["solution"].(string)
				if resp.Text != want {
					t.Fatalf("problem %d: reply %q; want the recorded solution %q", i+1, resp.Text, want)
				}
			}
		})
	}
}
