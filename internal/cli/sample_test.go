package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/sample"
	"github.com/assay-eval/assay/internal/serve"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// fixtureTraces are the traces testdata/sample_rates.py describes: per
// model, n traces five minutes apart from 2026-11-23, whose output is JSON
// except by a rule per model (and a failed call every 50th alpha trace),
// plus traces outside the window that no sample may draw.
func fixtureTraces() []record.Trace {
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	var ts []record.Trace
	for _, m := range []struct {
		name string
		n    int
		fail func(int) bool
	}{
		{"alpha", 240, func(i int) bool { return i%9 == 0 }},
		{"beta", 45, func(i int) bool { return i%3 == 0 }},
		{"gamma", 12, func(i int) bool { return i%4 == 1 }},
	} {
		for i := range m.n {
			t := record.Trace{
				ID: fmt.Sprintf("%s-%04d", m.name, i), TraceID: fmt.Sprintf("%032x", i), Source: "otlp",
				Time: t0.Add(time.Duration(i) * 5 * time.Minute), LatencyMS: 100 + float64(i),
				Operation: "chat", Provider: "openai", Model: m.name, ResponseModel: m.name + "-2026",
				InputTokens: 10, OutputTokens: 5, CostUSD: 0.001,
				Input:      []record.Message{{Role: "user", Content: fmt.Sprintf("question %d", i)}},
				Attributes: []byte(`{"route":"/chat"}`), Resource: []byte(`{}`),
			}
			out := fmt.Sprintf(`{"ok": true, "n": %d}`, i)
			switch {
			case m.name == "alpha" && i%50 == 7:
				out, t.ErrorType = "", "500"
			case m.fail(i):
				out = `Sure! {"ok": tru`
			}
			if out != "" {
				t.Output = []record.Message{{Role: "assistant", Content: out}}
			}
			ts = append(ts, t)
		}
	}
	for i := range 5 {
		ts = append(ts, record.Trace{ID: fmt.Sprintf("alpha-late-%d", i), Model: "alpha", Source: "otlp",
			Time: t0.Add(8 * 24 * time.Hour), Output: []record.Message{{Role: "assistant", Content: "{}"}}})
	}
	return ts
}

// traceStore makes a store holding the fixture's traces, and a spec whose
// scorers are one that needs an expected value (skipped) and two that do
// not.
func traceStore(t *testing.T) (db, specPath string) {
	t.Helper()
	dir := t.TempDir()
	db = filepath.Join(dir, ".assay", "assay.db")
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := st.PutTraces(context.Background(), fixtureTraces()); err != nil || n != 302 {
		t.Fatalf("stored %d traces: %v", n, err)
	}
	st.Close()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), `{"question":"q","answer":"a"}`+"\n")
	specPath = filepath.Join(dir, "assay.yaml")
	writeFile(t, specPath, `name: traffic
dataset: {path: cases.jsonl, expected: answer}
prompt: {user: "{{.question}}"}
targets:
  - {name: alpha, provider: replay, replay: {path: cases.jsonl, join: question, output: answer}}
scorers:
  - {name: exact, type: equals, primary: true}
  - {name: json, type: is_json}
  - {name: short, type: max_length, max: 40}
`)
	return db, specPath
}

type sampleRatesGolden struct {
	Seed   uint64
	Per    int
	Level  float64
	Strata []struct {
		Key        string
		Population int
		Drawn      []string
	}
	Rates []struct {
		Model                        string
		Rate, SE, Lo, Hi, Unweighted float64
		N                            int
		Population                   float64
	}
}

// The must-show: traces stored, a stratified sample drawn through the
// command line, scored by score-traces; the sample's draws, the weighted
// rates and their intervals equal testdata/sample_rates.py's independent
// computation (its own draw by the documented hash, Python's JSON check,
// numpy and scipy).
func TestSampleScoreTracesEndToEnd(t *testing.T) {
	var g sampleRatesGolden
	if err := json.Unmarshal([]byte(readFileT(t, "testdata/sample_rates.json")), &g); err != nil {
		t.Fatal(err)
	}
	db, specPath := traceStore(t)
	inv := runCLI(t, cliEnv{}, "sample", "--since", "2026-11-23", "--until", "2026-11-30", "--per", fmt.Sprintf("model=%d", g.Per),
		"--seed", fmt.Sprint(g.Seed), "--name", "week48", "--format", "json", "--db", db)
	if inv.code != 0 {
		t.Fatalf("sample: exit %d: %s", inv.code, inv.stderr)
	}
	var smp record.Sample
	if err := json.Unmarshal([]byte(inv.stdout), &smp); err != nil {
		t.Fatalf("sample --format json: %v\n%s", err, inv.stdout)
	}
	if smp.ID != "week48" || smp.Seed != g.Seed || len(smp.Strata) != len(g.Strata) {
		t.Fatalf("sample %s seed %d strata %+v", smp.ID, smp.Seed, smp.Strata)
	}
	for i, want := range g.Strata {
		got := smp.Strata[i]
		if got.Key != want.Key || got.Population != want.Population || got.Drawn != len(want.Drawn) {
			t.Errorf("stratum %+v, want %s of %d, %d drawn", got, want.Key, want.Population, len(want.Drawn))
		}
		var drawn []string
		for _, it := range smp.Items {
			if it.Stratum == want.Key {
				drawn = append(drawn, it.TraceID)
				if w := float64(want.Population) / float64(len(want.Drawn)); it.Weight != w {
					t.Errorf("%s weighs %g, want %g", it.TraceID, it.Weight, w)
				}
			}
		}
		if !slices.Equal(drawn, want.Drawn) {
			t.Errorf("%s drew\n%v\nthe reference draw is\n%v", want.Key, drawn, want.Drawn)
		}
	}

	inv = runCLI(t, cliEnv{}, "score-traces", specPath, "--sample", "week48", "--format", "json", "--db", db)
	if inv.code != 0 {
		t.Fatalf("score-traces: exit %d: %s", inv.code, inv.stderr)
	}
	var rep sample.ScoreReport
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatalf("score-traces --format json: %v\n%s", err, inv.stdout)
	}
	if rep.Status != "complete" || rep.Traces != 52 || !slices.Equal(rep.Scorers, []string{"json", "short"}) || rep.Primary != "json" {
		t.Errorf("status %s, %d traces, scorers %v, primary %s", rep.Status, rep.Traces, rep.Scorers, rep.Primary)
	}
	if len(rep.Skipped) != 1 || !strings.HasPrefix(rep.Skipped[0], "exact: equals compares with an expected value") {
		t.Errorf("skipped %q", rep.Skipped)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }
	found := 0
	for _, e := range rep.Rates {
		if e.Scorer != "json" {
			continue
		}
		for _, w := range g.Rates {
			if w.Model != e.Model {
				continue
			}
			found++
			if !near(e.Rate, w.Rate) || !near(e.SE, w.SE) || !near(e.Lo, w.Lo) || !near(e.Hi, w.Hi) ||
				!near(e.Unweighted, w.Unweighted) || e.N != w.N || e.Population != w.Population {
				t.Errorf("%s: rate %.12g se %.12g [%.12g, %.12g] unweighted %g n %d population %g\nwant rate %.12g se %.12g [%.12g, %.12g] unweighted %g n %d population %g",
					e.Model, e.Rate, e.SE, e.Lo, e.Hi, e.Unweighted, e.N, e.Population, w.Rate, w.SE, w.Lo, w.Hi, w.Unweighted, w.N, w.Population)
			}
		}
	}
	if found != len(g.Rates) {
		t.Errorf("%d of the %d reference rates were printed: %+v", found, len(g.Rates), rep.Rates)
	}

	// The run is an ordinary one: listed, reported.
	inv = runCLI(t, cliEnv{}, "runs", "--json", "--db", db)
	if inv.code != 0 || !strings.Contains(inv.stdout, rep.RunID) {
		t.Errorf("runs: exit %d, %s does not list %s: %s", inv.code, inv.stdout, rep.RunID, inv.stderr)
	}
	// serve's pages over the run.
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := serve.New(serve.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		req := httptest.NewRequest("GET", path, nil)
		req.Host = "127.0.0.1"
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	for _, path := range []string{"/", "/runs/" + rep.RunID, "/runs/" + rep.RunID + "/cases", "/runs/" + rep.RunID + "/cases/" + g.Strata[1].Drawn[0]} {
		if code, body := get(path); code != 200 || !strings.Contains(body, "beta") {
			t.Errorf("serve %s: %d\n%s", path, code, body)
		}
	}
	// A case's page shows the trace's conversation as its inputs and its
	// prompt (the run has no dataset file to read them from), and the
	// explorer searches it.
	id := g.Strata[1].Drawn[0]
	var n int
	if _, err := fmt.Sscanf(id[strings.LastIndex(id, "-")+1:], "%d", &n); err != nil {
		t.Fatal(err)
	}
	question := fmt.Sprintf("question %d", n)
	for path, want := range map[string]string{
		"/runs/" + rep.RunID + "/cases/" + id:                                       question + "<",
		"/runs/" + rep.RunID + "/cases?q=" + strings.ReplaceAll(question, " ", "+"): `has the text in its inputs: <a class="mono" href="/runs/` + rep.RunID + "/cases/" + id + `"`,
	} {
		code, body := get(path)
		if code != 200 || !strings.Contains(body, want) || strings.Contains(body, "cannot be read") || strings.Contains(body, "changed since the run") {
			t.Errorf("serve %s: %d: no %q, or a note that the inputs are unknown\n%s", path, code, want, body)
		}
	}
	for _, f := range []string{"text", "json", "markdown", "html"} {
		inv = runCLI(t, cliEnv{}, "report", rep.RunID, "--format", f, "--db", db)
		if inv.code != 0 || !strings.Contains(inv.stdout, "gamma") {
			t.Errorf("report --format %s: exit %d: %s\n%s", f, inv.code, inv.stderr, inv.stdout)
		}
	}
}

// --window ends at the start of the current unit (today 00:00 UTC for days
// and weeks, this hour for hours); --since or --until with it moves the
// other bound.
func TestSampleWindow(t *testing.T) {
	now := time.Date(2026, 12, 3, 17, 42, 10, 0, time.FixedZone("CET", 3600))
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		o            sampleOptions
		since, until time.Time
	}{
		{sampleOptions{Window: "7d"}, day(26), time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)},
		{sampleOptions{Window: "1w"}, day(26), time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)},
		{sampleOptions{Window: "36h"}, time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC), time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)},
		{sampleOptions{Window: "7d", Since: "2026-11-23"}, day(23), day(30)},
		{sampleOptions{Window: "2d", Until: "2026-11-30T12:00:00+01:00"}, time.Date(2026, 11, 28, 11, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)},
		{sampleOptions{Since: "2026-11-23"}, day(23), time.Time{}},
	} {
		c.o.Size = 5
		d, err := sampleDrawOptions(&c.o, now, true)
		if err != nil || !d.Since.Equal(c.since) || !d.Until.Equal(c.until) {
			t.Errorf("%+v: [%v, %v) %v, want [%v, %v)", c.o, d.Since, d.Until, err, c.since, c.until)
		}
	}
}

func TestSampleUsage(t *testing.T) {
	db, _ := traceStore(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--window", "7x", "--size", "5"}, `--window "7x": want a whole number and a unit: 7d, 36h, 90m or 2w`},
		{[]string{"--window", "7d", "--since", "2026-11-01", "--until", "2026-11-02", "--size", "5"}, "--window with both --since and --until: give two of the three"},
		{[]string{"--since", "yesterday", "--size", "5"}, `--since "yesterday": want RFC 3339 (2026-11-30T12:00:00Z) or a UTC date (2026-11-30)`},
		{[]string{"--per", "model=lots"}, `--per "model=lots": want a count of 1 or more (--per 50 with --by, or --per model=50)`},
		{[]string{"--per", "model=5", "--by", "route"}, "--per model=5 names its key; give --by or --per KEY=N, not both"},
		{[]string{"--per", "5"}, "--per N needs the strata keys: --by model,route --per N, or --per model=N"},
		{[]string{}, "a simple sample needs --size 1 or more (or strata: --per model=50)"},
		{[]string{"--size", "5", "--where", "route"}, `filter "route": want key=value, such as model=gpt-4o`},
	} {
		inv := runCLI(t, cliEnv{}, append([]string{"sample", "--db", db}, c.args...)...)
		if inv.code != ExitUsage || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("sample %v: exit %d, stderr %q; want exit %d with %q", c.args, inv.code, inv.stderr, ExitUsage, c.want)
		}
	}
	// Nothing in the window: an error, nothing stored.
	inv := runCLI(t, cliEnv{}, "sample", "--since", "2025-01-01", "--until", "2025-02-01", "--size", "5", "--name", "empty", "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "no stored trace in the window [2025-01-01T00:00:00Z, 2025-02-01T00:00:00Z) matches") {
		t.Errorf("empty window: exit %d, stderr %q", inv.code, inv.stderr)
	}
	// A name taken.
	for i, want := range []int{0, ExitUsage} {
		inv := runCLI(t, cliEnv{}, "sample", "--size", "5", "--name", "twice", "--model", "beta", "--db", db)
		if inv.code != want || i == 1 && !strings.Contains(inv.stderr, "a sample named twice already exists: choose another --name") {
			t.Errorf("sample --name twice (%d): exit %d, stderr %q", i+1, inv.code, inv.stderr)
		}
		if i == 0 && !strings.Contains(inv.stdout, "simple sample of 5: 5 drawn from 45 traces") {
			t.Errorf("sample --model beta --size 5:\n%s", inv.stdout)
		}
	}
	// score-traces: a sample that is not there, a spec without a scorer
	// that can score a trace.
	_, specPath := traceStore(t)
	inv = runCLI(t, cliEnv{}, "score-traces", specPath, "--sample", "nope", "--db", db)
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, "--sample nope") {
		t.Errorf("score-traces --sample nope: exit %d, stderr %q", inv.code, inv.stderr)
	}
	writeFile(t, specPath, strings.Replace(readFileT(t, specPath), "  - {name: json, type: is_json}\n  - {name: short, type: max_length, max: 40}\n", "", 1))
	inv = runCLI(t, cliEnv{}, "score-traces", specPath, "--sample", "twice", "--db", db)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "the spec has no scorer that works without an expected value") {
		t.Errorf("score-traces with only equals: exit %d, stderr %q", inv.code, inv.stderr)
	}
}
