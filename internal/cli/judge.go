package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
)

// judgeErrorWarning is the loud line for a judge scorer most of whose
// verdicts failed (judge_error: the judge's call failed, or its reply was
// no verdict): its rate measures the judge, not the targets.
func judgeErrorWarning(scorerName string, errs, n int, runID string) string {
	return fmt.Sprintf("WARNING: judge scorer %s failed on %d of %d verdicts (judge_error): its rate measures the judge, not the targets. "+
		"See why with: assay report %s; fix the judge, then: assay rescore %s --no-cache", scorerName, errs, n, runID, runID)
}

// judgeErrorCounts counts, per judge scorer of sp, a scoring's verdicts and
// those that are judge_errors. It reads nothing when sp has no judge.
func judgeErrorCounts(ctx context.Context, st store.Store, sp *spec.Spec, runID string, scoring int) (map[string]*[2]int, error) {
	counts := map[string]*[2]int{} // judge_errors, verdicts
	for _, sc := range sp.Scorers {
		if m, _ := scorer.Meta(sc.Type); m.Judge {
			counts[sc.Name] = &[2]int{}
		}
	}
	if len(counts) == 0 {
		return counts, nil
	}
	err := st.Scores(ctx, runID, scoring, func(s record.Score) error {
		if c := counts[s.Scorer]; c != nil {
			c[1]++
			if s.Kind == scorer.KindJudgeError {
				c[0]++
			}
		}
		return nil
	})
	return counts, err
}

// warnJudgeErrors writes judgeErrorWarning to w for every judge scorer
// whose verdicts are not evidence (half or more of them failed: the rule
// the reports use, analysis.JudgeStats.NotEvidence), in the spec's scorer
// order.
func warnJudgeErrors(w io.Writer, sp *spec.Spec, counts map[string]*[2]int, runID string) {
	for _, sc := range sp.Scorers {
		if c := counts[sc.Name]; c != nil && (analysis.JudgeStats{N: c[1], Errors: c[0]}).NotEvidence() {
			fmt.Fprintln(w, judgeErrorWarning(sc.Name, c[0], c[1], runID))
		}
	}
}
