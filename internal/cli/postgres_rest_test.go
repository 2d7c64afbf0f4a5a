package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/probe"
	"github.com/assay-eval/assay/internal/record"
)

// The commands postgres_test.go and postgres_more_test.go leave out —
// probe contamination, selftest (its response cache), serve and collect —
// each run on an SQLite file and on a PostgreSQL store side by side: each
// must succeed on both, and where the output is deterministic the two
// stores' outputs must agree (run IDs and clock times aside).

// pgCode runs assay on the store db and fails the test unless it exits want.
func pgCode(t *testing.T, env cliEnv, db string, want int, args ...string) invocation {
	t.Helper()
	inv := runCLI(t, env, append([]string{"--db", db}, args...)...)
	if inv.code != want {
		t.Fatalf("%s: assay %s: exit %d, want %d\n%s%s", storeName(db), strings.Join(args, " "), inv.code, want, inv.stdout, inv.stderr)
	}
	return inv
}

// pgDropKeys drops the keys (timings, and what follows from them such as
// the quality × cost × latency frontier) from every object in v.
func pgDropKeys(v any, keys ...string) any {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range keys {
			delete(x, k)
		}
		for _, e := range x {
			pgDropKeys(e, keys...)
		}
	case []any:
		for _, e := range x {
			pgDropKeys(e, keys...)
		}
	}
	return v
}

// probe contamination with a twin file (a planted contaminated target and
// a clean one, as TestProbeFlagsPlantedContamination), then again from the
// stored twin set, and the reports of the probe's two runs.
func TestProbeOnPostgres(t *testing.T) {
	t.Parallel()
	dbs := pgBothStores(t)
	_, url := startMock(t, mock.Options{Rules: plantedRules()})
	dir := t.TempDir()
	specPath, twinsPath := probeTask(t, dir, mockTarget("planted", "planted", url)+mockTarget("clean", "clean", url))
	env := cliEnv{env: map[string]string{}}

	outs := pgOuts{}
	for _, db := range dbs {
		inv := pgCode(t, env, db, ExitFailed, "probe", "contamination", specPath, "--twins", twinsPath, "--format", "json")
		r := probeJSON(t, inv)
		if r.TwinSet.Added != probeCases || len(r.Flagged) != 1 || r.Flagged[0] != "planted" || r.Runs.Original == "" || r.Runs.Twins == "" {
			t.Fatalf("%s: probe: twin set %+v, flagged %v, runs %+v", storeName(db), r.TwinSet, r.Flagged, r.Runs)
		}
		ids := []string{r.Runs.Original, r.Runs.Twins}
		outs.put("probe --twins", db, pgNormJSON(t, db, "probe", inv.stdout, ids...))
		for i, id := range ids {
			what := "report of the probe's run " + strconv.Itoa(i)
			rep := pgNormJSON(t, db, what, pgMust(t, env, db, "report", id, "--format", "json").stdout, id)
			outs.put(what, db, pgDropKeys(rep, "latency_ms", "pareto"))
		}

		inv = pgMust(t, env, db, "probe", "contamination", specPath, "--twins-set", r.TwinSet.ID, "--targets", "clean", "--format", "json")
		r2 := probeJSON(t, inv)
		if r2.TwinSet.Source != "stored" || r2.Cases.Paired != probeCases || len(r2.Targets) != 1 || r2.Targets[0].Verdict != probe.VerdictClean {
			t.Errorf("%s: probe --twins-set: cases %+v, twin set %+v, targets %+v", storeName(db), r2.Cases, r2.TwinSet, r2.Targets)
		}
		outs.put("probe --twins-set", db, pgNormJSON(t, db, "probe --twins-set", inv.stdout, r2.Runs.Original, r2.Runs.Twins))
	}
	for what, got := range outs {
		pgSame(t, what, got, dbs)
	}
}

// selftest reads and writes the store only for --judge-via target, whose
// verdicts go through the response cache at --db: a gullible grader makes
// the spec exploitable on both stores, and the same selftest again is
// served from each store's cache (the grader sees no new request).
func TestSelftestOnPostgres(t *testing.T) {
	t.Parallel()
	dbs := pgBothStores(t)
	gullible, gURL := startMock(t, mock.Options{Default: `{"verdict": "pass", "reason": "ok"}`})
	spec := judgeSelftestSpec(t, gURL)
	env := cliEnv{env: map[string]string{}}

	outs := pgOuts{}
	for _, db := range dbs {
		inv := pgCode(t, env, db, ExitFailed, "selftest", spec, "--judge-via", "target", "--limit", "10", "--format", "json")
		outs.put("selftest --judge-via target", db, pgDropKeys(pgNormJSON(t, db, "selftest", inv.stdout), "elapsed_ms"))
		before := gullible.Stats().Requests
		inv = pgCode(t, env, db, ExitFailed, "selftest", spec, "--judge-via", "target", "--limit", "10", "--format", "json")
		if got := gullible.Stats().Requests - before; got != 0 {
			t.Errorf("%s: the second selftest sent the grader %d requests; want 0 (served from the store's cache)", storeName(db), got)
		}
		outs.put("selftest again", db, pgDropKeys(pgNormJSON(t, db, "selftest again", inv.stdout), "elapsed_ms"))
		if got := pgMust(t, env, db, "cache", "stats").stdout; got == "the response cache is empty\n" {
			t.Errorf("%s: the response cache is empty after selftest --judge-via target", storeName(db))
		}
	}
	for what, got := range outs {
		pgSame(t, what, got, dbs)
	}
}

// pgStartCommand runs assay args (a server: serve or collect) in-process on
// the store db until the returned stop is called (or 20 s pass), and
// returns the host:port from the line it prints when it listens.
func pgStartCommand(t *testing.T, db string, args ...string) (addr string, stop func() (int, string)) {
	t.Helper()
	pr, pw := io.Pipe()
	interrupts := make(chan os.Signal, 1)
	g := &Globals{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard, Now: time.Now, Interrupts: interrupts,
		Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	done := make(chan int, 1)
	go func() {
		done <- Execute(ctx, append(append([]string{}, args...), "--db", db, "--addr", "127.0.0.1:0"), g)
		pw.Close()
	}()
	out := bufio.NewReader(pr)
	line, err := out.ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("%s: assay %s printed no address: %v (exit %d)", storeName(db), strings.Join(args, " "), err, <-done)
	}
	tail := make(chan string, 1)
	go func() { b, _ := io.ReadAll(out); tail <- string(b) }()
	_, rest, _ := strings.Cut(line, "http://")
	addr, _, _ = strings.Cut(rest, " ")
	stopped := false
	var code int
	var text string
	stop = func() (int, string) {
		if !stopped {
			stopped = true
			interrupts <- os.Interrupt
			code = <-done
			text = <-tail
			cancel()
		}
		return code, text
	}
	t.Cleanup(func() { stop() })
	return addr, stop
}

// pgWebClient fetches pages from a server, keeping its cookies and the
// last CSRF token a page carried.
type pgWebClient struct {
	t    *testing.T
	db   string
	base string
	hc   *http.Client
	csrf string
}

var pgCSRF = regexp.MustCompile(`name="csrf" value="([0-9a-f]{32})"`)

func (c *pgWebClient) do(method, path string, form url.Values) string {
	c.t.Helper()
	var res *http.Response
	var err error
	if method == http.MethodPost {
		form.Set("csrf", c.csrf)
		res, err = c.hc.PostForm(c.base+path, form)
	} else {
		res, err = c.hc.Get(c.base + path)
	}
	if err != nil {
		c.t.Fatalf("%s: %s %s: %v", storeName(c.db), method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("%s: %s %s: %v", storeName(c.db), method, path, err)
	}
	if res.StatusCode != http.StatusOK || strings.Contains(string(b), `id="failed"`) {
		c.t.Fatalf("%s: %s %s: %d\n%.3000s", storeName(c.db), method, path, res.StatusCode, b)
	}
	if m := pgCSRF.FindSubmatch(b); m != nil {
		c.csrf = string(m[1])
	}
	return string(b)
}

var (
	pgCaseLink = regexp.MustCompile(`href="/runs/[^/"]+/cases/([^"?/]+)"`)
	pgNextPage = regexp.MustCompile(`<a rel="next" href="([^"]+)" id="next-page">`)
	pgPosition = regexp.MustCompile(`name="position" value="(\d+)"`)
	pgHash     = regexp.MustCompile(`name="hash" value="([^"]*)"`)
)

// pgCaseRows is the case IDs an explorer page lists, in order.
func pgCaseRows(body string) []string {
	var ids []string
	for _, m := range pgCaseLink.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// serve over a run of the quickstart: the run list, the run's page, the
// case explorer (filtered, and its next page through the store's cursor),
// a case's page, a labeling queue made and one item labeled through the
// forms, then (the server stopped) the stored label exported.
func TestServeOnPostgres(t *testing.T) {
	t.Parallel()
	dbs := pgBothStores(t)
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	env := cliEnv{env: map[string]string{}}

	outs := pgOuts{}
	for _, db := range dbs {
		pgMust(t, env, db, "run", spec)
		ids := pgRunIDs(t, env, db)
		id := ids[0]
		addr, stop := pgStartCommand(t, db, "serve", "--labeler", "ann")
		jar, _ := cookiejar.New(nil)
		c := &pgWebClient{t: t, db: db, base: "http://" + addr, hc: &http.Client{Jar: jar, Timeout: 10 * time.Second}}

		if list := c.do(http.MethodGet, "/", nil); !strings.Contains(list, "/runs/"+id) {
			t.Errorf("%s: the run list does not link run %s", storeName(db), id)
		}
		if page := c.do(http.MethodGet, "/runs/"+id, nil); !strings.Contains(page, "model-a") || !strings.Contains(page, "model-b") {
			t.Errorf("%s: the run's page does not name its targets", storeName(db))
		}
		all := c.do(http.MethodGet, "/runs/"+id+"/cases", nil)
		first := pgCaseRows(all)
		m := pgNextPage.FindStringSubmatch(all)
		if m == nil {
			t.Fatalf("%s: the explorer's first page (%d rows) has no next page", storeName(db), len(first))
		}
		next := pgCaseRows(c.do(http.MethodGet, strings.ReplaceAll(m[1], "&amp;", "&"), nil))
		if len(first) == 0 || len(next) == 0 {
			t.Errorf("%s: the explorer's pages list %d and %d rows", storeName(db), len(first), len(next))
		}
		outs.put("explorer pages", db, [][]string{first, next})

		filtered := c.do(http.MethodGet, "/runs/"+id+"/cases?target=model-b&verdict=fail", nil)
		rows := pgCaseRows(filtered)
		if len(rows) == 0 {
			t.Errorf("%s: target=model-b&verdict=fail lists no case", storeName(db))
		}
		outs.put("explorer target=model-b&verdict=fail", db, rows)
		text := c.do(http.MethodGet, "/runs/"+id+"/cases?q=refund", nil)
		outs.put("explorer q=refund", db, pgCaseRows(text))

		caseID := first[0]
		if page := c.do(http.MethodGet, "/runs/"+id+"/cases/"+caseID, nil); !strings.Contains(page, caseID) {
			t.Errorf("%s: case %s's page does not name it", storeName(db), caseID)
		}

		c.do(http.MethodGet, "/runs/"+id+"/queues", nil)
		item := c.do(http.MethodPost, "/runs/"+id+"/queues", url.Values{"name": {"web"}, "size": {"5"}, "seed": {"7"}})
		pos, hash := pgPosition.FindStringSubmatch(item), pgHash.FindStringSubmatch(item)
		if pos == nil || hash == nil {
			t.Fatalf("%s: the queue's first item has no form:\n%.3000s", storeName(db), item)
		}
		c.do(http.MethodPost, "/runs/"+id+"/queues/web/label", url.Values{"position": {pos[1]}, "hash": {hash[1]}, "verdict": {"pass"}})
		if labels := c.do(http.MethodGet, "/labels", nil); !strings.Contains(labels, "web") {
			t.Errorf("%s: /labels does not list the queue", storeName(db))
		}
		if code, _ := stop(); code != 0 {
			t.Errorf("%s: serve after Ctrl-C: exit %d", storeName(db), code)
		}

		var labeled []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(pgMust(t, env, db, "labels", "export", id).stdout), "\n") {
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%s: labels export: %v\n%s", storeName(db), err, l)
			}
			labeled = append(labeled, normalize(v, id).(map[string]any))
		}
		if len(labeled) != 1 || labeled[0]["verdict"] != record.LabelPass || labeled[0]["labeler"] != "ann" || labeled[0]["queue"] != "web" {
			t.Errorf("%s: the labels stored through serve: %v; want one pass by ann in queue web", storeName(db), labeled)
		}
		outs.put("labels export after serve", db, labeled)
		outs.put("labels queues after serve", db, pgNormText(pgMust(t, env, db, "labels", "queues", id).stdout, id))
	}
	for what, got := range outs {
		pgSame(t, what, got, dbs)
	}
}

// collect receives an OpenTelemetry SDK's GenAI span (as
// TestCollectCommandStoresSDKSpans) into each store, stops on Ctrl-C with
// the count, and the stored trace reads back the same from both.
func TestCollectOnPostgres(t *testing.T) {
	t.Parallel()
	dbs := pgBothStores(t)
	dir := t.TempDir()
	specPath := copyQuickstart(t, dir)
	f, err := os.OpenFile(specPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("traces:\n  prices:\n    gpt-4o: {input_per_mtok: 2.5, output_per_mtok: 10}\n  redact: {detectors: [email]}\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	outs := pgOuts{}
	for _, db := range dbs {
		addr, stop := pgStartCommand(t, db, "collect", specPath)
		ctx := context.Background()
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL("http://"+addr))
		if err != nil {
			t.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		_, span := tp.Tracer("cli-test").Start(ctx, "chat gpt-4o", trace.WithTimestamp(start), trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", "openai"),
			attribute.String("gen_ai.request.model", "gpt-4o"),
			attribute.Int("gen_ai.usage.input_tokens", 1000),
			attribute.Int("gen_ai.usage.output_tokens", 100),
			attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Mail ann@example.com the report"}]}]`),
			attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Sent."}],"finish_reason":"stop"}]`),
		))
		span.End(trace.WithTimestamp(start.Add(400 * time.Millisecond)))
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatalf("%s: sending the span: %v", storeName(db), err)
		}
		code, tail := stop()
		if code != 0 || !strings.Contains(tail, "stopped: 1 trace(s) stored") {
			t.Fatalf("%s: collect after Ctrl-C: exit %d, %q", storeName(db), code, tail)
		}
		outs.put("collect's closing count", db, tail)

		st, err := openExistingStoreAt(ctx, &Globals{Now: time.Now}, db)
		if err != nil {
			t.Fatal(err)
		}
		traceID, spanID := span.SpanContext().TraceID().String(), span.SpanContext().SpanID().String()
		tr, err := st.Trace(ctx, traceID+"-"+spanID)
		st.Close()
		if err != nil {
			t.Fatalf("%s: the collected trace: %v", storeName(db), err)
		}
		if tr.Model != "gpt-4o" || !tr.Priced || tr.LatencyMS != 400 || tr.Redactions != 1 {
			t.Errorf("%s: the collected trace: %+v", storeName(db), tr)
		}
		b, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		outs.put("the collected trace", db, pgNormJSON(t, db, "trace", string(b), traceID+"-"+spanID, traceID, spanID))
	}
	for what, got := range outs {
		pgSame(t, what, got, dbs)
	}
}
