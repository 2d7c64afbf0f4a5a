package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const agentTools = `tools:
  - {name: lookup, parameters: {type: object, properties: {id: {type: integer}}}}
  - {name: refund}
  - {name: escalate}
`

func TestAgentReadWithDefaults(t *testing.T) {
	path := writeSpec(t, map[string]string{
		"s.yaml": base + agentTools + `agent:
  tools:
    lookup: {exec: [./tools/lookup.sh, --fast], timeout: 2s, max_output_bytes: 4096, env: [SHOP_TOKEN]}
    refund: {replay: refunds.jsonl}
    escalate: {mock: {result: "a human will answer"}}
response_format: {json_schema: {schema: {type: object}}}
`,
		"tools/lookup.sh": "#!/bin/sh\ncat\n",
		"refunds.jsonl":   `{"tool": "refund", "arguments": {}, "result": "done"}` + "\n",
	})
	sp, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	a := sp.Agent
	if a == nil || a.MaxTurns != DefaultMaxTurns {
		t.Fatalf("agent %+v, want max_turns %d by default", a, DefaultMaxTurns)
	}
	l := a.Tools["lookup"]
	if strings.Join(l.Exec, " ") != "./tools/lookup.sh --fast" || time.Duration(l.Timeout) != 2*time.Second || l.MaxOutputBytes != 4096 || strings.Join(l.Env, ",") != "SHOP_TOKEN" {
		t.Errorf("lookup's handler %+v", l)
	}
	if a.Tools["refund"].Replay != "refunds.jsonl" || a.Tools["escalate"].Mock == nil || a.Tools["escalate"].Mock.Result != "a human will answer" {
		t.Errorf("handlers %+v", a.Tools)
	}
	var files []string
	for _, f := range sp.Files {
		files = append(files, f.Path+"@"+f.For)
	}
	if got := strings.Join(files, ","); got != "refunds.jsonl@prompt,tools/lookup.sh@prompt" {
		t.Errorf("files %s: the replay file and the handler's program are read for the prompt", got)
	}
}

// Every mistake in agent: is a problem at its FILE:LINE:COL, all at once.
func TestAgentProblems(t *testing.T) {
	cases := []struct {
		name, spec string
		want       []string
	}{
		{"no tools offered", base + "agent: {tools: {lookup: {mock: {result: x}}}}\n",
			[]string{"s.yaml:9:1: agent is set but the spec offers no tools"}},
		{"no handlers", base + agentTools + "agent: {max_turns: 3}\n",
			[]string{"s.yaml:13:1: agent.tools is required: a handler for every tool the spec offers"}},
		{"a tool without handler, a handler without tool", base + agentTools + `agent:
  tools:
    lookup: {mock: {result: x}}
    refnd: {mock: {result: y}}
    escalate: {mock: {}}
`, []string{`s.yaml:14:3: tool "refund" has no handler in agent.tools`, `s.yaml:16:5: agent.tools.refnd answers a tool the spec does not offer (did you mean "refund"?`}},
		{"max_turns out of range", base + agentTools + `agent:
  max_turns: 101
  tools: {lookup: {mock: {}}, refund: {mock: {}}, escalate: {mock: {}}}
`, []string{"s.yaml:14:14: agent.max_turns must be between 1 and 100, got 101"}},
		{"max_turns zero", base + agentTools + `agent:
  max_turns: 0
  tools: {lookup: {mock: {}}, refund: {mock: {}}, escalate: {mock: {}}}
`, []string{"s.yaml:14:14: agent.max_turns must be between 1 and 100, got 0"}},
		{"two kinds, none, bad limits", base + agentTools + `agent:
  tools:
    lookup: {exec: [./l], replay: r.jsonl}
    refund: {timeout: 2s}
    escalate: {exec: [sh], timeout: 0s, max_output_bytes: 0, env: [OK, "a b", OK]}
`, []string{
			"s.yaml:15:35: agent.tools.lookup sets exec and replay: write exactly one of exec, replay and mock",
			"s.yaml:16:5: agent.tools.refund needs a handler: exec, replay or mock",
			"s.yaml:17:37: agent.tools.escalate.timeout must be greater than 0",
			"s.yaml:17:59: agent.tools.escalate.max_output_bytes must be between 1 and",
			"s.yaml:17:72: agent.tools.escalate.env[1] must name an environment variable",
			"s.yaml:17:79: agent.tools.escalate.env[2]: OK is already named at env[0]",
		}},
		{"exec limits on other handlers, empty program, missing replay", base + agentTools + `agent:
  tools:
    lookup: {exec: [""]}
    refund: {replay: missing.jsonl}
    escalate: {mock: {result: x}, timeout: 1s, env: [A]}
`, []string{
			"s.yaml:15:21: agent.tools.lookup.exec[0] is empty",
			`s.yaml:16:22: agent.tools.refund.replay: cannot read "missing.jsonl": no such file`,
			"s.yaml:17:44: agent.tools.escalate.timeout is set but the handler is mock (timeout applies to exec handlers only)",
			"s.yaml:17:48: agent.tools.escalate.env is set but the handler is mock",
		}},
		{"a handler program that is not there", base + agentTools + `agent:
  tools:
    lookup: {exec: [./tools/missing.sh, --flag]}
    refund: {exec: [python3, tools/refund.py]}
    escalate: {exec: [./]}
`, []string{
			`s.yaml:15:21: agent.tools.lookup.exec[0]: cannot run "./tools/missing.sh": no such file`,
			`s.yaml:17:23: agent.tools.escalate.exec[0]: cannot run "./": it is a directory, not a program`,
		}},
		{"a forced call never ends the loop", base + agentTools + "tool_choice: required\n" + `agent:
  tools: {lookup: {mock: {}}, refund: {mock: {}}, escalate: {mock: {}}}
`, []string{`s.yaml:13:14: tool_choice "required" forces a call on every turn, so an agent loop could only end at max_turns`}},
		{"unknown handler key", base + agentTools + `agent:
  tools:
    lookup: {exce: [./l]}
    refund: {mock: {}}
    escalate: {mock: {reslt: x}}
`, []string{
			"s.yaml:15:5: agent.tools.lookup needs a handler: exec, replay or mock",
			`s.yaml:15:14: unknown key "exce" in agent.tools.lookup (did you mean "exec"?`,
			`s.yaml:17:23: unknown key "reslt" in agent.tools.escalate.mock (did you mean "result"?`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeSpec(t, map[string]string{"s.yaml": tc.spec})
			_, err := Load(path)
			var probs Problems
			if !errors.As(err, &probs) {
				t.Fatalf("want problems, got %v", err)
			}
			got := strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), "")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems lack %q:\n%s", w, got)
				}
			}
			if len(probs) != len(tc.want) {
				t.Errorf("%d problems, want %d:\n%s", len(probs), len(tc.want), got)
			}
		})
	}
}

// The agent decides replies like the prompt does: a handler, the turn
// bound, or a file a handler reads changes the prompt hash (so a resume
// is refused), and a spec without agent: hashes as before.
func TestAgentInPromptHash(t *testing.T) {
	spec := base + agentTools + `agent:
  max_turns: 4
  tools:
    lookup: {exec: [./lookup.sh]}
    refund: {replay: r.jsonl}
    escalate: {mock: {result: "later"}}
`
	files := map[string]string{"s.yaml": spec, "lookup.sh": "#!/bin/sh\necho 1\n", "r.jsonl": `{"tool": "refund", "arguments": {}, "result": "ok"}` + "\n"}
	path := writeSpec(t, files)
	hash := func() string {
		t.Helper()
		sp, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return sp.PromptHash()
	}
	first := hash()
	if hash() != first {
		t.Fatal("the prompt hash is not stable")
	}
	without := writeSpec(t, map[string]string{"s.yaml": base + agentTools})
	plain, err := Load(without)
	if err != nil {
		t.Fatal(err)
	}
	if plain.PromptHash() == first {
		t.Error("agent: does not change the prompt hash")
	}
	dir := filepath.Dir(path)
	change := func(what, name, body string) {
		t.Helper()
		old, _ := os.ReadFile(filepath.Join(dir, name))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if hash() == first {
			t.Errorf("%s does not change the prompt hash", what)
		}
		if err := os.WriteFile(filepath.Join(dir, name), old, 0o644); err != nil {
			t.Fatal(err)
		}
		if hash() != first {
			t.Fatalf("restoring %s does not restore the hash", name)
		}
	}
	change("the replay file's content", "r.jsonl", `{"tool": "refund", "arguments": {}, "result": "refused"}`+"\n")
	change("the handler program's content", "lookup.sh", "#!/bin/sh\necho 2\n")
	change("max_turns", "s.yaml", strings.Replace(spec, "max_turns: 4", "max_turns: 5", 1))
	change("a mock's result", "s.yaml", strings.Replace(spec, `"later"`, `"now"`, 1))
	change("a handler's arguments", "s.yaml", strings.Replace(spec, "[./lookup.sh]", "[./lookup.sh, -v]", 1))
}

// A tools file that cannot be read is one problem: the handlers of the
// tools it would have offered are not each called a tool the spec does
// not offer (with an empty list of the tools it does).
func TestAgentBesideABrokenToolsFile(t *testing.T) {
	path := writeSpec(t, map[string]string{
		"s.yaml": base + "tools: [file://t.json]\nagent:\n  tools: {lookup: {mock: {result: x}}}\n",
		"t.json": `[{"name": "lookup"`,
	})
	_, err := Load(path)
	var probs Problems
	if !errors.As(err, &probs) {
		t.Fatalf("want problems, got %v", err)
	}
	if len(probs) != 1 || !strings.Contains(err.Error(), `"t.json" is not valid JSON`) {
		t.Errorf("%d problems, want the tools file's alone:\n%v", len(probs), err)
	}
}
