package dataset

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/spec"
)

// healthSpec loads a spec over a file in testdata/health.
func healthSpec(t *testing.T, datasetYAML string) *spec.Spec {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "health"))
	if err != nil {
		t.Fatal(err)
	}
	src := "dataset:\n" + datasetYAML + "prompt: {user: \"Q: {{.question}}\"}\ntargets: [{name: a, provider: exec, command: [x]}]\n"
	sp, err := spec.Parse(filepath.Join(dir, "s.yaml"), []byte(src))
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	return sp
}

func refs(ids ...string) []CaseRef {
	var out []CaseRef
	for _, id := range ids {
		var line int
		fmt.Sscanf(id, "p%d", &line)
		out = append(out, CaseRef{ID: id, Line: line})
	}
	return out
}

// Every planted problem of testdata/health/planted.jsonl is found, with the
// figures worked out by hand from the file.
func TestHealthFindsPlantedProblems(t *testing.T) {
	sp := healthSpec(t, "  path: planted.jsonl\n  id: id\n  expected: answer\n  tags: {bucket: bucket, topic: topic}\n")
	h, err := CheckHealth(sp, HealthOptions{TextFields: []string{"question"}})
	if err != nil {
		t.Fatal(err)
	}
	if h.Cases != 13 || h.Skipped != 0 {
		t.Errorf("cases %d, skipped %d; want 13, 0", h.Cases, h.Skipped)
	}

	// p02 is p01 with other case, punctuation and spacing; p04 is p03 but
	// expects Lyon instead of Paris.
	ex := h.Exact
	if ex.Groups != 2 || ex.Cases != 4 || ex.Extra != 2 || ex.Conflicting != 1 {
		t.Errorf("exact duplicates %+v; want 2 groups, 4 cases, 2 extra, 1 conflicting", ex)
	}
	if len(ex.List) == 2 {
		if !reflect.DeepEqual(ex.List[0].Cases, refs("p01", "p02")) || ex.List[0].Expected != nil {
			t.Errorf("first group %+v; want p01, p02 agreeing", ex.List[0])
		}
		if !reflect.DeepEqual(ex.List[1].Cases, refs("p03", "p04")) || !slices.Equal(ex.List[1].Expected, []string{"Paris", "Lyon"}) {
			t.Errorf("second group %+v; want p03, p04 expecting Paris and Lyon", ex.List[1])
		}
		if ex.List[1].Text != "what is the capital city of france" {
			t.Errorf("group text %q", ex.List[1].Text)
		}
	}

	// p06 is p05 with forty → fifty: 20 shared of 22 distinct tokens.
	nd := h.Near
	if nd.Pairs != 1 || nd.Cases != 2 || len(nd.List) != 1 {
		t.Fatalf("near duplicates %+v; want the one pair p05, p06", nd)
	}
	p := nd.List[0]
	if p.A != refs("p05")[0] || p.B != refs("p06")[0] || p.Similarity != 0.9091 ||
		!slices.Equal(p.OnlyA, []string{"forty"}) || !slices.Equal(p.OnlyB, []string{"fifty"}) {
		t.Errorf("pair %+v; want p05 ~ p06 at 20/22 = 0.9091, forty vs fifty", p)
	}

	// p07 lacks the field, p08 is null, p09 blank; p10 (should-refuse) needs none.
	e := h.Expected
	if e.Missing != 3 || !reflect.DeepEqual(e.MissingList, refs("p07", "p08", "p09")) || e.Unextractable != 0 || e.ShouldRefuseExempt != 1 {
		t.Errorf("expected %+v; want p07, p08, p09 missing and one should-refuse case exempt", e)
	}
	if !h.Invalid() {
		t.Error("a dataset with cases lacking an expected value is not invalid")
	}

	l := h.Labels
	wantTop := []ValueCount{{"5 pm", 2, 2.0 / 9, false, 0}, {"no", 2, 2.0 / 9, false, 0}, {"120", 1, 1.0 / 9, false, 0},
		{"150", 1, 1.0 / 9, false, 0}, {"Berlin", 1, 1.0 / 9, false, 0}, {"Lyon", 1, 1.0 / 9, false, 0}, {"Paris", 1, 1.0 / 9, false, 0}}
	if l == nil || l.Values != 9 || l.Distinct != 7 || l.Numeric || l.Other != 0 || !reflect.DeepEqual(l.Top, wantTop) {
		t.Errorf("labels %+v; want 9 values, 7 distinct, not numeric, top %v", l, wantTop)
	}

	if len(h.Tags) != 2 {
		t.Fatalf("tags %+v", h.Tags)
	}
	bucket := h.Tags[0]
	if bucket.Key != "bucket" || bucket.Missing != 1 || !reflect.DeepEqual(bucket.MissingList, refs("p13")) || bucket.Small != 3 {
		t.Errorf("bucket tag %+v; want p13 without a value and 3 small values", bucket)
	}
	got := map[string]int{}
	for _, v := range bucket.Values {
		got[v.Value] = v.Count
		if !v.Small {
			t.Errorf("bucket %s with %d cases is not marked small", v.Value, v.Count)
		}
	}
	if !reflect.DeepEqual(got, map[string]int{"common": 9, "hostile": 2, "should-refuse": 1}) {
		t.Errorf("bucket counts %v", got)
	}
	// The widest 95% Wilson half-width on 2 cases (1 of 2), from statsmodels:
	// proportion_confint(1, 2, alpha=0.05, method="wilson") = (0.0945, 0.9055).
	if hw := bucket.Values[1].HalfWidth; bucket.Values[1].Value != "hostile" || math.Abs(hw-0.4054687942657693) > 1e-9 {
		t.Errorf("hostile half-width %v; want 0.40547", hw)
	}
	if !slices.Equal(h.MissingBuckets, []string{"edge"}) {
		t.Errorf("missing buckets %v; want [edge]", h.MissingBuckets)
	}
	topic := h.Tags[1]
	if topic.Key != "topic" || topic.Missing != 0 || len(topic.Values) != 4 || topic.Values[0].Value != "math" || topic.Values[0].Count != 5 {
		t.Errorf("topic tag %+v; want 4 values, math (5) first", topic)
	}

	if ws := h.Warnings(); len(ws) != 3 {
		t.Errorf("warnings %q; want exact duplicates, conflicting answers, near duplicates", ws)
	}
}

// A bucket with enough cases is not small; MinBucket sets the line.
func TestHealthMinBucket(t *testing.T) {
	sp := healthSpec(t, "  path: planted.jsonl\n  id: id\n  expected: answer\n  tags: {bucket: bucket}\n")
	h, err := CheckHealth(sp, HealthOptions{MinBucket: 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range h.Tags[0].Values {
		if v.Small != (v.Count < 9) || (v.Small && v.HalfWidth == 0) || (!v.Small && v.HalfWidth != 0) {
			t.Errorf("%+v with MinBucket 9", v)
		}
	}
	// Without a prompt's fields, every string field but the ID and the
	// expected field is the input.
	if !slices.Equal(h.TextFields, []string{"bucket", "question", "topic"}) || h.TextSource != "string fields" {
		t.Errorf("text fields %v from %s", h.TextFields, h.TextSource)
	}
}

// expected_extract that does not match is reported, not skipped; a blank
// or absent field is missing.
func TestHealthUnextractable(t *testing.T) {
	sp := healthSpec(t, "  path: extract.jsonl\n  expected: a\n  expected_extract: '####\\s*(\\S+)'\n")
	h, err := CheckHealth(sp, HealthOptions{TextFields: []string{"q"}})
	if err != nil {
		t.Fatal(err)
	}
	e := h.Expected
	wantU := []CaseRef{{"2", 2}, {"3", 3}}
	if e.Unextractable != 2 || !reflect.DeepEqual(e.UnextractableList, wantU) || e.Missing != 1 || !reflect.DeepEqual(e.MissingList, []CaseRef{{"5", 5}}) {
		t.Errorf("expected %+v; want lines 2 and 3 unextractable, 5 missing", e)
	}
	if h.Labels == nil || !h.Labels.Numeric || h.Labels.Distinct != 1 || h.Labels.Top[0] != (ValueCount{Value: "4", Count: 2, Share: 1}) {
		t.Errorf("labels %+v; want the numeric answer 4 twice", h.Labels)
	}
}

// A clean dataset has no warnings and is valid.
func TestHealthClean(t *testing.T) {
	sp := healthSpec(t, "  path: clean.jsonl\n  id: id\n  expected: answer\n  tags: {bucket: bucket}\n")
	h, err := CheckHealth(sp, HealthOptions{TextFields: []string{"question"}})
	if err != nil {
		t.Fatal(err)
	}
	if ws := h.Warnings(); len(ws) != 0 || h.Invalid() || h.Near.Pairs != 0 || h.Exact.Groups != 0 || len(h.MissingBuckets) != 0 {
		t.Errorf("clean dataset: warnings %q, invalid %v, %+v", ws, h.Invalid(), h)
	}
	if h.Expected.ShouldRefuseExempt != 1 {
		t.Errorf("should-refuse exempt %d; want 1", h.Expected.ShouldRefuseExempt)
	}
}

func TestNormalizeText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"  Hello,   WORLD!\n", "hello world"},
		{"What's 3.5 + 1/2?", "whats 3.5 + 1/2"},
		{"It costs $1,000.", "it costs $1,000"},
		{"end.Start", "endstart"},
		{"ｆｕｌｌ－ｗｉｄｔｈ", "fullwidth"}, // NFKC
		{"tab\tand\x00nul\x1fsep", "tab and nul sep"},
		{"«quoted» — dash", "quoted dash"},
		{"...", ""},
		{"", ""},
	} {
		if got := NormalizeText(c.in); got != c.want {
			t.Errorf("NormalizeText(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// The prefix filter finds exactly the pairs a comparison of every pair
// finds, at every threshold, on random sets built to have many pairs near
// each threshold.
func TestNearDuplicatesMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 25 {
		n := 30 + rng.IntN(100)
		tokens := map[string]int32{}
		var cases []healthCase
		var bases [][]string
		for i := range n {
			var words []string
			if len(bases) > 0 && rng.IntN(2) == 0 {
				// A variant of an earlier set: drop and add a few words.
				words = slices.Clone(bases[rng.IntN(len(bases))])
				for range rng.IntN(4) {
					if len(words) > 1 {
						k := rng.IntN(len(words))
						words = slices.Delete(words, k, k+1)
					}
				}
				for range rng.IntN(4) {
					words = append(words, fmt.Sprintf("w%d", rng.IntN(400)))
				}
			} else {
				for range 1 + rng.IntN(30) {
					words = append(words, fmt.Sprintf("w%d", rng.IntN(400)))
				}
				bases = append(bases, words)
			}
			text := strings.Join(words, " ")
			hc := healthCase{ref: CaseRef{ID: fmt.Sprint(i + 1), Line: i + 1}, text: text, tokens: tokenIDs(text, tokens)}
			sum := sha256.Sum256([]byte(text))
			copy(hc.key[:], sum[:16])
			cases = append(cases, hc)
		}
		for _, th := range []float64{1, 0.95, 0.9, 0.8, 0.75, 0.6, 0.5, 0.3} {
			got := nearDuplicates(cases, tokens, th, 1<<30)
			want := bruteForcePairs(cases, th)
			if got.Pairs != len(want) {
				t.Fatalf("trial %d, threshold %v: %d pairs; brute force finds %d", trial, th, got.Pairs, len(want))
			}
			have := map[[2]int]float64{}
			for _, p := range got.List {
				have[[2]int{p.A.Line, p.B.Line}] = p.Similarity
			}
			for k, j := range want {
				if s, ok := have[k]; !ok || math.Abs(s-j) > 5e-5 {
					t.Fatalf("trial %d, threshold %v: pair %v (J=%v) found %v with %v", trial, th, k, j, ok, s)
				}
			}
		}
	}
}

// bruteForcePairs compares every two cases with distinct texts.
func bruteForcePairs(cases []healthCase, th float64) map[[2]int]float64 {
	out := map[[2]int]float64{}
	first := map[[16]byte]bool{}
	var reps []healthCase
	for _, c := range cases {
		if !first[c.key] && len(c.tokens) > 0 {
			first[c.key] = true
			reps = append(reps, c)
		}
	}
	for i := range reps {
		for j := i + 1; j < len(reps); j++ {
			a, b := map[int32]bool{}, 0
			for _, x := range reps[i].tokens {
				a[x] = true
			}
			for _, y := range reps[j].tokens {
				if a[y] {
					b++
				}
			}
			jac := float64(b) / float64(len(reps[i].tokens)+len(reps[j].tokens)-b)
			if jac >= th-1e-9 {
				out[[2]int{reps[i].ref.Line, reps[j].ref.Line}] = jac
			}
		}
	}
	return out
}

// 10,000 cases of 30–60 words each, with 100 planted one-word variants:
// every planted pair is found, few pairs are compared in full, and it takes
// a few seconds at most (about 0.1 s on one core when measured).
func TestHealthTenThousandCases(t *testing.T) {
	const n, planted = 10000, 100
	rng := rand.New(rand.NewPCG(7, 7))
	// A Zipf vocabulary, like prose: a few very common words, a long tail.
	zipf := rand.NewZipf(rng, 1.1, 2, 20000)
	var b strings.Builder
	var texts []string
	for i := range n - planted {
		var words []string
		for range 30 + rng.IntN(31) {
			words = append(words, fmt.Sprintf("w%d", zipf.Uint64()))
		}
		text := strings.Join(words, " ")
		texts = append(texts, text)
		fmt.Fprintf(&b, "{\"id\":\"c%d\",\"question\":%q,\"answer\":\"%d\"}\n", i+1, text, rng.IntN(100))
	}
	for k := range planted {
		// Copy case k*7+1, change one word to one no other case has.
		words := strings.Fields(texts[k*7])
		words[rng.IntN(len(words))] = fmt.Sprintf("planted%d", k)
		fmt.Fprintf(&b, "{\"id\":\"v%d\",\"question\":%q,\"answer\":\"1\"}\n", k, strings.Join(words, " "))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Parse(filepath.Join(dir, "s.yaml"), []byte("dataset: {path: big.jsonl, id: id, expected: answer}\nprompt: {user: \"{{.question}}\"}\ntargets: [{name: a, provider: exec, command: [x]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h, err := CheckHealth(sp, HealthOptions{TextFields: []string{"question"}, DupThreshold: 0.9, MaxListed: 1000})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("10,000 cases: %v, %d pairs compared in full, %d near-duplicate pairs", elapsed, h.Near.Compared, h.Near.Pairs)
	found := map[string]bool{}
	for _, p := range h.Near.List {
		if strings.HasPrefix(p.B.ID, "v") {
			found[p.B.ID] = true
		}
	}
	// A one-word change in a text of m distinct words leaves J = (m-1)/(m+1),
	// at least 0.9 when m ≥ 19: every planted variant qualifies unless the
	// changed word was repeated in its original (then J is higher still) —
	// so all 100 must be found.
	if len(found) != planted {
		t.Errorf("found %d of %d planted near-duplicates", len(found), planted)
	}
	if all := int64(n) * (n - 1) / 2; h.Near.Compared > all/100 {
		t.Errorf("compared %d of %d pairs in full; the prefix filter should leave under 1%%", h.Near.Compared, all)
	}
	if elapsed > 30*time.Second {
		t.Errorf("took %v for 10,000 cases", elapsed)
	}
}

// The near-duplicate figures on the GSM8K test set, checked against
// testdata/health/gsm8k_near_dups.json, which gsm8k_near_dups.py computed
// by comparing all 868,821 pairs in Python. At the default threshold 0.9
// there are none; at 0.6 there are three, and the two most similar were
// read by hand: questions 419 and 559 are one locker problem asked both
// ways (Zack's, Timothy's and Peter's lockers; 13 of 16 distinct words
// shared), and 489 and 762 one puppies problem asked both ways.
func TestHealthGSM8K(t *testing.T) {
	sp := realSpec(t, `  path: gsm8k/test.jsonl
  expected: answer
  expected_extract: '####\s*(.+)$'
  tags:
    tier: 'string(size(case.answer.split("<<")) - 1)'
`)
	var ref struct {
		Counts map[string]int `json:"pairs_at_threshold"`
		Pairs  []struct {
			A, B       int
			Similarity float64
		} `json:"pairs_at_0.5"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "health", "gsm8k_near_dups.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	for _, th := range []float64{0.9, 0.8, 0.7, 0.6, 0.5} {
		h, err := CheckHealth(sp, HealthOptions{TextFields: []string{"question"}, DupThreshold: th})
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprint(th)
		if h.Near.Pairs != ref.Counts[key] {
			t.Errorf("threshold %v: %d near-duplicate pairs; the all-pairs reference finds %d", th, h.Near.Pairs, ref.Counts[key])
		}
		if th == 0.9 {
			if h.Cases != 1319 || h.Exact.Groups != 0 || h.Expected.Missing+h.Expected.Unextractable != 0 || h.Invalid() {
				t.Errorf("GSM8K at 0.9: %+v", h)
			}
			if l := h.Labels; l == nil || !l.Numeric || l.Top[0].Value != "5" || l.Top[0].Count != 40 {
				t.Errorf("labels %+v; want numeric answers, 5 the most common (40 times)", l)
			}
		}
		if th == 0.5 {
			if len(h.Near.List) != len(ref.Pairs) {
				t.Fatalf("%d pairs listed; want %d", len(h.Near.List), len(ref.Pairs))
			}
			for i, p := range h.Near.List {
				r := ref.Pairs[i]
				if p.A.Line != r.A || p.B.Line != r.B || math.Abs(p.Similarity-r.Similarity) > 5e-5 {
					t.Errorf("pair %d: %d ~ %d at %v; reference %d ~ %d at %v", i, p.A.Line, p.B.Line, p.Similarity, r.A, r.B, r.Similarity)
				}
			}
			top := h.Near.List[0]
			if top.A.ID != "419" || top.B.ID != "559" || top.Similarity != 0.8125 ||
				!slices.Equal(top.OnlyA, []string{"if", "5"}) || !slices.Equal(top.OnlyB, []string{"24"}) {
				t.Errorf("most similar pair %+v; want 419 ~ 559 at 13/16, differing in if, 5 / 24", top)
			}
		}
	}
}
