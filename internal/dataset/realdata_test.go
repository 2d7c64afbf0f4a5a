package dataset

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/assay-eval/assay/internal/shareddata"

	"github.com/assay-eval/assay/internal/spec"
)

// sharedData returns ../shared/data (see package shareddata for the CI rule).
func sharedData(t *testing.T) string { return shareddata.Path(t, "") }

func realSpec(t *testing.T, dataset string) *spec.Spec {
	t.Helper()
	src := "dataset:\n" + dataset + "prompt: {user: \"Q: {{.question}}\"}\ntargets: [{name: a, provider: exec, command: [x]}]\n"
	sp, err := spec.Parse(filepath.Join(sharedData(t), "assay.yaml"), []byte(src))
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	return sp
}

// TestGSM8K reads the 1,319 GSM8K test problems with the DESIGN.md spec:
// the step-count tier (number of <<calc>> annotations) runs 0 to 8, and the
// expected answer is the number after "####".
func TestGSM8K(t *testing.T) {
	sp := realSpec(t, `  path: gsm8k/test.jsonl
  expected: answer
  expected_extract: '####\s*(.+)$'
  tags:
    tier: 'string(size(case.answer.split("<<")) - 1)'
`)
	info, err := Scan(sp)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if info.Count != 1319 || info.Rows != 1319 {
		t.Errorf("count %d rows %d, want 1319", info.Count, info.Rows)
	}
	if len(info.Fields) != 2 || info.Fields[0] != "answer" || info.Fields[1] != "question" {
		t.Errorf("fields = %v", info.Fields)
	}
	tiers := map[int]int{}
	n := 0
	err = Each(sp, func(c *Case) error {
		n++
		tier, err := strconv.Atoi(c.Tags["tier"])
		if err != nil {
			t.Fatalf("case %s: tier %q", c.ID, c.Tags["tier"])
		}
		tiers[tier]++
		if _, err := strconv.ParseFloat(c.Expected.(string), 64); err != nil {
			// Some answers use thousands separators; all are numbers.
			if _, err := strconv.ParseFloat(stripCommas(c.Expected.(string)), 64); err != nil {
				t.Errorf("case %s: expected %q is not a number", c.ID, c.Expected)
			}
		}
		if c.ID != strconv.Itoa(c.Line) {
			t.Errorf("id %s on line %d", c.ID, c.Line)
		}
		return nil
	})
	if err != nil || n != 1319 {
		t.Fatalf("Each: %v after %d", err, n)
	}
	for tier := range tiers {
		if tier < 0 || tier > 8 {
			t.Errorf("tier %d outside 0..8", tier)
		}
	}
	if tiers[0] == 0 || tiers[8] == 0 {
		t.Errorf("tiers %v: want both ends of 0..8 present", tiers)
	}
	// The first problem (Janet's ducks) has two calculations and answer 18.
	first := true
	Each(sp, func(c *Case) error {
		if first && (c.Tags["tier"] != "2" || c.Expected != "18") {
			t.Errorf("first case: tier %s expected %v", c.Tags["tier"], c.Expected)
		}
		first = false
		return nil
	})
}

func stripCommas(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != ',' {
			out = append(out, s[i])
		}
	}
	return string(out)
}

// TestGSM1K reads the 50 public GSM1K problems from CSV.
func TestGSM1K(t *testing.T) {
	sp := realSpec(t, "  path: gsm1k/gsm1k_public_50.csv\n  expected: answer\n")
	info, err := Scan(sp)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if info.Count != 50 {
		t.Errorf("count = %d, want 50", info.Count)
	}
	var firstID string
	lastLine := 0
	err = Each(sp, func(c *Case) error {
		if firstID == "" {
			firstID = c.ID
			if c.Expected != "7" || c.Line != 2 {
				t.Errorf("first row: expected %v line %d", c.Expected, c.Line)
			}
		}
		if c.Line <= lastLine {
			t.Errorf("lines must increase: %d after %d", c.Line, lastLine)
		}
		lastLine = c.Line
		if q, _ := c.Vars["question"].(string); q == "" {
			t.Errorf("case %s has no question", c.ID)
		}
		return nil
	})
	if err != nil || firstID != "1" {
		t.Fatalf("Each: %v (first id %q)", err, firstID)
	}
}
