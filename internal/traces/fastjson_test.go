package traces

import (
	"reflect"
	"testing"
)

// fastSeeds are messages and parts in and around the shape the fast path
// reads: it must read the first ones and give up on the others.
var fastSeeds = []struct {
	raw  string
	fast bool
}{
	{`[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`, true},
	{` [ { "role" : "assistant" , "name":"bot", "finish_reason":"stop", "parts" : [ {"type":"tool_call","id":"c1","name":"f","arguments": {"a": [1, "x,}]", {"b": null}]} } ] } ] `, true},
	{`[{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"rainy \"14\" \u00e9"},{"type":"tool_call_response","id":"c2","result":-1.5e3}]}]`, true},
	{`[{"role":"user","parts":[{"type":"text","content":"caf\u00e9 é \ud83d\ude00 \/"}]}]`, true},
	{`[{"role":"user","parts":[]},{"role":"user","parts":[{}]}]`, true},
	{`[]`, true},
	{`[{"role":"user"}]`, true},
	{"[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"bad \xff utf-8\"}]}]", true},
	{`[{"Role":"user","parts":[]}]`, false},                                 // another case: encoding/json's
	{`[{"role":"user","parts":[],"role":"x"}]`, false},                      // repeated key
	{`[{"role":null,"parts":[]}]`, false},                                   // null
	{`[{"role":"user","parts":[{"type":"text","arguments":null}]}]`, false}, // null raw
	{`[{"role":"user","parts":[{"type":"text","lang":"en"}]}]`, false},      // unknown field
	{`[{"role":"user","parts":[{"type":"text","arguments":{"a":}}]}]`, false},
	{`[{"role":"user","parts":[]}] x`, false},
	{`[{"role":"user","parts":[]},]`, false},
	{`[{"role":1,"parts":[]}]`, false},
	{"[{\"role\":\"a\tb\",\"parts\":[]}]", false},
	{`{"role":"user"}`, false},
	{`[{"role":"user","parts":[{"type":"text","content":"unterminated}]}]`, false},
}

func TestFastMessagesSeeds(t *testing.T) {
	for _, c := range fastSeeds {
		_, ok := fastMessages([]byte(c.raw))
		if ok != c.fast {
			t.Errorf("fastMessages(%s) ok = %v, want %v", c.raw, ok, c.fast)
		}
		checkFast(t, []byte(c.raw))
	}
}

// checkFast: where the fast path reads a value, encoding/json (the exact
// decoding it stands in for) reads the same.
func checkFast(t *testing.T, raw []byte) {
	t.Helper()
	if got, ok := fastMessages(raw); ok {
		var want []typedMessage
		if err := decodeExact(raw, &want); err != nil {
			t.Fatalf("fast path read %q, encoding/json did not: %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nfast %#v\njson %#v", raw, got, want)
		}
	}
	if got, ok := fastParts(raw); ok {
		var want []typedPart
		if err := decodeExact(raw, &want); err != nil {
			t.Fatalf("fast path read parts %q, encoding/json did not: %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parts %q:\nfast %#v\njson %#v", raw, got, want)
		}
	}
}

func FuzzFastMessages(f *testing.F) {
	for _, c := range fastSeeds {
		f.Add([]byte(c.raw))
	}
	f.Add([]byte(`[{"type":"text","content":"S"},{"type":"tool_call","id":"x","arguments":"{\"a\":1}"}]`))
	f.Fuzz(func(t *testing.T, raw []byte) { checkFast(t, raw) })
}

// The input messages bench/collect sends (~700 bytes: a user turn, a tool
// call and its answer).
const benchInput = `[{"role":"user","parts":[{"type":"text","content":"My order 48213 arrived with a cracked screen protector and the charger is missing. I ordered it on the 3rd and was told it would ship with everything in the box. What can you do, and how long will a replacement take?"}]},` +
	`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"lookup_order","arguments":{"order_id":"48213"}}]},` +
	`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":{"status":"delivered","items":["phone case","screen protector","charger"],"carrier":"DHL"}}]}]`

func BenchmarkMessageList(b *testing.B) {
	raw := []byte(benchInput)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if ms, _, exact := messageList(raw, "user"); len(ms) != 3 || !exact {
			b.Fatalf("%d messages, exact %v", len(ms), exact)
		}
	}
}

// hasSecretWord is the plain search it replaces: each of secretKeyNames
// looked for, case-folded, at every place.
func FuzzHasSecretWord(f *testing.F) {
	for _, s := range []string{"api_key", "X-Auth-TOKEN", "Passwd", "monkey", "tok", "credentials", "BEARER", "cookie", "sec\xffret", "kez", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := false
		for _, w := range secretKeyNames {
			want = want || containsFold(b, w)
		}
		if got := hasSecretWord(b); got != want {
			t.Fatalf("hasSecretWord(%q) = %v, the plain search %v", b, got, want)
		}
	})
}

// containsFold, FuzzHasSecretWord's plain search, reports whether b holds the lower-case ASCII word w in any
// case.
func containsFold(b []byte, w string) bool {
	for i := 0; i+len(w) <= len(b); i++ {
		k := 0
		for k < len(w) && b[i+k]|0x20 == w[k] {
			k++
		}
		if k == len(w) {
			return true
		}
	}
	return false
}

// The keys of a span's attributes and resource as bench/collect sends
// them, each read once per trace by the redaction.
var benchKeys = []string{"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model", "gen_ai.response.id",
	"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.request.temperature", "gen_ai.request.max_tokens", "server.address",
	"app.route", "gen_ai.response.finish_reasons", "service.name", "service.version", "deployment.environment", "telemetry.sdk.language", "host.name"}

func BenchmarkSecretKeyName(b *testing.B) {
	keys := make([][]byte, len(benchKeys))
	for i, k := range benchKeys {
		keys[i] = []byte(k)
	}
	for b.Loop() {
		for _, k := range keys {
			secretKeyName(k)
		}
	}
}
