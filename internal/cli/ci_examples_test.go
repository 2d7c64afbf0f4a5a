package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
	t.Parallel()
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

	// The gate errors (the committed baseline is gone): the summary says so,
	// with assay gate's error, and is posted all the same.
	if err := os.Remove(r.baseline); err != nil {
		t.Fatal(err)
	}
	code, summary, posted = r.scriptRun(t)
	if code != ExitErr {
		t.Fatalf("missing baseline: gate.sh exit %d, want %d\n%s", code, ExitErr, summary)
	}
	if !strings.Contains(summary, "error (exit 1)") || !strings.Contains(summary, "assay gate failed") || !strings.Contains(summary, "baseline.json") {
		t.Errorf("the summary of a gate error should say the gate failed, with its error naming the baseline:\n%s", summary)
	}
	if posted != summary {
		t.Errorf("a gate error's summary was not posted: %q", posted)
	}
}

// ciStep is a step of a workflow's job or of a composite action.
type ciStep struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	Uses  string            `yaml:"uses"`
	If    string            `yaml:"if"`
	Shell string            `yaml:"shell"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
	Run   string            `yaml:"run"`
}

// workflow is the part of a GitHub Actions workflow the tests run.
type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Env   map[string]string `yaml:"env"`
		Steps []ciStep          `yaml:"steps"`
	} `yaml:"jobs"`
}

// ciRunner runs steps the way a GitHub runner does: `uses` steps are the
// checkout and Go setup (already done here) or an artifact upload (recorded),
// `run` steps run in bash -e with the workflow's, job's and step's
// environment, and after a failure only steps whose if starts with always()
// run. A step's GITHUB_ENV lines reach the later steps; its GITHUB_OUTPUT
// lines are kept by step id. `go` and `gh` are stubs on PATH: go records its
// arguments and installs nothing (assay is already on PATH), gh records the
// comment it would post.
type ciRunner struct {
	t     *testing.T
	dir   string   // the repository checkout, where steps run
	path  string   // PATH: the stubs first, then assay's directory
	env   []string // added to every step's environment
	exprs map[string]string

	ghLog, goLog, stepSummary string

	ok        bool
	uploaded  []string                     // the artifact paths uploaded that existed
	outputs   map[string]map[string]string // by step id
	extraEnvs []string                     // from GITHUB_ENV
}

func newCIRunner(t *testing.T, dir, assayDir string, exprs map[string]string) *ciRunner {
	t.Helper()
	stubs := t.TempDir()
	writeFile(t, filepath.Join(stubs, "go"), "#!/bin/sh\necho \"$@\" >> \"$GO_LOG\"\nexit 0\n")
	writeFile(t, filepath.Join(stubs, "gh"), "#!/bin/sh\necho \"$@\" > \"$GH_LOG\"\ncat \"$5\" > \"$GH_LOG.body\"\n")
	for _, f := range []string{"go", "gh"} {
		if err := os.Chmod(filepath.Join(stubs, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logs := t.TempDir()
	return &ciRunner{t: t, dir: dir, path: stubs + ":" + assayDir + ":" + os.Getenv("PATH"), exprs: exprs,
		ghLog: filepath.Join(logs, "gh.log"), goLog: filepath.Join(logs, "go.log"),
		stepSummary: filepath.Join(logs, "step-summary.md"), ok: true, outputs: map[string]map[string]string{}}
}

var ciExpr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// subst replaces each ${{ expression }} by its value; an expression the
// test does not know fails it.
func (c *ciRunner) subst(s string) string {
	return ciExpr.ReplaceAllStringFunc(s, func(m string) string {
		e := strings.TrimSpace(ciExpr.FindStringSubmatch(m)[1])
		v, ok := c.exprs[e]
		if !ok {
			c.t.Fatalf("a step uses an expression the test does not know: %s", m)
		}
		return v
	})
}

func (c *ciRunner) runSteps(steps []ciStep, env ...map[string]string) {
	t := c.t
	t.Helper()
	for _, st := range steps {
		if !c.ok && !strings.HasPrefix(st.If, "always()") {
			continue
		}
		if st.Uses != "" {
			switch {
			case strings.HasPrefix(st.Uses, "actions/checkout@"), strings.HasPrefix(st.Uses, "actions/setup-go@"):
			case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
				p := c.subst(st.With["path"])
				if _, err := os.Stat(filepath.Join(c.dir, p)); err == nil {
					c.uploaded = append(c.uploaded, p)
				}
			default:
				t.Fatalf("step uses %s, which the test cannot stand in for", st.Uses)
			}
			continue
		}
		if st.Shell != "" && st.Shell != "bash" {
			t.Fatalf("step %q runs in %s; the kit's steps run in bash", st.Name, st.Shell)
		}
		ghEnv := filepath.Join(t.TempDir(), "env")
		ghOut := filepath.Join(t.TempDir(), "output")
		cmd := exec.Command("bash", "-e", "-c", c.subst(st.Run))
		cmd.Dir = c.dir
		cmd.Env = append(cleanEnv(), "PATH="+c.path, "GITHUB_STEP_SUMMARY="+c.stepSummary,
			"GH_LOG="+c.ghLog, "GO_LOG="+c.goLog, "GITHUB_ENV="+ghEnv, "GITHUB_OUTPUT="+ghOut)
		cmd.Env = append(cmd.Env, c.env...)
		cmd.Env = append(cmd.Env, c.extraEnvs...)
		for _, e := range append(env, st.Env) {
			for k, v := range e {
				cmd.Env = append(cmd.Env, k+"="+c.subst(v))
			}
		}
		out, err := cmd.CombinedOutput()
		t.Logf("step %q: err %v\n%s", st.Name, err, out)
		if err != nil {
			c.ok = false
		}
		if b, err := os.ReadFile(ghEnv); err == nil {
			c.extraEnvs = append(c.extraEnvs, strings.Fields(string(b))...)
		}
		if b, err := os.ReadFile(ghOut); err == nil && st.ID != "" {
			c.outputs[st.ID] = map[string]string{}
			for _, line := range strings.Fields(string(b)) {
				if k, v, ok := strings.Cut(line, "="); ok {
					c.outputs[st.ID][k] = v
				}
			}
		}
	}
}

// comment is the pull-request comment gh was asked to post ("" for none).
func (c *ciRunner) comment() string {
	body, _ := os.ReadFile(c.ghLog + ".body")
	args, _ := os.ReadFile(c.ghLog)
	if len(body) > 0 && !strings.HasPrefix(string(args), "pr comment 42 ") {
		c.t.Errorf("gh was called as %q, want a comment on pull request 42", args)
	}
	return string(body)
}

func (c *ciRunner) read(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// ghExprs are the expressions a pull request's workflow or action uses.
func ghExprs() map[string]string {
	return map[string]string{
		"github.event.pull_request.number": "42",
		"github.token":                     "not-a-real-token",
		"secrets.OPENAI_API_KEY":           "not-a-real-token",
	}
}

// runWorkflow runs the workflow's job named job in r's repository.
func runWorkflow(t *testing.T, dir, assayDir, wfPath, job string, exprs map[string]string) *ciRunner {
	t.Helper()
	var wf workflow
	if err := yaml.Unmarshal([]byte(readFileT(t, wfPath)), &wf); err != nil {
		t.Fatalf("%s: %v", wfPath, err)
	}
	j, found := wf.Jobs[job]
	if !found || len(j.Steps) == 0 {
		t.Fatalf("%s has no %s job with steps", wfPath, job)
	}
	c := newCIRunner(t, dir, assayDir, exprs)
	c.runSteps(j.Steps, wf.Env, j.Env)
	return c
}

// checkPinned checks that the install step installed a pinned assay
// version, not @latest.
func checkPinned(t *testing.T, c *ciRunner) {
	t.Helper()
	got := c.read(c.goLog)
	m := regexp.MustCompile(`^install github\.com/assay-eval/assay/cmd/assay@(\S+)\n$`).FindStringSubmatch(got)
	if m == nil || m[1] == "latest" || !regexp.MustCompile(`^v\d+\.\d+\.\d+$|^[0-9a-f]{7,40}$`).MatchString(m[1]) {
		t.Errorf("the install step ran go %q; want go install of a pinned assay version (a tag or a commit, not latest)", got)
	}
}

func TestCIGitHubWorkflow(t *testing.T) {
	t.Parallel()
	r := newCIRepo(t)
	wf := filepath.Join(repoRoot(t), "docs", "ci", "github-actions.yml")

	c := runWorkflow(t, r.dir, filepath.Dir(r.bin), wf, "gate", ghExprs())
	if !c.ok {
		t.Fatalf("the workflow failed on an unchanged eval")
	}
	checkPinned(t, c)
	if comment, summary := c.comment(), c.read(c.stepSummary); comment == "" || comment != summary {
		t.Errorf("the pull request comment and the step summary should both be the gate's markdown summary:\ncomment %q\nsummary %q", comment, summary)
	}
	if !slices.Equal(c.uploaded, []string{"assay-report.html"}) {
		t.Errorf("uploaded %q, want the HTML report assay-report.html", c.uploaded)
	} else if html := c.read(filepath.Join(r.dir, "assay-report.html")); !strings.Contains(html, "<html") || !strings.Contains(html, "bot") {
		t.Errorf("assay-report.html is not the run's HTML report:\n%.300s", html)
	}

	r.regress(t)
	c = runWorkflow(t, r.dir, filepath.Dir(r.bin), wf, "gate", ghExprs())
	if c.ok {
		t.Fatalf("the workflow passed a regression")
	}
	if comment := c.comment(); !strings.Contains(strings.ToLower(comment), "fail") {
		t.Errorf("the comment on a regressed pull request should say the gate failed:\n%s", comment)
	}

	// A gate that errors (the committed baseline is gone) still comments.
	if err := os.Remove(r.baseline); err != nil {
		t.Fatal(err)
	}
	c = runWorkflow(t, r.dir, filepath.Dir(r.bin), wf, "gate", ghExprs())
	if c.ok {
		t.Fatalf("the workflow passed without a baseline")
	}
	if comment := c.comment(); !strings.Contains(comment, "error") || !strings.Contains(comment, "baseline.json") {
		t.Errorf("the comment on a gate error should say there was an error and name the missing baseline:\n%s", comment)
	}
}

// With the provider down (nothing listens at the target's address), the run
// is unhealthy: gate.sh exits with the health code and its summary says the
// run could not be judged, with the run's error, instead of saying nothing.
func TestCIShellScriptProviderDown(t *testing.T) {
	t.Parallel()
	r := newCIRepo(t)
	spec := readFileT(t, r.spec)
	down := regexp.MustCompile(`base_url: http://[^/]+/v1`).ReplaceAllString(spec, "base_url: http://127.0.0.1:1/v1")
	if down == spec {
		t.Fatal("the spec has no base_url to point elsewhere")
	}
	writeFile(t, r.spec, down)
	code, summary, posted := r.scriptRun(t)
	if code != ExitUnhealthy {
		t.Fatalf("provider down: gate.sh exit %d, want %d (unhealthy)\n%s", code, ExitUnhealthy, summary)
	}
	if !strings.Contains(summary, "error (exit 5)") || !strings.Contains(summary, "unhealthy") || !strings.Contains(summary, "<pre>") {
		t.Errorf("the summary should say the run was unhealthy, with the run's error:\n%s", summary)
	}
	if posted != summary {
		t.Errorf("the summary was not posted: %q", posted)
	}
}
