package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/difficulty"
)

// gsm8kTruth is the recorded GSM8K data as the authors scored it, read
// here apart from assay: per problem (case ID = line number) its tier (the
// "<<" calculator annotations in its reference solution: reasoning steps)
// and each configuration's is_correct.
type gsm8kTruth struct {
	question, answer []string
	tier             []int
	correct          map[string][]bool
}

func readGSM8KTruth(t *testing.T) *gsm8kTruth {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedData(t), "gsm8k", "example_model_solutions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := &gsm8kTruth{correct: map[string][]bool{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var row map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		var q, gt string
		if err := json.Unmarshal(row["question"], &q); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(row["ground_truth"], &gt); err != nil {
			t.Fatal(err)
		}
		g.question, g.answer = append(g.question, q), append(g.answer, gt)
		g.tier = append(g.tier, strings.Count(gt, "<<"))
		for _, c := range gsm8kConfigs {
			var sol struct {
				IsCorrect bool `json:"is_correct"`
			}
			if err := json.Unmarshal(row[c], &sol); err != nil {
				t.Fatal(err)
			}
			g.correct[c] = append(g.correct[c], sol.IsCorrect)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(g.tier) != 1319 {
		t.Fatalf("read %d problems, want 1319", len(g.tier))
	}
	return g
}

// counts is passed/n of config on the problems whose tier keep says.
func (g *gsm8kTruth) counts(config string, keep func(tier int) bool) (passed, n int) {
	for i, tr := range g.tier {
		if keep(tr) {
			n++
			if g.correct[config][i] {
				passed++
			}
		}
	}
	return passed, n
}

// tierShares are each tier's share of the problems keep selects.
func (g *gsm8kTruth) tierShares(keep func(int) bool) map[int]float64 {
	n := 0
	by := map[int]int{}
	for _, tr := range g.tier {
		if keep(tr) {
			by[tr]++
			n++
		}
	}
	out := map[int]float64{}
	for k, c := range by {
		out[k] = float64(c) / float64(n)
	}
	return out
}

func all(int) bool { return true }

// The per-tier view on GSM8K with reasoning steps as difficulty: every
// tier's counts are the authors' (computed here from is_correct), the
// Rasch abilities order the configurations as their totals do (the total
// is Rasch's sufficient statistic), and the text report says where a
// lead comes from: 6B verification's +4.3-point lead over 175B finetuning
// rests on the 2- and 3-step problems and reverses on 4 steps.
func TestDifficultyGSM8KTiers(t *testing.T) {
	t.Parallel()
	db, _ := gsm8kRun(t)
	truth := readGSM8KTruth(t)
	inv := runCLI(t, cliEnv{}, "difficulty", "latest", "--db", db, "--tag", "tier", "--format", "json")
	if inv.code != 0 {
		t.Fatalf("difficulty: exit %d\n%s", inv.code, inv.stderr)
	}
	var f difficulty.Fitted
	if err := json.Unmarshal([]byte(inv.stdout), &f); err != nil {
		t.Fatal(err)
	}
	if f.Fit == nil || !f.Fit.Converged || len(f.Cases) != 1319 || len(f.Targets) != 4 {
		t.Fatalf("fit: converged %v, %d cases, %d targets", f.Fit != nil && f.Fit.Converged, len(f.Cases), len(f.Targets))
	}
	if len(f.Tiers) != 9 {
		t.Fatalf("%d tiers, want 9 (0 to 8 steps)", len(f.Tiers))
	}
	for _, tier := range f.Tiers {
		k := int(tier.Value)
		for _, r := range tier.Rates {
			passed, n := truth.counts(r.Target, func(tr int) bool { return tr == k })
			if r.Passed != passed || r.N != n || tier.Cases != n {
				t.Errorf("tier %d, %s: %d/%d (%d cases), the authors' is_correct gives %d/%d", k, r.Target, r.Passed, r.N, tier.Cases, passed, n)
			}
			if !(r.CI.Lo <= r.Rate && r.Rate <= r.CI.Hi) {
				t.Errorf("tier %d, %s: rate %v outside its interval %+v", k, r.Target, r.Rate, r.CI)
			}
		}
	}
	// Rasch: equal items for every target, so θ orders as the totals do.
	for _, a := range f.Targets {
		for _, b := range f.Targets {
			pa, _ := truth.counts(a.Target, all)
			pb, _ := truth.counts(b.Target, all)
			if pa > pb && !(a.Theta > b.Theta) {
				t.Errorf("%s answered %d, %s %d, but θ %v ≤ %v", a.Target, pa, b.Target, pb, a.Theta, b.Theta)
			}
			if a.Right != pa || a.Trials != 1319 {
				t.Errorf("%s: %d/%d right, the authors' %d/1319", a.Target, a.Right, a.Trials, pa)
			}
		}
	}
	// --spec: latest is the newest run of that spec, and its difficulty:
	// section names the tag.
	bySpec := runCLI(t, cliEnv{}, "difficulty", "--spec", gsm8kMismatchSpec(t), "--db", db, "--format", "json")
	var fs difficulty.Fitted
	if bySpec.code != 0 || json.Unmarshal([]byte(bySpec.stdout), &fs) != nil || fs.Scale.Tag != "tier" || len(fs.Tiers) != 9 {
		t.Errorf("difficulty --spec: exit %d, tag %q, %d tiers\n%s", bySpec.code, fs.Scale.Tag, len(fs.Tiers), bySpec.stderr)
	}
	// Where the lead comes from, in the text report: the row of 4-step
	// problems shows 6B verification behind 175B finetuning there.
	text := runCLI(t, cliEnv{}, "difficulty", "latest", "--db", db, "--tag", "tier")
	if text.code != 0 {
		t.Fatalf("difficulty text: exit %d\n%s", text.code, text.stderr)
	}
	pv, n4 := truth.counts("6b_verification", func(tr int) bool { return tr == 4 })
	pf, _ := truth.counts("175b_finetuning", func(tr int) bool { return tr == 4 })
	d4 := float64(pv-pf) / float64(n4)
	share4 := truth.tierShares(all)[4]
	want := fmt.Sprintf("%s (%s)", signedPoints(d4), signedPoints(share4*d4))
	if d4 >= 0 {
		t.Fatalf("the data changed: 6B verification leads on 4 steps (%v)", d4)
	}
	if !strings.Contains(text.stdout, "Where the leads come from") || !strings.Contains(text.stdout, "6b_verification − 175b_finetuning") {
		t.Fatalf("no leads table:\n%s", text.stdout)
	}
	row := lineStarting(text.stdout, "4 ")
	if !strings.Contains(row, want) {
		t.Errorf("the 4-step row of the leads table lacks %q: %q", want, row)
	}
}

// signedPoints formats a difference of rates in points, one decimal, a
// true minus, as the report writes it.
func signedPoints(d float64) string {
	s := strconv.FormatFloat(100*d, 'f', 1, 64)
	if s == "0.0" || s == "-0.0" {
		return "0.0"
	}
	if strings.HasPrefix(s, "-") {
		return "−" + s[1:]
	}
	return "+" + s
}

func lineStarting(text, prefix string) string {
	in := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "Where the leads come from") {
			in = true
		}
		if in && strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// gsm8kMismatchSpec is the recorded GSM8K spec with a difficulty: section
// naming the tier tag and answering the questionnaire.
func gsm8kMismatchSpec(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mismatch.yaml")
	writeFile(t, path, gsm8kSpecText(filepath.Join(sharedData(t), "gsm8k", "example_model_solutions.jsonl"))+`difficulty:
  tag: tier
  rubric:
    stakes: {rating: low, why: "a shortlist for a pilot, reviewed by people"}
`)
	return path
}

// writeWorkload writes the problems keep selects as a workload dataset
// file (question and reference solution only: no results) and returns
// its path.
func writeWorkload(t *testing.T, g *gsm8kTruth, keep func(int) bool, extra ...map[string]string) string {
	t.Helper()
	var b strings.Builder
	for i := range g.tier {
		if keep(g.tier[i]) {
			line, _ := json.Marshal(map[string]string{"question": g.question[i], "ground_truth": g.answer[i]})
			b.Write(line)
			b.WriteString("\n")
		}
	}
	for _, e := range extra {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "workload.jsonl")
	writeFile(t, path, b.String())
	return path
}

// Re-weighting GSM8K to a workload of many-step problems (5 steps or
// more): each configuration's re-weighted score is Σ_h W_h p̂_h computed
// here from the authors' counts, and the comparison of 6B verification
// with 175B finetuning changes — better on the benchmark's own mix (+4.3
// points), not shown better under the workload's.
func TestMismatchGSM8KManyStepWorkload(t *testing.T) {
	t.Parallel()
	db, _ := gsm8kRun(t)
	truth := readGSM8KTruth(t)
	many := func(tr int) bool { return tr >= 5 }
	work := writeWorkload(t, truth, many)
	inv := runCLI(t, cliEnv{}, "mismatch", gsm8kMismatchSpec(t), "--db", db, "--benchmark", "latest", "--workload", work, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("mismatch: exit %d\n%s", inv.code, inv.stderr)
	}
	var m difficulty.Mismatch
	if err := json.Unmarshal([]byte(inv.stdout), &m); err != nil {
		t.Fatal(err)
	}
	if m.Scale.Tag != "tier" || m.Workload.Kind != difficulty.KindDataset || m.Workload.Cases != 225 {
		t.Fatalf("scale %+v, workload %+v", m.Scale, m.Workload)
	}
	W := truth.tierShares(many)
	rate := func(config string) (raw, rw float64) {
		p, n := truth.counts(config, all)
		raw = float64(p) / float64(n)
		for k, w := range W {
			pk, nk := truth.counts(config, func(tr int) bool { return tr == k })
			rw += w * float64(pk) / float64(nk)
		}
		return raw, rw
	}
	scores := map[string]difficulty.Score{}
	for _, s := range m.Scores {
		scores[s.Target] = s
		raw, rw := rate(s.Target)
		if math.Abs(s.Raw.Rate-raw) > 1e-12 || !s.Reweighted.Computable || math.Abs(s.Reweighted.Rate-rw) > 1e-12 {
			t.Errorf("%s: raw %v re-weighted %v (computable %v), the authors' counts give %v and %v", s.Target, s.Raw.Rate, s.Reweighted.Rate, s.Reweighted.Computable, raw, rw)
		}
		if s.Reweighted.Kish <= 0 || s.Reweighted.Kish > 1319 || s.Reweighted.SE <= s.Raw.SE {
			t.Errorf("%s: re-weighted n_eff %v, SE %v (raw SE %v): the workload's mix rests on fewer cases", s.Target, s.Reweighted.Kish, s.Reweighted.SE, s.Raw.SE)
		}
	}
	if len(scores) != 4 {
		t.Fatalf("%d scores, want 4", len(scores))
	}
	var changed []string
	for _, p := range m.Pairs {
		rawA, rwA := rate(p.A)
		rawB, rwB := rate(p.B)
		if math.Abs(p.Raw.Delta-(rawA-rawB)) > 1e-12 || math.Abs(p.Reweighted.Delta-(rwA-rwB)) > 1e-12 {
			t.Errorf("%s vs %s: Δ raw %v re-weighted %v, the counts give %v and %v", p.A, p.B, p.Raw.Delta, p.Reweighted.Delta, rawA-rawB, rwA-rwB)
		}
		if p.Changed != (p.Raw.Verdict != p.Reweighted.Verdict) {
			t.Errorf("%s vs %s: changed %v but verdicts %s, %s", p.A, p.B, p.Changed, p.Raw.Verdict, p.Reweighted.Verdict)
		}
		if p.Changed {
			changed = append(changed, p.A+" vs "+p.B)
		}
	}
	if len(changed) == 0 || m.VerdictsChanged != len(changed) {
		t.Fatalf("no pair's comparison changed under the many-step workload (verdicts changed %d)", m.VerdictsChanged)
	}
	// The pair the counts single out: 6B verification is ahead of 175B
	// finetuning overall, and not on 5+ steps.
	rawV, rwV := rate("6b_verification")
	rawF, rwF := rate("175b_finetuning")
	if !(rawV-rawF > 0.04 && rwV-rwF < 0.02) {
		t.Fatalf("the data changed: 6B verification − 175B finetuning raw %v, re-weighted %v", rawV-rawF, rwV-rwF)
	}
	if !strings.Contains(strings.Join(changed, "; "), "6b_verification vs 175b_finetuning") {
		t.Errorf("changed pairs %v lack 6b_verification vs 175b_finetuning", changed)
	}
	// The rubric: the questionnaire's stakes answer is read from the spec;
	// the tier distributions differ (TV 0.83), so data distribution is high
	// and the benchmark is shortlist-only.
	if m.Rubric == nil || m.Rubric.Verdict != "shortlist_only" || m.Rubric.Rule != "Any axis rated high: the benchmark may shortlist but not select." {
		t.Fatalf("rubric %+v", m.Rubric)
	}
	// Every format renders, and says the same where it matters.
	for _, format := range []string{"text", "markdown", "html"} {
		out := filepath.Join(t.TempDir(), "m."+format)
		inv := runCLI(t, cliEnv{}, "mismatch", gsm8kMismatchSpec(t), "--db", db, "--benchmark", "latest", "--workload", work, "--format", format, "-o", out)
		if inv.code != 0 {
			t.Fatalf("%s: exit %d\n%s", format, inv.code, inv.stderr)
		}
		doc := readFileT(t, out)
		for _, want := range []string{"verdict changes", "Any axis rated high: the benchmark may shortlist but not select.", "a shortlist for a pilot, reviewed by people", signedPoints(rwV - rwF)} {
			if format == "html" {
				want = strings.ReplaceAll(want, "+", "&#43;") // html/template escapes a plus sign
			}
			if !strings.Contains(doc, want) {
				t.Errorf("%s report lacks %q", format, want)
			}
		}
	}
}

// A workload needing a tier the benchmark has no problem in (10 steps):
// that bin is a gap, reported UNMEASURABLE, every re-weighted score says it
// cannot be computed, and the score over the covered bins is the counts'
// own, renormalised.
func TestMismatchGapCannotBeComputed(t *testing.T) {
	t.Parallel()
	db, _ := gsm8kRun(t)
	truth := readGSM8KTruth(t)
	keep := func(tr int) bool { return tr >= 6 }
	// Two 10-step problems: no GSM8K test problem has more than 8 steps.
	ten := strings.Repeat("<<1+1=2>> ", 10) + "\nA: 2"
	work := writeWorkload(t, truth, keep,
		map[string]string{"question": "q1", "ground_truth": ten}, map[string]string{"question": "q2", "ground_truth": ten})
	for _, format := range []string{"json", "text"} {
		inv := runCLI(t, cliEnv{}, "mismatch", gsm8kMismatchSpec(t), "--db", db, "--benchmark", "latest", "--workload", work, "--format", format)
		if inv.code != 0 {
			t.Fatalf("mismatch: exit %d\n%s", inv.code, inv.stderr)
		}
		if format == "text" {
			for _, want := range []string{"UNMEASURABLE", "cannot be computed"} {
				if !strings.Contains(inv.stdout, want) {
					t.Errorf("the text report lacks %q:\n%s", want, inv.stdout)
				}
			}
			continue
		}
		var m difficulty.Mismatch
		if err := json.Unmarshal([]byte(inv.stdout), &m); err != nil {
			t.Fatal(err)
		}
		var gap *difficulty.Bin
		for i, b := range m.Bins {
			if b.Gap {
				if gap != nil {
					t.Errorf("two gaps: %+v and %+v", *gap, b)
				}
				gap = &m.Bins[i]
			}
		}
		n := 0
		for _, tr := range truth.tier {
			if keep(tr) {
				n++
			}
		}
		if gap == nil || gap.Lo != 10 || gap.Bench != 0 || gap.Work != 2 || math.Abs(gap.WorkShare-2/float64(n+2)) > 1e-12 {
			t.Fatalf("gap bin %+v, want 10 steps, 2 workload cases of %d", gap, n+2)
		}
		if math.Abs(m.UncoveredShare-2/float64(n+2)) > 1e-12 {
			t.Errorf("uncovered share %v, want %v", m.UncoveredShare, 2/float64(n+2))
		}
		W := truth.tierShares(keep)
		for _, s := range m.Scores {
			if s.Reweighted.Computable || s.Reweighted.Why == "" || s.Reweighted.Rate != 0 {
				t.Errorf("%s: re-weighted %+v, want not computable with a reason", s.Target, s.Reweighted)
			}
			covered := 0.0
			for k, w := range W {
				pk, nk := truth.counts(s.Target, func(tr int) bool { return tr == k })
				covered += w * float64(pk) / float64(nk)
			}
			if !s.Covered.Computable || math.Abs(s.Covered.Rate-covered) > 1e-12 || math.Abs(s.CoveredShare-float64(n)/float64(n+2)) > 1e-12 {
				t.Errorf("%s: covered %+v over %v, the counts give %v over %v", s.Target, s.Covered, s.CoveredShare, covered, float64(n)/float64(n+2))
			}
		}
		for _, p := range m.Pairs {
			if p.Reweighted.Computable || p.Reweighted.Why == "" {
				t.Errorf("%s vs %s: re-weighted comparison %+v, want not computable", p.A, p.B, p.Reweighted)
			}
		}
	}
}

// Bad input exits 4 with a message naming what is wrong and what would do.
func TestDifficultyMismatchBadInput(t *testing.T) {
	t.Parallel()
	db, _ := gsm8kRun(t)
	dir := t.TempDir()
	notBaseline := filepath.Join(dir, "notes.json")
	writeFile(t, notBaseline, `{"hello": 1}`)
	noField := filepath.Join(dir, "plain.jsonl")
	writeFile(t, noField, `{"question": "a"}`+"\n")
	badLevel := filepath.Join(dir, "levels.jsonl")
	writeFile(t, badLevel, `{"q": "a", "tier": "easy"}`+"\n"+`{"q": "b", "tier": "brutal"}`+"\n")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"difficulty", "0123abcd"}, []string{"difficulty: ", "0123abcd"}},
		{[]string{"difficulty", notBaseline}, []string{notBaseline}},
		{[]string{"difficulty", filepath.Join(dir, "absent.json")}, []string{"absent.json: no such file (give a run ID, latest, or a baseline file)"}},
		{[]string{"difficulty", "latest", "--tag", "steps"}, []string{`no case has the tag "steps"`, `"tier"`}},
		{[]string{"difficulty", "--spec", filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")}, []string{`latest run of spec "ticket-triage": not found`}},
		{[]string{"mismatch", "--benchmark", "0123abcd", "--workload", noField, "--tag", "tier"}, []string{"mismatch: --benchmark: ", "0123abcd"}},
		{[]string{"mismatch", "--benchmark", "latest", "--workload", noField, "--tag", "tier"}, []string{"mismatch: --workload: ", `no case has a value of the tag "tier"`}},
		{[]string{"mismatch", "--benchmark", "latest", "--workload", noField}, []string{"mismatch: --workload: ", "take a fitted difficulty by case ID", "--id", "--tag"}},
		{[]string{"mismatch", "--benchmark", "latest", "--workload", noField, "--id", "question"}, []string{`none of the 1 cases of ` + noField + ` is a case of the fitted runs (its IDs are like "a")`}},
		{[]string{"mismatch", "--benchmark", badLevel, "--workload", badLevel, "--tag", "tier", "--levels", "easy,hard"}, []string{"mismatch: --benchmark: ", `case "2" has "brutal"`, `"easy", "hard"`}},
		{[]string{"mismatch", "--benchmark", notBaseline, "--workload", noField, "--tag", "tier"}, []string{"mismatch: --benchmark: ", notBaseline}},
	} {
		inv := runCLI(t, cliEnv{}, append(tc.args, "--db", db)...)
		if inv.code != ExitInvalid {
			t.Errorf("%s: exit %d, want 4\n%s", strings.Join(tc.args, " "), inv.code, inv.stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(inv.stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", strings.Join(tc.args, " "), w, inv.stderr)
			}
		}
	}
	// Usage errors exit 2.
	for _, args := range [][]string{
		{"mismatch", "--benchmark", "latest"},
		{"mismatch", "--benchmark", "latest", "--workload", "latest", "--edges", "3,1"},
		{"difficulty", "--model", "3pl"},
		{"difficulty", "--levels", "a,a", "--tag", "tier"},
	} {
		if inv := runCLI(t, cliEnv{}, append(args, "--db", db)...); inv.code != ExitUsage {
			t.Errorf("%s: exit %d, want 2\n%s", strings.Join(args, " "), inv.code, inv.stderr)
		}
	}
}

// Without a tag the axis is fitted: a workload that is the benchmark's own
// run, read back from its baseline file, sits exactly on it — no gap, no
// distance in the bins, and every re-weighted score equal to the raw one.
func TestMismatchFittedScaleBaselineWorkload(t *testing.T) {
	t.Parallel()
	db, _ := gsm8kRun(t)
	base := filepath.Join(t.TempDir(), "base.json")
	if inv := runCLI(t, cliEnv{}, "baseline", "export", "latest", "--db", db, "-o", base); inv.code != 0 {
		t.Fatalf("baseline export: %s", inv.stderr)
	}
	inv := runCLI(t, cliEnv{}, "mismatch", "--db", db, "--benchmark", "latest", "--workload", base, "--format", "json", "--replicates", "200")
	if inv.code != 0 {
		t.Fatalf("mismatch: exit %d\n%s", inv.code, inv.stderr)
	}
	var m difficulty.Mismatch
	if err := json.Unmarshal([]byte(inv.stdout), &m); err != nil {
		t.Fatal(err)
	}
	if m.Scale.Source != difficulty.SourceFitted || m.Workload.Kind != difficulty.KindBaseline || m.Workload.Cases != 1319 || m.Workload.Unknown != 0 {
		t.Fatalf("scale %+v, workload %+v", m.Scale, m.Workload)
	}
	if m.UncoveredShare != 0 || m.LargestGap.Work != 0 {
		t.Errorf("a gap between a run and itself: %+v, uncovered %v", m.LargestGap, m.UncoveredShare)
	}
	for _, s := range m.Scores {
		if !s.Reweighted.Computable || math.Abs(s.Reweighted.Rate-s.Raw.Rate) > 1e-12 {
			t.Errorf("%s: re-weighted %+v, raw %v: the same mix must give the same score", s.Target, s.Reweighted, s.Raw.Rate)
		}
	}
	if m.RankingChanged || m.VerdictsChanged != 0 {
		t.Errorf("the ranking or a verdict changed between a run and itself")
	}
}

// One target and a tag: nothing to fit, the tag's tiers alone, each
// tier's count the dataset's own.
func TestDifficultyOneTargetTiersAlone(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db, "--targets", "model-a"); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	inv := runCLI(t, cliEnv{}, "difficulty", "--db", db, "--tag", "tier", "--levels", "easy,medium,hard", "--format", "json")
	if inv.code != 0 {
		t.Fatalf("difficulty: exit %d\n%s", inv.code, inv.stderr)
	}
	var f difficulty.Fitted
	if err := json.Unmarshal([]byte(inv.stdout), &f); err != nil {
		t.Fatal(err)
	}
	// The quickstart's cases: 8 easy, 9 medium, 9 hard.
	want := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(readFileT(t, filepath.Join(filepath.Dir(spec), "cases.jsonl"))), "\n") {
		var c struct{ Tier string }
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		want[c.Tier]++
	}
	if f.Fit != nil || len(f.Tiers) != 3 {
		t.Fatalf("fit %v, %d tiers", f.Fit != nil, len(f.Tiers))
	}
	for i, tier := range f.Tiers {
		if tier.Label != []string{"easy", "medium", "hard"}[i] || tier.Cases != want[tier.Label] || len(tier.Rates) != 1 || tier.Rates[0].N != want[tier.Label] {
			t.Errorf("tier %d: %+v, want %s with %d cases", i, tier, []string{"easy", "medium", "hard"}[i], want[tier.Label])
		}
	}
	if !strings.Contains(strings.Join(f.Warnings, "; "), "nothing to fit") {
		t.Errorf("warnings %q do not say there is nothing to fit", f.Warnings)
	}
	// Without the tag it cannot do anything, and says what would.
	inv = runCLI(t, cliEnv{}, "difficulty", "--db", db)
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, "only model-a has results") || !strings.Contains(inv.stderr, "give --tag") {
		t.Errorf("no tag, one target: exit %d\n%s", inv.code, inv.stderr)
	}
}

// A workload dataset file on a fitted scale: its cases take the fitted
// difficulty of the benchmark's case with the same ID (--id names the
// field), so its bin counts are the fit's difficulties of those cases,
// binned here.
func TestMismatchFittedDatasetWorkloadByID(t *testing.T) {
	t.Parallel()
	db, _ := gsm8kRun(t)
	truth := readGSM8KTruth(t)
	var b strings.Builder
	var lines []string
	for i, tr := range truth.tier {
		if tr >= 5 {
			id := strconv.Itoa(i + 1) // the run's case ID: the line number
			lines = append(lines, id)
			row, _ := json.Marshal(map[string]string{"n": id, "question": truth.question[i]})
			b.Write(row)
			b.WriteString("\n")
		}
	}
	work := filepath.Join(t.TempDir(), "work.jsonl")
	writeFile(t, work, b.String())
	inv := runCLI(t, cliEnv{}, "mismatch", "--db", db, "--benchmark", "latest", "--workload", work, "--id", "n", "--format", "json", "--replicates", "100")
	if inv.code != 0 {
		t.Fatalf("mismatch: exit %d\n%s", inv.code, inv.stderr)
	}
	var m difficulty.Mismatch
	if err := json.Unmarshal([]byte(inv.stdout), &m); err != nil {
		t.Fatal(err)
	}
	fit := runCLI(t, cliEnv{}, "difficulty", "--db", db, "--format", "json")
	var f difficulty.Fitted
	if fit.code != 0 || json.Unmarshal([]byte(fit.stdout), &f) != nil {
		t.Fatalf("difficulty: exit %d\n%s", fit.code, fit.stderr)
	}
	bOf := map[string]float64{}
	for _, c := range f.Cases {
		bOf[c.ID] = c.B
	}
	if m.Scale.Source != difficulty.SourceFitted || m.Workload.Unknown != 0 || m.Workload.Cases != len(lines) || len(m.Bins) == 0 {
		t.Fatalf("scale %+v workload %+v, %d bins", m.Scale, m.Workload, len(m.Bins))
	}
	counts := make([]int, len(m.Bins))
	for _, id := range lines {
		x := bOf[id]
		for k, bin := range m.Bins {
			last := k == len(m.Bins)-1
			if x >= bin.Lo && (x < bin.Hi || last && x <= bin.Hi) {
				counts[k]++
				break
			}
		}
	}
	for k, bin := range m.Bins {
		if bin.Work != counts[k] {
			t.Errorf("bin %s: %d workload cases, the fit's difficulties of those cases put %d there", bin.Label, bin.Work, counts[k])
		}
	}
}

// Without a SPEC, the questionnaire's answers come from the workload
// run's recorded spec (its difficulty: section, here from an overlay), and
// its tag and levels too.
func TestMismatchAnswersFromWorkloadRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	overlay := filepath.Join(dir, "difficulty.yaml")
	writeFile(t, overlay, `difficulty:
  tag: tier
  levels: [easy, medium, hard]
  rubric:
    stakes: {rating: high, why: "tickets route refunds without review"}
`)
	if inv := runCLI(t, cliEnv{}, "run", spec, "-f", overlay, "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	inv := runCLI(t, cliEnv{}, "mismatch", "--db", db, "--benchmark", "latest", "--workload", "latest", "--format", "json", "--replicates", "50")
	if inv.code != 0 {
		t.Fatalf("mismatch: exit %d\n%s", inv.code, inv.stderr)
	}
	var m difficulty.Mismatch
	if err := json.Unmarshal([]byte(inv.stdout), &m); err != nil {
		t.Fatal(err)
	}
	if m.Scale.Tag != "tier" || len(m.Bins) != 3 || m.Bins[2].Label != "hard" {
		t.Errorf("scale %+v, bins %+v", m.Scale, m.Bins)
	}
	if m.Rubric == nil || m.Rubric.Verdict != "shortlist_only" || !strings.Contains(inv.stdout, "tickets route refunds without review") {
		t.Errorf("the recorded stakes answer was not used: %+v", m.Rubric)
	}
}
