package report

import (
	"context"
	"fmt"
	"html"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// extractionTargets are the two candidates of the extraction fixture.
var extractionTargets = []string{"gpt-4o-mini", "llama-local"}

// extractionFields says, for case i of 40, each field's status for a
// target (nil: the output was unparseable, so no field was compared).
// gpt-4o-mini: unparseable on case 39; vendor wrong on i%10 == 3 (4
// cases), date missing on i%8 == 5 (5), total wrong on i%5 == 0 (8),
// currency wrong on case 7. llama-local: unparseable on i%4 == 3 (10
// cases); vendor wrong on i%6 == 0 (7), total wrong on i%3 == 1 (10 of the
// parseable), currency missing on i%9 == 2 (4 of the parseable).
func extractionFields(target string, i int) map[string]string {
	f := map[string]string{}
	if target == "gpt-4o-mini" {
		if i == 39 {
			return nil
		}
		if i%10 == 3 {
			f["vendor"] = "wrong"
		}
		if i%8 == 5 {
			f["date"] = "missing"
		}
		if i%5 == 0 {
			f["total"] = "wrong"
		}
		if i == 7 {
			f["currency"] = "wrong"
		}
		return f
	}
	if i%4 == 3 {
		return nil
	}
	if i%6 == 0 {
		f["vendor"] = "wrong"
	}
	if i%3 == 1 {
		f["total"] = "wrong"
	}
	if i%9 == 2 {
		f["currency"] = "missing"
	}
	return f
}

// extractionOutput is a target's reply to case i with the given field
// statuses: a wrong field has another value, a missing one is absent.
func extractionOutput(f map[string]string, i int) string {
	if f == nil {
		return "Sure! Here is the invoice data you asked for."
	}
	vals := []struct{ name, ok, wrong string }{
		{"vendor", fmt.Sprintf(`"Acme %d"`, i), `"ACME Holdings"`},
		{"date", fmt.Sprintf(`"2026-02-%02d"`, i%28+1), `"01/02/2026"`},
		{"total", fmt.Sprintf("%d.50", 100+i), fmt.Sprintf("%d.05", 100+i)},
		{"currency", `"EUR"`, `"USD"`},
	}
	var parts []string
	for _, v := range vals {
		switch f[v.name] {
		case "missing":
		case "wrong":
			parts = append(parts, fmt.Sprintf("%q:%s", v.name, v.wrong))
		default:
			parts = append(parts, fmt.Sprintf("%q:%s", v.name, v.ok))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

const extractionRun = "20260301-101500-a1b2c3"

// extractionReport stores a four-field invoice extraction run (vendor,
// date, total, currency) of two targets on 40 cases, rescored once: the
// latest scoring has a field_equals scorer (primary), an is_json scorer
// and a judge that failed on 37 of gpt-4o-mini's 40 outputs. The report is
// what analysis.Analyze makes of it, listing at most worst failures.
func extractionReport(t *testing.T, worst int) *analysis.Report {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)
	run := &record.Run{ID: extractionRun, Spec: "invoice-extraction", SpecHash: "sha256:5pec", DatasetHash: "sha256:da7a",
		PromptHash: "sha256:9r0m", ScorersHash: "sha256:0r1g1nal", Targets: extractionTargets, Cases: 40, Epochs: 1,
		Status: record.StatusComplete, Started: t0, Ended: t0.Add(4 * time.Minute),
		Config: []byte(`{"name":"invoice-extraction","scorers":[{"name":"extract","type":"field_equals","fields":["vendor","date","total","currency"],"primary":true},{"name":"valid_json","type":"is_json"},{"name":"tone","type":"judge","target":"grader"}]}`)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	buckets := []string{"common", "edge", "hostile", "should-refuse"}
	var cases []record.Case
	for i := range 40 {
		cases = append(cases, record.Case{RunID: run.ID, ID: fmt.Sprintf("inv-%02d", i), Line: i + 1,
			Expected: []byte(fmt.Sprintf(`{"vendor":"Acme %d","date":"2026-02-%02d","total":%d.50,"currency":"EUR"}`, i, i%28+1, 100+i)),
			Tags:     map[string]string{"bucket": buckets[i%4]}})
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	var results []record.Result
	var first []record.Score
	for ti, tg := range extractionTargets {
		for i := range 40 {
			id := fmt.Sprintf("inv-%02d", i)
			raw := extractionOutput(extractionFields(tg, i), i)
			results = append(results, record.Result{RunID: run.ID, CaseID: id, Target: tg, Epoch: 1, Raw: raw,
				InputTokens: 310, OutputTokens: 42, CostUSD: 0.0002 / float64(ti+1), LatencyMS: float64(400 + 37*((i*7)%11) + 300*ti), CreatedAt: t0})
			first = append(first, record.Score{RunID: run.ID, Scoring: 1, CaseID: id, Target: tg, Epoch: 1, Scorer: "extract",
				Primary: true, Pass: true, Value: 1, Shape: "pass"})
		}
	}
	if err := st.PutResults(ctx, results, first); err != nil {
		t.Fatal(err)
	}
	// The rescore: the scores a field_equals, an is_json and a judge scorer
	// give, written directly.
	scoring, err := st.ReserveScoring(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var scores []record.Score
	for _, tg := range extractionTargets {
		for i := range 40 {
			key := record.Score{RunID: run.ID, Scoring: scoring, CaseID: fmt.Sprintf("inv-%02d", i), Target: tg, Epoch: 1}
			f := extractionFields(tg, i)
			s := key
			s.Scorer, s.Primary = "extract", true
			switch {
			case f == nil:
				s.Shape, s.Kind, s.Reason, s.ErrorCost = "loud", "unparseable", "no JSON value in the output", 0.05
			default:
				var parts []string
				s.Pass, s.Value, s.Shape = true, 1, "pass"
				for _, name := range []string{"vendor", "date", "total", "currency"} {
					status := f[name]
					if status == "" {
						status = "ok"
					}
					s.Fields = append(s.Fields, record.FieldVerdict{Field: name, Status: status})
					parts = append(parts, name+" "+status)
					if status != "ok" {
						s.Pass, s.Value = false, 0
						if s.Shape == "pass" || status == "missing" {
							s.Shape, s.Kind = "silent", "wrong"
						}
						if status == "missing" {
							s.Shape, s.Kind = "loud", "invalid_format"
						}
					}
				}
				s.Reason = strings.Join(parts, "; ")
				if !s.Pass {
					s.ErrorCost = 0.1
					if f["total"] == "wrong" {
						s.ErrorCost = 2.5 // a wrong total is paid out
					}
				}
			}
			v := key
			v.Scorer, v.Pass, v.Shape = "valid_json", f != nil, "pass"
			if f == nil {
				v.Shape, v.Kind = "loud", "unparseable"
			} else {
				v.Value = 1
			}
			j := key
			j.Scorer, j.JudgeCost = "tone", 0.0005
			switch {
			case tg == "gpt-4o-mini" && i < 37, tg == "llama-local" && i == 0:
				j.Shape, j.Kind, j.Reason = "loud", "judge_error", "the judge's reply is not a verdict"
			case i%5 != 4:
				j.Pass, j.Value, j.Shape = true, 1, "pass"
			default:
				j.Shape, j.Kind = "silent", "wrong"
			}
			scores = append(scores, s, v, j)
		}
	}
	if err := st.PutScores(ctx, scores); err != nil {
		t.Fatal(err)
	}
	if err := st.SetScoringScorersHash(ctx, run.ID, scoring, "sha256:r35c0r3d"); err != nil {
		t.Fatal(err)
	}
	if err := st.CompleteScoring(ctx, run.ID, scoring); err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Analyze(ctx, st, run, analysis.Options{Worst: worst})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A four-field extraction run's reports show, in every format, a table per
// field scorer with each field's ok/n and Wilson interval, every scorer's
// rate, the judge's errors loudly, the rescored scoring with its scorers
// hash, and how many failures there are and how to list them all.
func TestExtractionReportGolden(t *testing.T) {
	rep := extractionReport(t, 3)
	all := renderAll(t, rep)
	docs := map[string]string{"txt": all["text"], "md": all["markdown"], "html": all["html"]}
	for _, ext := range []string{"txt", "md", "html"} {
		golden(t, "extraction."+ext+".golden", []byte(docs[ext]))
	}
	// The numbers, derived by hand from extractionFields; the intervals
	// from statsmodels proportion_confint(k, 40, method="wilson"):
	//   gpt-4o-mini vendor: 40 − 4 wrong − 1 unparseable = 35/40 → 87.5% [73.9, 94.5]
	//   gpt-4o-mini date:   40 − 5 missing − 1 = 34/40 → 85.0% [70.9, 92.9]
	//   llama-local vendor: 40 − 10 unparseable − 7 wrong = 23/40 → 57.5% [42.2, 71.5]
	//   llama-local total:  30 parseable − 10 wrong = 20/40 → 50.0% [35.2, 64.8]
	want := map[string][]string{
		"txt": {
			"35/40 87.5% [73.9, 94.5]", "34/40 85.0% [70.9, 92.9]", "23/40 57.5% [42.2, 71.5]", "20/40 50.0% [35.2, 64.8]",
		},
		"md": {
			"87.5% [73.9, 94.5] (35/40) · 4 wrong, 1 unscored", "85.0% [70.9, 92.9] (34/40) · 5 missing, 1 unscored",
			"57.5% [42.2, 71.5] (23/40) · 7 wrong, 10 unscored", "50.0% [35.2, 64.8] (20/40) · 10 wrong, 10 unscored",
		},
		"html": {
			`87.5%<span class="sub">[73.9, 94.5] · 35/40 · 4 wrong, 1 unscored</span>`,
			`85.0%<span class="sub">[70.9, 92.9] · 34/40 · 5 missing, 1 unscored</span>`,
			`57.5%<span class="sub">[42.2, 71.5] · 23/40 · 7 wrong, 10 unscored</span>`,
			`50.0%<span class="sub">[35.2, 64.8] · 20/40 · 10 wrong, 10 unscored</span>`,
		},
	}
	for ext, doc := range docs {
		if ext == "html" {
			doc = html.UnescapeString(doc)
		}
		for _, w := range want[ext] {
			if !strings.Contains(doc, w) {
				t.Errorf("%s report lacks %q", ext, w)
			}
		}
		// The judge failed on 37 of gpt-4o-mini's 40 outputs: 92.5%.
		if !strings.Contains(doc, "judge errors: 37 of 40 (92.5%) — this scorer's rate is not evidence") &&
			!strings.Contains(doc, `judge errors: 37 of 40 \(92.5%\) — this scorer's rate is not evidence`) {
			t.Errorf("%s report does not say the judge failed 37 of 40 times", ext)
		}
		for _, w := range []string{"scoring 2", "sha256:r35c0r3d", "--failures all"} {
			if !strings.Contains(doc, strings.ReplaceAll(w, "_", `\_`)) && !strings.Contains(doc, w) {
				t.Errorf("%s report lacks %q", ext, w)
			}
		}
	}
	// Failures: gpt-4o-mini fails every case with a non-ok field or no
	// JSON (i%10==3: 4; i%8==5: 4 more, 13 counted; i%5==0: 7 more, 5
	// counted; 7; 39: 17 distinct cases); llama-local
	// 10 unparseable + the parseable ones with a wrong or missing field.
	gptFails := 0
	llamaFails := 0
	for i := range 40 {
		if f := extractionFields("gpt-4o-mini", i); f == nil || len(f) > 0 {
			gptFails++
		}
		if f := extractionFields("llama-local", i); f == nil || len(f) > 0 {
			llamaFails++
		}
	}
	if gptFails != 17 {
		t.Fatalf("the fixture's gpt-4o-mini failures = %d, want 17 (recount by hand)", gptFails)
	}
	if rep.FailureCount != gptFails+llamaFails {
		t.Errorf("failure count = %d, want %d", rep.FailureCount, gptFails+llamaFails)
	}
	hint := fmt.Sprintf("3 of %d failures shown; assay report %s --failures all lists every one", gptFails+llamaFails, extractionRun)
	if !strings.Contains(docs["txt"], hint) {
		t.Errorf("the text report lacks %q", hint)
	}
	// The three listed are the costliest (a wrong total, $2.50), silent
	// before loud.
	for i, f := range rep.Worst {
		if f.ErrorCost != 2.5 || f.Shape != "silent" {
			t.Errorf("worst %d = %+v, want a silent failure costing $2.50", i, f)
		}
	}
}
