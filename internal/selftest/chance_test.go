package selftest

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// The decision rule against statsmodels' Wilson interval (testdata/decide.py).
func TestDecideMatchesStatsmodels(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/decide.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden []struct {
		K, N          int
		Chance        float64
		Tests         int
		Alpha, Lo, Hi float64
		Above         bool
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden) < 30 {
		t.Fatalf("%d golden cases", len(golden))
	}
	for _, g := range golden {
		iv, above := Decide(g.K, g.N, g.Chance, g.Tests)
		if math.Abs(iv.Lo-g.Lo) > 1e-9 || math.Abs(iv.Hi-g.Hi) > 1e-9 {
			t.Errorf("Decide(%d, %d, %v, %d): interval [%v, %v], statsmodels [%v, %v]", g.K, g.N, g.Chance, g.Tests, iv.Lo, iv.Hi, g.Lo, g.Hi)
		}
		if above != g.Above {
			t.Errorf("Decide(%d, %d, %v, %d): above=%v, want %v (lower end %v vs chance+margin %v)", g.K, g.N, g.Chance, g.Tests, above, g.Above, g.Lo, g.Chance+Margin)
		}
	}
}

func TestDecideEdges(t *testing.T) {
	t.Parallel()
	if _, above := Decide(0, 0, 0, 10); above {
		t.Error("no cases cannot be above chance")
	}
	// tests < 1 is read as one test.
	a, _ := Decide(3, 10, 0, 0)
	b, _ := Decide(3, 10, 0, 1)
	if a != b {
		t.Errorf("tests 0 gives %v, tests 1 gives %v", a, b)
	}
	// More cells widen the interval.
	one, _ := Decide(30, 100, 0, 1)
	many, _ := Decide(30, 100, 0, 30)
	if !(many.Lo < one.Lo) {
		t.Errorf("30 cells: lower end %v, 1 cell: %v; Bonferroni must widen", many.Lo, one.Lo)
	}
}

func TestAnswerKey(t *testing.T) {
	t.Parallel()
	same := [][]any{
		{"18", " 18 ", "18.0", 18.0, json.Number("18"), "+18"},
		{"1,000", "1000", 1000.0, "1e3"},
		{"Billing", " billing\n", "BILLING", "billing"},
		{"New  York", "new york"},
		{"caf\u00e9", "cafe\u0301"}, // NFC
		{map[string]any{"team": "Sales", "n": 1.0}, map[string]any{"n": json.Number("1"), "team": " sales"}},
		{"-0", "0", 0.0},
		{json.Number("12442.0"), "12442", 12442.0, json.Number("1.2442e4"), "12,442"},
		{json.Number("1.50"), "1.5", 1.5},
		{json.Number("9007199254740993"), "9007199254740993"},
		{"", "  ", "\n\t"},
	}
	for _, group := range same {
		k0, ok := answerKey(group[0])
		if !ok {
			t.Fatalf("%#v has no key", group[0])
		}
		for _, v := range group[1:] {
			if k, _ := answerKey(v); k != k0 {
				t.Errorf("answerKey(%#v) = %q, answerKey(%#v) = %q; want equal", group[0], k0, v, k)
			}
		}
	}
	differ := [][2]any{
		{"18", "180"}, {"18", "1,8"}, {"billing", "bug"}, {"true", true}, {"{}", map[string]any{}},
		{"1,00", "100"}, {[]any{"a"}, "a"}, {"", map[string]any{}},
		// Beyond 2^53 a float64 holds neither apart; the keys do.
		{json.Number("9007199254740993"), json.Number("9007199254740992")},
		{"12345678901234567891", "12345678901234567890"},
		{json.Number("0.1"), json.Number("0.10000000000000001")},
	}
	for _, p := range differ {
		a, _ := answerKey(p[0])
		b, _ := answerKey(p[1])
		if a == b {
			t.Errorf("answerKey(%#v) = answerKey(%#v) = %q; want different", p[0], p[1], a)
		}
	}
	if _, ok := answerKey(nil); ok {
		t.Error("nil has a key: a missing expected value would count as someone's answer")
	}
}

// The chance rates against independent arithmetic: the constant model's is
// the majority share; the shuffled model's is the exact rate of the drawn
// permutation, whose mean over seeds is Σ c(c-1) / (n(n-1)) for a uniform
// derangement drawn by Sattolo's algorithm (a uniform random cycle: each
// case gets any other case's value with probability 1/(n-1)).
func TestChanceArithmetic(t *testing.T) {
	t.Parallel()
	labels := strings.Fields("a a a a a b b b c c")
	n := len(labels)
	keys := make([]string, n)
	has := make([]bool, n)
	pool := make([]int, n)
	for i, l := range labels {
		keys[i], has[i] = answerKey(l)
		pool[i] = i
	}
	at, count := mode(keys, has)
	if labels[at] != "a" || count != 5 {
		t.Fatalf("mode = %s ×%d, want a ×5", labels[at], count)
	}

	const seeds = 4000
	sum := 0.0
	for seed := int64(1); seed <= seeds; seed++ {
		perm := derangement(n, pool, seed)
		seen := make([]bool, n)
		hits := 0
		for i, j := range perm {
			if j == i {
				t.Fatalf("seed %d: case %d keeps its own value", seed, i)
			}
			if seen[j] {
				t.Fatalf("seed %d: value %d used twice", seed, j)
			}
			seen[j] = true
			// Independent of answerKey: plain label equality.
			if labels[j] == labels[i] {
				hits++
			}
			if chanceHit(keys[j], true, keys[i], true, false, false) != (labels[j] == labels[i]) {
				t.Fatalf("chanceHit disagrees with label equality for %s vs %s", labels[j], labels[i])
			}
		}
		sum += float64(hits) / float64(n)
	}
	want := float64(5*4+3*2+2*1) / float64(n*(n-1)) // 28/90
	mean := sum / seeds
	// The per-seed rate is in [0, 1]; its sd is below 0.2, so the mean of
	// 4000 is within 0.01 of its expectation with room to spare (5 sd).
	if math.Abs(mean-want) > 0.016 {
		t.Errorf("mean shuffled chance over %d seeds = %.4f, want %.4f", seeds, mean, want)
	}

	// Fewer than two cases with an expected value: no derangement.
	if derangement(3, []int{1}, 1) != nil {
		t.Error("a derangement of one case")
	}
	// Cases without an expected value borrow one from the pool.
	perm := derangement(4, []int{0, 2}, 7)
	if perm[0] != 2 || perm[2] != 0 || (perm[1] != 0 && perm[1] != 2) || (perm[3] != 0 && perm[3] != 2) {
		t.Errorf("perm = %v", perm)
	}

	// A refusal is right in the should-refuse bucket, whatever is expected.
	if !chanceHit("", false, "s:x", true, true, true) || chanceHit("", false, "s:x", true, true, false) {
		t.Error("refusal chance ignores the should-refuse bucket")
	}
	if chanceHit("s:x", true, "", false, false, false) {
		t.Error("a case without expected value counted as a chance pass")
	}
}
