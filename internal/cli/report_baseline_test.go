package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// The report flags a target whose reported model changed since the
// baseline — a file or a run — and stays quiet when it did not.
func TestReportFlagsModelChangeSinceBaseline(t *testing.T) {
	t.Parallel()
	_, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	target := func(model string) string {
		return fmt.Sprintf(`  - {name: bot, provider: openai, model: %s, base_url: %s/v1}`, model, url)
	}
	spec := echoTask(t, dir, 6, target("bot-2024-05"))
	e := cliEnv{env: map[string]string{"ASSAY_DB": filepath.Join(t.TempDir(), "a.db")}}
	base := runJSON(t, e, "run", spec)
	file := filepath.Join(dir, "baseline.json")
	if inv := runCLI(t, e, "baseline", "export", base.RunID, "-o", file); inv.code != 0 {
		t.Fatalf("baseline export: %s", inv.stderr)
	}
	// The same target name; the provider now answers with another model.
	writeFile(t, spec, strings.Replace(readFileT(t, spec), "bot-2024-05", "bot-2024-08", 1))
	runJSON(t, e, "run", spec)

	warnings := func(args ...string) []string {
		t.Helper()
		inv := runCLI(t, e, append([]string{"report", "latest", "--format", "json"}, args...)...)
		if inv.code != 0 {
			t.Fatalf("report %v: exit %d: %s", args, inv.code, inv.stderr)
		}
		var rep struct{ Warnings []string }
		if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range rep.Warnings {
			if strings.Contains(w, "since the baseline") {
				out = append(out, w)
			}
		}
		return out
	}
	for _, ref := range []string{file, base.RunID} {
		ws := warnings("--baseline", ref)
		if len(ws) != 1 || !strings.Contains(ws[0], "bot-2024-05 (fp_mock) → bot-2024-08 (fp_mock)") || !strings.Contains(ws[0], "target bot") {
			t.Errorf("--baseline %s: warnings %q, want one naming target bot and both models", ref, ws)
		}
	}
	if ws := warnings(); len(ws) != 0 {
		t.Errorf("without --baseline: %q", ws)
	}
	if ws := warnings("--baseline", "latest"); len(ws) != 0 {
		t.Errorf("against itself: %q", ws)
	}
	if inv := runCLI(t, e, "report", "latest", "--baseline", filepath.Join(dir, "nope.json")); inv.code != ExitErr || !strings.Contains(inv.stderr, "nope.json") {
		t.Errorf("a missing baseline: exit %d, %q", inv.code, inv.stderr)
	}
}
