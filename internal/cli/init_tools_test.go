package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The tools template runs offline end to end, as its next steps say: both
// specs run with no key and no network, every report format renders, and
// selftest calls both scorers sound. The report's pass counts and
// tool-selection rates equal what the test counts itself from the
// template's cases and recorded calls, and the two recorded models differ.
func TestInitToolsTemplateRunsOffline(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db}}
	spec := initTemplateDir(t, e, "tools")
	dir := filepath.Dir(spec)
	inv := runCLI(t, e, "init", "--template", "tools", "--json", filepath.Join(t.TempDir(), "again"))
	if inv.code != 0 || !strings.Contains(inv.stdout, "plans.yaml") || !strings.Contains(inv.stdout, "agent.yaml") {
		t.Errorf("init --template tools --json: exit %d; its next steps do not run plans.yaml and agent.yaml:\n%s", inv.code, inv.stdout)
	}

	want := toolsTemplateCounts(t, dir)
	s := runJSON(t, e, "run", spec)
	if s.Status != "complete" || s.Stored != 44 || s.Errors != 0 {
		t.Fatalf("tools template: %+v, want 22 messages × 2 replayed models stored with no errors", s)
	}
	r := runCLI(t, e, "report", s.RunID, "--format", "json")
	var rep struct {
		Targets []struct {
			Name    string
			Scorers map[string]struct{ Passed, N int }
			Fields  map[string][]struct {
				Field     string
				Passed, N int
			}
		}
		Comparisons []struct{ Verdict string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report --format json: exit %d: %v: %s", r.code, err, r.stderr)
	}
	if len(rep.Targets) != 2 {
		t.Fatalf("report has %d targets, want model-a and model-b", len(rep.Targets))
	}
	for _, tg := range rep.Targets {
		w := want[tg.Name]
		if got := tg.Scorers["action"]; got.N != 22 || got.Passed != w.pass {
			t.Errorf("%s: action passed %d of %d, want %d of 22 (counted from the recorded calls)", tg.Name, got.Passed, got.N, w.pass)
		}
		var tool *struct {
			Field     string
			Passed, N int
		}
		for i, f := range tg.Fields["action"] {
			if f.Field == "(tool)" {
				tool = &tg.Fields["action"][i]
			}
		}
		if tool == nil || tool.N != 22 || tool.Passed != w.tool {
			t.Errorf("%s: tool selection %+v, want %d of 22 right (counted from the recorded calls)", tg.Name, tool, w.tool)
		}
	}
	if want["model-a"].pass == want["model-b"].pass {
		t.Errorf("the two recorded models pass alike (%d): the template should show a difference", want["model-a"].pass)
	}
	if len(rep.Comparisons) != 1 || !strings.Contains(rep.Comparisons[0].Verdict, "better") {
		t.Errorf("paired comparison %+v: want one that separates the two models", rep.Comparisons)
	}
	for _, f := range []string{"text", "markdown", "html", "junit"} {
		if r := runCLI(t, e, "report", s.RunID, "--format", f); r.code != 0 || !strings.Contains(r.stdout, "model-b") {
			t.Errorf("report --format %s: exit %d: %s", f, r.code, r.stderr)
		}
	}

	plans := filepath.Join(dir, "plans.yaml")
	if s := runJSON(t, e, "run", plans); s.Status != "complete" || s.Stored != 20 || s.Errors != 0 {
		t.Errorf("plans.yaml: %+v, want 10 messages × 2 replayed models stored with no errors", s)
	} else if r := runCLI(t, e, "report", "latest"); r.code != 0 || !strings.Contains(r.stdout, "support-plans") {
		t.Errorf("report latest after plans.yaml: exit %d: %s", r.code, r.stderr)
	}

	for _, sp := range []string{spec, plans} {
		if st := runCLI(t, e, "selftest", sp); st.code != 0 || !strings.Contains(st.stdout, "verdict: sound") {
			t.Errorf("selftest %s: exit %d, want sound:\n%s%s", filepath.Base(sp), st.code, st.stdout, st.stderr)
		}
	}
}

type toolsCount struct{ pass, tool int }

// toolsTemplateCounts counts, per recorded model, the messages whose reply
// is exactly the expected call (the right tool, once, with every expected
// argument equal: strings trimmed and lower-cased, numbers by value) and
// those where the expected tool was the only one called.
func toolsTemplateCounts(t *testing.T, dir string) map[string]toolsCount {
	t.Helper()
	type call struct {
		Name      string
		Arguments json.RawMessage
	}
	expected := map[string]call{}
	for _, line := range jsonLines(t, filepath.Join(dir, "cases.jsonl")) {
		var c struct {
			Message string
			Call    call
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		expected[c.Message] = c.Call
	}
	norm := func(v any) any {
		if s, ok := v.(string); ok {
			return strings.ToLower(strings.TrimSpace(s))
		}
		return v
	}
	out := map[string]toolsCount{}
	for _, line := range jsonLines(t, filepath.Join(dir, "recorded.jsonl")) {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		var msg string
		if err := json.Unmarshal(rec["message"], &msg); err != nil {
			t.Fatal(err)
		}
		exp, ok := expected[msg]
		if !ok {
			continue // a message of plans.jsonl
		}
		var wantArgs map[string]any
		if err := json.Unmarshal(exp.Arguments, &wantArgs); err != nil {
			t.Fatal(err)
		}
		for target, field := range map[string]string{"model-a": "model_a", "model-b": "model_b"} {
			var reply struct {
				ToolCalls []struct{ Name, Arguments string } `json:"tool_calls"`
			}
			if err := json.Unmarshal(rec[field], &reply); err != nil {
				t.Fatal(err)
			}
			n := out[target]
			if len(reply.ToolCalls) == 1 && reply.ToolCalls[0].Name == exp.Name {
				n.tool++
				var got map[string]any
				same := json.Unmarshal([]byte(reply.ToolCalls[0].Arguments), &got) == nil
				for k, w := range wantArgs {
					same = same && norm(got[k]) == norm(w)
				}
				if same {
					n.pass++
				}
			}
			out[target] = n
		}
	}
	return out
}

func jsonLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) > 0 {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// The tools template's agent.yaml runs its loop offline: the recorded
// conversations replay one turn per model call (turns.py, an exec target)
// and the handlers answer from orders.jsonl and fixed replies. The report's
// pass counts, calls and turns per case equal what the test counts from the
// recorded conversations, the model that loops ends loudly at max_turns,
// and selftest calls the spec sound.
func TestInitToolsTemplateAgentLoop(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is needed for the tools template's agent.yaml")
		}
		t.Skip("no python3 for the tools template's agent.yaml")
	}
	db := filepath.Join(t.TempDir(), "a.db")
	e := cliEnv{env: map[string]string{"ASSAY_DB": db, "PATH": os.Getenv("PATH")}}
	spec := filepath.Join(filepath.Dir(initTemplateDir(t, e, "tools")), "agent.yaml")
	want := agentTemplateCounts(t, filepath.Dir(spec))

	s := runJSON(t, e, "run", spec)
	if s.Status != "complete" || s.Stored != 16 {
		t.Fatalf("agent.yaml: %+v, want 8 conversations × 2 models stored", s)
	}
	r := runCLI(t, e, "report", s.RunID, "--format", "json")
	var rep struct {
		Targets []struct {
			Name     string
			Scorers  map[string]struct{ Passed, N int }
			Failures struct {
				ByKind map[string]int `json:"by_kind"`
			}
		}
		Calls struct {
			Agent   bool
			Targets []struct {
				Target string
				Calls  struct{ Total float64 } `json:"calls_per_case"`
				Turns  struct{ Total float64 } `json:"turns_per_case"`
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report --format json: exit %d: %v: %s", r.code, err, r.stderr)
	}
	for _, tg := range rep.Targets {
		w := want[tg.Name]
		if got := tg.Scorers["plan"]; got.N != 8 || got.Passed != w.pass {
			t.Errorf("%s: plan passed %d of %d, want %d of 8 (counted from the recorded conversations)", tg.Name, got.Passed, got.N, w.pass)
		}
		if got := tg.Failures.ByKind["max_turns"]; got != w.maxTurns {
			t.Errorf("%s: %d max_turns failures, want %d (conversations recorded past agent.max_turns 4)", tg.Name, got, w.maxTurns)
		}
	}
	if !rep.Calls.Agent || len(rep.Calls.Targets) != 2 {
		t.Fatalf("report's calls section %+v: want an agent run's, for two targets", rep.Calls)
	}
	for _, c := range rep.Calls.Targets {
		w := want[c.Target]
		if int(c.Calls.Total) != w.calls || int(c.Turns.Total) != w.turns {
			t.Errorf("%s: %v calls and %v turns in the report, want %d and %d (counted from the recorded conversations)\n%s", c.Target, c.Calls.Total, c.Turns.Total, w.calls, w.turns, r.stdout)
		}
	}
	if want["model-a"].pass == want["model-b"].pass {
		t.Errorf("the two recorded agents pass alike (%d): the template should show a difference", want["model-a"].pass)
	}
	if st := runCLI(t, e, "selftest", spec); st.code != 0 || !strings.Contains(st.stdout, "verdict: sound") || strings.Contains(st.stdout, "warning:") {
		t.Errorf("selftest agent.yaml: exit %d, want sound with no warning:\n%s%s", st.code, st.stdout, st.stderr)
	}
}

type agentCount struct{ pass, calls, turns, maxTurns int }

// agentTemplateCounts counts, per recorded model of agent.yaml, the
// conversations whose calls over every turn are exactly the expected ones
// in order (each expected argument equal: strings trimmed and lower-cased,
// numbers by value), the calls and model turns made (at most max_turns 4
// each), and the conversations still calling tools at the fourth turn.
func agentTemplateCounts(t *testing.T, dir string) map[string]agentCount {
	t.Helper()
	const maxTurns = 4
	type call struct {
		Name      string
		Arguments json.RawMessage
	}
	expected := map[string][]call{}
	for _, line := range jsonLines(t, filepath.Join(dir, "agent.jsonl")) {
		var c struct {
			ID    string
			Calls []call
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		expected[c.ID] = c.Calls
	}
	norm := func(v any) any {
		if s, ok := v.(string); ok {
			return strings.ToLower(strings.TrimSpace(s))
		}
		return v
	}
	type turn struct {
		ToolCalls []struct{ Name, Arguments string } `json:"tool_calls"`
	}
	out := map[string]agentCount{}
	for _, line := range jsonLines(t, filepath.Join(dir, "conversations.jsonl")) {
		var rec struct {
			ID     string
			ModelA []turn `json:"model_a"`
			ModelB []turn `json:"model_b"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		exp := expected[rec.ID]
		for target, turns := range map[string][]turn{"model-a": rec.ModelA, "model-b": rec.ModelB} {
			n := out[target]
			if len(turns) > maxTurns {
				turns = turns[:maxTurns]
			}
			var made []struct{ Name, Arguments string }
			for _, tu := range turns {
				made = append(made, tu.ToolCalls...)
			}
			n.calls += len(made)
			n.turns += len(turns)
			looped := len(turns[len(turns)-1].ToolCalls) > 0
			if looped {
				n.maxTurns++
			}
			same := !looped && len(made) == len(exp)
			for i := 0; same && i < len(made); i++ {
				var got, w map[string]any
				same = made[i].Name == exp[i].Name && json.Unmarshal([]byte(made[i].Arguments), &got) == nil && json.Unmarshal(exp[i].Arguments, &w) == nil
				for k, v := range w {
					same = same && norm(got[k]) == norm(v)
				}
			}
			if same {
				n.pass++
			}
			out[target] = n
		}
	}
	return out
}
