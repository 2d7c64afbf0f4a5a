package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// docBlocks returns the fenced blocks of a Markdown file with the given
// info string, in order.
func docBlocks(t *testing.T, path, lang string) []string {
	t.Helper()
	var out []string
	var cur *strings.Builder
	in := false
	for _, line := range strings.Split(readFileT(t, path), "\n") {
		switch {
		case !in && strings.HasPrefix(line, "```"):
			in = true
			if strings.TrimPrefix(line, "```") == lang {
				cur = &strings.Builder{}
			}
		case in && line == "```":
			if cur != nil {
				out = append(out, cur.String())
			}
			in, cur = false, nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return out
}

// shellWords splits a command line on spaces, honouring single and double
// quotes (enough for the commands in our docs).
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	quote := byte(0)
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// The commands, rules and messages in docs/gate.md are what assay does: the
// CI quickstart runs and passes, the spec's gate section and the --rule
// examples are valid, and the bad rules give the messages shown.
func TestGateDocs(t *testing.T) {
	doc := filepath.Join(repoRoot(t), "docs", "gate.md")
	_, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	var cases strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&cases, `{"id":"c%d","q":"item %d","answer":"%d","tier":"%d"}`+"\n", i, i, i, i%5)
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), cases.String())
	head := fmt.Sprintf(`name: triage
dataset: {path: cases.jsonl, id: id, expected: answer, tags: {tier: tier}}
prompt: {user: "{{.answer}}"}
targets:
  - {name: gpt, provider: openai, model: m, base_url: %s/v1}
scorers:
  - {name: correct, type: equals, primary: true}
`, url)

	yamls := docBlocks(t, doc, "yaml")
	if len(yamls) != 2 || !strings.Contains(yamls[0], "alpha:") || !strings.Contains(yamls[1], "corect") {
		t.Fatalf("docs/gate.md: want the gate section example then the bad rules, got %d yaml blocks", len(yamls))
	}
	writeFile(t, filepath.Join(dir, "assay.yaml"), head+yamls[0])
	t.Chdir(dir)

	summary := filepath.Join(dir, "step-summary.md")
	var ran int
	for _, block := range docBlocks(t, doc, "sh") {
		for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
			if i := strings.Index(line, "#"); i >= 0 {
				line = line[:i]
			}
			words := shellWords(strings.ReplaceAll(line, `"$GITHUB_STEP_SUMMARY"`, summary))
			if len(words) == 0 || words[0] != "assay" {
				continue
			}
			inv := runCLI(t, cliEnv{}, words[1:]...)
			if inv.code != 0 {
				t.Errorf("docs/gate.md: %s\nexit %d\n%s%s", strings.Join(words, " "), inv.code, inv.stdout, inv.stderr)
			}
			ran++
		}
	}
	if ran < 5 {
		t.Errorf("ran %d commands from docs/gate.md", ran)
	}
	if md, err := os.ReadFile(summary); err != nil || !strings.HasPrefix(string(md), "### ✅ assay gate: pass") {
		t.Errorf("--summary: %v\n%s", err, md)
	}

	// The bad rules, at lines 8–12 of a spec whose scorer is correct.
	writeFile(t, filepath.Join(dir, "assay.yaml"), head+yamls[1])
	inv := runCLI(t, cliEnv{}, "validate", "assay.yaml")
	plain := docBlocks(t, doc, "")
	want := ""
	for _, b := range plain {
		if strings.HasPrefix(b, "assay.yaml:") {
			want = b
		}
	}
	if inv.code != ExitInvalid || want == "" || inv.stderr != want {
		t.Errorf("validate: exit %d\n%s\ndocs/gate.md shows:\n%s", inv.code, inv.stderr, want)
	}
}
