package runner

import (
	"context"
	"sort"
	"sync"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
)

// epochProvider records the epoch of every request it gets.
type epochProvider struct {
	countingProvider
	mu     sync.Mutex
	epochs map[string][]int // case ID → epochs requested
}

func (p *epochProvider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	p.mu.Lock()
	if p.epochs == nil {
		p.epochs = map[string][]int{}
	}
	p.epochs[req.CaseID] = append(p.epochs[req.CaseID], req.Epoch)
	p.mu.Unlock()
	return p.countingProvider.Complete(ctx, req)
}

// The request's epoch is what docs/spec.md and the exec protocol promise a
// program: 1 for the first call of a case, up to run.epochs — never 0.
func TestRequestEpochsCountFromOne(t *testing.T) {
	for _, epochs := range []int{1, 3} {
		p := &epochProvider{}
		_, err := Run(context.Background(), Options{
			RunID: "r", Targets: []Target{target("a", p, 2)}, Epochs: epochs,
			Cases: cases(4), Render: render, Score: noScore, Store: newMemStore(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.epochs) != 4 {
			t.Fatalf("%d epochs: calls for %d cases, want 4", epochs, len(p.epochs))
		}
		for id, got := range p.epochs {
			sort.Ints(got)
			if len(got) != epochs {
				t.Fatalf("%d epochs: case %s asked %v", epochs, id, got)
			}
			for i, e := range got {
				if e != i+1 {
					t.Errorf("%d epochs: case %s got epochs %v, want 1..%d", epochs, id, got, epochs)
					break
				}
			}
		}
	}
}
