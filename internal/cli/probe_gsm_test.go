package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// GSM1K is a fresh set written to match GSM8K's difficulty, not a twin of
// each GSM8K problem: it has no IDs to join on, and its answers are bare
// numbers where GSM8K's end in "#### N". Passing it as GSM8K's twin file
// must not silently pair unrelated questions by line number: every row is
// refused, located in the GSM1K file, and nothing is called.
func TestProbeRefusesGSM1KAsLineTwinsOfGSM8K(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	srv, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	specPath := filepath.Join(dir, "gsm8k.yaml")
	writeFile(t, specPath, fmt.Sprintf(`name: gsm8k
dataset: {path: %q, id: line, expected: answer, expected_extract: '####\s*(.+)$'}
prompt: {user: "Q: {{.question}}"}
targets:
%soutput: {extract: 'A:\s*(.+)$'}
scorers:
  - {name: correct, type: equals, normalize: [trim, no_commas]}
`, filepath.Join(data, "gsm8k", "test.jsonl"), mockTarget("m", "m", url)))
	gsm1k := filepath.Join(data, "gsm1k", "gsm1k_public_50.csv")
	e := cliEnv{env: map[string]string{"ASSAY_DB": filepath.Join(dir, "assay.db")}}
	inv := runCLI(t, e, "probe", "contamination", specPath, "--twins", gsm1k)
	if inv.code != ExitInvalid {
		t.Fatalf("exit %d, want %d\n%s", inv.code, ExitInvalid, inv.stderr)
	}
	// The first record starts on line 2 (after the header); its answer is 7.
	want := gsm1k + `:2:1: expected field "answer" does not match dataset.expected_extract (the value is "7")`
	if !strings.Contains(inv.stderr, want) {
		t.Errorf("stderr lacks %q:\n%.2000s", want, inv.stderr)
	}
	if n := strings.Count(inv.stderr, "does not match dataset.expected_extract"); n != 50 {
		t.Errorf("%d rows refused, want all 50", n)
	}
	if srv.Stats().Requests != 0 {
		t.Errorf("%d calls made", srv.Stats().Requests)
	}
}
