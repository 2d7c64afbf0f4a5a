package scorer

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/assay-eval/assay/internal/shareddata"

	"github.com/assay-eval/assay/internal/spec"
)

// TestGSM8KAgreement is the outside check of the parser and the equals
// scorer: the recorded solutions of four models on the 1,319 GSM8K test
// problems, graded by extracting the final "A: N" line of the solution and
// of the ground truth and comparing them after trim and no_commas, must
// agree with the authors' is_correct on every one of the 4 × 1,319.
func TestGSM8KAgreement(t *testing.T) {
	f, err := os.Open(shareddata.Path(t, "gsm8k/example_model_solutions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	const extract = `A:\s*(.+)$`
	sp := newSpec(spec.Output{Format: "regex", Extract: extract},
		spec.Scorer{Name: "correct", Type: "equals", Normalize: []string{"trim", "no_commas"}, Primary: true})
	set := mustCompile(t, sp)
	expParser, err := NewParser("regex", extract)
	if err != nil {
		t.Fatal(err)
	}

	models := []string{"6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"}
	type solution struct {
		IsCorrect *bool   `json:"is_correct"`
		Solution  *string `json:"solution"`
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	lines, agree, total := 0, 0, 0
	correct := map[string]int{}
	for sc.Scan() {
		lines++
		var row map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		var truth string
		if err := json.Unmarshal(row["ground_truth"], &truth); err != nil {
			t.Fatalf("line %d: ground_truth: %v", lines, err)
		}
		expected, err := expParser.Parse(truth)
		if err != nil {
			t.Fatalf("line %d: ground truth has no answer line: %v", lines, err)
		}
		for _, m := range models {
			var s solution
			if err := json.Unmarshal(row[m], &s); err != nil || s.IsCorrect == nil || s.Solution == nil {
				t.Fatalf("line %d: %s: missing solution or is_correct (%v)", lines, m, err)
			}
			score := call{raw: *s.Solution, expected: expected}.one(t, set)
			total++
			if score.Pass == *s.IsCorrect {
				agree++
			} else if total-agree <= 10 {
				t.Errorf("line %d %s: scored pass=%v (%s), authors say is_correct=%v", lines, m, score.Pass, score.Reason, *s.IsCorrect)
			}
			if score.Pass {
				correct[m]++
			}
			if !score.Pass && score.Shape == ShapePass {
				t.Errorf("line %d %s: failure with shape pass", lines, m)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines != 1319 || total != 4*1319 {
		t.Fatalf("read %d lines, %d solutions; want 1319 and %d", lines, total, 4*1319)
	}
	if agree != total {
		t.Fatalf("agreement %d/%d; want all", agree, total)
	}
	t.Logf("agreement %d/%d; correct per model: %v", agree, total, correct)
}
