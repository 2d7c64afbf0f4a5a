package httpcall

import (
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		hdr  map[string]string
		want time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": " 1.5 "}, 1500 * time.Millisecond},
		{"milliseconds win", map[string]string{"Retry-After": "3", "Retry-After-Ms": "2500"}, 2500 * time.Millisecond},
		{"bad milliseconds fall back", map[string]string{"Retry-After": "3", "Retry-After-Ms": "soon"}, 3 * time.Second},
		{"http date", map[string]string{"Retry-After": "Sat, 01 Mar 2025 12:00:42 GMT"}, 42 * time.Second},
		{"date in the past", map[string]string{"Retry-After": "Sat, 01 Mar 2025 11:00:00 GMT"}, 0},
		{"negative", map[string]string{"Retry-After": "-5"}, 0},
		{"absurd", map[string]string{"Retry-After": "1e300"}, 0},
		{"not a value", map[string]string{"Retry-After": "later"}, 0},
		{"nan", map[string]string{"Retry-After-Ms": "NaN"}, 0},
	} {
		h := http.Header{}
		for k, v := range tt.hdr {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("%s: retryAfter = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestErrorText(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"error":{"message":"m","type":"t","code":"c"}}`, "t/c: m"},
		{`{"error":{"message":"m","type":"t","code":"t"}}`, "t: m"},
		{`{"error":{"message":"m","code":429}}`, "m"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error: Overloaded"},
		{`{"error":"model not found"}`, "model not found"},
		{`{"message":"upstream failed"}`, "upstream failed"},
		{`{"detail":"too long"}`, "too long"},
		{`{"detail":[{"loc":["body","x"],"msg":"bad"}]}`, `[{"loc":["body","x"],"msg":"bad"}]`},
		{`plain text`, "plain text"},
		{``, ""},
	} {
		if got := ErrorText([]byte(tt.body)); got != tt.want {
			t.Errorf("ErrorText(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestClean(t *testing.T) {
	if got := Clean("a\n\tb\x00c  \r\n d\xff"); got != "a b c d\uFFFD" {
		t.Errorf("Clean = %q", got)
	}
	long := Clean(strings.Repeat("é", 400))
	if len(long) > 300+len("…") || !strings.HasSuffix(long, "…") || !utf8.ValidString(long) {
		t.Errorf("Clean of a long text: %d bytes, %q…", len(long), long[:20])
	}
}

func TestRedactBeforeShortening(t *testing.T) {
	const key = "sk-0123456789"
	msg := Clean(redact(strings.Repeat("x", 295)+key, key))
	if strings.Contains(msg, key[:5]) {
		t.Errorf("a key cut by the length limit left a prefix: %q", msg[290:])
	}
}

// FuzzRetryAfter checks that no header value gives a negative or absurd wait.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "1.5", "-1", "Sat, 01 Mar 2025 12:00:42 GMT", "1e309", "NaN", "+Inf", "0x10"} {
		f.Add(s, s)
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ra, ms string) {
		h := http.Header{}
		h.Set("Retry-After", ra)
		h.Set("Retry-After-Ms", ms)
		d := retryAfter(h, now)
		if d < 0 || d > 366*24*time.Hour {
			t.Fatalf("retryAfter(%q, %q) = %v", ra, ms, d)
		}
	})
}

// FuzzErrorMessage checks that any error body becomes one clean, bounded
// line without the key.
func FuzzErrorMessage(f *testing.F) {
	for _, s := range []string{`{"error":{"message":"m","type":"t"}}`, `{"error":"x"}`, `{"detail":{}}`, "<html>\n</html>", "\x00\xff", `{"error":{"message":"KEY"}}`} {
		f.Add([]byte(s))
	}
	const key = "KEY"
	f.Fuzz(func(t *testing.T, body []byte) {
		msg := Clean(redact(ErrorText(body), key))
		if len(msg) > 300+len("…") || !utf8.ValidString(msg) {
			t.Fatalf("message of %d bytes or invalid UTF-8: %q", len(msg), msg)
		}
		if strings.Contains(msg, key) {
			t.Fatalf("key in %q", msg)
		}
		for _, r := range msg {
			if unicode.IsControl(r) || (unicode.IsSpace(r) && r != ' ') {
				t.Fatalf("control or line break %q in %q", r, msg)
			}
		}
	})
}
