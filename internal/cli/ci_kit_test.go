package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// The CI kit's behaviour when things fail, with a stub assay standing in for
// the real one so that each failure (an unhealthy run, a gate error, an
// invalid spec) happens on demand: docs/ci/gate.sh, the canary workflow and
// the composite action at the repository's root.

// stubAssay is an assay that logs each call's arguments (one line each) to
// $STUB_LOG and behaves as the STUB_* variables say: STUB_VALIDATE_EXIT,
// STUB_RUN_EXIT, STUB_GATE_EXIT and STUB_DRIFT_EXIT are exit statuses
// (default 0) and STUB_ERR the text a failing command prints on stderr. A
// successful run prints run r-123; a successful gate writes its --summary
// file; report writes its -o file.
const stubAssay = `#!/bin/sh
echo "$*" >>"$STUB_LOG"
cmd=$1
shift
fail() { if [ "$1" != 0 ]; then printf '%s\n' "$STUB_ERR" >&2; exit "$1"; fi; }
case $cmd in
validate) fail "${STUB_VALIDATE_EXIT:-0}" ;;
selftest) echo "no null model beats chance" ;;
run) fail "${STUB_RUN_EXIT:-0}"; echo '{"run_id": "r-123", "cases": 3}' ;;
report) while [ $# -gt 0 ]; do if [ "$1" = -o ]; then echo "<html>the report</html>" >"$2"; fi; shift; done ;;
gate)
	fail "${STUB_GATE_EXIT:-0}"
	while [ $# -gt 0 ]; do if [ "$1" = --summary ]; then echo "## assay gate: pass" >"$2"; fi; shift; done ;;
drift) echo "## assay drift: no drift"; exit "${STUB_DRIFT_EXIT:-0}" ;;
*) echo "stub assay: unexpected command $cmd" >&2; exit 1 ;;
esac
`

// stubDir writes the stub assay into a fresh directory and returns it.
func stubDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "assay"), stubAssay)
	if err := os.Chmod(filepath.Join(dir, "assay"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hostileErr is error text as a provider or a file name might produce it:
// HTML, a mention, a code fence and a terminal escape.
const hostileErr = "auth (HTTP 401): <img src=x onerror=alert(1)> @maintainers ```\n</pre>\x1b[31m# forged heading"

// checkEscaped checks that a summary shows hostileErr's text inert.
func checkEscaped(t *testing.T, summary string) {
	t.Helper()
	for _, raw := range []string{"<img", "@maintainers", "\x1b", "</pre>\x1b", "\n# forged"} {
		if strings.Contains(summary, raw) {
			t.Errorf("the summary shows %q from the error raw:\n%s", raw, summary)
		}
	}
	for _, want := range []string{"auth (HTTP 401)", "&lt;img src=x onerror=alert(1)&gt;", "&#64;maintainers", "&lt;/pre&gt;"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary should show the error's text, escaped (%q):\n%s", want, summary)
		}
	}
	if strings.Count(summary, "<pre>") != 1 || strings.Count(summary, "</pre>") != 1 {
		t.Errorf("the error text should be in one <pre> block:\n%s", summary)
	}
}

// stubScript runs docs/ci/gate.sh with the stub assay in a fresh directory.
func stubScript(t *testing.T, env []string, args ...string) (code int, dir string, calls []string) {
	t.Helper()
	dir = t.TempDir()
	bin := filepath.Join(stubDir(t), "assay")
	log := filepath.Join(t.TempDir(), "assay.log")
	script := filepath.Join(repoRoot(t), "docs", "ci", "gate.sh")
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), append([]string{"ASSAY=" + bin, "STUB_LOG=" + log, "ASSAY_POST=cat > posted.md",
		"GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "step-summary.md")}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("gate.sh: %v\n%s", err, out)
		}
		code = ee.ExitCode()
	}
	t.Logf("gate.sh exit %d:\n%s", code, out)
	b, _ := os.ReadFile(log)
	return code, dir, strings.Split(strings.TrimSpace(string(b)), "\n")
}

func calledAs(calls []string, cmd string) string {
	for _, c := range calls {
		if strings.HasPrefix(c, cmd+" ") {
			return c
		}
	}
	return ""
}

func TestCIShellScriptSummarizesErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		env      []string
		want     int
		says     string // in the summary
		notCalls string // a command gate.sh must not reach
	}{
		{"unhealthy run", []string{"STUB_RUN_EXIT=5"}, ExitUnhealthy, "the run is unhealthy", "gate"},
		{"run error", []string{"STUB_RUN_EXIT=1"}, 1, "assay run failed", "gate"},
		{"gate error", []string{"STUB_GATE_EXIT=1"}, 1, "assay gate failed", ""},
		{"gate usage error", []string{"STUB_GATE_EXIT=2"}, 2, "assay gate failed", ""},
		{"invalid spec", []string{"STUB_VALIDATE_EXIT=4"}, 4, "invalid", "run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, dir, calls := stubScript(t, append(tc.env, "STUB_ERR="+hostileErr), "assay.yaml", "baseline.json", "summary.md")
			if code != tc.want {
				t.Fatalf("gate.sh exit %d, want %d (the failing command's status)", code, tc.want)
			}
			summary := readFileT(t, filepath.Join(dir, "summary.md"))
			if !strings.Contains(summary, "error") || !strings.Contains(summary, "No verdict") || !strings.Contains(summary, tc.says) {
				t.Errorf("the summary should say the gate errored (%q) and reached no verdict:\n%s", tc.says, summary)
			}
			checkEscaped(t, summary)
			if posted := readFileT(t, filepath.Join(dir, "posted.md")); posted != summary {
				t.Errorf("the posted summary is not the summary:\n%s", posted)
			}
			if ss := readFileT(t, filepath.Join(dir, "step-summary.md")); ss != summary {
				t.Errorf("the step summary is not the summary:\n%s", ss)
			}
			if tc.notCalls != "" && calledAs(calls, tc.notCalls) != "" {
				t.Errorf("gate.sh went on to assay %s after the failure: %q", tc.notCalls, calls)
			}
		})
	}

	// A pull-request comment holds 65,536 characters: a long error is cut.
	t.Run("long error", func(t *testing.T) {
		code, dir, _ := stubScript(t, []string{"STUB_RUN_EXIT=1", "STUB_ERR=" + strings.Repeat("provider said no. ", 5000)}, "assay.yaml", "baseline.json", "summary.md")
		summary := readFileT(t, filepath.Join(dir, "summary.md"))
		if code != 1 || len(summary) > 61000 || !strings.Contains(summary, "provider said no.") || !strings.Contains(summary, "cut at 60,000 bytes") {
			t.Errorf("a 90 KB error: exit %d, a summary of %d bytes; want exit 1 and the error cut to 60,000 bytes, saying so", code, len(summary))
		}
	})

	t.Run("script usage", func(t *testing.T) {
		code, dir, _ := stubScript(t, nil, "only-a-spec.yaml")
		if code != ExitUsage {
			t.Fatalf("gate.sh with one argument: exit %d, want %d", code, ExitUsage)
		}
		summary := readFileT(t, filepath.Join(dir, "gate-summary.md"))
		if !strings.Contains(summary, "usage: gate.sh") {
			t.Errorf("the summary of a wrong call should give the usage:\n%s", summary)
		}
	})
}

func TestCIShellScriptPassesTargetsAndWritesReport(t *testing.T) {
	t.Parallel()
	code, dir, calls := stubScript(t, []string{"ASSAY_REPORT=report.html", "ASSAY_GATE_FLAGS=--strict"},
		"--targets", "bot,other", "assay.yaml", "baseline.json", "summary.md")
	if code != 0 {
		t.Fatalf("gate.sh exit %d, want 0", code)
	}
	if run := calledAs(calls, "run"); run != "run assay.yaml --json --targets bot,other" {
		t.Errorf("assay run was called as %q, want the targets passed through", run)
	}
	if g := calledAs(calls, "gate"); g != "gate r-123 --baseline baseline.json --summary summary.md --targets bot,other --strict" {
		t.Errorf("assay gate was called as %q, want the run gated on the same targets", g)
	}
	if r := calledAs(calls, "report"); r != "report r-123 --format html -o report.html" {
		t.Errorf("assay report was called as %q, want the run's HTML report in report.html", r)
	}
	if s := readFileT(t, filepath.Join(dir, "summary.md")); s != "## assay gate: pass\n" {
		t.Errorf("a passing gate's summary should be assay gate's own: %q", s)
	}
}

// A scheduled canary checks the run's health before drift: an unhealthy run
// (assay run exit 5: the provider was down, the key expired) fails the job
// saying so and never reaches drift, which would call an outage a model change.
func TestCICanaryWorkflowSkipsDriftOnUnhealthyRun(t *testing.T) {
	t.Parallel()
	wf := filepath.Join(repoRoot(t), "docs", "ci", "canary.yml")
	exprs := map[string]string{"runner.temp": t.TempDir(), "secrets.OPENAI_API_KEY": "not-a-real-token"}
	night := func(env ...string) (*ciRunner, []string) {
		log := filepath.Join(t.TempDir(), "assay.log")
		var wfv workflow
		if err := yaml.Unmarshal([]byte(readFileT(t, wf)), &wfv); err != nil {
			t.Fatal(err)
		}
		job := wfv.Jobs["canary"]
		c := newCIRunner(t, t.TempDir(), stubDir(t), exprs)
		c.env = append(env, "STUB_LOG="+log, "STUB_ERR=auth (HTTP 401) on every call")
		c.runSteps(job.Steps, wfv.Env, job.Env)
		b, _ := os.ReadFile(log)
		return c, strings.Split(strings.TrimSpace(string(b)), "\n")
	}

	c, calls := night("STUB_RUN_EXIT=5")
	if c.ok {
		t.Errorf("the canary job passed on an unhealthy run")
	}
	checkPinned(t, c)
	if d := calledAs(calls, "drift"); d != "" {
		t.Errorf("drift ran on an unhealthy run: %q", d)
	}
	if s := c.read(c.stepSummary); !strings.Contains(s, "unhealthy") || !strings.Contains(s, "not drift") {
		t.Errorf("the job summary should say the run was unhealthy, not drift:\n%s", s)
	}

	c, calls = night()
	if !c.ok {
		t.Errorf("the canary job failed on a healthy run without drift")
	}
	if d := calledAs(calls, "drift"); !strings.HasPrefix(d, "drift evals/canary/baseline.json r-123 ") {
		t.Errorf("drift was called as %q, want the canary baseline against the night's run r-123", d)
	}
	if s := c.read(c.stepSummary); !strings.Contains(s, "no drift") {
		t.Errorf("the job summary should show drift's report:\n%s", s)
	}

	c, _ = night("STUB_DRIFT_EXIT=3")
	if c.ok {
		t.Errorf("the canary job passed a drifted model")
	}
}

// compositeAction is the part of action.yml the tests read.
type compositeAction struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Inputs      map[string]struct {
		Description string `yaml:"description"`
		Required    bool   `yaml:"required"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string   `yaml:"using"`
		Steps []ciStep `yaml:"steps"`
	} `yaml:"runs"`
}

// runAction runs action.yml's steps in dir with the given inputs (the rest
// take their defaults), as a runner runs a composite action.
func runAction(t *testing.T, dir, assayDir string, inputs map[string]string, env ...string) *ciRunner {
	t.Helper()
	var a compositeAction
	path := filepath.Join(repoRoot(t), "action.yml")
	if err := yaml.Unmarshal([]byte(readFileT(t, path)), &a); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if a.Runs.Using != "composite" || a.Name == "" || a.Description == "" {
		t.Fatalf("action.yml is not a composite action with a name and a description: %+v", a)
	}
	if out := a.Outputs["exit-code"]; strings.TrimSpace(out.Description) == "" || out.Value != "${{ steps.gate.outputs.exit-code }}" {
		t.Errorf("action.yml: output exit-code should be documented and be the gate step's exit-code: %+v", out)
	}
	exprs := ghExprs()
	for name, in := range a.Inputs {
		if strings.TrimSpace(in.Description) == "" {
			t.Errorf("action.yml: input %s is not documented", name)
		}
		v, given := inputs[name]
		if !given {
			if in.Required {
				t.Fatalf("action.yml: required input %s not given", name)
			}
			v = in.Default
			if strings.HasPrefix(v, "${{") {
				v = (&ciRunner{t: t, exprs: exprs}).subst(v)
			}
		}
		exprs["inputs."+name] = v
	}
	for name := range inputs {
		if _, ok := a.Inputs[name]; !ok {
			t.Fatalf("action.yml has no input %s", name)
		}
	}
	c := newCIRunner(t, dir, assayDir, exprs)
	c.env = append(env, "GITHUB_ACTION_PATH="+repoRoot(t))
	for _, st := range a.Runs.Steps {
		if st.Uses == "" && st.Shell != "bash" {
			t.Errorf("action.yml: step %q must say shell: bash (a composite action's run steps need a shell)", st.Name)
		}
	}
	c.runSteps(a.Runs.Steps)
	return c
}

func TestCIActionGatesAgainstMock(t *testing.T) {
	t.Parallel()
	r := newCIRepo(t)
	in := map[string]string{"spec": "evals/triage/assay.yaml", "baseline": "evals/triage/baseline.json"}

	c := runAction(t, r.dir, filepath.Dir(r.bin), in)
	if !c.ok || c.outputs["gate"]["exit-code"] != "0" {
		t.Fatalf("the action failed on an unchanged eval (exit-code %q)", c.outputs["gate"]["exit-code"])
	}
	checkPinned(t, c)
	summary := readFileT(t, filepath.Join(r.dir, "gate-summary.md"))
	if comment := c.comment(); comment != summary || !strings.Contains(summary, "bot") {
		t.Errorf("the action should comment the gate's summary naming the target:\ncomment %q\nsummary %q", comment, summary)
	}
	if len(c.uploaded) != 1 || c.uploaded[0] != "assay-report.html" {
		t.Errorf("uploaded %q, want the HTML report", c.uploaded)
	}

	r.regress(t)
	c = runAction(t, r.dir, filepath.Dir(r.bin), in)
	if c.ok || c.outputs["gate"]["exit-code"] != "3" {
		t.Fatalf("a regression: the action's step succeeded %v with exit-code %q, want a failure with 3", c.ok, c.outputs["gate"]["exit-code"])
	}
	if comment := c.comment(); !strings.Contains(strings.ToLower(comment), "fail") {
		t.Errorf("the comment on a regression should say the gate failed:\n%s", comment)
	}

	if err := os.Remove(r.baseline); err != nil {
		t.Fatal(err)
	}
	c = runAction(t, r.dir, filepath.Dir(r.bin), in)
	if c.ok || c.outputs["gate"]["exit-code"] != "1" {
		t.Fatalf("a gate error: the action's step succeeded %v with exit-code %q, want a failure with 1", c.ok, c.outputs["gate"]["exit-code"])
	}
	if comment := c.comment(); !strings.Contains(comment, "error") || !strings.Contains(comment, "baseline.json") {
		t.Errorf("the comment on a gate error should say so and name the baseline:\n%s", comment)
	}
}

func TestCIActionInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(t.TempDir(), "assay.log")
	c := runAction(t, dir, stubDir(t), map[string]string{"spec": "s.yaml", "baseline": "b.json",
		"targets": "bot", "gate-flags": "--strict", "comment": "false", "version": "v9.8.7", "summary": "out.md", "report": ""},
		"STUB_LOG="+log)
	if !c.ok {
		t.Fatal("the action failed")
	}
	if got := c.read(c.goLog); got != "install github.com/assay-eval/assay/cmd/assay@v9.8.7\n" {
		t.Errorf("the version input: go ran as %q", got)
	}
	calls := strings.Split(c.read(log), "\n")
	if g := calledAs(calls, "gate"); g != "gate r-123 --baseline b.json --summary out.md --targets bot --strict" {
		t.Errorf("assay gate was called as %q", g)
	}
	if r := calledAs(calls, "report"); r != "" {
		t.Errorf("report: \"\" should write no report, but assay ran %q", r)
	}
	if comment := c.comment(); comment != "" {
		t.Errorf("comment: false should post nothing, but gh posted %q", comment)
	}
	if s := readFileT(t, filepath.Join(dir, "out.md")); !strings.Contains(s, "pass") {
		t.Errorf("the summary input: out.md holds %q", s)
	}

	c = runAction(t, t.TempDir(), stubDir(t), map[string]string{"spec": "s.yaml", "baseline": "b.json"},
		"STUB_LOG="+log, "STUB_RUN_EXIT=5", "STUB_ERR="+hostileErr)
	if c.ok || c.outputs["gate"]["exit-code"] != "5" {
		t.Fatalf("an unhealthy run: the action succeeded %v with exit-code %q, want a failure with 5", c.ok, c.outputs["gate"]["exit-code"])
	}
	comment := c.comment()
	if !strings.Contains(comment, "unhealthy") {
		t.Errorf("the comment on an unhealthy run should say so:\n%s", comment)
	}
	checkEscaped(t, comment)
}

// The kit's shell (gate.sh and every run: step of the workflows and the
// action) is shellcheck-clean, when shellcheck is installed.
func TestCIShellcheck(t *testing.T) {
	t.Parallel()
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed")
	}
	root := repoRoot(t)
	files := []string{filepath.Join(root, "docs", "ci", "gate.sh")}
	dir := t.TempDir()
	addSteps := func(name string, steps []ciStep) {
		for i, st := range steps {
			if st.Run == "" {
				continue
			}
			if strings.Contains(st.Run, "${{") {
				t.Errorf("%s step %q: an expression inside run: is pasted into the script; pass it through env:", name, st.Name)
			}
			f := filepath.Join(dir, fmt.Sprintf("%s-%d.sh", name, i))
			writeFile(t, f, "#!/usr/bin/env bash\nset -e\n"+st.Run)
			files = append(files, f)
		}
	}
	for _, wf := range []string{"github-actions.yml", "canary.yml"} {
		var w workflow
		if err := yaml.Unmarshal([]byte(readFileT(t, filepath.Join(root, "docs", "ci", wf))), &w); err != nil {
			t.Fatal(err)
		}
		for job, j := range w.Jobs {
			addSteps(wf+"-"+job, j.Steps)
		}
	}
	var a compositeAction
	if err := yaml.Unmarshal([]byte(readFileT(t, filepath.Join(root, "action.yml"))), &a); err != nil {
		t.Fatal(err)
	}
	addSteps("action", a.Runs.Steps)
	out, err := exec.Command(sc, append([]string{"-s", "bash"}, files...)...).CombinedOutput()
	if err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}
