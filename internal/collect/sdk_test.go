package collect_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/assay-eval/assay/internal/collect"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// startReceiver serves a receiver on 127.0.0.1:0 and returns its URL.
func startReceiver(t *testing.T, o collect.Options) (*collect.Receiver, string) {
	t.Helper()
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	rc, err := collect.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rc.Handler())
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

// emitted is a span the test emitted and the trace it must be stored as.
type emitted struct {
	span trace.SpanContext
	want record.Trace
	// attrs are attributes the stored trace must hold, as JSON decodes
	// them; a nil value one it must not hold (the conversation it carried
	// is the trace's, stored once).
	attrs map[string]any
}

var (
	t0     = time.Date(2026, 11, 30, 9, 15, 0, 123456000, time.UTC)
	prices = map[string]spec.Price{"gpt-4o": {InputPerMTok: 2.5, OutputPerMTok: 10}}
)

// emitGenAI emits, through the OpenTelemetry SDK, GenAI spans in the
// current attribute form, the older indexed form and the event-based form
// (each with tool calls), a failed call and a plain HTTP span, and returns
// what each GenAI span must be stored as.
func emitGenAI(t *testing.T, tp *sdktrace.TracerProvider) []emitted {
	t.Helper()
	tr := tp.Tracer("assay-test")
	ctx := context.Background()
	var out []emitted

	// 1. The current form (semantic conventions 1.37 on): the messages as
	// JSON strings of parts.
	input := `[{"role":"user","parts":[{"type":"text","content":"What is the weather in Paris?"}]},` +
		`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris","unit":"c"}}]},` +
		`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"rainy, 14 degrees"}]}]`
	output := `[{"role":"assistant","parts":[{"type":"text","content":"It is rainy in Paris."},` +
		`{"type":"tool_call","id":"call_2","name":"book_umbrella","arguments":"{\"size\": \"large\"}"}],"finish_reason":"tool_call"}]`
	system := `[{"type":"text","content":"You are a weather bot."},{"type":"text","content":"Answer briefly."}]`
	_, s := tr.Start(ctx, "chat gpt-4o", trace.WithTimestamp(t0), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.request.model", "gpt-4o"),
		attribute.String("gen_ai.response.model", "gpt-4o-2024-08-06"),
		attribute.Int("gen_ai.usage.input_tokens", 1200),
		attribute.Int("gen_ai.usage.output_tokens", 300),
		attribute.String("gen_ai.input.messages", input),
		attribute.String("gen_ai.output.messages", output),
		attribute.String("gen_ai.system_instructions", system),
		attribute.StringSlice("gen_ai.response.finish_reasons", []string{"tool_call"}),
		attribute.Float64("gen_ai.request.temperature", 0.25),
		attribute.String("app.route", "/weather"),
		attribute.Bool("app.beta", true),
	))
	s.End(trace.WithTimestamp(t0.Add(1500 * time.Millisecond)))
	out = append(out, emitted{span: s.SpanContext(), want: record.Trace{
		Operation: "chat", Provider: "openai", Model: "gpt-4o", ResponseModel: "gpt-4o-2024-08-06",
		InputTokens: 1200, OutputTokens: 300, Time: t0, LatencyMS: 1500,
		CostUSD: 1200*2.5/1e6 + 300*10/1e6, Priced: true,
		System: "You are a weather bot.\nAnswer briefly.",
		Input: []record.Message{
			{Role: "user", Content: "What is the weather in Paris?"},
			{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris","unit":"c"}`}}},
			{Role: "tool", ToolCallID: "call_1", Content: "rainy, 14 degrees"},
		},
		Output: []record.Message{{Role: "assistant", Content: "It is rainy in Paris.",
			ToolCalls: []record.ToolCall{{ID: "call_2", Name: "book_umbrella", Arguments: `{"size": "large"}`}}}},
		FinishReason: "tool_call",
	}, attrs: map[string]any{
		"gen_ai.usage.input_tokens": 1200.0, "gen_ai.request.temperature": 0.25, "app.route": "/weather", "app.beta": true,
		"gen_ai.response.finish_reasons": []any{"tool_call"},
		"gen_ai.input.messages":          nil, "gen_ai.output.messages": nil, "gen_ai.system_instructions": nil,
	}})

	// 2. The older indexed form (OpenLLMetry's): gen_ai.system, prompt and
	// completion tokens, gen_ai.prompt.N / gen_ai.completion.N with tool
	// calls, and a tool message answering an earlier call.
	start := t0.Add(time.Minute)
	_, s = tr.Start(ctx, "anthropic.chat", trace.WithTimestamp(start), trace.WithAttributes(
		attribute.String("gen_ai.system", "anthropic"),
		attribute.String("gen_ai.request.model", "claude-sonnet-4"),
		attribute.Int("gen_ai.usage.prompt_tokens", 80),
		attribute.Int("gen_ai.usage.completion_tokens", 25),
		attribute.String("gen_ai.prompt.0.role", "system"),
		attribute.String("gen_ai.prompt.0.content", "You book flights."),
		attribute.String("gen_ai.prompt.1.role", "user"),
		attribute.String("gen_ai.prompt.1.content", "Find a flight to Oslo and a hotel."),
		attribute.String("gen_ai.prompt.2.role", "assistant"),
		attribute.String("gen_ai.prompt.2.tool_calls.0.id", "toolu_a"),
		attribute.String("gen_ai.prompt.2.tool_calls.0.name", "search_flights"),
		attribute.String("gen_ai.prompt.2.tool_calls.0.arguments", `{"to":"OSL"}`),
		attribute.String("gen_ai.prompt.3.role", "tool"),
		attribute.String("gen_ai.prompt.3.tool_call_id", "toolu_a"),
		attribute.String("gen_ai.prompt.3.content", `[{"flight":"SK 4035"}]`),
		attribute.String("gen_ai.completion.0.role", "assistant"),
		attribute.String("gen_ai.completion.0.content", "Booking both."),
		attribute.String("gen_ai.completion.0.finish_reason", "tool_use"),
		attribute.String("gen_ai.completion.0.tool_calls.0.id", "toolu_b"),
		attribute.String("gen_ai.completion.0.tool_calls.0.name", "book_flight"),
		attribute.String("gen_ai.completion.0.tool_calls.0.arguments", `{"flight":"SK 4035"}`),
		attribute.String("gen_ai.completion.0.tool_calls.1.id", "toolu_c"),
		attribute.String("gen_ai.completion.0.tool_calls.1.name", "book_hotel"),
		attribute.String("gen_ai.completion.0.tool_calls.1.arguments", `{"city":"Oslo","nights":2}`),
	))
	s.End(trace.WithTimestamp(start.Add(750 * time.Millisecond)))
	out = append(out, emitted{span: s.SpanContext(), want: record.Trace{
		Provider: "anthropic", Model: "claude-sonnet-4", InputTokens: 80, OutputTokens: 25, Time: start, LatencyMS: 750,
		System: "You book flights.",
		Input: []record.Message{
			{Role: "user", Content: "Find a flight to Oslo and a hotel."},
			{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "toolu_a", Name: "search_flights", Arguments: `{"to":"OSL"}`}}},
			{Role: "tool", ToolCallID: "toolu_a", Content: `[{"flight":"SK 4035"}]`},
		},
		Output: []record.Message{{Role: "assistant", Content: "Booking both.", ToolCalls: []record.ToolCall{
			{ID: "toolu_b", Name: "book_flight", Arguments: `{"flight":"SK 4035"}`},
			{ID: "toolu_c", Name: "book_hotel", Arguments: `{"city":"Oslo","nights":2}`},
		}}},
		FinishReason: "tool_use",
	}, attrs: map[string]any{"gen_ai.usage.prompt_tokens": 80.0, "gen_ai.completion.0.finish_reason": "tool_use",
		"gen_ai.prompt.1.content": nil, "gen_ai.prompt.2.tool_calls.0.arguments": nil, "gen_ai.completion.0.tool_calls.1.name": nil}})

	// 3. The event-based form: the messages as span events, a choice with
	// a tool call.
	start = t0.Add(2 * time.Minute)
	_, s = tr.Start(ctx, "chat gpt-4o-mini", trace.WithTimestamp(start), trace.WithAttributes(
		attribute.String("gen_ai.system", "openai"),
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.request.model", "gpt-4o-mini"),
		attribute.Int("gen_ai.usage.input_tokens", 40),
		attribute.Int("gen_ai.usage.output_tokens", 12),
	))
	s.AddEvent("gen_ai.system.message", trace.WithAttributes(attribute.String("content", "You convert units.")))
	s.AddEvent("gen_ai.user.message", trace.WithAttributes(attribute.String("content", "How many feet is 3 m?")))
	s.AddEvent("gen_ai.choice", trace.WithAttributes(
		attribute.Int("index", 0),
		attribute.String("finish_reason", "tool_calls"),
		attribute.String("message", `{"role":"assistant","content":"","tool_calls":[{"id":"call_x","type":"function","function":{"name":"convert","arguments":"{\"m\":3,\"to\":\"ft\"}"}}]}`),
	))
	s.End(trace.WithTimestamp(start.Add(200 * time.Millisecond)))
	out = append(out, emitted{span: s.SpanContext(), want: record.Trace{
		Operation: "chat", Provider: "openai", Model: "gpt-4o-mini", InputTokens: 40, OutputTokens: 12, Time: start, LatencyMS: 200,
		System:       "You convert units.",
		Input:        []record.Message{{Role: "user", Content: "How many feet is 3 m?"}},
		Output:       []record.Message{{Role: "assistant", ToolCalls: []record.ToolCall{{ID: "call_x", Name: "convert", Arguments: `{"m":3,"to":"ft"}`}}}},
		FinishReason: "tool_calls",
	}, attrs: map[string]any{"gen_ai.system": "openai"}})

	// 4. A failed call: error.type and an error status.
	start = t0.Add(3 * time.Minute)
	_, s = tr.Start(ctx, "chat gpt-4o", trace.WithTimestamp(start), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.request.model", "gpt-4o"),
		attribute.String("error.type", "timeout"),
		attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Hello?"}]}]`),
	))
	s.SetStatus(codes.Error, "deadline exceeded")
	s.End(trace.WithTimestamp(start.Add(30 * time.Second)))
	out = append(out, emitted{span: s.SpanContext(), want: record.Trace{
		Operation: "chat", Provider: "openai", Model: "gpt-4o", Time: start, LatencyMS: 30000, Priced: true,
		Input: []record.Message{{Role: "user", Content: "Hello?"}}, Output: []record.Message{}, ErrorType: "timeout",
	}, attrs: map[string]any{"error.type": "timeout"}})

	// 5. A plain HTTP span: not a GenAI span, not stored.
	_, s = tr.Start(ctx, "GET /health", trace.WithAttributes(attribute.String("http.request.method", "GET"), attribute.Int("http.response.status_code", 200)))
	s.End()
	return out
}

// The OpenTelemetry SDK's OTLP/HTTP exporter sends GenAI spans of every
// form to the receiver — protobuf, protobuf with gzip, JSON — and the
// stored traces are what was emitted: IDs, model, tokens, latency, cost,
// the conversation with its tool calls, every attribute and the resource.
// The plain HTTP span is counted, not stored.
func TestSDKSpansStoredAsEmitted(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []otlptracehttp.Option
	}{
		{"protobuf", nil},
		{"protobuf gzip", []otlptracehttp.Option{otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}},
		{"json", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := openStore(t)
			received := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			rc, url := startReceiver(t, collect.Options{Store: st, Prices: prices, Now: func() time.Time { return received }})
			ctx := context.Background()
			exp, err := otlptracehttp.New(ctx, append([]otlptracehttp.Option{otlptracehttp.WithEndpointURL(url + "/v1/traces")}, c.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			res := resource.NewSchemaless(attribute.String("service.name", "weather-bot"), attribute.String("deployment.environment", "test"))
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
			spans := emitGenAI(t, tp)
			if err := tp.Shutdown(ctx); err != nil { // flushes: an export error fails here
				t.Fatal(err)
			}

			n, err := st.CountTraces(ctx, store.TraceFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(len(spans)) {
				t.Fatalf("stored %d traces, want %d", n, len(spans))
			}
			if got := rc.Counts(); got.Stored != int64(len(spans)) || got.Ignored != 1 || got.Refused != 0 {
				t.Errorf("counts %+v, want %d stored, 1 ignored, none refused", got, len(spans))
			}
			for _, e := range spans {
				id := e.span.TraceID().String() + "-" + e.span.SpanID().String()
				got, err := st.Trace(ctx, id)
				if err != nil {
					t.Fatalf("trace %s: %v", id, err)
				}
				want := e.want
				want.ID, want.TraceID, want.SpanID, want.Source, want.Received = id, e.span.TraceID().String(), e.span.SpanID().String(), "otlp", received
				checkTrace(t, got, want, e.attrs)
			}
		})
	}
}

// checkTrace compares a stored trace with the one emitted: every field, the
// attributes the test set (typed) and the resource.
func checkTrace(t *testing.T, got *record.Trace, want record.Trace, attrs map[string]any) {
	t.Helper()
	var a, r map[string]any
	if err := json.Unmarshal(got.Attributes, &a); err != nil {
		t.Errorf("%s: attributes are not a JSON object: %v\n%s", want.ID, err, got.Attributes)
	}
	if err := json.Unmarshal(got.Resource, &r); err != nil {
		t.Errorf("%s: resource is not a JSON object: %v\n%s", want.ID, err, got.Resource)
	}
	for k, v := range attrs {
		if _, held := a[k]; v == nil && held {
			t.Errorf("%s: attribute %s is stored though the trace's conversation holds it", want.ID, k)
		} else if v != nil && !reflect.DeepEqual(a[k], v) {
			t.Errorf("%s: attribute %s = %#v, want %#v", want.ID, k, a[k], v)
		}
	}
	if r["service.name"] != "weather-bot" || r["deployment.environment"] != "test" {
		t.Errorf("%s: resource %s, want service.name and deployment.environment", want.ID, got.Resource)
	}
	g := *got
	g.Attributes, g.Resource = nil, nil
	if !g.Time.Equal(want.Time) {
		t.Errorf("%s: time %v, want %v", want.ID, g.Time, want.Time)
	}
	if !g.Received.Equal(want.Received) {
		t.Errorf("%s: received %v, want %v", want.ID, g.Received, want.Received)
	}
	g.Time, g.Received = want.Time, want.Received
	if diff := almost(g.CostUSD, want.CostUSD); !diff {
		t.Errorf("%s: cost %g, want %g", want.ID, g.CostUSD, want.CostUSD)
	}
	g.CostUSD = want.CostUSD
	if !reflect.DeepEqual(g, want) {
		gj, _ := json.MarshalIndent(g, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("%s: stored\n%s\nwant\n%s", want.ID, gj, wj)
	}
}

func almost(a, b float64) bool {
	d := a - b
	return d < 1e-12 && d > -1e-12
}
