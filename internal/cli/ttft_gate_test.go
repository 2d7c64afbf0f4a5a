package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
)

// End to end: a streamed target's time to first token reaches the report,
// the baseline file and the ttft_p95 gate. The candidate's server waits
// 150 ms before its first token where the baseline's waited 5 ms: the
// gate fails a 50 ms rise and passes a 1 s one, from the committed
// baseline file (no baseline run in the store).
func TestTTFTGateEndToEnd(t *testing.T) {
	t.Parallel()
	_, fast := startMock(t, mock.Options{Latency: 5 * time.Millisecond, TokenDelay: time.Millisecond})
	_, slow := startMock(t, mock.Options{Latency: 150 * time.Millisecond, TokenDelay: time.Millisecond})
	dir := t.TempDir()
	target := func(url string) string {
		return fmt.Sprintf("  - {name: model, provider: openai, model: m1, base_url: %s/v1, stream: true, limits: {concurrency: 8}}", url)
	}
	e := cliEnv{env: map[string]string{"OPENAI_API_KEY": "sk-test"}}
	baseDB, candDB := filepath.Join(dir, "base.db"), filepath.Join(dir, "cand.db")
	spec := echoTask(t, dir, 40, target(fast))
	base := runJSON(t, e, "run", spec, "--db", baseDB, "--no-cache")
	bfile := filepath.Join(dir, "baseline.json")
	if inv := runCLI(t, e, "baseline", "export", base.RunID, "--db", baseDB, "-o", bfile); inv.code != 0 {
		t.Fatalf("baseline export: %s", inv.stderr)
	}
	if !strings.Contains(readFileT(t, bfile), `"first_token_ms"`) {
		t.Fatal("the baseline file of a streamed run has no first_token_ms")
	}
	spec = echoTask(t, dir, 40, target(slow))
	cand := runJSON(t, e, "run", spec, "--db", candDB, "--no-cache")

	inv := runCLI(t, e, "report", cand.RunID, "--db", candDB)
	if inv.code != 0 || !strings.Contains(inv.stdout, "time to first token") {
		t.Errorf("report of a streamed run: exit %d, no time to first token:\n%s", inv.code, inv.stdout)
	}
	for _, tc := range []struct {
		rule string
		code int
	}{
		{"ttft_p95 max_rise=50ms", ExitFailed},
		{"ttft_p95 max_rise=1s", ExitOK},
	} {
		inv := runCLI(t, e, "gate", cand.RunID, "--baseline", bfile, "--db", candDB, "--rule", tc.rule, "--format", "json")
		var res struct {
			Targets []struct {
				Checks []struct {
					Metric  string  `json:"metric"`
					N       int     `json:"n"`
					Delta   float64 `json:"delta"`
					Verdict string  `json:"verdict"`
				} `json:"checks"`
			} `json:"targets"`
		}
		if err := json.Unmarshal([]byte(inv.stdout), &res); err != nil || len(res.Targets) != 1 || len(res.Targets[0].Checks) != 1 {
			t.Fatalf("%s: exit %d, %v\n%s\n%s", tc.rule, inv.code, err, inv.stdout, inv.stderr)
		}
		c := res.Targets[0].Checks[0]
		if inv.code != tc.code || c.Metric != "ttft_p95" || c.N != 40 || c.Delta < 100 {
			t.Errorf("%s: exit %d, check %+v; want exit %d on 40 paired cases with a rise of about 145 ms", tc.rule, inv.code, c, tc.code)
		}
	}
}
