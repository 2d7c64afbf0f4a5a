package cli

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// assay collect, end to end: it creates the store, prints where it
// listens, receives an OpenTelemetry SDK's GenAI spans (current form and
// the older indexed form, with tool calls) with the token it was given,
// prices them from the spec, and on Ctrl-C stops with exit 0 and the count.
// The stored traces hold what the test emitted.
func TestCollectCommandStoresSDKSpans(t *testing.T) {
	dir := t.TempDir()
	specPath := copyQuickstart(t, dir)
	f, err := os.OpenFile(specPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("traces:\n  prices:\n    gpt-4o: {input_per_mtok: 2.5, output_per_mtok: 10}\n  redact: {detectors: [email]}\n")
	f.Close()
	db := filepath.Join(dir, "fresh", "assay.db") // absent: collect creates it

	pr, pw := io.Pipe()
	interrupts := make(chan os.Signal, 1)
	g := &Globals{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard, Now: time.Now, Interrupts: interrupts,
		Getenv: func(k string) string { return map[string]string{"ASSAY_COLLECT_TOKEN": "c0llect"}[k] }}
	done := make(chan int, 1)
	go func() {
		done <- Execute(context.Background(), []string{"collect", specPath, "--db", db, "--addr", "127.0.0.1:0"}, g)
		pw.Close()
	}()
	out := bufio.NewReader(pr)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("collect printed no address: %v (exit %d?)", err, <-done)
	}
	_, rest, _ := strings.Cut(line, "http://")
	url, _, _ := strings.Cut(rest, " ")
	if !strings.HasSuffix(url, "/v1/traces") || !strings.Contains(line, "1 model price(s)") {
		t.Fatalf("listening line %q", line)
	}
	tail := make(chan string, 1)
	go func() { b, _ := io.ReadAll(out); tail <- string(b) }()

	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL("http://"+url),
		otlptracehttp.WithHeaders(map[string]string{"Authorization": "Bearer c0llect"}), otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := tp.Tracer("cli-test")
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	_, cur := tr.Start(ctx, "chat gpt-4o", trace.WithTimestamp(start), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.request.model", "gpt-4o"),
		attribute.Int("gen_ai.usage.input_tokens", 1000),
		attribute.Int("gen_ai.usage.output_tokens", 100),
		attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Mail ann@example.com the report"}]}]`),
		attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"send_mail","arguments":{"to":"team"}}],"finish_reason":"tool_call"}]`),
	))
	cur.End(trace.WithTimestamp(start.Add(400 * time.Millisecond)))
	_, old := tr.Start(ctx, "chat", trace.WithTimestamp(start), trace.WithAttributes(
		attribute.String("gen_ai.system", "anthropic"),
		attribute.String("gen_ai.request.model", "claude-haiku"),
		attribute.String("gen_ai.prompt.0.role", "user"),
		attribute.String("gen_ai.prompt.0.content", "Weather?"),
		attribute.String("gen_ai.completion.0.tool_calls.0.name", "weather"),
		attribute.String("gen_ai.completion.0.tool_calls.0.arguments", `{"city":"Rome"}`),
	))
	old.End(trace.WithTimestamp(start.Add(time.Second)))
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	interrupts <- os.Interrupt
	if code := <-done; code != 0 {
		t.Fatalf("collect after Ctrl-C: exit %d", code)
	}
	if got := <-tail; !strings.Contains(got, "stopped: 2 trace(s) stored") || !strings.Contains(got, "1 value(s) redacted") || !strings.Contains(got, "1 unpriced") {
		// the email is redacted in the message; the attribute that held it
		// is not stored (the conversation is stored once)
		t.Errorf("closing count %q", got)
	}

	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := func(s trace.Span) string {
		return s.SpanContext().TraceID().String() + "-" + s.SpanContext().SpanID().String()
	}
	a, err := st.Trace(ctx, id(cur))
	if err != nil {
		t.Fatal(err)
	}
	if a.Model != "gpt-4o" || a.Provider != "openai" || !a.Priced || a.CostUSD < 0.0035-1e-12 || a.CostUSD > 0.0035+1e-12 || a.LatencyMS != 400 ||
		!reflect.DeepEqual(a.Input, []record.Message{{Role: "user", Content: "Mail [REDACTED:email] the report"}}) ||
		!reflect.DeepEqual(a.OutputToolCalls(), []record.ToolCall{{ID: "c1", Name: "send_mail", Arguments: `{"to":"team"}`}}) ||
		a.Redactions != 1 || strings.Contains(string(a.Attributes), "ann@example.com") || strings.Contains(string(a.Attributes), "gen_ai.input.messages") {
		t.Errorf("current-form trace: %+v\nattributes %s", a, a.Attributes)
	}
	b, err := st.Trace(ctx, id(old))
	if err != nil {
		t.Fatal(err)
	}
	if b.Model != "claude-haiku" || b.Provider != "anthropic" || b.Priced ||
		!reflect.DeepEqual(b.Input, []record.Message{{Role: "user", Content: "Weather?"}}) ||
		!reflect.DeepEqual(b.OutputToolCalls(), []record.ToolCall{{Name: "weather", Arguments: `{"city":"Rome"}`}}) {
		t.Errorf("indexed-form trace: %+v", b)
	}
}

// Off loopback without a token, or with a bad --max-body, collect is a
// usage error and creates no store.
func TestCollectCommandRefusals(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "assay.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:4318"}, "ASSAY_COLLECT_TOKEN"},
		{[]string{"--max-body", "lots"}, "--max-body"},
		{[]string{"--max-body", "2GiB"}, "between 1KiB and 1GiB"},
		{[]string{"-f", "x.yaml"}, "give the SPEC"},
	} {
		inv := runCLI(t, cliEnv{}, append([]string{"collect", "--db", db}, c.args...)...)
		if inv.code != ExitUsage || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("collect %v: exit %d, %q; want %d naming %q", c.args, inv.code, inv.stderr, ExitUsage, c.want)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused collect created the store: %v", err)
	}
}
