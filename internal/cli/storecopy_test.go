package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/pgtest"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// mustCLI runs assay and fails the test unless it exits 0.
func mustCLI(t *testing.T, args ...string) invocation {
	t.Helper()
	inv := runCLI(t, cliEnv{env: map[string]string{}}, args...)
	if inv.code != 0 {
		t.Fatalf("assay %s: exit %d\n%s%s", strings.Join(args, " "), inv.code, inv.stdout, inv.stderr)
	}
	return inv
}

// openRef opens a store by reference (a file or a URL) for a test.
func openRef(t testing.TB, ref string) dumpStore {
	t.Helper()
	st, err := openStoreAt(context.Background(), &Globals{Now: time.Now}, ref)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st.(dumpStore)
}

// copySummary runs store copy --json and decodes its summary.
func copySummary(t *testing.T, args ...string) (storeCopySummary, string) {
	t.Helper()
	inv := mustCLI(t, append([]string{"store", "copy", "--json"}, args...)...)
	var s storeCopySummary
	if err := json.Unmarshal([]byte(inv.stdout), &s); err != nil {
		t.Fatalf("store copy --json: %v\n%s", err, inv.stdout)
	}
	return s, inv.stderr
}

// sourceStore makes an SQLite store holding what a copy must carry: two
// runs of the quickstart (the second rescored, so it has a scoring 2 with
// its scorers hash), a labeling queue with labels, traces whose text is
// not valid UTF-8 and holds NUL bytes, a sample, cache entries and a twin
// set. It returns the store's path and the rescored run's ID.
func sourceStore(t *testing.T) (string, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "a.db")
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	mustCLI(t, "run", spec, "--db", db)
	mustCLI(t, "run", spec, "--db", db)
	var runs []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, "runs", "--json", "--db", db).stdout), &runs); err != nil || len(runs) != 2 {
		t.Fatalf("runs --json: %v, %d runs", err, len(runs))
	}
	id := runs[0].ID
	mustCLI(t, "rescore", id, "--db", db)
	mustCLI(t, "labels", "queue", id, "--name", "first", "--size", "6", "--db", db)

	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q, err := st.Queue(ctx, id, "first")
	if err != nil {
		t.Fatal(err)
	}
	var labels []record.Label
	for i, it := range q.Items[:4] {
		labels = append(labels, record.Label{RunID: id, CaseID: it.CaseID, Target: it.Target, Epoch: it.Epoch, OutputHash: it.OutputHash,
			Queue: "first", Labeler: "ana", Verdict: []string{record.LabelPass, record.LabelFail}[i%2], Reason: "why\x00 \xff",
			Created: time.Date(2026, 12, 1, 10, i, 0, 123456000, time.UTC)})
	}
	if _, err := st.PutLabels(ctx, labels); err != nil {
		t.Fatal(err)
	}
	var traces []record.Trace
	for i := range 3 {
		traces = append(traces, record.Trace{ID: "tr-" + string(rune('a'+i)), TraceID: "t", Source: "otlp",
			Time: time.Date(2026, 11, 30, 9, 0, i, 1000, time.UTC), LatencyMS: 12.5, Model: "m\xfe", InputTokens: 3, OutputTokens: 4,
			System: "sys\x00tem", Input: []record.Message{{Role: "user", Content: "hi \xff"}}, Output: []record.Message{{Role: "assistant", Content: "yo"}},
			Attributes: []byte(`{"k":"v"}`), Received: time.Date(2026, 11, 30, 9, 1, 0, 0, time.UTC)})
	}
	if _, err := st.PutTraces(ctx, traces); err != nil {
		t.Fatal(err)
	}
	if err := st.PutSample(ctx, &record.Sample{ID: "s1", Created: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Per: 2, Seed: 1<<63 + 5,
		By: []string{"model"}, Strata: []record.SampleStratum{{Key: "m\xfe", Population: 3, Drawn: 2}},
		Items: []record.SampleItem{{TraceID: "tr-a", Stratum: "m\xfe", Weight: 1.5}, {TraceID: "tr-c", Stratum: "m\xfe", Weight: 1.5}}}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k1", "k2"} {
		if err := st.CachePut(ctx, k, "model-a", []byte(`{"text":"`+k+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	// A rescore killed halfway: scoring 3, pending, with a few scores.
	n, err := st.ReserveScoring(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetScoringScorersHash(ctx, id, n, "killed-rescore"); err != nil {
		t.Fatal(err)
	}
	var few []record.Score
	if err := st.Scores(ctx, id, 2, func(s record.Score) error {
		if len(few) < 5 {
			s.Scoring, s.Pass, s.Reason = n, !s.Pass, "pending"
			few = append(few, s)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutScores(ctx, few); err != nil {
		t.Fatal(err)
	}
	// A load test: a run of kind load with its steps and requests.
	load := &record.Run{ID: "20261130-080000-10ad10", Spec: "load", SpecHash: "lh", Kind: record.KindLoad, Targets: []string{"model-a"},
		Status: record.StatusComplete, Started: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), Ended: time.Date(2026, 11, 30, 8, 5, 0, 0, time.UTC),
		Config: []byte(`{"rate":[1,2]}`)}
	if err := st.CreateRun(ctx, load); err != nil {
		t.Fatal(err)
	}
	if err := st.PutLoadSteps(ctx, []record.LoadStep{{RunID: load.ID, Target: "model-a", Step: 0, Mode: "rate", Level: 1, Started: load.Started, DurationMS: 1000, Sent: 2, Done: 2, Cores: 2},
		{RunID: load.ID, Target: "model-a", Step: 1, Mode: "rate", Level: 2, DurationMS: 1000, Sent: 1, Done: 1, Skipped: "knee"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutLoadRequests(ctx, []record.LoadRequest{{RunID: load.ID, Target: "model-a", Step: 0, Seq: 0, CaseID: "c\xff", StartMS: 1, LatencyMS: 20, FirstTokenMS: 5, InputTokens: 3},
		{RunID: load.ID, Target: "model-a", Step: 0, Seq: 1, CaseID: "c2", StartMS: 501, LatencyMS: 25, ErrorKind: "rate_limit", Status: 429},
		{RunID: load.ID, Target: "model-a", Step: 1, Seq: 0, CaseID: "c3", StartMS: 2, LatencyMS: 22}}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutTwins(ctx, []record.Twin{{Set: "tw", CaseID: "c1", Source: "file:x", Fields: []byte(`{"q":"a"}`), CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}); err != nil {
		t.Fatal(err)
	}
	return db, id
}

// storeContents is everything a store holds that a copy carries, read
// through the store's own interfaces, for comparing two stores.
type storeContents struct {
	Runs     []record.Run
	Scorings map[string][]store.Scoring
	Labels   []record.Label
	Queues   []*record.Queue
	Traces   []record.Trace
	Samples  []*record.Sample
	Cache    []store.CacheEntry
	Twins    []record.Twin
	Steps    []record.LoadStep
	Requests []record.LoadRequest
}

func contentsOf(t *testing.T, ref string) storeContents {
	t.Helper()
	ctx := context.Background()
	st := openRef(t, ref)
	c := storeContents{Scorings: map[string][]store.Scoring{}}
	var err error
	if c.Runs, err = st.ListRuns(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Runs {
		if c.Scorings[r.ID], err = st.Scorings(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		if err := st.LoadSteps(ctx, r.ID, func(s record.LoadStep) error { c.Steps = append(c.Steps, s); return nil }); err != nil {
			t.Fatal(err)
		}
		if err := st.LoadRequests(ctx, r.ID, func(q record.LoadRequest) error { c.Requests = append(c.Requests, q); return nil }); err != nil {
			t.Fatal(err)
		}
		qs, err := st.Queues(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, qp := range qs {
			q, err := st.Queue(ctx, r.ID, qp.Name)
			if err != nil {
				t.Fatal(err)
			}
			c.Queues = append(c.Queues, q)
		}
	}
	if err := st.Labels(ctx, "", func(l record.Label) error { c.Labels = append(c.Labels, l); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := st.Traces(ctx, store.TraceFilter{}, func(tr *record.Trace) error { c.Traces = append(c.Traces, *tr); return nil }); err != nil {
		t.Fatal(err)
	}
	samples, err := st.Samples(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		sm, err := st.Sample(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		c.Samples = append(c.Samples, sm)
	}
	if err := st.CacheEntries(ctx, func(e store.CacheEntry) error { c.Cache = append(c.Cache, e); return nil }); err != nil {
		t.Fatal(err)
	}
	sets, err := st.TwinSets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range sets {
		if err := st.Twins(ctx, set, func(tw record.Twin) error { c.Twins = append(c.Twins, tw); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// reportsOf renders every run's report in each format.
func reportsOf(t *testing.T, ref string, ids []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range ids {
		for _, f := range []string{"json", "markdown", "html"} {
			out[id+" "+f] = mustCLI(t, "report", id, "--format", f, "--db", ref).stdout
		}
		out[id+" labels"] = mustCLI(t, "labels", "export", id, "--db", ref).stdout
	}
	return out
}

func sameReports(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	for k, va := range a {
		if vb := b[k]; va != vb {
			t.Errorf("%s: %s differs:\n--- before\n%.2000s\n--- after\n%.2000s", what, k, va, vb)
		}
	}
}

// A store copied SQLite → PostgreSQL → SQLite (and SQLite → SQLite →
// SQLite) holds what the first did: every run's report byte for byte in
// JSON, markdown and HTML, its labels export, and the scorings, queues,
// labels, traces, samples, cache entries and twins as the store reads them.
// Copying again changes nothing and says so.
func TestStoreCopyRoundTrip(t *testing.T) {
	for _, middle := range []string{"sqlite", "postgres"} {
		t.Run(middle, func(t *testing.T) {
			var mid string
			if middle == "postgres" {
				mid = pgtest.URL(t)
			} else {
				mid = filepath.Join(t.TempDir(), "mid.db")
			}
			src, _ := sourceStore(t)
			end := filepath.Join(t.TempDir(), "end.db")
			want := contentsOf(t, src)
			var ids []string // the evaluations (a load test has no labels to export)
			for _, r := range want.Runs {
				if r.Kind != record.KindLoad {
					ids = append(ids, r.ID)
				}
			}
			reports := reportsOf(t, src, ids)

			s1, _ := copySummary(t, "--from", src, "--to", mid)
			if s1.Runs.Copied != 3 || s1.Scorings.Copied != 2 || s1.LoadSteps.Copied != 2 || s1.LoadRequests.Copied != 3 || s1.Labels.Copied != 4 || s1.Queues.Copied != 1 ||
				s1.Traces.Copied != 3 || s1.Samples.Copied != 1 || s1.Cache.Copied != 2 || s1.Twins.Copied != 1 {
				t.Errorf("first copy's summary: %+v", s1)
			}
			if s1.Results.Copied != 2*52 || s1.Results.There != 0 {
				t.Errorf("first copy: results %+v; want 104 copied (two runs of 26 cases × 2 targets)", s1.Results)
			}
			copySummary(t, "--from", mid, "--to", end)

			for _, ref := range []string{mid, end} {
				sameReports(t, storeName(ref), reports, reportsOf(t, ref, ids))
				if got := contentsOf(t, ref); !reflect.DeepEqual(got, want) {
					a, _ := json.MarshalIndent(want, "", " ")
					b, _ := json.MarshalIndent(got, "", " ")
					t.Errorf("%s holds other records than the source:\n--- source\n%.3000s\n--- copy\n%.3000s", storeName(ref), a, b)
				}
			}

			// Twice: nothing copied, every run already there.
			s2, stderr := copySummary(t, "--from", src, "--to", mid)
			for _, r := range want.Runs {
				if id := r.ID; !strings.Contains(stderr, "run "+id+": already there") {
					t.Errorf("second copy's progress does not say run %s is already there:\n%s", id, stderr)
				}
			}
			zero := copyCount{}
			for name, c := range map[string]copyCount{"cases": s2.Cases, "results": s2.Results, "rescorings": s2.Scorings, "scores": s2.Scores,
				"queues": s2.Queues, "labels": s2.Labels, "load steps": s2.LoadSteps, "load requests": s2.LoadRequests, "traces": s2.Traces, "samples": s2.Samples, "cache": s2.Cache, "twins": s2.Twins} {
				if c.Copied != 0 || c == zero {
					t.Errorf("second copy: %s %+v; want nothing copied, all already there", name, c)
				}
			}
			if s2.Runs.Copied != 0 || s2.Runs.Completed != 0 || s2.Runs.There != 3 || s2.Results.There != 104 {
				t.Errorf("second copy: runs %+v, results %+v; want 3 runs and 104 results already there", s2.Runs, s2.Results)
			}
			sameReports(t, "after the second copy", reports, reportsOf(t, mid, ids))
			if got := contentsOf(t, mid); !reflect.DeepEqual(got, want) {
				t.Errorf("the second copy changed %s", storeName(mid))
			}
		})
	}
}

// A run the destination holds with fewer results (a copy of an
// interrupted run) is completed: the missing results and scores are
// added, none twice, and the run ends as the source's.
func TestStoreCopyCompletesARun(t *testing.T) {
	ctx := context.Background()
	src, id := sourceStore(t)
	partial := filepath.Join(t.TempDir(), "partial.db")
	dst := filepath.Join(t.TempDir(), "dst.db")
	func() {
		a, b := openRef(t, src), openRef(t, partial)
		run, err := a.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		half := *run
		half.Status = record.StatusInterrupted
		if err := b.CreateRun(ctx, &half); err != nil {
			t.Fatal(err)
		}
		var cases []record.Case
		if err := a.Cases(ctx, id, func(c record.Case) error { cases = append(cases, c); return nil }); err != nil {
			t.Fatal(err)
		}
		if err := b.PutCases(ctx, cases); err != nil {
			t.Fatal(err)
		}
		var results []record.Result
		if err := a.Results(ctx, id, func(r record.Result) error { results = append(results, r); return nil }); err != nil {
			t.Fatal(err)
		}
		results = results[:20]
		keep := map[record.Key]bool{}
		for _, r := range results {
			keep[r.Key()] = true
		}
		var scores []record.Score
		if err := a.Scores(ctx, id, 1, func(s record.Score) error {
			if keep[record.Key{CaseID: s.CaseID, Target: s.Target, Epoch: s.Epoch}] {
				scores = append(scores, s)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := b.PutResults(ctx, results, scores); err != nil {
			t.Fatal(err)
		}
		// The rescore's scoring reserved, as a copy stopped before its
		// scores leaves it: pending, no scores.
		sc, err := a.Scorings(ctx, id)
		if err != nil || len(sc) < 2 || sc[1].Scoring != 2 || sc[1].Pending {
			t.Fatalf("source scorings %+v, %v; want scoring 2 complete", sc, err)
		}
		row := sc[1]
		row.Pending = true
		if _, err := b.PutScoring(ctx, id, row); err != nil {
			t.Fatal(err)
		}
	}()
	copySummary(t, "--from", partial, "--to", dst)
	if got := mustCLI(t, "runs", "--json", "--db", dst).stdout; !strings.Contains(got, `"interrupted"`) {
		t.Fatalf("the partial copy is not interrupted:\n%s", got)
	}
	s, stderr := copySummary(t, "--from", src, "--to", dst, "--run", id)
	if !strings.Contains(stderr, "run "+id+": completed") {
		t.Errorf("progress does not say the run was completed:\n%s", stderr)
	}
	if s.Runs.Completed != 1 || s.Results != (copyCount{Copied: 32, There: 20}) || s.Scores.There != 40 {
		t.Errorf("summary: runs %+v, results %+v, scores %+v; want 1 completed, 32 results copied and 20 there, 40 scores there", s.Runs, s.Results, s.Scores)
	}
	sameReports(t, "completed run", reportsOf(t, src, []string{id}), reportsOf(t, dst, []string{id}))
	if a, b := contentsOf(t, src).Scorings[id], contentsOf(t, dst).Scorings[id]; !reflect.DeepEqual(a, b) {
		t.Errorf("scorings after completing:\n%+v\nwant the source's\n%+v", b, a)
	}
}

// A destination run of the same ID that is another run is refused, named,
// and nothing of the copy is written — not even the runs that did not
// conflict.
func TestStoreCopyRefusesAConflict(t *testing.T) {
	ctx := context.Background()
	src, id := sourceStore(t)
	for _, c := range []struct {
		name, want string
		make       func(t *testing.T, dst dumpStore, run *record.Run, r record.Result)
	}{
		{"spec hash", `spec hash`, func(t *testing.T, dst dumpStore, run *record.Run, _ record.Result) {
			other := *run
			other.SpecHash = "0000"
			if err := dst.CreateRun(ctx, &other); err != nil {
				t.Fatal(err)
			}
		}},
		{"result", `1 result differ`, func(t *testing.T, dst dumpStore, run *record.Run, r record.Result) {
			if err := dst.CreateRun(ctx, run); err != nil {
				t.Fatal(err)
			}
			r.Raw += " (another output)"
			if err := dst.PutResults(ctx, []record.Result{r}, nil); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "dst.db")
			a, b := openRef(t, src), openRef(t, dst)
			run, err := a.GetRun(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			r, err := firstResult(ctx, a, id)
			if err != nil {
				t.Fatal(err)
			}
			c.make(t, b, run, r)
			before := contentsOf(t, dst)
			beforeRuns := mustCLI(t, "runs", "--json", "--db", dst).stdout
			beforeReport := runCLI(t, cliEnv{}, "report", id, "--format", "json", "--db", dst)

			inv := runCLI(t, cliEnv{}, "store", "copy", "--from", src, "--to", dst)
			if inv.code != ExitErr || !strings.Contains(inv.stderr, "run "+id) || !strings.Contains(inv.stderr, c.want) || !strings.Contains(inv.stderr, "nothing was copied") {
				t.Fatalf("copy onto a conflicting run: exit %d, stderr %q; want exit 1 naming run %s and %q", inv.code, inv.stderr, id, c.want)
			}
			if got := contentsOf(t, dst); !reflect.DeepEqual(got, before) {
				t.Errorf("the refused copy changed the destination")
			}
			if got := mustCLI(t, "runs", "--json", "--db", dst).stdout; got != beforeRuns {
				t.Errorf("the refused copy changed the destination's runs:\n%s\nwas\n%s", got, beforeRuns)
			}
			if after := runCLI(t, cliEnv{}, "report", id, "--format", "json", "--db", dst); after != beforeReport {
				t.Errorf("the refused copy changed the run's report")
			}
		})
	}
}

func firstResult(ctx context.Context, st store.Store, id string) (record.Result, error) {
	var first record.Result
	n := 0
	err := st.Results(ctx, id, func(r record.Result) error {
		if n == 0 {
			first = r
		}
		n++
		return nil
	})
	return first, err
}

// A run another process is writing (running, its lease held by a live
// process) is refused before the destination is even created; with
// --allow-partial what it stored so far is copied.
func TestStoreCopyRefusesALiveRun(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "src.db")
	st := openRef(t, src)
	now := time.Now()
	run := &record.Run{ID: "20261203-120000-abcdef", Spec: "s", SpecHash: "h", Targets: []string{"t"}, Cases: 1, Epochs: 1,
		Status: record.StatusRunning, Started: now.Add(-time.Minute).UTC().Truncate(time.Microsecond)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if err := st.AcquireLease(ctx, store.Lease{RunID: run.ID, Holder: "me", PID: os.Getpid(), Host: host, Acquired: now, Heartbeat: now}, now.Add(-time.Hour), false); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst.db")
	inv := runCLI(t, cliEnv{}, "store", "copy", "--from", src, "--to", dst)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "run "+run.ID+" is being written") || !strings.Contains(inv.stderr, "--allow-partial") {
		t.Fatalf("copy of a live run: exit %d, stderr %q", inv.code, inv.stderr)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("the refused copy created %s", dst)
	}
	s, _ := copySummary(t, "--from", src, "--to", dst, "--allow-partial")
	if s.Runs.Copied != 1 {
		t.Errorf("--allow-partial: runs %+v; want 1 copied", s.Runs)
	}
	if got, err := openRef(t, dst).GetLease(ctx, run.ID); err != nil || got != nil {
		t.Errorf("the copy has a lease (%+v, %v); leases are not copied", got, err)
	}
}

func TestStoreCopyUsage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"store", "copy", "--from", db}, "--to is required"},
		{[]string{"store", "copy", "--to", db}, "--from is required"},
		{[]string{"store", "copy", "--from", db, "--to", db}, "name the same store"},
		{[]string{"store", "copy", "--from", db, "--to", db + "2", "--what", "runs,lables"}, `--what "lables": the kinds are runs, labels, traces, cache, twins`},
		{[]string{"store"}, "store needs a subcommand"},
	} {
		inv := runCLI(t, cliEnv{}, c.args...)
		if inv.code != ExitUsage || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(c.args, " "), inv.code, inv.stderr, c.want)
		}
	}
}

// Ctrl-C stops a copy with exit 130 and keeps what was copied; the same
// command run again finishes it.
func TestStoreCopyInterrupted(t *testing.T) {
	src, id := sourceStore(t)
	dst := filepath.Join(t.TempDir(), "dst.db")
	ints := make(chan os.Signal, 1)
	ints <- os.Interrupt
	inv := runCLI(t, cliEnv{interrupts: ints}, "store", "copy", "--from", src, "--to", dst)
	if inv.code != ExitInterrupted || !strings.Contains(inv.stderr, "run the same command again") {
		t.Fatalf("interrupted copy: exit %d, stderr %q; want 130 saying how to finish", inv.code, inv.stderr)
	}
	copySummary(t, "--from", src, "--to", dst)
	sameReports(t, "after finishing an interrupted copy", reportsOf(t, src, []string{id}), reportsOf(t, dst, []string{id}))
}

// Labels belong to a run: --what labels for a run the destination lacks is
// refused, naming the run and how to copy it.
func TestStoreCopyLabelsNeedTheRun(t *testing.T) {
	src, id := sourceStore(t)
	dst := filepath.Join(t.TempDir(), "dst.db")
	inv := runCLI(t, cliEnv{}, "store", "copy", "--from", src, "--to", dst, "--run", id, "--what", "labels")
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "run "+id+" is not in "+dst+": copy it with --what runs,labels") {
		t.Fatalf("labels without their run: exit %d, stderr %q", inv.code, inv.stderr)
	}
	copySummary(t, "--from", src, "--to", dst, "--run", id, "--what", "runs")
	s, _ := copySummary(t, "--from", src, "--to", dst, "--run", id, "--what", "labels")
	if s.Labels.Copied != 4 || s.Queues.Copied != 1 || s.Results.Copied != 0 {
		t.Errorf("--what labels after the run: labels %+v, queues %+v, results %+v; want 4 labels and 1 queue, no results", s.Labels, s.Queues, s.Results)
	}
}
