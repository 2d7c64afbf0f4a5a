package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// A CEL scorer that amplifies hostile output (raw.replace("a", raw) on
// 100 KB asks for 10 GB) is a loud scorer_error for that case alone: the
// run finishes and every result, that one included, is stored and scored.
func TestCELAmplificationFailsOneCaseAndTheRunFinishes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "target.sh")
	writeFile(t, script, `in=$(cat)
case "$in" in
*'"word-2"'*) printf '{"output":"'; head -c 100000 /dev/zero | tr '\0' a; printf '"}\n' ;;
*) echo '{"output":"ok"}' ;;
esac
`)
	spec := echoTask(t, dir, 5, `  - {name: e, provider: exec, command: ["sh", "`+script+`"]}`)
	b := readFileT(t, spec)
	writeFile(t, spec, strings.Replace(b, "run: {", "  - {name: amp, type: cel, expr: 'raw.replace(\"a\", raw).size() > 0'}\nrun: {", 1))
	db := filepath.Join(dir, "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}
	run := runJSON(t, e, "run", spec)
	if run.Status != "complete" || run.Stored != 5 || run.Total != 5 {
		t.Fatalf("run: status %q, %d of %d stored; want complete, 5 of 5", run.Status, run.Stored, run.Total)
	}

	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	amp := map[string]record.Score{}
	err = st.Scores(ctx, run.RunID, 1, func(s record.Score) error {
		if s.Scorer == "amp" {
			amp[s.CaseID] = s
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(amp) != 5 {
		t.Fatalf("%d cases scored by amp, want 5", len(amp))
	}
	for id, s := range amp {
		if id == "c2" {
			if s.Pass || s.Shape != "loud" || s.Kind != "scorer_error" || !strings.Contains(s.Reason, "replace would build at least") {
				t.Errorf("c2 (100 KB output): %+v; want a loud scorer_error naming the bound", s)
			}
			continue
		}
		if !s.Pass {
			t.Errorf("%s: %+v; want a pass", id, s)
		}
	}
}

// epochs beyond what can be run is a spec problem (exit 4) at its
// position, naming the allowed range; so is --epochs (a usage error).
func TestEpochsOutOfRange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := echoTask(t, dir, 3, `  - {name: e, provider: exec, command: ["true"]}`)
	b := readFileT(t, spec)
	writeFile(t, spec, strings.Replace(b, "run: {", "run: {epochs: 9223372036854775807, ", 1))
	e := cliEnv{env: map[string]string{"ASSAY_DB": filepath.Join(dir, "a.db")}}
	inv := runCLI(t, e, "run", spec)
	want := spec + ":8:15: run.epochs must be between 1 and 1000, got 9223372036854775807"
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, want) {
		t.Errorf("exit %d, stderr %s; want exit %d and %q", inv.code, inv.stderr, ExitInvalid, want)
	}
	writeFile(t, spec, b)
	inv = runCLI(t, e, "run", spec, "--epochs", "9223372036854775807")
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, "--epochs must be between 1 and 1000 (got 9223372036854775807)") {
		t.Errorf("--epochs: exit %d, stderr %s", inv.code, inv.stderr)
	}
	for _, w := range []string{"0", "1025", "9223372036854775807"} {
		inv = runCLI(t, e, "rescore", "latest", "--workers", w)
		if inv.code != ExitUsage || !strings.Contains(inv.stderr, "--workers must be between 1 and 1024") {
			t.Errorf("rescore --workers %s: exit %d, stderr %s", w, inv.code, inv.stderr)
		}
	}
}
