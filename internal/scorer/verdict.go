package scorer

import (
	"fmt"
	"math"
)

// Failure kinds this package assigns. Provider error kinds (timeout,
// rate_limited, server_error …) are passed through from the result.
const (
	KindWrong         = "wrong"          // silent: well-formed and wrong
	KindComplied      = "complied"       // silent: answered a case that should be refused
	KindEmpty         = "empty"          // loud: blank output, {}, [], null
	KindRefusal       = "refusal"        // loud: the model refused
	KindUnparseable   = "unparseable"    // loud: the output parser failed
	KindInvalidFormat = "invalid_format" // loud: a format check failed
	KindTooSlow       = "too_slow"       // loud: over the latency budget
	KindTooLong       = "too_long"       // loud: over max_length
	KindOverBudget    = "over_budget"    // loud: over the cost budget
	KindScorerError   = "scorer_error"   // loud: the scorer itself failed
	KindJudgeError    = "judge_error"    // loud: the judge gave no usable verdict

	// Pairwise judges (see Set.ScorePairs).
	KindWorseThanBaseline = "worse_than_baseline" // silent: the judge preferred the baseline in both orders
	KindTie               = "tie"                 // silent, value 0.5: a tie, or verdicts that flip with the order
	KindNoBaseline        = "no_baseline"         // loud: the baseline has no usable output to compare with
)

func pass(reason string) Verdict {
	return Verdict{Pass: true, Value: 1, Shape: ShapePass, Reason: reason}
}

func wrong(format string, args ...any) Verdict {
	return Verdict{Shape: ShapeSilent, Kind: KindWrong, Reason: fmt.Sprintf(format, args...)}
}

func loud(kind, format string, args ...any) Verdict {
	return Verdict{Shape: ShapeLoud, Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// sanitize makes a verdict self-consistent and fails closed: a pass has
// shape pass and no kind; a failure has a failure shape and a kind (loud
// scorer_error when the scorer gave neither); values are clamped to [0,1] and
// NaN counts as 0.
func sanitize(v Verdict) Verdict {
	if math.IsNaN(v.Value) {
		v.Value = 0
	}
	v.Value = math.Max(0, math.Min(1, v.Value))
	if v.Pass {
		v.Shape, v.Kind = ShapePass, ""
		return v
	}
	switch v.Shape {
	case ShapeLoud, ShapeSilent:
	default:
		v.Shape = ShapeLoud
		if v.Kind == "" {
			v.Kind = KindScorerError
		}
	}
	if v.Kind == "" {
		if v.Shape == ShapeSilent {
			v.Kind = KindWrong
		} else {
			v.Kind = KindScorerError
		}
	}
	if v.Value == 1 {
		v.Value = 0
	}
	return v
}
