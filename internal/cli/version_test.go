package cli

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/engine"
	"github.com/assay-eval/assay/internal/longtest"
)

// A run records the commit of the repository holding its spec, marked dirty
// when files beside the spec have uncommitted changes, and nothing outside
// a repository.
func TestRunRecordsGitCommit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	ctx := context.Background()
	if got := engine.GitCommit(ctx, dir); got != "" {
		t.Errorf("outside a repository: commit %q, want none", got)
	}
	git("init", "-q")
	spec := echoTask(t, dir, 3, `  - {name: e, provider: exec, command: ["cat"]}`)
	git("add", ".")
	git("commit", "-q", "-m", "eval")
	head := git("rev-parse", "HEAD")

	db := filepath.Join(t.TempDir(), "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}
	runJSON(t, e, "run", spec)
	rep := runCLI(t, e, "report", "latest", "--format", "json")
	if !strings.Contains(rep.stdout, `"git_commit": "`+head+`"`) {
		t.Errorf("clean tree: the report does not carry commit %s:\n%.600s", head, rep.stdout)
	}
	if !regexp.MustCompile(`"scorers_hash": "sha256:[0-9a-f]{64}"`).MatchString(rep.stdout) || !strings.Contains(rep.stdout, `"assay_version": "`) {
		t.Errorf("the report lacks the scorers hash or assay version:\n%.600s", rep.stdout)
	}

	writeFile(t, filepath.Join(dir, "cases.jsonl"), readFileT(t, filepath.Join(dir, "cases.jsonl"))+`{"id":"new","say":"x","expected":"x"}`+"\n")
	if got := engine.GitCommit(ctx, dir); got != head+"-dirty" {
		t.Errorf("with an uncommitted change: commit %q, want %s-dirty", got, head)
	}
}

// A release build's stamped version is what --version prints and what every
// run records.
func TestStampedVersionIsRecorded(t *testing.T) {
	t.Parallel()
	longtest.Skip(t)        // links a release build of assay: seconds of CPU
	bin := releaseBinary(t) // linked with -X …buildVersion=testBuildVersion
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(out), testBuildVersion) {
		t.Fatalf("--version: %q, %v", out, err)
	}
	dir := t.TempDir()
	spec := echoTask(t, dir, 2, `  - {name: e, provider: exec, command: ["cat"]}`)
	db := filepath.Join(dir, "a.db")
	// cat's echo is no reply of the exec protocol: every call fails and the
	// run exits 5 (unhealthy), recorded all the same.
	if out, err := exec.Command(bin, "run", spec, "--db", db).CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != ExitUnhealthy {
			t.Fatalf("run: %v\n%s", err, out)
		}
	}
	out, err = exec.Command(bin, "report", "latest", "--format", "json", "--db", db).Output()
	if err != nil || !strings.Contains(string(out), `"assay_version": "`+testBuildVersion+`"`) {
		t.Errorf("the run does not record the stamped version: %v\n%.500s", err, out)
	}
}
