package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// The request's shape beyond its messages: tools:, tool_choice: and
// response_format:. The decoder keeps each as JSON text in the order it
// was written (a schema's property order is the order a model fills it);
// the validator reads file:// references, checks every tool and schema,
// and fills Spec.Tools and Spec.ResponseFormat.

// toolItem is one entry of tools: as written: a file:// reference, or an
// inline tool as JSON text.
type toolItem struct {
	file string // the path after file://, when the entry is a reference
	ref  bool
	json []byte // an inline tool (nil when it could not be read)
}

// toolName is what a tool's (and a response format's) name must match.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// toolNameHint says what a valid name is.
const toolNameHint = "1 to 64 letters, digits, '_' or '-'"

// DefaultResponseFormatName is response_format.json_schema.name when the
// spec sets none.
const DefaultResponseFormatName = "response"

func decodeTools(d *decoder, n ast.Node, path string, v reflect.Value) {
	n = d.resolve(n)
	if n == nil || isNull(n) {
		return
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.fail(path, nodeLoc(n), "write a list of {name, description, parameters} or file://tools.json entries", "%s must be a list, got %s", path, kindName(n))
		return
	}
	s := v.Addr().Interface().(*Spec)
	s.toolItems = make([]toolItem, 0, len(seq.Values))
	for i, item := range seq.Values {
		ip := fmt.Sprintf("%s[%d]", path, i)
		r := d.resolveQuiet(item)
		d.record(ip, nil, r)
		r = d.resolve(item)
		if str, ok := scalarString(r); ok && !isNull(r) {
			rel, isRef := strings.CutPrefix(str, FilePrefix)
			if !isRef {
				d.fail(ip, nodeLoc(r), "write an inline tool {name, description, parameters} or file://PATH to a JSON file", "%s must be a tool or a file:// reference, got %s", ip, kindName(r))
			}
			s.toolItems = append(s.toolItems, toolItem{file: rel, ref: isRef})
			continue
		}
		if _, isMap := r.(*ast.MappingNode); !isMap {
			what := "nothing"
			if r != nil {
				what = kindName(r)
			}
			at := nodeLoc(item)
			if r != nil {
				at = nodeLoc(r)
			}
			d.fail(ip, at, "write an inline tool {name, description, parameters} or file://PATH to a JSON file", "%s must be a tool or a file:// reference, got %s", ip, what)
			s.toolItems = append(s.toolItems, toolItem{})
			continue
		}
		s.toolItems = append(s.toolItems, toolItem{json: d.jsonText(r, ip)})
	}
}

func decodeResponseFormat(d *decoder, n ast.Node, path string, v reflect.Value) {
	n = d.resolve(n)
	if n == nil || isNull(n) {
		return
	}
	if _, ok := n.(*ast.MappingNode); !ok {
		d.fail(path, nodeLoc(n), "write response_format: {json_schema: {name: ..., schema: {...} or file://schema.json, strict: true}}", "%s must be a mapping, got %s", path, kindName(n))
		return
	}
	s := v.Addr().Interface().(*Spec)
	s.formatJSON = d.jsonText(n, path) // nil when unreadable: reported already
}

// jsonText writes a YAML value as JSON, mappings in written order,
// recording every position like decode; nil after a problem.
func (d *decoder) jsonText(n ast.Node, path string) []byte {
	var b bytes.Buffer
	if !d.writeJSON(&b, n, path) {
		return nil
	}
	return b.Bytes()
}

func (d *decoder) writeJSON(b *bytes.Buffer, n ast.Node, path string) bool {
	d.budget--
	if d.budget < 0 {
		if d.budget == -1 {
			d.problem(nodeLoc(n), "", "the spec is too large or expands aliases too far (over %d values)", maxNodes)
		}
		return false
	}
	n = d.resolve(n)
	switch s := n.(type) {
	case *ast.MappingNode:
		b.WriteByte('{')
		ok, first := true, true
		d.eachKey(s, path, func(key string, kv *ast.MappingValueNode, kp string) {
			if !first {
				b.WriteByte(',')
			}
			first = false
			k, _ := json.Marshal(key)
			b.Write(k)
			b.WriteByte(':')
			if !d.writeJSON(b, kv.Value, kp) {
				ok = false
			}
		})
		b.WriteByte('}')
		return ok
	case *ast.SequenceNode:
		b.WriteByte('[')
		ok := true
		for i, item := range s.Values {
			if i > 0 {
				b.WriteByte(',')
			}
			ip := fmt.Sprintf("%s[%d]", path, i)
			d.record(ip, nil, d.resolveQuiet(item))
			if !d.writeJSON(b, item, ip) {
				ok = false
			}
		}
		b.WriteByte(']')
		return ok
	}
	g := d.generic(n, path)
	if f, isFloat := g.(float64); isFloat && (math.IsInf(f, 0) || math.IsNaN(f)) {
		d.fail(path, nodeLoc(n), "JSON has no infinity or NaN", "%s must be a finite number, got %s", path, n.GetToken().Value)
		return false
	}
	v, err := json.Marshal(g)
	if err != nil {
		d.fail(path, nodeLoc(n), "", "%s cannot be written as JSON: %v", path, err)
		return false
	}
	b.Write(v)
	return true
}

// toolDef is one tool read from JSON, before its checks.
type toolDef struct {
	name, description string
	parameters        json.RawMessage
	// where locates a problem: the key a value came from (name,
	// parameters …) under the entry's path.
	keyOf map[string]string
}

// itemProblem is a problem with a tool or a response format read from
// JSON: sub is the key it is about, relative to the entry ("" for the
// entry itself).
type itemProblem struct {
	sub, msg, hint string
}

// toolKeys are the keys a tool object may have (OpenAI's {type: function,
// function: {...}} form and Anthropic's input_schema are read too).
var toolKeys = []string{"name", "description", "parameters"}

// readToolJSON reads one tool from a JSON object.
func readToolJSON(raw json.RawMessage) (toolDef, []itemProblem) {
	var probs []itemProblem
	fail := func(sub, hint, format string, args ...any) {
		probs = append(probs, itemProblem{sub, fmt.Sprintf(format, args...), hint})
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		fail("", "a tool is an object {name, description, parameters}", "a tool must be an object, got %s", jsonKindOf(raw))
		return toolDef{}, probs
	}
	t := toolDef{keyOf: map[string]string{}}
	prefix := ""
	if typ, ok := m["type"]; ok {
		// OpenAI's form: {type: function, function: {name, …}}.
		var s string
		if json.Unmarshal(typ, &s) != nil || s != "function" {
			fail("type", `OpenAI's form is {type: function, function: {name, description, parameters}}`, "type must be \"function\", got %s", jsonShort(typ))
			return t, probs
		}
		for k := range m {
			if k != "type" && k != "function" {
				fail(k, "OpenAI's form has only type and function", "unknown key %s in a {type: function} tool", quoteName(k))
			}
		}
		fn, ok := m["function"]
		if !ok {
			fail("", `write {type: function, function: {name, description, parameters}}`, "a {type: function} tool needs function")
			return t, probs
		}
		m = nil
		if err := json.Unmarshal(fn, &m); err != nil || m == nil {
			fail("function", "function is an object {name, description, parameters}", "function must be an object, got %s", jsonKindOf(fn))
			return t, probs
		}
		prefix = "function."
	}
	for _, k := range sortedKeys(m) {
		val := m[k]
		switch k {
		case "name":
			if json.Unmarshal(val, &t.name) != nil {
				fail(prefix+k, toolNameHint, "name must be a string, got %s", jsonKindOf(val))
			}
		case "description":
			if json.Unmarshal(val, &t.description) != nil {
				fail(prefix+k, "what the tool does, for the model", "description must be a string, got %s", jsonKindOf(val))
			}
		case "parameters", "input_schema":
			if t.parameters != nil {
				fail(prefix+k, "write the schema once, as parameters", "parameters and input_schema are both set")
				continue
			}
			t.parameters = val
			t.keyOf["parameters"] = prefix + k
		case "strict":
			if prefix == "" {
				fail(prefix+k, "valid keys are: "+strings.Join(toolKeys, ", "), "unknown key %s in a tool", quoteName(k))
			} // OpenAI's function.strict is kept by OpenAI's own form only
		default:
			hint := "valid keys are: " + strings.Join(toolKeys, ", ")
			if near := nearest(k, toolKeys); near != "" {
				hint = fmt.Sprintf("did you mean %q? %s", near, hint)
			}
			fail(prefix+k, hint, "unknown key %s in a tool", quoteName(k))
		}
	}
	t.keyOf["name"] = prefix + "name"
	if _, ok := t.keyOf["parameters"]; !ok {
		t.keyOf["parameters"] = prefix + "parameters"
	}
	return t, probs
}

// checkSchema checks a tool's parameters or a response format's schema:
// a JSON object whose type is object, that compiles (draft 2020-12 unless
// $schema says otherwise, no $ref to other files). It returns the schema
// compacted.
func checkSchema(raw json.RawMessage, what string) (json.RawMessage, *itemProblem) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, &itemProblem{msg: fmt.Sprintf("%s is not valid JSON: %v", what, err)}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &itemProblem{msg: fmt.Sprintf("%s must be a JSON Schema object, got %s", what, jsonKindOf(raw)),
			hint: `e.g. {type: object, properties: {city: {type: string}}, required: [city]}`}
	}
	if typ, ok := m["type"]; !ok || typ != "object" {
		got := "no type"
		if ok {
			b, _ := json.Marshal(typ)
			got = "type " + string(b)
		}
		return nil, &itemProblem{msg: fmt.Sprintf("%s must describe an object (type: object), it has %s", what, got),
			hint: "the arguments (or the reply) are one JSON object: put the values under properties"}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &itemProblem{msg: fmt.Sprintf("%s is not valid JSON: %v", what, err)}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const url = "mem:///schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, &itemProblem{msg: fmt.Sprintf("%s does not compile: %s", what, schemaErr(err))}
	}
	if _, err := c.Compile(url); err != nil {
		return nil, &itemProblem{msg: fmt.Sprintf("%s does not compile: %s", what, schemaErr(err)),
			hint: "a JSON Schema, draft 2020-12 unless $schema says otherwise"}
	}
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		return nil, &itemProblem{msg: fmt.Sprintf("%s is not valid JSON: %v", what, err)}
	}
	return out.Bytes(), nil
}

// noLoader refuses every resource a schema refers to outside itself: a
// tool's schema is sent to the model as written, so it must be whole.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("a schema sent to the model cannot $ref another document (%s): put the definition under $defs", shortQuote(url))
}

// schemaErr is the compiler's message on one line, without the
// resource's made-up URL.
func schemaErr(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		err = sve.Err
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		// Against the metaschema: each leaf violation, where it is in the
		// schema.
		var out []string
		printer := message.NewPrinter(language.English)
		var walk func(e *jsonschema.ValidationError)
		walk = func(e *jsonschema.ValidationError) {
			if len(e.Causes) > 0 {
				for _, c := range e.Causes {
					walk(c)
				}
				return
			}
			if len(out) < 3 {
				out = append(out, fmt.Sprintf("at /%s: %s", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(printer)))
			}
		}
		walk(ve)
		if len(out) > 0 {
			return strings.Join(out, "; ")
		}
	}
	msg := strings.ReplaceAll(err.Error(), "mem:///schema.json", "the schema")
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return msg
}

// jsonKindOf names a JSON value's kind for messages.
func jsonKindOf(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		var s string
		if json.Unmarshal(t, &s) == nil {
			return "the string " + shortQuote(s)
		}
		return "a string"
	case 't', 'f':
		return "the boolean " + string(t)
	case 'n':
		return "null"
	}
	return "the number " + jsonShort(t)
}

func jsonShort(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 24 {
		return "(" + strconv.Itoa(len(s)) + " characters)"
	}
	return s
}

// jsonErrAt turns a JSON syntax error in b into "line L, column C: msg".
func jsonErrAt(b []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := int(se.Offset)
		if off > len(b) {
			off = len(b)
		}
		line := 1 + bytes.Count(b[:off], []byte("\n"))
		col := off - bytes.LastIndexByte(b[:off], '\n')
		return fmt.Sprintf("line %d, column %d: %s", line, col, se.Error())
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Error()
	}
	return err.Error()
}

// checkTools reads tools: (file:// references read and recorded like
// prompts), checks each tool's name (unique, toolNameHint) and parameters
// (an object schema that compiles), and fills Spec.Tools in written order,
// a file's tools in place of its reference.
func (v *validator) checkTools() {
	s := v.s
	if s.toolItems == nil {
		return
	}
	s.Tools = nil
	seen := map[string]string{} // name → where first defined
	for i, item := range s.toolItems {
		p := fmt.Sprintf("tools[%d]", i)
		if item.json == nil && !item.ref {
			continue // reported by the decoder
		}
		if !item.ref {
			t, probs := readToolJSON(item.json)
			for _, pr := range probs {
				v.at(join(p, pr.sub), pr.hint, "%s", pr.msg)
			}
			if len(probs) == 0 {
				v.addTool(p, "", t, seen, func(sub string) string { return join(p, t.keyOf[sub]) }, "")
			}
			continue
		}
		if item.file == "" {
			v.at(p, "write file://path/relative/to/the/spec.json", "%s names no file", p)
			continue
		}
		b, ok := v.readFile(p, item.file)
		if !ok {
			continue
		}
		var list []json.RawMessage
		trimmed := bytes.TrimSpace(b)
		switch {
		case len(trimmed) > 0 && trimmed[0] == '[':
			if err := json.Unmarshal(trimmed, &list); err != nil {
				v.at(p, "the file holds one tool object or a list of them, as JSON", "%s: %s is not valid JSON: %s", p, shortQuote(item.file), jsonErrAt(trimmed, err))
				continue
			}
			if len(list) == 0 {
				v.at(p, "the file holds one tool object or a list of them, as JSON", "%s: %s holds an empty list of tools", p, shortQuote(item.file))
				continue
			}
		default:
			var one json.RawMessage
			if err := json.Unmarshal(trimmed, &one); err != nil {
				v.at(p, "the file holds one tool object or a list of them, as JSON", "%s: %s is not valid JSON: %s", p, shortQuote(item.file), jsonErrAt(trimmed, err))
				continue
			}
			list = []json.RawMessage{one}
		}
		for j, raw := range list {
			where := shortQuote(item.file)
			if len(list) > 1 {
				where = fmt.Sprintf("%s, tool %d", shortQuote(item.file), j+1)
			}
			t, probs := readToolJSON(raw)
			for _, pr := range probs {
				sub := ""
				if pr.sub != "" {
					sub = " (" + pr.sub + ")"
				}
				v.at(p, pr.hint, "%s: %s%s: %s", p, where, sub, pr.msg)
			}
			if len(probs) == 0 {
				v.addTool(p, item.file, t, seen, func(string) string { return p }, where)
			}
		}
	}
}

// addTool checks one tool read from JSON and appends it to Spec.Tools;
// at locates a problem about one of its keys, from says which file and
// tool it came from ("" when inline).
func (v *validator) addTool(p, file string, t toolDef, seen map[string]string, at func(string) string, from string) {
	lead := p + ": "
	if from != "" {
		lead = p + ": " + from + ": "
	}
	switch {
	case t.name == "":
		v.at(at("name"), toolNameHint, "%sthe tool has no name", lead)
		return
	case !toolName.MatchString(t.name):
		v.at(at("name"), toolNameHint, "%stool name %s is not a valid name", lead, shortQuote(t.name))
		return
	}
	where := p
	if from != "" {
		where = p + " (" + from + ")"
	}
	if first, dup := seen[t.name]; dup {
		v.at(at("name"), "tool names must be unique", "%sduplicate tool name %q (first at %s)", lead, t.name, first)
		return
	}
	seen[t.name] = where
	v.toolNames = append(v.toolNames, t.name)
	params := json.RawMessage(`{"type":"object","properties":{}}`)
	if t.parameters != nil {
		compact, pr := checkSchema(t.parameters, "parameters of tool "+strconv.Quote(t.name))
		if pr != nil {
			v.at(at("parameters"), pr.hint, "%s%s", lead, pr.msg)
			return
		}
		params = compact
	}
	v.s.Tools = append(v.s.Tools, Tool{Name: t.name, Description: t.description, Parameters: params, File: file})
}

// readFile reads a file:// reference of the request's shape for the
// prompt: recorded in Files and in the spec's hash.
func (v *validator) readFile(p, rel string) ([]byte, bool) {
	b, err := readLimited(v.s.Resolve(rel))
	if err != nil {
		v.at(p, "paths are relative to the spec's directory", "%s: cannot read %s: %s", p, shortQuote(rel), FileError(err))
		return nil, false
	}
	v.files = append(v.files, [2]string{p, string(b)})
	v.s.record(FileForPrompt, rel, b)
	return b, true
}

// checkToolChoice checks tool_choice against the tools.
func (v *validator) checkToolChoice() {
	s := v.s
	c := s.ToolChoice
	if c == "" {
		return
	}
	choices := []string{"auto", "none", "required"}
	names := v.toolNames // every tool named, its schema good or not
	switch {
	case len(s.toolItems) == 0:
		v.at("tool_choice", "add tools: or remove tool_choice", "tool_choice is set but the spec offers no tools")
	case contains(choices, c):
	case contains(names, c):
	default:
		all := append(append([]string{}, choices...), names...)
		hint := "tool_choice is auto, none, required or a tool's name (" + strings.Join(names, ", ") + ")"
		if near := nearest(c, all); near != "" {
			hint = fmt.Sprintf("did you mean %q? %s", near, hint)
		}
		v.at("tool_choice", hint, "tool_choice %s is neither auto, none, required nor a tool of the spec", shortQuote(c))
	}
}

// checkResponseFormat reads response_format: {json_schema: {name, schema,
// strict}} (OpenAI's {type: json_schema, json_schema: …} too), the schema
// inline or file://, and fills Spec.ResponseFormat.
func (v *validator) checkResponseFormat() {
	s := v.s
	if len(s.formatJSON) == 0 {
		return
	}
	const p = "response_format"
	const shape = "write response_format: {json_schema: {name: answer, schema: {type: object, ...} or file://schema.json, strict: true}}"
	var top map[string]json.RawMessage
	if json.Unmarshal(s.formatJSON, &top) != nil {
		return
	}
	for _, k := range sortedKeys(top) {
		switch k {
		case "json_schema":
		case "type":
			var t string
			if json.Unmarshal(top[k], &t) != nil || t != "json_schema" {
				v.at(p+".type", shape, "response_format.type must be json_schema, got %s", jsonKindOf(top[k]))
			}
		default:
			v.at(p+"."+k, "valid keys are: json_schema (and type: json_schema)", "unknown key %s in response_format", quoteName(k))
		}
	}
	js, ok := top["json_schema"]
	if !ok {
		v.at(p, shape, "response_format needs json_schema")
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(js, &m) != nil || m == nil {
		v.at(p+".json_schema", shape, "response_format.json_schema must be a mapping, got %s", jsonKindOf(js))
		return
	}
	jp := p + ".json_schema"
	rf := &ResponseFormat{Name: DefaultResponseFormatName}
	good := true
	keys := []string{"name", "schema", "strict"}
	for _, k := range sortedKeys(m) {
		val := m[k]
		switch k {
		case "name":
			if json.Unmarshal(val, &rf.Name) != nil || !toolName.MatchString(rf.Name) {
				v.at(jp+".name", toolNameHint, "%s.name must be a name of %s, got %s", jp, toolNameHint, jsonKindOf(val))
				good = false
			}
		case "strict":
			if json.Unmarshal(val, &rf.Strict) != nil {
				v.at(jp+".strict", "write true or false", "%s.strict must be true or false, got %s", jp, jsonKindOf(val))
				good = false
			}
		case "schema":
		default:
			hint := "valid keys are: " + strings.Join(keys, ", ")
			if near := nearest(k, keys); near != "" {
				hint = fmt.Sprintf("did you mean %q? %s", near, hint)
			}
			v.at(jp+"."+k, hint, "unknown key %s in %s", quoteName(k), jp)
		}
	}
	raw, ok := m["schema"]
	if !ok {
		v.at(jp, shape, "%s.schema is required", jp)
		return
	}
	sp := jp + ".schema"
	var str string
	if json.Unmarshal(raw, &str) == nil {
		rel, isRef := strings.CutPrefix(str, FilePrefix)
		switch {
		case !isRef:
			v.at(sp, shape, "%s must be a JSON Schema or file://PATH, got %s", sp, shortQuote(str))
			return
		case rel == "":
			v.at(sp, "write file://path/relative/to/the/spec.json", "%s names no file", sp)
			return
		}
		rf.SchemaFile = rel
		b, ok := v.readFile(sp, rel)
		if !ok {
			return
		}
		var check json.RawMessage
		if err := json.Unmarshal(b, &check); err != nil {
			v.at(sp, "the file holds one JSON Schema object", "%s: %s is not valid JSON: %s", sp, shortQuote(rel), jsonErrAt(bytes.TrimSpace(b), err))
			return
		}
		raw = check
	}
	what := sp
	if rf.SchemaFile != "" {
		what = sp + " (" + rf.SchemaFile + ")"
	}
	compact, pr := checkSchema(raw, what)
	if pr != nil {
		v.at(sp, pr.hint, "%s", pr.msg)
		return
	}
	rf.Schema = compact
	if good {
		s.ResponseFormat = rf
	}
}
