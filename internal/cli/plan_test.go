package cli

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/stats"
)

// planGolden is the power block of internal/stats/testdata/paired.json,
// written by paired.py: Connor's (1987) formula, scipy's brentq root of it
// for the minimum detectable difference, and statsmodels' NormalIndPower
// for two independent proportions.
type planGolden struct {
	McNemarN []struct {
		PDisc float64 `json:"p_disc"`
		Delta float64 `json:"delta"`
		Alpha float64 `json:"alpha"`
		Power float64 `json:"power"`
		N     int     `json:"n"`
	} `json:"mcnemar_n"`
	MDD []struct {
		N     int     `json:"n"`
		PDisc float64 `json:"p_disc"`
		Alpha float64 `json:"alpha"`
		Power float64 `json:"power"`
		MDD   float64 `json:"mdd"`
	} `json:"mdd"`
	TwoProp []struct {
		P1    float64 `json:"p1"`
		P2    float64 `json:"p2"`
		Alpha float64 `json:"alpha"`
		Power float64 `json:"power"`
		N     int     `json:"n"`
	} `json:"two_prop"`
}

func loadPlanGolden(t *testing.T) planGolden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "internal", "stats", "testdata", "paired.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g planGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.McNemarN) == 0 || len(g.MDD) == 0 || len(g.TwoProp) == 0 {
		t.Fatal("paired.json lacks the power vectors")
	}
	return g
}

// planFmt formats a float so that it parses back to the same float64.
func planFmt(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// planJSON runs `assay plan ... --json`, expecting exit 0, and decodes it.
func planJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	inv := runCLI(t, cliEnv{}, append([]string{"plan"}, append(args, "--json")...)...)
	if inv.code != 0 {
		t.Fatalf("assay plan %s: exit %d: %s", strings.Join(args, " "), inv.code, inv.stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(inv.stdout), &m); err != nil {
		t.Fatalf("assay plan %s --json: %v\n%s", strings.Join(args, " "), err, inv.stdout)
	}
	return m
}

func planKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// planRequireKeys checks a JSON object has exactly the documented keys: scripts
// rely on every key being present (null when not applicable).
func planRequireKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := planKeys(m); !slices.Equal(got, want) {
		t.Errorf("%s keys = %v, documented %v", what, got, want)
	}
}

func planNum(t *testing.T, m map[string]any, k string) float64 {
	t.Helper()
	x, ok := m[k].(float64)
	if !ok {
		t.Fatalf("%s = %#v, want a number", k, m[k])
	}
	return x
}

// Connor (1987) p. 209: discordance 0.5 (p01 = 0.45, p10 = 0.05), a
// difference of 0.4, two-sided alpha 0.05, power 0.8 need 23 pairs. The
// number a user reads off the text output is the published one.
func TestPlanConnorPublishedExample(t *testing.T) {
	t.Parallel()
	inv := runCLI(t, cliEnv{}, "plan", "--delta", "0.4", "--p-disc", "0.5")
	if inv.code != 0 {
		t.Fatalf("exit %d: %s", inv.code, inv.stderr)
	}
	m := regexp.MustCompile(`cases needed\s+(\d+)`).FindStringSubmatch(inv.stdout)
	if m == nil || m[1] != "23" {
		t.Errorf("Connor's example: want 23 cases needed, got:\n%s", inv.stdout)
	}
	if !regexp.MustCompile(`discordant cases\s+50%\n`).MatchString(inv.stdout) {
		t.Errorf("output lacks the discordance of 50%%:\n%s", inv.stdout)
	}
	for _, want := range []string{"McNemar", "alpha 0.05", "power 80%", "40 points"} {
		if !strings.Contains(inv.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, inv.stdout)
		}
	}
}

// The paired mode answers with Connor's sample size and the brentq MDD of
// the independent reference, and equals what internal/stats computes.
func TestPlanPairedMatchesReference(t *testing.T) {
	t.Parallel()
	g := loadPlanGolden(t)
	for _, v := range g.McNemarN {
		d := math.Abs(v.Delta)
		doc := planJSON(t, "--delta", planFmt(d), "--p-disc", planFmt(v.PDisc), "--alpha", planFmt(v.Alpha), "--power", planFmt(v.Power))
		planRequireKeys(t, "paired", doc, "mode", "method", "alpha", "power", "p_disc", "delta", "cases", "cases_needed", "achieved_power", "mdd", "power_at_cases")
		if doc["mode"] != "paired" || doc["method"] != "mcnemar_score" {
			t.Errorf("mode/method = %v/%v", doc["mode"], doc["method"])
		}
		n := int(planNum(t, doc, "cases_needed"))
		if n != v.N {
			t.Errorf("p_disc %v delta %v alpha %v power %v: %d cases, Connor reference %d", v.PDisc, d, v.Alpha, v.Power, n, v.N)
		}
		if want, _ := stats.McNemarSampleSize(v.PDisc, d, v.Alpha, v.Power); n != want {
			t.Errorf("cases_needed %d, stats.McNemarSampleSize %d", n, want)
		}
		want, err := stats.McNemarPower(v.N, v.PDisc, d, v.Alpha)
		if err != nil {
			t.Fatal(err)
		}
		if got := planNum(t, doc, "achieved_power"); got != want || got < v.Power {
			t.Errorf("achieved_power %v, want stats.McNemarPower %v (at least %v)", got, want, v.Power)
		}
		if doc["mdd"] != nil || doc["cases"] != nil || doc["power_at_cases"] != nil {
			t.Errorf("without --cases: mdd %v cases %v power_at_cases %v, want null", doc["mdd"], doc["cases"], doc["power_at_cases"])
		}
		if planNum(t, doc, "delta") != d || planNum(t, doc, "p_disc") != v.PDisc || planNum(t, doc, "alpha") != v.Alpha || planNum(t, doc, "power") != v.Power {
			t.Errorf("inputs not echoed: %v", doc)
		}
	}
	for _, v := range g.MDD {
		doc := planJSON(t, "--p-disc", planFmt(v.PDisc), "--cases", strconv.Itoa(v.N), "--alpha", planFmt(v.Alpha), "--power", planFmt(v.Power))
		got := planNum(t, doc, "mdd")
		if math.Abs(got-v.MDD) > 1e-9 {
			t.Errorf("MDD of %d cases at %v: %v, brentq reference %v", v.N, v.PDisc, got, v.MDD)
		}
		if want, _ := stats.MinDetectableDifference(v.N, v.PDisc, v.Alpha, v.Power); got != want {
			t.Errorf("mdd %v, stats.MinDetectableDifference %v", got, want)
		}
		if doc["cases_needed"] != nil || doc["delta"] != nil || int(planNum(t, doc, "cases")) != v.N {
			t.Errorf("--cases alone: %v", doc)
		}
	}
	// Both: the size needed for delta, the MDD of the set, and the power of
	// the set to detect delta; Connor's example set of 30 cases is above
	// the 23 needed, so its power exceeds 80% and its MDD is below 0.4.
	doc := planJSON(t, "--delta", "0.4", "--p-disc", "0.5", "--cases", "30")
	pw, _ := stats.McNemarPower(30, 0.5, 0.4, 0.05)
	mdd, _ := stats.MinDetectableDifference(30, 0.5, 0.05, 0.8)
	if planNum(t, doc, "power_at_cases") != pw || planNum(t, doc, "mdd") != mdd || planNum(t, doc, "cases_needed") != 23 {
		t.Errorf("got %v; want power_at_cases %v, mdd %v, cases_needed 23", doc, pw, mdd)
	}
	if pw <= 0.8 || mdd >= 0.4 {
		t.Errorf("30 cases > 23 needed, yet power %v and MDD %v", pw, mdd)
	}
}

// From assumed rates: statsmodels' NormalIndPower sample size per target,
// and the explanation that a paired run needs fewer.
func TestPlanRatesMatchesStatsmodels(t *testing.T) {
	t.Parallel()
	g := loadPlanGolden(t)
	for _, v := range g.TwoProp {
		doc := planJSON(t, "--p1", planFmt(v.P1), "--p2", planFmt(v.P2), "--alpha", planFmt(v.Alpha), "--power", planFmt(v.Power))
		planRequireKeys(t, "rates", doc, "mode", "method", "alpha", "power", "p1", "p2", "delta", "cases_per_target",
			"p_disc_if_independent", "paired_cases_if_independent", "note")
		if n := int(planNum(t, doc, "cases_per_target")); n != v.N {
			t.Errorf("p1 %v p2 %v: %d per target, statsmodels %d", v.P1, v.P2, n, v.N)
		}
		ind := v.P1*(1-v.P2) + v.P2*(1-v.P1)
		if got := planNum(t, doc, "p_disc_if_independent"); math.Abs(got-ind) > 1e-15 {
			t.Errorf("p_disc_if_independent %v, want p1(1-p2)+p2(1-p1) = %v", got, ind)
		}
		want, _ := stats.McNemarSampleSize(ind, math.Abs(v.P1-v.P2), v.Alpha, v.Power)
		if got := int(planNum(t, doc, "paired_cases_if_independent")); got != want {
			t.Errorf("paired_cases_if_independent %d, stats %d", got, want)
		}
	}

	inv := runCLI(t, cliEnv{}, "plan", "--p1", "0.80", "--p2", "0.83")
	if inv.code != 0 {
		t.Fatalf("exit %d: %s", inv.code, inv.stderr)
	}
	n, _ := stats.TwoProportionSampleSize(0.80, 0.83, 0.05, 0.8)
	text := strings.Join(strings.Fields(inv.stdout), " ")
	for _, want := range []string{strconv.Itoa(n) + " per target", "80% vs 83%", "3 points", "needs fewer", "discordant", "assay plan --delta 0.03 --p-disc"} {
		if !strings.Contains(text, want) {
			t.Errorf("rates output lacks %q:\n%s", want, inv.stdout)
		}
	}
	// The claim the note makes holds here: with half the discordance of
	// independent outcomes, the paired design needs far fewer cases.
	half, _ := stats.McNemarSampleSize((0.8*0.17+0.83*0.2)/2, 0.03, 0.05, 0.8)
	if half >= n*3/4 {
		t.Errorf("paired at half the independent discordance needs %d, two samples %d", half, n)
	}
}

// planQuickstartPasses recomputes, from the example's recorded outputs and its
// dataset (not from assay), which cases each model passes: the spec
// extracts `Category:\s*(\w+)`, trims and lowercases, and compares with the
// case's category; in the should-refuse bucket a refusal passes.
func planQuickstartPasses(t *testing.T) (a, b map[string]bool, tags map[string]map[string]string) {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "examples", "quickstart")
	extract := regexp.MustCompile(`Category:\s*(\w+)`)
	outputs := map[string][2]string{}
	planEachLine(t, filepath.Join(dir, "recorded.jsonl"), func(line []byte) {
		var r struct {
			Ticket string
			ModelA struct{ Output string } `json:"model_a"`
			ModelB struct{ Output string } `json:"model_b"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		outputs[r.Ticket] = [2]string{r.ModelA.Output, r.ModelB.Output}
	})
	passes := func(out, want, bucket string) bool {
		// In the should-refuse bucket refusing passes (the recorded
		// refusals read "I can't help with that request.").
		if bucket == "should-refuse" {
			return strings.Contains(out, "can't help")
		}
		m := extract.FindStringSubmatch(out)
		return m != nil && strings.EqualFold(strings.TrimSpace(m[1]), strings.TrimSpace(want))
	}
	a, b, tags = map[string]bool{}, map[string]bool{}, map[string]map[string]string{}
	planEachLine(t, filepath.Join(dir, "cases.jsonl"), func(line []byte) {
		var c struct{ ID, Ticket, Category, Bucket, Tier string }
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		out, ok := outputs[c.Ticket]
		if !ok {
			t.Fatalf("no recorded output for %s", c.ID)
		}
		a[c.ID], b[c.ID] = passes(out[0], c.Category, c.Bucket), passes(out[1], c.Category, c.Bucket)
		tags[c.ID] = map[string]string{"bucket": c.Bucket, "tier": c.Tier}
	})
	if len(a) != 26 {
		t.Fatalf("%d cases in the example, want 26", len(a))
	}
	return a, b, tags
}

func planEachLine(t *testing.T, path string, f func([]byte)) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) > 0 {
			f(sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// planMinScore is the fewest discordant cases, all on one side, with which
// the two-sided McNemar score test reaches alpha: its statistic is then
// z = k/√k = √k, p = 2Φ(−√k) = erfc(√(k/2)) — at alpha 0.05, 4
// (p = 0.0455; 3 gives 0.083).
func planMinScore(alpha float64) int {
	k := 1
	for math.Erfc(math.Sqrt(float64(k)/2)) >= alpha {
		k++
	}
	return k
}

// planCheckEstimate checks one pair or slice of `assay plan RUN --json` against
// counts made from the example's files and the stats functions, at the
// level alpha the report tests it at.
func planCheckEstimate(t *testing.T, what string, e map[string]any, aOnly, bOnly, n int, delta, alpha float64) {
	t.Helper()
	if planMinScore(0.05) != 4 {
		t.Fatalf("planMinScore(0.05) = %d, want 4", planMinScore(0.05))
	}
	planRequireKeys(t, what, planWithout(e, "a", "b", "test", "verdict", "slices", "key", "value", "alpha"),
		"n", "a_only", "b_only", "p_disc", "observed_delta", "mdd", "cases_for_observed_delta", "cases_for_delta", "too_small", "notes")
	if int(planNum(t, e, "n")) != n || int(planNum(t, e, "a_only")) != aOnly || int(planNum(t, e, "b_only")) != bOnly {
		t.Errorf("%s: n %v a_only %v b_only %v; the example's files say %d, %d, %d", what, e["n"], e["a_only"], e["b_only"], n, aOnly, bOnly)
		return
	}
	pDisc := float64(aOnly+bOnly) / float64(n)
	obs := float64(aOnly-bOnly) / float64(n)
	if planNum(t, e, "p_disc") != pDisc || planNum(t, e, "observed_delta") != obs {
		t.Errorf("%s: p_disc %v observed_delta %v, want %v and %v", what, e["p_disc"], e["observed_delta"], pDisc, obs)
	}
	if _, ok := e["notes"].([]any); !ok {
		t.Errorf("%s: notes = %#v, want a list", what, e["notes"])
	}
	if pDisc == 0 {
		if e["mdd"] != nil || e["cases_for_observed_delta"] != nil || e["cases_for_delta"] != nil || e["too_small"] != false {
			t.Errorf("%s: no discordance, yet %v", what, e)
		}
		return
	}
	mdd, mddErr := stats.MinDetectableDifference(n, pDisc, alpha, 0.8)
	switch {
	case mddErr != nil && e["mdd"] != nil:
		t.Errorf("%s: mdd %v where stats finds none (%v)", what, e["mdd"], mddErr)
	case mddErr == nil && (e["mdd"] == nil || planNum(t, e, "mdd") != mdd):
		t.Errorf("%s: mdd %v, stats %v", what, e["mdd"], mdd)
	}
	gap := math.Abs(obs)
	if gap > 0 {
		want, _ := stats.McNemarSampleSize(pDisc, gap, alpha, 0.8)
		if e["cases_for_observed_delta"] == nil || int(planNum(t, e, "cases_for_observed_delta")) != want {
			t.Errorf("%s: cases_for_observed_delta %v, stats %d", what, e["cases_for_observed_delta"], want)
		}
	} else if e["cases_for_observed_delta"] != nil {
		t.Errorf("%s: cases_for_observed_delta %v with no observed difference", what, e["cases_for_observed_delta"])
	}
	// A difference the report decided is never "too small".
	undecided := e["verdict"] == nil || e["verdict"] == "" || e["verdict"] == stats.VerdictInconclusive
	tooSmall := gap > 0 && undecided && (mddErr != nil || mdd > gap || aOnly+bOnly < planMinScore(alpha))
	if e["too_small"] != tooSmall {
		t.Errorf("%s: too_small %v; gap %v, mdd %v (%v), %d discordant: want %v", what, e["too_small"], gap, mdd, mddErr, aOnly+bOnly, tooSmall)
	}
	switch {
	case delta == 0:
		if e["cases_for_delta"] != nil {
			t.Errorf("%s: cases_for_delta %v without --delta", what, e["cases_for_delta"])
		}
	case delta > pDisc:
		if e["cases_for_delta"] != nil || len(e["notes"].([]any)) == 0 {
			t.Errorf("%s: a %v difference cannot occur at discordance %v, yet cases_for_delta %v, notes %v", what, delta, pDisc, e["cases_for_delta"], e["notes"])
		}
	default:
		want, _ := stats.McNemarSampleSize(pDisc, delta, alpha, 0.8)
		if e["cases_for_delta"] == nil || int(planNum(t, e, "cases_for_delta")) != want {
			t.Errorf("%s: cases_for_delta %v, stats %d", what, e["cases_for_delta"], want)
		}
	}
}

func planWithout(m map[string]any, drop ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if !slices.Contains(drop, k) {
			out[k] = v
		}
	}
	return out
}

// On the bundled example (2 targets × 26 cases): every pair and slice
// carries the counts the example's own files give, and the MDD and sample
// sizes internal/stats computes from them; small slices are flagged.
func TestPlanRunOnExample(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	if inv := runCLI(t, cliEnv{}, "run", filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml"), "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	a, b, tags := planQuickstartPasses(t)
	count := func(keep func(id string) bool) (aOnly, bOnly, n int) {
		for id := range a {
			if !keep(id) {
				continue
			}
			n++
			if a[id] && !b[id] {
				aOnly++
			} else if b[id] && !a[id] {
				bOnly++
			}
		}
		return
	}
	all := func(string) bool { return true }

	for _, delta := range []float64{0, 0.1} {
		args := []string{"latest", "--db", db, "--slices"}
		if delta > 0 {
			args = append(args, "--delta", planFmt(delta))
		}
		doc := planJSON(t, args...)
		planRequireKeys(t, "run", doc, "mode", "run_id", "scoring", "alpha", "alpha_per_pair", "power", "delta", "pairs", "notes")
		if doc["mode"] != "run" || doc["run_id"] == "" || planNum(t, doc, "scoring") != 1 {
			t.Errorf("header %v", planWithout(doc, "pairs"))
		}
		if (delta == 0) != (doc["delta"] == nil) {
			t.Errorf("delta %v echoed as %v", delta, doc["delta"])
		}
		pairs := doc["pairs"].([]any)
		if len(pairs) != 1 {
			t.Fatalf("%d pairs, want model-a vs model-b", len(pairs))
		}
		p := pairs[0].(map[string]any)
		if p["a"] != "model-a" || p["b"] != "model-b" || p["test"] != "mcnemar_score" || p["verdict"] == "" {
			t.Errorf("pair %v", planWithout(p, "slices"))
		}
		ao, bo, n := count(all)
		// One pair: the report tests it at alpha itself.
		planCheckEstimate(t, "pair", p, ao, bo, n, delta, 0.05)

		var got []string
		for _, x := range p["slices"].([]any) {
			s := x.(map[string]any)
			key, value := s["key"].(string), s["value"].(string)
			got = append(got, key+"="+value)
			ao, bo, n := count(func(id string) bool { return tags[id][key] == value })
			// The report's Holm family of a slice is every value of its tag
			// (one pair): the example has 4 buckets and 3 tiers.
			alpha := map[string]float64{"bucket": 0.05 / 4, "tier": 0.05 / 3}[key]
			if planNum(t, s, "alpha") != alpha {
				t.Errorf("slice %s=%s: alpha %v, want %v", key, value, s["alpha"], alpha)
			}
			planCheckEstimate(t, "slice "+key+"="+value, s, ao, bo, n, delta, alpha)
		}
		want := []string{"bucket=common", "bucket=edge", "bucket=hostile", "bucket=should-refuse", "tier=easy", "tier=medium", "tier=hard"}
		if !slices.Equal(got, want) {
			t.Errorf("slices %v, want %v (keys sorted, tiers in order)", got, want)
		}
	}

	// --tag restricts the slices to one key.
	doc := planJSON(t, "latest", "--db", db, "--tag", "tier")
	var got []string
	for _, x := range doc["pairs"].([]any)[0].(map[string]any)["slices"].([]any) {
		s := x.(map[string]any)
		got = append(got, s["key"].(string)+"="+s["value"].(string))
	}
	if !slices.Equal(got, []string{"tier=easy", "tier=medium", "tier=hard"}) {
		t.Errorf("--tag tier: slices %v", got)
	}
	// Without --slices, no slices key at all.
	if _, ok := planJSON(t, "latest", "--db", db)["pairs"].([]any)[0].(map[string]any)["slices"]; ok {
		t.Error("slices present without --slices")
	}

	// The text table shows the same numbers and flags the small slices.
	inv := runCLI(t, cliEnv{}, "plan", "latest", "--db", db, "--tag", "tier", "--delta", "0.1")
	if inv.code != 0 {
		t.Fatalf("exit %d: %s", inv.code, inv.stderr)
	}
	ao, bo, n := count(all)
	pd := float64(ao+bo) / float64(n)
	forObs, _ := stats.McNemarSampleSize(pd, math.Abs(float64(ao-bo))/float64(n), 0.05, 0.8)
	forDelta, _ := stats.McNemarSampleSize(pd, 0.1, 0.05, 0.8)
	pairRow := planLineWith(inv.stdout, "model-a vs model-b  ")
	for _, want := range []string{strconv.Itoa(n), strconv.Itoa(ao + bo), strconv.Itoa(forObs), strconv.Itoa(forDelta)} {
		if !slices.Contains(strings.Fields(pairRow), want) && !strings.Contains(pairRow, want+" (") {
			t.Errorf("pair row lacks %s: %q", want, pairRow)
		}
	}
	for _, tier := range []string{"easy", "medium", "hard"} {
		ao, bo, n := count(func(id string) bool { return tags[id]["tier"] == tier })
		gap := math.Abs(float64(ao-bo)) / float64(n)
		mdd, err := stats.MinDetectableDifference(n, float64(ao+bo)/float64(n), 0.05/3, 0.8)
		small := gap > 0 && (err != nil || mdd > gap || ao+bo < planMinScore(0.05/3))
		if row := planLineWith(inv.stdout, "tier="+tier); strings.Contains(row, "too few cases") != small {
			t.Errorf("tier %s (gap %v, mdd %v %v): row %q, too small %v", tier, gap, mdd, err, row, small)
		}
	}
	for _, l := range strings.Split(inv.stdout, "\n") {
		if strings.TrimRight(l, " ") != l {
			t.Errorf("trailing blanks: %q", l)
		}
	}

	// An unknown tag key is a usage error naming the keys there are.
	inv = runCLI(t, cliEnv{}, "plan", "latest", "--db", db, "--tag", "region")
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, "its keys are: bucket, tier") {
		t.Errorf("--tag region: exit %d, %s", inv.code, inv.stderr)
	}
	// A run that is not there.
	inv = runCLI(t, cliEnv{}, "plan", "nosuchrun", "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "nosuchrun") {
		t.Errorf("plan nosuchrun: exit %d, %s", inv.code, inv.stderr)
	}
}

func planLineWith(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// A run with three targets, one a copy of another: the identical pair has
// no discordance to plan from and says so; the notes tell how to plan for
// the Holm adjustment over three pairs. A run with several epochs is
// compared on per-case means and is not planned with McNemar. A run of one
// target has no pairs.
func TestPlanRunEdgeCases(t *testing.T) {
	t.Parallel()
	src := filepath.Join(repoRoot(t), "examples", "quickstart")
	dir := t.TempDir()
	for _, f := range []string{"cases.jsonl", "recorded.jsonl", filepath.Join("prompts", "system.txt")} {
		writeFile(t, filepath.Join(dir, f), readFileT(t, filepath.Join(src, f)))
	}
	spec := strings.Replace(readFileT(t, filepath.Join(src, "assay.yaml")), "output:\n", `  - name: model-a-again
    provider: replay
    replay: {path: recorded.jsonl, join: ticket, output: model_a.output}
output:
`, 1)
	writeFile(t, filepath.Join(dir, "assay.yaml"), spec)
	db := filepath.Join(dir, "assay.db")
	if inv := runCLI(t, cliEnv{}, "run", filepath.Join(dir, "assay.yaml"), "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	doc := planJSON(t, "latest", "--db", db, "--delta", "0.05")
	pairs := doc["pairs"].([]any)
	if len(pairs) != 3 {
		t.Fatalf("%d pairs, want 3", len(pairs))
	}
	same := 0
	for _, x := range pairs {
		p := x.(map[string]any)
		if p["a"] == "model-a" && p["b"] == "model-a-again" {
			same++
			a, _, _ := planQuickstartPasses(t)
			planCheckEstimate(t, "identical pair", p, 0, 0, len(a), 0.05, 0.05/3)
			if notes := p["notes"].([]any); len(notes) == 0 || !strings.Contains(notes[0].(string), "--p-disc") {
				t.Errorf("identical pair notes %v: should say to assume a discordance", notes)
			}
		}
	}
	if same != 1 {
		t.Errorf("pair model-a vs model-a-again missing: %v", pairs)
	}
	notes, _ := json.Marshal(doc["notes"])
	// Three pairs: every pair is planned at alpha/3, and the notes say so.
	if !strings.Contains(string(notes), "Holm") || !strings.Contains(string(notes), "alpha/3 = 0.01667") || planNum(t, doc, "alpha_per_pair") != 0.05/3 {
		t.Errorf("notes %s, alpha_per_pair %v: want alpha split over 3 pairs", notes, doc["alpha_per_pair"])
	}

	db2 := filepath.Join(dir, "epochs.db")
	if inv := runCLI(t, cliEnv{}, "run", filepath.Join(src, "assay.yaml"), "--db", db2, "--epochs", "2"); inv.code != 0 {
		t.Fatalf("run --epochs 2: %s", inv.stderr)
	}
	p := planJSON(t, "latest", "--db", db2)["pairs"].([]any)[0].(map[string]any)
	if p["test"] == "mcnemar_exact" || p["p_disc"] != nil || p["observed_delta"] != nil || p["mdd"] != nil ||
		p["cases_for_observed_delta"] != nil || p["too_small"] != false || len(p["notes"].([]any)) == 0 {
		t.Errorf("epochs 2: %v; want no McNemar plan and a note why", p)
	}

	db3 := filepath.Join(dir, "one.db")
	if inv := runCLI(t, cliEnv{}, "run", filepath.Join(src, "assay.yaml"), "--db", db3, "--targets", "model-a"); inv.code != 0 {
		t.Fatalf("run --targets model-a: %s", inv.stderr)
	}
	one := planJSON(t, "latest", "--db", db3)
	if ps := one["pairs"].([]any); len(ps) != 0 {
		t.Errorf("one target: pairs %v", ps)
	}
	if ns, _ := json.Marshal(one["notes"]); !strings.Contains(string(ns), "no pair") {
		t.Errorf("one target: notes %s", ns)
	}
}

// Every mistake on the command line is a usage error (exit 2) that says
// what would be valid, found before any store is opened.
func TestPlanUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "never", "assay.db")
	cases := []struct {
		args []string
		want []string
	}{
		{nil, []string{"nothing to plan", "--p-disc", "--p1", "RUN_ID"}},
		{[]string{"--delta", "0.03"}, []string{"--delta needs a discordance", "--p-disc"}},
		{[]string{"--cases", "100"}, []string{"--cases needs a discordance"}},
		{[]string{"--p-disc", "0.1"}, []string{"--p-disc needs --delta", "--cases"}},
		{[]string{"--p1", "0.8"}, []string{"--p1 and --p2 go together"}},
		{[]string{"--p2", "0.8"}, []string{"--p1 and --p2 go together"}},
		{[]string{"--p1", "0.8", "--p2", "0.83", "--p-disc", "0.1"}, []string{"--p-disc cannot be combined with --p1/--p2"}},
		{[]string{"--p1", "0.8", "--p2", "0.83", "--delta", "0.03"}, []string{"--delta cannot be combined with --p1/--p2"}},
		{[]string{"latest", "--p-disc", "0.1"}, []string{"--p-disc cannot be combined with a run"}},
		{[]string{"latest", "--cases", "10"}, []string{"--cases cannot be combined with a run"}},
		{[]string{"latest", "--p1", "0.8", "--p2", "0.9"}, []string{"--p1, --p2 cannot be combined with a run"}},
		{[]string{"--delta", "0.03", "--p-disc", "0.1", "--slices"}, []string{"--slices only apply to a run"}},
		{[]string{"--delta", "0.03", "--p-disc", "0.1", "--tag", "tier"}, []string{"--tag only apply to a run"}},
		{[]string{"--delta", "0", "--p-disc", "0.1"}, []string{"--delta 0:", "in (0, 1)"}},
		{[]string{"--delta", "-0.03", "--p-disc", "0.1"}, []string{"--delta -0.03:", "in (0, 1)"}},
		{[]string{"--delta", "3", "--p-disc", "0.1"}, []string{"--delta 3:", "write --delta 0.03"}},
		{[]string{"--delta", "NaN", "--p-disc", "0.1"}, []string{"--delta NaN"}},
		{[]string{"--delta", "0.03", "--p-disc", "0"}, []string{"--p-disc 0:", "(0, 1]"}},
		{[]string{"--delta", "0.03", "--p-disc", "1.5"}, []string{"--p-disc 1.5:"}},
		{[]string{"--delta", "0.2", "--p-disc", "0.1"}, []string{"impossible", "at least --delta"}},
		{[]string{"--delta", "0.03", "--p-disc", "0.1", "--power", "1"}, []string{"--power 1:", "(0, 1)"}},
		{[]string{"--delta", "0.03", "--p-disc", "0.1", "--power", "0.04"}, []string{"--power 0.04 must exceed --alpha 0.05"}},
		{[]string{"--delta", "0.03", "--p-disc", "0.1", "--alpha", "0"}, []string{"--alpha 0:"}},
		{[]string{"--delta", "0.03", "--p-disc", "0.1", "--alpha", "1.2"}, []string{"--alpha 1.2:"}},
		{[]string{"--p-disc", "0.1", "--cases", "0"}, []string{"--cases 0:", "at least 1"}},
		{[]string{"--p1", "0.8", "--p2", "0.8"}, []string{"both 0.8", "no difference"}},
		{[]string{"--p1", "80", "--p2", "0.83"}, []string{"--p1 80:", "write --p1 0.8"}},
		{[]string{"--p1", "0.8", "--p2", "-0.1"}, []string{"--p2 -0.1:"}},
		{[]string{"a", "b"}, []string{"accepts between 0 and 1 arg"}},
		{[]string{"--delta", "x", "--p-disc", "0.1"}, []string{"invalid argument"}},
		// Every problem at once.
		{[]string{"--delta", "3", "--p-disc", "2", "--power", "2"}, []string{"--delta 3:", "--p-disc 2:", "--power 2:"}},
	}
	for _, c := range cases {
		args := append([]string{"plan", "--db", db}, c.args...)
		inv := runCLI(t, cliEnv{}, args...)
		if inv.code != ExitUsage {
			t.Errorf("assay %s: exit %d (%s), want %d", strings.Join(args, " "), inv.code, inv.stderr, ExitUsage)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(inv.stderr, w) {
				t.Errorf("assay %s: stderr %q lacks %q", strings.Join(args, " "), inv.stderr, w)
			}
		}
		if inv.stdout != "" {
			t.Errorf("assay %s: printed %q on a usage error", strings.Join(args, " "), inv.stdout)
		}
	}
	if _, err := os.Stat(filepath.Dir(db)); !os.IsNotExist(err) {
		t.Errorf("a usage error touched the store: %v", err)
	}
}

// Questions with no answer are errors (exit 1) in the user's terms, not
// the statistics package's.
func TestPlanExplainsWhatCannotBeDetected(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		// Five cases at 5% discordance: not even a 5-point difference.
		{[]string{"--p-disc", "0.05", "--cases", "5"}, "5 cases at 5% discordance cannot detect any difference with 80% power"},
		// A difference of a billionth needs ~8e18 cases.
		{[]string{"--delta", "1e-9", "--p-disc", "1"}, "more cases than any evaluation set could hold"},
		{[]string{"--p1", "0.5", "--p2", "0.5000000001"}, "more cases than any evaluation set could hold"},
	}
	for _, c := range cases {
		inv := runCLI(t, cliEnv{}, append([]string{"plan"}, c.args...)...)
		if inv.code != ExitErr || !strings.Contains(inv.stderr, c.want) || strings.Contains(inv.stderr, "stats:") {
			t.Errorf("plan %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(c.args, " "), inv.code, inv.stderr, c.want)
		}
	}
}

// FuzzPlanAssumptions feeds arbitrary flag values to the assumption modes:
// every answer is exit 0 with JSON that parses (no NaN or Inf slips into
// it, and the sample size achieves the power asked), or a usage error
// (2), or an explained error (1); never a panic.
func FuzzPlanAssumptions(f *testing.F) {
	f.Add("0.03", "0.12", "", "0.8", "0.05", false)
	f.Add("0.4", "0.5", "30", "0.8", "0.05", false)
	f.Add("1e-9", "1", "", "0.9", "0.01", false)
	f.Add("0.8", "0.83", "", "0.8", "0.05", true)
	f.Add("0", "1", "", "0.5", "0.5", true)
	f.Add("NaN", "+Inf", "-1", "1e-300", "0.999999", false)
	f.Fuzz(func(t *testing.T, x, y, cases, power, alpha string, rates bool) {
		args := []string{"plan", "--json", "--power=" + power, "--alpha=" + alpha}
		if rates {
			args = append(args, "--p1="+x, "--p2="+y)
		} else {
			args = append(args, "--delta="+x, "--p-disc="+y)
			if cases != "" {
				args = append(args, "--cases="+cases)
			}
		}
		inv := runCLI(t, cliEnv{}, args...)
		switch inv.code {
		case ExitUsage, ExitErr:
			if inv.stdout != "" || !strings.HasPrefix(inv.stderr, "assay: ") {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, inv.code, inv.stdout, inv.stderr)
			}
		case ExitOK:
			var doc map[string]any
			if err := json.Unmarshal([]byte(inv.stdout), &doc); err != nil {
				t.Fatalf("%v: %v in %q", args, err, inv.stdout)
			}
			if p, ok := doc["achieved_power"].(float64); ok && p < doc["power"].(float64) {
				t.Fatalf("%v: achieved power %v below %v", args, p, doc["power"])
			}
		default:
			t.Fatalf("%v: exit %d: %s", args, inv.code, inv.stderr)
		}
	})
}
