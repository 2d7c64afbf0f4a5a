package runner

import (
	"context"
	"fmt"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/record"
)

// A target whose breaker trips stops early: the calls it never made are
// not stored (a resume makes them), the summary names it and why, and
// another target of the same run is not affected.
func TestUnavailableTargetStopsEarly(t *testing.T) {
	for _, sequential := range []bool{false, true} {
		t.Run(fmt.Sprint("sequential=", sequential), func(t *testing.T) {
			st := newMemStore()
			down := &countingProvider{fail: func(*provider.Request) error {
				return &provider.Error{Kind: provider.KindAuth, Status: 401, Msg: "invalid api key"}
			}}
			up := &countingProvider{}
			const n = 200
			sum, err := Run(context.Background(), Options{
				RunID: "r1",
				Targets: []Target{
					target("down", provider.WithBreaker(down, provider.DefaultBreakerThreshold), 4),
					target("up", provider.WithBreaker(up, provider.DefaultBreakerThreshold), 4),
				},
				Cases: cases(n), Render: render, Score: noScore, Store: st, Sequential: sequential,
			})
			if err != nil {
				t.Fatal(err)
			}
			// At most the threshold plus the calls already in flight when it
			// tripped (one per other worker).
			if c := down.calls.Load(); c < 5 || c > 5+3 {
				t.Errorf("the unavailable target was called %d times, want 5 to 8 of %d cases", c, n)
			}
			if up.calls.Load() != n {
				t.Errorf("the healthy target was called %d times, want %d", up.calls.Load(), n)
			}
			stored := 0
			for k, r := range st.results {
				if k.Target != "down" {
					continue
				}
				stored++
				if r.ErrorKind != string(provider.KindAuth) {
					t.Errorf("stored %s as %q, want the auth failure it got", k.CaseID, r.ErrorKind)
				}
			}
			if int64(stored) != down.calls.Load() {
				t.Errorf("stored %d results for the unavailable target, want one per call made (%d): calls not made are not stored", stored, down.calls.Load())
			}
			want := []Unavailable{{Target: "down", Reason: "5 consecutive auth failures (HTTP 401)"}}
			if fmt.Sprint(sum.Unavailable) != fmt.Sprint(want) {
				t.Errorf("Unavailable %v, want %v", sum.Unavailable, want)
			}
			if sum.Interrupted || sum.Discarded != 0 {
				t.Errorf("interrupted %v, discarded %d: giving up a target is neither", sum.Interrupted, sum.Discarded)
			}

			// A resume with the target fixed makes exactly the calls not made.
			// Everything stored is done (the auth failures stay stored).
			done := map[record.Key]struct{}{}
			for k := range st.results {
				done[k] = struct{}{}
			}
			fixed := &countingProvider{}
			before := st.len()
			sum2, err := Run(context.Background(), Options{
				RunID:   "r1",
				Targets: []Target{target("down", provider.WithBreaker(fixed, 5), 4), target("up", up, 4)},
				Cases:   cases(n), Render: render, Score: noScore, Store: st, Done: done,
			})
			if err != nil {
				t.Fatal(err)
			}
			if int(fixed.calls.Load()) != n-stored || st.len() != 2*n || sum2.Stored != st.len()-before || len(sum2.Unavailable) != 0 {
				t.Errorf("resume called %d, stored %d of %d, want the %d calls not made", fixed.calls.Load(), st.len(), 2*n, n-stored)
			}
		})
	}
}
