package serve

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// hostileOutput is what a model might answer to break a page: markup,
// script, an attribute breakout, a bidi override and a control character.
const hostileOutput = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>\u202e\x1b[31m"

// runsStore opens a fresh SQLite store in the test's directory, closed at
// the end of the test; path is its file.
func runsStore(t *testing.T) (st store.Store, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "assay.db")
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// fixtureRun is a run to store: its verdicts by target, one a case, cases
// "1" … "n" (pass[target][i] is case i+1's primary verdict).
type fixtureRun struct {
	spec, experiment string
	started          time.Time
	pass             map[string][]bool
	// raw is every output (hostileOutput when "").
	raw string
}

// putRun stores the run with one result and one primary score per case ×
// target and returns it.
func putRun(t *testing.T, st store.Store, f fixtureRun) *record.Run {
	t.Helper()
	ctx := context.Background()
	run := &record.Run{ID: record.NewRunID(f.started), Spec: f.spec, SpecHash: "sha256:1", DatasetHash: "sha256:2", PromptHash: "sha256:3",
		Experiment: f.experiment, Epochs: 1, Status: record.StatusComplete, Started: f.started, Ended: f.started.Add(time.Minute)}
	run.Targets = slices.Sorted(maps.Keys(f.pass))
	n := len(f.pass[run.Targets[0]])
	run.Cases = n
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	raw := f.raw
	if raw == "" {
		raw = hostileOutput
	}
	var cs []record.Case
	var rs []record.Result
	var ss []record.Score
	for i := range n {
		id := strconv.Itoa(i + 1)
		cs = append(cs, record.Case{RunID: run.ID, ID: id, Line: i + 1, Expected: []byte(`"42"`), Tags: map[string]string{"bucket": []string{"a", "b"}[i%2]}})
		for _, name := range run.Targets {
			pass := f.pass[name][i]
			rs = append(rs, record.Result{RunID: run.ID, CaseID: id, Target: name, Epoch: 1, Raw: raw, InputTokens: 10, OutputTokens: 5,
				CostUSD: 0.001, LatencyMS: 100 + float64(i), Attempts: 1, CreatedAt: f.started})
			sc := record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: name, Epoch: 1, Scorer: "correct", Primary: true, Pass: pass, Shape: "pass"}
			if pass {
				sc.Value = 1
			} else {
				sc.Shape, sc.Kind, sc.Reason = "silent", "wrong", "said "+raw
			}
			ss = append(ss, sc)
		}
	}
	if err := st.PutCases(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, rs, ss); err != nil {
		t.Fatal(err)
	}
	return run
}

// verdicts makes n verdicts, case i passing when pass(i).
func verdicts(n int, pass func(i int) bool) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = pass(i)
	}
	return out
}

// newTestServer builds a server over st (loopback, no token unless given).
func newTestServer(t *testing.T, st store.Store, token string) *Server {
	t.Helper()
	s, err := New(Options{Addr: "127.0.0.1:0", Token: token, Store: st, Labeler: "tester", Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// get serves a GET of target and returns the status and body.
func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Accept", "text/html")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// between returns the text of s between the first from and the next to
// after it ("" when either is missing).
func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	in, _, ok := strings.Cut(rest, to)
	if !ok {
		return ""
	}
	return in
}
