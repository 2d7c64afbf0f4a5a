package spec

import (
	"strings"
	"testing"
)

// env: names the variables an exec target's program is given. Every
// mistake is reported at the entry, and an entry that is not a name is
// never echoed (it may be a pasted secret).
func TestTargetEnvProblems(t *testing.T) {
	src := `dataset:
  path: data.jsonl
prompt:
  user: "Q: {{.question}}"
targets:
  - name: app
    provider: exec
    command: [./run]
    env: [RAG_KEY, "OPENAI_API_KEY=sk-pasted-secret", 9LIVES, RAG_KEY, ASSAY_SPEC_DIR, "", "has space", _OK_1]
  - name: hosted
    provider: openai
    model: m
    env: [OPENAI_API_KEY]
`
	_, ps := parse(t, src)
	want := []string{
		`s.yaml:9:20: targets[0].env[1] looks like a secret value (OPENAI_API_KEY=sk-… (16 characters)) pasted where a variable NAME belongs (write the variable's name, e.g. MY_API_KEY, export the key in the environment, and rotate the key if this spec was shared or committed)`,
		`s.yaml:9:55: targets[0].env[2] must name an environment variable, not hold a value (write the variable's name (letters, digits and _, not starting with a digit), e.g. MY_API_KEY, and export it in the environment)`,
		`s.yaml:9:63: targets[0].env[3]: RAG_KEY is already named at env[0] (name each variable once)`,
		`s.yaml:9:72: targets[0].env[4]: ASSAY_SPEC_DIR cannot be named (assay sets it to the spec's directory; remove it from env)`,
		`s.yaml:9:88: targets[0].env[5] must name an environment variable, not hold a value (write the variable's name (letters, digits and _, not starting with a digit), e.g. MY_API_KEY, and export it in the environment)`,
		`s.yaml:9:92: targets[0].env[6] must name an environment variable, not hold a value (write the variable's name (letters, digits and _, not starting with a digit), e.g. MY_API_KEY, and export it in the environment)`,
		`s.yaml:13:5: targets[1].env is set but the provider is openai (env applies to provider exec only; hosted models read their key from api_key_env)`,
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	if strings.Contains(ps.Error(), "sk-pasted-secret") {
		t.Error("a problem echoes the env entry that holds a secret")
	}
}

// Valid names on an exec target load, in the order written.
func TestTargetEnvAccepted(t *testing.T) {
	sp, ps := parse(t, base+"    env: [RAG_KEY, HOME, _X1]\n")
	if ps != nil {
		t.Fatalf("problems: %v", ps)
	}
	if got := strings.Join(sp.Targets[0].Env, ","); got != "RAG_KEY,HOME,_X1" {
		t.Errorf("env = %s", got)
	}
}
