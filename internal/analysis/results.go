package analysis

import (
	"context"
	"encoding/json"

	"github.com/assay-eval/assay/internal/record"
)

// ResultRow is one result of a run as the primary scorer saw it: the
// per-case × target × epoch detail that the JUnit report lists (one test
// case per row). Analyze does not build these; a caller that wants them
// joins the run's stored results with the primary scorer's scores of the
// chosen scoring (Reader.Results × Reader.Scores on case, target and epoch).
type ResultRow struct {
	Target string
	CaseID string
	Epoch  int // 1-based
	Pass   bool
	// Shape is pass, loud or silent; Kind the failure kind (wrong, empty,
	// unparseable, timeout, …); Reason the scorer's explanation.
	Shape  string
	Kind   string
	Reason string
	// Raw is the model's output (or the call's error when there was none);
	// hostile: every renderer escapes it.
	Raw string
	// Expected is the case's reference answer, as text, when it has one.
	Expected  string
	LatencyMS float64
}

// Rows joins a run's results with the primary scores of one scoring (0 =
// the latest), in the store's order (case, target, epoch). The primary
// score is the one the scorer flagged primary.
func Rows(ctx context.Context, st record.Reader, run *record.Run, scoring int) ([]ResultRow, error) {
	if scoring == 0 {
		var err error
		if scoring, err = st.LatestScoring(ctx, run.ID); err != nil {
			return nil, err
		}
	}
	expected := map[string]string{}
	if err := st.Cases(ctx, run.ID, func(c record.Case) error {
		if e := string(c.Expected); e != "" && e != "null" {
			var s string
			if json.Unmarshal(c.Expected, &s) == nil {
				e = s
			}
			expected[c.ID] = e
		}
		return nil
	}); err != nil {
		return nil, err
	}
	prim := map[record.Key]record.Score{}
	if err := st.Scores(ctx, run.ID, scoring, func(s record.Score) error {
		if s.Primary {
			prim[record.Key{CaseID: s.CaseID, Target: s.Target, Epoch: s.Epoch}] = s
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var rows []ResultRow
	err := st.Results(ctx, run.ID, func(r record.Result) error {
		row := ResultRow{Target: r.Target, CaseID: r.CaseID, Epoch: r.Epoch, Raw: ReplyText(r.Raw, r.ToolCalls),
			Expected: expected[r.CaseID], LatencyMS: r.LatencyMS, Shape: "loud", Kind: "unscored"}
		if row.Raw == "" && r.Error != "" {
			row.Raw = r.Error
		}
		if s, ok := prim[r.Key()]; ok {
			row.Pass, row.Shape, row.Kind, row.Reason = s.Pass, s.Shape, s.Kind, s.Reason
		}
		rows = append(rows, row)
		return nil
	})
	return rows, err
}
