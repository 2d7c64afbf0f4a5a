// Package providertest owns the conformance suite that every provider backend
// (openai, anthropic, exec, replay, ...) passes: exact round-trip of hostile
// replies, sane response fields, safety under concurrent use, prompt return
// on cancellation and deadlines, HTTP failures classified as
// provider.KindForStatus says, and tool calls returned in order with their
// arguments as written (a backend that can make them: Harness.Calls). A
// backend's test file builds a Harness and calls Run.
//
// It imports only the provider package and the standard library; it
// must not import the runner, scorer, store or any backend.
package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider"
)

// Harness builds providers for the suite.
type Harness struct {
	Name string
	// New returns a provider that answers every request of the suite with exactly reply.
	New func(t *testing.T, reply string) provider.Provider
	// Slow returns a provider that takes at least d to answer; nil when unsupported.
	Slow func(t *testing.T, d time.Duration) provider.Provider
	// Fail returns a provider whose calls fail as an HTTP status would (e.g. 429, 500, 400); nil when not applicable.
	Fail func(t *testing.T, status int) provider.Provider
	// Calls returns a provider that answers every tool-calling request of
	// the suite (ToolRequest) with exactly calls, in order, and no text;
	// nil when the backend cannot make tool calls.
	Calls func(t *testing.T, calls []provider.ToolCall) provider.Provider
}

// Questions are the case variables the suite sends (Vars["question"]), so a
// replay harness can record replies for them. Every request of the suite
// carries one of them; the list is the same on every call.
func Questions() []string {
	return []string{
		"What is 2 + 2?",
		"Combien font 7 × 8 ? Réponds en chiffres — s'il te plaît. 日本語も大丈夫？",
		"Quote \"this\" and 'that', a backslash \\ and a tab\there.",
		"Line one\nLine two with {{.question}} and <b>markup</b> that is data, not a template.",
	}
}

// Model is the model name the suite puts in every request.
const Model = "providertest-model"

// The bounds the suite holds providers to.
const (
	// promptReturn is how soon a provider must return once its context ends.
	promptReturn = time.Second
	// slowFor is what the suite asks Slow providers to take; the suite ends
	// the call long before that.
	slowFor = 5 * time.Second
	// failWithin bounds a failing call: providers must not retry by themselves
	// (the retry wrapper does), so a failure comes back at once.
	failWithin = 2 * time.Second
)

// namedReply is one reply the round-trip check sends through a provider.
type namedReply struct {
	name string
	text string
}

// replies are the texts a provider must return unchanged, byte for byte.
func replies() []namedReply {
	return []namedReply{
		{"ascii", "The answer is 4."},
		{"unicode", "Ünïcödé ✓ — 日本語のテキスト, emoji 🧪🚀, combining e\u0301, RTL שלום, NBSP\u00a0here"},
		{"whitespace_and_newlines", "  leading spaces\nsecond line\r\n\n\tindented third line\ntrailing newline\n"},
		{"quotes_and_backslashes", `she said "hi" and 'bye'; \ \n \" \\u0041 ` + "`backticks`"},
		{"hostile", "{{.x}} {{template \"t\"}} {{/* c */}} <script>alert('x')</script> ${HOME} $(id) %s %v %!d \x1b[31mred\x1b[0m \u202egnp.exe"},
		{"json_looking", `{"output": "not this", "error": "nor this", "usage": {"input": -1}}`},
		{"long", longReply(20 << 10)},
	}
}

// longReply returns a deterministic multi-line text of at least n bytes.
func longReply(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Line %05d: the quick brown fox — ünïcode ✓ {{.x}} \"q\" <i>%d</i>\n", i, i*i)
	}
	return b.String()
}

// request builds the suite's request for question i; calling it twice gives
// equal requests, which is how the suite checks that Complete leaves its
// request alone.
func request(i int) *provider.Request {
	qs := Questions()
	q := qs[i%len(qs)]
	temp := 0.0
	return &provider.Request{
		Model: Model,
		Messages: []provider.Message{
			{Role: "system", Content: "You are a conformance test. Answer briefly."},
			{Role: "user", Content: "Q: " + q},
		},
		Params: provider.Params{Temperature: &temp},
		CaseID: fmt.Sprintf("providertest-%d", i%len(qs)+1),
		Vars:   map[string]any{"question": q},
		Epoch:  0,
	}
}

// Run runs the conformance suite against the providers h builds.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatalf("providertest: harness %q has no New", h.Name)
	}
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, h) })
	t.Run("RequestUnchanged", func(t *testing.T) { testRequestUnchanged(t, h) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, h) })
	t.Run("CanceledBeforeCall", func(t *testing.T) { testCanceledBeforeCall(t, h) })
	t.Run("Slow", func(t *testing.T) {
		if h.Slow == nil {
			t.Skipf("%s: no Slow provider", h.Name)
		}
		t.Run("LatencyMeasured", func(t *testing.T) { testLatencyMeasured(t, h) })
		t.Run("CancelDuringCall", func(t *testing.T) { testCancelDuringCall(t, h) })
		t.Run("Deadline", func(t *testing.T) { testDeadline(t, h) })
	})
	t.Run("Fail", func(t *testing.T) {
		if h.Fail == nil {
			t.Skipf("%s: no Fail provider", h.Name)
		}
		testFail(t, h)
	})
	t.Run("ToolCalls", func(t *testing.T) {
		if h.Calls == nil {
			t.Skipf("%s: no Calls provider", h.Name)
		}
		testToolCalls(t, h)
	})
}

// Tools are the tools ToolRequest offers.
func Tools() []provider.Tool {
	return []provider.Tool{
		{Name: "get_weather", Description: "The weather in a city, today or on a day to come.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"a city's name, such as \"Zürich\""},"days":{"type":"integer","minimum":0}},"required":["city"]}`)},
		{Name: "search", Description: "Search the web.", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"filters":{"type":"object","properties":{"lang":{"enum":["en","fr"]}}}}}`)},
	}
}

// ToolRequest is the suite's tool-calling request for question i: the
// suite's tools, tool choice auto, and a history holding one answered round
// of calls (an assistant message with two calls, and their two results)
// before the user's question, so a backend sends calls and results back as
// well as reading new ones.
func ToolRequest(i int) *provider.Request {
	req := request(i)
	q := req.Messages[1]
	req.Tools = Tools()
	req.ToolChoice = provider.ToolChoiceAuto
	req.Messages = []provider.Message{
		req.Messages[0],
		{Role: "user", Content: "Earlier question."},
		{Role: "assistant", ToolCalls: []provider.ToolCall{
			{ID: "call_earlier_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "call_earlier_2", Name: "search", Arguments: `{"q":"paris weather"}`},
		}},
		{Role: "tool", ToolCallID: "call_earlier_1", Content: "sunny, 21 °C"},
		{Role: "tool", ToolCallID: "call_earlier_2", Content: `[{"title":"Paris forecast"}]`},
		{Role: "assistant", Content: "It is sunny in Paris."},
		q,
	}
	return req
}

// namedCalls is one set of calls the tool check sends through a provider.
type namedCalls struct {
	name  string
	calls []provider.ToolCall
}

// toolCallSets are the calls a provider must return: names and order
// exactly, arguments JSON-equal (a backend may re-space valid JSON) and,
// when they are not valid JSON, byte for byte — malformed arguments arrive
// as the model wrote them, never fixed.
func toolCallSets() []namedCalls {
	return []namedCalls{
		{"one call", []provider.ToolCall{{Name: "get_weather", Arguments: `{"city":"Zürich","days":2}`}}},
		{"two calls in order", []provider.ToolCall{{Name: "search", Arguments: `{"q":"b"}`}, {Name: "get_weather", Arguments: `{"city":"a"}`}}},
		{"same tool twice", []provider.ToolCall{{Name: "search", Arguments: `{"q":"1"}`}, {Name: "search", Arguments: `{"q":"2"}`}}},
		{"no arguments", []provider.ToolCall{{Name: "search", Arguments: `{}`}}},
		{"hostile arguments", []provider.ToolCall{{Name: "search", Arguments: `{"q":"{{.x}} \"q\" \\ \n ünï 🧪 \u0000 </script>","filters":{"lang":"fr","n":[1,2.50,-3e2,null,true]}}`}}},
		{"spaced arguments", []provider.ToolCall{{Name: "get_weather", Arguments: "{ \"city\" : \"Oslo\" ,\n \"days\": 0 }"}}},
		{"malformed arguments", []provider.ToolCall{{Name: "get_weather", Arguments: `{"city": "Par`}, {Name: "search", Arguments: `{"q":"x",}`}}},
	}
}

func testToolCalls(t *testing.T, h Harness) {
	for _, set := range toolCallSets() {
		t.Run(set.name, func(t *testing.T) {
			p := h.Calls(t, set.calls)
			for i := range Questions() {
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				req := ToolRequest(i)
				resp, err := p.Complete(ctx, req)
				cancel()
				if err != nil {
					t.Fatalf("%s: question %d: Complete: %v", h.Name, i, err)
				}
				checkResponse(t, h.Name, resp)
				if resp.Text != "" {
					t.Errorf("%s: question %d: text %q beside the calls; want none", h.Name, i, resp.Text)
				}
				if d := DiffToolCalls(resp.ToolCalls, set.calls); d != "" {
					t.Fatalf("%s: question %d: %s", h.Name, i, d)
				}
				if !reflect.DeepEqual(req, ToolRequest(i)) {
					t.Fatalf("%s: Complete modified its tool-calling request", h.Name)
				}
			}
		})
	}
}

// DiffToolCalls describes how got differs from want ("" when it does not):
// the same number of calls, in the same order, with the same names, and
// arguments that are JSON-equal when want's are valid JSON (numbers compared
// as written) and byte-equal when they are not. IDs are not compared.
func DiffToolCalls(got, want []provider.ToolCall) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d tool calls %q, want %d %q", len(got), got, len(want), want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name {
			return fmt.Sprintf("call %d is %q, want %q (calls %q)", i, g.Name, w.Name, got)
		}
		if !ArgumentsEqual(g.Arguments, w.Arguments) {
			return fmt.Sprintf("call %d (%s) has arguments %q, want %q", i, w.Name, g.Arguments, w.Arguments)
		}
	}
	return ""
}

// ArgumentsEqual reports whether two arguments texts are the same: equal
// JSON values when want is valid JSON (numbers compared as written, object
// keys in any order), else the same bytes.
func ArgumentsEqual(got, want string) bool {
	if got == want {
		return true
	}
	w, okW := decodeJSON(want)
	g, okG := decodeJSON(got)
	return okW && okG && reflect.DeepEqual(g, w)
}

func decodeJSON(s string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false
	}
	return v, true
}

// callTimeout bounds any single call the suite expects to succeed, so a
// broken provider fails the suite instead of hanging it.
const callTimeout = 30 * time.Second

func testRoundTrip(t *testing.T, h Harness) {
	for _, r := range replies() {
		t.Run(r.name, func(t *testing.T) {
			p := h.New(t, r.text)
			for i := range Questions() {
				ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
				resp, err := p.Complete(ctx, request(i))
				cancel()
				if err != nil {
					t.Fatalf("%s: question %d: Complete: %v", h.Name, i, err)
				}
				checkResponse(t, h.Name, resp)
				if resp.Text != r.text {
					t.Fatalf("%s: question %d: reply not returned exactly: %s", h.Name, i, mismatch(resp.Text, r.text))
				}
			}
		})
	}
}

func testRequestUnchanged(t *testing.T, h Harness) {
	p := h.New(t, "unchanged")
	req := request(1)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if _, err := p.Complete(ctx, req); err != nil {
		t.Fatalf("%s: Complete: %v", h.Name, err)
	}
	if want := request(1); !reflect.DeepEqual(req, want) {
		t.Fatalf("%s: Complete modified its request:\n got %+v\nwant %+v", h.Name, req, want)
	}
}

func testConcurrent(t *testing.T, h Harness) {
	const (
		workers = 16
		calls   = 3
		reply   = "concurrent reply ✓"
	)
	p := h.New(t, reply)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range calls {
				resp, err := p.Complete(ctx, request(w*calls+c))
				var msg string
				switch {
				case err != nil:
					msg = fmt.Sprintf("worker %d call %d: %v", w, c, err)
				case resp == nil:
					msg = fmt.Sprintf("worker %d call %d: nil response without error", w, c)
				case resp.Text != reply:
					msg = fmt.Sprintf("worker %d call %d: %s", w, c, mismatch(resp.Text, reply))
				}
				if msg != "" {
					mu.Lock()
					errs = append(errs, msg)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		if len(errs) > 5 {
			errs = append(errs[:5], fmt.Sprintf("... and %d more", len(errs)-5))
		}
		t.Fatalf("%s: %d concurrent calls, failures:\n%s", h.Name, workers*calls, strings.Join(errs, "\n"))
	}
}

func testCanceledBeforeCall(t *testing.T, h Harness) {
	p := h.New(t, "never seen")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	resp, err := p.Complete(ctx, request(0))
	elapsed := time.Since(start)
	if err == nil {
		t.Fatalf("%s: Complete with a canceled context succeeded (text %q); want an error", h.Name, resp.Text)
	}
	if k := provider.KindOf(err); k != provider.KindCanceled && k != provider.KindTimeout {
		t.Errorf("%s: canceled context gave kind %q (%v); want %q or %q", h.Name, k, err, provider.KindCanceled, provider.KindTimeout)
	}
	if elapsed > promptReturn {
		t.Errorf("%s: Complete with a canceled context took %v; want under %v", h.Name, elapsed, promptReturn)
	}
}

func testLatencyMeasured(t *testing.T, h Harness) {
	const d = 200 * time.Millisecond
	p := h.Slow(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	resp, err := p.Complete(ctx, request(0))
	if err != nil {
		t.Fatalf("%s: slow call with time to spare: %v", h.Name, err)
	}
	checkResponse(t, h.Name, resp)
	if resp.Latency < d {
		t.Errorf("%s: a call that took at least %v reported Latency %v", h.Name, d, resp.Latency)
	}
}

func testCancelDuringCall(t *testing.T, h Harness) {
	const after = 150 * time.Millisecond
	p := h.Slow(t, slowFor)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer := time.AfterFunc(after, cancel)
	defer timer.Stop()
	start := time.Now()
	resp, err := p.Complete(ctx, request(0))
	elapsed := time.Since(start)
	if err == nil {
		t.Fatalf("%s: call canceled after %v succeeded (text %q); want an error", h.Name, after, resp.Text)
	}
	if k := provider.KindOf(err); k != provider.KindCanceled && k != provider.KindTimeout {
		t.Errorf("%s: canceled call gave kind %q (%v); want %q or %q", h.Name, k, err, provider.KindCanceled, provider.KindTimeout)
	}
	if elapsed > after+promptReturn {
		t.Errorf("%s: call canceled after %v returned after %v; want within %v of the cancel", h.Name, after, elapsed, promptReturn)
	}
}

func testDeadline(t *testing.T, h Harness) {
	const deadline = 150 * time.Millisecond
	p := h.Slow(t, slowFor)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	resp, err := p.Complete(ctx, request(0))
	elapsed := time.Since(start)
	if err == nil {
		t.Fatalf("%s: call past its %v deadline succeeded (text %q); want an error", h.Name, deadline, resp.Text)
	}
	if k := provider.KindOf(err); k != provider.KindTimeout {
		t.Errorf("%s: call past its deadline gave kind %q (%v); want %q", h.Name, k, err, provider.KindTimeout)
	}
	if elapsed > deadline+promptReturn {
		t.Errorf("%s: call with a %v deadline returned after %v; want within %v of the deadline", h.Name, deadline, elapsed, promptReturn)
	}
}

// failCases are the statuses the Fail check uses, with whether a call that
// failed so may succeed when tried again (written out here, not derived from
// the code under test).
func failCases() []failCase {
	return []failCase{
		{400, false}, {401, false}, {403, false}, {404, false}, {408, true},
		{409, true}, {422, false}, {429, true}, {500, true}, {502, true},
		{503, true}, {529, true},
	}
}

type failCase struct {
	status    int
	retryable bool
}

func testFail(t *testing.T, h Harness) {
	for _, fc := range failCases() {
		t.Run(fmt.Sprint(fc.status), func(t *testing.T) {
			p := h.Fail(t, fc.status)
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			start := time.Now()
			resp, err := p.Complete(ctx, request(0))
			elapsed := time.Since(start)
			if err == nil {
				t.Fatalf("%s: HTTP %d: Complete succeeded (text %q); want an error", h.Name, fc.status, resp.Text)
			}
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s: HTTP %d: error %v (%T) is not a *provider.Error", h.Name, fc.status, err, err)
			}
			want := provider.KindForStatus(fc.status)
			if pe.Kind != want {
				t.Errorf("%s: HTTP %d: kind %q; want %q", h.Name, fc.status, pe.Kind, want)
			}
			if provider.KindOf(err) != want {
				t.Errorf("%s: HTTP %d: KindOf = %q; want %q", h.Name, fc.status, provider.KindOf(err), want)
			}
			if pe.Status != fc.status {
				t.Errorf("%s: HTTP %d: Status = %d; want %d", h.Name, fc.status, pe.Status, fc.status)
			}
			if pe.Retryable() != fc.retryable {
				t.Errorf("%s: HTTP %d: Retryable() = %v; want %v", h.Name, fc.status, pe.Retryable(), fc.retryable)
			}
			if elapsed > failWithin {
				t.Errorf("%s: HTTP %d took %v to fail; a provider must not retry by itself (the retry wrapper does)", h.Name, fc.status, elapsed)
			}
		})
	}
}

// checkResponse checks the fields every successful response must have sane.
func checkResponse(t *testing.T, name string, resp *provider.Response) {
	t.Helper()
	if resp == nil {
		t.Fatalf("%s: nil response without error", name)
	}
	if resp.Attempts < 1 {
		t.Errorf("%s: Attempts = %d; want at least 1", name, resp.Attempts)
	}
	if resp.Latency <= 0 {
		t.Errorf("%s: Latency = %v; want the measured duration of the call (> 0)", name, resp.Latency)
	}
	if resp.FirstToken < 0 || resp.FirstToken > resp.Latency {
		t.Errorf("%s: FirstToken = %v with Latency %v; want 0 or within the call", name, resp.FirstToken, resp.Latency)
	}
	if resp.Usage.Input < 0 || resp.Usage.Output < 0 || resp.Usage.Cached < 0 {
		t.Errorf("%s: negative token counts %+v", name, resp.Usage)
	}
	if resp.Usage.Cached > resp.Usage.Input {
		t.Errorf("%s: cached tokens %d exceed input tokens %d", name, resp.Usage.Cached, resp.Usage.Input)
	}
}

// mismatch describes how got differs from want without printing 20 KB.
func mismatch(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(i-24, 0)
	excerpt := func(s string) string {
		hi := min(i+24, len(s))
		if lo >= len(s) {
			return `""`
		}
		return fmt.Sprintf("%q", s[lo:hi])
	}
	return fmt.Sprintf("got %d bytes, want %d; first difference at byte %d: got …%s…, want …%s…",
		len(got), len(want), i, excerpt(got), excerpt(want))
}
