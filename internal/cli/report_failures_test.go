package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// failuresReport is the part of the JSON report these tests read.
type failuresReport struct {
	Run struct {
		ID                 string `json:"id"`
		Scoring            int    `json:"scoring"`
		ScorersHash        string `json:"scorers_hash"`
		ScoringScorersHash string `json:"scoring_scorers_hash"`
	} `json:"run"`
	Targets []struct {
		Primary struct{ Passed, N int } `json:"primary"`
	} `json:"targets"`
	Worst []struct {
		ErrorCost float64 `json:"error_cost"`
		Shape     string  `json:"shape"`
	} `json:"worst"`
	FailureCount int `json:"failure_count"`
}

func reportOf(t *testing.T, e cliEnv, args ...string) failuresReport {
	t.Helper()
	inv := runCLI(t, e, append([]string{"report", "latest", "--format", "json"}, args...)...)
	if inv.code != 0 {
		t.Fatalf("report %v: exit %d: %s", args, inv.code, inv.stderr)
	}
	var rep failuresReport
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// report --failures N|all lists that many of the worst failures; every
// format says how many there are in all and how to list them all; a bad
// value is a usage error.
func TestReportFailuresFlag(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	db := filepath.Join(t.TempDir(), "assay.db")
	e := cliEnv{}
	if inv := runCLI(t, e, "run", filepath.Join(root, "examples", "quickstart", "assay.yaml"), "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	all := reportOf(t, e, "--db", db, "--failures", "all")
	// The failures are the primary scorer's: n − passed over the targets.
	want := 0
	for _, tg := range all.Targets {
		want += tg.Primary.N - tg.Primary.Passed
	}
	if want < 3 {
		t.Fatalf("the quickstart has %d failures; the test needs at least 3", want)
	}
	if all.FailureCount != want || len(all.Worst) != want {
		t.Errorf("--failures all: %d listed, failure_count %d; want every one of %d", len(all.Worst), all.FailureCount, want)
	}
	for i := 1; i < len(all.Worst); i++ {
		a, b := all.Worst[i-1], all.Worst[i]
		if a.ErrorCost < b.ErrorCost || (a.ErrorCost == b.ErrorCost && a.Shape != "silent" && b.Shape == "silent") {
			t.Errorf("worst %d (%+v) before %d (%+v): not costliest first, silent before loud", i-1, a, i, b)
		}
	}
	two := reportOf(t, e, "--db", db, "--failures", "2")
	if len(two.Worst) != 2 || two.FailureCount != want {
		t.Errorf("--failures 2: %d listed of %d; want 2 of %d", len(two.Worst), two.FailureCount, want)
	}
	if def := reportOf(t, e, "--db", db); len(def.Worst) != min(20, want) {
		t.Errorf("default: %d failures listed, want %d", len(def.Worst), min(20, want))
	}
	hint := fmt.Sprintf("2 of %d failures shown; assay report %s --failures all lists every one", want, all.Run.ID)
	for _, f := range []string{"text", "markdown", "html"} {
		inv := runCLI(t, e, "report", "latest", "--db", db, "--format", f, "--failures", "2")
		if inv.code != 0 {
			t.Fatalf("%s: %s", f, inv.stderr)
		}
		doc := inv.stdout
		if f == "markdown" {
			doc = strings.ReplaceAll(doc, `\-`, "-")
		}
		if !strings.Contains(doc, hint) {
			t.Errorf("the %s report lacks %q", f, hint)
		}
	}
	for _, bad := range []string{"0", "-3", "many", ""} {
		inv := runCLI(t, e, "report", "latest", "--db", db, "--failures", bad)
		if inv.code != 2 || !strings.Contains(inv.stderr, "--failures") || !strings.Contains(inv.stderr, "or all") {
			t.Errorf("--failures %q: exit %d, stderr %q; want a usage error naming the valid values", bad, inv.code, inv.stderr)
		}
	}
}

// A rescored run's report names the scoring it reads and the scorers hash
// the rescore was made with, in every format.
func TestReportNamesRescoredScoring(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	db := filepath.Join(t.TempDir(), "assay.db")
	e := cliEnv{}
	spec := filepath.Join(root, "examples", "quickstart", "assay.yaml")
	if inv := runCLI(t, e, "run", spec, "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	if rep := reportOf(t, e, "--db", db); rep.Run.Scoring != 1 || rep.Run.ScoringScorersHash != "" {
		t.Errorf("before a rescore: scoring %d, scoring hash %q; want 1 and none", rep.Run.Scoring, rep.Run.ScoringScorersHash)
	}
	if inv := runCLI(t, e, "rescore", "latest", "--db", db); inv.code != 0 {
		t.Fatalf("rescore: %s", inv.stderr)
	}
	// validate prints the spec's scorers hash: the one the rescore used.
	inv := runCLI(t, e, "validate", spec)
	if inv.code != 0 {
		t.Fatalf("validate: %s", inv.stderr)
	}
	var hash string
	for _, l := range strings.Split(inv.stdout, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(l), "scorers "); ok && strings.HasPrefix(h, "sha256:") {
			hash = h
		}
	}
	if hash == "" {
		t.Fatalf("validate printed no scorers hash:\n%s", inv.stdout)
	}
	rep := reportOf(t, e, "--db", db)
	if rep.Run.Scoring != 2 || rep.Run.ScoringScorersHash != hash {
		t.Errorf("after a rescore: scoring %d, scoring hash %q; want 2 and %s", rep.Run.Scoring, rep.Run.ScoringScorersHash, hash)
	}
	for _, f := range []string{"text", "markdown", "html"} {
		inv := runCLI(t, e, "report", "latest", "--db", db, "--format", f)
		if inv.code != 0 {
			t.Fatalf("%s: %s", f, inv.stderr)
		}
		if !strings.Contains(inv.stdout, "scoring 2") || !strings.Contains(inv.stdout, hash) {
			t.Errorf("the %s report does not name scoring 2 and its scorers hash %s", f, hash)
		}
	}
}

// A four-field extraction run through the real binary path: field_equals
// stores per-field verdicts and every report format shows the per-field
// table with each field's ok/n and Wilson interval.
func TestReportFieldTableEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	right := map[string]string{"vendor": `"Acme GmbH"`, "date": `"2026-02-01"`, "total": "12442", "currency": `"EUR"`}
	var cases, recorded strings.Builder
	for i := range 12 {
		fmt.Fprintf(&cases, `{"id":"c%02d","text":"invoice %d","answer":{"vendor":"Acme GmbH","date":"2026-02-01","total":12442,"currency":"EUR"}}`+"\n", i, i)
		// c08: vendor wrong; c09: total wrong; c10: currency missing;
		// c11: no JSON at all. The rest are right.
		out := fmt.Sprintf(`{"vendor":%s,"date":%s,"total":%s,"currency":%s}`, right["vendor"], right["date"], right["total"], right["currency"])
		switch i {
		case 8:
			out = strings.Replace(out, `"Acme GmbH"`, `"ACME Holdings"`, 1)
		case 9:
			out = strings.Replace(out, "12442", "12244", 1)
		case 10:
			out = strings.Replace(out, `,"currency":"EUR"`, "", 1)
		case 11:
			out = "I could not read this invoice."
		}
		line, err := json.Marshal(map[string]string{"id": fmt.Sprintf("c%02d", i), "out": out})
		if err != nil {
			t.Fatal(err)
		}
		recorded.Write(append(line, '\n'))
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	writeFile(t, filepath.Join(dir, "recorded.jsonl"), recorded.String())
	spec := filepath.Join(dir, "assay.yaml")
	writeFile(t, spec, `name: invoices
dataset: {path: cases.jsonl, id: id, expected: answer}
prompt: {user: "Extract vendor, date, total and currency as JSON: {{.text}}"}
targets:
  - {name: extractor, provider: replay, replay: {path: recorded.jsonl, join: id, output: out}}
output: {format: json}
scorers:
  - {name: fields, type: field_equals, fields: [vendor, date, total, currency], primary: true}
  - {name: valid, type: is_json}
`)
	db := filepath.Join(dir, "assay.db")
	if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db); inv.code != 0 {
		t.Fatalf("run: exit %d: %s", inv.code, inv.stderr)
	}
	// By hand: 12 outputs; vendor and total each wrong once, currency
	// missing once, and c11 unscored for every field. Wilson intervals
	// from statsmodels proportion_confint(k, 12, method="wilson").
	want := map[string]string{
		"vendor":   "10/12 83.3% [55.2, 95.3]",
		"date":     "11/12 91.7% [64.6, 98.5]",
		"total":    "10/12 83.3% [55.2, 95.3]",
		"currency": "10/12 83.3% [55.2, 95.3]",
	}
	text := runCLI(t, cliEnv{}, "report", "latest", "--db", db)
	if text.code != 0 {
		t.Fatalf("report: %s", text.stderr)
	}
	for field, cell := range want {
		if !regexp.MustCompile(`(?m)^\s*` + field + `\s+` + regexp.QuoteMeta(cell) + `\s*$`).MatchString(text.stdout) {
			t.Errorf("the text report has no row %s  %s:\n%s", field, cell, text.stdout)
		}
	}
	md := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "markdown").stdout
	for _, row := range []string{
		"| vendor | 83.3% [55.2, 95.3] (10/12) · 1 wrong, 1 unscored |",
		"| date | 91.7% [64.6, 98.5] (11/12) · 1 unscored |",
		"| total | 83.3% [55.2, 95.3] (10/12) · 1 wrong, 1 unscored |",
		"| currency | 83.3% [55.2, 95.3] (10/12) · 1 missing, 1 unscored |",
	} {
		if !strings.Contains(md, row) {
			t.Errorf("the Markdown report lacks %q:\n%s", row, md)
		}
	}
	page := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "html").stdout
	if !strings.Contains(page, `<td>currency</td><td class="num">83.3%<span class="sub">[55.2, 95.3] · 10/12 · 1 missing, 1 unscored</span></td>`) {
		t.Errorf("the HTML report lacks the currency row")
	}
	js := runCLI(t, cliEnv{}, "report", "latest", "--db", db, "--format", "json").stdout
	var rep struct {
		Targets []struct {
			Fields map[string][]struct {
				Field                               string
				Passed, N, Wrong, Missing, Unscored int
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if f := rep.Targets[0].Fields["fields"]; len(f) != 4 || f[3].Field != "currency" || f[3].Passed != 10 || f[3].Missing != 1 || f[3].Unscored != 1 {
		t.Errorf("JSON fields = %+v", f)
	}
}
