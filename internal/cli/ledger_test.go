package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// coinScript is an exec target that answers a case at random, "yes" (the
// expected answer) half the time: a hash of the case number, the epoch and
// the seed given as its argument, in POSIX shell arithmetic (one process
// per call, no interpreter to start). Epoch 1 does not enter the hash.
const coinScript = `read -r req || true
id=${req#*\"case_id\":\"c}
id=${id%%\"*}
e=${req#*\"epoch\":}
e=${e%%[,\}]*}
x=$(( (id * 2654435761 + $1 * 97531 + (e - 1) * 7919) % 4294967296 ))
x=$(( ((x ^ (x >> 16)) * 73244475) % 4294967296 ))
x=$(( ((x ^ (x >> 16)) * 73244475) % 4294967296 ))
x=$(( x ^ (x >> 16) ))
if [ $(( x % 100 )) -lt 50 ]; then a=yes; else a=no; fi
printf '{"output":"%s"}\n' "$a"
`

// coinTask writes n cases expecting "yes" and a spec whose one target is
// coinScript with seed; it returns the spec's path.
func coinTask(t *testing.T, dir string, n, seed int) string {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh for the random exec target")
	}
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"id":"c%d","q":"toss %d","expected":"yes"}`+"\n", i, i)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), b.String())
	// The spec interpolates ${NAME} in a target's command: the shell's own
	// ${...} expansions are written $${...} there.
	script, err := json.Marshal(strings.ReplaceAll(coinScript, "${", "$${"))
	if err != nil {
		t.Fatal(err)
	}
	spec := fmt.Sprintf(`name: coin
dataset: {path: cases.jsonl, id: id, expected: expected}
prompt: {user: "{{.q}}"}
targets:
  - name: coin
    provider: exec
    command: ["/bin/sh", "-c", %s, "coin", "%d"]
    limits: {concurrency: 8}
scorers:
  - {name: correct, type: equals, normalize: [trim]}
run: {timeout: 20s, retries: 0}
`, script, seed)
	path := filepath.Join(dir, fmt.Sprintf("coin-%d.yaml", seed))
	writeFile(t, path, spec)
	return path
}

type ledgerJSON struct {
	Run struct {
		ID         string `json:"id"`
		Experiment string `json:"experiment"`
	} `json:"run"`
	Targets []struct {
		Name    string `json:"name"`
		Primary struct {
			Rate float64 `json:"rate"`
			SE   float64 `json:"se"`
		} `json:"primary"`
		Epochs *struct {
			Epochs       int       `json:"epochs"`
			EpochRates   []float64 `json:"epoch_rates"`
			BetweenRunSD *float64  `json:"between_run_sd"`
			WithinShare  *float64  `json:"within_case_share"`
		} `json:"epochs"`
	} `json:"targets"`
	Ledger *struct {
		Experiment         string  `json:"experiment"`
		Variants           int     `json:"variants"`
		Family             int     `json:"family"`
		Survives           bool    `json:"survives"`
		Verdict            string  `json:"verdict"`
		UncorrectedVerdict string  `json:"uncorrected_verdict"`
		ReferenceFrom      string  `json:"reference_from"`
		ExpectedMaxZ       float64 `json:"expected_max_z"`
		DeflatedRate       float64 `json:"deflated_rate"`
		Inflation          float64 `json:"inflation"`
		Chosen             struct {
			Run         string  `json:"run"`
			Target      string  `json:"target"`
			Rate        float64 `json:"rate"`
			VsReference *struct {
				PValue    float64 `json:"p_value"`
				PAdjusted float64 `json:"p_adjusted"`
			} `json:"vs_reference"`
		} `json:"chosen"`
		Reference struct {
			Run  string  `json:"run"`
			Rate float64 `json:"rate"`
		} `json:"reference"`
		Summary string `json:"summary"`
	} `json:"ledger"`
}

func reportJSON(t *testing.T, e cliEnv, args ...string) ledgerJSON {
	t.Helper()
	inv := runCLI(t, e, append([]string{"report", "--format", "json"}, args...)...)
	if inv.code != 0 {
		t.Fatalf("report exit %d: %s", inv.code, inv.stderr)
	}
	var r ledgerJSON
	if err := json.Unmarshal([]byte(inv.stdout), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Ten runs of one experiment, each a target answering at random at the
// same rate (50%), seeded per run. The seeds are ordered so the last run is
// the best of the ten (the team stopped once a variant beat the others)
// and were picked so that, taken alone, its lead over the first run would
// pass for significant (McNemar exact p = 0.0135; statsmodels agrees, see
// the comment on ledgerSeeds). The report of that run counts 10 variants and
// does not call the lead a win: Holm over the 9 comparisons gives 0.12.
func TestLedgerBestOfTenRandomVariants(t *testing.T) {
	t.Parallel()
	// ledgerSeeds: 80 cases; the seeds' pass counts are 35 (reference),
	// 39, 36, 46, 43, 47, 40, 40, 41 and 50 (chosen); Holm-adjusted p of the
	// chosen against the reference: 0.1218 (statsmodels multipletests over
	// the nine McNemar exact p-values; the report is asked for --test exact).
	ledgerSeeds := []int{4, 5, 6, 7, 8, 10, 11, 13, 14, 60}
	const cases = 80
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	e := cliEnv{}
	var ids []string
	for _, seed := range ledgerSeeds {
		s := runJSON(t, e, "run", coinTask(t, dir, cases, seed), "--db", db, "--experiment", "coin-search", "--no-cache")
		if s.Status != "complete" || s.Stored != cases || s.Errors != 0 {
			t.Fatalf("seed %d: %+v", seed, s)
		}
		ids = append(ids, s.RunID)
	}
	r := reportJSON(t, e, "latest", "--db", db, "--test", "exact")
	l := r.Ledger
	if l == nil {
		t.Fatal("the report of a run in an experiment has no ledger")
	}
	if l.Experiment != "coin-search" || l.Variants != 10 || l.Family != 9 || l.ReferenceFrom != "first_variant" {
		t.Fatalf("ledger: experiment %q, %d variants, family %d, reference from %s", l.Experiment, l.Variants, l.Family, l.ReferenceFrom)
	}
	if l.Chosen.Run != ids[9] || l.Reference.Run != ids[0] || l.Chosen.Rate != 50.0/cases || l.Reference.Rate != 35.0/cases {
		t.Errorf("chosen %s at %v vs reference %s at %v; want the last run (50/80) against the first (35/80)",
			l.Chosen.Run, l.Chosen.Rate, l.Reference.Run, l.Reference.Rate)
	}
	c := l.Chosen.VsReference
	if c == nil || math.Abs(c.PValue-0.013530986849218607) > 1e-9 || math.Abs(c.PAdjusted-0.12177888) > 1e-6 {
		t.Fatalf("chosen vs reference %+v; want p 0.01353 and Holm 0.12178 (statsmodels)", c)
	}
	if l.UncorrectedVerdict != "a_better" {
		t.Errorf("uncorrected verdict %s: the fixture should look like a win on its own", l.UncorrectedVerdict)
	}
	if l.Survives || l.Verdict == "a_better" {
		t.Errorf("the best of 10 random variants is reported as a significant win: %s", l.Summary)
	}
	if math.Abs(l.ExpectedMaxZ-1.538753) > 1e-6 || math.Abs(l.DeflatedRate-(0.625-l.Inflation)) > 1e-6 || l.Inflation < 0.05 {
		t.Errorf("E[max of 10] %v, inflation %v, deflated %v", l.ExpectedMaxZ, l.Inflation, l.DeflatedRate)
	}
	// One epoch: no between-run figures.
	if r.Targets[0].Epochs != nil {
		t.Errorf("a one-epoch run shows epoch figures %+v", r.Targets[0].Epochs)
	}
	inv := runCLI(t, e, "report", "latest", "--db", db)
	for _, w := range []string{"10 variants tried", "does not survive the correction for 10 variants tried", "deflated"} {
		if !strings.Contains(inv.stdout, w) {
			t.Errorf("text report lacks %q:\n%s", w, inv.stdout)
		}
	}
	if strings.Contains(inv.stdout, "noise across epochs") {
		t.Errorf("a one-epoch run's text report shows the noise table")
	}
	for _, f := range []string{"markdown", "html"} {
		inv := runCLI(t, e, "report", "latest", "--db", db, "--format", f)
		if inv.code != 0 || !strings.Contains(inv.stdout, "10 variants tried") || !strings.Contains(inv.stdout, "does not survive") {
			t.Errorf("%s report (exit %d) lacks the ledger's count or verdict", f, inv.code)
		}
	}

	// The report of the fourth run counts the four variants tried by then.
	if r := reportJSON(t, e, ids[3], "--db", db); r.Ledger == nil || r.Ledger.Variants != 4 {
		t.Errorf("the fourth run's ledger: %+v", r.Ledger)
	}
	// --reference picks another variant: here the second run's.
	r = reportJSON(t, e, "latest", "--db", db, "--reference", ids[1]+":coin")
	if r.Ledger.Reference.Run != ids[1] || r.Ledger.ReferenceFrom != "option" || r.Ledger.Family != 9 {
		t.Errorf("--reference %s: reference %s from %s", ids[1], r.Ledger.Reference.Run, r.Ledger.ReferenceFrom)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--reference", "not an id"}, ExitUsage, "RUN or RUN:TARGET"},
		{[]string{"--reference", ids[1] + ":"}, ExitUsage, "names no target"},
		{[]string{"--reference", ids[1] + ":nope"}, ExitUsage, `has no variant "nope"`},
		{[]string{"--reference", "19990101"}, ExitUsage, "no run of the experiment"},
	} {
		inv := runCLI(t, e, append([]string{"report", "latest", "--db", db}, tc.args...)...)
		if inv.code != tc.code || !strings.Contains(inv.stderr, tc.want) {
			t.Errorf("report %v: exit %d, stderr %q; want exit %d saying %q", tc.args, inv.code, inv.stderr, tc.code, tc.want)
		}
	}
}

// --epochs K reports the between-run standard deviation (the SD of the K
// per-epoch rates, n−1) beside the SE across cases; a run outside any
// experiment has no ledger, and --reference on it is a usage error.
func TestEpochNoiseEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	e := cliEnv{}
	const cases, epochs = 40, 4
	s := runJSON(t, e, "run", coinTask(t, dir, cases, 3), "--db", db, "--epochs", fmt.Sprint(epochs), "--no-cache")
	if s.Status != "complete" || s.Stored != cases*epochs {
		t.Fatalf("run %+v", s)
	}
	// The per-epoch rates and their SD, computed here from the stored
	// verdicts with the n−1 formula.
	passed := make([]float64, epochs)
	for k, v := range readRun(t, db, s.RunID) {
		if v.pass {
			passed[k.Epoch-1]++
		}
	}
	var mean float64
	for i := range passed {
		passed[i] /= cases
		mean += passed[i] / epochs
	}
	var ss float64
	for _, r := range passed {
		ss += (r - mean) * (r - mean)
	}
	sd := math.Sqrt(ss / (epochs - 1))
	r := reportJSON(t, e, "latest", "--db", db)
	if r.Ledger != nil {
		t.Errorf("a run outside any experiment has a ledger")
	}
	es := r.Targets[0].Epochs
	if es == nil || es.BetweenRunSD == nil || es.Epochs != epochs || es.WithinShare == nil {
		t.Fatalf("epoch figures %+v", es)
	}
	if math.Abs(*es.BetweenRunSD-sd) > 1e-6 || sd == 0 {
		t.Errorf("between-run SD %v, want %v (rates %v)", *es.BetweenRunSD, sd, passed)
	}
	for i := range passed {
		if math.Abs(es.EpochRates[i]-passed[i]) > 1e-9 {
			t.Errorf("epoch rates %v, want %v", es.EpochRates, passed)
			break
		}
	}
	inv := runCLI(t, e, "report", "latest", "--db", db)
	if !strings.Contains(inv.stdout, "noise across epochs") || !strings.Contains(inv.stdout, "between-run SD") {
		t.Errorf("text report lacks the noise table:\n%s", inv.stdout)
	}
	if strings.Contains(strings.ToLower(inv.stdout), "ledger") {
		t.Errorf("text report of a run outside any experiment mentions a ledger")
	}
	inv = runCLI(t, e, "report", "latest", "--db", db, "--reference", s.RunID)
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, "belongs to no experiment") {
		t.Errorf("--reference on a run without experiment: exit %d, %q", inv.code, inv.stderr)
	}
}
