package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// A secret pasted where a variable name belongs (an exec target's env:
// entry, a hosted target's api_key_env, valid variable name or not) makes
// `assay validate` fail with exit 4 and say what happened, in text and
// JSON, showing the value masked and never its private part.
func TestValidatePastedSecret(t *testing.T) {
	t.Parallel()
	const private = "Xq3mZ9vT2bLk8RwYpA4nC7dE"
	dir := t.TempDir()
	path := echoTask(t, dir, 3, `  - {name: app, provider: exec, command: [./run], env: [RAG_KEY, "OPENAI_API_KEY=sk-proj-`+private+`"]}
  - {name: hosted, provider: openai, model: m, api_key_env: "sk_live_`+private+`"}`)
	writeFile(t, filepath.Join(dir, "run"), "#!/bin/sh\ncat\n")
	e := cliEnv{env: map[string]string{"RAG_KEY": "x"}}
	for _, format := range []string{"text", "json"} {
		inv := runCLI(t, e, "validate", path, "--format", format)
		if inv.code != ExitInvalid {
			t.Errorf("validate --format %s: exit %d, want %d\n%s%s", format, inv.code, ExitInvalid, inv.stdout, inv.stderr)
		}
		out := inv.stdout + inv.stderr
		if strings.Contains(out, private[:6]) {
			t.Errorf("validate --format %s shows the secret:\n%s", format, out)
		}
		for _, want := range []string{
			"targets[0].env[1] looks like a secret value (OPENAI_API_KEY=sk-proj-… (32 characters)) pasted where a variable NAME belongs",
			"targets[1].api_key_env looks like a secret value (sk_… (32 characters)) pasted where a variable NAME belongs",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("validate --format %s does not say %q:\n%s", format, want, out)
			}
		}
	}
}
