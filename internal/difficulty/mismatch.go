package difficulty

import (
	"errors"

	"github.com/assay-eval/assay/internal/stats"
)

// Mismatch is `assay mismatch`'s result.
type Mismatch struct {
	Scale                         Scale
	Benchmark                     SetSummary
	Workload                      SetSummary
	Bins                          []Bin
	Distances                     []Distance // "wasserstein1", "ks", "tv"
	LargestGap                    Gap        // the largest interval of the axis, within the workload's range, holding no benchmark item
	UncoveredShare                float64    // workload mass in bins with no benchmark item
	Scores                        []Score    // one per target with results on the benchmark
	Pairs                         []Pair     // every two targets, paired on the benchmark's shared cases
	RankingRaw, RankingReweighted []string
	RankingChanged                bool
	VerdictsChanged               int
	Warnings                      []string
}

// SetSummary describes one side's difficulties.
type SetSummary struct {
	Name, Kind             string
	Cases, Unknown         int
	Min, Max, Mean, Median float64
}

// Bin is one interval of the axis.
type Bin struct {
	Lo, Hi                float64
	Label                 string
	Bench, Work           int
	BenchShare, WorkShare float64
	Gap                   bool
}

// Distance is a distance between the two sets' difficulties.
type Distance struct {
	Name       string
	Value      float64
	CI         stats.Interval
	Replicates int
}

// Gap is an interval of the axis.
type Gap struct{ Lo, Hi, Width float64 }

// Score is one target's benchmark score, raw and under the workload's mix.
type Score struct {
	Target       string
	Raw          Estimate // the benchmark's own mix
	Reweighted   Estimate // the workload's mix; Computable false when a needed bin has no benchmark item
	Covered      Estimate // the workload's mix restricted to measurable bins (renormalised), with CoveredShare
	CoveredShare float64
	PerBin       []Rate // per bin (Label = bin label)
}

// Estimate is a rate with its standard error.
type Estimate struct {
	Rate, SE   float64
	CI         stats.Interval
	N          int
	Kish       float64
	Computable bool
	Why        string
}

// Pair is the paired comparison of two targets.
type Pair struct {
	A, B            string
	Raw, Reweighted Comparison
	Changed         bool // the verdict differs
}

// Comparison is a paired difference A − B.
type Comparison struct {
	Delta, SE    float64
	CI           stats.Interval
	P, PAdjusted float64
	Verdict      string
	N            int
	Computable   bool
	Why          string
}

// MismatchOptions configures Compare.
type MismatchOptions struct {
	Bins       int
	Edges      []float64
	Alpha      float64
	Replicates int
	Seed       uint64
	Margin     float64
}

// Compare places a benchmark and a workload on one difficulty axis.
func Compare(bench, work *Set, o MismatchOptions) (*Mismatch, error) {
	return nil, errors.New("difficulty: Compare not implemented yet")
}
