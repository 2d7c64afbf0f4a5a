package cli

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// agentTask writes an agent spec of n cases against the mock at url: the
// model looks the order up (an exec handler), refunds it (a mock handler)
// and answers; three model calls per case.
func agentTask(t *testing.T, dir, url string, n, concurrency int) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"id":"c%d","ask":"Refund order %d"}`+"\n", i, i)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), b.String())
	writeFile(t, filepath.Join(dir, "lookup.sh"), "read -r call\necho found\n")
	path := filepath.Join(dir, "assay.yaml")
	writeFile(t, path, fmt.Sprintf(`name: agent
dataset: {path: cases.jsonl, id: id}
prompt: {user: "{{.ask}}"}
tools:
  - {name: lookup_order, parameters: {type: object, properties: {id: {type: integer}}}}
  - {name: refund, parameters: {type: object, properties: {id: {type: integer}}}}
agent:
  max_turns: 5
  tools:
    lookup_order: {exec: [sh, lookup.sh]}
    refund: {mock: {result: refunded}}
targets:
  - {name: oa, provider: openai, model: m, base_url: %s/v1, limits: {concurrency: %d}}
scorers:
  - {name: calls, type: cel, expr: 'size(trajectory) == 3 && raw == "refunded"'}
run: {timeout: 10s, retries: 8}
`, url, concurrency))
	return path
}

func agentMockOptions(latency time.Duration) mock.Options {
	return mock.Options{Latency: latency, ToolTurns: 2, Rules: []mock.Rule{
		{Match: "Refund order", Turn: 1, ToolCalls: []mock.ToolCall{{Name: "lookup_order", Arguments: `{"id": 7}`}}},
		{Match: "Refund order", Turn: 2, ToolCalls: []mock.ToolCall{{Name: "refund", Arguments: `{"id": 7}`}}},
	}}
}

// storedResults reads every stored result of a run.
func storedResults(t *testing.T, db, runID string) []record.Result {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []record.Result
	if err := st.Results(context.Background(), runID, func(r record.Result) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// The agent Must-show: kill -9 of the real binary in the middle of a run
// of three-turn conversations, then --resume: every case stored once with
// its whole trajectory (a conversation cut by the kill was not stored, and
// is made again from its start), the results stored before the kill kept
// as they were, and the model calls repeated no more than the
// conversations in flight plus one commit window's, three calls each.
func TestAgentKill9ThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := assayBinary(t)
	const (
		cases       = 150
		concurrency = 8
		latency     = 20 * time.Millisecond
		commitEvery = 100 * time.Millisecond
		turns       = 3
	)
	srv, url := startMock(t, agentMockOptions(latency))
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := agentTask(t, dir, url, cases, concurrency)

	var stderr bytes.Buffer
	cmd := exec.Command(bin, "run", path, "--db", db, "--no-cache", "--commit-every", commitEvery.String())
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for countResults(t, db) < cases/3 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no progress: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no chance to flush or clean up
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if n := countResults(t, db); n >= cases {
		t.Fatalf("the run finished before the kill (%d results)", n)
	}
	runs := storedRunIDs(t, db)
	if len(runs) != 1 {
		t.Fatalf("runs %v", runs)
	}
	before := map[record.Key]record.Result{}
	for _, r := range storedResults(t, db, runs[0]) {
		before[r.Key()] = r
	}

	res := runJSON(t, cliEnv{env: map[string]string{}}, "run", path, "--db", db, "--resume", "latest", "--no-cache")
	if res.Status != "complete" {
		t.Fatalf("resume: %+v", res)
	}
	got := storedResults(t, db, res.RunID)
	if len(got) != cases {
		t.Fatalf("%d results after resume, want %d", len(got), cases)
	}
	seen := map[record.Key]bool{}
	for _, r := range got {
		if seen[r.Key()] {
			t.Errorf("%v stored twice", r.Key())
		}
		seen[r.Key()] = true
		if r.ErrorKind != "" || len(r.Turns) != turns || r.Raw != "refunded" || len(r.ToolCalls) != 2 ||
			r.Turns[0].Results[0].Content != "found" || r.Turns[1].Results[0].Content != "refunded" {
			t.Errorf("%s: a partial or wrong trajectory: kind %q, %d turns, raw %q", r.CaseID, r.ErrorKind, len(r.Turns), r.Raw)
		}
		if b, ok := before[r.Key()]; ok && (!b.CreatedAt.Equal(r.CreatedAt) || len(b.Turns) != len(r.Turns)) {
			t.Errorf("%s: stored before the kill, changed by the resume", r.CaseID)
		}
	}
	for i := 1; i <= cases; i++ {
		if !seen[keyOf(fmt.Sprintf("c%d", i), "oa")] {
			t.Errorf("case c%d missing", i)
		}
	}
	if n := countResults(t, db); n != cases {
		t.Errorf("%d result rows, want %d (duplicates)", n, cases)
	}
	repeated := srv.Stats().Requests - cases*turns
	window := int64(math.Ceil(float64(concurrency) * float64(commitEvery) / float64(turns*latency)))
	bound := int64(turns) * (int64(concurrency) + window + 1)
	t.Logf("stored at kill %d, model calls repeated %d (bound %d)", len(before), repeated, bound)
	if repeated > bound || repeated < 0 {
		t.Errorf("%d model calls repeated after the kill; want 0 to %d (%d conversations in flight + one commit window %d + 1, %d calls each)", repeated, bound, concurrency, window, turns)
	}
}

func storedRunIDs(t *testing.T, db string) []string {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.ListRuns(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}
