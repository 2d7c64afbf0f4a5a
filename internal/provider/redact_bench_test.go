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
