package analysis

import (
	"slices"
	"testing"
)

func TestSortValues(t *testing.T) {
	cases := []struct{ in, want []string }{
		{[]string{"10", "2", "0", "1"}, []string{"0", "1", "2", "10"}},
		{[]string{"hard", "easy", "medium"}, []string{"easy", "medium", "hard"}},
		{[]string{"High", "low", "medium"}, []string{"low", "medium", "High"}},
		{[]string{"hostile", "common", "edge", "should-refuse"}, []string{"common", "edge", "hostile", "should-refuse"}},
		{[]string{"2", "hard"}, []string{"2", "hard"}},
	}
	for _, c := range cases {
		got := slices.Clone(c.in)
		SortValues(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("SortValues(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
