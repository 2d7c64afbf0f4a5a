package cli

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/selftest"
)

// selftestFixture is a spec under internal/selftest/testdata.
func selftestFixture(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(repoRoot(t), "internal", "selftest", "testdata", name)
}

// runBinaryCode runs the real binary and returns its exit code and output.
func runBinaryCode(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("running assay %v: %v", args, err)
	return 0, "", ""
}

func selftestJSON(t *testing.T, inv invocation) selftest.Report {
	t.Helper()
	var rep selftest.Report
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatalf("exit %d, stdout is not a JSON report: %v\n%s\nstderr: %s", inv.code, err, inv.stdout, inv.stderr)
	}
	return rep
}

// The must-show exit codes, from the real binary: specs whose primary
// scorer is regex `.*`, not_contains "error" or a CEL expression true for
// {} exit 3; the recorded-GSM8K spec (`A: N` extract, normalised equality)
// and the bundled quickstart exit 0; an invalid spec exits 4.
func TestSelftestExitCodes(t *testing.T) {
	t.Parallel()
	fixture := func(name string) func(*testing.T) string {
		return func(t *testing.T) string { return selftestFixture(t, name) }
	}
	for _, tc := range []struct {
		name string
		spec func(*testing.T) string
		code int
		want string // in stdout (text) or stderr
	}{
		{"regex-any", fixture("regex_any.yaml"), ExitFailed, "EXPLOITABLE"},
		{"not-contains-error", fixture("not_contains_error.yaml"), ExitFailed, "no_error (not_contains) · null model echo-prompt · raw mode"},
		{"cel-empty-object", fixture("cel_empty_object.yaml"), ExitFailed, "ok (cel) · null model json-object · raw mode"},
		{"cel-missing-field", fixture("cel_missing_field.yaml"), ExitFailed, "null model echo-input · raw mode"},
		{"sound-labels", fixture("sound_labels.yaml"), ExitOK, "verdict: sound"},
		{"quickstart", func(t *testing.T) string { return filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml") }, ExitOK, "verdict: sound"},
		{"gsm8k", func(t *testing.T) string { return gsm8kSpec(t, sharedData(t)) }, ExitOK, "verdict: sound"},
		{"bad-scorer", fixture("bad/unknown_scorer.yaml"), ExitInvalid, `unknown scorer type "equal"`},
		{"bad-dataset", fixture("bad/missing_dataset.yaml"), ExitInvalid, "dataset.path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := tc.spec(t)
			bin := assayBinary(t)
			start := time.Now()
			code, out, errOut := runBinaryCode(t, bin, "selftest", spec)
			if tc.name == "gsm8k" {
				t.Logf("GSM8K (1,319 cases): assay selftest took %v", time.Since(start))
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out+errOut, tc.want) {
				t.Errorf("output lacks %q:\n%s\n%s", tc.want, out, errOut)
			}
		})
	}
}

// The bundled quickstart's labels have a majority class (7 of 26 billing,
// 7 bug): the constant model's chance rate is high and it passes exactly
// that often; that is no alarm. The length check that passes short junk is
// a note, not a warning.
func TestSelftestQuickstart(t *testing.T) {
	t.Parallel()
	spec := filepath.Join(repoRoot(t), "examples", "quickstart", "assay.yaml")
	inv := runCLI(t, cliEnv{}, "selftest", spec, "--format", "json")
	rep := selftestJSON(t, inv)
	if inv.code != ExitOK || rep.Verdict != selftest.VerdictSound || rep.Cases != 26 {
		t.Fatalf("exit %d verdict %s cases %d; findings %+v", inv.code, rep.Verdict, rep.Cases, rep.Findings)
	}
	var constant *selftest.CellReport
	for _, c := range rep.Scorers[0].Results {
		if c.Null == selftest.NullConstant && c.Mode == selftest.ModeRaw {
			constant = &c
		}
	}
	if rep.Scorers[0].Name != "correct" || constant == nil || constant.Passed != 7 || constant.Chance != 7.0/26 || constant.Above {
		t.Errorf("constant model on %s: %+v, want 7/26 at chance 7/26", rep.Scorers[0].Name, constant)
	}
	for _, f := range rep.Findings {
		if f.Severity != selftest.SeverityNote || f.Scorer != "short" {
			t.Errorf("unexpected finding %+v", f)
		}
	}
}

// JSON names the scorer, the null model and the mode of every finding,
// with at most --examples examples; --limit bounds the cases.
func TestSelftestJSONFindings(t *testing.T) {
	t.Parallel()
	inv := runCLI(t, cliEnv{}, "selftest", selftestFixture(t, "regex_any.yaml"), "--format", "json", "--examples", "1", "--limit", "12")
	rep := selftestJSON(t, inv)
	if inv.code != ExitFailed || rep.Verdict != selftest.VerdictExploitable || rep.Cases != 12 {
		t.Fatalf("exit %d verdict %s cases %d", inv.code, rep.Verdict, rep.Cases)
	}
	seen := map[string]bool{}
	for _, f := range rep.Findings {
		n := 12
		if f.Null == selftest.NullLong {
			n = 6 // the 1 MiB model runs on at most 10 cases, evenly spread
		}
		if f.Severity != selftest.SeverityExploitable || f.Scorer != "matches" || f.Type != "regex" || f.N != n {
			t.Errorf("finding %+v", f)
		}
		if len(f.Examples) != 1 || f.Examples[0].CaseID != "c01" || f.Examples[0].Reason == "" {
			t.Errorf("finding %s/%s examples %+v, want case c01 only", f.Null, f.Mode, f.Examples)
		}
		seen[f.Null+"/"+f.Mode] = true
	}
	for _, want := range []string{"echo-prompt/raw", "echo-prompt/parsed", "long/raw", "judge-injection/parsed", "number-spray/raw"} {
		if !seen[want] {
			t.Errorf("no finding for %s; have %v", want, seen)
		}
	}
	// Empty and whitespace fail closed before the regex runs.
	if seen["empty/raw"] || seen["whitespace/parsed"] {
		t.Errorf("empty output passed the fail-closed gate: %v", seen)
	}
}

// Model-shaped text is escaped in the text report: a terminal escape
// sequence in a case (echoed by the null models) is shown quoted.
func TestSelftestEscapesOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), `{"id":"a","text":"red \u001b[31mALERT\u001b[0m <b>x</b>","label":"x"}`+"\n"+`{"id":"b","text":"plain","label":"y"}`+"\n")
	writeFile(t, filepath.Join(dir, "assay.yaml"), `name: escape
dataset: {path: cases.jsonl, id: id, expected: label}
prompt: {user: "{{.text}}"}
targets:
  - {name: m, provider: exec, command: ["true"]}
scorers:
  - {name: any, type: regex, pattern: '.*'}
`)
	inv := runCLI(t, cliEnv{}, "selftest", filepath.Join(dir, "assay.yaml"))
	if inv.code != ExitFailed {
		t.Fatalf("exit %d\n%s", inv.code, inv.stdout)
	}
	if strings.Contains(inv.stdout, "\x1b") {
		t.Errorf("a raw escape character reached the terminal:\n%q", inv.stdout)
	}
	if !strings.Contains(inv.stdout, `\x1b[31mALERT`) {
		t.Errorf("the example does not show the escaped output:\n%s", inv.stdout)
	}
}

// judgeSelftestSpec writes the judge fixture with its grader at url.
func judgeSelftestSpec(t *testing.T, url string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), readFileT(t, selftestFixture(t, "cases.jsonl")))
	spec := strings.Replace(readFileT(t, selftestFixture(t, "judge.yaml")), "http://127.0.0.1:9/v1", url+"/v1", 1)
	path := filepath.Join(dir, "assay.yaml")
	writeFile(t, path, spec)
	return path
}

// Judge scorers: skipped by default (no call, verdict incomplete, exit 0);
// --judge-via mock grades with a grader that passes everything, which makes
// a judge-based spec exploitable; --judge-via target calls the configured
// grader: a gullible one (mock answering PASS to everything) is reported
// exploitable, a strict one is sound, and a sound non-judge spec stays sound.
func TestSelftestJudges(t *testing.T) {
	t.Parallel()
	gullible, gURL := startMock(t, mock.Options{Default: `{"verdict": "pass", "reason": "ok"}`})
	strict, sURL := startMock(t, mock.Options{Default: `{"verdict": "fail", "reason": "this is not an answer to the ticket"}`})
	db := filepath.Join(t.TempDir(), "assay.db")

	gSpec := judgeSelftestSpec(t, gURL)
	inv := runCLI(t, cliEnv{}, "selftest", gSpec, "--format", "json", "--db", db)
	rep := selftestJSON(t, inv)
	if inv.code != ExitOK || rep.Verdict != selftest.VerdictIncomplete || rep.JudgeRequests != 0 || gullible.Stats().Requests != 0 {
		t.Errorf("skip: exit %d verdict %s, %d judge calls, %d requests", inv.code, rep.Verdict, rep.JudgeRequests, gullible.Stats().Requests)
	}

	inv = runCLI(t, cliEnv{}, "selftest", gSpec, "--judge-via", "mock", "--limit", "10")
	if inv.code != ExitFailed || !strings.Contains(inv.stdout, "quality (judge) · null model echo-prompt") || gullible.Stats().Requests != 0 {
		t.Errorf("mock: exit %d (the spec's grader got %d requests)\n%s", inv.code, gullible.Stats().Requests, inv.stdout)
	}

	inv = runCLI(t, cliEnv{}, "selftest", gSpec, "--judge-via", "target", "--limit", "10", "--format", "json", "--db", db)
	rep = selftestJSON(t, inv)
	if inv.code != ExitFailed || rep.Verdict != selftest.VerdictExploitable {
		t.Errorf("gullible target: exit %d verdict %s", inv.code, rep.Verdict)
	}
	// Identical judge prompts (an output the same in raw and parsed mode)
	// are served by the response cache: the grader sees at most as many
	// calls as verdicts were requested.
	if calls := gullible.Stats().Requests; calls == 0 || int64(rep.JudgeRequests) < calls {
		t.Errorf("gullible target: the report counts %d judge requests, the grader saw %d", rep.JudgeRequests, calls)
	}
	for _, nm := range rep.NullModels {
		if nm.Name == selftest.NullLong && nm.Skipped == "" {
			t.Error("the 1 MiB null model was sent to a paid grader")
		}
	}

	sSpec := judgeSelftestSpec(t, sURL)
	inv = runCLI(t, cliEnv{}, "selftest", sSpec, "--judge-via", "target", "--format", "json", "--no-cache", "--db", db)
	rep = selftestJSON(t, inv)
	if inv.code != ExitOK || rep.Verdict != selftest.VerdictSound || strict.Stats().Requests == 0 {
		t.Errorf("strict target: exit %d verdict %s, %d requests; findings %+v", inv.code, rep.Verdict, strict.Stats().Requests, rep.Findings)
	}
	if rep.Cases != 40 || len(rep.Notes) == 0 {
		t.Errorf("strict target: %d cases, notes %v", rep.Cases, rep.Notes)
	}
	// Without --limit, target mode attacks 50 cases at most (the set has 40).
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "first 50 cases") {
		t.Errorf("notes do not say target mode is bounded: %v", rep.Notes)
	}

	inv = runCLI(t, cliEnv{}, "selftest", selftestFixture(t, "sound_labels.yaml"), "--judge-via", "mock")
	if inv.code != ExitOK {
		t.Errorf("a sound spec without judges under --judge-via mock: exit %d\n%s", inv.code, inv.stdout)
	}
}

func TestSelftestUsage(t *testing.T) {
	t.Parallel()
	spec := selftestFixture(t, "sound_labels.yaml")
	for _, args := range [][]string{
		{"selftest"},
		{"selftest", spec, spec},
		{"selftest", spec, "--format", "html"},
		{"selftest", spec, "--limit", "-1"},
		{"selftest", spec, "--examples", "-2"},
		{"selftest", spec, "--judge-via", "openai"},
		{"selftest", spec, "--no-cache"},
		{"selftest", spec, "--limit", "x"},
	} {
		inv := runCLI(t, cliEnv{}, args...)
		if inv.code != ExitUsage || inv.stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, inv.code, inv.stderr)
		}
	}
	inv := runCLI(t, cliEnv{}, "selftest", filepath.Join(t.TempDir(), "nope.yaml"))
	if inv.code != ExitErr && inv.code != ExitInvalid {
		t.Errorf("missing spec file: exit %d", inv.code)
	}
}

// An unknown --format is answered with the formats the report registry
// renders a selftest in, as every other command answers it.
func TestSelftestFormatNamesRegistry(t *testing.T) {
	t.Parallel()
	inv := runCLI(t, cliEnv{}, "selftest", selftestFixture(t, "sound_labels.yaml"), "--format", "html")
	want := `--format "html": formats are ` + strings.Join(report.NewRegistry().Selftest.Names(), ", ")
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", inv.code, inv.stderr, want)
	}
}

// Ctrl-C stops the attack and exits 130 without a report.
func TestSelftestInterrupted(t *testing.T) {
	ch := make(chan os.Signal, 1)
	ch <- os.Interrupt
	inv := runCLI(t, cliEnv{interrupts: ch}, "selftest", selftestFixture(t, "sound_labels.yaml"), "--format", "json")
	if inv.code != ExitInterrupted || inv.stdout != "" {
		t.Errorf("exit %d, stdout %q; want 130 and no report", inv.code, inv.stdout)
	}
}
