package spec

import (
	"strconv"
	"strings"
	"testing"
)

func TestKeyValueFlaw(t *testing.T) {
	key := "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
	for _, tc := range []struct {
		value string
		want  string // a word the flaw must name; "" for a clean key
	}{
		{key, ""},
		{"local-key", ""},
		{key + "\n", "newline"},
		{key + "\r\n", "newline"},
		{key + " ", "whitespace"},
		{key + "\t", "whitespace"},
		{" " + key, "starts with whitespace"},
		{"sk-proj-abc\x00def", "control character"},
		{"sk-proj-abc\x1bdef", "control character"},
		{"sk-proj-abc\u0085def", "control character"},
	} {
		got := KeyValueFlaw(tc.value)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("KeyValueFlaw(%q) = %q, want one naming %q", tc.value, got, tc.want)
		}
	}
}

// FuzzKeyValueFlaw: a key it accepts can go in an HTTP header as it is
// (no control characters, no surrounding whitespace), and what it says
// never holds the key.
func FuzzKeyValueFlaw(f *testing.F) {
	for _, s := range []string{"sk-abc", "sk-abc\n", " x", "a\x00b", "\u2028k", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		flaw := KeyValueFlaw(key)
		if flaw == "" {
			if strings.TrimSpace(key) != key {
				t.Fatalf("accepted %q with surrounding whitespace", key)
			}
			for _, r := range key {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("accepted %q with a control character", key)
				}
			}
			return
		}
		if len(key) >= 4 && strings.Contains(flaw, key) {
			t.Fatalf("the flaw %q shows the key %q", flaw, key)
		}
	})
}

func TestMaxErrorRate(t *testing.T) {
	sp, ps := parse(t, base)
	if len(ps) != 0 || sp.Run.MaxErrorRate != 0.2 {
		t.Fatalf("default run.max_error_rate = %v (problems %v), want 0.2", sp.Run.MaxErrorRate, ps)
	}
	for _, v := range []string{"0", "0.05", "1"} {
		sp, ps := parse(t, base+"run: {max_error_rate: "+v+"}\n")
		if len(ps) != 0 || fmtFloat(sp.Run.MaxErrorRate) != v {
			t.Errorf("max_error_rate %s: got %v, problems %v", v, sp.Run.MaxErrorRate, ps)
		}
	}
	for _, v := range []string{"-0.1", "1.5", "20", ".nan", "x"} {
		_, ps := parse(t, base+"run:\n  max_error_rate: "+v+"\n")
		if len(ps) != 1 || ps[0].Line != 10 || ps[0].Col != 19 || !strings.Contains(ps[0].String(), "max_error_rate") {
			t.Errorf("max_error_rate %s: problems %v, want one at s.yaml:10:19 naming run.max_error_rate", v, ps)
		}
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
