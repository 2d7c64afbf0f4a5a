package analysis

import "github.com/assay-eval/assay/internal/record"

// Comparison is a paired comparison of two targets on the same cases.
type Comparison struct {
	A      string     `json:"a"`
	B      string     `json:"b"`
	Scorer string     `json:"scorer"`
	N      int        `json:"n"`     // cases both targets have
	Delta  float64    `json:"delta"` // rate(A) − rate(B)
	SE     float64    `json:"se"`
	CI     [2]float64 `json:"ci"`
	// Test names the test that produced PValue: "mcnemar_score" (pass/fail,
	// the default) or "mcnemar_exact" (--test exact); "paired_t" on the
	// per-case means of several epochs; "cluster_t" when cases carry a
	// cluster tag.
	Test string `json:"test"`
	// CIMethod names the interval: "tango" (the score test's own interval),
	// "newcombe" (beside the exact test), "t", or "cr1_t" (cluster-robust).
	// When every case differed by the same amount (a t interval would have
	// zero width), the comparison is the score test with Tango's interval
	// on those cases counted as pass/fail pairs (stats.ConstantDifference).
	CIMethod string `json:"ci_method,omitempty"`
	// DF is the t test's degrees of freedom (n−1, or G−1 with clusters);
	// Clusters is G. Both absent for the McNemar tests.
	DF        float64 `json:"df,omitempty"`
	Clusters  int     `json:"clusters,omitempty"`
	PValue    float64 `json:"p_value"`
	PAdjusted float64 `json:"p_adjusted"`
	// MidP is McNemar's mid-p (the exact test's less conservative form,
	// for readers who weigh it), present for pass/fail comparisons; no
	// verdict uses it.
	MidP *float64 `json:"mid_p,omitempty"`
	// Verdict is a_better, b_better, equivalent or inconclusive.
	Verdict string `json:"verdict"`
	// AOnly and BOnly count the discordant cases: passed by one only.
	AOnly int `json:"a_only"`
	BOnly int `json:"b_only"`
	// Slices repeat the comparison per tag value: key → value → comparison.
	// Their PAdjusted is Holm's over every slice comparison of the same tag
	// (all values, all pairs), and their verdicts use it.
	Slices map[string]map[string]Comparison `json:"slices,omitempty"`
}

// RankGroup is a set of targets the comparisons cannot separate.
type RankGroup struct {
	Rank    int      `json:"rank"`
	Targets []string `json:"targets"`
}

// FailureExample is one failed result, for a reader to look at.
type FailureExample struct {
	Target   string `json:"target"`
	CaseID   string `json:"case_id"`
	Epoch    int    `json:"epoch"`
	Shape    string `json:"shape"`
	Kind     string `json:"kind"`
	Reason   string `json:"reason,omitempty"`
	Raw      string `json:"raw"` // the model's output (truncated); hostile: escape it
	Expected string `json:"expected,omitempty"`
	// ErrorCost is the priced cost of this failure.
	ErrorCost float64 `json:"error_cost,omitempty"`

	// Calls are the tool calls the reply made (arguments truncated);
	// hostile: escape them.
	Calls []record.ToolCall `json:"calls,omitempty"`
}
