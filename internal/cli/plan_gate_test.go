package cli

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/stats"
)

// assay plan RUN --gate: for each pass/fail rule and target, the power of
// the gate's one-sided test at the limit against a worsening of twice the
// limit, on the run's cases, at alpha split over the gate's checks (Holm).
// The cases and rates come from the example's own files.
func TestPlanGatePower(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	if inv := runCLI(t, cliEnv{}, "run", filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml"), "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	a, b, _ := planQuickstartPasses(t)
	rate := func(m map[string]bool) float64 {
		k := 0
		for _, p := range m {
			if p {
				k++
			}
		}
		return float64(k) / float64(len(m))
	}
	rates := map[string]float64{"model-a": rate(a), "model-b": rate(b)}

	// The default rule (the example's spec has no gate section): primary
	// max_drop=5%, one check per target, so alpha 0.05 over 2 checks.
	doc := planJSON(t, "latest", "--db", db, "--gate")
	planRequireKeys(t, "gate", doc, "mode", "run_id", "method", "alpha", "checks", "alpha_per_check", "rules", "notes")
	if doc["mode"] != "gate" || planNum(t, doc, "checks") != 2 || planNum(t, doc, "alpha_per_check") != 0.025 {
		t.Fatalf("gate plan header: %v", planWithout(doc, "rules"))
	}
	rows := doc["rules"].([]any)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want one per target", len(rows))
	}
	for _, x := range rows {
		r := x.(map[string]any)
		planRequireKeys(t, "gate rule", r, "target", "rule", "n", "limit", "worsening", "p_disc", "p_disc_assumed", "power", "notes")
		name := r["target"].(string)
		limit := 0.05 * rates[name]
		pDisc := 2*limit + 0.10 // the assumed churn, said in the notes
		want, err := stats.NonInferiorityPower(len(a), pDisc, -2*limit, limit, 0.025)
		if err != nil {
			t.Fatal(err)
		}
		if r["rule"] != "primary max_drop=5%" || int(planNum(t, r, "n")) != len(a) || math.Abs(planNum(t, r, "limit")-limit) > 1e-12 ||
			math.Abs(planNum(t, r, "p_disc")-pDisc) > 1e-12 || r["p_disc_assumed"] != true || math.Abs(planNum(t, r, "power")-want) > 1e-12 {
			t.Errorf("%s: %v; want n %d, limit %v, p_disc %v (assumed), power %v", name, r, len(a), limit, pDisc, want)
		}
	}
	notes := strings.Join(func() []string {
		var s []string
		for _, n := range doc["notes"].([]any) {
			s = append(s, n.(string))
		}
		return s
	}(), "\n")
	if !strings.Contains(notes, "the discordance is assumed") || !strings.Contains(notes, "rules from the default") {
		t.Errorf("notes %q", notes)
	}

	// --rule replaces the rules; the floor adds a check to the family
	// (3 checks per target: 6), --p-disc replaces the assumption; an
	// absolute limit is itself.
	doc = planJSON(t, "latest", "--db", db, "--gate", "--rule", "primary max_drop=10pt min=50%", "--rule", "cost_per_case max_rise=10%", "--p-disc", "0.3")
	if planNum(t, doc, "checks") != 6 || planNum(t, doc, "alpha_per_check") != 0.05/6 {
		t.Errorf("checks %v, alpha per check %v; want 6 and 0.05/6", doc["checks"], doc["alpha_per_check"])
	}
	r := doc["rules"].([]any)[0].(map[string]any)
	want, _ := stats.NonInferiorityPower(len(a), 0.3, -0.2, 0.1, 0.05/6)
	if len(doc["rules"].([]any)) != 2 || planNum(t, r, "limit") != 0.1 || r["p_disc_assumed"] != false || math.Abs(planNum(t, r, "power")-want) > 1e-12 {
		t.Errorf("--rule 10pt --p-disc 0.3: %v; want power %v", doc["rules"], want)
	}

	inv := runCLI(t, cliEnv{}, "plan", "latest", "--db", db, "--gate")
	if inv.code != 0 || !strings.Contains(inv.stdout, "2 checks share the false-fail rate 5% (Holm)") || !strings.Contains(inv.stdout, "POWER is the chance that the gate fails") {
		t.Errorf("text: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gate"}, "--gate needs a run"},
		{[]string{"latest", "--db", db, "--rule", "primary max_drop=5%"}, "--rule goes with --gate"},
		{[]string{"latest", "--db", db, "--gate", "--delta", "0.03"}, "--delta cannot be combined with --gate"},
		{[]string{"latest", "--db", db, "--gate", "--rule", "primary max_drop=5"}, "needs a unit"},
		{[]string{"latest", "--db", db, "--gate", "--p-disc", "2"}, "--p-disc 2"},
	} {
		inv := runCLI(t, cliEnv{}, append([]string{"plan"}, tc.args...)...)
		if inv.code != ExitUsage || !strings.Contains(inv.stderr, tc.want) {
			t.Errorf("plan %v: exit %d, %s; want usage error %q", tc.args, inv.code, inv.stderr, tc.want)
		}
	}
}
