package registry

import (
	"encoding/json"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

// The spec's params reach a request as provider.Params by conversion; the
// cache key hashes their JSON, so both must encode alike.
func TestParamsEncodeAsTheSpecs(t *testing.T) {
	temp, top, mt, seed := 0.5, 0.9, 64, int64(7)
	sp := spec.Params{Temperature: &temp, TopP: &top, MaxTokens: &mt, Seed: &seed, Stop: []string{"END"}}
	a, _ := json.Marshal(sp)
	b, _ := json.Marshal(provider.Params(sp))
	if string(a) != string(b) {
		t.Errorf("provider.Params encodes as %s, spec.Params as %s", b, a)
	}
	l := spec.Limits{Concurrency: 3, RPM: 60, TPM: 1000}
	a, _ = json.Marshal(l)
	b, _ = json.Marshal(provider.Limits(l))
	if string(a) != string(b) {
		t.Errorf("provider.Limits encodes as %s, spec.Limits as %s", b, a)
	}
}
