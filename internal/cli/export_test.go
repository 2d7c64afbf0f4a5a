package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/export"
)

// loadExports is a Python program that loads an export as a pandas or
// DuckDB user's first step would (the csv and json modules of the
// standard library) and counts, per target, the rows and the passing
// headline verdicts.
const loadExports = `
import csv, json, sys
out = {}
with open(sys.argv[1], newline="") as f:
    rows = list(csv.DictReader(f))
c = out.setdefault("csv", {})
for r in rows:
    t = c.setdefault(r["target"], [0, 0])
    t[0] += 1
    t[1] += r["pass"] == "true"
j = out.setdefault("jsonl", {})
with open(sys.argv[2]) as f:
    for line in f:
        r = json.loads(line)
        t = j.setdefault(r["target"], [0, 0])
        t[0] += 1
        t[1] += r["pass"] is True
        assert isinstance(r["inputs"], dict) and "question" in r["inputs"], r["inputs"]
        assert r["score.correct.pass"] == r["pass"]
print(json.dumps(out))
`

func python3(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs %s: %v", py, err)
		}
		t.Skipf("%s not present: %v", py, err)
	}
	return py
}

// An export of the GSM8K replay run (4 recorded configurations × 1,319
// problems) loads in Python's csv and json modules with one row per case ×
// target, its verdict counts are the report's, and the Parquet file reads
// back in Go with the same rows.
func TestExportGSM8K(t *testing.T) {
	t.Parallel()
	py := python3(t)
	db, _ := gsm8kRun(t)
	e := cliEnv{env: map[string]string{}}
	inv := runCLI(t, e, "report", "latest", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("report exit %d: %s", inv.code, inv.stderr)
	}
	var rep struct {
		Targets []struct {
			Name    string
			Primary struct{ Passed, N int }
		}
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{}
	for _, tg := range rep.Targets {
		want[tg.Name] = [2]int{tg.Primary.N, tg.Primary.Passed}
	}
	if len(want) != 4 {
		t.Fatalf("report has %d targets, want 4", len(want))
	}

	dir := t.TempDir()
	files := map[string]string{}
	for _, format := range export.Formats {
		files[format] = filepath.Join(dir, "gsm8k."+format)
		inv := runCLI(t, e, "export", "latest", "--db", db, "-o", files[format])
		if inv.code != 0 {
			t.Fatalf("export %s: exit %d\n%s", format, inv.code, inv.stderr)
		}
		if !strings.Contains(inv.stderr, "exported 5276 rows") {
			t.Errorf("export %s said %q; want it to count 5276 rows", format, inv.stderr)
		}
	}

	out, err := exec.Command(py, "-c", loadExports, files["csv"], files["jsonl"]).CombinedOutput()
	if err != nil {
		t.Fatalf("python could not load the exports: %v\n%s", err, out)
	}
	var got map[string]map[string][2]int
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python printed %s", out)
	}
	for _, format := range []string{"csv", "jsonl"} {
		total := 0
		for name, w := range want {
			if got[format][name] != w {
				t.Errorf("%s, target %s: python counts %v rows/passes; the report says %v", format, name, got[format][name], w)
			}
			total += got[format][name][0]
		}
		if total != 4*1319 || len(got[format]) != 4 {
			t.Errorf("%s: %d rows over %d targets, want 4 × 1,319", format, total, len(got[format]))
		}
	}

	// Parquet, read back in Go, holds the JSONL's rows.
	type key struct {
		caseID, target string
	}
	jsonl := map[key]map[string]any{}
	f, err := os.Open(files["jsonl"])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		jsonl[key{m["case_id"].(string), m["target"].(string)}] = m
	}
	pf, err := os.Open(files["parquet"])
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fi, _ := pf.Stat()
	n, passes := 0, map[string]int{}
	err = export.ReadParquet(pf, fi.Size(), func(m map[string]any) error {
		n++
		k := key{m["case_id"].(string), m["target"].(string)}
		j, ok := jsonl[k]
		if !ok {
			t.Errorf("parquet row %v is not in the JSONL export", k)
			return nil
		}
		if m["pass"] != j["pass"] || m["raw"] != j["raw"] || m["score.correct.reason"] != j["score.correct.reason"] ||
			m["latency_ms"] != j["latency_ms"] || m["line"] != int64(j["line"].(float64)) {
			t.Errorf("row %v: parquet %v/%q, jsonl %v/%q", k, m["pass"], m["raw"], j["pass"], j["raw"])
		}
		if m["pass"] == true {
			passes[k.target]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 4*1319 {
		t.Errorf("parquet has %d rows, want %d", n, 4*1319)
	}
	for name, w := range want {
		if passes[name] != w[1] {
			t.Errorf("parquet: %s passes %d, the report says %d", name, passes[name], w[1])
		}
	}
}

// Export asks for what it needs before touching the store, and refuses to
// pair results with a dataset that changed since the run.
func TestExportErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	specPath := writeRetrySpec(t, dir, newRLServer(t).url)
	if inv := runCLI(t, cliEnv{}, "run", specPath, "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"export", "latest"}, ExitUsage, "-o FILE is required"},
		{[]string{"export", "latest", "-o", out + ".xlsx"}, ExitUsage, "jsonl, csv, parquet"},
		{[]string{"export", "latest", "-o", out, "--format", "xml"}, ExitUsage, "jsonl, csv, parquet"},
		{[]string{"export", "latest", "-o", out + ".csv", "--scoring", "7"}, ExitUsage, "no scores in that scoring"},
		{[]string{"export", "nosuchrun", "-o", out + ".csv"}, ExitErr, "not found"},
	} {
		inv := runCLI(t, cliEnv{}, append(tc.args, "--db", db)...)
		if inv.code != tc.code || !strings.Contains(inv.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, inv.code, inv.stderr, tc.code, tc.want)
		}
	}
	// The dataset changes: the inputs would be wrong.
	writeFile(t, filepath.Join(dir, "cases.jsonl"), `{"id":"c1","q":"changed"}`+"\n")
	inv := runCLI(t, cliEnv{}, "export", "latest", "--db", db, "-o", out+".csv")
	if inv.code != ExitErr || !strings.Contains(inv.stderr, "dataset changed") || !strings.Contains(inv.stderr, "--no-inputs") {
		t.Errorf("export after the dataset changed: exit %d, stderr %q", inv.code, inv.stderr)
	}
	if _, err := os.Stat(out + ".csv"); !os.IsNotExist(err) {
		t.Errorf("a refused export wrote %s", out+".csv")
	}
	inv = runCLI(t, cliEnv{}, "export", "latest", "--db", db, "-o", out+".csv", "--no-inputs")
	if inv.code != 0 {
		t.Fatalf("export --no-inputs: exit %d, %s", inv.code, inv.stderr)
	}
	if b := readFileT(t, out+".csv"); strings.Contains(strings.SplitN(b, "\n", 2)[0], "inputs") {
		t.Errorf("--no-inputs header: %s", strings.SplitN(b, "\n", 2)[0])
	}
}
