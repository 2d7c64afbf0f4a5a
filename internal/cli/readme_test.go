package cli

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// quickstartBlocks returns the code blocks of the README's Quickstart section.
func quickstartBlocks(t *testing.T, root string) []string {
	t.Helper()
	return sectionBlocks(t, root, "Quickstart")
}

// sectionBlocks returns the code blocks of the README's "## heading" section.
func sectionBlocks(t *testing.T, root, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(heading) + `\s*$`).FindStringIndex(s)
	if i == nil {
		t.Fatalf("README.md has no '## %s' section", heading)
	}
	sec := s[i[1]:]
	if j := regexp.MustCompile(`(?m)^## `).FindStringIndex(sec); j != nil {
		sec = sec[:j[0]]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```[a-z]*\n(.*?)```").FindAllStringSubmatch(sec, -1) {
		blocks = append(blocks, strings.TrimSpace(m[1]))
	}
	return blocks
}

// The Quickstart has two commands: the first runs the bundled example, the
// second is the test command .ci/run runs.
func TestReadmeQuickstartShape(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	blocks := quickstartBlocks(t, root)
	if len(blocks) != 2 {
		t.Fatalf("Quickstart has %d code blocks, want 2", len(blocks))
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(blocks[1]) + `\s*$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command %q", blocks[1])
	}
}

// The first Quickstart command works on a fresh copy of the repository with
// no ../shared beside it, no API key in the environment and no network use
// (the example replays recorded outputs).
func TestReadmeQuickstartRunsOnFreshClone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary in a fresh copy")
	}
	root := repoRoot(t)
	blocks := quickstartBlocks(t, root)
	if len(blocks) == 0 {
		t.Fatal("no Quickstart command")
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	dst := stableDir(t, "assay") // its packages stay in the build cache between runs
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		writeFile(t, filepath.Join(dst, f), string(b))
	}
	// The binary the Quickstart builds is kept between runs, outside the
	// copy, and put back before it runs: its `go build` then relinks only
	// when something it is built from changed (the go command compares the
	// binary's build ID), as in a user's checkout built twice.
	kept, unlock, err := keptDir(root, "quickstart-build")
	if err != nil {
		t.Fatal(err)
	}
	keptBin, builtBin := filepath.Join(kept, "assay"), filepath.Join(dst, "assay")
	if err := os.Rename(keptBin, builtBin); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	t.Cleanup(func() { // before stableDir's cleanup removes the copy
		os.Rename(builtBin, keptBin)
		unlock()
	})
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", blocks[0])
	cmd.Dir = dst
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasPrefix(k, "ASSAY_") {
			continue
		}
		env = append(env, kv)
	}
	// Any attempt to reach the network through a proxy-aware client fails.
	cmd.Env = append(env, "HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("quickstart failed: %v\n%s", err, got)
	}
	text := string(got)
	for _, want := range []string{"model-a", "model-b", "ticket-triage", "complete"} {
		if !strings.Contains(text, want) {
			t.Errorf("quickstart output lacks %q:\n%s", want, text)
		}
	}

	// The other blocks run after the Quickstart, in the same checkout and
	// in this order, and every command in each succeeds (set -e). Any
	// attempt to reach the network through a proxy-aware client fails; the
	// load block's mock is on loopback.
	block := func(section, what string, wants ...string) {
		t.Helper()
		blocks := sectionBlocks(t, root, section)
		if len(blocks) == 0 {
			t.Fatalf("'%s' has no command block", section)
		}
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", blocks[0])
		cmd.Dir = dst
		cmd.Env = append(env, "HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1")
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the README's %s block failed: %v\n%s", what, err, got)
		}
		for _, want := range wants {
			if !strings.Contains(string(got), want) {
				t.Errorf("the %s block's output lacks %q:\n%s", what, want, got)
			}
		}
	}
	block("Keeping the choice honest", "integrity", "dataset health", "sound", "PASS")
	// On the bundled log: its planted drop is flagged and its failures
	// would become cases.
	block("Production traffic in the loop", "production-traffic", "560", "weighted", "drop flagged: bot-b 2026-W48", "would add")
	// When the newest run is the traffic sample's: its commands find the
	// quickstart's run through its spec.
	block("Choosing from a benchmark: difficulty and mismatch", "difficulty",
		"rasch fit, 26 cases × 2 targets", "Pass rate per tier", "re-weighted", "Any axis rated high: the benchmark may shortlist but not select.")
	// A mock with a capacity, three steps, a knee.
	block("Latency and cost under load", "load", "Knees", "local-8b", "complete: assay report")
	// A throwaway PostgreSQL (.ci/postgres): the history so far copied into
	// it, a worker, a distributed run. CI installs the server; elsewhere the
	// block needs Debian's postgresql package.
	if pgServerInstalled() {
		block("A team's store and workers on many machines", "team", "copied from .assay/assay.db", "complete: 52 results stored (0 errors)", "4 jobs (0 failed), 52 results stored")
	} else if os.Getenv("CI") == "true" {
		t.Error("the README's team block needs PostgreSQL's server (Debian's postgresql package), which CI installs")
	}
}

// pgServerInstalled reports whether Debian's PostgreSQL server binaries,
// which .ci/postgres runs, are on this machine.
func pgServerInstalled() bool {
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(m) > 0
}

// The README and docs/ are all a user has: they never send the reader to
// files outside the repository (the developers' ../shared notes).
func TestDocsStayInTheRepository(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".sh")) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`\.\./shared|DESIGN\.md|ENGINE\.md|STYLE\.md`)
	for _, f := range files {
		for i, line := range strings.Split(readFileT(t, f), "\n") {
			if m := bad.FindString(line); m != "" {
				rel, _ := filepath.Rel(root, f)
				t.Errorf("%s:%d points users at %s, which they do not have: %s", rel, i+1, m, strings.TrimSpace(line))
			}
		}
	}
}
