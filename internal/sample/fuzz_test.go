package sample

import (
	"encoding/json"
	"testing"

	"github.com/assay-eval/assay/internal/record"
)

// A stratum's key is built from attribute values a trace carries (outside
// input): whatever they hold — commas, equals signs, quotes, invalid
// UTF-8 — the key reads back as the values it was built from.
func FuzzStratumKey(f *testing.F) {
	f.Add("gpt-4o", "/chat", `{"route":"/chat"}`)
	f.Add(`a,b=c`, `"q"`, `{"route":{"nested":[1,2]}}`)
	f.Add("", "\xff", `not json`)
	f.Fuzz(func(t *testing.T, model, route, attrs string) {
		raw, _ := json.Marshal(map[string]string{"route": route})
		tr := &record.Trace{Model: model, Attributes: raw, Resource: []byte(attrs)}
		by := []string{"model", "route", "other"}
		key := (&keyValues{t: tr}).stratum(by)
		got := StratumValues(key, by)
		want := map[string]string{"model": Key(tr, "model"), "route": Key(tr, "route"), "other": Key(tr, "other")}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("key %q: %s read back as %q, want %q", key, k, got[k], v)
			}
		}
	})
}
