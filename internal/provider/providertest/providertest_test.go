package providertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/provider/providertest"
)

// fake is a provider that behaves as the suite demands, unless a flaw is set.
type fake struct {
	reply  string
	delay  time.Duration
	status int
	flaw   string
	calls  []provider.ToolCall
	busy   atomic.Int32
}

// toolCalls returns f's calls as its flaw bends them.
func (f *fake) toolCalls() []provider.ToolCall {
	out := slices.Clone(f.calls)
	switch f.flaw {
	case "fixes_arguments":
		for i := range out {
			if !json.Valid([]byte(out[i].Arguments)) {
				out[i].Arguments = "{}"
			}
		}
	case "reorders_calls":
		slices.Reverse(out)
	case "reencodes_arguments":
		for i := range out {
			var v any
			if json.Unmarshal([]byte(out[i].Arguments), &v) == nil {
				b, _ := json.Marshal(v) // numbers through float64: 2.50 becomes 2.5
				out[i].Arguments = string(b)
			}
		}
	}
	return out
}

func (f *fake) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	start := time.Now()
	if f.flaw == "not_reentrant" {
		if !f.busy.CompareAndSwap(0, 1) {
			return nil, errors.New("busy: another call is in flight")
		}
		defer f.busy.Store(0)
		time.Sleep(2 * time.Millisecond)
	}
	if f.flaw == "mutates_request" {
		req.Messages = append(req.Messages, provider.Message{Role: "assistant", Content: "x"})
	}
	if f.flaw != "ignores_context" {
		if err := ctx.Err(); err != nil {
			return nil, f.ctxErr(err)
		}
	}
	if f.delay > 0 {
		if f.flaw == "ignores_context" {
			time.Sleep(min(f.delay, 1400*time.Millisecond))
		} else {
			select {
			case <-time.After(f.delay):
			case <-ctx.Done():
				return nil, f.ctxErr(ctx.Err())
			}
		}
	}
	if f.status != 0 {
		switch f.flaw {
		case "wrong_kind":
			return nil, &provider.Error{Kind: provider.KindServer, Status: f.status}
		case "unclassified":
			return nil, fmt.Errorf("HTTP %d", f.status)
		}
		return nil, &provider.Error{Kind: provider.KindForStatus(f.status), Status: f.status, Msg: "injected"}
	}
	text := f.reply
	switch f.flaw {
	case "trims":
		text = strings.TrimSpace(text)
	case "escapes_html":
		text = html.EscapeString(text)
	}
	lat := max(time.Since(start), time.Nanosecond)
	switch f.flaw {
	case "zero_latency":
		lat = 0
	case "fixed_latency":
		lat = time.Millisecond
	}
	return &provider.Response{Text: text, ToolCalls: f.toolCalls(), Attempts: 1, Latency: lat, Model: req.Model}, nil
}

func (f *fake) ctxErr(err error) error {
	if f.flaw == "context_as_network" {
		return errors.New("connection closed")
	}
	return err
}

func harness(flaw string) providertest.Harness {
	return providertest.Harness{
		Name: "fake/" + flaw,
		New: func(t *testing.T, reply string) provider.Provider {
			return &fake{reply: reply, flaw: flaw}
		},
		Slow: func(t *testing.T, d time.Duration) provider.Provider {
			return &fake{reply: "slow", delay: d, flaw: flaw}
		},
		Fail: func(t *testing.T, status int) provider.Provider {
			return &fake{status: status, flaw: flaw}
		},
		Calls: func(t *testing.T, calls []provider.ToolCall) provider.Provider {
			return &fake{calls: calls, flaw: flaw}
		},
	}
}

// A provider that does what the suite asks passes it.
func TestConformingProviderPasses(t *testing.T) {
	providertest.Run(t, harness(""))
}

// brokenEnv selects the flaw TestBrokenHarness injects; the test runs only
// when TestSuiteCatchesFlaws re-executes this binary with it set.
const brokenEnv = "ASSAY_PROVIDERTEST_FLAW"

func TestBrokenHarness(t *testing.T) {
	flaw := os.Getenv(brokenEnv)
	if flaw == "" {
		t.Skip("run by TestSuiteCatchesFlaws")
	}
	providertest.Run(t, harness(flaw))
}

// Each flaw a provider might have makes the named check of the suite fail.
func TestSuiteCatchesFlaws(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		flaw     string
		failures []string
	}{
		{"trims", []string{"RoundTrip/whitespace_and_newlines"}},
		{"escapes_html", []string{"RoundTrip/hostile", "RoundTrip/quotes_and_backslashes"}},
		{"zero_latency", []string{"RoundTrip/ascii"}},
		{"fixed_latency", []string{"Slow/LatencyMeasured"}},
		{"mutates_request", []string{"RequestUnchanged"}},
		{"not_reentrant", []string{"Concurrent"}},
		{"ignores_context", []string{"CanceledBeforeCall", "Slow/CancelDuringCall", "Slow/Deadline"}},
		{"context_as_network", []string{"CanceledBeforeCall", "Slow/Deadline"}},
		{"wrong_kind", []string{"Fail/400", "Fail/429"}},
		{"unclassified", []string{"Fail/503"}},
		{"fixes_arguments", []string{"ToolCalls/malformed_arguments"}},
		{"reorders_calls", []string{"ToolCalls/two_calls_in_order", "ToolCalls/same_tool_twice"}},
		{"reencodes_arguments", []string{"ToolCalls/hostile_arguments"}},
	}
	for _, c := range cases {
		t.Run(c.flaw, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(exe, "-test.run=^TestBrokenHarness$", "-test.count=1")
			// GORACE: under -race the child would otherwise sleep a second at exit.
			cmd.Env = append(os.Environ(), brokenEnv+"="+c.flaw, "GORACE=atexit_sleep_ms=0")
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("suite with flaw %q did not fail (err %v); output:\n%s", c.flaw, err, out)
			}
			for _, f := range c.failures {
				if !strings.Contains(string(out), "--- FAIL: TestBrokenHarness/"+f+" ") {
					t.Errorf("flaw %q: check %s did not fail; output:\n%s", c.flaw, f, out)
				}
			}
		})
	}
}

func TestQuestionsAreStableAndDistinct(t *testing.T) {
	a, b := providertest.Questions(), providertest.Questions()
	if len(a) < 2 {
		t.Fatalf("Questions() = %d questions; the suite needs several", len(a))
	}
	seen := map[string]bool{}
	for i, q := range a {
		if q != b[i] {
			t.Errorf("Questions() differs between calls at %d: %q vs %q", i, q, b[i])
		}
		if seen[q] {
			t.Errorf("duplicate question %q: a replay harness could not tell cases apart", q)
		}
		seen[q] = true
	}
	a[0] = "changed"
	if providertest.Questions()[0] == "changed" {
		t.Error("Questions() returns shared state a caller can change")
	}
}

func TestArgumentsEqual(t *testing.T) {
	for _, c := range []struct {
		got, want string
		equal     bool
	}{
		{`{"a":1,"b":[2.50]}`, `{ "b": [2.50], "a": 1 }`, true},
		{`{"a":2.5}`, `{"a":2.50}`, false},
		{`{"a":1}`, `{"a":1} {}`, false},
		{`{"a":1`, `{"a":1`, true},
		{`{"a": 1`, `{"a":1`, false},
		{``, ``, true},
		{`{}`, ``, false},
	} {
		if got := providertest.ArgumentsEqual(c.got, c.want); got != c.equal {
			t.Errorf("ArgumentsEqual(%q, %q) = %v, want %v", c.got, c.want, got, c.equal)
		}
	}
}
