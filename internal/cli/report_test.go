package cli

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The JSON report keeps the names DESIGN.md promises scripts, and its
// counts, tokens and costs match what the recorded example says.
func TestReportJSONContract(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	db := filepath.Join(t.TempDir(), "assay.db")
	e := cliEnv{env: map[string]string{}}
	if inv := runCLI(t, e, "run", filepath.Join(root, "examples", "quickstart", "assay.yaml"), "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	inv := runCLI(t, e, "report", "latest", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("report: %s", inv.stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	run := rep["run"].(map[string]any)
	for _, k := range []string{"id", "spec", "spec_hash", "dataset_hash", "cases", "epochs", "status"} {
		if _, ok := run[k]; !ok {
			t.Errorf("run.%s missing", k)
		}
	}
	if run["cases"].(float64) != 26 || run["status"] != "complete" || run["spec"] != "ticket-triage" {
		t.Errorf("run = %v", run)
	}

	// Recorded usage, priced by hand from the spec's prices.
	type usage struct{ in, out float64 }
	recorded := map[string]usage{}
	f, err := os.Open(filepath.Join(root, "examples", "quickstart", "recorded.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		for k, name := range map[string]string{"model_a": "model-a", "model_b": "model-b"} {
			var m struct {
				Usage struct{ Input, Output float64 }
			}
			if err := json.Unmarshal(rec[k], &m); err != nil {
				t.Fatal(err)
			}
			u := recorded[name]
			u.in += m.Usage.Input
			u.out += m.Usage.Output
			recorded[name] = u
		}
	}
	price := map[string][2]float64{"model-a": {2.50, 10.00}, "model-b": {0.15, 0.60}}

	// Cases per bucket and per tier, counted from the dataset itself.
	perTag := map[string]map[string]float64{"bucket": {}, "tier": {}}
	cf, err := os.Open(filepath.Join(root, "examples", "quickstart", "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	cs := bufio.NewScanner(cf)
	for cs.Scan() {
		var c struct{ Bucket, Tier string }
		if err := json.Unmarshal(cs.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		perTag["bucket"][c.Bucket]++
		perTag["tier"][c.Tier]++
	}

	targets := rep["targets"].([]any)
	if len(targets) != 2 {
		t.Fatalf("%d targets", len(targets))
	}
	for _, x := range targets {
		tg := x.(map[string]any)
		name := tg["name"].(string)
		prim := tg["primary"].(map[string]any)
		for _, k := range []string{"scorer", "passed", "n", "rate", "ci", "ci_method"} {
			if _, ok := prim[k]; !ok {
				t.Errorf("%s primary.%s missing", name, k)
			}
		}
		fails := tg["failures"].(map[string]any)
		lat := tg["latency_ms"].(map[string]any)
		tok := tg["tokens"].(map[string]any)
		cost := tg["cost_usd"].(map[string]any)
		for obj, keys := range map[string][]string{"failures": {"loud", "silent", "by_kind"}, "latency_ms": {"p50", "p95", "p99"}, "tokens": {"input", "output"}, "cost_usd": {"total", "per_case", "per_month"}} {
			m := map[string]map[string]any{"failures": fails, "latency_ms": lat, "tokens": tok, "cost_usd": cost}[obj]
			for _, k := range keys {
				if _, ok := m[k]; !ok {
					t.Errorf("%s %s.%s missing", name, obj, k)
				}
			}
		}
		if _, ok := tg["scorers"].(map[string]any)["correct"]; !ok {
			t.Errorf("%s scorers.correct missing", name)
		}
		n := tg["n"].(float64)
		passed := prim["passed"].(float64)
		if n != 26 || prim["n"].(float64) != 26 {
			t.Errorf("%s n=%v primary n=%v, want 26", name, n, prim["n"])
		}
		// Every result is exactly one of: pass, loud, silent.
		if got := passed + fails["loud"].(float64) + fails["silent"].(float64); got != n {
			t.Errorf("%s: passed %v + loud %v + silent %v = %v, want n %v", name, passed, fails["loud"], fails["silent"], got, n)
		}
		if r := prim["rate"].(float64); math.Abs(r-passed/n) > 1e-12 {
			t.Errorf("%s rate %v, want %v", name, r, passed/n)
		}
		ci := prim["ci"].([]any)
		if lo, hi := ci[0].(float64), ci[1].(float64); !(lo <= passed/n && passed/n <= hi) {
			t.Errorf("%s: interval [%v, %v] excludes the rate", name, lo, hi)
		}
		u := recorded[name]
		if tok["input"].(float64) != u.in || tok["output"].(float64) != u.out {
			t.Errorf("%s tokens %v/%v, recorded %v/%v", name, tok["input"], tok["output"], u.in, u.out)
		}
		want := (u.in*price[name][0] + u.out*price[name][1]) / 1e6
		if got := cost["total"].(float64); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s cost %v, want %v", name, got, want)
		}
		if got, want := cost["per_month"].(float64), want/26*200000; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s per_month %v, want %v at 200,000 requests a month", name, got, want)
		}
		sl, _ := tg["slices"].(map[string]any)
		for key, want := range perTag {
			byValue, _ := sl[key].(map[string]any)
			if len(byValue) != len(want) {
				t.Errorf("%s slices.%s = %v, want values %v", name, key, byValue, want)
				continue
			}
			passedSum := 0.0
			for v, n := range want {
				r, _ := byValue[v].(map[string]any)
				if r == nil || r["n"].(float64) != n {
					t.Errorf("%s slices.%s.%s = %v, want n %v", name, key, v, r, n)
					continue
				}
				passedSum += r["passed"].(float64)
			}
			if passedSum != passed {
				t.Errorf("%s: slices.%s pass counts add to %v, the total is %v", name, key, passedSum, passed)
			}
		}
		if lat["p50"].(float64) <= 0 || lat["p95"].(float64) < lat["p50"].(float64) || lat["p99"].(float64) < lat["p95"].(float64) {
			t.Errorf("%s latency %v", name, lat)
		}
	}
}

// Every report format renders a stored run; JUnit lists one test case per
// case × target with the primary scorer's failures.
func TestReportFormats(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	e := cliEnv{}
	if inv := runCLI(t, e, "run", filepath.Join(root, "examples", "quickstart", "assay.yaml"), "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	var js struct {
		Targets []struct {
			Name    string
			Primary struct{ Passed, N int }
		}
	}
	inv := runCLI(t, e, "report", "--db", db, "--format", "json")
	if err := json.Unmarshal([]byte(inv.stdout), &js); err != nil {
		t.Fatal(err)
	}
	inv = runCLI(t, e, "report", "--db", db, "--format", "junit")
	if inv.code != 0 {
		t.Fatalf("junit: %s", inv.stderr)
	}
	var doc struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(inv.stdout), &doc); err != nil {
		t.Fatalf("junit is not XML: %v", err)
	}
	if len(doc.Suites) != len(js.Targets) {
		t.Fatalf("%d suites for %d targets", len(doc.Suites), len(js.Targets))
	}
	for i, s := range doc.Suites {
		failures := 0
		for _, c := range s.Cases {
			if c.Failure != nil {
				failures++
			}
		}
		want := js.Targets[i]
		if s.Name != want.Name || len(s.Cases) != want.Primary.N || failures != want.Primary.N-want.Primary.Passed {
			t.Errorf("suite %s: %d cases, %d failures; the report says %s %d/%d", s.Name, len(s.Cases), failures, want.Name, want.Primary.Passed, want.Primary.N)
		}
	}
	out := filepath.Join(dir, "report.html")
	if inv := runCLI(t, e, "report", "--db", db, "--format", "html", "-o", out); inv.code != 0 {
		t.Fatalf("html: %s", inv.stderr)
	}
	page := readFileT(t, out)
	for _, want := range []string{"<svg", "model-a", "model-b", "ticket-triage"} {
		if !strings.Contains(page, want) {
			t.Errorf("html report lacks %q", want)
		}
	}
	md := runCLI(t, e, "report", "--db", db, "--format", "markdown")
	if md.code != 0 || !strings.Contains(md.stdout, "| model-a |") {
		t.Errorf("markdown report: exit %d\n%s", md.code, md.stdout)
	}
}
