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

// The same target before and after a change, paired by case. After the
// change the mock answers "wrong" to every prompt containing "word-1"
// (cases 1 and 10–19): of those, cases 1, 10, 11, 13, 14, 16, 17 and 19
// passed before (12, 15 and 18 expect "other" and failed anyway). So 8 cases
// broke and none was fixed: Δ = −8/30; the McNemar score test has
// z = −8/√8 = −2√2, p = erfc(2) = 0.0046777; --test exact gives
// 2 · 0.5⁸ = 0.0078125.
func TestCompareRunsPairsByCase(t *testing.T) {
	t.Parallel()
	_, before := startMock(t, mock.Options{})
	_, after := startMock(t, mock.Options{Rules: []mock.Rule{{Match: "word-1", Reply: "wrong"}}})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	target := func(url string) string {
		return fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1}`, url)
	}
	a := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, target(before)), "--db", db)
	b := runJSON(t, cliEnv{}, "run", echoTask(t, dir, 30, target(after)), "--db", db)

	inv := runCLI(t, cliEnv{}, "compare", a.RunID, b.RunID, "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("compare: %s", inv.stderr)
	}
	var rc struct {
		Comparisons []struct {
			A, B, Verdict string
			N             int
			Delta         float64
			PValue        float64 `json:"p_value"`
			AOnly         int     `json:"a_only"`
			BOnly         int     `json:"b_only"`
		}
		Warnings []string
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rc); err != nil {
		t.Fatal(err)
	}
	if len(rc.Comparisons) != 1 {
		t.Fatalf("%d comparisons, want 1", len(rc.Comparisons))
	}
	c := rc.Comparisons[0]
	if c.A != "oa@"+b.RunID || c.B != "oa@"+a.RunID || c.N != 30 || c.AOnly != 0 || c.BOnly != 8 {
		t.Errorf("comparison %+v: want oa after vs before, 30 cases, 0 fixed, 8 broken", c)
	}
	if math.Abs(c.Delta+8.0/30) > 1e-6 || math.Abs(c.PValue-math.Erfc(2)) > 1e-12 || c.Verdict != "b_better" {
		t.Errorf("delta %v p %v verdict %s; want −0.266667, %v, b_better (worse after)", c.Delta, c.PValue, c.Verdict, math.Erfc(2))
	}
	exact := runCLI(t, cliEnv{}, "compare", a.RunID, b.RunID, "--db", db, "--format", "json", "--test", "exact")
	var rx struct {
		Comparisons []struct {
			Test   string
			PValue float64 `json:"p_value"`
		}
	}
	if err := json.Unmarshal([]byte(exact.stdout), &rx); err != nil || len(rx.Comparisons) != 1 ||
		rx.Comparisons[0].Test != "mcnemar_exact" || math.Abs(rx.Comparisons[0].PValue-0.0078125) > 1e-12 {
		t.Errorf("compare --test exact: %v %+v (stderr %s); want mcnemar_exact p 0.0078125", err, rx, exact.stderr)
	}
	text := runCLI(t, cliEnv{}, "compare", a.RunID, b.RunID, "--db", db)
	if text.code != 0 || !strings.Contains(text.stdout, "worse after") {
		t.Errorf("text compare: exit %d\n%s", text.code, text.stdout)
	}
}
