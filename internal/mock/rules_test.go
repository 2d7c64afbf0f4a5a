package mock

import (
	"encoding/json"
	"testing"
)

// One server plays two targets: rules scoped to a model answer only that
// model's requests, an unscoped rule answers every model, and a model's rule
// with no Match is that model's default. The Anthropic wire format follows
// the same rules.
func TestRulesScopedToAModel(t *testing.T) {
	rules := []Rule{
		{Model: "planted", Match: "What is 2+2?", Reply: "A: 4"},
		{Model: "planted", Reply: "A: 0"},
		{Match: "shared question", Reply: "shared answer"},
	}
	_, base := start(t, Options{Rules: rules, Default: "fallback"})
	tests := []struct{ model, user, want string }{
		{"planted", "Q: What is 2+2?", "A: 4"},
		{"planted", "Q: What is two plus two?", "A: 0"},
		{"planted", "shared question", "A: 0"}, // the model's catch-all comes first
		{"clean", "Q: What is 2+2?", "fallback"},
		{"clean", "shared question", "shared answer"},
	}
	for _, tt := range tests {
		body, _ := json.Marshal(map[string]any{"model": tt.model, "messages": []map[string]string{{"role": "user", "content": tt.user}}})
		var cc chatCompletion
		readJSON(t, post(t, base+"/v1/chat/completions", string(body)), &cc)
		if got := cc.Choices[0].Message.Content; got != tt.want {
			t.Errorf("openai model %s, %q: reply %q, want %q", tt.model, tt.user, got, tt.want)
		}
		body, _ = json.Marshal(map[string]any{"model": tt.model, "max_tokens": 16, "messages": []map[string]string{{"role": "user", "content": tt.user}}})
		var m anthropicMessage
		readJSON(t, post(t, base+"/v1/messages", string(body), "anthropic-version", "2023-06-01"), &m)
		if len(m.Content) != 1 || m.Content[0].Text != tt.want {
			t.Errorf("anthropic model %s, %q: reply %+v, want %q", tt.model, tt.user, m.Content, tt.want)
		}
	}
}
