package probe

import (
	"encoding/json"
	"testing"
	"time"
)

// A stored twin's numbers come back as written: its own answer
// 9007199254740993 is not rounded to the float64 9007199254740992, so an
// exact scorer grades the twin as it grades the original.
func TestStoredTwinKeepsNumbers(t *testing.T) {
	tw := &Twin{CaseID: "c1", Line: 3, Vars: map[string]any{"q": "x", "rate": json.Number("1.50")},
		Expected: json.Number("9007199254740993"), OwnExpected: true}
	r, err := tw.Record("set", "file", "sha256:x", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	if back.Expected != json.Number("9007199254740993") || back.Vars["rate"] != json.Number("1.50") {
		t.Errorf("round trip gave expected %#v, vars %#v", back.Expected, back.Vars)
	}
}
