package collect_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assay-eval/assay/internal/collect"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// request builds an export request of n GenAI chat spans (and one plain
// span), trace IDs from seed.
func request(seed byte, n int) ptraceotlp.ExportRequest {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bot")
	ss := rs.ScopeSpans().AppendEmpty()
	for i := range n {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID{seed, byte(i >> 8), byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
		s.SetSpanID(pcommon.SpanID{seed, byte(i >> 8), byte(i), 1, 2, 3, 4, 5})
		s.SetName("chat gpt-4o")
		start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
		a := s.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.request.model", "gpt-4o")
		a.PutInt("gen_ai.usage.input_tokens", 10)
		a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`)
	}
	plain := ss.Spans().AppendEmpty()
	plain.SetTraceID(pcommon.TraceID{seed, 0xff, 1})
	plain.SetSpanID(pcommon.SpanID{seed, 0xff, 1})
	plain.Attributes().PutStr("http.request.method", "GET")
	return ptraceotlp.NewExportRequestFromTraces(td)
}

func protoBody(t testing.TB, r ptraceotlp.ExportRequest) []byte {
	t.Helper()
	b, err := r.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func post(h http.Handler, body []byte, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func count(t *testing.T, st store.Traces) int64 {
	t.Helper()
	n, err := st.CountTraces(context.Background(), store.TraceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// statusMessage decodes a refusal's google.rpc.Status (protobuf or JSON).
func statusMessage(t *testing.T, rec *httptest.ResponseRecorder) (int, string) {
	t.Helper()
	b := rec.Body.Bytes()
	if rec.Header().Get("Content-Type") == "application/json" {
		var s struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("the refusal is not a JSON Status: %v: %s", err, b)
		}
		return s.Code, s.Message
	}
	// {1: varint code, 2: string message}, both under 128 bytes' lengths
	// or not: read the varints properly.
	code, n := uvarint(b[1:])
	b = b[1+n:]
	if len(b) == 0 || b[0] != 0x12 {
		t.Fatalf("the refusal is not a protobuf Status: %x", rec.Body.Bytes())
	}
	l, m := uvarint(b[1:])
	return int(code), string(b[1+m : 1+m+int(l)])
}

func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i, c := range b {
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}

// A request is answered with an ExportResponse in its own encoding, and
// its GenAI spans are stored; sending it again stores nothing twice.
func TestExportStoresAndAnswersInKind(t *testing.T) {
	st := openStore(t)
	rc, _ := startReceiver(t, collect.Options{Store: st})
	req := request(1, 3)
	jsonBody, err := req.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, ct string
		body     []byte
		gzip     bool
	}{
		{"protobuf", "application/x-protobuf", protoBody(t, req), false},
		{"json", "application/json", jsonBody, false},
		{"json gzip", "application/json; charset=utf-8", gzipped(jsonBody), true},
	} {
		h := []string{"Content-Type", c.ct}
		if c.gzip {
			h = append(h, "Content-Encoding", "gzip")
		}
		rec := post(rc, c.body, h...)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, rec.Code, rec.Body)
		}
		resp := ptraceotlp.NewExportResponse()
		if strings.HasPrefix(c.ct, "application/json") {
			if rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("%s: answered %s", c.name, rec.Header().Get("Content-Type"))
			}
			err = resp.UnmarshalJSON(rec.Body.Bytes())
		} else {
			if rec.Header().Get("Content-Type") != "application/x-protobuf" {
				t.Errorf("%s: answered %s", c.name, rec.Header().Get("Content-Type"))
			}
			err = resp.UnmarshalProto(rec.Body.Bytes())
		}
		if err != nil {
			t.Errorf("%s: the answer is not an ExportResponse: %v", c.name, err)
		}
		if n := count(t, st); n != 3 {
			t.Errorf("%s: %d traces stored, want 3", c.name, n)
		}
	}
	if got := rc.Counts(); got.Requests != 3 || got.Stored != 3 || got.Duplicates != 6 || got.Ignored != 3 {
		t.Errorf("counts %+v, want 3 requests, 3 stored, 6 duplicates, 3 ignored", got)
	}
}

// A malformed body — protobuf, JSON, gzip — is refused with 400 and a
// reason in the request's encoding, and nothing is stored.
func TestMalformedBodyRefusedNothingStored(t *testing.T) {
	st := openStore(t)
	rc, _ := startReceiver(t, collect.Options{Store: st})
	good := protoBody(t, request(2, 4))
	goodJSON, _ := request(2, 4).MarshalJSON()
	zeroID := request(3, 4)
	zeroID.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(2).SetTraceID(pcommon.TraceID{})
	for _, c := range []struct {
		name string
		body []byte
		h    []string
		want string
	}{
		{"truncated protobuf", good[:len(good)-7], []string{"Content-Type", "application/x-protobuf"}, "malformed OTLP protobuf body"},
		{"garbage protobuf", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, []string{"Content-Type", "application/x-protobuf"}, "malformed OTLP protobuf body"},
		{"truncated JSON", goodJSON[:len(goodJSON)/2], []string{"Content-Type", "application/json"}, "malformed OTLP JSON body"},
		{"JSON of the wrong shape", []byte(`{"resourceSpans":7}`), []string{"Content-Type", "application/json"}, "malformed OTLP JSON body"},
		{"bad trace ID in JSON", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz","spanId":"0102030405060708","attributes":[{"key":"gen_ai.system","value":{"stringValue":"x"}}]}]}]}]}`), []string{"Content-Type", "application/json"}, "malformed OTLP JSON body"},
		{"not gzip", good, []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "gzip"}, "malformed gzip body"},
		{"truncated gzip", gzipped(good)[:40], []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "gzip"}, "malformed gzip body"},
		{"a span without a trace ID", protoBody(t, zeroID), []string{"Content-Type", "application/x-protobuf"}, "resource_spans[0].scope_spans[0].spans[2]: the span has no trace_id"},
	} {
		rec := post(rc, c.body, c.h...)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400: %s", c.name, rec.Code, rec.Body)
			continue
		}
		code, msg := statusMessage(t, rec)
		if code != 3 || !strings.Contains(msg, c.want) || !strings.Contains(msg, "nothing") {
			t.Errorf("%s: status %d %q, want INVALID_ARGUMENT saying %q and that nothing was stored", c.name, code, msg, c.want)
		}
		if n := count(t, st); n != 0 {
			t.Fatalf("%s: %d traces stored, want none", c.name, n)
		}
	}
	if got := rc.Counts(); got.Refused != 8 || got.Stored != 0 {
		t.Errorf("counts %+v", got)
	}
}

// Bodies over the limit are refused with 413, as sent and once inflated: a
// gzip bomb inflates no further than the limit.
func TestBodyLimits(t *testing.T) {
	st := openStore(t)
	rc, _ := startReceiver(t, collect.Options{Store: st, MaxBody: 64 << 10})
	big := protoBody(t, request(4, 600)) // ~ 100 KiB
	if len(big) <= 64<<10 {
		t.Fatalf("the test's body is %d bytes, not over the limit", len(big))
	}
	bomb := gzipped(make([]byte, 64<<20)) // 64 MiB of zeros in ~64 KiB
	for _, c := range []struct {
		name string
		body []byte
		h    []string
	}{
		{"over the limit", big, []string{"Content-Type", "application/x-protobuf"}},
		{"over the limit once inflated", gzipped(big), []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "gzip"}},
		{"gzip bomb", bomb, []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "gzip"}},
	} {
		rec := post(rc, c.body, c.h...)
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: %d, want 413: %.300s", c.name, rec.Code, rec.Body)
			continue
		}
		if _, msg := statusMessage(t, rec); !strings.Contains(msg, "limit of 65536 bytes") {
			t.Errorf("%s: %q does not give the limit", c.name, msg)
		}
	}
	if n := count(t, st); n != 0 {
		t.Errorf("%d traces stored, want none", n)
	}
	// Under the limit it is received.
	if rec := post(rc, protoBody(t, request(5, 10)), "Content-Type", "application/x-protobuf"); rec.Code != http.StatusOK {
		t.Errorf("a small request: %d %s", rec.Code, rec.Body)
	}
}

// Wrong method, path, media type or encoding are refused with their
// status and a reason naming what to send.
func TestRefusals(t *testing.T) {
	st := openStore(t)
	rc, _ := startReceiver(t, collect.Options{Store: st})
	body := protoBody(t, request(6, 1))
	for _, c := range []struct {
		name, method, path string
		h                  []string
		code               int
		want               string
	}{
		{"GET", http.MethodGet, "/v1/traces", nil, 405, "POST /v1/traces"},
		{"PUT", http.MethodPut, "/v1/traces", []string{"Content-Type", "application/x-protobuf"}, 405, "POST /v1/traces"},
		{"metrics", http.MethodPost, "/v1/metrics", []string{"Content-Type", "application/x-protobuf"}, 404, "/v1/traces"},
		{"text", http.MethodPost, "/v1/traces", []string{"Content-Type", "text/plain"}, 415, "application/x-protobuf or application/json"},
		{"no type", http.MethodPost, "/v1/traces", nil, 415, "application/x-protobuf or application/json"},
		{"brotli", http.MethodPost, "/v1/traces", []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "br"}, 415, "gzip"},
	} {
		req := httptest.NewRequest(c.method, c.path, bytes.NewReader(body))
		for i := 0; i < len(c.h); i += 2 {
			req.Header.Set(c.h[i], c.h[i+1])
		}
		rec := httptest.NewRecorder()
		rc.ServeHTTP(rec, req)
		if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("%s: %d %q, want %d naming %q", c.name, rec.Code, rec.Body, c.code, c.want)
		}
		if c.code == 405 && rec.Header().Get("Allow") != "POST" {
			t.Errorf("%s: Allow %q", c.name, rec.Header().Get("Allow"))
		}
	}
	if n := count(t, st); n != 0 {
		t.Errorf("%d traces stored, want none", n)
	}
}

// Off loopback the receiver will not start without a token; with one,
// every request needs it (Bearer); without one, only loopback Host names
// are answered (through the real listener).
func TestTokenAndBind(t *testing.T) {
	st := openStore(t)
	for _, addr := range []string{"0.0.0.0:4318", "[::]:0", "192.0.2.1:4318", ":4318"} {
		_, err := collect.New(collect.Options{Addr: addr, Store: st})
		if err == nil || !strings.Contains(err.Error(), "not a loopback address") || !strings.Contains(err.Error(), collect.TokenEnv) {
			t.Errorf("New(%s) without a token: %v, want a refusal naming --token and %s", addr, err, collect.TokenEnv)
		}
		if _, err := collect.New(collect.Options{Addr: addr, Store: st, Token: "t0ken-123"}); err != nil {
			t.Errorf("New(%s) with a token: %v", addr, err)
		}
	}

	rc, _ := startReceiver(t, collect.Options{Store: st, Token: "t0ken-123"})
	body := protoBody(t, request(7, 2))
	for _, c := range []struct {
		auth string
		code int
	}{
		{"", 401}, {"Bearer wrong", 401}, {"t0ken-123", 401}, {"Bearer t0ken-12", 401}, {"Bearer t0ken-123", 200},
	} {
		h := []string{"Content-Type", "application/x-protobuf"}
		if c.auth != "" {
			h = append(h, "Authorization", c.auth)
		}
		rec := post(rc, body, h...)
		if rec.Code != c.code {
			t.Errorf("Authorization %q: %d, want %d: %s", c.auth, rec.Code, c.code, rec.Body)
		}
		if c.code == 401 && count(t, st) != 0 {
			t.Fatalf("Authorization %q: stored without the token", c.auth)
		}
	}
	if n := count(t, st); n != 2 {
		t.Errorf("%d traces stored, want 2", n)
	}

	// The Host guard, through ListenAndServe.
	rc, err := collect.New(collect.Options{Addr: "127.0.0.1:0", Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- rc.ListenAndServe(ctx, func(a string) { addrc <- a }) }()
	addr := <-addrc
	_, port, _ := net.SplitHostPort(addr)
	for host, want := range map[string]int{"evil.example:" + port: 421, "127.0.0.1:" + port: 200, "localhost:" + port: 200} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/traces", bytes.NewReader(protoBody(t, request(8, 1))))
		req.Host = host
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d: %s", host, resp.StatusCode, want, b)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// tracesStore is store.Traces under a name that does not hide its Traces
// method when embedded.
type tracesStore = store.Traces

// failingStore fails every PutTraces.
type failingStore struct {
	tracesStore
	mu    sync.Mutex
	calls int
}

func (f *failingStore) PutTraces(ctx context.Context, ts []record.Trace) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return 0, errors.New("database is locked")
}

// A store failure is answered 503 with Retry-After, so the exporter sends
// the request again (PutTraces stores nothing twice).
func TestStoreFailureIsRetryable(t *testing.T) {
	fs := &failingStore{}
	rc, _ := startReceiver(t, collect.Options{Store: fs})
	rec := post(rc, protoBody(t, request(9, 2)), "Content-Type", "application/x-protobuf")
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("%d (Retry-After %q), want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	if code, msg := statusMessage(t, rec); code != 14 || !strings.Contains(msg, "database is locked") || !strings.Contains(msg, "send it again") {
		t.Errorf("status %d %q", code, msg)
	}
	if fs.calls != 1 {
		t.Errorf("%d PutTraces calls, want 1 (the whole request in one)", fs.calls)
	}
}

// A request whose spans are all plain (no gen_ai.*) is answered 200 and
// stores nothing; the spans are counted as ignored.
func TestPlainSpansIgnored(t *testing.T) {
	fs := &failingStore{} // would fail if called
	rc, _ := startReceiver(t, collect.Options{Store: fs})
	rec := post(rc, protoBody(t, request(10, 0)), "Content-Type", "application/x-protobuf")
	if rec.Code != http.StatusOK || fs.calls != 0 {
		t.Fatalf("%d, %d PutTraces calls; want 200 and none", rec.Code, fs.calls)
	}
	if got := rc.Counts(); got.Ignored != 1 || got.Stored != 0 {
		t.Errorf("counts %+v", got)
	}
}

// blockingStore holds every PutTraces until released, counting how many
// are inside at once.
type blockingStore struct {
	tracesStore
	mu           sync.Mutex
	inside, most int
	entered      chan struct{}
	release      chan struct{}
}

func (b *blockingStore) PutTraces(ctx context.Context, ts []record.Trace) (int, error) {
	b.mu.Lock()
	b.inside++
	b.most = max(b.most, b.inside)
	b.mu.Unlock()
	b.entered <- struct{}{}
	<-b.release
	b.mu.Lock()
	b.inside--
	b.mu.Unlock()
	return len(ts), nil
}

// At most MaxInFlight requests are handled at once (their bodies read and
// held); the others wait their turn and are then stored.
func TestRequestsInFlightBounded(t *testing.T) {
	bs := &blockingStore{entered: make(chan struct{}, 10), release: make(chan struct{})}
	rc, url := startReceiver(t, collect.Options{Store: bs, MaxInFlight: 2})
	var once sync.Once
	release := func() { once.Do(func() { close(bs.release) }) }
	t.Cleanup(release) // before the server closes: a failed test must not hang on it
	codes := make(chan int, 5)
	for i := range 5 {
		body := protoBody(t, request(byte(20+i), 1))
		go func() {
			resp, err := http.Post(url+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	<-bs.entered
	<-bs.entered
	select {
	case <-bs.entered:
		t.Fatal("a third request reached the store while two were being handled")
	case <-time.After(200 * time.Millisecond):
	}
	release()
	for range 5 {
		if c := <-codes; c != http.StatusOK {
			t.Errorf("a request: %d", c)
		}
	}
	bs.mu.Lock() // the handlers' goroutines wrote it; the responses are no sync the race detector sees
	most := bs.most
	bs.mu.Unlock()
	if most != 2 || rc.Counts().Stored != 5 {
		t.Errorf("at most %d handled at once, %d stored; want 2 and 5", most, rc.Counts().Stored)
	}
}
