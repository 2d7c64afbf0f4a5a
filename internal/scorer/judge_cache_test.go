package scorer

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// fromCache marks every reply as served from the response cache, as the
// cache wrapper does on a hit.
type fromCache struct{ p provider.Provider }

func (c fromCache) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	resp, err := c.p.Complete(ctx, req)
	if resp != nil {
		resp.Cached = true
	}
	return resp, err
}

// A verdict served from the cache is never billed again: the score's judge
// cost is 0 and the price it avoided is its JudgeSaved; a fresh verdict is
// paid and saves nothing.
func TestJudgeCachedVerdictCostsNothing(t *testing.T) {
	const reply = `{"verdict": "pass", "reason": "names the billing team"}` // 7 words: $7 at judgePrice
	js := startJudge(t, mock.Options{Default: reply})
	sc := spec.Scorer{Name: "polite", Type: "judge", Target: "grader", Rubric: "Names the right team."}
	for _, tc := range []struct {
		name        string
		wrap        func(provider.Provider) provider.Provider
		cost, saved float64
	}{
		{"paid", nil, float64(words(reply)), 0},
		{"from the cache", func(p provider.Provider) provider.Provider { return fromCache{p} }, 0, float64(words(reply))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := compileJudge(t, judgeSpec(sc), js, tc.wrap)
			ss := set.Score(context.Background(), judgeCase, candResult("The billing team."))
			if len(ss) != 1 || !ss[0].Pass {
				t.Fatalf("scores = %+v; want one pass", ss)
			}
			if ss[0].JudgeCost != tc.cost || ss[0].JudgeSaved != tc.saved {
				t.Errorf("judge cost %v saved %v; want %v and %v", ss[0].JudgeCost, ss[0].JudgeSaved, tc.cost, tc.saved)
			}
		})
	}
}
