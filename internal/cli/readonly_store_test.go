package cli

import (
	"github.com/assay-eval/assay/internal/store/storetest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store on a read-only mount or CI cache can be analysed: report, gate,
// baseline export, compare, diff, drift and plan read it without writing a
// byte, and rescore says why it cannot write instead of half-working.
func TestReadOnlyStoreIsReadable(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	for range 2 {
		if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db); inv.code != 0 {
			t.Fatalf("run: %s", inv.stderr)
		}
	}
	runs := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "json")
	if runs.code != 0 {
		t.Fatalf("report: %s", runs.stderr)
	}
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}

	ro := filepath.Join(storetest.ReadOnly(t, dir), "assay.db")
	if f, err := os.OpenFile(ro, os.O_WRONLY, 0); err == nil {
		f.Close()
		t.Fatalf("%s is still writable", ro)
	}

	out := filepath.Join(t.TempDir(), "baseline.json")
	for _, args := range [][]string{
		{"report", "latest", "--format", "json"},
		{"report", "latest", "--format", "html", "-o", filepath.Join(t.TempDir(), "r.html")},
		{"baseline", "export", "latest", "-o", out},
		{"gate", "latest", "--baseline", out},
		{"compare", "latest", "latest"},
		{"diff", "latest", "latest"},
		{"drift", "latest", "latest"},
		{"plan", "latest"},
	} {
		inv := runCLI(t, cliEnv{}, append(args, "--db", ro)...)
		if inv.code != 0 {
			t.Errorf("%s on a read-only store: exit %d\n%s", strings.Join(args, " "), inv.code, inv.stderr)
		}
	}
	inv := runCLI(t, cliEnv{}, "rescore", "latest", "--db", ro)
	if inv.code == 0 || !strings.Contains(inv.stderr, "read") {
		t.Errorf("rescore on a read-only store: exit %d, stderr %q; want an error saying it is read-only", inv.code, inv.stderr)
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("the read-only store's file changed")
	}
}

// Where there is no store, a command that reads one says so and creates
// nothing.
func TestNoStoreHere(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, ".assay", "assay.db")
	for _, cmd := range []string{"report", "gate", "rescore"} {
		args := []string{cmd, "latest", "--db", db}
		if cmd == "gate" {
			args = append(args, "--baseline", "latest")
		}
		inv := runCLI(t, cliEnv{}, args...)
		if inv.code != ExitErr || !strings.Contains(inv.stderr, "no store here") {
			t.Errorf("%s without a store: exit %d, stderr %q", cmd, inv.code, inv.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".assay")); !os.IsNotExist(err) {
		t.Errorf("a command that reads created %s", filepath.Join(dir, ".assay"))
	}
}
