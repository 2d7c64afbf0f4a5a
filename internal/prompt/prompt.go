// Package prompt owns turning a case into chat messages: the spec's system
// and user templates, or its list of message templates (Go text/template,
// missingkey=error), rendered with the case's fields, and a case's message
// history read from a field (history.go). Case values are data: they are
// inserted once and never parsed as templates, so a case holding "{{.x}}"
// shows it literally, and a history is sent as written. It imports only
// provider (for the Message type) and must not import the runner, scorer,
// store or spec.
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

// Template is a compiled list of message templates (the spec's system
// and user templates, or its prompt.messages), and the case field holding
// a message history, if any.
type Template struct {
	parts   []part
	history string
	fields  []string
}

// part is one compiled message template.
type part struct {
	which      string // how problems name it: "system", "messages[2].content"
	role       string
	toolCallID string
	tmpl       *template.Template
}

// Part is one message template to compile: Which names it in errors
// ("messages[N].content" when empty), Role is its role, Content its Go
// template, ToolCallID the call a "tool" message answers.
type Part struct {
	Which, Role, Content, ToolCallID string
}

// ParseError says which template failed to compile and why.
type ParseError struct {
	Which string // "system", "user" or "messages[N].content"
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
	var parts []Part
	if system != "" {
		parts = append(parts, Part{Which: "system", Role: "system", Content: system})
	}
	parts = append(parts, Part{Which: "user", Role: "user", Content: user})
	return CompileMessages(parts, "")
}

// CompileMessages parses message templates, in order. history, when not
// "", names the case field holding a message history (ParseHistory): it is
// sent as data, never rendered, after the leading system messages and
// before the rest. Errors are *ParseError.
func CompileMessages(parts []Part, history string) (*Template, error) {
	t := &Template{history: history}
	seen := map[string]bool{}
	for i, p := range parts {
		which := p.Which
		if which == "" {
			which = fmt.Sprintf("messages[%d].content", i)
		}
		tt, err := template.New(which).Option("missingkey=error").Funcs(funcs()).Parse(p.Content)
		if err != nil {
			return nil, &ParseError{Which: which, Err: err}
		}
		collectFields(tt, seen)
		t.parts = append(t.parts, part{which: which, role: p.Role, toolCallID: p.ToolCallID, tmpl: tt})
	}
	if history != "" {
		seen[history] = true
	}
	for f := range seen {
		t.fields = append(t.fields, f)
	}
	sort.Strings(t.fields)
	return t, nil
}

// Fields returns the top-level case fields the templates reference, and
// the history field, sorted (for {{.question}} and {{.meta.level}}:
// question and meta).
func (t *Template) Fields() []string { return append([]string(nil), t.fields...) }

// History is the case field holding a message history, or "".
func (t *Template) History() string { return t.history }

// PartFields is the fields one message template references.
type PartFields struct {
	Which  string // "system", "user", "messages[N].content"
	Fields []string
}

// PartFields returns the fields each message template references, in
// order.
func (t *Template) PartFields() []PartFields {
	out := make([]PartFields, 0, len(t.parts))
	for _, p := range t.parts {
		m := map[string]bool{}
		collectFields(p.tmpl, m)
		out = append(out, PartFields{Which: p.which, Fields: sortedSet(m)})
	}
	return out
}

// SystemFields returns the fields the system templates reference.
func (t *Template) SystemFields() []string { return t.roleFields("system") }

// UserFields returns the fields the user templates reference.
func (t *Template) UserFields() []string { return t.roleFields("user") }

func (t *Template) roleFields(role string) []string {
	m := map[string]bool{}
	found := false
	for _, p := range t.parts {
		if p.role == role {
			collectFields(p.tmpl, m)
			found = true
		}
	}
	if !found {
		return nil
	}
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

// Render executes the templates with a case's fields and returns the
// messages in order, the case's history (when the template names a history
// field) after the leading system messages. A field the templates use that
// vars lacks is an error (missingkey=error), and so is a history that is
// not one (a *HistoryError).
func (t *Template) Render(vars map[string]any) ([]provider.Message, error) {
	// A null field renders as nothing, not as "<no value>".
	data := make(map[string]any, len(vars))
	for k, v := range vars {
		if v == nil {
			v = ""
		}
		data[k] = v
	}
	var history []provider.Message
	if t.history != "" {
		v, ok := vars[t.history]
		if !ok {
			return nil, &HistoryError{Field: t.history, Index: -1, Msg: "the case has no such field"}
		}
		h, err := ParseHistory(t.history, v)
		if err != nil {
			return nil, err
		}
		history = h
	}
	msgs := make([]provider.Message, 0, len(t.parts)+len(history))
	inserted := t.history == ""
	var buf bytes.Buffer
	for _, p := range t.parts {
		if !inserted && p.role != "system" {
			msgs = append(msgs, history...)
			inserted = true
		}
		buf.Reset()
		if err := p.tmpl.Execute(&buf, data); err != nil {
			return nil, fmt.Errorf("rendering prompt.%s: %w", p.which, err)
		}
		msgs = append(msgs, provider.Message{Role: p.role, Content: buf.String(), ToolCallID: p.toolCallID})
	}
	if !inserted {
		msgs = append(msgs, history...)
	}
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
