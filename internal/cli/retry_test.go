package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// rlServer speaks the OpenAI chat API, echoing the user message; while
// limiting is set it answers 429 to the messages in limited. It counts the
// requests per message.
type rlServer struct {
	url      string
	limiting atomic.Bool
	limited  map[string]bool
	mu       sync.Mutex
	calls    map[string]int
}

func newRLServer(t *testing.T, limited ...string) *rlServer {
	t.Helper()
	s := &rlServer{limited: map[string]bool{}, calls: map[string]int{}}
	for _, m := range limited {
		s.limited[m] = true
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		say := req.Messages[len(req.Messages)-1].Content
		s.mu.Lock()
		s.calls[say]++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if s.limiting.Load() && s.limited[say] {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"rate limit reached","type":"rate_limit_error"}}`)
			return
		}
		b, _ := json.Marshal(map[string]any{
			"id": "c", "object": "chat.completion", "created": 1, "model": "m1",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": say}}},
			"usage":   map[string]any{"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
		})
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *rlServer) count(say string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[say]
}

// writeRetrySpec writes six cases (say word-N, expect word-N) and a spec
// with one OpenAI target at url that retries a failed call once.
func writeRetrySpec(t *testing.T, dir, url string) string {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, `{"id":"c%d","say":"word-%d","expected":"word-%d"}`+"\n", i, i, i)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), b.String())
	path := filepath.Join(dir, "assay.yaml")
	writeFile(t, path, `name: retry
dataset: {path: cases.jsonl, id: id, expected: expected}
prompt: {user: "{{.say}}"}
targets:
  - {name: oa, provider: openai, model: m1, base_url: `+url+`/v1, limits: {concurrency: 2}}
scorers:
  - {name: correct, type: equals, normalize: [trim]}
run: {timeout: 5s, retries: 1}
`)
	return path
}

// A run whose calls to two cases were refused for rate limits (every retry
// spent) reports them as the harness's problem; `run --resume RUN
// --retry-errors` calls only those two again, replaces their results and
// verdicts, counts the retry on each, and says a rescored run needs a new
// rescore.
func TestRunRetryErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	srv := newRLServer(t, "word-2", "word-5")
	srv.limiting.Store(true)
	specPath := writeRetrySpec(t, dir, srv.url)
	e := cliEnv{env: map[string]string{}}

	first := runJSON(t, e, "run", specPath, "--db", db)
	if first.Status != "complete" || first.Errors != 2 {
		t.Fatalf("first run %+v; want complete with 2 errors", first)
	}
	for _, say := range []string{"word-2", "word-5"} {
		if n := srv.count(say); n != 2 {
			t.Fatalf("%s was called %d times in the first run, want 2 (one retry)", say, n)
		}
	}
	inv := runCLI(t, e, "report", first.RunID, "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("report: %s", inv.stderr)
	}
	var rep struct {
		Targets []struct {
			Attempts    int `json:"attempts"`
			RateLimited int `json:"rate_limited"`
			Primary     struct{ Passed, N int }
		}
		Warnings []string
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Targets) != 1 || rep.Targets[0].Attempts != 4+2*2 || rep.Targets[0].RateLimited != 2 || rep.Targets[0].Primary.Passed != 4 {
		t.Errorf("report targets %+v; want 8 attempts, 2 rate limited, 4 passed", rep.Targets)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), "2 calls to oa failed after exhausting retries on rate limits: raise limits.rpm or lower concurrency") {
		t.Errorf("report warnings %q; want the rate-limit warning", rep.Warnings)
	}
	if inv := runCLI(t, e, "report", first.RunID, "--db", db); !strings.Contains(inv.stdout, "exhausting retries on rate limits") {
		t.Errorf("the text report does not carry the rate-limit warning:\n%s", inv.stdout)
	}

	// A rescore makes scoring 2, which the retry will leave without the
	// retried results' verdicts.
	if inv := runCLI(t, e, "rescore", first.RunID, "--db", db); inv.code != 0 {
		t.Fatalf("rescore: %s", inv.stderr)
	}

	// Bad uses are refused before anything is called.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", specPath, "--retry-errors"}, "--resume RUN"},
		{[]string{"run", specPath, "--resume", first.RunID, "--kinds", "timeout"}, "give --retry-errors too"},
		{[]string{"run", specPath, "--resume", first.RunID, "--retry-errors", "--kinds", "rate_limited,slow"}, `"slow": not a provider failure kind; kinds are: rate_limited, overloaded`},
	} {
		inv := runCLI(t, e, append(tc.args, "--db", db)...)
		if inv.code != ExitUsage || !strings.Contains(inv.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error with %q", tc.args, inv.code, inv.stderr, tc.want)
		}
	}
	// A kind nothing failed with selects nothing; the run's 2 failures of
	// 6 are still above run.max_error_rate (20%), so it stays unhealthy.
	inv = runCLI(t, e, "run", specPath, "--resume", first.RunID, "--retry-errors", "--kinds", "auth", "--db", db)
	if inv.code != ExitUnhealthy || !strings.Contains(inv.stderr, "nothing to call again") {
		t.Errorf("--kinds auth: exit %d, stderr %q", inv.code, inv.stderr)
	}
	if n := srv.count("word-2"); n != 2 {
		t.Errorf("--kinds auth called word-2 (%d calls)", n)
	}

	srv.limiting.Store(false)
	inv = runCLI(t, e, "run", specPath, "--resume", first.RunID, "--retry-errors", "--db", db, "--json")
	if inv.code != 0 {
		t.Fatalf("retry: exit %d\n%s", inv.code, inv.stderr)
	}
	var sum runSummary
	if err := json.Unmarshal([]byte(inv.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Status != "complete" || sum.Stored != 2 || sum.Skipped != 4 || sum.Retry == nil ||
		sum.Retry.Selected != 2 || sum.Retry.Retried != 2 || sum.Retry.FailedAgain != 0 || sum.Retry.LaterScorings != 1 {
		t.Errorf("retry summary %+v (retry %+v)", sum, sum.Retry)
	}
	if !strings.Contains(inv.stderr, "2 of 2 failed results (rate_limited, overloaded, server_error, timeout, conflict, network, malformed_response, truncated_stream) called again: 2 succeed now") ||
		!strings.Contains(inv.stderr, "assay rescore "+first.RunID) {
		t.Errorf("retry stderr: %s", inv.stderr)
	}
	// Only the failed cases were called again.
	for i := 1; i <= 6; i++ {
		say := fmt.Sprintf("word-%d", i)
		want := 1
		if i == 2 || i == 5 {
			want = 3
		}
		if n := srv.count(say); n != want {
			t.Errorf("%s: %d calls in all, want %d", say, n, want)
		}
	}
	got := readRun(t, db, first.RunID)
	if len(got) != 6 {
		t.Fatalf("%d results after the retry, want 6", len(got))
	}
	for k, r := range got {
		if r.kind != "" || !r.pass || r.raw != "word-"+strings.TrimPrefix(k.CaseID, "c") {
			t.Errorf("%v after the retry: %+v", k, r)
		}
	}
	retries := map[string]int{}
	st, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Results(t.Context(), first.RunID, func(r record.Result) error {
		retries[r.CaseID] = r.Retries
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if retries["c2"] != 1 || retries["c5"] != 1 || retries["c1"] != 0 {
		t.Errorf("retries %v; want 1 on c2 and c5 only", retries)
	}
	inv = runCLI(t, e, "report", first.RunID, "--db", db, "--scoring", "1", "--format", "json")
	rep.Targets, rep.Warnings = nil, nil
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, inv.stderr)
	}
	if rep.Targets[0].Primary.Passed != 6 || rep.Targets[0].RateLimited != 0 || strings.Contains(strings.Join(rep.Warnings, "\n"), "rate limits") {
		t.Errorf("after the retry the report says %+v, warnings %q; want 6 passed and no rate-limit warning", rep.Targets, rep.Warnings)
	}
}

// A pairwise judge compares each candidate with the baseline's output.
// When the baseline's call failed, the candidates' verdicts on that case
// say there was nothing to compare with; once --retry-errors replaces the
// baseline's result, those verdicts are judged again against the new
// output, not kept from the failed one.
func TestRetryErrorsRejudgesPairsOnReplacedBaseline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	_, candURL := startMock(t, mock.Options{})
	base := newRLServer(t, "word-3")
	base.limiting.Store(true)
	_, judgeURL := startMock(t, mock.Options{Rules: []mock.Rule{
		{Match: "RUBRIC-PAIR", Reply: `{"winner": "tie", "reason": "identical"}`},
	}})
	writeFile(t, filepath.Join(dir, "cases.jsonl"),
		`{"id":"c1","say":"word-1","expected":"word-1"}`+"\n"+
			`{"id":"c2","say":"word-2","expected":"word-2"}`+"\n"+
			`{"id":"c3","say":"word-3","expected":"word-3"}`+"\n")
	specPath := filepath.Join(dir, "assay.yaml")
	writeFile(t, specPath, `name: pairs
dataset: {path: cases.jsonl, id: id, expected: expected}
prompt: {user: "{{.say}}"}
targets:
  - {name: oa, provider: openai, model: m1, base_url: `+candURL+`/v1}
  - {name: base, provider: openai, model: m2, base_url: `+base.url+`/v1}
  - {name: grader, provider: openai, model: judge-1, base_url: `+judgeURL+`/v1}
candidates: [oa, base]
scorers:
  - {name: correct, type: equals, normalize: [trim]}
  - {name: vs_base, type: judge, mode: pairwise, target: grader, baseline: base, rubric: "RUBRIC-PAIR: which output is the requested word"}
run: {timeout: 5s, retries: 1}
`)
	e := cliEnv{env: map[string]string{}}
	first := runJSON(t, e, "run", specPath, "--db", db)
	if first.Errors != 1 {
		t.Fatalf("first run %+v; want the baseline's call on c3 to fail", first)
	}
	kinds := func() map[string]string {
		out := map[string]string{}
		ctx := context.Background()
		st, err := sqlite.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		err = st.Scores(ctx, first.RunID, 1, func(s record.Score) error {
			if s.Scorer == "vs_base" {
				out[s.CaseID+"/"+s.Target] = s.Kind
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if k := kinds()["c3/oa"]; k != "no_baseline" {
		t.Fatalf("before the retry, oa's pairwise verdict on c3 is %q; want no_baseline", k)
	}

	base.limiting.Store(false)
	inv := runCLI(t, e, "run", specPath, "--db", db, "--resume", first.RunID, "--retry-errors")
	if inv.code != 0 {
		t.Fatalf("retry: exit %d: %s", inv.code, inv.stderr)
	}
	got := kinds()
	for _, c := range []string{"c1", "c2", "c3"} {
		if got[c+"/oa"] != "tie" {
			t.Errorf("after the retry, oa's pairwise verdict on %s is %q; want tie (judged against the baseline's new output)", c, got[c+"/oa"])
		}
	}
	if len(got) != 3 {
		t.Errorf("pairwise verdicts %v; want one per case for oa only", got)
	}
}
