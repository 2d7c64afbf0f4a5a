package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// healthData is a dataset of internal/dataset/testdata/health.
func healthData(t *testing.T, name string) string {
	return filepath.Join(repoRoot(t), "internal", "dataset", "testdata", "health", name)
}

// healthFixture writes a spec over a dataset (a name in
// internal/dataset/testdata/health, or an absolute path).
func healthFixture(t *testing.T, data, datasetYAML string) string {
	t.Helper()
	path := data
	if !filepath.IsAbs(path) {
		path = healthData(t, data)
	}
	spec := fmt.Sprintf(`name: health
dataset:
  path: %q
%sprompt: {user: "Q: {{.question}}"}
targets: [{name: app, provider: exec, command: ["sh", "app.sh"]}]
scorers: [{name: correct, type: equals, primary: true}]
`, path, datasetYAML)
	p := filepath.Join(t.TempDir(), "assay.yaml")
	writeFile(t, p, spec)
	return p
}

// validateJSON runs validate --format json and decodes its report.
func validateJSON(t *testing.T, wantCode int, args ...string) map[string]any {
	t.Helper()
	inv := runCLI(t, cliEnv{}, append([]string{"validate", "--format", "json"}, args...)...)
	if inv.code != wantCode {
		t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", inv.code, wantCode, inv.stdout, inv.stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatalf("stdout is not one JSON report: %v\n%s", err, inv.stdout)
	}
	if inv.stderr != "" {
		t.Errorf("stderr %q; with --format json everything is in the report", inv.stderr)
	}
	return rep
}

// get walks a decoded JSON value by keys and indices.
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not an object at %q", path, k)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("%v: no element %d", path, k)
			}
			v = a[k]
		}
	}
	return v
}

// The planted dataset: cases without an expected value make it invalid
// (exit 4, each at its line); duplicates, near-duplicates, a tiny bucket, a
// missing bucket and a case without a bucket are reported.
func TestValidateDeepPlanted(t *testing.T) {
	t.Parallel()
	path := healthFixture(t, "planted.jsonl", "  id: id\n  expected: answer\n  tags: {bucket: bucket, topic: topic}\n")
	data := healthData(t, "planted.jsonl")

	// Plain validate does not look this deep.
	if inv := runCLI(t, cliEnv{}, "validate", path); inv.code != 0 {
		t.Fatalf("validate without --deep: exit %d\n%s", inv.code, inv.stderr)
	}

	inv := runCLI(t, cliEnv{}, "validate", "--deep", path)
	if inv.code != ExitInvalid {
		t.Fatalf("exit %d; want %d\n%s", inv.code, ExitInvalid, inv.stderr)
	}
	for _, line := range []int{7, 8, 9} {
		want := fmt.Sprintf("%s:%d:1: case p%02d has no expected value (field \"answer\" is missing, null or blank)", data, line, line)
		if !strings.Contains(inv.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, inv.stderr)
		}
	}
	if strings.Contains(inv.stderr, "p10") {
		t.Errorf("the should-refuse case p10 is reported; it needs no expected value:\n%s", inv.stderr)
	}
	for _, want := range []string{
		"PROBLEM: 3 case(s) have no expected value: p07 (line 7), p08 (line 8), p09 (line 9)",
		"WARNING: 2 group(s) of exact duplicates (4 cases; 2 beyond the first of each)",
		"p01 (line 1), p02 (line 2): a train leaves the station",
		"expect different answers: Paris, Lyon",
		"WARNING: 1 near-duplicate pair(s) (token overlap ≥ 0.9) among 2 cases",
		"p05 (line 5) ~ p06 (line 6)  0.91  only in the first: forty; only in the second: fifty",
		"tag bucket: 3 value(s); 1 case(s) have none: p13 (line 13)",
		"hostile            2   15.4%  small: a rate on 2 case(s) has a 95% interval up to ±41 points",
		"no case is in bucket(s) edge",
	} {
		if !strings.Contains(inv.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, inv.stdout)
		}
	}

	rep := validateJSON(t, ExitInvalid, "--deep", path)
	if get(t, rep, "valid") != false || len(get(t, rep, "problems").([]any)) != 3 {
		t.Errorf("report: valid %v, problems %v", get(t, rep, "valid"), get(t, rep, "problems"))
	}
	h := get(t, rep, "health")
	checks := []struct {
		path []any
		want any
	}{
		{[]any{"cases"}, 13.0},
		{[]any{"exact_duplicates", "groups"}, 2.0},
		{[]any{"exact_duplicates", "conflicting"}, 1.0},
		{[]any{"exact_duplicates", "list", 1, "conflicting_expected", 1}, "Lyon"},
		{[]any{"near_duplicates", "pairs"}, 1.0},
		{[]any{"near_duplicates", "list", 0, "a", "id"}, "p05"},
		{[]any{"near_duplicates", "list", 0, "similarity"}, 0.9091},
		{[]any{"expected", "missing"}, 3.0},
		{[]any{"expected", "should_refuse_exempt"}, 1.0},
		{[]any{"labels", "distinct"}, 7.0},
		{[]any{"labels", "numeric"}, false},
		{[]any{"tags", 0, "key"}, "bucket"},
		{[]any{"tags", 0, "missing"}, 1.0},
		{[]any{"tags", 0, "values", 1, "value"}, "hostile"},
		{[]any{"tags", 0, "values", 1, "small"}, true},
		{[]any{"missing_buckets", 0}, "edge"},
	}
	for _, c := range checks {
		if got := get(t, h, c.path...); got != c.want {
			t.Errorf("health %v = %v; want %v", c.path, got, c.want)
		}
	}
}

// Duplicates alone are warnings: exit 0, or 4 with --strict. A clean
// dataset passes --strict.
func TestValidateDeepStrict(t *testing.T) {
	t.Parallel()
	// The first six cases of the planted set: duplicates, every answer present.
	dupOnly := filepath.Join(t.TempDir(), "dups.jsonl")
	lines := strings.SplitAfter(readFileT(t, healthData(t, "planted.jsonl")), "\n")
	writeFile(t, dupOnly, strings.Join(lines[:6], ""))
	spec := healthFixture(t, dupOnly, "  id: id\n  expected: answer\n")

	inv := runCLI(t, cliEnv{}, "validate", "--deep", spec)
	if inv.code != 0 || !strings.Contains(inv.stdout, "3 warning(s); --strict makes them fail validation") {
		t.Errorf("duplicates without --strict: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	inv = runCLI(t, cliEnv{}, "validate", "--deep", "--strict", spec)
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, "--strict: the dataset has 3 health warning(s)") {
		t.Errorf("duplicates with --strict: exit %d\n%s", inv.code, inv.stderr)
	}
	rep := validateJSON(t, ExitInvalid, "--deep", "--strict", spec)
	if get(t, rep, "valid") != false || len(get(t, rep, "warnings").([]any)) != 3 || len(get(t, rep, "problems").([]any)) != 0 {
		t.Errorf("strict report: %v", rep)
	}

	clean := healthFixture(t, "clean.jsonl", "  id: id\n  expected: answer\n  tags: {bucket: bucket}\n")
	inv = runCLI(t, cliEnv{}, "validate", "--deep", "--strict", clean)
	if inv.code != 0 || strings.Contains(inv.stdout, "WARNING") || strings.Contains(inv.stdout, "PROBLEM") || inv.stderr != "" {
		t.Errorf("clean dataset: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
	rep = validateJSON(t, 0, "--deep", "--strict", clean)
	if get(t, rep, "valid") != true || len(get(t, rep, "warnings").([]any)) != 0 {
		t.Errorf("clean report: %v", rep)
	}
}

// An expected_extract that does not match is reported once, by the
// ordinary check, at each line; --deep adds the case that has no answer.
func TestValidateDeepUnextractable(t *testing.T) {
	t.Parallel()
	path := healthFixture(t, "extract.jsonl", "  expected: a\n  expected_extract: '####\\s*(\\S+)'\n")
	inv := runCLI(t, cliEnv{}, "validate", "--deep", path)
	if inv.code != ExitInvalid {
		t.Fatalf("exit %d\n%s", inv.code, inv.stderr)
	}
	if n := strings.Count(inv.stderr, "does not match dataset.expected_extract"); n != 2 {
		t.Errorf("%d unextractable problems; want 2 (lines 2 and 3), each once:\n%s", n, inv.stderr)
	}
	if !strings.Contains(inv.stderr, "extract.jsonl:5:1: case 5 has no expected value") {
		t.Errorf("line 5 (no answer) is not reported:\n%s", inv.stderr)
	}
	if !strings.Contains(inv.stdout, "PROBLEM: 2 case(s) where expected_extract does not match: line 2, line 3") {
		t.Errorf("the health report does not list the unextractable cases:\n%s", inv.stdout)
	}
}

// GSM8K's test set has no near-duplicate questions at the default
// threshold, and three at 0.6; the most similar (419 and 559, one lockers
// problem asked both ways) was read by hand.
func TestValidateDeepGSM8K(t *testing.T) {
	t.Parallel()
	data := sharedData(t)
	spec := filepath.Join(t.TempDir(), "gsm8k.yaml")
	writeFile(t, spec, fmt.Sprintf(`name: gsm8k
dataset:
  path: %q
  expected: answer
  expected_extract: '####\s*(.+)$'
prompt: {user: "Q: {{.question}}"}
targets: [{name: app, provider: exec, command: ["sh", "app.sh"]}]
scorers: [{name: correct, type: equals, normalize: [no_commas], primary: true}]
`, filepath.Join(data, "gsm8k", "test.jsonl")))
	rep := validateJSON(t, 0, "--deep", spec)
	if get(t, rep, "health", "near_duplicates", "pairs") != 0.0 || get(t, rep, "health", "cases") != 1319.0 {
		t.Errorf("GSM8K at 0.9: %v", get(t, rep, "health", "near_duplicates"))
	}
	inv := runCLI(t, cliEnv{}, "validate", "--deep", "--dup-threshold", "0.6", spec)
	if inv.code != 0 {
		t.Fatalf("exit %d\n%s", inv.code, inv.stderr)
	}
	for _, want := range []string{
		"WARNING: 3 near-duplicate pair(s) (token overlap ≥ 0.6) among 6 cases",
		"line 419 ~ line 559  0.81  only in the first: if 5; only in the second: 24",
		"line 489 ~ line 762  0.70",
		"line 340 ~ line 1318  0.60",
		"353 distinct value(s), all numeric",
	} {
		if !strings.Contains(inv.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, inv.stdout)
		}
	}
}

func TestValidateUsage(t *testing.T) {
	t.Parallel()
	path := healthFixture(t, "clean.jsonl", "  id: id\n  expected: answer\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--strict"}, "--strict applies to the dataset health check: add --deep"},
		{[]string{"--dup-threshold", "0.5"}, "--dup-threshold applies to the dataset health check: add --deep"},
		{[]string{"--deep", "--dup-threshold", "0"}, "--dup-threshold 0: want a similarity above 0 and at most 1"},
		{[]string{"--deep", "--dup-threshold", "1.01"}, "--dup-threshold 1.01: want a similarity above 0 and at most 1"},
		{[]string{"--deep", "--dup-threshold", "NaN"}, "--dup-threshold NaN"},
		{[]string{"--deep", "--dup-threshold", "high"}, `invalid argument "high" for "--dup-threshold"`},
		{[]string{"--deep", "--min-bucket", "0"}, "--min-bucket 0: want at least 1 case"},
		{[]string{"--deep", "--top", "-1"}, "--top -1: want at least 1 value"},
		{[]string{"--format", "yaml"}, `--format "yaml": formats are text, json`},
	} {
		inv := runCLI(t, cliEnv{}, append([]string{"validate", path}, c.args...)...)
		if inv.code != ExitUsage || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("validate %v: exit %d, stderr %q; want exit %d and %q", c.args, inv.code, inv.stderr, ExitUsage, c.want)
		}
	}
}

// A spec with problems still gives one JSON report, with the problems in it.
func TestValidateJSONProblems(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.yaml")
	writeFile(t, path, "name: x\ndataset: {path: missing.jsonl}\nprompt: {user: hi}\ntargets: [{name: a, provider: nope}]\n")
	rep := validateJSON(t, ExitInvalid, path)
	ps := get(t, rep, "problems").([]any)
	if get(t, rep, "valid") != false || len(ps) < 2 {
		t.Fatalf("report %v", rep)
	}
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, get(t, p, "message").(string))
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{`cannot read "missing.jsonl"`, `unknown provider "nope"`} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
}

// Bytes that are not UTF-8 in a dataset are read as U+FFFD: validate and
// validate --deep say so, at the line and column of the first such byte,
// for JSONL and CSV alike, and the dataset stays valid.
func TestValidateInvalidUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "cases.jsonl")
	writeFile(t, jsonl, "{\"id\":\"a\",\"question\":\"ok\",\"answer\":\"1\"}\n"+
		"{\"id\":\"b\",\"question\":\"caf\xe9 au lait\",\"answer\":\"2\"}\n"+
		"{\"id\":\"c\",\"question\":\"ünïcode is fine\",\"answer\":\"3\"}\n")
	csvPath := filepath.Join(dir, "cases.csv")
	writeFile(t, csvPath, "id,question,answer\na,ok,1\nb,fine,2\nc,na\xefve,3\n")
	for _, c := range []struct{ data, want string }{
		{jsonl, jsonl + ":2:26: bytes that are not UTF-8"},
		{csvPath, csvPath + ":4:5: bytes that are not UTF-8"},
	} {
		spec := healthFixture(t, c.data, "  id: id\n  expected: answer\n")
		for _, deep := range [][]string{nil, {"--deep"}} {
			inv := runCLI(t, cliEnv{}, append(append([]string{"validate"}, deep...), spec)...)
			if inv.code != 0 || !strings.Contains(inv.stderr, "warning: "+c.want) || strings.Count(inv.stderr, "not UTF-8") != 1 {
				t.Errorf("validate %v %s: exit %d; want one warning %q\nstdout %s\nstderr %s", deep, filepath.Base(c.data), inv.code, c.want, inv.stdout, inv.stderr)
			}
			rep := validateJSON(t, 0, append(deep, spec)...)
			ws, _ := get(t, rep, "warnings").([]any)
			if len(ws) != 1 || !strings.HasPrefix(ws[0].(string), c.want) {
				t.Errorf("validate --format json %v %s: warnings %v, want one starting %q", deep, filepath.Base(c.data), ws, c.want)
			}
		}
	}
}
