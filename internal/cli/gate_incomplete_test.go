package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// A gate fails closed on a run that stopped part way: it measured only some
// cases, and a pass on those would pass what it never saw.
func TestGateRefusesAnIncompleteCandidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, url := startMock(t, mock.Options{})
	spec := echoTask(t, dir, 12, fmt.Sprintf(`  - {name: e, provider: openai, model: m, base_url: %s/v1}`, url))
	db := filepath.Join(dir, "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}
	base := runJSON(t, e, "run", spec)
	cand := runJSON(t, e, "run", spec, "--no-cache")

	// Mark the candidate as a run Ctrl-C stopped.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.GetRun(ctx, cand.RunID)
	if err != nil {
		t.Fatal(err)
	}
	r.Status = record.StatusInterrupted
	if err := st.UpdateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	st.Close()

	inv := runCLI(t, e, "gate", cand.RunID, "--baseline", base.RunID)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "interrupted, not complete") || !strings.Contains(inv.stderr, "--resume "+cand.RunID) || !strings.Contains(inv.stderr, "--allow-partial") {
		t.Errorf("gate of an interrupted run: exit %d, %q; want exit 1 naming --resume and --allow-partial", inv.code, inv.stderr)
	}
	// --allow-partial goes ahead, and so does its older name.
	for _, flag := range []string{"--allow-partial", "--allow-incomplete"} {
		inv = runCLI(t, e, "gate", cand.RunID, "--baseline", base.RunID, flag)
		if inv.code != 0 || !strings.Contains(inv.stdout, "not complete (--allow-partial)") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a pass with the warning", flag, inv.code, inv.stdout, inv.stderr)
		}
	}
	// The baseline side is held to the same: an interrupted run is no
	// baseline.
	inv = runCLI(t, e, "gate", base.RunID, "--baseline", cand.RunID)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "the baseline (run "+cand.RunID+") is interrupted") {
		t.Errorf("gate against an interrupted baseline: exit %d, %q; want exit 1 naming the baseline", inv.code, inv.stderr)
	}

	// Nor is a run that stopped part way exported as a baseline.
	out := filepath.Join(dir, "baseline.json")
	inv = runCLI(t, e, "baseline", "export", cand.RunID, "-o", out)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "not complete") || !strings.Contains(inv.stderr, "--allow-partial") {
		t.Errorf("export of an interrupted run: exit %d, %q; want exit 1 naming --allow-partial", inv.code, inv.stderr)
	}
	for _, flag := range []string{"--allow-partial", "--allow-incomplete"} {
		if inv := runCLI(t, e, "baseline", "export", cand.RunID, "-o", out, flag); inv.code != 0 {
			t.Errorf("export %s: exit %d, %q", flag, inv.code, inv.stderr)
		}
	}
}
