package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const toolsSpec = base + `tools:
  - name: get_weather
    description: The weather in a city.
    parameters:
      type: object
      properties:
        zeta: {type: string}
        city: {type: string}
      required: [city]
  - file://tools.json
tool_choice: required
response_format:
  json_schema:
    name: answer
    schema: file://answer.schema.json
    strict: true
`

func writeSpec(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "s.yaml")
}

func TestToolsReadInlineAndFromFiles(t *testing.T) {
	path := writeSpec(t, map[string]string{
		"s.yaml": toolsSpec,
		"tools.json": `[{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}}}},
		  {"name": "now", "description": "The time."}]`,
		"answer.schema.json": `{"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "number"}}, "required": ["b", "a"], "additionalProperties": false}`,
	})
	sp, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range sp.Tools {
		names = append(names, tl.Name+"@"+tl.File)
	}
	if strings.Join(names, ",") != "get_weather@,lookup@tools.json,now@tools.json" {
		t.Fatalf("tools = %v", names)
	}
	// The written property order is kept (a model fills a schema in order).
	if got := string(sp.Tools[0].Parameters); got != `{"type":"object","properties":{"zeta":{"type":"string"},"city":{"type":"string"}},"required":["city"]}` {
		t.Errorf("inline parameters = %s", got)
	}
	if got := string(sp.Tools[2].Parameters); got != `{"type":"object","properties":{}}` {
		t.Errorf("a tool without parameters takes no arguments: %s", got)
	}
	if sp.ToolChoice != "required" {
		t.Errorf("tool_choice = %q", sp.ToolChoice)
	}
	rf := sp.ResponseFormat
	if rf == nil || rf.Name != "answer" || !rf.Strict || rf.SchemaFile != "answer.schema.json" ||
		!strings.HasPrefix(string(rf.Schema), `{"type":"object","properties":{"b":`) {
		t.Fatalf("response_format = %+v", rf)
	}
	var files []string
	for _, f := range sp.Files {
		files = append(files, f.For+":"+f.Path)
	}
	if strings.Join(files, ",") != "prompt:answer.schema.json,prompt:tools.json" {
		t.Errorf("files = %v", files)
	}

	// Every one of them is in the prompt hash: a changed tool refuses a
	// resume, as a changed prompt does.
	h := sp.PromptHash()
	os.WriteFile(filepath.Join(filepath.Dir(path), "tools.json"), []byte(`{"name": "now", "description": "The time now."}`), 0o644)
	sp2, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if sp2.PromptHash() == h || sp2.Hash == sp.Hash {
		t.Error("a changed tool file must change the prompt hash and the spec hash")
	}
}

// A spec without tools, messages or a response format hashes its prompt
// as it did before they existed.
func TestPromptHashUnchangedWithoutTools(t *testing.T) {
	sp, ps := parse(t, base)
	if ps != nil {
		t.Fatal(ps)
	}
	if got := sp.PromptHash(); got != promptHashBefore(sp) {
		t.Errorf("prompt hash changed: %s", got)
	}
}

// promptHashBefore is PromptHash as written before tools existed.
func promptHashBefore(s *Spec) string {
	h := sha256.New()
	writeField(h, "system", []byte(s.Prompt.System))
	writeField(h, "user", []byte(s.Prompt.User))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func TestToolProblems(t *testing.T) {
	cases := []struct {
		name, src string
		files     map[string]string
		want      []string
	}{
		{"bad name and duplicate", base + "tools:\n  - {name: 'get weather', parameters: {type: object}}\n  - {name: a, parameters: {type: object}}\n  - {name: a}\n", nil, []string{
			`s.yaml:10:12: tools[0]: tool name "get weather" is not a valid name (1 to 64 letters, digits, '_' or '-')`,
			`s.yaml:12:12: tools[2]: duplicate tool name "a" (first at tools[1]) (tool names must be unique)`,
		}},
		{"parameters not an object schema", base + "tools:\n  - name: a\n    parameters: {type: string}\n  - name: b\n    parameters: {type: object, properties: {x: {type: 7}}}\n", nil, []string{
			`s.yaml:11:5: tools[0]: parameters of tool "a" must describe an object (type: object), it has type "string" (the arguments (or the reply) are one JSON object: put the values under properties)`,
			`s.yaml:13:5: tools[1]: parameters of tool "b" does not compile: at /properties/x/type: value must be one of`,
		}},
		{"unknown key", base + "tools:\n  - {name: a, paramters: {type: object}}\n", nil, []string{
			`s.yaml:10:15: unknown key "paramters" in a tool (did you mean "parameters"? valid keys are: name, description, parameters)`,
		}},
		{"not a tool", base + "tools:\n  - get_weather\n  - 7\n", nil, []string{
			`s.yaml:10:5: tools[0] must be a tool or a file:// reference, got the string "get_weather"`,
			`s.yaml:11:5: tools[1] must be a tool or a file:// reference, got the number 7`,
		}},
		{"tools not a list", base + "tools: {name: a}\n", nil, []string{
			`s.yaml:9:8: tools must be a list, got a mapping`,
		}},
		{"bad files", base + "tools:\n  - file://missing.json\n  - file://broken.json\n  - file://list.json\n", map[string]string{
			"broken.json": "{\"name\": \"a\",\n \"parameters\": {\"type\": \"object\",}}",
			"list.json":   `[{"name": "ok"}, {"name": "bad name!"}, {"name": "x", "parameters": {"type": "object", "$ref": "other.json"}}]`,
		}, []string{
			`s.yaml:10:5: tools[0]: cannot read "missing.json": no such file (paths are relative to the spec's directory)`,
			`s.yaml:11:5: tools[1]: "broken.json" is not valid JSON: line 2, column 35: invalid character '}' looking for beginning of object key string`,
			`s.yaml:12:5: tools[2]: "list.json", tool 2: tool name "bad name!" is not a valid name`,
			`s.yaml:12:5: tools[2]: "list.json", tool 3: parameters of tool "x" does not compile:`,
		}},
		{"tool_choice", base + "tools: [{name: search}]\ntool_choice: serch\n", nil, []string{
			`s.yaml:10:14: tool_choice "serch" is neither auto, none, required nor a tool of the spec (did you mean "search"? tool_choice is auto, none, required or a tool's name (search))`,
		}},
		{"tool_choice without tools", base + "tool_choice: auto\n", nil, []string{
			`s.yaml:9:14: tool_choice is set but the spec offers no tools (add tools: or remove tool_choice)`,
		}},
		{"response_format", base + "response_format:\n  json_schema:\n    name: 'my answer'\n    schema: {type: array}\n    strickt: true\n", nil, []string{
			`s.yaml:11:11: response_format.json_schema.name must be a name of 1 to 64 letters, digits, '_' or '-', got the string "my answer"`,
			`s.yaml:12:5: response_format.json_schema.schema must describe an object (type: object), it has type "array"`,
			`s.yaml:13:14: unknown key "strickt" in response_format.json_schema (did you mean "strict"? valid keys are: name, schema, strict)`,
		}},
		{"response_format without schema", base + "response_format: {json_schema: {name: a}}\n", nil, []string{
			`s.yaml:9:19: response_format.json_schema.schema is required`,
		}},
		{"response_format not a schema", base + "response_format: {json_schema: {schema: answer.json}}\n", nil, []string{
			`response_format.json_schema.schema must be a JSON Schema or file://PATH, got "answer.json"`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"s.yaml": c.src}
			for k, v := range c.files {
				files[k] = v
			}
			path := writeSpec(t, files)
			_, err := Load(path)
			ps, _ := err.(Problems)
			var got []string
			for _, p := range ps {
				got = append(got, strings.Replace(p.String(), path, "s.yaml", 1))
			}
			if len(got) != len(c.want) {
				t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], c.want[i]) {
					t.Errorf("problem %d:\n got %s\nwant %s", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestPromptMessages(t *testing.T) {
	src := strings.Replace(base, "  user: \"Q: {{.question}}\"\n", `  messages:
    - {role: system, content: "Be brief."}
    - {role: user, content: "Q: {{.question}}"}
    - {role: assistant, content: file://shot.txt}
  messages_field: history
`, 1)
	path := writeSpec(t, map[string]string{"s.yaml": src, "shot.txt": "A: 4"})
	sp, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m := sp.Prompt.Messages
	if len(m) != 3 || m[2].Content != "A: 4" || m[2].ContentFile != "shot.txt" || sp.Prompt.MessagesField != "history" {
		t.Fatalf("messages = %+v", sp.Prompt)
	}
	before := sp.PromptHash()
	sp.Prompt.Messages[1].Content = "Question: {{.question}}"
	if sp.PromptHash() == before {
		t.Error("a message template must be in the prompt hash")
	}

	bad := strings.Replace(base, "  user: \"Q: {{.question}}\"\n", `  user: "Q: {{.question}}"
  messages:
    - {role: human, content: hi}
    - {role: tool, content: "42"}
    - {role: user}
`, 1)
	_, ps := parse(t, bad)
	want := []string{
		`s.yaml:4:9: prompt.user cannot be used with prompt.messages (write the system and user messages as entries of prompt.messages, e.g. - {role: system, content: ...})`,
		`s.yaml:6:14: unknown role "human" (roles are system, user, assistant, tool)`,
		`s.yaml:7:7: prompt.messages[1] is a tool message: tool_call_id is required (the id of the assistant's call this result answers)`,
		`s.yaml:8:7: prompt.messages[2].content is required (the message's template, e.g. content: "Q: {{.question}}")`,
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A history field alone is a whole prompt.
	_, ps = parse(t, strings.Replace(base, "  user: \"Q: {{.question}}\"\n", "  messages_field: history\n", 1))
	if ps != nil {
		t.Errorf("messages_field alone: %v", ps)
	}
}
