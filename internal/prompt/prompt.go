// Package prompt owns turning a case into chat messages: the spec's system
// and user templates (Go text/template, missingkey=error) rendered with the
// case's fields. Case values are data: they are inserted once and never
// parsed as templates, so a case holding "{{.x}}" shows it literally. It
// imports only provider (for the Message type) and must not import the
// runner, scorer, store or spec.
package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/assay-eval/assay/internal/provider"
)

// Template is a compiled pair of system and user templates.
type Template struct {
	system *template.Template // nil when there is no system message
	user   *template.Template
	fields []string
}

// ParseError says which template failed to compile and why.
type ParseError struct {
	Which string // "system" or "user"
	Err   error
}

func (e *ParseError) Error() string { return fmt.Sprintf("prompt.%s: %s", e.Which, e.Msg()) }
func (e *ParseError) Unwrap() error { return e.Err }

// Msg is the parse error without the template package's "template: NAME:"
// prefix.
func (e *ParseError) Msg() string {
	msg := e.Err.Error()
	prefix := "template: " + e.Which + ":"
	if strings.HasPrefix(msg, prefix) {
		msg = "line " + strings.TrimPrefix(msg, prefix)
	}
	return msg
}

// funcs are the helpers templates may call besides text/template's own.
func funcs() template.FuncMap {
	return template.FuncMap{
		// json renders a value (an object or list field, say) as JSON.
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
		"trim":  strings.TrimSpace,
		"upper": strings.ToUpper,
		"lower": strings.ToLower,
	}
}

// Compile parses the templates. An empty system template means no system
// message. Errors are *ParseError.
func Compile(system, user string) (*Template, error) {
	t := &Template{}
	seen := map[string]bool{}
	if system != "" {
		st, err := template.New("system").Option("missingkey=error").Funcs(funcs()).Parse(system)
		if err != nil {
			return nil, &ParseError{Which: "system", Err: err}
		}
		t.system = st
		collectFields(st, seen)
	}
	ut, err := template.New("user").Option("missingkey=error").Funcs(funcs()).Parse(user)
	if err != nil {
		return nil, &ParseError{Which: "user", Err: err}
	}
	t.user = ut
	collectFields(ut, seen)
	for f := range seen {
		t.fields = append(t.fields, f)
	}
	sort.Strings(t.fields)
	return t, nil
}

// Fields returns the top-level case fields the templates reference, sorted
// (for {{.question}} and {{.meta.level}}: question and meta).
func (t *Template) Fields() []string { return append([]string(nil), t.fields...) }

// SystemFields and UserFields return the fields each template references.
func (t *Template) SystemFields() []string {
	if t.system == nil {
		return nil
	}
	m := map[string]bool{}
	collectFields(t.system, m)
	return sortedSet(m)
}

// UserFields returns the fields the user template references.
func (t *Template) UserFields() []string {
	m := map[string]bool{}
	collectFields(t.user, m)
	return sortedSet(m)
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Render executes the templates with a case's fields and returns the system
// message (when there is a system template) and the user message. A field
// the templates use that vars lacks is an error (missingkey=error).
func (t *Template) Render(vars map[string]any) ([]provider.Message, error) {
	// A null field renders as nothing, not as "<no value>".
	data := make(map[string]any, len(vars))
	for k, v := range vars {
		if v == nil {
			v = ""
		}
		data[k] = v
	}
	msgs := make([]provider.Message, 0, 2)
	var buf bytes.Buffer
	if t.system != nil {
		if err := t.system.Execute(&buf, data); err != nil {
			return nil, fmt.Errorf("rendering prompt.system: %w", err)
		}
		msgs = append(msgs, provider.Message{Role: "system", Content: buf.String()})
		buf.Reset()
	}
	if err := t.user.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("rendering prompt.user: %w", err)
	}
	msgs = append(msgs, provider.Message{Role: "user", Content: buf.String()})
	return msgs, nil
}

// collectFields adds the top-level fields referenced by every template in
// the set (including {{define}}d ones) to seen.
func collectFields(t *template.Template, seen map[string]bool) {
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Tree.Root != nil {
			walk(tt.Tree.Root, true, seen)
		}
	}
}

// walk visits the parse tree. atRoot is true while dot is the case itself;
// inside {{with}} and {{range}} dot moves, and only $-rooted references
// ($.question) still name case fields.
func walk(n parse.Node, atRoot bool, seen map[string]bool) {
	switch x := n.(type) {
	case nil:
	case *parse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			walk(c, atRoot, seen)
		}
	case *parse.ActionNode:
		walk(x.Pipe, atRoot, seen)
	case *parse.PipeNode:
		if x == nil {
			return
		}
		for _, c := range x.Cmds {
			walk(c, atRoot, seen)
		}
	case *parse.CommandNode:
		for i, a := range x.Args {
			// {{index . "my field"}} names a field too.
			if id, ok := a.(*parse.IdentifierNode); ok && id.Ident == "index" && i+2 < len(x.Args) {
				if _, isDot := x.Args[i+1].(*parse.DotNode); isDot && atRoot {
					if s, ok := x.Args[i+2].(*parse.StringNode); ok {
						seen[s.Text] = true
					}
				}
			}
			walk(a, atRoot, seen)
		}
	case *parse.FieldNode:
		if atRoot && len(x.Ident) > 0 {
			seen[x.Ident[0]] = true
		}
	case *parse.VariableNode:
		if len(x.Ident) > 1 && x.Ident[0] == "$" {
			seen[x.Ident[1]] = true
		}
	case *parse.ChainNode:
		walk(x.Node, atRoot, seen)
	case *parse.IfNode:
		walk(x.Pipe, atRoot, seen)
		walk(x.List, atRoot, seen)
		walk(x.ElseList, atRoot, seen)
	case *parse.WithNode:
		walk(x.Pipe, atRoot, seen)
		walk(x.List, false, seen)
		walk(x.ElseList, atRoot, seen)
	case *parse.RangeNode:
		walk(x.Pipe, atRoot, seen)
		walk(x.List, false, seen)
		walk(x.ElseList, atRoot, seen)
	case *parse.TemplateNode:
		walk(x.Pipe, atRoot, seen)
	}
}
