package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

func gateConfig(rules string) string {
	return `{"name":"gate-test","gate":{"rules":[` + rules + `]}}`
}

// The base decides the gate: a pull request that drops a rate and loosens
// its own max_drop to let the drop through fails by default, naming the
// relaxed rule; it passes on its own rule only with --rules-from candidate.
func TestGateBaselineRulesDecide(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	e := cliEnv{}
	const n = 200
	strict := gateConfig(`{"metric":"primary","max_drop":"5%"}`)
	loose := gateConfig(`{"metric":"primary","max_drop":"60%"}`)
	base := writeGateRun(t, db, gateRun{caseIDs: gateIDs(n), config: strict, targets: []gateFake{{name: "t", pass: firstK(n, 180)}}})
	// 90% → 50%: a drop of 44% relative, far beyond 5% and within 60%.
	attack := writeGateRun(t, db, gateRun{caseIDs: gateIDs(n), config: loose, targets: []gateFake{{name: "t", pass: firstK(n, 100)}}})

	inv := runCLI(t, e, "gate", attack, "--baseline", base, "--db", db)
	if inv.code != ExitFailed || !strings.Contains(inv.stdout, "primary max_drop 5% → 60% (loosened): relaxed") ||
		!strings.Contains(inv.stdout, "FAIL         primary max_drop=5%") || !strings.Contains(inv.stderr, "relaxes the baseline's gate rules (primary max_drop 5% → 60%") {
		t.Errorf("a candidate relaxing its gate: exit %d, want 3 naming the relaxed rule and failing on the baseline's\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	inv = runCLI(t, e, "gate", attack, "--baseline", base, "--db", db, "--rules-from", "candidate")
	if inv.code != ExitOK || !strings.Contains(inv.stdout, "(--rules-from candidate)") || !strings.Contains(inv.stdout, "primary max_drop=60%") {
		t.Errorf("--rules-from candidate: exit %d, want 0 on the candidate's own rule, saying so\n%s%s", inv.code, inv.stdout, inv.stderr)
	}

	// The relaxation alone fails the gate: the same behaviour, a looser rule.
	same := writeGateRun(t, db, gateRun{caseIDs: gateIDs(n), config: loose, targets: []gateFake{{name: "t", pass: firstK(n, 180)}}})
	summary := filepath.Join(dir, "summary.md")
	inv = runCLI(t, e, "gate", same, "--baseline", base, "--db", db, "--format", "json", "--summary", summary)
	var res struct {
		Verdict      string
		Failed       int
		RulesFrom    string `json:"rules_from"`
		RelaxedRules int    `json:"relaxed_rules"`
		RuleChanges  []struct {
			Rule, Baseline, Candidate, Change string
			Relaxed                           bool
		} `json:"rule_changes"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &res); err != nil {
		t.Fatalf("json: %v\n%s%s", err, inv.stdout, inv.stderr)
	}
	if inv.code != ExitFailed || res.Verdict != "fail" || res.Failed != 0 || res.RulesFrom != "baseline" || res.RelaxedRules != 1 ||
		len(res.RuleChanges) != 1 || res.RuleChanges[0].Rule != "primary max_drop" || res.RuleChanges[0].Baseline != "5%" || res.RuleChanges[0].Candidate != "60%" || !res.RuleChanges[0].Relaxed {
		t.Errorf("relaxed rule, no regression: exit %d, %+v; want exit 3, verdict fail with no failed check and the change listed", inv.code, res)
	}
	md := readFileT(t, summary)
	change, table := strings.Index(md, "primary max\\_drop 5% → 60% \\(loosened\\): relaxed"), strings.Index(md, "| Target |")
	if change < 0 || table < 0 || change > table || !strings.HasPrefix(md, "### ❌ assay gate: fail") {
		t.Errorf("the PR summary must lead with the relaxed rule:\n%s", md)
	}
	inv = runCLI(t, e, "gate", same, "--baseline", base, "--db", db, "--format", "junit")
	var doc struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(inv.stdout), &doc); err != nil {
		t.Fatalf("junit: %v\n%s", err, inv.stdout)
	}
	if len(doc.Suites) == 0 || doc.Suites[0].Name != "gate: rules" || len(doc.Suites[0].Cases) != 1 || doc.Suites[0].Cases[0].Failure == nil || doc.Suites[0].Cases[0].Failure.Type != "relaxed_rule" {
		t.Errorf("junit: want a failing rules test case first\n%s", inv.stdout)
	}

	// A tightened or added rule is reported and does not fail the gate.
	tight := writeGateRun(t, db, gateRun{caseIDs: gateIDs(n), config: gateConfig(`{"metric":"primary","max_drop":"3%"},{"metric":"loud_rate","max":"50%"}`),
		targets: []gateFake{{name: "t", pass: firstK(n, 180)}}})
	inv = runCLI(t, e, "gate", tight, "--baseline", base, "--db", db)
	if inv.code != ExitOK || !strings.Contains(inv.stdout, "primary max_drop 5% → 3% (tightened)") || !strings.Contains(inv.stdout, "loud_rate max=50% added") {
		t.Errorf("tightened rules: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	// --rule flags are the CI configuration's: they decide, and the
	// candidate's changes are only reported.
	inv = runCLI(t, e, "gate", same, "--baseline", base, "--db", db, "--rule", "primary max_drop=5%")
	if inv.code != ExitOK || !strings.Contains(inv.stdout, "not applied: the --rule flags decide") {
		t.Errorf("--rule: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}

	// A baseline file carries the rules: no database of the baseline needed.
	file := filepath.Join(dir, "baseline.json")
	if inv := runCLI(t, e, "baseline", "export", base, "-o", file, "--db", db); inv.code != 0 {
		t.Fatalf("export: %s", inv.stderr)
	}
	inv = runCLI(t, e, "gate", same, "--baseline", file, "--db", db)
	if inv.code != ExitFailed || !strings.Contains(inv.stdout, "primary max_drop 5% → 60% (loosened): relaxed") {
		t.Errorf("gate against a baseline file: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	// A file written before rules were recorded: the candidate's rules,
	// with a loud note.
	var m map[string]any
	if err := json.Unmarshal([]byte(readFileT(t, file)), &m); err != nil {
		t.Fatal(err)
	}
	run := m["run"].(map[string]any)
	if run["gate_hash"] == nil || run["gate"] == nil {
		t.Fatalf("the exported file records no rules: %v", run)
	}
	delete(run, "gate")
	delete(run, "gate_hash")
	old, _ := json.Marshal(m)
	oldFile := filepath.Join(dir, "old.json")
	if err := os.WriteFile(oldFile, old, 0o644); err != nil {
		t.Fatal(err)
	}
	inv = runCLI(t, e, "gate", same, "--baseline", oldFile, "--db", db)
	if inv.code != ExitOK || !strings.Contains(inv.stdout, "THE BASELINE RECORDS NO GATE RULES") || !strings.Contains(inv.stdout, "from the candidate's spec") {
		t.Errorf("an older baseline file: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	inv = runCLI(t, e, "gate", same, "--baseline", base, "--db", db, "--rules-from", "theirs")
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, "--rules-from must be baseline or candidate") {
		t.Errorf("--rules-from theirs: exit %d %s", inv.code, inv.stderr)
	}
}

// Partial evidence is refused, naming what is missing: a --limit 5
// candidate against a 152-case baseline (n = 5 would pass anything), either
// way round, in gate, compare and drift; --shared-cases or --allow-partial
// go ahead.
func TestPartialEvidenceRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	e := cliEnv{}
	full := writeGateRun(t, db, gateRun{caseIDs: gateIDs(152), targets: []gateFake{{name: "t", pass: firstK(152, 140)}}})
	five := writeGateRun(t, db, gateRun{caseIDs: gateIDs(5), targets: []gateFake{{name: "t", pass: firstK(5, 0)}}})

	const missing = `147 missing ("c6", "c7", "c8", "c9", "c10" and 142 more)`
	inv := runCLI(t, e, "gate", five, "--baseline", full, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "the candidate (run "+five+") covers 5 of the 152 cases of the baseline") || !strings.Contains(inv.stderr, missing) {
		t.Errorf("gate of a --limit 5 candidate: exit %d, want 1 naming the missing cases\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	inv = runCLI(t, e, "gate", full, "--baseline", five, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "the baseline (run "+five+") covers 5 of the 152 cases of the candidate") {
		t.Errorf("gate against a partial baseline: exit %d\n%s", inv.code, inv.stderr)
	}
	for _, flag := range []string{"--shared-cases", "--allow-partial"} {
		inv = runCLI(t, e, "gate", five, "--baseline", full, "--db", db, flag)
		if inv.code == ExitErr || !strings.Contains(inv.stdout, "compared the 5 both have") {
			t.Errorf("gate %s: exit %d\n%s%s", flag, inv.code, inv.stdout, inv.stderr)
		}
	}
	inv = runCLI(t, e, "compare", full, five, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "compare: the run after (run "+five+") covers 5 of the 152 cases") || !strings.Contains(inv.stderr, missing) {
		t.Errorf("compare with a partial side: exit %d\n%s", inv.code, inv.stderr)
	}
	inv = runCLI(t, e, "drift", full, five, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "drift: the second side (run "+five+") covers 5 of the 152 cases") {
		t.Errorf("drift with a partial side: exit %d\n%s", inv.code, inv.stderr)
	}

	// A run killed part way: drift refuses it, not "no drift".
	again := writeGateRun(t, db, gateRun{caseIDs: gateIDs(152), targets: []gateFake{{name: "t", pass: firstK(152, 140)}}})
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.GetRun(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	r.Status = record.StatusInterrupted
	if err := st.UpdateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	st.Close()
	inv = runCLI(t, e, "drift", full, again, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "drift: the second side (run "+again+") is interrupted, not complete") || !strings.Contains(inv.stderr, "--allow-partial") {
		t.Errorf("drift on an interrupted run: exit %d, want 1\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	inv = runCLI(t, e, "drift", full, again, "--db", db, "--allow-partial")
	if strings.Contains(inv.stderr, "not complete") {
		t.Errorf("drift --allow-partial still refuses: %s", inv.stderr)
	}
	inv = runCLI(t, e, "compare", again, full, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "compare: the run before (run "+again+") is interrupted, not complete") {
		t.Errorf("compare with an interrupted run: exit %d\n%s", inv.code, inv.stderr)
	}
	// Let through on purpose, each report still says the side is partial.
	for _, cmd := range [][]string{{"compare", again, full}, {"drift", full, again}} {
		inv = runCLI(t, e, append(cmd, "--db", db, "--allow-partial")...)
		if !strings.Contains(inv.stdout, "run "+again+" is interrupted, not complete") {
			t.Errorf("%s --allow-partial on an interrupted run does not say so: exit %d\n%s%s", cmd[0], inv.code, inv.stdout, inv.stderr)
		}
	}
}

// Errors are not behaviour: a candidate most of whose calls failed (an
// expired key) cannot be judged — exit 1 naming the cause, never 3.
func TestGateCannotJudgeAFailedCandidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	const n = 200
	base := writeGateRun(t, db, gateRun{caseIDs: gateIDs(n), targets: []gateFake{{name: "t", pass: firstK(n, 180)}}})
	auth := func(k int) func(i int) string {
		return func(i int) string {
			if i < k {
				return "auth"
			}
			return ""
		}
	}
	down := writeGateRun(t, db, gateRun{caseIDs: gateIDs(n), targets: []gateFake{{name: "t", pass: firstK(n, 0), errKind: auth(n)}}})
	inv := runCLI(t, cliEnv{}, "gate", down, "--baseline", base, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "cannot judge: 200 of 200 calls of t in run "+down+" failed: auth") {
		t.Errorf("a candidate whose every call failed: exit %d, want 1\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	// Nor can a baseline whose calls failed judge anything, file or run.
	file := filepath.Join(dir, "down.json")
	if inv := runCLI(t, cliEnv{}, "baseline", "export", down, "-o", file, "--db", db); inv.code != 0 {
		t.Fatalf("export: %s", inv.stderr)
	}
	inv = runCLI(t, cliEnv{}, "gate", base, "--baseline", file, "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "cannot judge: 200 of 200 calls of t in baseline file "+file+" (run "+down+") failed: auth") {
		t.Errorf("a baseline file whose every call failed: exit %d, want 1\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	// Under half failed: judged (the failures are the candidate's).
	some := writeGateRun(t, db, gateRun{caseIDs: gateIDs(n), targets: []gateFake{{name: "t", pass: firstK(n, 180), errKind: auth(10)}}})
	inv = runCLI(t, cliEnv{}, "gate", some, "--baseline", base, "--db", db)
	if inv.code == ExitErr || strings.Contains(inv.stderr, "cannot judge") {
		t.Errorf("10 of 200 calls failed: exit %d, want a verdict\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
}
