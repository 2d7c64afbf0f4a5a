package spec

import (
	"strings"
	"testing"
)

// Secrets a user may paste where a variable name belongs. Each is made of
// a public prefix and a private rest; the rest must never be shown.
var pastedSecrets = []struct{ public, private string }{
	{"sk-proj-", "Xq3mZ9vT2bLk8RwYpA4nC7dE"},
	{"sk-ant-", "api03-Zk2Qw9Lm4Xr7Tb1Vn6Yp"},
	{"sk_", "live_51Hq2Kx9Lm4Xr7Tb1Vn6Yp"}, // a valid variable name too
	{"ghp_", "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuV"},
	{"AKIA", "IOSFODNN7EXAMPLE"},
	{"", "Zk2Qw9Lm4Xr7Tb1Vn6YpQa8s"}, // no known prefix: mixed case and digits
	{"", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"},
}

func TestLooksLikeSecret(t *testing.T) {
	for _, s := range pastedSecrets {
		v := s.public + s.private
		if !LooksLikeSecret(v) {
			t.Errorf("LooksLikeSecret(%s…) = false", s.public)
		}
		if !LooksLikeSecret("OPENAI_API_KEY=" + v) {
			t.Errorf("LooksLikeSecret(OPENAI_API_KEY=%s…) = false", s.public)
		}
		m := MaskSecret("OPENAI_API_KEY=" + v)
		if strings.Contains(m, s.private[:6]) || !strings.HasPrefix(m, "OPENAI_API_KEY="+s.public+"…") {
			t.Errorf("MaskSecret(OPENAI_API_KEY=%s…) = %q: want the name and the public prefix only", s.public, m)
		}
	}
	for _, name := range []string{"OPENAI_API_KEY", "MY_SERVICE_TOKEN_2", "HOME", "RAG_KEY", "AZURE_OPENAI_API_KEY_WESTEUROPE", "skip_this", "DEBUG=1", "LOG_LEVEL=debug"} {
		if LooksLikeSecret(name) {
			t.Errorf("LooksLikeSecret(%q) = true: a variable name", name)
		}
	}
}

// A secret pasted as api_key_env or an env: entry is a problem at its
// place that says what happened and shows the value masked; no problem of
// the spec, decoding errors included, repeats the private part.
func TestPastedSecretProblems(t *testing.T) {
	for _, s := range pastedSecrets {
		v := s.public + s.private
		srcs := map[string]string{
			"api_key_env": "targets:\n  - {name: m, provider: openai, model: x, api_key_env: \"" + v + "\"}\n",
			"env entry":   base + "    env: [\"OPENAI_API_KEY=" + v + "\"]\n",
			"env name":    base + "    env: [\"" + v + "\"]\n",
			// Decoding errors: wrong types, unknown and duplicate keys.
			"env string":       base + "    env: \"" + v + "\"\n",
			"api_key_env list": "targets:\n  - {name: m, provider: openai, model: x, api_key_env: [\"" + v + "\"]}\n",
			"unknown key":      base + "    \"" + v + "\": 1\n",
			"duplicate key":    "targets: []\n\"" + v + "\": 1\n\"" + v + "\": 2\n",
			"model number":     base + "    limits: {rpm: \"" + v + "\"}\n",
		}
		for what, src := range srcs {
			_, ps := parse(t, src)
			if len(ps) == 0 {
				t.Errorf("%s %s…: no problem", what, s.public)
				continue
			}
			if strings.Contains(ps.Error(), s.private[:6]) {
				t.Errorf("%s %s…: a problem shows the secret:\n%v", what, s.public, ps)
			}
			switch what {
			case "api_key_env", "env entry", "env name":
				if !strings.Contains(ps.Error(), "looks like a secret value ("+map[bool]string{true: "OPENAI_API_KEY=", false: ""}[what == "env entry"]+s.public+"…") ||
					!strings.Contains(ps.Error(), "pasted where a variable NAME belongs") {
					t.Errorf("%s %s…: want a masked pasted-secret problem, got\n%v", what, s.public, ps)
				}
			}
		}
	}
}

// FuzzMaskSecret: a masked value never shows more of a secret than its
// known public prefix.
func FuzzMaskSecret(f *testing.F) {
	for _, s := range pastedSecrets {
		f.Add(s.public + s.private)
		f.Add("OPENAI_API_KEY=" + s.public + s.private)
	}
	f.Add("sk-=sk-proj-")
	f.Fuzz(func(t *testing.T, s string) {
		if !LooksLikeSecret(s) {
			return
		}
		m := MaskSecret(s)
		name, value, ok := strings.Cut(s, "=")
		if !ok || LooksLikeSecret(name) {
			value = s
		} else {
			// The variable's name is shown; the rest must not show the value.
			m = strings.TrimPrefix(m, name+"=")
		}
		// The longest run of the value shown is the longest known prefix.
		const longest = len("github_pat_")
		for i := 0; i+longest+1 <= len(value); i++ {
			if strings.Contains(m, value[i:i+longest+1]) {
				t.Fatalf("MaskSecret(%q) = %q shows %q", s, m, value[i:i+longest+1])
			}
		}
	})
}
