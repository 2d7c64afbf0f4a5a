package provider

import (
	"strings"
	"testing"
)

// BenchmarkRedact measures the redaction every reply now goes through: two
// configured secrets, over a typical 2 KB answer and a 1 MiB one, neither
// holding a secret (the common case: every byte is scanned, nothing found).
func BenchmarkRedact(b *testing.B) {
	r := NewRedactor([]Secret{{"OPENAI_API_KEY", "sk-proj-0123456789abcdefghijklmnopqrstuvwxyz"}, {"APP_TOKEN", "tok_live_9f8e7d6c5b4a"}})
	for _, size := range []struct {
		name string
		n    int
	}{{"2KB", 2 << 10}, {"1MiB", 1 << 20}} {
		text := strings.Repeat("The invoice total is 12,442.00 EUR, due 2026-12-31. ", size.n/52+1)[:size.n]
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, n := r.Redact(text); n != 0 {
					b.Fatal("found a secret")
				}
			}
		})
	}
}

// FuzzRedact: whatever a model sends, a run of FragmentLen bytes of a
// secret never survives redaction, and the byte-set skip finds every run
// the plain window scan would.
func FuzzRedact(f *testing.F) {
	const secret = "sk-fuzz-0123456789abcdefXYZ"
	f.Add("the key is sk-fuzz-0123456789abcdefXYZ, ok")
	f.Add("0123456789abcdef0123456789abcdef")
	f.Add("sk-fuzz-0123 456789abcdefXYZ")
	r := NewRedactor([]Secret{{"K", secret}})
	f.Fuzz(func(t *testing.T, s string) {
		out, n := r.Redact(s)
		found := false
		for i := 0; i+FragmentLen <= len(secret); i++ {
			if strings.Contains(s, secret[i:i+FragmentLen]) {
				found = true
			}
			if strings.Contains(out, secret[i:i+FragmentLen]) {
				t.Fatalf("Redact(%q) = %q keeps %q", s, out, secret[i:i+FragmentLen])
			}
		}
		if found && n == 0 {
			t.Fatalf("Redact(%q) replaced nothing, but it holds a run of the secret", s)
		}
	})
}
