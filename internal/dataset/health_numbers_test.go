package dataset

import (
	"testing"
)

// The label distribution counts a number once however it is written: 18
// and 18.0 are one answer, 1.50 and 1.5 another; whole numbers beyond 2^53
// keep their digits, so 9007199254740993 and 9007199254740992 stay two.
func TestHealthNumberLabels(t *testing.T) {
	data := `{"q": "a", "answer": 18}
{"q": "b", "answer": 18.0}
{"q": "c", "answer": 1.50}
{"q": "d", "answer": 1.5}
{"q": "e", "answer": 9007199254740993}
{"q": "f", "answer": 9007199254740992}
`
	sp := specFor(t, "d.jsonl", data, "  expected: answer\n")
	h, err := CheckHealth(sp, HealthOptions{TextFields: []string{"q"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, vc := range h.Labels.Top {
		got[vc.Value] = vc.Count
	}
	want := map[string]int{"18": 2, "1.5": 2, "9007199254740993": 1, "9007199254740992": 1}
	if h.Labels.Distinct != 4 || len(got) != 4 {
		t.Fatalf("labels %+v; want 4 distinct", h.Labels)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("label %s counted %d, want %d (labels %v)", k, got[k], n, got)
		}
	}
}
