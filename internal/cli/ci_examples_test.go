package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// The CI wiring examples in docs/ci are exercised end to end: the shell
// script against a real `assay mock` process, and the GitHub Actions
// workflow by running its steps the way a runner does.

// ciRepo lays out a user's repository: an eval whose one target is served by
// an `assay mock` process, a committed baseline made from a first run, and
// the docs/ci script copied to ci/assay-gate.sh. regress, when true, changes
// the prompt (the pull request) to one the mock answers wrongly on a third
// of the cases.
type ciRepo struct {
	dir, spec, baseline string
	bin                 string
}

const ciCases = 60

func newCIRepo(t *testing.T) *ciRepo {
	t.Helper()
	bin := assayBinary(t)
	dir := t.TempDir()
	r := &ciRepo{dir: dir, bin: bin,
		spec:     filepath.Join(dir, "evals", "triage", "assay.yaml"),
		baseline: filepath.Join(dir, "evals", "triage", "baseline.json")}

	// The mock answers "Q: item N?" correctly and "Question: item N?" wrongly
	// for every third N (rules: first match wins).
	var rules, cases strings.Builder
	for i := 1; i <= ciCases; i++ {
		if i%3 == 0 {
			fmt.Fprintf(&rules, `{"match":"Question: item %d?","reply":"wrong"}`+"\n", i)
		}
		fmt.Fprintf(&rules, `{"match":"item %d?","reply":"%d"}`+"\n", i, i)
		fmt.Fprintf(&cases, `{"id":"c%d","q":"item %d?","answer":"%d"}`+"\n", i, i, i)
	}
	writeFile(t, filepath.Join(dir, "rules.jsonl"), rules.String())
	writeFile(t, filepath.Join(dir, "evals", "triage", "cases.jsonl"), cases.String())
	url := startMockProcess(t, bin, "--rules", filepath.Join(dir, "rules.jsonl"))
	writeFile(t, r.spec, fmt.Sprintf(`name: triage
dataset: {path: cases.jsonl, id: id, expected: answer}
prompt: {user: "Q: {{.q}}"}
targets:
  - {name: bot, provider: openai, model: m, base_url: %s/v1}
scorers:
  - {name: correct, type: equals, normalize: [trim], primary: true}
run: {timeout: 5s}
`, url))

	// The baseline: run once, export, commit the file; the database is thrown away.
	db := filepath.Join(t.TempDir(), "baseline.db")
	for _, args := range [][]string{{"run", r.spec}, {"baseline", "export", "latest", "-o", r.baseline}} {
		cmd := exec.Command(bin, append(args, "--db", db)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("assay %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	script, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "ci", "gate.sh"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "ci", "assay-gate.sh"), string(script))
	return r
}

// regress makes the pull request's change: a prompt the model answers worse.
func (r *ciRepo) regress(t *testing.T) {
	t.Helper()
	b := readFileT(t, r.spec)
	writeFile(t, r.spec, strings.Replace(b, `"Q: {{.q}}"`, `"Question: {{.q}}"`, 1))
}

// startMockProcess runs `assay mock` on a free loopback port until the test
// ends and returns its base URL.
func startMockProcess(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"mock", "--addr", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case url := <-found:
		return url
	case <-time.After(20 * time.Second):
		t.Fatal("assay mock did not say where it listens")
		return ""
	}
}

// scriptRun runs ci/assay-gate.sh in the repository with a fresh store.
func (r *ciRepo) scriptRun(t *testing.T, env ...string) (code int, summary, posted string) {
	t.Helper()
	cmd := exec.Command("bash", "ci/assay-gate.sh", "evals/triage/assay.yaml", "evals/triage/baseline.json", "summary.md")
	cmd.Dir = r.dir
	cmd.Env = append(cleanEnv(), append([]string{"ASSAY=" + r.bin, "ASSAY_POST=cat > posted.md"}, env...)...)
	out, err := cmd.CombinedOutput()
	code = 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("gate.sh: %v\n%s", err, out)
		}
		code = ee.ExitCode()
	}
	t.Logf("gate.sh exit %d:\n%s", code, out)
	return code, readFileT(t, filepath.Join(r.dir, "summary.md")), readFileT(t, filepath.Join(r.dir, "posted.md"))
}

// cleanEnv is the test's environment without assay's own variables, so a
// developer's ASSAY_DB cannot leak into the run.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASSAY") && !strings.HasPrefix(kv, "GITHUB_") {
			env = append(env, kv)
		}
	}
	return env
}

func TestCIShellScriptGatesAgainstMock(t *testing.T) {
	r := newCIRepo(t)

	code, summary, posted := r.scriptRun(t)
	if code != 0 {
		t.Fatalf("unchanged eval: gate.sh exit %d, want 0 (pass)\n%s", code, summary)
	}
	if posted != summary || !strings.Contains(summary, "bot") {
		t.Errorf("the posted summary should be the markdown summary naming the target; posted %q, summary %q", posted, summary)
	}
	if _, err := os.Stat(filepath.Join(r.dir, ".assay")); err == nil {
		t.Errorf("gate.sh wrote a store into the repository; it should use a temporary one")
	}

	r.regress(t)
	code, summary, posted = r.scriptRun(t)
	if code != ExitFailed {
		t.Fatalf("regressed eval: gate.sh exit %d, want %d\n%s", code, ExitFailed, summary)
	}
	if !strings.Contains(strings.ToLower(summary), "fail") || !strings.Contains(summary, "correct") {
		t.Errorf("the summary of a regression should say it failed and name the scorer:\n%s", summary)
	}
	if posted != summary {
		t.Errorf("a regression's summary was not posted: %q", posted)
	}
}

// workflow is the part of a GitHub Actions workflow the test runs.
type workflow struct {
	Jobs map[string]struct {
		Env   map[string]string `yaml:"env"`
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			If   string            `yaml:"if"`
			Env  map[string]string `yaml:"env"`
			Run  string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// runWorkflow runs the workflow's job the way a runner does: `uses` steps
// are the checkout and Go setup (already done here), `run` steps run in bash
// -e with the job's and step's environment, and after a failure only steps
// with `if: always()` run. `go` and `gh` are stubs on PATH: go install does
// nothing (assay is already on PATH), gh records the comment it would post.
// ok is whether the job succeeded.
func runWorkflow(t *testing.T, r *ciRepo, wfPath string) (ok bool, comment, stepSummary string) {
	t.Helper()
	var wf workflow
	if err := yaml.Unmarshal([]byte(readFileT(t, wfPath)), &wf); err != nil {
		t.Fatalf("%s: %v", wfPath, err)
	}
	job, found := wf.Jobs["gate"]
	if !found || len(job.Steps) == 0 {
		t.Fatalf("%s has no gate job with steps", wfPath)
	}
	stubs := t.TempDir()
	writeFile(t, filepath.Join(stubs, "go"), "#!/bin/sh\nexit 0\n")
	writeFile(t, filepath.Join(stubs, "gh"), "#!/bin/sh\necho \"$@\" > \"$GH_LOG\"\ncat \"$5\" > \"$GH_LOG.body\"\n")
	for _, f := range []string{"go", "gh"} {
		if err := os.Chmod(filepath.Join(stubs, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ghLog := filepath.Join(t.TempDir(), "gh.log")
	summaryFile := filepath.Join(t.TempDir(), "step-summary.md")
	expr := regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)
	subst := func(s string) string {
		return expr.ReplaceAllStringFunc(s, func(m string) string {
			switch strings.TrimSpace(expr.FindStringSubmatch(m)[1]) {
			case "github.event.pull_request.number":
				return "42"
			case "github.token", "secrets.OPENAI_API_KEY":
				return "not-a-real-token"
			}
			t.Fatalf("workflow uses an expression the test does not know: %s", m)
			return ""
		})
	}
	ok = true
	for _, st := range job.Steps {
		if st.Uses != "" {
			if !strings.HasPrefix(st.Uses, "actions/checkout@") && !strings.HasPrefix(st.Uses, "actions/setup-go@") {
				t.Fatalf("step uses %s, which the test cannot stand in for", st.Uses)
			}
			continue
		}
		if !ok && st.If != "always()" {
			continue
		}
		cmd := exec.Command("bash", "-e", "-c", subst(st.Run))
		cmd.Dir = r.dir
		cmd.Env = append(cleanEnv(),
			"PATH="+stubs+":"+filepath.Dir(r.bin)+":"+os.Getenv("PATH"),
			"GITHUB_STEP_SUMMARY="+summaryFile, "GH_LOG="+ghLog)
		for k, v := range job.Env {
			cmd.Env = append(cmd.Env, k+"="+subst(v))
		}
		for k, v := range st.Env {
			cmd.Env = append(cmd.Env, k+"="+subst(v))
		}
		out, err := cmd.CombinedOutput()
		t.Logf("step %q: err %v\n%s", st.Name, err, out)
		if err != nil {
			ok = false
		}
	}
	body, _ := os.ReadFile(ghLog + ".body")
	args, _ := os.ReadFile(ghLog)
	if len(body) > 0 && !strings.HasPrefix(string(args), "pr comment 42 ") {
		t.Errorf("gh was called as %q, want a comment on pull request 42", args)
	}
	ss, _ := os.ReadFile(summaryFile)
	return ok, string(body), string(ss)
}

func TestCIGitHubWorkflow(t *testing.T) {
	r := newCIRepo(t)
	wf := filepath.Join(repoRoot(t), "docs", "ci", "github-actions.yml")

	ok, comment, summary := runWorkflow(t, r, wf)
	if !ok {
		t.Fatalf("the workflow failed on an unchanged eval")
	}
	if comment == "" || comment != summary {
		t.Errorf("the pull request comment and the step summary should both be the gate's markdown summary:\ncomment %q\nsummary %q", comment, summary)
	}

	r.regress(t)
	ok, comment, _ = runWorkflow(t, r, wf)
	if ok {
		t.Fatalf("the workflow passed a regression")
	}
	if !strings.Contains(strings.ToLower(comment), "fail") {
		t.Errorf("the comment on a regressed pull request should say the gate failed:\n%s", comment)
	}
}
