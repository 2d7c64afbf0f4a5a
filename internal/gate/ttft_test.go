package gate

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/runview"
)

// withTTFT sets a target's time to first token; NaN marks a call that
// did not stream.
func withTTFT(t *runview.Target, ttft []float64) *runview.Target {
	t.FirstTokenMS = ttft
	return t
}

// ttft_p95 compares the p95 of time to first token, not of the whole call:
// a candidate whose calls take as long but start 80 ms later fails a 20 ms
// rise and passes a 200 ms one, while latency_p95 sees no change.
func TestTTFTWorsening(t *testing.T) {
	n := 200
	lat, bt, ct := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		lat[i] = 1000 + float64(i%40)*10
		bt[i] = 100 + float64(i%50)*2
		ct[i] = bt[i] + 80
	}
	base := testSnap("b", "sha256:d", 1, ids(n), nil, withTTFT(testTarget("m", passes(n, 150), nil, nil, lat, "b"), bt))
	cand := testSnap("c", "sha256:d", 1, ids(n), nil, withTTFT(testTarget("m", passes(n, 150), nil, nil, lat, "c"), ct))
	for _, tc := range []struct{ rule, verdict string }{
		{"ttft_p95 max_rise=20ms", Fail},
		{"ttft_p95 max_rise=200ms", Pass},
		{"ttft_p95 max_rise=10%", Fail},
		{"ttft_p95 max_rise=100%", Pass},
		{"ttft_p95 max=150ms", Fail},
		{"ttft_p95 max=1s", Pass},
		{"latency_p95 max_rise=20ms", Pass},
	} {
		c := onlyCheck(t, evaluate(t, base, cand, mustRules(t, tc.rule), Options{}))
		if c.Verdict != tc.verdict {
			t.Errorf("%s: %s (%s), want %s", tc.rule, c.Verdict, c.Reason, tc.verdict)
		}
	}
	c := onlyCheck(t, evaluate(t, base, cand, mustRules(t, "ttft_p95 max_rise=20ms"), Options{}))
	if math.Abs(float64(c.Delta)-80) > 1e-9 || c.Metric != "ttft_p95" {
		t.Errorf("%s delta %v, want 80 ms (every first token +80)", c.Metric, c.Delta)
	}
	if !strings.Contains(c.Reason, "time to first token") {
		t.Errorf("reason does not name the metric: %s", c.Reason)
	}
}

// Like latency_p95, ttft_p95 decides nothing below 30 paired cases; a case
// is paired only when both sides streamed it, so 40 cases of which the
// candidate streamed 20 are 20 paired cases. A side that does not record
// first tokens, or cases where neither streamed, decide nothing and say so.
func TestTTFTNeedsThirtyStreamedPairs(t *testing.T) {
	n := 40
	bt, ct := make([]float64, n), make([]float64, n)
	for i := range n {
		bt[i], ct[i] = 100+float64(i), 1000+float64(i)
		if i%2 == 1 {
			ct[i] = math.NaN()
		}
	}
	base := testSnap("b", "sha256:d", 1, ids(n), nil, withTTFT(testTarget("m", passes(n, n), nil, nil, nil, "b"), bt))
	cand := testSnap("c", "sha256:d", 1, ids(n), nil, withTTFT(testTarget("m", passes(n, n), nil, nil, nil, "c"), ct))
	c := onlyCheck(t, evaluate(t, base, cand, mustRules(t, "ttft_p95 max_rise=10%"), Options{}))
	if c.Verdict != Inconclusive || c.N != 20 || !strings.Contains(c.Reason, "on 20 paired cases: the p95 rule needs at least 30") {
		t.Errorf("20 streamed pairs: %s n=%d (%s), want inconclusive on 20 paired cases", c.Verdict, c.N, c.Reason)
	}
	// Every case streamed on both sides: the tenfold rise fails.
	for i := range n {
		ct[i] = 1000 + float64(i)
	}
	if c := onlyCheck(t, evaluate(t, base, cand, mustRules(t, "ttft_p95 max_rise=10%"), Options{})); c.Verdict != Fail || c.N != n {
		t.Errorf("40 streamed pairs: %s n=%d (%s), want fail", c.Verdict, c.N, c.Reason)
	}
	old := testSnap("b", "sha256:d", 1, ids(n), nil, testTarget("m", passes(n, n), nil, nil, nil, "b"))
	old.Targets[0].FirstTokenMS = nil
	c = onlyCheck(t, evaluate(t, old, cand, mustRules(t, "ttft_p95 max_rise=10%"), Options{}))
	if c.Verdict != Inconclusive || !strings.Contains(c.Reason, "baseline does not record time to first token") {
		t.Errorf("baseline without first tokens: %s (%s), want inconclusive saying why", c.Verdict, c.Reason)
	}
	none := testSnap("c", "sha256:d", 1, ids(n), nil, testTarget("m", passes(n, n), nil, nil, nil, "c")) // newTarget: all NaN
	c = onlyCheck(t, evaluate(t, base, none, mustRules(t, "ttft_p95 max=1s"), Options{}))
	if c.Verdict != Inconclusive || !strings.Contains(c.Reason, "no case where both sides streamed") {
		t.Errorf("candidate never streamed: %s (%s), want inconclusive saying why", c.Verdict, c.Reason)
	}
}

// A baseline file keeps the first tokens (null for a call that did not
// stream), so a ttft_p95 gate needs no database; a file of a run that
// never streamed has no first_token_ms column; a first token for a result
// that does not exist is refused at its path.
func TestBaselineFileFirstToken(t *testing.T) {
	n := 4
	ttft := []float64{120, math.NaN(), 95.5, 300}
	s := testSnap("b", "sha256:d", 1, ids(n), nil, withTTFT(testTarget("m", passes(n, 3), nil, nil, nil, "b"), ttft))
	var buf bytes.Buffer
	if err := runview.WriteBaseline(&buf, s); err != nil {
		t.Fatal(err)
	}
	got, err := runview.ReadBaseline("base.json", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	g := got.Targets[0].FirstTokenMS
	for j, want := range ttft {
		if len(g) != n || math.IsNaN(want) != math.IsNaN(g[j]) || (!math.IsNaN(want) && math.Abs(g[j]-want) > 0.05) {
			t.Fatalf("first tokens after a round trip: %v, wrote %v", g, ttft)
		}
	}

	plain := testSnap("b", "sha256:d", 1, ids(n), nil, testTarget("m", passes(n, 3), nil, nil, nil, "b"))
	buf.Reset()
	if err := runview.WriteBaseline(&buf, plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "first_token_ms") {
		t.Errorf("a run that never streamed writes a first_token_ms column:\n%s", buf.String())
	}

	// A first token where the result is missing (latency null).
	var doc map[string]any
	buf.Reset()
	if err := runview.WriteBaseline(&buf, s); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	tg := doc["targets"].([]any)[0].(map[string]any)
	for _, col := range []string{"latency_ms", "cost_usd"} {
		tg[col].([]any)[1] = nil
	}
	tg["output_hash"].([]any)[1] = ""
	sh := tg["shape"].(string)
	tg["shape"] = sh[:1] + "-" + sh[2:]
	tg["first_token_ms"].([]any)[1] = 50.0
	bad, _ := json.Marshal(doc)
	_, err = runview.ReadBaseline("bad.json", bytes.NewReader(bad))
	if err == nil || !strings.Contains(err.Error(), "first_token_ms[1]") {
		t.Errorf("a first token for a missing result: err %v, want one naming targets[0].first_token_ms[1]", err)
	}
}
