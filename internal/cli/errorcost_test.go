package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// Wrong answers are priced, not just counted: the report's error cost is
// the spec's price for each failure (by kind, else silent/loud) times the
// case's weight.
func TestErrorCostsPriced(t *testing.T) {
	t.Parallel()
	// One mock echoes the prompt (case c2 is then answered but wrong: a
	// silent failure); the other never answers (every case times out: loud).
	_, url := startMock(t, mock.Options{})
	_, hang := startMock(t, mock.Options{Hang: 1})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), strings.Join([]string{
		`{"id":"c1","say":"yes","expected":"yes","cost":10}`,
		`{"id":"c2","say":"yes","expected":"no","cost":7}`,
		`{"id":"c3","say":"yes","expected":"yes","cost":3}`,
	}, "\n")+"\n")
	path := filepath.Join(dir, "assay.yaml")
	writeFile(t, path, fmt.Sprintf(`name: priced
dataset: {path: cases.jsonl, id: id, expected: expected, weight: cost}
prompt: {user: "{{.say}}"}
targets:
  - {name: ok, provider: openai, model: m, base_url: %s/v1}
  - {name: stuck, provider: openai, model: m, base_url: %s/v1}
scorers:
  - {name: correct, type: equals}
error_costs: {silent: 2, loud: 5, by_kind: {timeout: 1}}
run: {timeout: 300ms, retries: 0}
`, url, hang))
	db := filepath.Join(dir, "assay.db")
	runJSON(t, cliEnv{}, "run", path, "--db", db)
	inv := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "json")
	var rep struct {
		Targets []struct {
			Name      string
			ErrorCost float64 `json:"error_cost"`
			Failures  struct {
				ByKind map[string]int `json:"by_kind"`
			}
		}
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err, inv.stderr)
	}
	// ok: only c2 is wrong, silently: 2 × 7 = 14.
	// stuck: all three time out: timeout is priced 1, times 10 + 7 + 3 = 20.
	want := map[string]float64{"ok": 14, "stuck": 20}
	for _, tg := range rep.Targets {
		if math.Abs(tg.ErrorCost-want[tg.Name]) > 1e-9 {
			t.Errorf("%s: error cost %v, want %v (failures %v)", tg.Name, tg.ErrorCost, want[tg.Name], tg.Failures.ByKind)
		}
	}
}
