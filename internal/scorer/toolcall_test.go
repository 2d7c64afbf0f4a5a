package scorer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// The tools of the recorded fixtures.
var fixtureTools = []spec.Tool{
	{Name: "get_weather", Parameters: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}, "units": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}`)},
	{Name: "search_flights", Parameters: json.RawMessage(`{"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "date": {"type": "string"}, "passengers": {"type": "integer"}}, "required": ["from", "to", "date"]}`)},
	{Name: "send_email", Parameters: json.RawMessage(`{"type": "object", "properties": {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "subject"]}`)},
}

// refTool is the test's own reading of a fixture tool's schema: required
// arguments and each argument's type ("string", "integer") or allowed values.
type refTool struct {
	required []string
	types    map[string]string
	enum     map[string][]string
}

var refTools = map[string]refTool{
	"get_weather":    {required: []string{"city"}, types: map[string]string{"city": "string"}, enum: map[string][]string{"units": {"celsius", "fahrenheit"}}},
	"search_flights": {required: []string{"from", "to", "date"}, types: map[string]string{"from": "string", "to": "string", "date": "string", "passengers": "integer"}},
	"send_email":     {required: []string{"to", "subject"}, types: map[string]string{"to": "string", "subject": "string", "body": "string"}},
}

type recorded struct {
	CaseID    string            `json:"case_id"`
	Expected  any               `json:"expected"`
	ToolCalls []record.ToolCall `json:"tool_calls"`
}

func readRecorded(t *testing.T, name string) []recorded {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tools", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []recorded
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber() // as the dataset reader keeps numbers
		var r recorded
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, r)
	}
	return out
}

func toolSpec(scs ...spec.Scorer) *spec.Spec {
	sp := newSpec(spec.Output{}, scs...)
	sp.Tools = fixtureTools
	return sp
}

func scoreCalls(t *testing.T, set *Set, id string, expected any, raw string, calls []record.ToolCall) record.Score {
	t.Helper()
	r := &record.Result{RunID: "run1", CaseID: id, Target: "t", Epoch: 1, Raw: raw, ToolCalls: calls}
	ss := set.Score(context.Background(), &dataset.Case{ID: id, Expected: expected}, r)
	if len(ss) != 1 {
		t.Fatalf("got %d scores, want 1", len(ss))
	}
	return ss[0]
}

// refDecode is the test's own argument reader: encoding/json (numbers as
// float64), a repeated key refused by walking the tokens, an object only.
func refDecode(s string) (map[string]any, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return map[string]any{}, true
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	// Flat objects only in the fixture: a repeated top-level key.
	dec := json.NewDecoder(strings.NewReader(s))
	seen := map[string]bool{}
	depth := 0
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch x := tok.(type) {
		case json.Delim:
			if x == '{' || x == '[' {
				depth++
			} else {
				depth--
			}
			expectKey = depth == 1 && x == '{'
			continue
		case string:
			if depth == 1 && expectKey {
				if seen[x] {
					return nil, false
				}
				seen[x] = true
				expectKey = false
				continue
			}
		}
		if depth == 1 {
			expectKey = true
		}
	}
	return m, true
}

// refValid checks arguments against the test's reading of the tool schema.
func refValid(name string, args map[string]any) bool {
	tl, ok := refTools[name]
	if !ok {
		return true
	}
	for _, k := range tl.required {
		if _, ok := args[k]; !ok {
			return false
		}
	}
	for k, v := range args {
		switch tl.types[k] {
		case "string":
			if _, ok := v.(string); !ok {
				return false
			}
		case "integer":
			f, ok := v.(float64)
			if !ok || f != math.Trunc(f) {
				return false
			}
		}
		if allowed, ok := tl.enum[k]; ok {
			s, _ := v.(string)
			if !slices.Contains(allowed, s) {
				return false
			}
		}
	}
	return true
}

// refEqual compares an argument as the test reads it: numbers by float
// value, strings exactly.
func refEqual(got, want any) bool {
	if n, ok := want.(json.Number); ok {
		f, _ := n.Float64()
		g, ok := got.(float64)
		return ok && g == f
	}
	return reflect.DeepEqual(got, want)
}

// A recorded tool-calling fixture with known answers: the tool_call
// scorer's tool-selection accuracy, per-argument accuracy, verdicts and
// kinds equal what the test computes on its own (encoding/json, its own
// schema reading), and the known counts.
func TestRecordedToolCalls(t *testing.T) {
	recs := readRecorded(t, "recorded.jsonl")
	set := mustCompile(t, toolSpec(spec.Scorer{Name: "call", Type: "tool_call"}))

	gotOK := map[string]int{} // per field: ok verdicts from the scorer
	refOK := map[string]int{} // per field: ok by the test's reckoning
	gotPass, refPass := 0, 0
	for _, rec := range recs {
		s := scoreCalls(t, set, rec.CaseID, rec.Expected, "", rec.ToolCalls)
		exp := rec.Expected.(map[string]any)
		name := exp["name"].(string)
		wantArgs := exp["arguments"].(map[string]any)

		// The test's own verdict.
		var kind, toolStatus string
		var argStatus map[string]string
		var mine []map[string]any
		others, valid := 0, true
		for _, c := range rec.ToolCalls {
			args, ok := refDecode(c.Arguments)
			if !ok || !refValid(c.Name, args) {
				valid = false
			}
			if c.Name == name {
				mine = append(mine, args)
			} else {
				others++
			}
		}
		switch {
		case len(rec.ToolCalls) == 0:
			toolStatus, kind = "missing", KindNoCall
		case len(mine) == 0 || others > 0:
			toolStatus = "wrong"
		default:
			toolStatus = "ok"
		}
		switch {
		case kind != "":
		case !valid:
			kind = KindInvalidArguments
		case toolStatus == "wrong":
			kind = KindWrongTool
		default:
			best := -1
			for _, args := range mine {
				st := map[string]string{}
				n := 0
				for k, w := range wantArgs {
					g, ok := args[k]
					switch {
					case !ok:
						st[k] = "missing"
					case refEqual(g, w):
						st[k] = "ok"
						n++
					default:
						st[k] = "wrong"
					}
				}
				if n > best {
					best, argStatus = n, st
				}
			}
			if best < len(wantArgs) {
				kind = KindWrong
			}
		}
		refOK[ToolField] += b2i(toolStatus == "ok")
		for k, st := range argStatus {
			refOK[k] += b2i(st == "ok")
		}
		refPass += b2i(kind == "")

		// The scorer's.
		if s.Kind != kind {
			t.Errorf("%s: kind %q (%s), the test reckons %q", rec.CaseID, s.Kind, s.Reason, kind)
		}
		gotPass += b2i(s.Pass)
		fields := map[string]string{}
		for _, f := range s.Fields {
			fields[f.Field] = f.Status
			gotOK[f.Field] += b2i(f.Status == "ok")
		}
		if fields[ToolField] != toolStatus {
			t.Errorf("%s: tool field %q, the test reckons %q (%s)", rec.CaseID, fields[ToolField], toolStatus, s.Reason)
		}
		for k, st := range argStatus {
			if fields[k] != st {
				t.Errorf("%s: argument %s %q, the test reckons %q (%s)", rec.CaseID, k, fields[k], st, s.Reason)
			}
		}
		// A call whose arguments were not compared lists the tool, then
		// every argument the case expects as unscored (so an argument's
		// rate counts it, and only the arguments this case expects).
		if argStatus == nil {
			if len(s.Fields) != 1+len(wantArgs) {
				t.Errorf("%s: %d fields; a call whose arguments were not compared has %s and the %d expected arguments: %+v", rec.CaseID, len(s.Fields), ToolField, len(wantArgs), s.Fields)
			}
			for k := range wantArgs {
				if fields[k] != "unscored" {
					t.Errorf("%s: argument %s %q; not compared, it is unscored", rec.CaseID, k, fields[k])
				}
			}
		}
	}
	if !reflect.DeepEqual(gotOK, refOK) || gotPass != refPass {
		t.Errorf("scorer: %d passed, ok per field %v; the test reckons %d, %v", gotPass, gotOK, refPass, refOK)
	}
	// The known answers, counted by hand from the fixture.
	known := map[string]int{ToolField: 13, "city": 2, "units": 1, "from": 1, "to": 4, "date": 2, "passengers": 2, "subject": 3}
	if !reflect.DeepEqual(gotOK, known) || gotPass != 5 || len(recs) != 16 {
		t.Errorf("over %d cases: %d passed, ok per field %v; want 16 cases, 5 passed, %v", len(recs), gotPass, gotOK, known)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// refF1 is the case's F1 by brute force: every assignment of expected calls
// to distinct calls (or to none), the largest number of matching pairs.
func refF1(want []any, calls []record.ToolCall) float64 {
	type exp struct {
		name string
		args map[string]any
	}
	var ws []exp
	for _, w := range want {
		if s, ok := w.(string); ok {
			ws = append(ws, exp{name: s})
			continue
		}
		m := w.(map[string]any)
		e := exp{name: m["name"].(string)}
		if a, ok := m["arguments"].(map[string]any); ok {
			e.args = a
		}
		ws = append(ws, e)
	}
	match := func(e exp, c record.ToolCall) bool {
		if e.name != c.Name {
			return false
		}
		args, ok := refDecode(c.Arguments)
		if !ok {
			return false
		}
		for k, w := range e.args {
			if g, ok := args[k]; !ok || !refEqual(g, w) {
				return false
			}
		}
		return true
	}
	used := make([]bool, len(calls))
	var best func(i int) int
	best = func(i int) int {
		if i == len(ws) {
			return 0
		}
		b := best(i + 1) // expected call i unmatched
		for j := range calls {
			if !used[j] && match(ws[i], calls[j]) {
				used[j] = true
				b = max(b, 1+best(i+1))
				used[j] = false
			}
		}
		return b
	}
	m := float64(best(0))
	switch {
	case len(ws) == 0 && len(calls) == 0:
		return 1
	case len(ws) == 0 || len(calls) == 0 || m == 0:
		return 0
	}
	p, r := m/float64(len(calls)), m/float64(len(ws))
	return 2 * p * r / (p + r)
}

// Sequences: each match rule's verdicts are the known ones, and every
// case's F1 (the value of a pass; in the reason always) equals the test's
// brute-force F1.
func TestRecordedToolCallSequences(t *testing.T) {
	recs := readRecorded(t, "sequences.jsonl")
	// Known verdicts per case, by rule: exact, in_order, any_order, subset.
	known := map[string][4]bool{
		"s1":  {true, true, true, true},
		"s2":  {false, false, true, true},
		"s3":  {false, true, false, true},
		"s4":  {false, false, false, false},
		"s5":  {false, true, false, true},
		"s6":  {false, false, true, true},
		"s7":  {true, true, true, true},
		"s8":  {false, false, false, false},
		"s9":  {false, false, false, false},
		"s10": {false, true, false, true},
	}
	knownKind := map[string]string{"s4": KindWrongTool, "s8": KindUnexpectedCall, "s9": KindNoCall}
	// Known (tools) verdicts, the rule over names alone, for exact and
	// subset.
	knownTools := map[string][2]string{
		"s1": {"ok", "ok"}, "s2": {"wrong", "ok"}, "s3": {"wrong", "ok"}, "s4": {"wrong", "wrong"}, "s5": {"wrong", "ok"},
		"s6": {"ok", "ok"}, "s7": {"ok", "ok"}, "s8": {"wrong", "wrong"}, "s9": {"missing", "missing"}, "s10": {"wrong", "ok"},
	}
	for r, rule := range MatchRules() {
		set := mustCompile(t, toolSpec(spec.Scorer{Name: "seq", Type: "tool_calls", Match: rule}))
		f1Sum, refSum := 0.0, 0.0
		for _, rec := range recs {
			s := scoreCalls(t, set, rec.CaseID, rec.Expected, "", rec.ToolCalls)
			if s.Pass != known[rec.CaseID][r] {
				t.Errorf("%s %s: pass %v (%s), want %v", rule, rec.CaseID, s.Pass, s.Reason, known[rec.CaseID][r])
			}
			if k, ok := knownKind[rec.CaseID]; ok && s.Kind != k {
				t.Errorf("%s %s: kind %q, want %q", rule, rec.CaseID, s.Kind, k)
			}
			if rule == MatchExact || rule == MatchSubset {
				w := knownTools[rec.CaseID][b2i(rule == MatchSubset)]
				if len(s.Fields) != 1 || s.Fields[0].Field != ToolsField || s.Fields[0].Status != w {
					t.Errorf("%s %s: fields %+v, want %s %s", rule, rec.CaseID, s.Fields, ToolsField, w)
				}
			}
			ref := refF1(rec.Expected.([]any), rec.ToolCalls)
			if !strings.Contains(s.Reason, "F1 "+fmt.Sprintf("%.2f", ref)) && rec.CaseID != "s9" && rec.CaseID != "s8" {
				t.Errorf("%s %s: reason %q, the test reckons F1 %.2f", rule, rec.CaseID, s.Reason, ref)
			}
			if s.Pass && math.Abs(s.Value-ref) > 1e-12 {
				t.Errorf("%s %s: value %v, the test reckons F1 %v", rule, rec.CaseID, s.Value, ref)
			}
			f1Sum += f1Of(t, s.Reason, s)
			refSum += ref
		}
		if math.Abs(f1Sum-refSum) > 0.011*float64(len(recs)) {
			t.Errorf("%s: F1 summed over cases %.3f, the test reckons %.3f", rule, f1Sum, refSum)
		}
	}
}

// f1Of reads the F1 a tool_calls reason gives (0 for a no_call or
// unexpected_call verdict, which gives none).
func f1Of(t *testing.T, reason string, s record.Score) float64 {
	t.Helper()
	_, after, ok := strings.Cut(reason, "F1 ")
	if !ok {
		if s.Kind == KindNoCall || s.Kind == KindUnexpectedCall {
			return 0
		}
		t.Fatalf("no F1 in %q", reason)
	}
	var f float64
	if _, err := fmt.Sscanf(after, "%f", &f); err != nil {
		t.Fatalf("F1 in %q: %v", reason, err)
	}
	return f
}

func calls(pairs ...string) []record.ToolCall {
	var out []record.ToolCall
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, record.ToolCall{Name: pairs[i], Arguments: pairs[i+1]})
	}
	return out
}

type toolCase struct {
	name     string
	expected any
	raw      string
	calls    []record.ToolCall
	tags     map[string]string
	pass     bool
	shape    string
	kind     string
	has      string
}

func runToolCases(t *testing.T, sp *spec.Spec, cases []toolCase) {
	t.Helper()
	set := mustCompile(t, sp)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &record.Result{RunID: "r", CaseID: "c", Target: "t", Epoch: 1, Raw: tc.raw, ToolCalls: tc.calls, FinishReason: "stop"}
			s := set.Score(context.Background(), &dataset.Case{ID: "c", Expected: tc.expected, Tags: tc.tags}, r)[0]
			if s.Pass != tc.pass || s.Shape != tc.shape || s.Kind != tc.kind {
				t.Errorf("pass %v shape %s kind %q (%s); want %v %s %q", s.Pass, s.Shape, s.Kind, s.Reason, tc.pass, tc.shape, tc.kind)
			}
			if tc.has != "" && !strings.Contains(s.Reason, tc.has) {
				t.Errorf("reason %q lacks %q", s.Reason, tc.has)
			}
		})
	}
}

func TestToolCallShapes(t *testing.T) {
	weather := map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "Paris"}}
	runToolCases(t, toolSpec(spec.Scorer{Type: "tool_call", Normalize: []string{"lower"}}), []toolCase{
		{name: "right call, no text", expected: weather, calls: calls("get_weather", `{"city":"PARIS"}`), pass: true, shape: ShapePass},
		{name: "text and no call", expected: weather, raw: "It is sunny in Paris.", shape: ShapeLoud, kind: KindNoCall},
		{name: "refusal and no call", expected: weather, raw: "I'm sorry, but I can't help with that.", shape: ShapeLoud, kind: KindRefusal},
		{name: "refusal wording beside a call", expected: weather, raw: "I'm sorry, but I can't help with that.", calls: calls("get_weather", `{"city":"Paris"}`), pass: true, shape: ShapePass},
		{name: "should refuse and called", expected: weather, tags: map[string]string{BucketTag: BucketShouldRefuse}, calls: calls("get_weather", `{"city":"Paris"}`), shape: ShapeSilent, kind: KindComplied},
		{name: "invalid JSON", expected: weather, calls: calls("get_weather", `{"city":`), shape: ShapeLoud, kind: KindInvalidArguments, has: "not valid JSON"},
		{name: "wrong tool invalid JSON", expected: weather, calls: calls("send_email", `{to:`), shape: ShapeLoud, kind: KindInvalidArguments},
		{name: "schema: required missing", expected: weather, calls: calls("get_weather", `{"units":"celsius"}`), shape: ShapeLoud, kind: KindInvalidArguments, has: "city"},
		{name: "schema: enum", expected: weather, calls: calls("get_weather", `{"city":"Paris","units":"kelvin"}`), shape: ShapeLoud, kind: KindInvalidArguments, has: "units"},
		{name: "wrong city", expected: weather, calls: calls("get_weather", `{"city":"Lyon"}`), shape: ShapeSilent, kind: KindWrong, has: `city wrong (got "Lyon", expected "Paris")`},
		{name: "wrong tool", expected: weather, calls: calls("send_email", `{"to":"a","subject":"b"}`), shape: ShapeSilent, kind: KindWrongTool, has: "expected get_weather"},
		{name: "extra tool", expected: weather, calls: calls("get_weather", `{"city":"Paris"}`, "send_email", `{"to":"a","subject":"b"}`), shape: ShapeSilent, kind: KindWrongTool, has: "also send_email"},
		{name: "name only", expected: "get_weather", calls: calls("get_weather", `{"city":"Nowhere"}`), pass: true, shape: ShapePass, has: "not compared"},
		{name: "arguments as JSON text", expected: map[string]any{"name": "get_weather", "arguments": `{"city": "paris"}`}, calls: calls("get_weather", `{"city":"Paris"}`), pass: true, shape: ShapePass},
		{name: "blank arguments are {}", expected: map[string]any{"name": "get_weather", "arguments": map[string]any{}}, calls: calls("get_weather", ``), shape: ShapeLoud, kind: KindInvalidArguments, has: "city"},
		{name: "no expected value", expected: nil, calls: calls("get_weather", `{}`), shape: ShapeLoud, kind: KindScorerError, has: "no expected value"},
		{name: "expected without name", expected: map[string]any{"arguments": map[string]any{}}, calls: calls("get_weather", `{}`), shape: ShapeLoud, kind: KindScorerError, has: "no tool name"},
		{name: "expected with a stray key", expected: map[string]any{"name": "x", "args": map[string]any{}}, calls: calls("x", `{}`), shape: ShapeLoud, kind: KindScorerError, has: `"args"`},
		{name: "expected arguments null", expected: map[string]any{"name": "x", "arguments": nil}, calls: calls("x", `{}`), shape: ShapeLoud, kind: KindScorerError},
		{name: "expected a number", expected: json.Number("3"), calls: calls("x", `{}`), shape: ShapeLoud, kind: KindScorerError},
		{name: "expected tool not offered", expected: "get_wether", calls: calls("get_weather", `{"city":"Paris"}`), shape: ShapeLoud, kind: KindScorerError, has: `"get_wether" is not among the spec's tools (get_weather, search_flights, send_email)`},
		{name: "expected call as JSON text", expected: `{"name": "get_weather", "arguments": {"city": "paris"}}`, calls: calls("get_weather", `{"city":"Paris"}`), pass: true, shape: ShapePass},
		{name: "expected call as bad JSON text", expected: `{"name": "get_weather"`, calls: calls("get_weather", `{"city":"Paris"}`), shape: ShapeLoud, kind: KindScorerError, has: "looks like JSON"},
		// A list of one call is that call (one expected field for tool_call
		// and tool_calls); a longer list is a sequence tool_call cannot judge.
		{name: "a list of one call", expected: []any{weather}, calls: calls("get_weather", `{"city":"paris"}`), pass: true, shape: ShapePass},
		{name: "a list of one call, wrong city", expected: []any{weather}, calls: calls("get_weather", `{"city":"Lyon"}`), shape: ShapeSilent, kind: KindWrong},
		{name: "a list of one call as JSON text", expected: `[{"name": "get_weather", "arguments": {"city": "Paris"}}]`, calls: calls("get_weather", `{"city":"Paris"}`), pass: true, shape: ShapePass},
		{name: "a list of two calls", expected: []any{weather, "send_email"}, calls: calls("get_weather", `{"city":"Paris"}`), shape: ShapeLoud, kind: KindScorerError, has: "use tool_calls for a sequence"},
		{name: "an empty list", expected: []any{}, calls: calls("get_weather", `{"city":"Paris"}`), shape: ShapeLoud, kind: KindScorerError, has: "lists 0"},
	})
}

// tool: fixes the tool; the expected value is then the arguments, and the
// typed comparisons are field_equals's: numbers by value, tolerance.
func TestToolCallFixedTool(t *testing.T) {
	sp := toolSpec(spec.Scorer{Type: "tool_call", Tool: "search_flights", Fields: []string{"to", "passengers"}, Tolerance: 0})
	args := map[string]any{"from": "SFO", "to": "JFK", "passengers": json.Number("2")}
	runToolCases(t, sp, []toolCase{
		{name: "2.0 is 2", expected: args, calls: calls("search_flights", `{"from":"X","to":"JFK","date":"d","passengers":2.0}`), pass: true, shape: ShapePass},
		{name: "2e0 is 2", expected: args, calls: calls("search_flights", `{"from":"X","to":"JFK","date":"d","passengers":2e0}`), pass: true, shape: ShapePass},
		{name: "3 is not 2", expected: args, calls: calls("search_flights", `{"from":"X","to":"JFK","date":"d","passengers":3}`), shape: ShapeSilent, kind: KindWrong, has: "passengers wrong"},
		{name: "missing optional is silent", expected: args, calls: calls("search_flights", `{"from":"X","to":"JFK","date":"d"}`), shape: ShapeSilent, kind: KindWrong, has: "passengers missing"},
		{name: "no expected arguments", expected: nil, calls: calls("search_flights", `{"from":"X","to":"JFK","date":"d"}`), shape: ShapeLoud, kind: KindScorerError, has: "gives no arguments"},
		{name: "expected not an object", expected: "search_flights", calls: calls("search_flights", `{}`), shape: ShapeLoud, kind: KindScorerError, has: "arguments (an object)"},
		{name: "expected lacks a field", expected: map[string]any{"to": "JFK"}, calls: calls("search_flights", `{"from":"X","to":"JFK","date":"d"}`), shape: ShapeLoud, kind: KindScorerError, has: "passengers"},
		{name: "arguments as JSON text", expected: `{"to": "JFK", "passengers": 2}`, calls: calls("search_flights", `{"from":"X","to":"JFK","date":"d","passengers":2}`), pass: true, shape: ShapePass},
	})
	tol := toolSpec(spec.Scorer{Type: "tool_call", Tool: "search_flights", Fields: []string{"passengers"}, Tolerance: 1})
	runToolCases(t, tol, []toolCase{
		{name: "within tolerance", expected: args, calls: calls("search_flights", `{"from":"X","to":"JFK","date":"d","passengers":3}`), pass: true, shape: ShapePass},
	})
	// The value and per-field verdicts of a partly right call.
	set := mustCompile(t, toolSpec(spec.Scorer{Type: "tool_call", Tool: "search_flights"}))
	s := scoreCalls(t, set, "c", args, "", calls("search_flights", `{"from":"SFO","to":"EWR","date":"d","passengers":2}`))
	wantFields := []record.FieldVerdict{{Field: ToolField, Status: "ok"}, {Field: "from", Status: "ok"}, {Field: "passengers", Status: "ok"}, {Field: "to", Status: "wrong"}}
	if !reflect.DeepEqual(s.Fields, wantFields) || s.Value != 0.75 {
		t.Errorf("fields %+v value %v; want %+v, 0.75", s.Fields, s.Value, wantFields)
	}
}

// The scorer's schema: checks the arguments on top of the declared
// parameters.
func TestToolCallSchema(t *testing.T) {
	sp := toolSpec(spec.Scorer{Type: "tool_call", Tool: "get_weather", Schema: map[string]any{"type": "object", "required": []any{"units"}}})
	runToolCases(t, sp, []toolCase{
		{name: "schema passes", calls: calls("get_weather", `{"city":"Oslo","units":"celsius"}`), pass: true, shape: ShapePass},
		{name: "schema fails", calls: calls("get_weather", `{"city":"Oslo"}`), shape: ShapeLoud, kind: KindInvalidArguments, has: "scorer's schema"},
	})
}

func TestNoToolCall(t *testing.T) {
	runToolCases(t, toolSpec(spec.Scorer{Type: "no_tool_call"}), []toolCase{
		{name: "text only", raw: "Hello.", pass: true, shape: ShapePass},
		{name: "a call", raw: "Sure.", calls: calls("get_weather", `{"city":"Oslo"}`), shape: ShapeSilent, kind: KindUnexpectedCall, has: "get_weather"},
		{name: "an invalid call", calls: calls("get_weather", `{`), shape: ShapeSilent, kind: KindUnexpectedCall},
		{name: "nothing at all", raw: "", shape: ShapeLoud, kind: KindEmpty},
	})
	runToolCases(t, toolSpec(spec.Scorer{Type: "no_tool_call", AllowEmpty: true}), []toolCase{
		{name: "nothing, allowed", raw: "", pass: true, shape: ShapePass},
	})
}

func TestToolCallsShapes(t *testing.T) {
	seq := []any{"get_weather", map[string]any{"name": "send_email", "arguments": map[string]any{"to": "a@x"}}}
	runToolCases(t, toolSpec(spec.Scorer{Type: "tool_calls", Match: MatchExact}), []toolCase{
		{name: "exact", expected: seq, calls: calls("get_weather", `{"city":"Oslo"}`, "send_email", `{"to":"a@x","subject":"s"}`), pass: true, shape: ShapePass},
		{name: "invalid arguments", expected: seq, calls: calls("get_weather", `{"city":"Oslo"}`, "send_email", `{"to":"a@x","subject":"s"`), shape: ShapeLoud, kind: KindInvalidArguments},
		{name: "against declared parameters", expected: seq, calls: calls("get_weather", `{}`, "send_email", `{"to":"a@x","subject":"s"}`), shape: ShapeLoud, kind: KindInvalidArguments},
		{name: "wrong argument", expected: seq, calls: calls("get_weather", `{"city":"Oslo"}`, "send_email", `{"to":"b@x","subject":"s"}`), shape: ShapeSilent, kind: KindWrong, has: "F1 0.50"},
		{name: "a tool not expected", expected: seq, calls: calls("get_weather", `{"city":"Oslo"}`, "search_flights", `{"from":"a","to":"b","date":"c"}`), shape: ShapeSilent, kind: KindWrongTool},
		{name: "not a list", expected: "get_weather", calls: calls("get_weather", `{"city":"Oslo"}`), shape: ShapeLoud, kind: KindScorerError, has: "list of calls"},
		{name: "a list as JSON text", expected: `["get_weather", {"name": "send_email", "arguments": {"to": "a@x"}}]`, calls: calls("get_weather", `{"city":"Oslo"}`, "send_email", `{"to":"a@x","subject":"s"}`), pass: true, shape: ShapePass},
		{name: "bad item", expected: []any{json.Number("1")}, calls: calls("get_weather", `{"city":"Oslo"}`), shape: ShapeLoud, kind: KindScorerError, has: "expected call 1"},
		{name: "a tool not offered", expected: []any{"get_weather", "book"}, calls: calls("get_weather", `{"city":"Oslo"}`), shape: ShapeLoud, kind: KindScorerError, has: `"book" is not among`},
	})
}

func TestToolScorerProblems(t *testing.T) {
	for _, tc := range []struct {
		sc  spec.Scorer
		has string
	}{
		{spec.Scorer{Type: "tool_calls"}, "needs match"},
		{spec.Scorer{Type: "tool_calls", Match: "inorder"}, "did you mean in_order"},
		{spec.Scorer{Type: "tool_call", Tool: "nope"}, `tool "nope" is not among the spec's tools`},
		{spec.Scorer{Type: "tool_call", Field: "city"}, "field does not apply"},
		{spec.Scorer{Type: "tool_call", Match: "exact"}, "match does not apply"},
		{spec.Scorer{Type: "tool_calls", Match: "exact", Tool: "x"}, "tool does not apply"},
		{spec.Scorer{Type: "no_tool_call", Fields: []string{"a"}}, "fields does not apply"},
		{spec.Scorer{Type: "tool_call", Schema: "not a schema"}, "schema does not compile"},
		{spec.Scorer{Type: "tool_call", Fields: []string{"a..b"}}, "empty segment"},
	} {
		_, probs := Compile(toolSpec(tc.sc))
		if !strings.Contains(probs.Error(), tc.has) {
			t.Errorf("%+v: problems %v, want one saying %q", tc.sc, probs, tc.has)
		}
	}
	sp := toolSpec(spec.Scorer{Type: "tool_call"})
	sp.Tools = []spec.Tool{{Name: "broken", Parameters: json.RawMessage(`{"type": 7}`)}}
	if _, probs := Compile(sp); !strings.Contains(probs.Error(), `parameters of tool "broken" do not compile`) {
		t.Errorf("a tool whose parameters do not compile: %v", probs)
	}
	sp.Tools = []spec.Tool{{Name: "reffer", Parameters: json.RawMessage(`{"$ref": "file:///etc/passwd"}`)}}
	if _, probs := Compile(sp); !strings.Contains(probs.Error(), "may not refer to file:///etc/passwd") {
		t.Errorf("a tool whose parameters refer to a file: %v", probs)
	}
	if _, probs := Compile(toolSpec(spec.Scorer{Type: "tool_call"}, spec.Scorer{Name: "b", Type: "tool_calls", Match: "subset"})); len(probs) > 0 {
		t.Errorf("two tool scorers: %v", probs)
	}
}

// CEL reads tool_calls: arguments parsed when valid, the text otherwise;
// a reply with calls and no text is judged.
func TestCELToolCalls(t *testing.T) {
	sp := newSpec(spec.Output{Format: "json"}, spec.Scorer{Type: "cel", Expr: `size(tool_calls) == 2 && tool_calls[0].name == "get_weather" && tool_calls[0].arguments.city == "Oslo" && tool_calls[0].arguments.days == 3 && tool_calls[1].arguments == "{oops" && tool_calls[1].id == "c2"`})
	set := mustCompile(t, sp)
	r := &record.Result{CaseID: "c", ToolCalls: []record.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city": "Oslo", "days": 3.0}`}, {ID: "c2", Name: "x", Arguments: "{oops"}}}
	if s := set.Score(context.Background(), &dataset.Case{ID: "c"}, r)[0]; !s.Pass {
		t.Errorf("CEL over tool calls: %s %s", s.Kind, s.Reason)
	}
	r = &record.Result{CaseID: "c"}
	if s := set.Score(context.Background(), &dataset.Case{ID: "c"}, r)[0]; s.Pass || s.Kind != KindEmpty {
		t.Errorf("CEL with neither text nor calls: %v %s, want loud empty", s.Pass, s.Kind)
	}
}

// CallChance is a correct grader: right calls with the expected arguments
// pass; without expected arguments nothing passes.
func TestCallChance(t *testing.T) {
	right := calls("get_weather", `{"city":"Paris"}`)
	exp := map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "Paris"}}
	tc := CallChance(&spec.Scorer{Type: "tool_call"})
	if !tc(right, exp) || tc(calls("get_weather", `{}`), exp) || tc(right, "get_weather") || tc(nil, exp) {
		t.Error("tool_call chance")
	}
	fixed := CallChance(&spec.Scorer{Type: "tool_call", Tool: "get_weather"})
	if fixed(right, nil) || !fixed(right, map[string]any{"city": "Paris"}) {
		t.Error("tool_call with tool: chance")
	}
	seq := CallChance(&spec.Scorer{Type: "tool_calls", Match: MatchSubset})
	if !seq(right, []any{exp}) || seq(right, []any{"get_weather"}) || !seq(nil, []any{}) {
		t.Error("tool_calls chance")
	}
	if no := CallChance(&spec.Scorer{Type: "no_tool_call"}); !no(nil, "x") || no(right, nil) {
		t.Error("no_tool_call chance")
	}
	if CallChance(&spec.Scorer{Type: "equals"}) != nil {
		t.Error("equals has no call chance")
	}
	if got := ExpectedTools(&spec.Scorer{Type: "tool_calls"}, []any{"a", map[string]any{"name": "b"}}); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("ExpectedTools %v", got)
	}
}

// badArguments are the fixture's arguments as models have written them
// wrongly, each with what the error must say and why it is bad.
func badArguments(t testing.TB) []struct{ Arguments, Error, Why string } {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tools", "bad_arguments.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []struct{ Arguments, Error, Why string }
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var x struct{ Arguments, Error, Why string }
		if err := json.Unmarshal([]byte(line), &x); err != nil {
			t.Fatalf("bad_arguments.jsonl: %v", err)
		}
		out = append(out, x)
	}
	return out
}

// Bad arguments, as models write them, are errors that say what was wrong;
// none is repaired, and every tool scorer fails them loud.
func TestParseArgumentsBadInput(t *testing.T) {
	bad := badArguments(t)
	if len(bad) < 10 {
		t.Fatalf("%d bad-argument fixtures", len(bad))
	}
	set := mustCompile(t, newSpec(spec.Output{}, spec.Scorer{Type: "tool_call", Tool: "t"}))
	seq := mustCompile(t, newSpec(spec.Output{}, spec.Scorer{Type: "tool_calls", Match: MatchSubset}))
	for _, tc := range bad {
		_, err := ParseArguments(tc.Arguments)
		if err == nil || !strings.Contains(err.Error(), tc.Error) {
			t.Errorf("%s: ParseArguments(%q) = %v, want an error saying %q", tc.Why, tc.Arguments, err, tc.Error)
		}
		c := []record.ToolCall{{Name: "t", Arguments: tc.Arguments}}
		if s := scoreCalls(t, set, "c", nil, "", c); s.Kind != KindInvalidArguments || s.Shape != ShapeLoud {
			t.Errorf("%s: tool_call %s %s (%s), want loud invalid_arguments", tc.Why, s.Shape, s.Kind, s.Reason)
		}
		if s := scoreCalls(t, seq, "c", []any{"t"}, "", c); s.Kind != KindInvalidArguments {
			t.Errorf("%s: tool_calls %s (%s), want invalid_arguments", tc.Why, s.Kind, s.Reason)
		}
	}
	for _, ok := range []string{"", "  \n", "{}", ` {"a": [1, {"b": null}], "c": 1e400} `} {
		if _, err := ParseArguments(ok); err != nil {
			t.Errorf("ParseArguments(%q): %v", ok, err)
		}
	}
}

// FuzzParseArguments: any text either parses to an object that is valid
// JSON with no repeated key, or is refused; never a panic; a tool scorer
// given it as arguments never panics and never passes what does not parse.
func FuzzParseArguments(f *testing.F) {
	for _, s := range []string{"", "{}", `{"city":"Paris"}`, `{"a":{"b":[1,2,{"c":null}]}}`, `{"n": 1.50e3}`, `{"a":"\ud800"}`} {
		f.Add(s)
	}
	for _, b := range badArguments(f) {
		f.Add(b.Arguments)
	}
	one, probs := Compile(newSpec(spec.Output{}, spec.Scorer{Type: "tool_call", Tool: "t"}, spec.Scorer{Name: "c", Type: "cel", Expr: "size(tool_calls) == 1"}))
	seq, probs2 := Compile(newSpec(spec.Output{}, spec.Scorer{Name: "seq", Type: "tool_calls", Match: "exact"}))
	if len(probs) > 0 || len(probs2) > 0 {
		f.Fatal(probs, probs2)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseArguments(s)
		if err == nil {
			if m == nil {
				t.Fatal("nil object without an error")
			}
			if strings.TrimSpace(s) != "" && !json.Valid([]byte(s)) {
				t.Fatalf("%q is not JSON but parsed", s)
			}
		}
		for _, set := range []*Set{one, seq} {
			var exp any
			if set == seq {
				exp = []any{"t"}
			}
			r := &record.Result{CaseID: "c", ToolCalls: []record.ToolCall{{Name: "t", Arguments: s}}}
			for _, sc := range set.Score(context.Background(), &dataset.Case{ID: "c", Expected: exp}, r) {
				if sc.Scorer != "c" && sc.Pass != (err == nil) {
					t.Fatalf("%s pass %v on %q (parse error %v): %s", sc.Scorer, sc.Pass, s, err, sc.Reason)
				}
				if sc.Scorer == "c" && !sc.Pass {
					t.Fatalf("cel over one call failed on %q: %s", s, sc.Reason)
				}
			}
		}
	})
}

// FuzzToolCallsRules: on any small pair of expected and made sequences, the
// matching is the largest (brute force), the rules nest as they must
// (exact passes only with in_order and any_order; each of those only with
// subset), subset passes exactly when every expected call is matched, and
// F1 is the brute-force one.
func FuzzToolCallsRules(f *testing.F) {
	f.Add([]byte{0x01, 0x12, 0x80, 0x01, 0x12})
	f.Add([]byte{0x03, 0x00, 0x10, 0x21, 0x80, 0x21, 0x10, 0x00})
	f.Add([]byte{0x80})
	sets := map[string]*Set{}
	for _, rule := range MatchRules() {
		set, probs := Compile(newSpec(spec.Output{}, spec.Scorer{Type: "tool_calls", Match: rule}))
		if len(probs) > 0 {
			f.Fatal(probs)
		}
		sets[rule] = set
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Each byte below 0x80 is a call: tool a|b|c (low bits), argument
		// x absent or 0..3 (next bits); 0x80 switches from expected to made.
		var want []any
		var made []record.ToolCall
		side := 0
		for _, c := range b {
			if c&0x80 != 0 {
				side++
				continue
			}
			name := string(rune('a' + int(c)%3))
			x := int(c/3) % 5 // 4: no argument
			switch side {
			case 0:
				if len(want) < 6 {
					if x == 4 {
						want = append(want, name)
					} else {
						want = append(want, map[string]any{"name": name, "arguments": map[string]any{"x": json.Number(fmt.Sprint(x))}})
					}
				}
			case 1:
				if len(made) < 6 {
					args := "{}"
					if x != 4 {
						args = fmt.Sprintf(`{"x": %d}`, x)
					}
					made = append(made, record.ToolCall{Name: name, Arguments: args})
				}
			}
		}
		if want == nil {
			want = []any{}
		}
		got := map[string]record.Score{}
		for rule, set := range sets {
			got[rule] = scoreCalls(t, set, "c", want, "text", made)
		}
		ex, io, ao, sub := got[MatchExact].Pass, got[MatchInOrder].Pass, got[MatchAnyOrder].Pass, got[MatchSubset].Pass
		if ex && !(io && ao) || io && !sub || ao && !sub {
			t.Fatalf("rules do not nest: exact %v in_order %v any_order %v subset %v (want %v, made %v)", ex, io, ao, sub, want, made)
		}
		ref := refF1(want, made)
		// subset passes exactly when recall is 1.
		recallOne := refMatched(want, made) == len(want)
		if len(want) == 0 {
			recallOne = len(made) == 0 // nothing expected: any call is unexpected
		}
		if sub != recallOne {
			t.Fatalf("subset %v, but every expected call matched is %v (want %v, made %v): %s", sub, recallOne, want, made, got[MatchSubset].Reason)
		}
		for rule, s := range got {
			if s.Pass && math.Abs(s.Value-ref) > 1e-12 {
				t.Fatalf("%s value %v, brute-force F1 %v", rule, s.Value, ref)
			}
			if !s.Pass && s.Kind != KindNoCall && s.Kind != KindUnexpectedCall && !strings.Contains(s.Reason, fmt.Sprintf("F1 %.2f", ref)) {
				t.Fatalf("%s reason %q, brute-force F1 %.2f", rule, s.Reason, ref)
			}
		}
	})
}

// refMatched is the brute-force matching size refF1 uses.
func refMatched(want []any, calls []record.ToolCall) int {
	f1 := refF1(want, calls)
	// F1 = 2m/(|want|+|calls|).
	return int(math.Round(f1 * float64(len(want)+len(calls)) / 2))
}

// A reason is the same on every scoring of the same calls: the schema's
// violations (which the validator reports in map order) are sorted.
func TestToolCallReasonsAreStable(t *testing.T) {
	sp := toolSpec(spec.Scorer{Type: "tool_call", Tool: "search_flights"})
	sp.Tools = []spec.Tool{{Name: "search_flights", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"},"e":{"type":"integer"}},"required":["x","y"]}`)}}
	want := "call 1 (search_flights): 6 violation(s) of tool search_flights's parameters: at /: missing properties 'x', 'y'; at /a: got number, want string; at /b: got number, want string; at /c: got number, want string; at /d: got number, want string; at /e: got string, want integer"
	for range 50 {
		s := scoreCalls(t, mustCompile(t, sp), "c", nil, "", calls("search_flights", `{"a":1,"b":2,"c":3,"d":4,"e":"x"}`))
		if s.Reason != want {
			t.Fatalf("reason %q\nwant   %q", s.Reason, want)
		}
	}
}
