package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const base = `dataset:
  path: data.jsonl
prompt:
  user: "Q: {{.question}}"
targets:
  - name: a
    provider: exec
    command: [./run]
`

func parse(t *testing.T, src string) (*Spec, Problems) {
	t.Helper()
	sp, err := Parse("s.yaml", []byte(src))
	if err == nil {
		return sp, nil
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v is not Problems", err)
	}
	return sp, ps
}

func TestProblemfResolvesWrittenPaths(t *testing.T) {
	src := base + `    limits:
      rpm: 600
scorers:
  - name: a
    type: equals
  - name: b
    type: regex
    pattern: '(['
  - {name: c, type: cel, expr: 'output == 1'}
`
	sp, ps := parse(t, src)
	if ps != nil {
		t.Fatalf("unexpected problems: %v", ps)
	}
	cases := []struct {
		path      string
		line, col int
	}{
		{"scorers[1].pattern", 16, 14},    // the value
		{"targets[0].limits.rpm", 10, 12}, // the value
		{"targets[0].limits.tpm", 9, 5},   // not written: the key of limits
		{"targets[0].limits", 9, 5},       // a block: its key
		{"scorers[2].expr", 17, 32},       // inside a flow mapping
		{"scorers[2].mode", 17, 5},        // not written: the element
		{"scorers[1]", 14, 5},             // an element: where it starts
		{"targets[3].name", 5, 1},         // no such element: the list's key
		{"volume.requests_per_month", 1, 1},
		{"prompt.user", 4, 9},
	}
	for _, c := range cases {
		p := sp.Problemf(c.path, "h", "msg %d", 1)
		if p.Line != c.line || p.Col != c.col || p.File != "s.yaml" || p.Msg != "msg 1" || p.Hint != "h" {
			t.Errorf("Problemf(%q) = %v, want s.yaml:%d:%d", c.path, p, c.line, c.col)
		}
	}
}

func TestProblemfWithoutYAML(t *testing.T) {
	sp := &Spec{File: "x.yaml"}
	if p := sp.Problemf("targets[0].name", "", "m"); p.Line != 1 || p.Col != 1 || p.File != "x.yaml" {
		t.Errorf("a spec built in code locates problems at 1:1, got %v", p)
	}
}

func TestDefaultsOnlyFillWhatIsNotWritten(t *testing.T) {
	sp, ps := parse(t, base+"run: {epochs: 3}\n")
	if ps != nil {
		t.Fatal(ps)
	}
	if sp.Run.Epochs != 3 || sp.Run.Retries != 6 || sp.Run.Timeout.D() != 60*time.Second {
		t.Errorf("run = %+v", sp.Run)
	}
	if sp.Targets[0].MaxOutputBytes != 0 {
		t.Errorf("max_output_bytes unset = %d, want 0 (the provider's own default)", sp.Targets[0].MaxOutputBytes)
	}
	sp, ps = parse(t, base+"run:\n")
	if ps != nil || sp.Run.Epochs != 1 {
		t.Errorf("an empty run: section keeps the defaults: %+v %v", sp.Run, ps)
	}
}

func TestAnchorsAliasesAndMergeKeys(t *testing.T) {
	src := `dataset: {path: data.jsonl}
prompt: {user: "{{.q}}"}
defaults: &lim
  concurrency: 4
`
	// "defaults" is not a spec key: anchors must live inside known keys.
	_, ps := parse(t, src+`targets: [{name: a, provider: exec, command: [x]}]`)
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, `unknown key "defaults"`) {
		t.Fatalf("problems = %v", ps)
	}
	src = `dataset: {path: data.jsonl}
prompt: {user: "{{.q}}"}
targets:
  - &t
    name: a
    provider: exec
    command: [x]
    limits: &lim {concurrency: 4, rpm: 60}
  - <<: *t
    name: b
    limits: *lim
`
	sp, ps := parse(t, src)
	if ps != nil {
		t.Fatal(ps)
	}
	if len(sp.Targets) != 2 || sp.Targets[1].Name != "b" || sp.Targets[1].Provider != "exec" || sp.Targets[1].Limits.RPM != 60 {
		t.Errorf("targets = %+v", sp.Targets)
	}
}

func TestAliasBombIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(base + "scorers:\n  - name: s\n    type: json_schema\n    schema:\n      a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("      a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	start := time.Now()
	_, ps := parse(t, b.String())
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	// A billion laughs of tiny values is refused by the expanded-size
	// bound (each node counts), before the decoder's node budget.
	if len(ps) == 0 || !strings.Contains(ps.Error(), "aliases expand the spec past 8 MiB") {
		t.Errorf("problems = %v", ps)
	}
}

func TestNearest(t *testing.T) {
	keys := []string{"dataset", "prompt", "targets", "scorers", "output", "run"}
	for in, want := range map[string]string{
		"scorer": "scorers", "targts": "targets", "promtp": "prompt", "datset": "dataset",
		"xyz": "", "r": "", "Prompt": "prompt", "outptu": "output",
	} {
		if got := Nearest(in, keys); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPromptHash(t *testing.T) {
	a := &Spec{Prompt: Prompt{System: "ab", User: "c"}}
	b := &Spec{Prompt: Prompt{System: "a", User: "bc"}}
	if a.PromptHash() == b.PromptHash() {
		t.Error("moving text between system and user must change the prompt hash")
	}
	if a.PromptHash() != (&Spec{Prompt: Prompt{System: "ab", User: "c"}}).PromptHash() {
		t.Error("the prompt hash must be deterministic")
	}
}

func TestSpecHashCoversBytes(t *testing.T) {
	sp1, _ := parse(t, base)
	sp2, _ := parse(t, base+"# a comment\n")
	if sp1.Hash == sp2.Hash {
		t.Error("the spec hash is over the file's bytes")
	}
}

func TestProblemsAreSortedByPosition(t *testing.T) {
	src := `run: {epochs: 0}
dataset: {path: data.jsonl, colour: x}
prompt: {user: "q"}
targets: [{name: a, provider: nope}]
`
	_, ps := parse(t, src)
	if len(ps) != 3 {
		t.Fatalf("problems = %v", ps)
	}
	for i := 1; i < len(ps); i++ {
		if ps[i-1].Line > ps[i].Line || (ps[i-1].Line == ps[i].Line && ps[i-1].Col > ps[i].Col) {
			t.Errorf("not sorted: %v", ps)
		}
	}
}

func TestLoadReadsFilePrompts(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "p", "u.txt"), []byte("U {{.q}}"), 0o644)
	os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(strings.Replace(base, `user: "Q: {{.question}}"`, "user: file://p/u.txt", 1)), 0o644)
	sp, err := Load(filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if sp.Prompt.User != "U {{.q}}" || sp.Prompt.UserFile != "p/u.txt" {
		t.Errorf("prompt = %+v", sp.Prompt)
	}
	if sp.Resolve("x/y.json") != filepath.Join(dir, "x", "y.json") || sp.Resolve("/abs") != "/abs" {
		t.Errorf("Resolve wrong")
	}
}

func TestTagsKeepWrittenOrder(t *testing.T) {
	sp, ps := parse(t, strings.Replace(base, "  path: data.jsonl\n", "  path: data.jsonl\n  tags:\n    z: a\n    m: b\n    a: 'c + d'\n", 1))
	if ps != nil {
		t.Fatal(ps)
	}
	var keys []string
	for _, tg := range sp.Dataset.Tags {
		keys = append(keys, tg.Key+"="+tg.Expr)
	}
	if strings.Join(keys, ",") != "z=a,m=b,a=c + d" {
		t.Errorf("tags = %v", keys)
	}
}

// output.strict is read for format json and is a problem, located, with any
// other format.
func TestOutputStrict(t *testing.T) {
	sp, ps := parse(t, base+"output: {format: json, strict: true}\n")
	if len(ps) != 0 || !sp.Output.Strict {
		t.Fatalf("strict json: %v, strict %v", ps, sp.Output.Strict)
	}
	_, ps = parse(t, base+"output:\n  format: last_number\n  strict: true\n")
	if len(ps) != 1 || ps[0].Line != 11 || !strings.Contains(ps[0].Msg, "output.strict applies only to output.format json, but the format is last_number") {
		t.Fatalf("strict last_number: %v", ps)
	}
}
