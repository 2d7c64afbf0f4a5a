package difficulty

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzTagValues: a tag value from a dataset or a run is outside input.
// Whatever it holds, TagValues never panics, gives a finite difficulty or
// NaN for a blank value, maps a level to its index, and refuses anything
// else with a message naming the case.
func FuzzTagValues(f *testing.F) {
	for _, s := range []string{"3", " 2.5 ", "", "NaN", "Inf", "-1e308", "1e999", "hard", "0x1p-2", "easy|hard"} {
		f.Add(s, "")
		f.Add(s, "easy|medium|hard")
	}
	f.Fuzz(func(t *testing.T, value, levelList string) {
		var levels []string
		if levelList != "" {
			levels = strings.Split(levelList, "|")
		}
		got, err := TagValues("t", []string{"case-1"}, []string{value}, nil, levels)
		if err != nil {
			if !strings.Contains(err.Error(), `"t"`) && !strings.Contains(err.Error(), "listed twice") {
				t.Fatalf("error without the tag's name: %v", err)
			}
			return
		}
		v := got[0]
		switch {
		case strings.TrimSpace(value) == "":
			if !math.IsNaN(v) {
				t.Fatalf("blank value %q gave %g", value, v)
			}
		case levels != nil:
			if k := slices.Index(levels, value); float64(k) != v {
				t.Fatalf("%q in levels %q gave %g, want %d", value, levels, v, k)
			}
		default:
			want, perr := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) || v != want {
				t.Fatalf("%q gave %g (parse %v, %v)", value, v, want, perr)
			}
		}
	})
}
