package registry

import (
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

// A variable an agent's tool handler names in env: is a secret like an
// exec target's: the redactor every provider of the spec is wrapped in
// hides it (a model may echo what a handler answered).
func TestRedactorHidesAgentHandlerEnv(t *testing.T) {
	sp := &spec.Spec{
		Targets: []spec.Target{{Name: "m", Provider: "exec", Command: []string{"./run"}}},
		Agent:   &spec.Agent{MaxTurns: 3, Tools: map[string]spec.ToolHandler{"lookup": {Exec: []string{"./lookup"}, Env: []string{"SHOP_TOKEN"}}}},
	}
	env := map[string]string{"SHOP_TOKEN": "shop-token-0123456789abcdef"}
	r := New().Redactor(sp, func(k string) string { return env[k] })
	got, n := r.Redact("the order says shop-token-0123456789abcdef")
	if n != 1 || strings.Contains(got, "0123456789abcdef") {
		t.Errorf("redacted %d: %q", n, got)
	}
}
