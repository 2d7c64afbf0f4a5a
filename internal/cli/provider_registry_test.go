package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/provider/builtin"
	"github.com/assay-eval/assay/internal/provider/echotest"
	"github.com/assay-eval/assay/internal/provider/registry"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// runWith runs assay in-process with the providers of reg.
func runWith(t *testing.T, reg *registry.Registry, args ...string) invocation {
	t.Helper()
	var out, errb bytes.Buffer
	g := &Globals{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Now: time.Now,
		Providers: reg,
	}
	code := Execute(context.Background(), args, g)
	return invocation{code, out.String(), errb.String()}
}

// A provider outside assay is one package (echotest) and one registration
// line: spec checks its targets from its description (required keys, its
// own extra check, keys it does not read, the judge rule), and validate
// and run go through it like any other.
func TestRunWithARegisteredTestProvider(t *testing.T) {
	t.Parallel()
	reg := registry.New(append(builtin.Factories(), echotest.Factory())...)

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), "{\"id\":\"1\",\"q\":\"paris\",\"a\":\"PARIS\"}\n{\"id\":\"2\",\"q\":\"rome\",\"a\":\"ROME\"}\n")
	spec := filepath.Join(dir, "assay.yaml")
	writeFile(t, spec, `dataset: {path: cases.jsonl, id: id, expected: a}
prompt: {user: "{{.q}}"}
targets:
  - {name: loud, provider: echo, model: upper}
  - {name: quiet, provider: echo, model: same}
scorers: [{type: equals}]
`)
	if inv := runWith(t, reg, "validate", spec); inv.code != ExitOK {
		t.Fatalf("validate: exit %d: %s%s", inv.code, inv.stdout, inv.stderr)
	}
	db := filepath.Join(dir, "assay.db")
	inv := runWith(t, reg, "run", spec, "--db", db, "--json")
	var s runSummary
	if err := json.Unmarshal([]byte(inv.stdout), &s); err != nil || inv.code != ExitOK {
		t.Fatalf("run: exit %d, stdout %q, stderr %s", inv.code, inv.stdout, inv.stderr)
	}
	if s.Status != record.StatusComplete || s.Stored != 4 {
		t.Fatalf("run: %+v", s)
	}
	st, err := sqlite.OpenExisting(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	passed := map[string]int{}
	if err := st.Scores(context.Background(), s.RunID, 1, func(sc record.Score) error {
		if sc.Pass {
			passed[sc.Target]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if passed["loud"] != 2 || passed["quiet"] != 0 {
		t.Errorf("passes per target %v, want loud 2 (it upper-cases), quiet 0", passed)
	}

	// Spec problems come from the provider's description, at FILE:LINE:COL.
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, `dataset: {path: cases.jsonl, id: id, expected: a}
prompt: {user: "{{.q}}"}
targets:
  - {name: a, provider: echo, model: shout}
  - {name: b, provider: echo, command: [x]}
  - {name: c, provider: echo}
scorers: [{type: judge, target: a, rubric: r}]
`)
	inv = runWith(t, reg, "validate", bad)
	if inv.code != ExitInvalid {
		t.Fatalf("validate bad: exit %d: %s%s", inv.code, inv.stdout, inv.stderr)
	}
	for _, want := range []string{
		`bad.yaml:4:38: targets[0].model: provider echo has no model "shout" (echo models are: same, upper)`,
		`bad.yaml:5:5: targets[1].model is required for provider echo (the model name the server expects)`,
		`bad.yaml:5:31: targets[1].command is set but the provider is echo (command applies to provider exec only)`,
		`bad.yaml:6:5: targets[2].model is required for provider echo`,
		`judge scorer: target "a" is an echo target, which repeats its prompt, it gives no verdicts (a judge must be a model: an openai, anthropic or exec target)`,
	} {
		if !strings.Contains(inv.stderr, want) {
			t.Errorf("validate bad: missing %q in\n%s", want, inv.stderr)
		}
	}

	// Without the registration line, echo is an unknown provider, and the
	// hint lists the registry's names.
	inv = runWith(t, builtin.Registry(), "validate", spec)
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, `unknown provider "echo" (supported providers are: openai, anthropic, exec, replay)`) {
		t.Errorf("validate without echo: exit %d: %s", inv.code, inv.stderr)
	}
}
