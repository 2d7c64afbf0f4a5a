package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
	"github.com/assay-eval/assay/internal/trend"
)

// putTrendRun stores one score-traces run (the shape assay score-traces
// writes: a case per sampled trace with its weight and model, stratum and
// time tags, a result, the primary verdict in scoring 1): for each model,
// n traces a week from monday on, the first rate·n of each week passing.
func putTrendRun(t *testing.T, db, runID, sampleID string, started, monday time.Time, n int, rates map[string][]float64) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var targets []string
	for m := range rates {
		targets = append(targets, m)
	}
	if err := st.CreateRun(ctx, &record.Run{ID: runID, Spec: "support", Sample: sampleID, DatasetHash: "sample:" + sampleID,
		ScorersHash: "sha256:s", Targets: targets, Epochs: 1, Status: record.StatusComplete, Started: started}); err != nil {
		t.Fatal(err)
	}
	var cases []record.Case
	var results []record.Result
	var scores []record.Score
	smp := &record.Sample{ID: sampleID, Created: started}
	for model, weeks := range rates {
		for wk, r := range weeks {
			for i := range n {
				id := fmt.Sprintf("%s-%s-%d-%d", sampleID, model, wk, i)
				at := monday.AddDate(0, 0, 7*wk).Add(time.Duration(i) * 37 * time.Minute)
				pass := float64(i) < r*float64(n)
				smp.Items = append(smp.Items, record.SampleItem{TraceID: id, Stratum: "model=" + model, Weight: 3})
				cases = append(cases, record.Case{RunID: runID, ID: id,
					Tags: map[string]string{"model": model, "stratum": "model=" + model, "day": at.Format(time.DateOnly)}})
				results = append(results, record.Result{RunID: runID, CaseID: id, Target: model, Epoch: 1, Raw: "ok", CreatedAt: at})
				value, shape := 0.0, "silent"
				if pass {
					value, shape = 1, "pass"
				}
				scores = append(scores, record.Score{RunID: runID, Scoring: 1, CaseID: id, Target: model, Epoch: 1,
					Scorer: "helpful", Primary: true, Pass: pass, Value: value, Shape: shape})
			}
		}
	}
	if err := st.PutCases(ctx, cases); err != nil {
		t.Fatal(err)
	}
	if err := st.PutResults(ctx, results, scores); err != nil {
		t.Fatal(err)
	}
	if err := st.PutSample(ctx, smp); err != nil {
		t.Fatal(err)
	}
}

// assay trend end to end on a store filled through the store API: a
// stable series exits 0, a planted drop exits 3 with the week marked, and
// the JSON, -o and usage errors behave as documented.
func TestTrendCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stable := filepath.Join(dir, "stable.db")
	monday := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	putTrendRun(t, stable, "20261201-000000-aaaaaa", "s-1", monday.AddDate(0, 0, 30), monday, 60,
		map[string][]float64{"gpt-x": {0.8, 0.8, 0.8, 0.8}, "claude-y": {0.9, 0.9, 0.9, 0.9}})
	inv := runCLI(t, cliEnv{}, "trend", "--db", stable)
	if inv.code != ExitOK || !strings.Contains(inv.stdout, "no drop flagged (6 tests Holm-adjusted, family-wise 5%)") {
		t.Errorf("stable: exit %d\n%s\n%s", inv.code, inv.stdout, inv.stderr)
	}

	dropped := filepath.Join(dir, "drop.db")
	putTrendRun(t, dropped, "20261201-000000-bbbbbb", "s-2", monday.AddDate(0, 0, 30), monday, 60,
		map[string][]float64{"gpt-x": {0.8, 0.8, 0.8, 0.5}, "claude-y": {0.9, 0.9, 0.9, 0.9}})
	inv = runCLI(t, cliEnv{}, "trend", "--db", dropped)
	if inv.code != ExitFailed || !strings.Contains(inv.stderr, `trend: a drop was flagged: "gpt-x" in 2026-W48`) {
		t.Errorf("drop: exit %d, stderr %q; want 3 saying a drop was flagged", inv.code, inv.stderr)
	}
	marked := 0
	for _, line := range strings.Split(inv.stdout, "\n") {
		if strings.Contains(line, "▼ drop") {
			marked++
			if !strings.Contains(line, "2026-W48") || !strings.Contains(line, "50.0%") {
				t.Errorf("the marked row is not gpt-x's fourth week: %q", line)
			}
		}
	}
	if marked != 1 {
		t.Errorf("%d rows marked, want 1:\n%s", marked, inv.stdout)
	}

	// JSON, to a file: the same verdict, the same exit code.
	out := filepath.Join(dir, "trend.json")
	inv = runCLI(t, cliEnv{}, "trend", "--db", dropped, "--format", "json", "-o", out)
	if inv.code != ExitFailed || inv.stdout != "" {
		t.Errorf("json -o: exit %d, stdout %q", inv.code, inv.stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep trend.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Drops != 1 || rep.Traces != 480 || len(rep.Models) != 2 || rep.Models[1].Model != "gpt-x" || !rep.Models[1].Points[3].Change.Drop {
		t.Errorf("json: %d drops, %d traces, models %+v", rep.Drops, rep.Traces, rep.Models)
	}

	// --weeks 2: only the last two weeks, one test per model.
	inv = runCLI(t, cliEnv{}, "trend", "--db", dropped, "--weeks", "2", "--format", "json")
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil || inv.code != ExitFailed || rep.Tests != 2 || len(rep.Windows) != 2 {
		t.Errorf("--weeks 2: exit %d, %d tests, %d windows, %v", inv.code, rep.Tests, len(rep.Windows), err)
	}
	// --since: traces before it are left out, and so are their windows.
	inv = runCLI(t, cliEnv{}, "trend", "--db", dropped, "--since", "2026-11-16", "--format", "json")
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil || len(rep.Windows) != 2 || rep.Windows[0].Label != "2026-W47" {
		t.Errorf("--since 2026-11-16: %d windows %v, %v", len(rep.Windows), rep.Windows, err)
	}

	// Usage errors exit 2 and say what would be valid.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scorer", "tone"}, `trend: --scorer: scorer "tone": no score-traces run has its verdicts; their scorers are helpful`},
		{[]string{"--window", "fortnight"}, `--window "fortnight": want a number of days: 7d (the ISO week), 14d, 2w or 30`},
		{[]string{"--since", "yesterday"}, `--since "yesterday": want RFC 3339 (2026-11-02T00:00:00Z), a UTC date (2026-11-02) or an age (30d, 8w)`},
		{[]string{"--level", "95"}, "--level 95: must be strictly between 0 and 1"},
		{[]string{"--format", "pdf"}, `--format "pdf": formats are text, markdown, json, html`},
		{[]string{"--min-n", "1"}, "--min-n 1: a window needs at least 2 traces to be tested"},
	} {
		inv := runCLI(t, cliEnv{}, append([]string{"trend", "--db", dropped}, c.args...)...)
		if inv.code != ExitUsage || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, inv.code, inv.stderr, c.want)
		}
	}
	// A store without a score-traces run of the spec: exit 1, saying how
	// to make one.
	inv = runCLI(t, cliEnv{}, "trend", "--db", dropped, "--spec", "billing")
	if inv.code != ExitErr || !strings.Contains(inv.stderr, `trend: no score-traces run of spec "billing" in the store`) {
		t.Errorf("other spec: exit %d, stderr %q", inv.code, inv.stderr)
	}
	// --spec also takes the spec's file: its name is the one looked for.
	inv = runCLI(t, cliEnv{}, "trend", "--db", dropped, "--spec", filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml"))
	if inv.code != ExitErr || !strings.Contains(inv.stderr, `trend: no score-traces run of spec "ticket-triage" in the store`) {
		t.Errorf("--spec FILE: exit %d, stderr %q", inv.code, inv.stderr)
	}
	inv = runCLI(t, cliEnv{}, "trend", "--db", dropped, "--spec", "support", "--format", "json")
	if inv.code != ExitFailed {
		t.Errorf("--spec support: exit %d, want 3 (its run has the drop)", inv.code)
	}
}
