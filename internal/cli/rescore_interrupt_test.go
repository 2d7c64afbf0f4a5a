package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
)

// Ctrl-C during a rescore with live judge calls: no new call is made, the
// calls in flight finish, the command exits 130 well before the end, and
// the partial scoring is never read; a rescore of a run still being written
// is refused.
func TestRescoreHonoursInterrupt(t *testing.T) {
	_, candURL := startMock(t, mock.Options{})
	judge, judgeURL := startMock(t, mock.Options{Latency: 20 * time.Millisecond, Rules: []mock.Rule{
		{Match: "RUBRIC", Reply: `{"verdict": "fail", "reason": "no"}`},
	}})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	const cases = 1000
	path := echoTask(t, dir, cases, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, limits: {concurrency: 16}}
  - {name: grader, provider: openai, model: judge-1, base_url: %s/v1, limits: {concurrency: 4}}`, candURL, judgeURL))
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}
	run := runJSON(t, e, "run", path, "--targets", "oa", "--no-cache")
	if run.Status != "complete" {
		t.Fatalf("run: %+v", run)
	}
	b := readFileT(t, path)
	writeFile(t, path, strings.Replace(b, "run: {", "  - {name: quality, type: judge, target: grader, rubric: \"RUBRIC: the word\", primary: true}\nrun: {", 1))

	intr := make(chan os.Signal, 2)
	e.interrupts = intr
	done := make(chan invocation, 1)
	go func() { done <- runCLI(t, e, "rescore", run.RunID, "--no-cache", "--workers", "4") }()
	for deadline := time.Now().Add(20 * time.Second); judge.Stats().Requests < 20; {
		if time.Now().After(deadline) {
			t.Fatal("the rescore called no judge")
		}
		time.Sleep(5 * time.Millisecond)
	}
	intr <- os.Interrupt
	inv := <-done
	if inv.code != ExitInterrupted || !strings.Contains(inv.stderr, "stays pending") {
		t.Fatalf("rescore after Ctrl-C: exit %d\n%s", inv.code, inv.stderr)
	}
	calls := judge.Stats().Requests
	if calls >= cases/2 {
		t.Errorf("the judge was called %d times for %d results: the interrupt did not stop the rescore", calls, cases)
	}
	time.Sleep(100 * time.Millisecond)
	if later := judge.Stats().Requests; later != calls {
		t.Errorf("judge calls went on after the rescore returned: %d → %d", calls, later)
	}
	rep := readAtomicReport(t, cliEnv{env: e.env}, run.RunID)
	if rep.Run.Scoring != 1 {
		t.Errorf("report after an interrupted rescore reads scoring %d, want 1", rep.Run.Scoring)
	}
}
