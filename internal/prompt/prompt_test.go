package prompt

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/provider"
)

func TestRenderSystemAndUser(t *testing.T) {
	tm, err := Compile("You grade {{.subject}}.", "Q: {{.question}}\nA:")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tm.Render(map[string]any{"subject": "math", "question": "2+2?", "unused": 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Message{{Role: "system", Content: "You grade math."}, {Role: "user", Content: "Q: 2+2?\nA:"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v", got)
	}
}

func TestNoSystemMessageWhenEmpty(t *testing.T) {
	tm, err := Compile("", "{{.q}}")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tm.Render(map[string]any{"q": "x"})
	if len(got) != 1 || got[0].Role != "user" {
		t.Errorf("got %#v", got)
	}
}

// Case values are data: template syntax inside them is shown literally,
// never executed — even when it names a field that exists.
func TestCaseValuesAreNeverTemplated(t *testing.T) {
	tm, err := Compile("{{.sys}}", "Q: {{.question}}")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{
		"question": `{{.secret}} {{template "user"}} {{range .}}x{{end}} {{printf "%s" "y"}}`,
		"sys":      "{{.question}}",
		"secret":   "LEAKED",
	}
	got, err := tm.Render(vars)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Content != "{{.question}}" {
		t.Errorf("system = %q", got[0].Content)
	}
	if got[1].Content != "Q: "+vars["question"].(string) || strings.Contains(got[1].Content, "LEAKED") {
		t.Errorf("user = %q", got[1].Content)
	}
}

func TestMissingFieldIsAnError(t *testing.T) {
	tm, err := Compile("", "Q: {{.question}}")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tm.Render(map[string]any{"questoin": "typo"})
	if err == nil || !strings.Contains(err.Error(), "question") {
		t.Errorf("err = %v", err)
	}
	if _, err := tm.Render(map[string]any{"question": nil}); err != nil {
		t.Errorf("a null field renders as empty: %v", err)
	}
	got, _ := tm.Render(map[string]any{"question": nil})
	if got[0].Content != "Q: " {
		t.Errorf("null rendered as %q, want empty", got[0].Content)
	}
}

func TestNoHTMLEscaping(t *testing.T) {
	tm, _ := Compile("", "{{.x}}")
	got, _ := tm.Render(map[string]any{"x": `<a href="x">&</a>`})
	if got[0].Content != `<a href="x">&</a>` {
		t.Errorf("prompts are text, not HTML: %q", got[0].Content)
	}
}

func TestFields(t *testing.T) {
	tm, err := Compile(
		`{{if .persona}}{{.persona}}{{end}}`,
		`{{.question}} {{.meta.level}} {{with .ctx}}{{.inner}}{{$.outer}}{{end}} {{range .items}}{{.name}}{{end}} {{index . "my field"}} {{json .obj | trim}} {{template "t" .}}{{define "t"}}{{.defined}}{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ctx", "defined", "items", "meta", "my field", "obj", "outer", "persona", "question"}
	if got := tm.Fields(); !reflect.DeepEqual(got, want) {
		t.Errorf("Fields = %v, want %v", got, want)
	}
	if got := tm.SystemFields(); !reflect.DeepEqual(got, []string{"persona"}) {
		t.Errorf("SystemFields = %v", got)
	}
}

func TestParseErrorSaysWhich(t *testing.T) {
	for _, c := range []struct{ sys, user, which string }{
		{"{{.x", "ok", "system"},
		{"", "{{if .x}}", "user"},
		{"", "{{nofunc .x}}", "user"},
	} {
		_, err := Compile(c.sys, c.user)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Which != c.which {
			t.Errorf("Compile(%q, %q) = %v, want a ParseError in %s", c.sys, c.user, err, c.which)
			continue
		}
		if strings.HasPrefix(pe.Msg(), "template:") || !strings.HasPrefix(pe.Msg(), "line 1") {
			t.Errorf("Msg = %q", pe.Msg())
		}
	}
}

func TestJSONHelper(t *testing.T) {
	tm, _ := Compile("", `{{json .o}}`)
	got, err := tm.Render(map[string]any{"o": map[string]any{"a": []any{1.0, "b"}}})
	if err != nil || got[0].Content != `{"a":[1,"b"]}` {
		t.Errorf("got %v %v", got, err)
	}
}
