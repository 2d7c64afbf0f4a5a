package rewriter

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/probe"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

func TestParseRewrite(t *testing.T) {
	orig := map[string]string{"question": "How many legs do 2 cats have?", "context": "Cats have four legs."}
	good := map[string]string{"question": "Two cats: how many legs in all?", "context": "A cat has 4 legs."}
	tests := []struct {
		name, reply string
		want        map[string]string
		kind        string
	}{
		{"bare object", `{"question": "Two cats: how many legs in all?", "context": "A cat has 4 legs."}`, good, ""},
		{"fenced, with prose and an extra key", "Sure!\n```json\n{\"question\": \"  Two cats: how many legs in all?\", \"context\": \"A cat has 4 legs.\", \"note\": 1}\n```\nDone.", good, ""},
		{"empty reply", "  \n", nil, probe.FailEmpty},
		{"prose only", "I cannot rewrite this.", nil, probe.FailUnparseable},
		{"an array", `["Two cats?"]`, nil, probe.FailUnparseable},
		{"a field missing", `{"question": "Two cats: how many legs in all?"}`, nil, probe.FailUnparseable},
		{"a field not text", `{"question": 8, "context": "A cat has 4 legs."}`, nil, probe.FailUnparseable},
		{"a field empty", `{"question": " ", "context": "A cat has 4 legs."}`, nil, probe.FailEmpty},
		{"a field unchanged but for case and spaces", `{"question": "how many  LEGS do 2 cats have?", "context": "A cat has 4 legs."}`, nil, probe.FailUnchanged},
		{"truncated", `{"question": "Two cats: how many legs`, nil, probe.FailUnparseable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fail := Parse(tt.reply, orig)
			switch {
			case tt.kind == "" && fail != nil:
				t.Fatalf("failure %+v, want %v", fail, tt.want)
			case tt.kind != "" && (fail == nil || fail.Kind != tt.kind):
				t.Fatalf("got %v, %+v; want a %s failure", got, fail, tt.kind)
			case tt.kind == "" && !reflect.DeepEqual(got, tt.want):
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	// A reply quoted in a reason is Go-quoted and clipped: a hostile reply
	// cannot forge lines in the report.
	_, fail := Parse("no json\n\x1b[2J"+strings.Repeat("x", 500), orig)
	if fail == nil || strings.ContainsAny(fail.Reason, "\n\x1b") || len(fail.Reason) > 300 {
		t.Errorf("reason %q", fail)
	}
}

// The case's text goes to the rewriter as JSON data after the fixed
// instruction; template syntax in it is not executed.
func TestRewriteMessagesCarryDataNotTemplates(t *testing.T) {
	msgs, err := Messages(map[string]string{"question": `What is {{.answer}} & <b>?`})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[0].Content != probe.RewriteSystem {
		t.Fatalf("messages %+v", msgs)
	}
	user := msgs[1].Content
	head, body, ok := strings.Cut(user, "\n\n")
	if !ok || head != probe.RewriteInstruction {
		t.Fatalf("user message %q does not start with the instruction", user)
	}
	var fields map[string]string
	if err := json.Unmarshal([]byte(body), &fields); err != nil || fields["question"] != `What is {{.answer}} & <b>?` {
		t.Errorf("fields %v (%v) from %q", fields, err, body)
	}
}

type scripted struct {
	reply string
	err   error
	got   *provider.Request
}

func (s *scripted) Complete(_ context.Context, req *provider.Request) (*provider.Response, error) {
	s.got = req
	if s.err != nil {
		return nil, s.err
	}
	return &provider.Response{Text: s.reply}, nil
}

func TestRewriteKeepsTheOtherFieldsAndTheAnswer(t *testing.T) {
	temp := 0.3
	tg := &spec.Target{Name: "para", Provider: "openai", Model: "m", Params: spec.Params{Temperature: &temp}}
	c := &dataset.Case{ID: "c1", Line: 4, Vars: map[string]any{"question": "What is 2+2?", "answer": "4", "level": 1.0}, Expected: "4"}
	p := &scripted{reply: `{"question": "Two plus two is what?"}`}
	tw, fail := Rewrite(context.Background(), p, tg, c, []string{"question"})
	if fail != nil {
		t.Fatal(fail)
	}
	want := map[string]any{"question": "Two plus two is what?", "answer": "4", "level": 1.0}
	if !reflect.DeepEqual(tw.Vars, want) || tw.OwnExpected || tw.CaseID != "c1" {
		t.Errorf("twin %+v", tw)
	}
	if c.Vars["question"] != "What is 2+2?" {
		t.Error("the original case was modified")
	}
	if p.got.Model != "m" || p.got.Params.Temperature != &temp || p.got.CaseID != "c1" {
		t.Errorf("request %+v", p.got)
	}

	_, fail = Rewrite(context.Background(), &scripted{err: &provider.Error{Kind: provider.KindServer, Status: 500}}, tg, c, []string{"question"})
	if fail == nil || fail.Kind != probe.FailCall || fail.CaseID != "c1" || !strings.Contains(fail.Reason, "server_error") {
		t.Errorf("failed call: %+v", fail)
	}
	_, fail = Rewrite(context.Background(), p, tg, c, []string{"level"})
	if fail == nil || !strings.Contains(fail.Reason, "not text") {
		t.Errorf("a number field: %+v", fail)
	}
	if _, err := probe.TextFields(c, []string{"nope"}); err == nil {
		t.Errorf("a missing field: %v", err)
	}
}

// FuzzParseRewrite feeds arbitrary replies (model output is hostile) to the
// rewrite parser: no panic; a success holds non-empty text for exactly the
// fields asked; a failure has a known kind and a one-line printable reason.
func FuzzParseRewrite(f *testing.F) {
	for _, s := range []string{
		`{"question": "Two cats: how many legs?"}`,
		"```json\n{\"question\": \"x\"}\n```",
		`{"question": ""}`, `[]`, `null`, ``, `{"question": 5}`, "{\"question\": \"\\u0000\"}",
		`prose {"question": "a"} more {"question": "b"}`,
	} {
		f.Add(s)
	}
	orig := map[string]string{"question": "How many legs do 2 cats have?"}
	kinds := map[string]bool{probe.FailUnparseable: true, probe.FailEmpty: true, probe.FailUnchanged: true}
	f.Fuzz(func(t *testing.T, reply string) {
		got, fail := Parse(reply, orig)
		if fail != nil {
			if !kinds[fail.Kind] || fail.Reason == "" || strings.ContainsAny(fail.Reason, "\n\r") {
				t.Fatalf("failure %+v", fail)
			}
			return
		}
		if len(got) != 1 || strings.TrimSpace(got["question"]) == "" || !utf8.ValidString(got["question"]) && utf8.ValidString(reply) {
			t.Fatalf("rewrite %q from %q", got, reply)
		}
	})
}
