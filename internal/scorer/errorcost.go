package scorer

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// errorCost prices a failing verdict on case c — what getting it wrong
// costs, in the spec's own unit — so a report can price errors, not just
// count them. The rule:
//
//   - A pass costs 0.
//   - The base price is error_costs.by_kind[kind] when the kind is listed
//     (an explicit 0 included); else error_costs.silent for a silent failure
//     and error_costs.loud for a loud one (0 when not written: only what the
//     spec prices costs anything). A pairwise tie is no error: it costs 0
//     unless by_kind.tie prices it.
//   - With no error_costs section the base is 1 when the case has a weight,
//     else the failure is not priced (0).
//   - The base is multiplied by the case's weight (the dataset's weight
//     field, the cost of getting that case wrong) when the case has one. So
//     a weighted case with no error_costs section costs its weight.
func errorCost(ec *spec.ErrorCost, c *dataset.Case, v Verdict) float64 {
	if v.Pass {
		return 0
	}
	weighted := c != nil && c.HasWeight
	var base float64
	switch k, listed := byKind(ec, v.Kind); {
	case listed:
		base = k
	case v.Kind == KindTie:
		return 0
	case ec != nil && v.Shape == ShapeSilent:
		base = ec.Silent
	case ec != nil:
		base = ec.Loud
	case weighted:
		base = 1
	default:
		return 0
	}
	if weighted {
		base *= c.Weight
	}
	if math.IsNaN(base) || base < 0 {
		return 0 // Compile and the dataset reader reject these; never store one
	}
	return base
}

func byKind(ec *spec.ErrorCost, kind string) (float64, bool) {
	if ec == nil {
		return 0, false
	}
	k, ok := ec.ByKind[kind]
	return k, ok
}

// Kinds are the failure kinds a score can carry: this package's and the
// provider error kinds passed through from a failed call. error_costs.by_kind
// keys must be among them.
func Kinds() []string {
	ks := []string{
		KindWrong, KindComplied, KindEmpty, KindRefusal, KindUnparseable, KindInvalidFormat,
		KindTooSlow, KindTooLong, KindOverBudget, KindScorerError, KindJudgeError,
		KindWorseThanBaseline, KindTie, KindNoBaseline,
		KindNoCall, KindInvalidArguments, KindWrongTool, KindUnexpectedCall,
		// An agent loop's ends (runner.KindMaxTurns and toolrun.Kinds;
		// runner's TestAgentKindsKnownToErrorCosts holds this list to them).
		"max_turns", "tool_timeout", "tool_error", "tool_output_limit", "tool_no_record",
	}
	for _, k := range []provider.ErrorKind{
		provider.KindRateLimited, provider.KindOverloaded, provider.KindServer, provider.KindTimeout,
		provider.KindConflict, provider.KindNetwork, provider.KindUnavailable, provider.KindMalformed, provider.KindTruncated,
		provider.KindBadRequest, provider.KindAuth, provider.KindNotFound, provider.KindCanceled,
		provider.KindExec, provider.KindNoRecord, provider.KindOutputLimit, provider.KindInvalid,
	} {
		ks = append(ks, string(k))
	}
	sort.Strings(ks)
	return slices.Compact(ks)
}

// checkErrorCosts reports error_costs values that are negative or not
// finite, and by_kind keys that name no failure kind.
func (b *builder) checkErrorCosts() {
	ec := b.sp.Errors
	if ec == nil {
		return
	}
	bad := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
	const hint = "a cost is a finite number, 0 or more"
	if bad(ec.Silent) {
		b.probs = append(b.probs, b.sp.Problemf("error_costs.silent", hint, "error_costs.silent is %v", ec.Silent))
	}
	if bad(ec.Loud) {
		b.probs = append(b.probs, b.sp.Problemf("error_costs.loud", hint, "error_costs.loud is %v", ec.Loud))
	}
	kinds := Kinds()
	keys := make([]string, 0, len(ec.ByKind))
	for k := range ec.ByKind {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path := "error_costs.by_kind." + k
		if !slices.Contains(kinds, k) {
			h := "failure kinds: " + strings.Join(kinds, ", ")
			if n := nearest(k, kinds); n != "" {
				h = fmt.Sprintf("did you mean %s? %s", n, h)
			}
			b.probs = append(b.probs, b.sp.Problemf(path, h, "unknown failure kind %q", k))
			continue
		}
		if v := ec.ByKind[k]; bad(v) {
			b.probs = append(b.probs, b.sp.Problemf(path, hint, "%s is %v", path, v))
		}
	}
}
