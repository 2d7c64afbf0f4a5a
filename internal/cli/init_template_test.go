package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/host"
	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// initTemplate runs `assay init --template name` into a fresh directory
// and returns the spec's path.
func initTemplateDir(t *testing.T, e cliEnv, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	inv := runCLI(t, e, "init", "--template", name, dir)
	if inv.code != 0 {
		t.Fatalf("init --template %s: exit %d: %s", name, inv.code, inv.stderr)
	}
	if !strings.Contains(inv.stdout, "assay validate "+filepath.Join(dir, "assay.yaml")) {
		t.Errorf("init --template %s: the next steps do not name the spec:\n%s", name, inv.stdout)
	}
	return filepath.Join(dir, "assay.yaml")
}

// Every template writes a spec with its data and prompt that passes
// validate with no API key in the environment, and each kind writes what
// it is: replayed targets, live openai targets, an exec program, a judge.
func TestInitTemplatesValidate(t *testing.T) {
	t.Parallel()
	e := cliEnv{env: map[string]string{"ASSAY_DB": filepath.Join(t.TempDir(), "a.db")}}
	for name, want := range map[string][]string{
		"replay": {"recorded.jsonl", "provider: replay"},
		"openai": {"provider: openai", "api_key_env: OPENAI_API_KEY"},
		"exec":   {"app.py", "provider: exec"},
		"judge":  {"recorded.jsonl", "prompts/rubric.md", "type: judge", "provider: openai"},
		"tools":  {"recorded.jsonl", "tools.json", "plans.yaml", "plans.jsonl", "agent.yaml", "turns.py", "orders.jsonl", "provider: replay", "type: tool_call", "file://tools.json"},
	} {
		t.Run(name, func(t *testing.T) {
			spec := initTemplateDir(t, e, name)
			dir := filepath.Dir(spec)
			for _, f := range []string{"cases.jsonl", filepath.Join("prompts", "system.txt")} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("no %s: %v", f, err)
				}
			}
			body := readFileT(t, spec)
			for _, w := range want {
				if strings.Contains(w, ":") {
					if !strings.Contains(body, w) {
						t.Errorf("assay.yaml lacks %q", w)
					}
				} else if _, err := os.Stat(filepath.Join(dir, w)); err != nil {
					t.Errorf("no %s: %v", w, err)
				}
			}
			if v := runCLI(t, e, "validate", spec); v.code != 0 {
				t.Fatalf("validate: exit %d: %s", v.code, v.stderr)
			}
			for _, m := range initTemplates[name].more {
				if v := runCLI(t, e, "validate", filepath.Join(dir, m)); v.code != 0 {
					t.Fatalf("validate %s: exit %d: %s", m, v.code, v.stderr)
				}
			}
		})
	}
}

// The replay and exec templates run offline, end to end, and report.
func TestInitTemplatesRunOffline(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db, "PATH": os.Getenv("PATH")}}

	spec := initTemplateDir(t, e, "replay")
	s := runJSON(t, e, "run", spec)
	// 26 tickets × 2 replayed models, every one recorded.
	if s.Status != "complete" || s.Stored != 52 || s.Errors != 0 {
		t.Fatalf("replay template: %+v, want 52 results stored with no errors", s)
	}
	if r := runCLI(t, e, "report", s.RunID); r.code != 0 || !strings.Contains(r.stdout, "model-a") {
		t.Errorf("report of the replay template: exit %d: %s", r.code, r.stderr)
	}

	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is needed for the exec template")
		}
		t.Skip("no python3 for the exec template")
	}
	spec = initTemplateDir(t, e, "exec")
	s = runJSON(t, e, "run", spec)
	if s.Status != "complete" || s.Stored != 26 || s.Errors != 0 {
		t.Fatalf("exec template: %+v, want 26 results stored with no errors", s)
	}
	got := readRun(t, db, s.RunID)
	passes := 0
	for _, v := range got {
		if v.pass {
			passes++
		}
	}
	// The keyword rules in app.py are right on most tickets, and refuse
	// the two that ask for others' data or credentials.
	if passes < 20 {
		t.Errorf("exec template: %d of 26 pass, want the keyword rules right on at least 20", passes)
	}
	if r := runCLI(t, e, "report", s.RunID); r.code != 0 || !strings.Contains(r.stdout, "keyword-rules") {
		t.Errorf("report of the exec template: exit %d: %s", r.code, r.stderr)
	}

	// The run recorded its host's load (Linux), for the saturation warning.
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.GetRun(context.Background(), s.RunID)
	if err != nil {
		t.Fatal(err)
	}
	l, err := host.Decode(run.Host)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && (l.Samples < 2 || l.Cores != runtime.NumCPU()) {
		t.Errorf("host record %q: want at least the start and end samples on %d cores", run.Host, runtime.NumCPU())
	}
}

// An unknown template is a usage error naming the templates.
func TestInitUnknownTemplate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inv := runCLI(t, cliEnv{}, "init", "--template", "antropic", dir)
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, "exec, judge, openai, replay") {
		t.Errorf("exit %d, stderr %q: want a usage error listing the templates", inv.code, inv.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an unknown template wrote %d files", len(entries))
	}
}

// The judge template runs as its comment says against assay mock: the two
// replayed models are the candidates, the grader only grades (it is not run
// on the cases), and its verdicts score every candidate result it is asked
// about.
func TestInitJudgeTemplateRunsAgainstMock(t *testing.T) {
	t.Parallel()
	srv, url := startMock(t, mock.Options{Default: `{"verdict": "pass", "reason": "mock"}`})
	db := filepath.Join(t.TempDir(), "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db, "OPENAI_API_KEY": "k-for-the-mock"}}
	spec := initTemplateDir(t, e, "judge")
	body := readFileT(t, spec)
	edited := strings.Replace(body, "    api_key_env: OPENAI_API_KEY\n", "    api_key_env: OPENAI_API_KEY\n    base_url: "+url+"/v1\n", 1)
	if edited == body {
		t.Fatal("the judge template has no api_key_env line to add base_url after")
	}
	writeFile(t, spec, edited)
	s := runJSON(t, e, "run", spec)
	if s.Status != "complete" || s.Stored != 52 || strings.Join(s.Targets, ",") != "model-a,model-b" || strings.Join(s.Judges, ",") != "grader" {
		t.Fatalf("judge template: %+v; want 52 results of the candidates model-a and model-b, grader named as a judge", s)
	}
	n := srv.Stats().Requests
	if n == 0 || n > 52 {
		t.Errorf("%d judge calls, want at most one per candidate result (1–52)", n)
	}
	r := runCLI(t, e, "report", s.RunID, "--format", "json")
	var rep struct {
		Targets []struct {
			Name    string
			Scorers map[string]struct{ Passed, N int }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report --format json: exit %d: %v: %s", r.code, err, r.stderr)
	}
	judged := 0
	for _, tg := range rep.Targets {
		judged += tg.Scorers["fits"].Passed
	}
	// The mock passes every verdict; identical judge prompts (the two
	// models gave the same answer, and the judge is not told which model
	// wrote it) are served from the response cache, so there are at least
	// as many passing verdicts as calls.
	if int64(judged) < n {
		t.Errorf("%d judge verdicts passed in the report, want at least one per judge call (%d): the mock passes every one", judged, n)
	}
}
