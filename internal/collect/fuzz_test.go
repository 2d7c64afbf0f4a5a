package collect_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assay-eval/assay/internal/collect"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/traces"
)

// recordingStore keeps every PutTraces call.
type recordingStore struct {
	tracesStore
	mu    sync.Mutex
	calls [][]record.Trace
}

func (r *recordingStore) PutTraces(ctx context.Context, ts []record.Trace) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, ts)
	return len(ts), nil
}

// richRequest has what the mapping reads in every form: structured
// messages, events, a NaN, bytes, a deep value, repeated keys.
func richRequest() ptraceotlp.ExportRequest {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bot")
	ss := rs.ScopeSpans().AppendEmpty()
	s := ss.Spans().AppendEmpty()
	s.SetTraceID(pcommon.TraceID{1, 2, 3})
	s.SetSpanID(pcommon.SpanID{4, 5, 6})
	a := s.Attributes()
	a.PutStr("gen_ai.provider.name", "openai")
	in := a.PutEmptySlice("gen_ai.input.messages")
	m := in.AppendEmpty().SetEmptyMap()
	m.PutStr("role", "user")
	p := m.PutEmptySlice("parts").AppendEmpty().SetEmptyMap()
	p.PutStr("type", "text")
	p.PutStr("content", "hi")
	tc := m.PutEmptySlice("parts").AppendEmpty().SetEmptyMap()
	tc.PutStr("type", "tool_call")
	tc.PutEmptyMap("arguments").PutDouble("x", math.NaN())
	a.PutDouble("weird", math.Inf(1))
	a.PutEmptyBytes("raw").FromRaw([]byte{0, 1, 2})
	v := a.PutEmptySlice("deep")
	for range 100 {
		v = v.AppendEmpty().SetEmptySlice()
	}
	a.PutStr("gen_ai.prompt.0.content", "q")
	a.PutStr("gen_ai.completion.3.tool_calls.9.arguments", "{}")
	e := s.Events().AppendEmpty()
	e.SetName("gen_ai.choice")
	e.Attributes().PutStr("gen_ai.event.content", `{"index":1,"message":{"content":[{"type":"text","text":"yo"}]}}`)
	e = s.Events().AppendEmpty()
	e.SetName("gen_ai.tool.message")
	e.Attributes().PutStr("content", "42")
	e.Attributes().PutStr("id", "c1")
	return ptraceotlp.NewExportRequestFromTraces(td)
}

// FuzzOTLP posts arbitrary bytes as an export request (protobuf or JSON).
// The receiver never panics; it answers 200 exactly when the bytes decode
// and every GenAI span has its IDs, and then stores all of the request's
// GenAI spans in one call, each a trace the store can hold; otherwise it
// stores nothing.
func FuzzOTLP(f *testing.F) {
	for _, r := range []ptraceotlp.ExportRequest{request(1, 3), richRequest(), ptraceotlp.NewExportRequest()} {
		b, _ := r.MarshalProto()
		f.Add(b, false)
		j, _ := r.MarshalJSON()
		f.Add(j, true)
	}
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"","spanId":"","attributes":[{"key":"gen_ai.x","value":{}}]}]}]}]}`), true)
	f.Fuzz(func(t *testing.T, body []byte, asJSON bool) {
		st := &recordingStore{}
		rc, err := collect.New(collect.Options{Store: st, Addr: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		ct := "application/x-protobuf"
		if asJSON {
			ct = "application/json"
		}
		rec := post(rc, body, "Content-Type", ct)

		// What the request holds, read independently.
		req := ptraceotlp.NewExportRequest()
		if asJSON {
			err = req.UnmarshalJSON(body)
		} else {
			err = req.UnmarshalProto(body)
		}
		genAI, badID := 0, false
		if err == nil {
			for _, rs := range req.Traces().ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, s := range ss.Spans().All() {
						if traces.IsGenAI(s) {
							genAI++
							badID = badID || s.TraceID().IsEmpty() || s.SpanID().IsEmpty()
						}
					}
				}
			}
		}
		if err != nil || badID {
			if rec.Code != http.StatusBadRequest || len(st.calls) != 0 {
				t.Fatalf("decode error %v, bad ID %v: answered %d with %d store calls, want 400 and none", err, badID, rec.Code, len(st.calls))
			}
			return
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("a request that decodes: %d %s", rec.Code, rec.Body)
		}
		switch {
		case genAI == 0 && len(st.calls) != 0:
			t.Fatalf("no GenAI span, %d store calls", len(st.calls))
		case genAI > 0 && (len(st.calls) != 1 || len(st.calls[0]) != genAI):
			t.Fatalf("%d GenAI spans, store calls %d (first of %d)", genAI, len(st.calls), lenFirst(st.calls))
		}
		for _, call := range st.calls {
			for _, tr := range call {
				if !json.Valid(tr.Attributes) || !json.Valid(tr.Resource) {
					t.Fatalf("trace %s: attributes or resource not JSON: %s %s", tr.ID, tr.Attributes, tr.Resource)
				}
				if len(tr.ID) != 32+1+16 || !strings.Contains(tr.ID, "-") || tr.Input == nil || tr.Output == nil {
					t.Fatalf("trace %+v", tr)
				}
				if math.IsNaN(tr.LatencyMS) || tr.LatencyMS < 0 || tr.InputTokens < 0 || tr.OutputTokens < 0 {
					t.Fatalf("trace %s: latency %v, tokens %d %d", tr.ID, tr.LatencyMS, tr.InputTokens, tr.OutputTokens)
				}
			}
		}
	})
}

func lenFirst(calls [][]record.Trace) int {
	if len(calls) == 0 {
		return 0
	}
	return len(calls[0])
}
