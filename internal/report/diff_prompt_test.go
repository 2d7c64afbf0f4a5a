package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/analysis"
)

// promptDiff is a run diff whose only change is prompt.user, with its line
// diff as analysis computes it.
func promptDiff(before, after string) *analysis.RunDiff {
	jb, _ := json.Marshal(before)
	ja, _ := json.Marshal(after)
	fc := analysis.FieldChange{Field: "prompt.user", Before: string(jb), After: string(ja)}
	fc.Lines, fc.LinesOmitted = analysis.LineDiff(before, after)
	return &analysis.RunDiff{
		Before: analysis.RunInfo{ID: "a", Spec: "s"}, After: analysis.RunInfo{ID: "b", Spec: "s"},
		Versions: []analysis.VersionChange{{Name: "prompt_hash", Before: "sha256:1", After: "sha256:2"}},
		Spec:     &analysis.SpecDiff{Prompt: []analysis.FieldChange{fc}},
	}
}

// A changed prompt shows as a unified line diff, in text and in Markdown
// (a diff code block whose fence no line of the prompt can close), with
// the prompt's control characters made visible.
func TestRunDiffShowsPromptLineDiff(t *testing.T) {
	before := "You are a helpful assistant.\nAnswer in JSON.\n{{.question}}"
	after := "You are a careful assistant.\nAnswer in JSON.\n{{.question}}\n```\n\x1b[31m<script>alert(1)</script>"
	d := promptDiff(before, after)

	var b bytes.Buffer
	if err := RunDiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	// Line 1 changed, lines 2–3 kept, two lines added: one hunk covering
	// the 3 lines before and the 5 after.
	want := "    prompt.user:\n" +
		"      @@ -1,3 +1,5 @@\n" +
		"      -You are a helpful assistant.\n" +
		"      +You are a careful assistant.\n" +
		"       Answer in JSON.\n" +
		"       {{.question}}\n" +
		"      +```\n"
	if !strings.Contains(text, want) {
		t.Errorf("text diff lacks the prompt's line diff:\n%s\nwant it to contain\n%s", text, want)
	}
	if r, ok := safeForTerminal(text); !ok {
		t.Errorf("rune %U reaches the terminal:\n%q", r, text)
	}
	if !strings.Contains(text, "      +\\x1b[31m<script>alert(1)</script>\n") {
		t.Errorf("the added line is not shown with its escape made visible:\n%s", text)
	}

	b.Reset()
	if err := RunDiffMarkdown(&b, d); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	open := strings.Index(md, "````diff\n")
	if open < 0 {
		t.Fatalf("no diff block fenced longer than the prompt's ``` :\n%s", md)
	}
	body, _, ok := strings.Cut(md[open+len("````diff\n"):], "\n````")
	if !ok {
		t.Fatalf("the diff block is not closed:\n%s", md)
	}
	for _, l := range []string{"-You are a helpful assistant.", "+You are a careful assistant.", " Answer in JSON.", "+```"} {
		if !strings.Contains(body, l+"\n") {
			t.Errorf("the diff block lacks %q:\n%s", l, body)
		}
	}
	if r, ok := safeForTerminal(md); !ok {
		t.Errorf("rune %U passed through:\n%q", r, md)
	}
}

// A prompt rewritten whole is bounded in the diff, which says how many
// changed lines it left out.
func TestRunDiffPromptLineDiffBounded(t *testing.T) {
	before := strings.Repeat("old line\n", 500)
	after := strings.Repeat("new line\n", 500)
	d := promptDiff(before, after)
	var b bytes.Buffer
	if err := RunDiffText(&b, d); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n > 120 {
		t.Errorf("the text diff has %d lines for a 500-line prompt", n)
	}
	if !strings.Contains(b.String(), "… and ") || !strings.Contains(b.String(), " more changed lines") {
		t.Errorf("the text diff does not say lines were left out:\n%s", b.String())
	}
}

// FuzzPromptDiffFence: whatever the prompts hold, the Markdown diff block
// is closed only by its own fence, and nothing reaches a terminal raw.
func FuzzPromptDiffFence(f *testing.F) {
	f.Add("a\nb", "a\n```\nb")
	f.Add("````", "`````\n\x1b[2J")
	f.Add("x\r\ny", "x\ry\u202e")
	f.Fuzz(func(t *testing.T, before, after string) {
		if before == after || len(before)+len(after) > 8<<10 {
			return
		}
		d := promptDiff(before, after)
		var b bytes.Buffer
		if err := RunDiffMarkdown(&b, d); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		if r, ok := safeForTerminal(strings.ReplaceAll(md, "\t", " ")); !ok {
			t.Fatalf("markdown: rune %U passed through", r)
		}
		i := strings.Index(md, "diff\n")
		if i < 0 {
			t.Fatalf("no diff block:\n%s", md)
		}
		fence := md[strings.LastIndex(md[:i], "\n")+1 : i]
		if strings.Trim(fence, "`") != "" || len(fence) < 3 {
			t.Fatalf("fence %q", fence)
		}
		body := md[i+len("diff\n"):]
		end := strings.Index(body, "\n"+fence)
		if end < 0 {
			t.Fatalf("the block is not closed:\n%s", md)
		}
		if got, want := strings.Count(body[:end+1], "\n"), len(diffLines(d.Spec.Prompt[0])); got != want {
			t.Fatalf("the block holds %d lines, the diff has %d: a line was split or closed the fence\n%s", got, want, md)
		}
		b.Reset()
		if err := RunDiffText(&b, d); err != nil {
			t.Fatal(err)
		}
		if r, ok := safeForTerminal(b.String()); !ok {
			t.Fatalf("text: rune %U reaches the terminal", r)
		}
	})
}
