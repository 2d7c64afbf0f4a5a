package scorer

import (
	"testing"
)

func TestNormalisers(t *testing.T) {
	cases := []struct {
		names   []string
		in, out string
	}{
		{[]string{"trim"}, " \t a b \n", "a b"},
		{[]string{"lower"}, "ÉCOLE Paris", "école paris"},
		{[]string{"collapse_spaces"}, " a \t\n b\u00a0\u2003c ", " a b c "},
		{[]string{"no_commas"}, "1,234,567", "1234567"},
		{[]string{"nfc"}, "e\u0301", "\u00e9"},
		{[]string{"trim", "collapse_spaces", "lower"}, "  New \n York ", "new york"},
		{[]string{"collapse_spaces", "trim"}, "\n a  b \n", "a b"},
		{nil, " As Is ", " As Is "},
	}
	for _, tc := range cases {
		chain, unknown := compileNormalize(tc.names)
		if len(unknown) > 0 {
			t.Fatalf("unknown %v", unknown)
		}
		if got := chain.apply(tc.in); got != tc.out {
			t.Errorf("%v(%q) = %q, want %q", tc.names, tc.in, got, tc.out)
		}
	}
	if _, unknown := compileNormalize([]string{"trim", "strip", "LOWER"}); len(unknown) != 2 || unknown[0] != "strip" || unknown[1] != "LOWER" {
		t.Errorf("unknown = %v, want [strip LOWER]", unknown)
	}
	for _, n := range Normalisers() {
		if _, ok := lookupNormaliser(n); !ok {
			t.Errorf("documented normaliser %q is not implemented", n)
		}
	}
}

// compileNormalize resolves names the way Compile does; it returns the
// names it did not know.
func compileNormalize(names []string) (normChain, []string) {
	var chain normChain
	var unknown []string
	for _, n := range names {
		f, ok := lookupNormaliser(n)
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		chain = append(chain, f)
	}
	return chain, unknown
}
