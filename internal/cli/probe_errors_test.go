package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// Bad twin files stop the probe before any call, with exit 4 and every
// problem as FILE:LINE:COL on stderr.
func TestProbeBadTwinFileCallsNothing(t *testing.T) {
	t.Parallel()
	srv, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	specPath, _ := probeTask(t, dir, mockTarget("m", "m", url))
	bad := filepath.Join(dir, "bad.jsonl")
	writeFile(t, bad, `{"id":"c1","question":"T-twin-1","answer":"201"}
{"id":"c2","question":"T-twin-2","answer":"202"
{"id":"c1","question":"T-twin-1 again","answer":"201"}
{"id":"c4","answer":"204"}
{"id":"nope","question":"T-twin-x","answer":"0"}
`)
	e := cliEnv{env: map[string]string{"ASSAY_DB": filepath.Join(dir, "assay.db")}}
	inv := runCLI(t, e, "probe", "contamination", specPath, "--twins", bad)
	if inv.code != ExitInvalid {
		t.Fatalf("exit %d, want %d\n%s", inv.code, ExitInvalid, inv.stderr)
	}
	for _, want := range []string{
		bad + ":2:", // not valid JSON
		bad + `:3:2: duplicate case id "c1" at line 3 (first at line 1)`,
		bad + `:4:1: twin lacks field "question" that the prompt uses`,
	} {
		if !strings.Contains(inv.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, inv.stderr)
		}
	}
	if srv.Stats().Requests != 0 {
		t.Errorf("%d calls made before the twin file was found bad", srv.Stats().Requests)
	}

	// Once the rows are sound, a twin whose ID matches no case is named.
	writeFile(t, bad, `{"id":"c1","question":"T-twin-1","answer":"201"}
{"id":"nope","question":"T-twin-x","answer":"0"}
`)
	inv = runCLI(t, e, "probe", "contamination", specPath, "--twins", bad)
	if want := bad + `:2:1: twin ID "nope" matches no case of the dataset`; inv.code != ExitInvalid || !strings.Contains(inv.stderr, want) {
		t.Errorf("exit %d, stderr lacks %q:\n%s", inv.code, want, inv.stderr)
	}
	if srv.Stats().Requests != 0 {
		t.Errorf("%d calls made", srv.Stats().Requests)
	}
}

func TestProbeCommandLineMistakes(t *testing.T) {
	t.Parallel()
	_, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	specPath, twins := probeTask(t, dir, mockTarget("a", "a", url)+mockTarget("para", "para", url))
	e := cliEnv{env: map[string]string{"ASSAY_DB": filepath.Join(dir, "assay.db")}}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"probe", "contamination", specPath}, ExitUsage, "exactly one of --twins FILE, --rewriter TARGET or --twins-set ID"},
		{[]string{"probe", "contamination", specPath, "--twins", twins, "--rewriter", "para"}, ExitUsage, "exactly one of"},
		{[]string{"probe", "contamination", specPath, "--rewriter", "para", "--twin-id", "x"}, ExitUsage, "--twin-id and --twins-format apply to a twin file"},
		{[]string{"probe", "contamination", specPath, "--twins", twins, "--field", "question"}, ExitUsage, "--field names what the rewriter rewrites"},
		{[]string{"probe", "contamination", specPath, "--twins", filepath.Join(dir, "twins.txt")}, ExitUsage, "cannot tell the format of twin file"},
		{[]string{"probe", "contamination", specPath, "--twins-set", "abc"}, ExitUsage, `--twins-set "abc" is not a twin set ID`},
		{[]string{"probe", "contamination", specPath, "--twins-set", "sha256:" + strings.Repeat("0", 64)}, ExitErr, "holds no twin set sha256:000"},
		{[]string{"probe", "contamination", specPath, "--twins", twins, "--min-drop", "5"}, ExitUsage, "the minimum drop must be a fraction in [0, 1), got 5 (5 points is 0.05)"},
		{[]string{"probe", "contamination", specPath, "--twins", twins, "--alpha", "0.5"}, ExitUsage, "alpha must be in (0, 0.5)"},
		{[]string{"probe", "contamination", specPath, "--twins", twins, "--format", "html"}, ExitUsage, `--format "html": formats are text, json`},
		{[]string{"probe", "contamination", specPath, "--rewriter", "nobody"}, ExitUsage, `--rewriter: no target named "nobody" (targets are: a, para)`},
		{[]string{"probe", "contamination", specPath, "--rewriter", "para", "--field", "answer"}, ExitUsage, `--field "answer" cannot be rewritten: it holds the expected value`},
		{[]string{"probe", "contamination", specPath, "--rewriter", "para", "--field", "questoin"}, ExitUsage, `--field "questoin": the dataset has no such field (did you mean "question"?)`},
		{[]string{"probe", "contamination", specPath, "--twins", twins, "--targets", "zz"}, ExitUsage, `no target named "zz"`},
		{[]string{"probe", "contamination", specPath, "--twins", filepath.Join(dir, "absent.jsonl")}, ExitErr, "absent.jsonl: no such file"},
		{[]string{"probe", "nonsense"}, ExitUsage, `unknown probe "nonsense" (probes are: contamination)`},
	}
	for _, tt := range tests {
		inv := runCLI(t, e, tt.args...)
		if inv.code != tt.code || !strings.Contains(inv.stderr, tt.want) {
			t.Errorf("assay %s: exit %d, stderr %q; want exit %d saying %q", strings.Join(tt.args[2:], " "), inv.code, inv.stderr, tt.code, tt.want)
		}
	}
	// `assay probe` alone explains itself.
	if inv := runCLI(t, e, "probe"); inv.code != 0 || !strings.Contains(inv.stdout, "contamination") {
		t.Errorf("assay probe: exit %d, stdout %q", inv.code, inv.stdout)
	}
}

// A rewriter that is also the only target leaves nothing to probe; a
// field that is not text in some case is caught before any call.
func TestProbeRewriterInputChecks(t *testing.T) {
	t.Parallel()
	srv, url := startMock(t, mock.Options{Rules: []mock.Rule{{Model: "para", Match: "question 1", Reply: `{"question": "the first question"}`}}})
	dir := t.TempDir()
	var cases strings.Builder
	for i := 1; i <= 3; i++ {
		q := fmt.Sprintf("%q", fmt.Sprintf("question %d", i))
		if i == 2 {
			q = "42"
		}
		fmt.Fprintf(&cases, `{"id":"c%d","question":%s,"answer":"x"}`+"\n", i, q)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	specPath := filepath.Join(dir, "assay.yaml")
	writeFile(t, specPath, "name: t\ndataset: {path: cases.jsonl, id: id, expected: answer}\nprompt: {user: \"{{.question}}\"}\ntargets:\n"+
		mockTarget("para", "para", url)+mockTarget("b", "b", url)+"scorers:\n  - {name: c, type: equals}\n")
	e := cliEnv{env: map[string]string{"ASSAY_DB": filepath.Join(dir, "assay.db")}}
	inv := runCLI(t, e, "probe", "contamination", specPath, "--rewriter", "para")
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, `case c2 (line 2): field "question" is not text`) {
		t.Errorf("exit %d: %s", inv.code, inv.stderr)
	}
	inv = runCLI(t, e, "probe", "contamination", specPath, "--rewriter", "para", "--targets", "para", "--limit", "1")
	if inv.code != 0 {
		t.Errorf("the rewriter probed as a candidate when asked: exit %d: %s", inv.code, inv.stderr)
	}
	if srv.Stats().Requests != 3 {
		t.Errorf("%d requests, want 3 (one rewrite, two calls)", srv.Stats().Requests)
	}
}

// A candidate whose key is not set is a spec problem found before anything
// is read, stored or called (exit 4), like assay run.
func TestProbeMissingKeyIsASpecProblem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	specPath, twins := probeTask(t, dir, "  - {name: hosted, provider: openai, model: some-model}\n")
	db := filepath.Join(dir, "assay.db")
	inv := runCLI(t, cliEnv{env: map[string]string{"ASSAY_DB": db}}, "probe", "contamination", specPath, "--twins", twins)
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, "environment variable OPENAI_API_KEY is not set") {
		t.Errorf("exit %d: %s", inv.code, inv.stderr)
	}
	if strings.Contains(inv.stderr, "twin set") {
		t.Errorf("twins were read before the targets were checked: %s", inv.stderr)
	}
}
