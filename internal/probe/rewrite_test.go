package probe

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/spec"
)

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
