package harness

import (
	"math"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/load"
	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/openai"
	"github.com/assay-eval/assay/internal/spec"
)

// startMock serves assay's mock on loopback for the test's duration and
// returns an OpenAI provider pointed at it (no retries: the SDK's are off
// and nothing wraps it).
func startMock(t *testing.T, o mock.Options, stream bool) (*mock.Server, provider.Provider) {
	t.Helper()
	srv := mock.New(o)
	url, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	tg := spec.Target{Name: "mock", Provider: "openai", Model: "mock-1", BaseURL: url + "/v1", Stream: stream}
	p, err := openai.New(&tg, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv, p
}

// Over HTTP against the mock, a streamed answer gives its time to first
// token and inter-token latency from the stream itself, and the mock's
// 429s arrive classified as rate_limited with their status; every call the
// server saw is a recorded request.
func TestOverHTTPAgainstMock(t *testing.T) {
	srv, p := startMock(t, mock.Options{Latency: 20 * time.Millisecond, TokenDelay: 2 * time.Millisecond, Rate: 30, Burst: 1,
		Default: "one two three four five six seven eight nine ten"}, true)
	sink, err := run(t, []Target{target("mock", p, func(in, out int) float64 { return float64(in+out) * 1e-6 })}, Options{
		Mode: load.ModeRate, Levels: []float64{60}, Duration: 1500 * time.Millisecond, Seed: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := srv.Stats(); st.Requests != int64(len(sink.reqs)) || st.RateLimit == 0 {
		t.Fatalf("the mock saw %d requests (%d 429s) for %d recorded", st.Requests, st.RateLimit, len(sink.reqs))
	}
	var ok, limited int
	for _, r := range sink.reqs {
		switch r.ErrorKind {
		case "":
			ok++
			if math.IsNaN(r.FirstTokenMS) || r.FirstTokenMS < 20 || r.FirstTokenMS > r.LatencyMS {
				t.Errorf("first token at %g ms of %g", r.FirstTokenMS, r.LatencyMS)
			}
			if math.IsNaN(r.InterTokenMS) || r.InterTokenMS <= 0 || r.OutputTokens < 2 || r.CostUSD <= 0 {
				t.Errorf("inter-token %g ms over %d tokens, cost %g", r.InterTokenMS, r.OutputTokens, r.CostUSD)
			}
		case string(provider.KindRateLimited):
			limited++
			if r.Status != 429 || r.CostUSD != 0 {
				t.Errorf("a 429 recorded with status %d, cost %g", r.Status, r.CostUSD)
			}
		default:
			t.Errorf("unexpected failure %s (%d)", r.ErrorKind, r.Status)
		}
	}
	if ok == 0 || limited == 0 {
		t.Errorf("%d answered, %d rate limited at 60 rps against a limit of 30", ok, limited)
	}
}
