package spec

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary bytes to the spec loader: it must never panic,
// must finish quickly, and must either return a spec or positioned problems.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte(base + "scorers:\n  - {name: a, type: equals}\nrun: {epochs: 2, timeout: 5s}\n"))
	f.Add([]byte("dataset: {path: x.csv, tags: {a: b, c: 'size(case.x)'}}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("a: &a \"" + strings.Repeat("x", 4<<10) + "\"\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"))
	f.Add([]byte(base + "    limits: {concurrency: 1000000, rpm: 9223372036854775807}\nrun: {epochs: 9223372036854775807, retries: 1000}\n"))
	f.Add([]byte("targets:\n  - &t {name: a}\n  - <<: *t\n    name: b\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("{{{{"))
	f.Add([]byte("prompt:\n  user: |\n    hello\n    {{.x}}\n"))
	f.Add([]byte("run: {timeout: -1s, epochs: 99999999999999999999}\n"))
	f.Add([]byte(base + "tools:\n  - {name: a, parameters: {type: object, properties: {x: {type: integer, maximum: .inf}}}}\n  - file://t.json\n  - 7\ntool_choice: a\n"))
	f.Add([]byte(base + "response_format: {json_schema: {name: r, schema: {type: object, $ref: 'http://x'}, strict: yes}}\n"))
	f.Add([]byte("prompt:\n  messages: [{role: user, content: '{{.q}}'}, {role: tool, content: x, tool_call_id: c}]\n  messages_field: h\n"))
	f.Add([]byte("tools: [{type: function, function: {name: a, input_schema: {type: object}}}, &x {name: b}, *x]\n"))
	f.Add([]byte(base + "tools: [{name: a}, {name: b}]\nagent:\n  max_turns: 101\n  tools:\n    a: {exec: [../x, ''], replay: r.jsonl, env: [A, A, 'sk-abc']}\n    c: &h {mock: {result: 7}, timeout: 0s}\n    b: *h\n"))
	f.Add([]byte("agent: {tools: [a], max_turns: x}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		// Real specs are a few KB; the YAML parser is superlinear on
		// some large inputs, which MaxSpecBytes bounds in production.
		if len(src) > 8<<10 {
			return
		}
		// A hang is a failure too: crash the worker so the input is kept.
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				panic(fmt.Sprintf("Parse did not finish in 10s on %q", src))
			}
		}()
		sp, err := Parse("f.yaml", src)
		if err == nil {
			if sp == nil {
				t.Fatal("nil spec without problems")
			}
			return
		}
		var ps Problems
		if !errors.As(err, &ps) || len(ps) == 0 {
			t.Fatalf("error %v is not a non-empty Problems", err)
		}
		for _, p := range ps {
			if p.File != "f.yaml" || p.Line < 1 || p.Col < 1 || p.Msg == "" {
				t.Fatalf("bad problem %#v", p)
			}
			if strings.Contains(p.String(), "\x00") && !strings.Contains(string(src), "\x00") {
				t.Fatalf("problem invents bytes: %q", p.String())
			}
		}
	})
}
