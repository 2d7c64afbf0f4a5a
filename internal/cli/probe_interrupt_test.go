package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// Ctrl-C while rewriting keeps every twin made so far (exit 130); the next
// probe rewrites only the rest, so no paid paraphrase is asked for twice.
func TestProbeInterruptedWhileRewriting(t *testing.T) {
	const n = 60
	var rw, cand []mock.Rule
	var cases strings.Builder
	for i := 1; i <= n; i++ {
		q := fmt.Sprintf("Q-orig-%d: what is %d + 100?", i, i)
		fmt.Fprintf(&cases, `{"id":"c%d","question":%q,"answer":"%d"}`+"\n", i, q, i+100)
		rw = append(rw, mock.Rule{Match: q, Reply: fmt.Sprintf(`{"question": "P-para-%d: add 100 to %d."}`, i, i)})
		cand = append(cand, mock.Rule{Match: fmt.Sprintf("-%d:", i), Reply: fmt.Sprintf("A: %d", i+100)})
	}
	rewriter, rurl := startMock(t, mock.Options{Rules: rw, Latency: 10 * time.Millisecond})
	_, curl := startMock(t, mock.Options{Rules: cand})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	specPath := filepath.Join(dir, "assay.yaml")
	writeFile(t, specPath, "name: t\ndataset: {path: cases.jsonl, id: id, expected: answer}\nprompt: {user: \"{{.question}}\"}\ntargets:\n"+
		strings.Replace(mockTarget("para", "para", rurl), "concurrency: 4", "concurrency: 2", 1)+mockTarget("cand", "cand", curl)+
		"output: {extract: 'A:\\s*(\\S+)'}\nscorers:\n  - {name: c, type: equals}\n")
	db := filepath.Join(dir, "assay.db")

	sig := make(chan os.Signal, 1)
	go func() {
		for rewriter.Stats().OK < 10 {
			time.Sleep(2 * time.Millisecond)
		}
		sig <- os.Interrupt
	}()
	inv := runCLI(t, cliEnv{env: map[string]string{"ASSAY_DB": db}, interrupts: sig}, "probe", "contamination", specPath, "--rewriter", "para", "--no-cache")
	if inv.code != ExitInterrupted || !strings.Contains(inv.stderr, "before the runs") {
		t.Fatalf("exit %d, want 130 before the runs\n%s", inv.code, inv.stderr)
	}
	first := rewriter.Stats().Requests
	if first < 10 || first >= n {
		t.Fatalf("%d rewrites before the interrupt took effect, want 10 to %d", first, n-1)
	}
	if stored := storedTwinCount(t, db, setIDFrom(t, inv.stderr)); int64(stored) != first {
		t.Errorf("%d rewrites made but %d twins stored: a finished rewrite was lost", first, stored)
	}

	inv = runCLI(t, cliEnv{env: map[string]string{"ASSAY_DB": db}}, "probe", "contamination", specPath, "--rewriter", "para", "--no-cache", "--format", "json")
	if inv.code != 0 {
		t.Fatalf("second probe: exit %d\n%s", inv.code, inv.stderr)
	}
	if total := rewriter.Stats().Requests; total != n {
		t.Errorf("%d rewrites in all for %d cases: finished rewrites were asked for again", total, n)
	}
	if r := probeJSON(t, inv); r.Cases.Paired != n || r.TwinSet.Stored != int(first) || r.TwinSet.Added != n-int(first) {
		t.Errorf("second probe: cases %+v, twin set %+v", r.Cases, r.TwinSet)
	}
}

// storedTwinCount counts the twins stored in a set.
func storedTwinCount(t *testing.T, db, set string) int {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	if err := st.Twins(ctx, set, func(record.Twin) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// setIDFrom reads the twin set's ID from what the probe said on stderr.
func setIDFrom(t *testing.T, stderr string) string {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if id, ok := strings.CutPrefix(line, "twin set "); ok {
			return id
		}
	}
	t.Fatalf("no twin set ID on stderr:\n%s", stderr)
	return ""
}
