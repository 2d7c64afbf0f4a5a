package probe

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
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
		{"empty reply", "  \n", nil, FailEmpty},
		{"prose only", "I cannot rewrite this.", nil, FailUnparseable},
		{"an array", `["Two cats?"]`, nil, FailUnparseable},
		{"a field missing", `{"question": "Two cats: how many legs in all?"}`, nil, FailUnparseable},
		{"a field not text", `{"question": 8, "context": "A cat has 4 legs."}`, nil, FailUnparseable},
		{"a field empty", `{"question": " ", "context": "A cat has 4 legs."}`, nil, FailEmpty},
		{"a field unchanged but for case and spaces", `{"question": "how many  LEGS do 2 cats have?", "context": "A cat has 4 legs."}`, nil, FailUnchanged},
		{"truncated", `{"question": "Two cats: how many legs`, nil, FailUnparseable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fail := ParseRewrite(tt.reply, orig)
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
	_, fail := ParseRewrite("no json\n\x1b[2J"+strings.Repeat("x", 500), orig)
	if fail == nil || strings.ContainsAny(fail.Reason, "\n\x1b") || len(fail.Reason) > 300 {
		t.Errorf("reason %q", fail)
	}
}

// The case's text goes to the rewriter as JSON data after the fixed
// instruction; template syntax in it is not executed.
func TestRewriteMessagesCarryDataNotTemplates(t *testing.T) {
	msgs, err := RewriteMessages(map[string]string{"question": `What is {{.answer}} & <b>?`})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[0].Content != RewriteSystem {
		t.Fatalf("messages %+v", msgs)
	}
	user := msgs[1].Content
	head, body, ok := strings.Cut(user, "\n\n")
	if !ok || head != RewriteInstruction {
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
	if fail == nil || fail.Kind != FailCall || fail.CaseID != "c1" || !strings.Contains(fail.Reason, "server_error") {
		t.Errorf("failed call: %+v", fail)
	}
	_, fail = Rewrite(context.Background(), p, tg, c, []string{"level"})
	if fail == nil || !strings.Contains(fail.Reason, "not text") {
		t.Errorf("a number field: %+v", fail)
	}
	if _, err := TextFields(c, []string{"nope"}); err == nil {
		t.Errorf("a missing field: %v", err)
	}
}

// The rewriter's set ID changes with what decides its twins — the
// dataset, the model and its parameters, the server, the fields, the case
// IDs' field — and not with the target's name, limits, price or key.
func TestRewriterSetID(t *testing.T) {
	temp := 0.0
	base := spec.Target{Name: "para", Provider: "openai", Model: "m", BaseURL: "http://h/v1", Params: spec.Params{Temperature: &temp}}
	id := RewriterSetID("sha256:d", "id", &base, []string{"question", "context"})
	if id != RewriterSetID("sha256:d", "id", &base, []string{"context", "question"}) {
		t.Error("the order of --field changed the set ID")
	}
	same := base
	same.Name, same.APIKeyEnv, same.Limits, same.Price, same.Timeout = "other", "KEY", spec.Limits{Concurrency: 99}, spec.Price{InputPerMTok: 3}, spec.Duration(time.Second)
	if RewriterSetID("sha256:d", "id", &same, []string{"question", "context"}) != id {
		t.Error("the name, key, limits, price or time-out changed the set ID")
	}
	hot := 1.0
	for name, tg := range map[string]spec.Target{
		"model":       {Name: "para", Provider: "openai", Model: "m2", BaseURL: base.BaseURL, Params: base.Params},
		"base url":    {Name: "para", Provider: "openai", Model: "m", BaseURL: "http://other/v1", Params: base.Params},
		"temperature": {Name: "para", Provider: "openai", Model: "m", BaseURL: base.BaseURL, Params: spec.Params{Temperature: &hot}},
		"provider":    {Name: "para", Provider: "anthropic", Model: "m", BaseURL: base.BaseURL, Params: base.Params},
	} {
		if RewriterSetID("sha256:d", "id", &tg, []string{"question", "context"}) == id {
			t.Errorf("changing the %s keeps the set ID", name)
		}
	}
	if RewriterSetID("sha256:e", "id", &base, []string{"question", "context"}) == id ||
		RewriterSetID("sha256:d", "line", &base, []string{"question", "context"}) == id ||
		RewriterSetID("sha256:d", "id", &base, []string{"question"}) == id {
		t.Error("the dataset, the ID field or the fields do not change the set ID")
	}
	if FileSetID("sha256:d", "sha256:f", "id", spec.Dataset{}) == id {
		t.Error("a file set and a rewriter set share an ID")
	}
	if !strings.HasPrefix(RewritePromptHash(), "sha256:") || len(RewritePromptHash()) != 71 {
		t.Errorf("rewrite prompt hash %q", RewritePromptHash())
	}
}

func TestTwinRecordRoundTrip(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tw := range []*Twin{
		{CaseID: "c1", Line: 3, Vars: map[string]any{"q": "x", "n": json.Number("2.5"), "l": []any{"a"}}, Expected: "42", OwnExpected: true, Dataset: "sha256:d"},
		{CaseID: "c2", Vars: map[string]any{"q": "y"}, Dataset: "sha256:d"},
	} {
		r, err := tw.Record("sha256:s", "file:t.jsonl", "sha256:d", now)
		if err != nil {
			t.Fatal(err)
		}
		if r.Set != "sha256:s" || r.CaseID != tw.CaseID || r.Source != "file:t.jsonl" || !r.CreatedAt.Equal(now) {
			t.Errorf("record %+v", r)
		}
		back, err := FromRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, tw) {
			t.Errorf("round trip %+v, want %+v", back, tw)
		}
	}
	for _, bad := range []string{`not json`, `{}`, `{"vars": null}`} {
		r, _ := (&Twin{CaseID: "c", Vars: map[string]any{}}).Record("s", "x", "sha256:d", now)
		r.Fields = []byte(bad)
		if _, err := FromRecord(r); err == nil {
			t.Errorf("stored fields %s read without error", bad)
		}
	}
}
