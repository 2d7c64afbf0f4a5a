package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/probe"
	"github.com/assay-eval/assay/internal/stats"
)

// What came from a dataset or a model is shown quoted in the text report:
// a case ID or a rewriter's error text cannot draw lines or send terminal
// escapes. (Moved from probe with the renderer; only the calls changed.)
func TestTextReportQuotesData(t *testing.T) {
	fs, err := probe.Assess([]string{"a"}, []stats.PairTable{{Both: 5, AOnly: 1, BOnly: 1, Neither: 3}}, probe.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	r := &probe.Report{Spec: "s", Targets: fs, Method: probe.NewMethod(probe.DefaultOptions(), 1)}
	r.Finish()
	r.Cases = probe.Cases{Dataset: 12, Paired: 10, NoTwin: 1, NoTwinIDs: []string{"x\n\x1b[31mred"},
		RewriteFailed: 1, RewriteByKind: map[string]int{probe.FailCall: 1},
		RewriteFailures: []probe.Failure{{CaseID: "c\r1", Kind: probe.FailCall, Reason: "server_error: <html>\n\x1b[2J</html>"}}}
	var b bytes.Buffer
	if err := NewRegistry().Probe.Render(&b, "text", r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\r") || !strings.Contains(out, `"x\n\x1b[31mred"`) || !strings.Contains(out, `"c\r1": call_error: server_error: <html> [2J</html>`) {
		t.Errorf("text report:\n%s", out)
	}
	var j bytes.Buffer
	if err := NewRegistry().Probe.Render(&j, "json", r); err != nil {
		t.Fatal(err)
	}
	var back probe.Report
	if err := json.Unmarshal(j.Bytes(), &back); err != nil || back.Cases.NoTwinIDs[0] != "x\n\x1b[31mred" {
		t.Errorf("JSON round trip: %v %+v", err, back.Cases)
	}
}
