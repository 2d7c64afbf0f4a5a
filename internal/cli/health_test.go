package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// okReply answers an OpenAI chat completion with the user's message.
func okReply(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	text := ""
	if len(req.Messages) > 0 {
		text = req.Messages[len(req.Messages)-1].Content
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "x", "object": "chat.completion", "model": "m",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}},
		"usage":   map[string]any{"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
	})
}

// A bad key (every call answered 401) trips the breaker: `assay run` on 200
// cases makes a handful of calls, says target_unavailable loudly, exits 5
// with the results kept and the run resumable; once the key is fixed, a
// resume calls exactly the cases not called.
func TestRunBadKeyTripsBreaker(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	var fixed atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if !fixed.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"type":"invalid_request_error","code":"invalid_api_key","message":"Incorrect API key provided"}}`)
			return
		}
		okReply(w, r)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	const cases = 200
	path := echoTask(t, dir, cases, fmt.Sprintf(`  - {name: hosted, provider: openai, model: m, base_url: %s/v1, api_key_env: HOSTED_KEY}`, srv.URL))
	env := cliEnv{env: map[string]string{"HOSTED_KEY": "sk-test-expired-0123456789abcdef"}}

	inv := runCLI(t, env, "run", path, "--db", db, "--json", "--no-cache")
	if inv.code != ExitUnhealthy {
		t.Fatalf("exit %d, want %d (unhealthy); stderr %s", inv.code, ExitUnhealthy, inv.stderr)
	}
	made := calls.Load()
	// The threshold (5) plus at most the calls already in flight when it
	// tripped (8 workers): far fewer than the 200 cases.
	if made < 5 || made > 5+7 {
		t.Errorf("%d calls made for %d cases, want 5 to 12: the breaker should stop the target", made, cases)
	}
	want := "target_unavailable: hosted: 5 consecutive auth failures (HTTP 401)"
	if !strings.Contains(inv.stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, inv.stderr)
	}
	if strings.Contains(inv.stderr, "sk-test-expired") || strings.Contains(inv.stdout, "sk-test-expired") {
		t.Errorf("the key is in the output")
	}
	var s runSummary
	if err := json.Unmarshal([]byte(inv.stdout), &s); err != nil {
		t.Fatalf("stdout %q: %v", inv.stdout, err)
	}
	if !s.Unhealthy || len(s.TargetUnavailable) != 1 || s.TargetUnavailable[0].Target != "hosted" ||
		s.TargetUnavailable[0].Reason != "5 consecutive auth failures (HTTP 401)" {
		t.Errorf("summary: unhealthy %v, target_unavailable %+v", s.Unhealthy, s.TargetUnavailable)
	}
	// Only the calls made are stored, each as the auth failure it was: the
	// rest are not fake failures, so the run is not complete.
	if s.Status != record.StatusInterrupted || int64(s.Stored) != made || s.Errors != s.Stored {
		t.Errorf("status %s, stored %d (%d errors), want interrupted with the %d calls made stored as errors", s.Status, s.Stored, s.Errors, made)
	}
	if len(s.Health) != 1 || s.Health[0].Results != int(made) || s.Health[0].Errors != int(made) ||
		s.Health[0].ErrorRate != 1 || s.Health[0].Kinds["auth"] != int(made) || s.Health[0].Expected != cases {
		t.Errorf("health %+v, want %d of %d results, all auth errors", s.Health, made, cases)
	}

	// The key is fixed: the resume calls the cases never called, and the
	// run is complete and healthy (5-12 errors of 200 are under 20%).
	fixed.Store(true)
	calls.Store(0)
	inv = runCLI(t, env, "run", path, "--db", db, "--resume", s.RunID, "--no-cache")
	if inv.code != 0 {
		t.Fatalf("resume: exit %d, stderr %s", inv.code, inv.stderr)
	}
	if got := calls.Load(); got != cases-made {
		t.Errorf("resume made %d calls, want the %d not made before", got, cases-made)
	}
	if !strings.Contains(inv.stderr, fmt.Sprintf("hosted: %d of %d results, %d provider errors", cases, cases, made)) {
		t.Errorf("resume's summary does not give the target's error rate:\n%s", inv.stderr)
	}
}

// A target nobody listens on (a closed port) and one whose host cannot
// resolve are unavailable: each call is made once (not retried), the
// breaker gives the target up after 5, and run exits 5 naming the cause.
func TestRunUnreachableTargetTripsBreaker(t *testing.T) {
	// Not parallel: the closed port must stay closed, and a parallel
	// test's server could take it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		name, baseURL, cause string
	}{
		{"refused", "http://" + closed + "/v1", "connection refused"},
		{"dns", "http://api.assay-test.invalid/v1", "no such host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "assay.db")
			const cases = 200
			path := echoTask(t, dir, cases, fmt.Sprintf(`  - {name: down, provider: openai, model: m, base_url: %s}`, tc.baseURL))
			inv := runCLI(t, cliEnv{}, "run", path, "--db", db, "--json", "--no-cache")
			if inv.code != ExitUnhealthy {
				t.Fatalf("exit %d, want %d; stderr %s", inv.code, ExitUnhealthy, inv.stderr)
			}
			var s runSummary
			if err := json.Unmarshal([]byte(inv.stdout), &s); err != nil {
				t.Fatalf("stdout %q: %v", inv.stdout, err)
			}
			if s.Stored < 5 || s.Stored > 12 || s.Errors != s.Stored || s.Status != record.StatusInterrupted {
				t.Errorf("stored %d (%d errors, status %s), want 5 to 12 failures of %d cases and the run resumable", s.Stored, s.Errors, s.Status, cases)
			}
			if len(s.Health) != 1 || s.Health[0].Kinds["unavailable"] != s.Stored {
				t.Errorf("health %+v, want every stored result unavailable", s.Health)
			}
			if !strings.Contains(inv.stderr, "target_unavailable: down: 5 consecutive failures to reach the target") || !strings.Contains(inv.stderr, tc.cause) {
				t.Errorf("stderr does not name the target unavailable for %q:\n%s", tc.cause, inv.stderr)
			}
			// Not retried: the run's 8 retries would show as attempts.
			st, err := sqlite.OpenExisting(t.Context(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			err = st.Results(t.Context(), s.RunID, func(r record.Result) error {
				if r.Attempts != 1 {
					t.Errorf("case %s: %d attempts, want 1 (an unreachable target is not retried)", r.CaseID, r.Attempts)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A provider error rate above run.max_error_rate exits 5 even when the run
// completes; at or below it, 0.
func TestRunErrorRateAboveMax(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every fourth call is a bad request (never retried): 25% errors.
		if n.Add(1)%4 == 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"bad"}}`)
			return
		}
		okReply(w, r)
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		max  string
		code int
	}{{"", ExitUnhealthy}, {"0.3", 0}} {
		t.Run("max="+tc.max, func(t *testing.T) {
			n.Store(0)
			dir := t.TempDir()
			path := echoTask(t, dir, 40, fmt.Sprintf(`  - {name: flaky, provider: openai, model: m, base_url: %s/v1, limits: {concurrency: 1}}`, srv.URL))
			if tc.max != "" {
				writeFile(t, path, strings.Replace(readFileT(t, path), "run: {timeout: 5s, retries: 8}", "run: {timeout: 5s, retries: 8, max_error_rate: "+tc.max+"}", 1))
			}
			inv := runCLI(t, cliEnv{}, "run", path, "--db", filepath.Join(dir, "assay.db"), "--no-cache")
			if inv.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", inv.code, tc.code, inv.stderr)
			}
			if !strings.Contains(inv.stderr, "flaky: 40 of 40 results, 10 provider errors (25.0%): bad_request 10") {
				t.Errorf("stderr does not give the error rate:\n%s", inv.stderr)
			}
			if tc.code == ExitUnhealthy && !strings.Contains(inv.stderr, "above run.max_error_rate 20.0%") {
				t.Errorf("stderr does not say the rate is above the maximum:\n%s", inv.stderr)
			}
		})
	}
}

// A key with a trailing newline (or other whitespace or control
// characters) is a spec problem before any call, in validate and run
// alike, and the key is never shown.
func TestKeyWithWhitespaceIsAnError(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		okReply(w, r)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	path := echoTask(t, dir, 5, fmt.Sprintf(`  - {name: hosted, provider: openai, model: m, base_url: %s/v1, api_key_env: HOSTED_KEY}`, srv.URL))
	const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
	for _, tc := range []struct{ value, flaw string }{
		{secret + "\n", "ends with a newline"},
		{" " + secret, "starts with whitespace"},
		{"sk-proj-abcdefghijkl\x01mnopqrstuvwxyz", "control character"},
	} {
		for _, cmd := range []string{"validate", "run"} {
			inv := runCLI(t, cliEnv{env: map[string]string{"HOSTED_KEY": tc.value}}, cmd, path, "--db", filepath.Join(dir, "assay.db"))
			if inv.code != ExitInvalid {
				t.Errorf("%s with a key that %s: exit %d, want %d; stderr %s", cmd, tc.flaw, inv.code, ExitInvalid, inv.stderr)
			}
			if !strings.Contains(inv.stderr, "HOSTED_KEY") || !strings.Contains(inv.stderr, tc.flaw) || !strings.Contains(inv.stderr, "assay.yaml:") {
				t.Errorf("%s: stderr does not say where and what (%q):\n%s", cmd, tc.flaw, inv.stderr)
			}
			if strings.Contains(inv.stderr+inv.stdout, "abcdefghijkl") {
				t.Errorf("%s: the key is shown:\n%s", cmd, inv.stderr)
			}
		}
	}
	if calls.Load() != 0 {
		t.Errorf("%d calls made with a broken key", calls.Load())
	}
}

// Exit code 5 is part of the API: `assay --help` and README's exit-code
// table both document it.
func TestExitUnhealthyDocumented(t *testing.T) {
	t.Parallel()
	if ExitUnhealthy != 5 {
		t.Fatalf("ExitUnhealthy = %d, want 5", ExitUnhealthy)
	}
	inv := runCLI(t, cliEnv{}, "--help")
	if inv.code != 0 || !strings.Contains(inv.stdout+inv.stderr, "\n  5    unhealthy run: a target's provider errors exceeded run.max_error_rate") {
		t.Errorf("assay --help does not document exit 5:\n%s", inv.stdout)
	}
	readme := readFileT(t, filepath.Join(repoRoot(t), "README.md"))
	if !strings.Contains(readme, "\n| 5 | unhealthy run (`run`)") {
		t.Errorf("README's exit-code table has no row for 5")
	}
}
