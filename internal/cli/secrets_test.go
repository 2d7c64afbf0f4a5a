package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// An API key planted in the environment reaches the provider and nothing
// else: not the store (database and its WAL), not stdout or stderr, not a
// report, not an error message — even when calls fail with auth errors.
func TestSecretsNeverWritten(t *testing.T) {
	t.Parallel()
	const key = "sk-assay-PLANTED-7f3a9c1e5b2d4086"
	const wrong = "sk-assay-WRONG-KEY-0a1b2c3d4e5f6071"
	_, good := startMock(t, mock.Options{APIKey: key, Fail: 0.2, Seed: 3})
	_, strict := startMock(t, mock.Options{APIKey: key})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, 40, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, api_key_env: MY_OPENAI_KEY}
  - {name: an, provider: anthropic, model: m, base_url: %s, api_key_env: MY_ANTHROPIC_KEY}
  - {name: denied, provider: openai, model: m, base_url: %s/v1, api_key_env: WRONG_KEY}`, good, good, strict))
	e := cliEnv{env: map[string]string{"MY_OPENAI_KEY": key, "MY_ANTHROPIC_KEY": key, "WRONG_KEY": wrong}}

	var artifacts []string
	// The denied target's wrong key trips the breaker: the run is
	// unhealthy (exit 5), and its error text is checked for the keys too.
	inv := runCLI(t, e, "run", path, "--db", db)
	if inv.code != ExitUnhealthy || !strings.Contains(inv.stderr, "target_unavailable: denied: 5 consecutive auth failures (HTTP 401)") {
		t.Fatalf("run exit %d, want %d with denied unavailable: %s", inv.code, ExitUnhealthy, inv.stderr)
	}
	artifacts = append(artifacts, inv.stdout, inv.stderr)
	for _, f := range []string{"text", "json"} {
		inv := runCLI(t, e, "report", "latest", "--db", db, "--format", f)
		if inv.code != 0 {
			t.Fatalf("report %s: %s", f, inv.stderr)
		}
		artifacts = append(artifacts, inv.stdout, inv.stderr)
	}
	// The denied target's calls made (the breaker's 5, and at most 7 more
	// in flight) are stored as auth failures; the rest were never made.
	if got := readRun(t, db, strings.TrimSpace(inv.stdout)); countKind(got, "auth") < 5 || countKind(got, "auth") > 12 {
		t.Errorf("%d auth failures stored for the denied target, want 5 to 12", countKind(got, "auth"))
	}
	inv = runCLI(t, e, "validate", path)
	artifacts = append(artifacts, inv.stdout, inv.stderr)

	for i, a := range artifacts {
		for _, k := range []string{key, wrong} {
			if strings.Contains(a, k) {
				t.Errorf("artifact %d contains a key:\n%s", i, a)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) < 2 {
		t.Fatalf("expected the database beside the spec, found %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, k := range []string{key, wrong} {
			if bytes.Contains(b, []byte(k)) {
				t.Errorf("%s contains a key", f)
			}
		}
	}
}

func countKind(rs map[record.Key]scored, kind string) int {
	n := 0
	for _, r := range rs {
		if r.kind == kind {
			n++
		}
	}
	return n
}

// A key a target echoes back — an exec program that prints its env: on
// stdout, traces it (set -x) on stderr and fails with it; an OpenAI-compatible
// server that puts the Authorization header, encoded several ways, in a 200
// reply, in its model name and in error bodies; a judge that quotes its own
// key in its reason — is replaced by [REDACTED:VARIABLE] before anything is
// stored or printed. No artifact holds the key or an encoding of it: the
// database and its WAL, every report format, a baseline, and the stdout and
// stderr of each command. The reports count the redactions.
func TestSecretsEchoedAreRedacted(t *testing.T) {
	t.Parallel()
	const (
		oaKey    = "sk-oa-PLANTED-9c1e5b2d4086aa17"
		judgeKey = "sk-judge-PLANTED-3f7a1b9e0c2d"
		execTok  = "tok/PLANTED+exec=5b2d4086c1e9"
	)
	keys := []string{oaKey, judgeKey, execTok}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		v := strings.TrimPrefix(auth, "Bearer ")
		switch {
		case bytes.Contains(body, []byte("RUBRIC")):
			reply(w, v, fmt.Sprintf(`{"verdict": "pass", "reason": "graded with %s"}`, auth))
		case bytes.Contains(body, []byte(`"word-2"`)):
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"bad request from %s (%s)"}}`, auth, base64.StdEncoding.EncodeToString([]byte("user:"+v)))
		case bytes.Contains(body, []byte(`"word-3"`)):
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"key %s is not valid"}}`, url.QueryEscape(v))
		default:
			reply(w, v, fmt.Sprintf("you sent %s; query %s; path %s; basic %s; b64 %s", auth, url.QueryEscape(v), url.PathEscape(v),
				base64.StdEncoding.EncodeToString([]byte("someone:"+v)), base64.URLEncoding.EncodeToString([]byte(v))))
		}
	}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	script := filepath.Join(dir, "target.sh")
	writeFile(t, script, `set -x
in=$(cat)
b=$(printf 'u:%s' "$EXEC_TOKEN" | base64 | tr -d '\n')
echo "Authorization: Bearer $EXEC_TOKEN" >&2
case "$in" in
*'"word-2"'*) exit 3 ;;
*'"word-4"'*) printf '{"output":"x","error":"failed with %s"}\n' "$EXEC_TOKEN"; exit 0 ;;
esac
printf '{"output":"token %s basic %s","model":"%s"}\n' "$EXEC_TOKEN" "$b" "$EXEC_TOKEN"
`)
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, 6, fmt.Sprintf(`  - {name: ex, provider: exec, command: ["sh", %q], env: [EXEC_TOKEN]}
  - {name: oa, provider: openai, model: m, base_url: %s/v1, api_key_env: OA_KEY}
  - {name: grader, provider: openai, model: j, base_url: %s/v1, api_key_env: JUDGE_KEY}`, script, srv.URL, srv.URL))
	b := readFileT(t, path)
	writeFile(t, path, strings.Replace(b, "run: {", "  - {name: quality, type: judge, target: grader, rubric: \"RUBRIC: the word\"}\nrun: {", 1))
	e := cliEnv{env: map[string]string{"OA_KEY": oaKey, "JUDGE_KEY": judgeKey, "EXEC_TOKEN": execTok}}

	// Hold the database open so that the WAL the run writes is not
	// checkpointed away when the CLI closes it: it is read as written.
	ctx := context.Background()
	hold, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()

	var artifacts []string
	// 2 of each target's 6 calls fail on purpose: above run.max_error_rate.
	inv := runCLI(t, e, "run", path, "--db", db, "--targets", "ex,oa")
	if inv.code != ExitUnhealthy {
		t.Fatalf("run exit %d, want %d: %s", inv.code, ExitUnhealthy, inv.stderr)
	}
	artifacts = append(artifacts, inv.stdout, inv.stderr)
	reports := map[string]string{}
	for _, f := range []string{"text", "json", "markdown", "html", "junit"} {
		inv := runCLI(t, e, "report", "latest", "--db", db, "--format", f)
		if inv.code != 0 {
			t.Fatalf("report %s: %s", f, inv.stderr)
		}
		reports[f] = inv.stdout
		artifacts = append(artifacts, inv.stdout, inv.stderr)
	}
	baseline := filepath.Join(dir, "baseline.json")
	for _, args := range [][]string{{"baseline", "export", "latest", "--db", db, "-o", baseline}, {"baseline", "export", "latest", "--db", db}} {
		inv := runCLI(t, e, args...)
		if inv.code != 0 {
			t.Fatalf("%v: %s", args, inv.stderr)
		}
		artifacts = append(artifacts, inv.stdout, inv.stderr)
	}
	inv = runCLI(t, e, "validate", path)
	artifacts = append(artifacts, inv.stdout, inv.stderr)

	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	wal := false
	for _, f := range files {
		if f == script || f == path {
			continue // the inputs: the script names the variable, not its value
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, "-wal") && len(b) > 0 {
			wal = true
		}
		artifacts = append(artifacts, string(b))
	}
	if !wal {
		t.Errorf("no WAL file was read among %v", files)
	}
	for i, a := range artifacts {
		for _, k := range keys {
			if form := leakedForm(a, k); form != "" {
				t.Errorf("artifact %d holds %s of a key:\n%.3000s", i, form, a)
			}
		}
	}

	// What was echoed is replaced, named and counted.
	var rep struct {
		Targets []struct {
			Name       string `json:"name"`
			Redactions int    `json:"redactions"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(reports["json"]), &rep); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, tg := range rep.Targets {
		counts[tg.Name] = tg.Redactions
	}
	if counts["ex"] < 6 || counts["oa"] < 6 {
		t.Errorf("JSON report counts %v redactions; want at least one per result of ex and oa", counts)
	}
	for _, want := range []string{"[REDACTED:EXEC_TOKEN]", "[REDACTED:OA_KEY]", "[REDACTED:JUDGE_KEY]"} {
		if !strings.Contains(reports["html"]+reports["junit"]+reports["markdown"]+artifactsOfDB(t, db), want) {
			t.Errorf("no %s in the reports or the store", want)
		}
	}
	for _, f := range []string{"text", "markdown", "html"} {
		if !strings.Contains(reports[f], "target ex: ") || !strings.Contains(reports[f], "secrets replaced") {
			t.Errorf("the %s report does not count the redactions:\n%s", f, reports[f])
		}
	}
}

// reply writes an OpenAI chat completion whose model is model.
func reply(w http.ResponseWriter, model, content string) {
	b, _ := json.Marshal(map[string]any{
		"id": "x", "object": "chat.completion", "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8},
	})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// leakedForm names the form in which a holds v, or "": v itself or any run
// of 12 of its bytes, its URL escapes, or its base64 (alone or after
// "user:", standard or URL alphabet, the characters that encode v's bytes
// only).
func leakedForm(a, v string) string {
	for i := 0; i+12 <= len(v); i++ {
		if strings.Contains(a, v[i:i+12]) {
			return "the value (" + v[i:i+12] + ")"
		}
	}
	for _, f := range []string{url.QueryEscape(v), url.PathEscape(v)} {
		if strings.Contains(a, f) {
			return "a URL escape"
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for _, prefix := range []string{"", "u:", "user:", "someone:"} {
			s := enc.EncodeToString([]byte(prefix + v))
			core := s[(len(prefix)/3+1)*4 : len(s)-4]
			if strings.Contains(a, core) {
				return "base64 of " + strconv.Quote(prefix) + "+value"
			}
		}
	}
	return ""
}

// artifactsOfDB is the stored raw outputs, errors and score reasons of
// every run in db, as one string.
func artifactsOfDB(t *testing.T, db string) string {
	t.Helper()
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := os.ReadFile(db + "-wal")
	return string(b) + string(w)
}
