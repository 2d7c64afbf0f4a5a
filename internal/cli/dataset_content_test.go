package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// contentCases are the echo cases (the mock says the word; one case in
// three expects something else), every value a string so CSV and JSONL
// hold the same cases.
func contentCases(n int) [][3]string {
	var out [][3]string
	for i := 1; i <= n; i++ {
		say := fmt.Sprintf("word-%d", i)
		exp := say
		if i%3 == 0 {
			exp = "other, \"quoted\""
		}
		out = append(out, [3]string{fmt.Sprintf("c%d", i), say, exp})
	}
	return out
}

// contentSpec writes the cases in one encoding into its own directory
// with a spec over them, and returns the spec's path.
func contentSpec(t *testing.T, dir, name, format, data, targets string) string {
	t.Helper()
	sub := filepath.Join(dir, name)
	file := "cases." + format
	writeFile(t, filepath.Join(sub, file), data)
	spec := `name: echo
dataset: {path: ` + file + `, format: ` + format + `, id: id, expected: expected}
prompt: {user: "{{.say}}"}
targets:
` + targets + `
scorers:
  - {name: correct, type: equals, normalize: [trim]}
run: {timeout: 5s, retries: 8}
`
	path := filepath.Join(sub, "assay.yaml")
	writeFile(t, path, spec)
	return path
}

func contentCSV(cases [][3]string, quoteAll bool) string {
	cell := func(s string) string {
		if quoteAll || strings.ContainsAny(s, ",\"\n") {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
		return s
	}
	var b strings.Builder
	b.WriteString(cell("id") + "," + cell("say") + "," + cell("expected") + "\n")
	for _, c := range cases {
		b.WriteString(cell(c[0]) + "," + cell(c[1]) + "," + cell(c[2]) + "\n")
	}
	return b.String()
}

// contentJSONL writes the cases with the keys in reverse order.
func contentJSONL(cases [][3]string) string {
	var b strings.Builder
	for _, c := range cases {
		e, _ := json.Marshal(c[2])
		s, _ := json.Marshal(c[1])
		fmt.Fprintf(&b, `{"expected": %s, "say": %s, "id": %q}`+"\n", e, s, c[0])
	}
	return b.String()
}

// TestGateAcrossDatasetEncodings: the same cases as LF CSV, as CRLF CSV
// with a byte-order mark and every cell quoted, and as CRLF JSONL with
// the keys reordered are one dataset version, so runs on them gate
// against each other through the CLI (with a note that the files differ
// in bytes); a changed case is refused; and a baseline file written
// before content hashes (the byte hash only) still gates a new run of the
// same bytes.
func TestGateAcrossDatasetEncodings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, url := startMock(t, mock.Options{})
	targets := fmt.Sprintf(`  - {name: e, provider: openai, model: m, base_url: %s/v1}`, url)
	db := filepath.Join(dir, "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}
	cases := contentCases(12)
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

	specA := contentSpec(t, dir, "lf", "csv", contentCSV(cases, false), targets)
	specB := contentSpec(t, dir, "crlf-bom-quoted", "csv", "\xef\xbb\xbf"+crlf(contentCSV(cases, true)), targets)
	specC := contentSpec(t, dir, "jsonl", "jsonl", crlf(contentJSONL(cases)), targets)
	changed := append([][3]string(nil), cases...)
	changed[3][2] = "not word-4"
	specD := contentSpec(t, dir, "changed", "csv", contentCSV(changed, false), targets)

	hashes := func(spec string) (content, file string) {
		inv := runCLI(t, e, "validate", spec, "--format", "json")
		var v struct{ Hashes map[string]string }
		if err := json.Unmarshal([]byte(inv.stdout), &v); err != nil || inv.code != 0 {
			t.Fatalf("validate %s: exit %d, %v: %s %s", spec, inv.code, err, inv.stdout, inv.stderr)
		}
		return v.Hashes["dataset"], v.Hashes["dataset_file"]
	}
	ha, fa := hashes(specA)
	hb, fb := hashes(specB)
	hc, fc := hashes(specC)
	hd, _ := hashes(specD)
	if ha == "" || ha != hb || ha != hc || hd == ha {
		t.Fatalf("dataset hashes: lf %s, crlf/bom/quoted %s, jsonl %s, changed %s; want the first three equal and the last different", ha, hb, hc, hd)
	}
	if fa == fb || fa == fc || fb == fc {
		t.Fatalf("file hashes %s %s %s: the encodings are not different files", fa, fb, fc)
	}

	a := runJSON(t, e, "run", specA)
	b := runJSON(t, e, "run", specB)
	c := runJSON(t, e, "run", specC)
	d := runJSON(t, e, "run", specD)
	for _, cand := range []string{b.RunID, c.RunID} {
		inv := runCLI(t, e, "gate", cand, "--baseline", a.RunID)
		if inv.code != ExitOK || !strings.Contains(inv.stdout, "same cases") || !strings.Contains(inv.stdout, "differ in bytes") {
			t.Errorf("gate %s --baseline %s (same cases, other bytes): exit %d\nstdout %s\nstderr %s", cand, a.RunID, inv.code, inv.stdout, inv.stderr)
		}
	}
	// compare and drift pair them the same way.
	if inv := runCLI(t, e, "compare", a.RunID, b.RunID); inv.code != ExitOK || !strings.Contains(inv.stdout+inv.stderr, "differ in bytes") {
		t.Errorf("compare %s %s (same cases, other bytes): exit %d\nstdout %s\nstderr %s", a.RunID, b.RunID, inv.code, inv.stdout, inv.stderr)
	}
	if inv := runCLI(t, e, "drift", a.RunID, c.RunID); inv.code != ExitOK || !strings.Contains(inv.stdout+inv.stderr, "differ in bytes") {
		t.Errorf("drift %s %s (same cases, other bytes): exit %d\nstdout %s\nstderr %s", a.RunID, c.RunID, inv.code, inv.stdout, inv.stderr)
	}
	if inv := runCLI(t, e, "compare", a.RunID, d.RunID); inv.code != ExitErr || !strings.Contains(inv.stderr, "different dataset versions") {
		t.Errorf("compare across a changed case: exit %d, %q; want exit 1 refusing", inv.code, inv.stderr)
	}
	inv := runCLI(t, e, "gate", d.RunID, "--baseline", a.RunID)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "different datasets") || !strings.Contains(inv.stderr, "contents changed") {
		t.Errorf("gate across a changed case: exit %d, %q; want exit 1 refusing", inv.code, inv.stderr)
	}

	// A baseline file as written before content hashes: its dataset_hash
	// is the byte hash, and it has no file_hash.
	fileA := filepath.Join(dir, "baseline.json")
	if inv := runCLI(t, e, "baseline", "export", a.RunID, "-o", fileA); inv.code != ExitOK {
		t.Fatalf("baseline export: exit %d, %s", inv.code, inv.stderr)
	}
	var bl map[string]any
	if err := json.Unmarshal([]byte(readFileT(t, fileA)), &bl); err != nil {
		t.Fatal(err)
	}
	run := bl["run"].(map[string]any)
	if run["dataset_hash"] != ha || run["file_hash"] != fa {
		t.Fatalf("the baseline file records dataset %v, file %v; want %s, %s", run["dataset_hash"], run["file_hash"], ha, fa)
	}
	run["dataset_hash"] = fa
	delete(run, "file_hash")
	old, err := json.Marshal(bl)
	if err != nil {
		t.Fatal(err)
	}
	oldFile := filepath.Join(dir, "old-baseline.json")
	if err := os.WriteFile(oldFile, old, 0o644); err != nil {
		t.Fatal(err)
	}
	a2 := runJSON(t, e, "run", specA)
	inv = runCLI(t, e, "gate", a2.RunID, "--baseline", oldFile)
	if inv.code != ExitOK || !strings.Contains(inv.stdout, "records only its dataset file's byte hash") {
		t.Errorf("gate of the same bytes against an old baseline file: exit %d\nstdout %s\nstderr %s", inv.code, inv.stdout, inv.stderr)
	}
	if inv := runCLI(t, e, "drift", oldFile, a2.RunID); inv.code != ExitOK || !strings.Contains(inv.stdout+inv.stderr, "records only its dataset file's byte hash") {
		t.Errorf("drift from an old baseline file to the same bytes: exit %d\nstdout %s\nstderr %s", inv.code, inv.stdout, inv.stderr)
	}
	// Other bytes cannot be told apart from other cases: refused, saying
	// why and what to do.
	inv = runCLI(t, e, "gate", b.RunID, "--baseline", oldFile)
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "dataset files differ") || !strings.Contains(inv.stderr, "re-export the baseline") {
		t.Errorf("gate of other bytes against an old baseline file: exit %d, %q", inv.code, inv.stderr)
	}
}
