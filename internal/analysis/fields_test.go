package analysis

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// fieldRun stores a run whose results are scored by the given function.
func fieldRun(t *testing.T, epochs, cases int, targets []string, tags func(c int) map[string]string,
	score func(target string, c, epoch int) []record.Score) (store.Store, *record.Run) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := &record.Run{ID: "20260101-000000-fields", Spec: "invoices", SpecHash: "sha256:s", DatasetHash: "sha256:d",
		PromptHash: "sha256:p", Targets: targets, Cases: cases, Epochs: epochs, Status: "complete", Started: t0,
		Config: []byte(`{"scorers":[{"name":"extract","type":"field_equals"},{"name":"tone","type":"judge"},{"name":"valid","type":"is_json"}]}`)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var cs []record.Case
	for c := range cases {
		cs = append(cs, record.Case{RunID: run.ID, ID: fmt.Sprintf("c%02d", c), Line: c + 1, Expected: []byte(`{}`), Tags: tags(c)})
	}
	if err := st.PutCases(ctx, cs); err != nil {
		t.Fatal(err)
	}
	var results []record.Result
	var scores []record.Score
	for _, tg := range targets {
		for c := range cases {
			for e := 1; e <= epochs; e++ {
				id := fmt.Sprintf("c%02d", c)
				results = append(results, record.Result{RunID: run.ID, CaseID: id, Target: tg, Epoch: e, Raw: "{}", CreatedAt: t0})
				for _, s := range score(tg, c, e) {
					s.RunID, s.Scoring, s.CaseID, s.Target, s.Epoch = run.ID, 1, id, tg, e
					scores = append(scores, s)
				}
			}
		}
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	return st, run
}

// fieldScore is a field_equals verdict from per-field statuses (nil: the
// output could not be compared field by field).
func fieldScore(statuses map[string]string) record.Score {
	s := record.Score{Scorer: "extract", Primary: true, Pass: true, Value: 1, Shape: "pass"}
	if statuses == nil {
		return record.Score{Scorer: "extract", Primary: true, Shape: "loud", Kind: "unparseable"}
	}
	for _, f := range []string{"vendor", "date", "total", "currency"} {
		st := statuses[f]
		if st == "" {
			st = "ok"
		}
		s.Fields = append(s.Fields, record.FieldVerdict{Field: f, Status: st})
		if st != "ok" {
			s.Pass, s.Value, s.Shape, s.Kind = false, 0, "silent", "wrong"
		}
	}
	return s
}

// Every field of a field scorer gets ok/n with a Wilson interval over
// every output the scorer scored; an output with no per-field verdict is
// not ok for any field; judge errors are counted per judge scorer and
// warned about.
func TestFieldRatesAndJudgeErrors(t *testing.T) {
	st, run := fieldRun(t, 1, 20, []string{"a", "b"}, func(int) map[string]string { return nil },
		func(target string, c, _ int) []record.Score {
			if target == "b" {
				// Every output of b is unparseable: it has no field verdicts.
				return []record.Score{fieldScore(nil)}
			}
			f := map[string]string{}
			switch {
			case c == 19:
				f = nil
			case c >= 17:
				f["vendor"] = "wrong"
			}
			if c == 18 {
				f["date"] = "missing"
			}
			if c >= 15 && c <= 18 {
				f["total"] = "wrong"
			}
			tone := record.Score{Scorer: "tone", Pass: true, Value: 1, Shape: "pass", JudgeCost: 0.001}
			if c < 3 {
				tone = record.Score{Scorer: "tone", Shape: "loud", Kind: "judge_error", JudgeCost: 0.001}
			}
			return []record.Score{fieldScore(f), tone, {Scorer: "valid", Pass: c != 19, Shape: "pass"}}
		})
	rep, err := Analyze(context.Background(), st, run, Options{NoLedger: true})
	if err != nil {
		t.Fatal(err)
	}
	a, b := rep.Targets[0], rep.Targets[1]
	// Wilson 95% intervals from statsmodels proportion_confint(k, n,
	// method="wilson"), rounded to four places.
	want := []struct {
		field                           string
		ok, n, wrong, missing, unscored int
		lo, hi                          float64
	}{
		{"vendor", 17, 20, 2, 0, 1, 0.6396, 0.9476},
		{"date", 18, 20, 0, 1, 1, 0.6990, 0.9721},
		{"total", 15, 20, 4, 0, 1, 0.5313, 0.8881},
		{"currency", 19, 20, 0, 0, 1, 0, 0},
	}
	got := a.Fields["extract"]
	if len(got) != len(want) {
		t.Fatalf("fields of a = %+v, want %d fields", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Field != w.field || g.Passed != w.ok || g.N != w.n || g.Wrong != w.wrong || g.Missing != w.missing || g.Unscored != w.unscored {
			t.Errorf("field %d = %+v, want %+v", i, g, w)
		}
		if w.hi > 0 && g.CI != [2]float64{w.lo, w.hi} {
			t.Errorf("field %s CI = %v, want [%v, %v]", w.field, g.CI, w.lo, w.hi)
		}
		if g.CIMethod != "wilson" {
			t.Errorf("field %s CI method = %q, want wilson", w.field, g.CIMethod)
		}
	}
	// b never produced a field verdict: each field is 0 of its 20 outputs.
	if bf := b.Fields["extract"]; len(bf) != 4 || bf[0].Field != "vendor" || bf[0].N != 20 || bf[0].Passed != 0 || bf[0].Unscored != 20 {
		t.Errorf("fields of b = %+v, want 4 fields each 0/20 unscored", bf)
	}
	if _, ok := a.Fields["valid"]; ok {
		t.Errorf("a scorer without field verdicts has a field table: %+v", a.Fields)
	}
	// The judge: 3 judge errors of 20, a cost per verdict.
	if len(a.Judges) != 1 || a.Judges[0].Scorer != "tone" || a.Judges[0].Errors != 3 || a.Judges[0].N != 20 ||
		a.Judges[0].ErrorRate != 0.15 || fmt.Sprintf("%.4f", a.Judges[0].CostUSD) != "0.0200" {
		t.Errorf("judges of a = %+v, want tone 3 of 20 errors costing $0.02", a.Judges)
	}
	if len(b.Judges) != 0 {
		t.Errorf("b has no judge scores, got %+v", b.Judges)
	}
	warned := slices.ContainsFunc(rep.Warnings, func(w string) bool {
		return strings.Contains(w, "target a, scorer tone: judge errors: 3 of 20 (15.0%)")
	})
	if !warned {
		t.Errorf("no judge-error warning in %q", rep.Warnings)
	}
	// Every scorer has its rate and interval: valid passes 19 of 20.
	if v := a.Scorers["valid"]; v.Passed != 19 || v.N != 20 || v.CI[1] == 0 {
		t.Errorf("valid = %+v", v)
	}
	// Failures: a fails cases 15–19 (5), b all 20; the total is counted.
	if rep.FailureCount != 25 {
		t.Errorf("failure count = %d, want 25", rep.FailureCount)
	}
}

// With several epochs (or clustered cases) a field's interval comes from
// the same mechanism as the primary rate's: a field whose verdicts equal
// the primary verdicts has the primary rate's interval and method, and so
// does every scorer's rate.
func TestFieldRatesFollowEpochsAndClusters(t *testing.T) {
	for _, tc := range []struct {
		name   string
		epochs int
		tags   func(c int) map[string]string
		method string
	}{
		{"epochs", 3, func(int) map[string]string { return nil }, "wilson_deff"},
		{"clusters", 1, func(c int) map[string]string { return map[string]string{"cluster": fmt.Sprint(c / 4)} }, "cr1_t"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, run := fieldRun(t, tc.epochs, 24, []string{"a"}, tc.tags, func(_ string, c, e int) []record.Score {
				// vendor wrong on a pattern that varies by case and epoch;
				// every other field right, so pass == vendor ok.
				f := map[string]string{}
				if (c*7+e*3)%5 == 0 || c%6 == 1 {
					f["vendor"] = "wrong"
				}
				return []record.Score{fieldScore(f), {Scorer: "valid", Pass: c%3 != 0, Shape: "pass"}}
			})
			rep, err := Analyze(context.Background(), st, run, Options{NoLedger: true})
			if err != nil {
				t.Fatal(err)
			}
			tg := rep.Targets[0]
			v := tg.Fields["extract"][0]
			if v.Field != "vendor" || v.CIMethod != tc.method || v.CI != tg.Primary.CI || v.Rate.Rate != tg.Primary.Rate || v.SE != tg.Primary.SE {
				t.Errorf("vendor = %+v, want the primary rate's interval %+v", v, tg.Primary)
			}
			if s := tg.Scorers["extract"]; s.CIMethod != tc.method || s.CI != tg.Primary.CI {
				t.Errorf("scorer extract = %+v, want the primary rate's interval %+v", s, tg.Primary)
			}
			if s := tg.Scorers["valid"]; s.CIMethod != tc.method {
				t.Errorf("scorer valid CI method = %q, want %q", s.CIMethod, tc.method)
			}
			if d := tg.Fields["extract"][1]; d.Field != "date" || d.Passed != d.N || d.CIMethod != tc.method {
				t.Errorf("date = %+v, want all ok with method %s", d, tc.method)
			}
		})
	}
}

// A tool_call scorer over cases that expect different tools: an argument's
// rate is over the results whose case expects that argument (their scores
// list it: ok, wrong, missing, or unscored when the expected tool was not
// called), never over the cases of another tool; a result scored without
// any field (a failed call) counts against every argument.
func TestToolArgumentRatesOnlyWhereExpected(t *testing.T) {
	// Cases 0–5 expect create_event{title, date}; 6–9 cancel_event{id}.
	// Case 10 should be refused and was: it passes with no field verdict,
	// and no field counts it.
	st, run := fieldRun(t, 1, 11, []string{"a"}, func(int) map[string]string { return nil },
		func(_ string, c, _ int) []record.Score {
			s := record.Score{Scorer: "extract", Primary: true, Pass: true, Value: 1, Shape: "pass"}
			add := func(field, status string) {
				s.Fields = append(s.Fields, record.FieldVerdict{Field: field, Status: status})
			}
			switch {
			case c == 10:
				return []record.Score{{Scorer: "extract", Primary: true, Pass: true, Value: 1, Shape: "pass", Reason: "refused as the case requires"}}
			case c == 9: // the call failed: no field verdicts at all
				return []record.Score{{Scorer: "extract", Primary: true, Shape: "loud", Kind: "server_error"}}
			case c == 5: // the wrong tool: nothing compared
				add("(tool)", "wrong")
				add("title", "unscored")
				add("date", "unscored")
				s.Pass, s.Shape, s.Kind = false, "silent", "wrong_tool"
			case c < 6:
				add("(tool)", "ok")
				add("title", "ok")
				st := "ok"
				if c == 4 {
					st = "wrong"
				}
				add("date", st)
			default:
				add("(tool)", "ok")
				add("id", "ok")
			}
			return []record.Score{s}
		})
	rep, err := Analyze(context.Background(), st, run, Options{NoLedger: true})
	if err != nil {
		t.Fatal(err)
	}
	// Counted by hand: (tool) ok in 0–4 and 6–8 of 10 (9 unscored); title
	// ok in 0–4 of cases 0–5 plus the failed 9; date ok in 0–3; id ok in 6–8
	// of 6–9.
	want := map[string][2]int{"(tool)": {8, 10}, "title": {5, 7}, "date": {4, 7}, "id": {3, 4}}
	got := map[string][2]int{}
	for _, f := range rep.Targets[0].Fields["extract"] {
		got[f.Field] = [2]int{f.Passed, f.N}
	}
	if len(got) != len(want) {
		t.Fatalf("fields %v, want %v", got, want)
	}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("%s: %d/%d, want %d/%d", f, got[f][0], got[f][1], w[0], w[1])
		}
	}
}

// A scorer that could not judge results (scorer_error: a tool_calls scorer
// given an object where it reads a list) is named in a warning with its
// count and first reason; the others are not.
func TestScorerErrorsWarned(t *testing.T) {
	st, run := fieldRun(t, 1, 6, []string{"a"}, func(int) map[string]string { return nil },
		func(_ string, c, _ int) []record.Score {
			seq := record.Score{Scorer: "seq", Pass: true, Value: 1, Shape: "pass"}
			if c < 4 {
				seq = record.Score{Scorer: "seq", Shape: "loud", Kind: "scorer_error", Reason: fmt.Sprintf("case %d: the expected value of tool_calls is a list", c)}
			}
			return []record.Score{fieldScore(map[string]string{}), seq}
		})
	rep, err := Analyze(context.Background(), st, run, Options{NoLedger: true})
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, w := range rep.Warnings {
		if strings.Contains(w, "scorer_error") {
			found = append(found, w)
		}
	}
	want := "target a, scorer seq: 4 of 6 results are scorer_error"
	if len(found) != 1 || !strings.HasPrefix(found[0], want) || !strings.Contains(found[0], "case 0: the expected value") {
		t.Errorf("scorer_error warnings %q; want one starting %q naming the first reason", found, want)
	}
}
