package analysis

import (
	"sort"
	"strconv"
	"strings"
)

// SortValues orders slice values: numerically when every value is a
// number (difficulty tiers 0, 1, 2 … 10); by rank when every value is a
// common ordinal word (easy < medium < hard, low < medium < high); else
// alphabetically.
func SortValues(vs []string) {
	rank := make(map[string]float64, len(vs))
	numeric, ordinal := true, true
	for _, v := range vs {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			numeric = false
		}
		rank[v] = f
		if _, ok := ordinals[strings.ToLower(v)]; !ok {
			ordinal = false
		}
	}
	switch {
	case numeric:
	case ordinal:
		for _, v := range vs {
			rank[v] = ordinals[strings.ToLower(v)]
		}
	default:
		sort.Strings(vs)
		return
	}
	sort.SliceStable(vs, func(i, j int) bool { return rank[vs[i]] < rank[vs[j]] })
}

var ordinals = map[string]float64{
	"trivial": 0, "easy": 1, "low": 1, "medium": 2, "moderate": 2, "normal": 2,
	"hard": 3, "high": 3, "very hard": 4, "very high": 4, "expert": 5,
}
