package cli

import (
	"context"
	"maps"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// isoDirs are the directories of one isolation test: the spec's, the
// TMPDIR assay is given (the calls' directories are made there), and one
// for the store and logs.
type isoDirs struct{ spec, tmp, out string }

func newIsoDirs(t *testing.T) isoDirs {
	t.Helper()
	root := t.TempDir()
	d := isoDirs{filepath.Join(root, "spec"), filepath.Join(root, "tmp"), filepath.Join(root, "out")}
	for _, dir := range []string{d.spec, d.tmp, d.out} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// snapshot maps each file under dir to its content.
func isoSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// storedRun reads every result and primary score of a run.
func isoStoredRun(t *testing.T, db, runID string) (map[record.Key]record.Result, map[record.Key]record.Score) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	results := map[record.Key]record.Result{}
	if err := st.Results(ctx, runID, func(r record.Result) error { results[r.Key()] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	scores := map[record.Key]record.Score{}
	err = st.Scores(ctx, runID, 1, func(s record.Score) error {
		if s.Primary {
			scores[record.Key{CaseID: s.CaseID, Target: s.Target, Epoch: s.Epoch}] = s
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return results, scores
}

// isoCheatScript answers each case with the word it is asked to say (right on
// two cases in three: echoTask expects "other" on every third) and, on every
// call, plants answers where a grader that read files would find them: a
// whole dataset expecting its own answers as ./cases.jsonl (where the spec's
// dataset would be if it ran beside the spec), ./expected.json,
// ../answers.txt and $HOME/answers.txt. It logs its working directory, and
// its environment and the request it got, to files beside the path named
// by the variable CHEAT_LOG.
const isoCheatScript = `req=$(cat)
say=$(printf '%s' "$req" | sed -n 's/.*"say":"\([^"]*\)".*/\1/p')
i=1
: > cases.jsonl
while [ $i -le 12 ]; do
  printf '{"id":"c%d","say":"word-%d","expected":"word-%d"}\n' $i $i $i >> cases.jsonl
  i=$((i+1))
done
printf '{"c3":"word-3","c6":"word-6"}' > expected.json
printf 'word-3\nword-6\nword-9\nword-12\n' > ../answers.txt
printf 'word-3\n' > "$HOME/answers.txt"
printf '%s\n' "$PWD" >> "$CHEAT_LOG"
env > "$CHEAT_LOG.env.$say"
printf '%s' "$req" > "$CHEAT_LOG.req.$say"
printf '{"output":"%s"}\n' "$say"
`

// A candidate that writes files where a grader might read them — even a
// whole replacement dataset — changes nothing: what it wrote lands in its
// call's throwaway directory (removed afterwards), the spec's directory is
// byte for byte as it was, and the score is the honest one, because scorers
// read only the recorded output.
func TestIsolationCandidateCannotPlantAnswers(t *testing.T) {
	t.Parallel()
	d := newIsoDirs(t)
	writeFile(t, filepath.Join(d.spec, "cheat.sh"), isoCheatScript)
	path := echoTask(t, d.spec, 12, `  - {name: cheat, provider: exec, command: ["sh", "cheat.sh"], env: [CHEAT_LOG], limits: {concurrency: 3}}`)
	before := isoSnapshot(t, d.spec)
	parentBefore := isoEntries(t, filepath.Dir(d.spec))

	log := filepath.Join(d.out, "pwd.log")
	db := filepath.Join(d.out, "assay.db")
	e := cliEnv{env: map[string]string{"CHEAT_LOG": log, "TMPDIR": d.tmp, "PATH": os.Getenv("PATH")}}
	s := runJSON(t, e, "run", path, "--db", db)
	if s.Status != "complete" || s.Stored != 12 || s.Errors != 0 {
		t.Fatalf("summary %+v: want 12 results and no errors", s)
	}

	// The score is the honest one: 8 of 12 (c3, c6, c9, c12 expect "other").
	_, scores := isoStoredRun(t, db, s.RunID)
	var passed []string
	for k, sc := range scores {
		if sc.Pass {
			passed = append(passed, k.CaseID)
		}
	}
	slices.Sort(passed)
	want := []string{"c1", "c10", "c11", "c2", "c4", "c5", "c7", "c8"}
	if !slices.Equal(passed, want) {
		t.Errorf("passed %v; want exactly %v (the planted answers must not count)", passed, want)
	}

	// Nothing landed beside the spec or above it.
	if after := isoSnapshot(t, d.spec); !maps.Equal(before, after) {
		t.Errorf("the spec's directory changed during the run:\nbefore %v\nafter  %v", slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
	}
	if got := isoEntries(t, filepath.Dir(d.spec)); !slices.Equal(got, parentBefore) {
		t.Errorf("the spec's parent holds %v after the run; want %v", got, parentBefore)
	}

	// Every call ran in its own directory under assay's TMPDIR, and each is gone.
	lines := strings.Fields(readFileT(t, log))
	if len(lines) != 12 {
		t.Fatalf("%d calls logged a working directory; want 12", len(lines))
	}
	seen := map[string]bool{}
	for _, wd := range lines {
		if !strings.HasPrefix(wd, d.tmp+string(filepath.Separator)) {
			t.Errorf("a call ran in %s, not in its own directory under %s", wd, d.tmp)
		}
		if seen[wd] {
			t.Errorf("two calls shared %s", wd)
		}
		seen[wd] = true
		if _, err := os.Stat(wd); !os.IsNotExist(err) {
			t.Errorf("the call's directory %s is still there (%v)", wd, err)
		}
	}
	if left := isoEntries(t, d.tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR after the run: %v", left)
	}
}

// The environment is clean: a secret in assay's environment (or in the
// process's) that the spec does not name is not visible to the program;
// the one it names is. HOME is the call's own directory.
func TestIsolationCleanEnvironment(t *testing.T) {
	t.Setenv("ASSAY_ISO_PROCESS_SECRET", "process-secret-4821")
	d := newIsoDirs(t)
	writeFile(t, filepath.Join(d.spec, "cheat.sh"), isoCheatScript)
	path := echoTask(t, d.spec, 3, `  - {name: cheat, provider: exec, command: ["sh", "cheat.sh"], env: [CHEAT_LOG, PIPELINE_TOKEN]}`)
	log := filepath.Join(d.out, "pwd.log")
	e := cliEnv{env: map[string]string{
		"CHEAT_LOG":      log,
		"PIPELINE_TOKEN": "named-token-1177",
		"OPENAI_API_KEY": "sk-unnamed-9931",
		"HOME":           "/home/assay-user",
		"TMPDIR":         d.tmp,
		"PATH":           os.Getenv("PATH"),
	}}
	runJSON(t, e, "run", path, "--db", filepath.Join(d.out, "assay.db"))
	env := readFileT(t, log+".env.word-1")
	for _, line := range []string{"PIPELINE_TOKEN=named-token-1177", "CHEAT_LOG=" + log, "LANG=C.UTF-8", "ASSAY_SPEC_DIR=" + d.spec} {
		if !slices.Contains(strings.Split(env, "\n"), line) {
			t.Errorf("the program's environment lacks %s:\n%s", line, env)
		}
	}
	for _, secret := range []string{"sk-unnamed-9931", "process-secret-4821", "/home/assay-user"} {
		if strings.Contains(env, secret) {
			t.Errorf("the program saw %q, which the spec does not name:\n%s", secret, env)
		}
	}
	if !strings.Contains(env, "HOME="+d.tmp+string(filepath.Separator)) {
		t.Errorf("HOME is not the call's own directory under %s:\n%s", d.tmp, env)
	}
	// Nor does it get the answer key: the dataset's expected field is
	// withheld from the request's vars.
	req := readFileT(t, log+".req.word-1")
	if !strings.Contains(req, `"say":"word-1"`) || strings.Contains(req, `"expected"`) {
		t.Errorf("the request should carry the case's say field and not its expected field: %s", req)
	}
}

// A variable the spec names but assay's environment lacks stops the run
// before any call (exit 4, located at the entry, naming the variable);
// validate warns about it.
func TestIsolationUnsetVariable(t *testing.T) {
	t.Parallel()
	d := newIsoDirs(t)
	writeFile(t, filepath.Join(d.spec, "cheat.sh"), isoCheatScript)
	path := echoTask(t, d.spec, 3, `  - {name: app, provider: exec, command: ["sh", "cheat.sh"], env: [CHEAT_LOG, MISSING_TOKEN]}`)
	log := filepath.Join(d.out, "pwd.log")
	e := cliEnv{env: map[string]string{"CHEAT_LOG": log, "TMPDIR": d.tmp}}
	inv := runCLI(t, e, "run", path, "--db", filepath.Join(d.out, "assay.db"))
	if inv.code != ExitInvalid {
		t.Fatalf("exit %d; want %d\n%s", inv.code, ExitInvalid, inv.stderr)
	}
	wantMsg := path + ":5:79: target app: environment variable MISSING_TOKEN is not set (export it before running assay, or remove it from env)"
	if !strings.Contains(inv.stderr, wantMsg) {
		t.Errorf("stderr lacks %q:\n%s", wantMsg, inv.stderr)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Errorf("the program was called although a variable it needs is unset")
	}
	v := runCLI(t, e, "validate", path)
	if v.code != 0 || !strings.Contains(v.stderr, "warning:") || !strings.Contains(v.stderr, "MISSING_TOKEN is not set") {
		t.Errorf("validate: exit %d, stderr %q; want exit 0 with a warning naming MISSING_TOKEN", v.code, v.stderr)
	}
}

// A candidate that prints without end (`yes`) is cut at max_output_bytes:
// each call is stored as a loud output_limit failure whose message names the
// setting, the run completes, the calls' directories are removed, and
// assay's memory stays bounded (a reader without the bound would take in
// gigabytes before the 5 s time-out).
func TestIsolationEndlessOutput(t *testing.T) {
	t.Parallel()
	if _, err := osexec.LookPath("yes"); err != nil {
		t.Skip("no yes(1)")
	}
	d := newIsoDirs(t)
	path := echoTask(t, d.spec, 5, `  - {name: yes, provider: exec, command: ["yes"], max_output_bytes: 65536, limits: {concurrency: 5}}`)
	b := strings.Replace(readFileT(t, path), "run: {timeout: 5s, retries: 8}", "run: {timeout: 5s, retries: 2}", 1)
	writeFile(t, path, b)
	db := filepath.Join(d.out, "assay.db")
	e := cliEnv{env: map[string]string{"TMPDIR": d.tmp}}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := runJSON(t, e, "run", path, "--db", db)
	runtime.ReadMemStats(&after)

	if s.Status != "complete" || s.Stored != 5 || s.Errors != 5 {
		t.Fatalf("summary %+v: want 5 results, all errors", s)
	}
	results, scores := isoStoredRun(t, db, s.RunID)
	for k, r := range results {
		if r.ErrorKind != "output_limit" || !strings.Contains(r.Error, "more than 65536 bytes") || !strings.Contains(r.Error, "max_output_bytes") {
			t.Errorf("%v: kind %q, error %q; want output_limit naming the 65536-byte limit and max_output_bytes", k, r.ErrorKind, r.Error)
		}
		if r.Raw != "" || len(r.Error) > 1000 {
			t.Errorf("%v: stored %d bytes of output and a %d-byte error; the flood must not be stored", k, len(r.Raw), len(r.Error))
		}
		if r.Attempts != 1 {
			t.Errorf("%v: %d attempts; an output-limit failure is not retried", k, r.Attempts)
		}
		sc := scores[k]
		if sc.Pass || sc.Shape != "loud" || sc.Kind != "output_limit" {
			t.Errorf("%v: score %+v; want a loud output_limit failure", k, sc)
		}
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("the run allocated %d MiB for five calls cut at 64 KiB", alloc>>20)
	}
	if left := isoEntries(t, d.tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR after the run: %v", left)
	}
}

func isoEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
