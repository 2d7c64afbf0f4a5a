package traces

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

func redactor(t testing.TB, r *spec.Redact) *Redactor {
	t.Helper()
	red, err := NewRedactor(r)
	if err != nil {
		t.Fatal(err)
	}
	return red
}

// Each detector alone, on text a user's logs hold: what must be replaced
// and what must be left alone.
func TestDetectors(t *testing.T) {
	cases := []struct {
		detector string
		in, want string
	}{
		// email
		{"email", "write to alice.smith+eval@mail.example.co.uk today", "write to [REDACTED:email] today"},
		{"email", "<bob@example.com>, carol_2@sub.example.org.", "<[REDACTED:email]>, [REDACTED:email]."},
		{"email", "user@localhost and @handle and a@b.c and x@1.23", "user@localhost and @handle and a@b.c and x@1.23"},
		{"email", "decorators like @app.route and foo@bar", "decorators like @app.route and foo@bar"},

		// key
		{"key", "export OPENAI_API_KEY=sk-proj-Abc123def456GHI789jkl012", "export OPENAI_API_KEY=[REDACTED:key]"},
		{"key", "key sk-ant-api03-AbCdEf0123456789xyz_-QQ ok", "key [REDACTED:key] ok"},
		{"key", "aws AKIAIOSFODNN7EXAMPLE and ghp_0123456789abcdefghijABCDEFGHIJ012345", "aws [REDACTED:key] and [REDACTED:key]"},
		{"key", "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKl", "slack [REDACTED:key]"},
		{"key", "Authorization: Bearer abcDEF123ghiJKL456mnoPQR", "Authorization: Bearer [REDACTED:key]"},
		{"key", `the api token is "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"`, `the api token is "[REDACTED:key]"`},
		{"key", "password: Hunter2Hunter2Hunter2xx", "password: [REDACTED:key]"},
		{"key", "Authorization: Basic dXNlcjpwYXNzd29yZA== sent", "Authorization: Basic [REDACTED:key] sent"},
		{"key", "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end", "jwt [REDACTED:key] end"},
		// not keys: words with a key's prefix inside, a commit hash without
		// a key word, a long word, a count after "tokens"
		{"key", "task-management and risk-free and sk-learn-is-a-python-library", "task-management and risk-free and sk-learn-is-a-python-library"},
		{"key", "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b fixed it", "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b fixed it"},
		{"key", "internationalization_ConfigurationManager2 is a class", "internationalization_ConfigurationManager2 is a class"},
		{"key", "max_tokens: 40960000000000000000000", "max_tokens: 40960000000000000000000"},
		{"key", "the monkey: Abc123def456GHI789jkl012", "the monkey: Abc123def456GHI789jkl012"},

		// card
		{"card", "card 4111 1111 1111 1111 exp 12/29", "card [REDACTED:card] exp 12/29"},
		{"card", "amex 3782-822463-10005, visa 4012888888881881", "amex [REDACTED:card], visa [REDACTED:card]"},
		{"card", "mc 5555555555554444.", "mc [REDACTED:card]."},
		// not cards: Luhn fails, a Unix millisecond timestamp, a long ID
		{"card", "4111 1111 1111 1112 and 1700000000000 and 1234567890123456", "4111 1111 1111 1112 and 1700000000000 and 1234567890123456"},
		{"card", "order ORD4111111111111111 and v4111111111111111", "order ORD4111111111111111 and v4111111111111111"},

		// phone
		{"phone", "call +1 (555) 123-4567 or +44 20 7946 0958 or +33612345678", "call [REDACTED:phone] or [REDACTED:phone] or [REDACTED:phone]"},
		{"phone", "(555) 123-4567, 555-123-4567, 555.123.4567, 1-800-555-1234", "[REDACTED:phone], [REDACTED:phone], [REDACTED:phone], [REDACTED:phone]"},
		{"phone", "UK 020 7946 0958 or 07700 900123; FR 06 12 34 56 78; 0044 20 7946 0958", "UK [REDACTED:phone] or [REDACTED:phone]; FR [REDACTED:phone]; [REDACTED:phone]"},
		{"phone", "+49 30 12345678.", "[REDACTED:phone]."},
		{"phone", "(+1 555 123 4567) or tel:+15551234567", "([REDACTED:phone]) or tel:[REDACTED:phone]"},
	}
	for _, c := range cases {
		red := redactor(t, &spec.Redact{Detectors: []string{c.detector}})
		got, n := red.Text(c.in)
		if got != c.want {
			t.Errorf("%s: %q\n got %q\nwant %q", c.detector, c.in, got, c.want)
		}
		if wantN := strings.Count(c.want, "[REDACTED:"); n != wantN {
			t.Errorf("%s: %q: counted %d, want %d", c.detector, c.in, n, wantN)
		}
	}
}

// Numbers that fill a model's traces and are nobody's phone: every
// detector leaves them alone.
func TestNoFalsePositivesOnNumbers(t *testing.T) {
	red := redactor(t, nil)
	for _, s := range []string{
		"used 1234567 tokens", "12345678901", "1,234,567,890 tokens", "1 234 567 890 tokens", "in 2024 and 2023-2024",
		"on 2024-01-15 12:30:00", "2024-01-15T12:30:00Z", "15.01.2024 10:30", "at 1700000000 (unix)", "1700000000123 ms",
		"version 1.2.3 and 10.20.30", "host 192.168.1.100 and 10.0.0.1", "pi is 3.14159265358979", "between 1000-2000 tokens",
		"scores 10 20 30 40 50", "id 123e4567-e89b-12d3-a456-426614174000", "$1,299.99 or 1299.99 EUR", "sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
		"ORD-555-123-4567", "latency_ms=1234.5678", "page 12 of 345", "x=5551234567", "matrix [[1, 2], [3, 4]]",
		"ISBN 978-0-306-40615-7", "0.123456789012", "€1 234 567 890", "£ 2024-01-15", "at 12:555 123 4567",
	} {
		if got, n := red.Text(s); n != 0 || got != s {
			t.Errorf("%q redacted to %q (%d)", s, got, n)
		}
	}
}

func TestPatternsAndDetectorChoice(t *testing.T) {
	red := redactor(t, &spec.Redact{Detectors: []string{}, Patterns: []spec.RedactPattern{
		{Name: "employee", Regex: `EMP-\d{6}`},
		{Name: "ssn", Regex: `\b\d{3}-\d{2}-\d{4}\b`},
	}})
	got, n := red.Text("EMP-123456 and EMP-654321, ssn 078-05-1120, mail a@example.com")
	if want := "[REDACTED:employee] and [REDACTED:employee], ssn [REDACTED:ssn], mail a@example.com"; got != want || n != 3 {
		t.Errorf("got %q (%d), want %q (3): detectors [] applies none", got, n, want)
	}
	// nil detectors: all of them
	got, _ = redactor(t, &spec.Redact{}).Text("a@example.com")
	if got != "[REDACTED:email]" {
		t.Errorf("nil detectors: %q", got)
	}
	for _, bad := range []*spec.Redact{
		{Detectors: []string{"ssn"}},
		{Patterns: []spec.RedactPattern{{Name: "x", Regex: "("}}},
		{Patterns: []spec.RedactPattern{{Name: "", Regex: "x"}}},
	} {
		if _, err := NewRedactor(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// Every text of a trace is redacted and counted; JSON stays JSON.
func TestTraceRedaction(t *testing.T) {
	tr := &record.Trace{
		System: "Support bot. Escalate to ops@example.com.",
		Input:  []record.Message{{Role: "user", Content: "my card is 4111-1111-1111-1111, call +1 555 123 4567"}},
		Output: []record.Message{{Role: "assistant", Content: "ok", ToolCalls: []record.ToolCall{
			{Name: "lookup", Arguments: `{"email":"alice@example.com","note":"say \"hi\" to bob@example.com\n","n":5}`},
			{Name: "raw", Arguments: `not json alice@example.com`},
			{Name: "broken", Arguments: `{"password" "Hunter2Hunter2Hunter2xx"}`},
		}}},
		Attributes: []byte(`{"user.email":"carol@example.com","http.headers":{"authorization":"Bearer abcDEF123ghiJKL456mnoPQR"},"api_key":"0123456789abcdefABCDEF","count":42,"alice@example.com":1,"esc":"dave\u0040example.com"}`),
		Resource:   []byte(`{"service.name":"chat","owner":"erin@example.com"}`),
		Redactions: 1,
	}
	redactor(t, nil).Trace(tr)
	if tr.System != "Support bot. Escalate to [REDACTED:email]." {
		t.Errorf("system %q", tr.System)
	}
	if want := "my card is [REDACTED:card], call [REDACTED:phone]"; tr.Input[0].Content != want {
		t.Errorf("input %q", tr.Input[0].Content)
	}
	args := tr.Output[0].ToolCalls[0].Arguments
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatalf("arguments no longer JSON: %s: %v", args, err)
	}
	if a["email"] != "[REDACTED:email]" || a["note"] != "say \"hi\" to [REDACTED:email]\n" || a["n"] != 5.0 {
		t.Errorf("arguments %s", args)
	}
	if got := tr.Output[0].ToolCalls[1].Arguments; got != "not json [REDACTED:email]" {
		t.Errorf("non-JSON arguments %q", got)
	}
	if got := tr.Output[0].ToolCalls[2].Arguments; got != `{"password" "[REDACTED:key]"}` {
		t.Errorf("broken JSON arguments %q", got)
	}
	var attrs map[string]any
	if err := json.Unmarshal(tr.Attributes, &attrs); err != nil {
		t.Fatalf("attributes no longer JSON: %s: %v", tr.Attributes, err)
	}
	want := map[string]any{
		"user.email":       "[REDACTED:email]",
		"http.headers":     map[string]any{"authorization": "Bearer [REDACTED:key]"},
		"api_key":          "[REDACTED:key]", // shaped like a key in a field named for one
		"count":            42.0,
		"[REDACTED:email]": 1.0,
		"esc":              "[REDACTED:email]", // found through its escape
	}
	for k, v := range want {
		if got, _ := json.Marshal(attrs[k]); string(got) != mustJSON(t, v) {
			t.Errorf("attribute %q = %s, want %s", k, got, mustJSON(t, v))
		}
	}
	if string(tr.Resource) != `{"service.name":"chat","owner":"[REDACTED:email]"}` {
		t.Errorf("resource %s", tr.Resource)
	}
	// 1 before + system 1 + input 2 + args 2 + raw args 1 + broken args 1
	// + attributes 5 + resource 1
	if tr.Redactions != 14 {
		t.Errorf("redactions %d, want 14", tr.Redactions)
	}
	// Attributes untouched byte for byte when nothing matched.
	clean := []byte(`{ "a" : "b",  "n": [1, 2] }`)
	tr2 := &record.Trace{Attributes: clean}
	redactor(t, nil).Trace(tr2)
	if string(tr2.Attributes) != string(clean) || tr2.Redactions != 0 {
		t.Errorf("clean attributes changed: %s (%d)", tr2.Attributes, tr2.Redactions)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPrice(t *testing.T) {
	prices := map[string]spec.Price{"gpt-4o": {InputPerMTok: 2.5, OutputPerMTok: 10}, "claude": {InputPerMTok: 3, OutputPerMTok: 15}}
	tr := &record.Trace{Model: "gpt-4o", InputTokens: 1000, OutputTokens: 200}
	Price(tr, prices)
	if !tr.Priced || tr.CostUSD != (1000*2.5+200*10)/1e6 {
		t.Errorf("gpt-4o: %v %v", tr.Priced, tr.CostUSD)
	}
	tr = &record.Trace{Model: "claude-latest", ResponseModel: "claude", InputTokens: 1e6, OutputTokens: 1e6}
	Price(tr, prices)
	if !tr.Priced || tr.CostUSD != 18 {
		t.Errorf("by response model: %v %v", tr.Priced, tr.CostUSD)
	}
	tr = &record.Trace{Model: "mystery", InputTokens: 5, CostUSD: 9, Priced: true}
	Price(tr, prices)
	if tr.Priced || tr.CostUSD != 0 {
		t.Errorf("unpriced: %v %v", tr.Priced, tr.CostUSD)
	}
}

// A span's worth of text: a system prompt, a few turns, a tool call and
// the usual attributes, one email in it.
func benchTrace() record.Trace {
	long := strings.Repeat("The quick brown fox jumps over the lazy dog in 2024, using 1234 tokens. ", 8)
	return record.Trace{
		System: "You are a helpful assistant. " + long,
		Input: []record.Message{
			{Role: "user", Content: "Please summarise: " + long},
			{Role: "assistant", Content: long},
			{Role: "user", Content: "Thanks! Send it to jane.doe@example.com please."},
		},
		Output: []record.Message{{Role: "assistant", Content: long, ToolCalls: []record.ToolCall{
			{Name: "send_mail", Arguments: `{"to":"someone","subject":"Summary","body":"` + long + `"}`},
		}}},
		// As collect keeps a span's attributes: the messages again, as the
		// JSON text of gen_ai.input.messages.
		Attributes: []byte(`{"gen_ai.operation.name":"chat","gen_ai.request.model":"gpt-4o","gen_ai.usage.input_tokens":1234,"gen_ai.usage.output_tokens":321,"http.route":"/v1/chat","user.id":"u-12345","session.id":"9f86d081-884c-7d65-9a2f-eaa0c55ad015",` +
			`"gen_ai.input.messages":"[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"Please summarise: ` + long + `\"}]}]"}`),
		Resource: []byte(`{"service.name":"support-bot","service.version":"1.4.2","host.name":"web-7"}`),
	}
}

func BenchmarkRedactTrace(b *testing.B) {
	red := redactor(b, nil)
	base := benchTrace()
	size := len(base.System) + len(base.Attributes) + len(base.Resource)
	for _, m := range append(append([]record.Message{}, base.Input...), base.Output...) {
		size += len(m.Content)
		for _, c := range m.ToolCalls {
			size += len(c.Arguments)
		}
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := threadCPU()
	defer func() { b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op") }()
	for b.Loop() {
		t := base
		t.Input = append([]record.Message(nil), base.Input...)
		t.Output = append([]record.Message(nil), base.Output...)
		t.Output[0].ToolCalls = append([]record.ToolCall(nil), base.Output[0].ToolCalls...)
		red.Trace(&t)
	}
}

// Hostile text: the redaction never panics, counts exactly the
// replacements it made, and keeps JSON valid.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"a@example.com", "+1 (555) 123-4567", "4111 1111 1111 1111", "token: Abc123def456GHI789jkl012",
		`{"api_key":"Abc123def456GHI789jkl012","x":["a@b.co","\u0040"]}`, `"\ud800"`, `{"a":"\"x@y.zz\\"}`,
		"eyJa.eyJb.c", "sk-" + strings.Repeat("a1", 20), "(((((555)))))", "0044 20 7946 0958",
		`{"k":"a\u0040example.com","t\u006fken":"Abc123def456GHI789jkl012","p":"Abc123def456GHI789jk\/l012"}`,
	} {
		f.Add(s)
	}
	red := redactor(f, &spec.Redact{Patterns: []spec.RedactPattern{{Name: "emp", Regex: `EMP-\d+`}}})
	f.Fuzz(func(t *testing.T, s string) {
		out, n := red.Text(s)
		if !strings.Contains(s, "REDACTED") {
			if added := strings.Count(out, "[REDACTED:"); added != n {
				t.Errorf("%q → %q: counted %d, %d replacements", s, out, n, added)
			}
		}
		if n == 0 && out != s {
			t.Errorf("%q changed to %q without a redaction", s, out)
		}
		if json.Valid([]byte(s)) {
			m := 0
			b := red.jsonBytes([]byte(s), &m, false)
			if !json.Valid(b) {
				t.Errorf("%q → %q: no longer JSON", s, b)
			}
			// The pre-checks skip nothing the plain walk would redact.
			if want := plainJSONRedactions(red, []byte(s)); m != want {
				t.Errorf("%q: %d redactions, the plain walk makes %d", s, m, want)
			}
		}
	})
}

// plainJSONRedactions counts what redacting every string of a valid JSON
// document replaces, decoding each and skipping nothing: the reference for
// jsonBytes' pre-checks.
func plainJSONRedactions(red *Redactor, b []byte) int {
	n := 0
	secretNext := false
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			secretNext = false
		case '"':
			end := stringEnd(b, i)
			val := unquote(b[i : end+1])
			isKey := nextNonSpace(b, end+1) == ':'
			red.text(val, !isKey && secretNext, &n)
			secretNext = isKey && secretKeyName([]byte(val))
			i = end
		}
	}
	return n
}
