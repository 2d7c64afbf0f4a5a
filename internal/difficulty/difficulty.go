// Package difficulty owns a case's difficulty and the comparison of two
// sets of cases on that one axis. A difficulty comes from a case tag (an
// expert's rating, a tier, a count such as reasoning steps: numeric values
// as written, ordered levels as 0, 1, 2 …) or is fitted from several
// targets' results by an item-response model (internal/irt). A Set is one
// side — a benchmark or a workload — with its cases' difficulties and, when
// it has them, each target's right answers and trials per case. Fit joins
// sets into one item-response fit; Compare places a benchmark and a
// workload on one axis: distances, coverage gaps, each target's benchmark
// score post-stratified to the workload's mix and every pair's paired
// comparison redone under those weights. A bin the workload needs and the
// benchmark lacks is reported as unmeasurable, never extrapolated. It
// computes plain structs and renders nothing; it must not import the
// store, the runner, providers, analysis or report.
package difficulty

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Sources of a scale.
const (
	SourceTag    = "tag"
	SourceFitted = "fitted"
)

// Kinds of a set.
const (
	KindRun      = "run"
	KindBaseline = "baseline"
	KindDataset  = "dataset"
)

// Scale says where difficulties come from.
type Scale struct {
	Source string   `json:"source"` // "tag" or "fitted"
	Tag    string   `json:"tag"`    // the tag's name (Source "tag")
	Levels []string `json:"levels"` // ordered tiers of a non-numeric tag, easiest first
	Model  string   `json:"model"`  // "rasch" or "2pl" (Source "fitted")
}

// TargetResults is one target's results on a set: per case, right and
// trials (over epochs; 0 trials = none).
type TargetResults struct {
	Name          string
	Right, Trials []int32
}

// Set is one side: a benchmark or a workload.
type Set struct {
	Name    string    // run ID, baseline path or dataset path
	Kind    string    // "run", "baseline", "dataset"
	Cases   []string  // case IDs
	Values  []float64 // difficulty per case; NaN unknown
	Weights []float64 // per-case weight in the mix (nil = 1 each)
	Targets []TargetResults
	// Scale is where Values came from (Levels name the values 0, 1, 2 …
	// of an ordered tag).
	Scale Scale
	// Tags holds each case's raw tag value ("" when it has none), parallel
	// to Cases; nil when the values were not read from a tag.
	Tags []string
}

// Unknown counts the cases whose difficulty is unknown.
func (s *Set) Unknown() int { return countNaN(s.Values) }

// weight returns case i's weight in the set's mix.
func (s *Set) weight(i int) float64 {
	if s.Weights == nil {
		return 1
	}
	return s.Weights[i]
}

// TagValues turns a tag's values into difficulties: has[i] false (or an
// empty value) is unknown (NaN). With levels, each value must be one of
// them and maps to its index (easiest first); without, every value must be
// a finite number. All problems are reported at once, naming the cases.
func TagValues(tag string, ids, values []string, has []bool, levels []string) ([]float64, error) {
	out := make([]float64, len(values))
	level := map[string]int{}
	for i, l := range levels {
		if _, dup := level[l]; dup {
			return nil, fmt.Errorf("difficulty levels: %q is listed twice (levels are distinct, easiest first)", l)
		}
		level[l] = i
	}
	var bad []string
	badCount := 0
	for i, v := range values {
		out[i] = math.NaN()
		if (has != nil && !has[i]) || strings.TrimSpace(v) == "" {
			continue
		}
		if levels != nil {
			k, ok := level[v]
			if !ok {
				badCount++
				if len(bad) < 5 {
					bad = append(bad, fmt.Sprintf("case %q has %q", ids[i], v))
				}
				continue
			}
			out[i] = float64(k)
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			badCount++
			if len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("case %q has %q", ids[i], v))
			}
			continue
		}
		out[i] = x
	}
	if badCount > 0 {
		more := ""
		if badCount > len(bad) {
			more = fmt.Sprintf(" and %d more", badCount-len(bad))
		}
		if levels != nil {
			return nil, fmt.Errorf("tag %q: %s outside the levels %s: %s%s",
				tag, plural(badCount, "1 case has a value", fmt.Sprintf("%d cases have a value", badCount)), strings.Join(quoteAll(levels), ", "), strings.Join(bad, "; "), more)
		}
		return nil, fmt.Errorf("tag %q: %s that is not a number: %s%s "+
			"(give the order of non-numeric values with difficulty.levels in the spec or --levels, easiest first)",
			tag, plural(badCount, "1 case has a value", fmt.Sprintf("%d cases have a value", badCount)), strings.Join(bad, "; "), more)
	}
	return out, nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
