package provider

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// memCache is an in-memory Cache with injectable failures.
type memCache struct {
	mu      sync.Mutex
	m       map[string][]byte
	gets    int
	puts    int
	getErr  error
	putErr  error
	putCtxs []error  // ctx.Err() seen by each put
	targets []string // the target named by each put
}

func newMemCache() *memCache { return &memCache{m: map[string][]byte{}} }

func (c *memCache) CacheGet(ctx context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	if c.getErr != nil {
		return nil, false, c.getErr
	}
	b, ok := c.m[key]
	return b, ok, nil
}

func (c *memCache) CachePut(ctx context.Context, key, target string, b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.puts++
	c.targets = append(c.targets, target)
	c.putCtxs = append(c.putCtxs, ctx.Err())
	if c.putErr != nil {
		return c.putErr
	}
	c.m[key] = bytes.Clone(b)
	return nil
}

func f64(v float64) *float64 { return &v }
func intp(v int) *int        { return &v }

var testScope = CacheScope{Provider: "openai", BaseURL: "https://api.example.com/v1", Model: "m-scope"}

func baseRequest() *Request {
	return &Request{
		Model: "m1",
		Messages: []Message{
			{Role: "system", Content: "Answer briefly."},
			{Role: "user", Content: "What is 2+2?"},
		},
		Params: Params{Temperature: f64(0), MaxTokens: intp(64)},
		CaseID: "case-1",
		Vars:   map[string]any{"q": "What is 2+2?"},
		Epoch:  1,
	}
}

func TestCacheKeyCanonicalForm(t *testing.T) {
	// The key is the SHA-256 of this JSON, written by hand: changing the
	// canonical form silently empties every user's cache, so it is locked.
	req := &Request{
		Model:    "gpt-x",
		Messages: []Message{{Role: "user", Content: "hi"}},
		Params:   Params{Temperature: f64(0)},
		CaseID:   "7",
	}
	doc := `{"provider":"openai","base_url":"http://localhost:8080/v1","model":"gpt-x",` +
		`"params":{"temperature":0},"messages":[{"role":"user","content":"hi"}]}`
	sum := sha256.Sum256([]byte(doc))
	want := "sha256:" + hex.EncodeToString(sum[:])
	got := CacheKey(CacheScope{Provider: "openai", BaseURL: "http://localhost:8080/v1"}, req)
	if got != want {
		t.Errorf("CacheKey = %s, want sha256 of %s", got, doc)
	}

	// A target's headers come last, their names sorted; a target without
	// headers keeps the key above.
	doc = `{"provider":"openai","base_url":"http://localhost:8080/v1","model":"gpt-x",` +
		`"params":{"temperature":0},"messages":[{"role":"user","content":"hi"}],` +
		`"headers":{"X-Accel":"on","X-Deployment":"eu-2"}}`
	sum = sha256.Sum256([]byte(doc))
	want = "sha256:" + hex.EncodeToString(sum[:])
	got = CacheKey(CacheScope{Provider: "openai", BaseURL: "http://localhost:8080/v1",
		Headers: map[string]string{"X-Deployment": "eu-2", "X-Accel": "on"}}, req)
	if got != want {
		t.Errorf("CacheKey with headers = %s, want sha256 of %s", got, doc)
	}
}

func TestCacheKeyComponents(t *testing.T) {
	base := CacheKey(testScope, baseRequest())
	changes := []struct {
		name  string
		scope func(*CacheScope)
		req   func(*Request)
	}{
		{"provider", func(s *CacheScope) { s.Provider = "anthropic" }, nil},
		{"base URL", func(s *CacheScope) { s.BaseURL = "http://127.0.0.1:11434/v1" }, nil},
		{"model", nil, func(r *Request) { r.Model = "m2" }},
		{"temperature", nil, func(r *Request) { r.Params.Temperature = f64(0.7) }},
		{"temperature unset vs 0", nil, func(r *Request) { r.Params.Temperature = nil }},
		{"top_p", nil, func(r *Request) { r.Params.TopP = f64(0.9) }},
		{"max_tokens", nil, func(r *Request) { r.Params.MaxTokens = intp(65) }},
		{"seed", nil, func(r *Request) { s := int64(1); r.Params.Seed = &s }},
		{"stop", nil, func(r *Request) { r.Params.Stop = []string{"\n"} }},
		{"system message", nil, func(r *Request) { r.Messages[0].Content = "Answer at length." }},
		{"user message", nil, func(r *Request) { r.Messages[1].Content = "What is 2+3?" }},
		{"a role", nil, func(r *Request) { r.Messages[0].Role = "user" }},
		{"message order", nil, func(r *Request) { r.Messages[0], r.Messages[1] = r.Messages[1], r.Messages[0] }},
		{"an extra message", nil, func(r *Request) { r.Messages = append(r.Messages, Message{Role: "assistant", Content: ""}) }},
		{"messages merged", nil, func(r *Request) {
			r.Messages = []Message{{Role: "system", Content: "Answer briefly.What is 2+2?"}}
		}},
		{"epoch 2", nil, func(r *Request) { r.Epoch = 2 }},
		// A header can pick the deployment that answers: a reply from one
		// is never served as another's.
		{"a header", func(s *CacheScope) { s.Headers = map[string]string{"X-Deployment": "canary"} }, nil},
	}
	for _, c := range changes {
		t.Run("changes with "+c.name, func(t *testing.T) {
			s, r := testScope, baseRequest()
			if c.scope != nil {
				c.scope(&s)
			}
			if c.req != nil {
				c.req(r)
			}
			if CacheKey(s, r) == base {
				t.Error("key did not change")
			}
		})
	}
	same := []struct {
		name string
		req  func(*Request)
	}{
		{"case ID", func(r *Request) { r.CaseID = "case-2" }},
		{"vars", func(r *Request) { r.Vars = map[string]any{"q": "other", "extra": 1} }},
		{"epoch 0 (unset) vs 1", func(r *Request) { r.Epoch = 0 }},
	}
	for _, c := range same {
		t.Run("ignores "+c.name, func(t *testing.T) {
			r := baseRequest()
			c.req(r)
			if CacheKey(testScope, r) != base {
				t.Error("key changed")
			}
		})
	}
	t.Run("scope model when the request names none", func(t *testing.T) {
		r := baseRequest()
		r.Model = ""
		a := CacheKey(testScope, r)
		s := testScope
		s.Model = "m-other"
		if CacheKey(s, r) == a {
			t.Error("key did not change with the scope's model")
		}
	})
	t.Run("a header's value", func(t *testing.T) {
		a, b := testScope, testScope
		a.Headers = map[string]string{"X-Deployment": "stable"}
		b.Headers = map[string]string{"X-Deployment": "canary"}
		if CacheKey(a, baseRequest()) == CacheKey(b, baseRequest()) {
			t.Error("two deployments share a key")
		}
	})
	t.Run("each epoch above 1 apart", func(t *testing.T) {
		seen := map[string]int{}
		for e := 1; e <= 5; e++ {
			r := baseRequest()
			r.Epoch = e
			k := CacheKey(testScope, r)
			if prev, dup := seen[k]; dup {
				t.Errorf("epochs %d and %d share a key", prev, e)
			}
			seen[k] = e
		}
	})
}

func TestCacheKeyNaN(t *testing.T) {
	r := baseRequest()
	r.Params.Temperature = f64(math.NaN())
	if k := CacheKey(testScope, r); k != "" {
		t.Errorf("CacheKey = %q for a NaN param, want \"\"", k)
	}
	// WithCache calls the target without caching.
	c := newMemCache()
	be := &script{}
	p := withCache(be, c, testScope, false, discardLog())
	p.Complete(context.Background(), r)
	p.Complete(context.Background(), r)
	if be.n() != 2 || c.puts != 0 {
		t.Errorf("backend called %d times, %d puts; want 2 calls, nothing cached", be.n(), c.puts)
	}
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestCacheHitAndMiss(t *testing.T) {
	c := newMemCache()
	be := &script{}
	p := withCache(be, c, testScope, false, discardLog())
	ctx := context.Background()

	first, err := p.Complete(ctx, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached || be.n() != 1 || c.puts != 1 {
		t.Fatalf("first call: cached %v, %d calls, %d puts; want a miss that calls and stores", first.Cached, be.n(), c.puts)
	}

	// Another case with the same messages is served from the cache.
	r := baseRequest()
	r.CaseID = "case-9"
	hit, err := p.Complete(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if be.n() != 1 {
		t.Errorf("backend called %d times, want 1: the second request is a hit", be.n())
	}
	if !hit.Cached || hit.Attempts != 0 {
		t.Errorf("hit: Cached %v, Attempts %d; want true and 0 (no call paid)", hit.Cached, hit.Attempts)
	}
	if hit.Text != first.Text || hit.Usage != first.Usage || hit.Latency != first.Latency {
		t.Errorf("hit = %+v, want the original reply's text, usage and latency %+v", hit, first)
	}

	// Epoch 2 does not get epoch 1's reply.
	r = baseRequest()
	r.Epoch = 2
	if resp, _ := p.Complete(ctx, r); resp.Cached || be.n() != 2 {
		t.Errorf("epoch 2: cached %v, %d calls; want a fresh call", resp.Cached, be.n())
	}
}

func TestCacheNeverStoresErrors(t *testing.T) {
	c := newMemCache()
	be := &script{errs: []error{httpErr(500), httpErr(400)}}
	p := withCache(be, c, testScope, false, discardLog())
	for i, want := range []ErrorKind{KindServer, KindBadRequest, ""} {
		_, err := p.Complete(context.Background(), baseRequest())
		if KindOf(err) != want {
			t.Errorf("call %d: err %v, want kind %q", i+1, err, want)
		}
	}
	if be.n() != 3 || c.puts != 1 {
		t.Errorf("%d calls, %d puts; want every failure to reach the backend again and only the reply stored", be.n(), c.puts)
	}
}

func TestCacheFailuresNeverFailTheCall(t *testing.T) {
	t.Run("read error", func(t *testing.T) {
		var logs bytes.Buffer
		c := newMemCache()
		c.getErr = errors.New("database is locked")
		be := &script{}
		resp, err := withCache(be, c, testScope, false, slog.New(slog.NewTextHandler(&logs, nil))).Complete(context.Background(), baseRequest())
		if err != nil || resp.Text != "reply" || be.n() != 1 {
			t.Errorf("got %v, %v after %d calls; want the backend's reply", resp, err, be.n())
		}
		if !strings.Contains(logs.String(), "database is locked") {
			t.Errorf("log %q does not report the read error", logs.String())
		}
	})
	t.Run("write error", func(t *testing.T) {
		var logs bytes.Buffer
		c := newMemCache()
		c.putErr = errors.New("disk full")
		resp, err := withCache(&script{}, c, testScope, false, slog.New(slog.NewTextHandler(&logs, nil))).Complete(context.Background(), baseRequest())
		if err != nil || resp.Text != "reply" {
			t.Errorf("got %v, %v; want the backend's reply", resp, err)
		}
		if !strings.Contains(logs.String(), "disk full") {
			t.Errorf("log %q does not report the write error", logs.String())
		}
	})
	t.Run("unreadable stored reply", func(t *testing.T) {
		c := newMemCache()
		c.m[CacheKey(testScope, baseRequest())] = []byte("{not json")
		be := &script{}
		p := withCache(be, c, testScope, false, discardLog())
		resp, err := p.Complete(context.Background(), baseRequest())
		if err != nil || resp.Cached || be.n() != 1 {
			t.Fatalf("got %v, %v after %d calls; want a fresh call", resp, err, be.n())
		}
		if resp, _ := p.Complete(context.Background(), baseRequest()); !resp.Cached {
			t.Error("the fresh reply did not replace the unreadable one")
		}
	})
	t.Run("read cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := newMemCache()
		c.getErr = context.Canceled
		be := &script{}
		_, err := withCache(be, c, testScope, false, discardLog()).Complete(ctx, baseRequest())
		if KindOf(err) != KindCanceled || be.n() != 0 {
			t.Errorf("err %v after %d calls; want canceled without a call", err, be.n())
		}
	})
}

func TestCacheStoresAReplyPaidForJustBeforeCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newMemCache()
	be := &script{before: func(context.Context, int) { cancel() }}
	if _, err := withCache(be, c, testScope, false, discardLog()).Complete(ctx, baseRequest()); err != nil {
		t.Fatal(err)
	}
	if c.puts != 1 || c.putCtxs[0] != nil {
		t.Errorf("%d puts, put ctx err %v; want the reply stored with a live context", c.puts, c.putCtxs)
	}
}

func TestCacheStoresOnlyTheResponse(t *testing.T) {
	c := newMemCache()
	r := baseRequest()
	r.Messages[1].Content = "secret-looking prompt sk-test-123"
	withCache(&script{}, c, testScope, false, discardLog()).Complete(context.Background(), r)
	for k, v := range c.m {
		if strings.Contains(k, "sk-test") || bytes.Contains(v, []byte("sk-test")) || bytes.Contains(v, []byte("case-1")) {
			t.Errorf("stored %s = %s: the request leaked into the cache", k, v)
		}
	}
}

func TestWithCacheNil(t *testing.T) {
	be := &script{}
	if p := WithCache(be, nil, testScope); p != Provider(be) {
		t.Error("WithCache with a nil cache should return the backend unchanged")
	}
}

// FuzzCacheKeyDistinct checks that the canonical encoding is unambiguous:
// different messages (valid UTF-8) never share a key, however their
// contents are split or quoted.
func FuzzCacheKeyDistinct(f *testing.F) {
	f.Add("a", "b", "ab")
	f.Add(`","role":"user","content":"`, "x", "")
	f.Add("", "", "")
	f.Add("\u2028", "\\", `"`)
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) || !utf8.ValidString(c) {
			t.Skip() // json.Marshal replaces invalid bytes, as it does on the wire
		}
		two := &Request{Messages: []Message{{Role: "user", Content: a}, {Role: "user", Content: b}}}
		one := &Request{Messages: []Message{{Role: "user", Content: a + b}}}
		if CacheKey(testScope, two) == CacheKey(testScope, one) {
			t.Errorf("[%q,%q] and [%q] share a key", a, b, a+b)
		}
		other := &Request{Messages: []Message{{Role: "user", Content: a}, {Role: "user", Content: c}}}
		if (b == c) != (CacheKey(testScope, two) == CacheKey(testScope, other)) {
			t.Errorf("b=%q c=%q: keys equal %v, want %v", b, c, !(b == c), b == c)
		}
		sys := &Request{Messages: []Message{{Role: "system", Content: a}, {Role: "user", Content: b}}}
		if CacheKey(testScope, sys) == CacheKey(testScope, two) {
			t.Errorf("role not in the key for %q", a)
		}
	})
}

// answers replies with the next of its texts on each call.
type answers struct {
	mu    sync.Mutex
	texts []string
	calls int
}

func (a *answers) Complete(ctx context.Context, req *Request) (*Response, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	text := a.texts[min(a.calls, len(a.texts)-1)]
	a.calls++
	return &Response{Text: text, Usage: Usage{Input: 10, Output: 2}, Attempts: 1}, nil
}

// --no-cache refreshes what it bypasses: the refresh calls the target even
// though a reply is stored, and stores the fresh reply under the same key
// with the target's name, so a later cached call gets the fresh reply, not
// the stale one.
func TestCacheRefreshReplacesWhatItBypasses(t *testing.T) {
	c := newMemCache()
	be := &answers{texts: []string{"old verdict", "new verdict"}}
	scope := testScope
	scope.Target = "grader"
	ctx := context.Background()

	if r, err := withCache(be, c, scope, false, discardLog()).Complete(ctx, baseRequest()); err != nil || r.Text != "old verdict" {
		t.Fatalf("first call = %+v, %v", r, err)
	}
	gets := c.gets
	r, err := withCache(be, c, scope, true, discardLog()).Complete(ctx, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "new verdict" || r.Cached || be.calls != 2 {
		t.Errorf("refresh = %q (cached %v) after %d calls; want the target's new reply, called again", r.Text, r.Cached, be.calls)
	}
	if c.gets != gets {
		t.Errorf("refresh read the cache %d times; it must skip the read", c.gets-gets)
	}
	hit, err := withCache(be, c, scope, false, discardLog()).Complete(ctx, baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	if !hit.Cached || hit.Text != "new verdict" || be.calls != 2 {
		t.Errorf("after the refresh a cached call got %q (cached %v, %d calls); want the refreshed reply from the cache", hit.Text, hit.Cached, be.calls)
	}
	if want := []string{"grader", "grader"}; !slices.Equal(c.targets, want) {
		t.Errorf("puts named targets %q, want %q", c.targets, want)
	}
}
