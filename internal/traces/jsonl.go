package traces

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/lines"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// MaxJSONLLine bounds one line of a JSONL log (a trace with its whole
// conversation).
const MaxJSONLLine = 16 << 20

// JSONL maps the lines of a JSONL log into traces by a spec's traces:
// section. Each line is one JSON object; the mapping's dotted paths pick
// its fields (a number indexes a list).
type JSONL struct {
	m    *spec.Traces
	file string // shown in problems
	// Source is the traces' source, "jsonl:<file name>".
	source string
	paths  map[string][]string // mapping key → path parts
	attrs  []string            // attribute names, sorted
	// top are the line's top-level fields a mapping path starts with: not
	// copied into the attributes again.
	top map[string]bool
	// checkOnly: Check is reading, the traces are not wanted.
	checkOnly bool
	// MaxLine bounds a line (MaxJSONLLine unless set).
	MaxLine int
	// Now is the time a trace without a mapped time gets, and its Received
	// (time.Now when nil).
	Now func() time.Time
}

// NewJSONL reads file (a path, shown in problems) by the mapping m. It
// returns m's ingest problems (no input or output path) as an error.
func NewJSONL(m *spec.Traces, file string) (*JSONL, error) {
	if m == nil || m.Input == "" || m.Output == "" {
		return nil, errors.New("traces.input and traces.output are required to ingest JSONL")
	}
	j := &JSONL{m: m, file: file, source: "jsonl:" + filepath.Base(file), paths: map[string][]string{}, top: map[string]bool{}, MaxLine: MaxJSONLLine}
	for _, f := range m.MappingPaths() {
		if f.Path == "" {
			continue
		}
		if flaw := spec.TracePathFlaw(f.Path); flaw != "" {
			return nil, fmt.Errorf("traces.%s %s", f.Key, flaw)
		}
		j.paths[f.Key] = strings.Split(f.Path, ".")
		j.top[j.paths[f.Key][0]] = true
	}
	for name, p := range m.Attributes {
		if flaw := spec.TracePathFlaw(p); flaw != "" {
			return nil, fmt.Errorf("traces.attributes.%s %s", name, flaw)
		}
		j.attrs = append(j.attrs, name)
		j.top[strings.SplitN(p, ".", 2)[0]] = true
	}
	sort.Strings(j.attrs)
	return j, nil
}

// JSONLCount is what reading a file found.
type JSONLCount struct {
	Lines int // lines holding a JSON value (blank lines are not counted)
	Bad   int // lines that are not a trace
}

// Read reads r line by line in constant memory: good is called with each
// line's trace (valid only during the call), bad with each bad line's
// problem. Either returning an error stops the read with it; a read error
// is returned too.
func (j *JSONL) Read(r io.Reader, good func(*record.Trace) error, bad func(spec.Problem) error) (JSONLCount, error) {
	var n JSONLCount
	err := lines.Each(r, j.file, j.MaxLine, func(l lines.Line) error {
		if l.TooLong {
			n.Lines++
			n.Bad++
			return bad(spec.Problem{File: j.file, Line: l.No, Col: 1,
				Msg:  "the line is longer than " + sizeText(j.MaxLine),
				Hint: "one trace per line, each at most " + sizeText(j.MaxLine)})
		}
		if len(bytes.TrimSpace(l.Body)) == 0 {
			return nil
		}
		n.Lines++
		shift := 0
		if l.No == 1 && l.Off == 3 {
			shift = 3 // the byte-order mark lines.Each dropped
		}
		t, p := j.Line(l.No, l.Body)
		if p != nil {
			n.Bad++
			p.Col += shift
			return bad(*p)
		}
		return good(t)
	})
	return n, err
}

// Check reads r as Read does, for its bad lines only: the lines are
// checked as Read checks them, but no trace is made (the messages are not
// converted, the attributes not built), which is what a pass that stores
// nothing needs. It is not safe to call at the same time as Read.
func (j *JSONL) Check(r io.Reader, bad func(spec.Problem) error) (JSONLCount, error) {
	j.checkOnly = true
	defer func() { j.checkOnly = false }()
	return j.Read(r, func(*record.Trace) error { return nil }, bad)
}

// lineErr is a problem in one line at a byte offset of it.
type lineErr struct {
	off  int
	msg  string
	hint string
}

func (j *JSONL) problem(no int, e *lineErr) *spec.Problem {
	return &spec.Problem{File: j.file, Line: no, Col: e.off + 1, Msg: e.msg, Hint: e.hint}
}

// Line maps one line (its number and bytes, without the line end) into a
// trace, or says what is wrong with it at LINE:COL.
func (j *JSONL) Line(no int, body []byte) (*record.Trace, *spec.Problem) {
	if !json.Valid(body) {
		var v json.RawMessage
		err := json.Unmarshal(body, &v)
		var se *json.SyntaxError
		off := 0
		msg := "the line is not valid JSON"
		if errors.As(err, &se) {
			off = int(se.Offset)
			if off > 0 {
				off-- // the offset is after the byte that broke it
			}
			msg += ": " + se.Error()
		}
		return nil, j.problem(no, &lineErr{off: off, msg: msg, hint: "each line must be one JSON object"})
	}
	root := skipWS(body, 0)
	if body[root] != '{' {
		return nil, j.problem(no, &lineErr{off: root, msg: "the line is " + kindOf(body[root:]) + ", not a JSON object", hint: "each line must be one JSON object"})
	}
	if e := repeatedKey(body, root); e != nil {
		return nil, j.problem(no, e)
	}
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	received := now().UTC()
	t := &record.Trace{Source: j.source, Received: received, Time: received}
	if e := j.fill(t, body, root); e != nil {
		return nil, j.problem(no, e)
	}
	if t.ID == "" {
		sum := sha256.Sum256(body)
		t.ID = "sha256:" + hex.EncodeToString(sum[:])
	}
	t.TraceID = t.ID
	return t, nil
}

// field finds a mapped field: its value's bytes and offset, nil when the
// line has no such field (or it is null).
func (j *JSONL) field(body []byte, root int, key string) ([]byte, int, *lineErr) {
	parts := j.paths[key]
	if parts == nil {
		return nil, 0, nil
	}
	start, end, e := lookup(body, root, parts)
	if e != nil {
		e.msg = fmt.Sprintf("traces.%s (%s): %s", key, strconv.Quote(strings.Join(parts, ".")), e.msg)
		return nil, 0, e
	}
	if start < 0 || string(body[start:end]) == "null" {
		return nil, 0, nil
	}
	return body[start:end], start, nil
}

// fill sets t's fields from the line.
func (j *JSONL) fill(t *record.Trace, body []byte, root int) *lineErr {
	wrong := func(key string, off int, want string, got []byte) *lineErr {
		return &lineErr{off: off, msg: fmt.Sprintf("traces.%s (%s) must be %s, got %s", key, strconv.Quote(j.pathOf(key)), want, describe(got))}
	}
	missing := func(key string) *lineErr {
		needed := "traces.input and traces.output"
		if j.paths["id"] != nil {
			needed = "traces.id, traces.input and traces.output"
		}
		return &lineErr{off: root, msg: fmt.Sprintf("the line has no %s (traces.%s)", strconv.Quote(j.pathOf(key)), key),
			hint: "every line needs the fields that " + needed + " name"}
	}
	get := func(key string) ([]byte, int, *lineErr) { return j.field(body, root, key) }

	// id
	raw, off, e := get("id")
	if e != nil {
		return e
	}
	if j.paths["id"] != nil {
		switch {
		case raw == nil:
			return missing("id")
		case raw[0] == '"':
			t.ID = unquote(raw)
		case isNumberStart(raw[0]):
			t.ID = string(raw)
		default:
			return wrong("id", off, "a string or a number", raw)
		}
		if t.ID == "" || len(t.ID) > 512 {
			return wrong("id", off, "a non-empty string of at most 512 bytes", raw)
		}
	}
	// conversation
	for _, k := range []string{"input", "output"} {
		raw, off, e := get(k)
		if e != nil {
			return e
		}
		if raw == nil {
			return missing(k)
		}
		role := "user"
		if k == "output" {
			role = "assistant"
		}
		ms, finish, e := messagesOf(raw, off, role, j.checkOnly)
		if e != nil {
			e.msg = fmt.Sprintf("traces.%s (%s): %s", k, strconv.Quote(j.pathOf(k)), e.msg)
			return e
		}
		if k == "input" {
			t.Input = ms
		} else {
			t.Output = ms
			t.FinishReason = finish
		}
	}
	if raw, off, e := get("system"); e != nil {
		return e
	} else if raw != nil {
		s, ok := systemOf(raw)
		if !ok {
			return wrong("system", off, "a string or a list of text parts", raw)
		}
		t.System = s
	} else {
		// A leading system message is the system instructions.
		var sys []string
		for len(t.Input) > 0 && t.Input[0].Role == "system" && len(t.Input[0].ToolCalls) == 0 {
			sys = append(sys, t.Input[0].Content)
			t.Input = t.Input[1:]
		}
		t.System = strings.Join(sys, "\n")
	}
	if raw, off, e := get("model"); e != nil {
		return e
	} else if raw != nil {
		if raw[0] != '"' {
			return wrong("model", off, "a string", raw)
		}
		t.Model = unquote(raw)
	}
	if raw, off, e := get("time"); e != nil {
		return e
	} else if raw != nil {
		tm, ok := timeOf(raw)
		if !ok {
			return &lineErr{off: off, msg: fmt.Sprintf("traces.time (%s) must be a time, got %s", strconv.Quote(j.pathOf("time")), describe(raw)),
				hint: "RFC 3339 text such as 2024-05-01T12:00:00Z, or Unix seconds or milliseconds as a number"}
		}
		t.Time = tm
	}
	if raw, off, e := get("latency_ms"); e != nil {
		return e
	} else if raw != nil {
		f, err := strconv.ParseFloat(string(raw), 64)
		if !isNumberStart(raw[0]) || err != nil || f < 0 || math.IsInf(f, 0) {
			return wrong("latency_ms", off, "a number of milliseconds, 0 or more", raw)
		}
		t.LatencyMS = f
	}
	for _, k := range []string{"input_tokens", "output_tokens"} {
		raw, off, e := get(k)
		if e != nil {
			return e
		}
		if raw == nil {
			continue
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if !isNumberStart(raw[0]) || err != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return wrong(k, off, "a whole number 0 or more", raw)
		}
		if k == "input_tokens" {
			t.InputTokens = int(f)
		} else {
			t.OutputTokens = int(f)
		}
	}
	return j.attributes(t, body, root)
}

// attributes builds t.Attributes: the mapped attributes under their names,
// then the line's other top-level fields under their own.
func (j *JSONL) attributes(t *record.Trace, body []byte, root int) *lineErr {
	var b []byte
	taken := map[string]bool{}
	add := func(name string, raw []byte) {
		if b == nil {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		b = append(b, raw...)
		taken[name] = true
	}
	for _, name := range j.attrs {
		parts := strings.Split(j.m.Attributes[name], ".")
		start, end, e := lookup(body, root, parts)
		if e != nil {
			e.msg = fmt.Sprintf("traces.attributes.%s (%s): %s", name, strconv.Quote(j.m.Attributes[name]), e.msg)
			return e
		}
		if start >= 0 {
			add(name, body[start:end])
		}
	}
	if j.checkOnly {
		return nil
	}
	members(body, root, func(key []byte, _, vs, ve int) bool {
		k := unquote(key)
		if !j.top[k] && !taken[k] {
			add(k, body[vs:ve])
		}
		return true
	})
	if b != nil {
		t.Attributes = append(b, '}')
	}
	return nil
}

func (j *JSONL) pathOf(key string) string { return strings.Join(j.paths[key], ".") }

// ---- messages ----

// messagesOf reads a conversation field: a string (one message of role),
// one message object, or a list of them — OpenAI's form ({role, content
// (a string or a list of parts), tool_calls [{id, function: {name,
// arguments}}], tool_call_id}) or the GenAI conventions' ({role, parts
// [{type: text, content} | {type: tool_call, id, name, arguments} |
// {type: tool_call_response, id, response}], finish_reason}).
func messagesOf(raw []byte, off int, role string, checkOnly bool) ([]record.Message, string, *lineErr) {
	switch raw[0] {
	case '"':
		return []record.Message{{Role: role, Content: unquote(raw)}}, "", nil
	case '{':
		if e := checkMessage(raw, off); e != nil {
			return nil, "", e
		}
		if checkOnly {
			return []record.Message{}, "", nil
		}
		ms, finish := message(objectOf(raw), role)
		return ms, finish, nil
	case '[':
		var ms []record.Message
		finish := ""
		var e *lineErr
		i := 0
		elements(raw, 0, func(s, end int) bool {
			el := raw[s:end]
			if el[0] != '{' {
				e = &lineErr{off: off + s, msg: fmt.Sprintf("message %d must be an object, got %s", i, describe(el)),
					hint: `a message is {"role": "user", "content": "..."} or {"role": "user", "parts": [...]}`}
				return false
			}
			if e = checkMessage(el, off+s); e != nil {
				e.msg = fmt.Sprintf("message %d: %s", i, e.msg)
				return false
			}
			if checkOnly {
				i++
				return true
			}
			got, f := message(objectOf(el), role)
			ms = append(ms, got...)
			if finish == "" {
				finish = f
			}
			i++
			return true
		})
		if e != nil {
			return nil, "", e
		}
		if ms == nil {
			ms = []record.Message{}
		}
		return ms, finish, nil
	}
	return nil, "", &lineErr{off: off, msg: "must be a string, a message or a list of messages, got " + describe(raw),
		hint: `a string, {"role": "user", "content": "..."}, or a list of such messages`}
}

// checkMessage checks the shape of one message object: the fields assay
// reads have the types it reads.
func checkMessage(raw []byte, off int) *lineErr {
	var e *lineErr
	bad := func(at int, field, want string, got []byte) {
		e = &lineErr{off: off + at, msg: fmt.Sprintf("%s must be %s, got %s", field, want, describe(got))}
	}
	known, choices := false, false
	members(raw, 0, func(key []byte, _, vs, ve int) bool {
		v := raw[vs:ve]
		null := string(v) == "null"
		k := unquote(key)
		switch k {
		case "role", "content", "parts", "tool_calls", "tool_call_id", "function_call":
			known = true
		case "choices":
			choices = true
		}
		switch k {
		case "role", "name", "tool_call_id", "finish_reason":
			if v[0] != '"' && !null {
				bad(vs, unquote(key), "a string", v)
			}
		case "content":
			if v[0] != '"' && v[0] != '[' && !null {
				bad(vs, "content", "a string or a list of parts", v)
			}
		case "parts", "tool_calls":
			if v[0] != '[' && !null {
				bad(vs, unquote(key), "a list", v)
				break
			}
			if null {
				break
			}
			k := 0
			elements(v, 0, func(s, end int) bool {
				if v[s] != '{' {
					bad(vs+s, fmt.Sprintf("%s[%d]", unquote(key), k), "an object", v[s:end])
					return false
				}
				k++
				return true
			})
		}
		return e == nil
	})
	if e == nil && !known {
		// Not a message: a whole response or a wrapper, read as an empty
		// message it would store nothing of the conversation.
		e = &lineErr{off: off, msg: "is an object without role, content, parts or tool_calls: not a message",
			hint: "map the message inside it"}
		if choices {
			e.hint = "an OpenAI response holds its message at choices.0.message: add .choices.0.message to the path"
		}
	}
	return e
}

// systemOf is a system field's text: a string, or a list of parts (their
// texts joined by newlines).
func systemOf(raw []byte) (string, bool) {
	switch raw[0] {
	case '"':
		return unquote(raw), true
	case '[':
		return systemText(raw)
	}
	return "", false
}

// timeOf reads RFC 3339 text or Unix seconds or milliseconds (a number of
// 1e11 or more is milliseconds: 1e11 seconds is the year 5138).
func timeOf(raw []byte) (time.Time, bool) {
	if raw[0] == '"' {
		tm, err := time.Parse(time.RFC3339Nano, unquote(raw))
		if err != nil {
			return time.Time{}, false
		}
		return tm.UTC(), true
	}
	if !isNumberStart(raw[0]) {
		return time.Time{}, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f < 0 || f >= 1e16 {
		return time.Time{}, false
	}
	unit := float64(time.Second)
	if f >= 1e11 {
		unit = float64(time.Millisecond)
	}
	if f*unit >= 9e18 { // past the year 2262: beyond time.Duration
		return time.Time{}, false
	}
	whole, frac := math.Modf(f)
	return time.Unix(0, 0).Add(time.Duration(whole) * time.Duration(unit)).Add(time.Duration(math.Round(frac * unit))).UTC(), true
}

// describe names a JSON value for a message without repeating what may be
// private: a short plain string or number is quoted, anything longer is
// described by its kind and length.
func describe(raw []byte) string {
	switch {
	case raw[0] == '"':
		s := unquote(raw)
		if len(s) <= 24 && !spec.LooksLikeSecret(s) && !strings.ContainsAny(s, "@\n\r") && digitCount(s) < 7 {
			return "the string " + strconv.Quote(s)
		}
		return fmt.Sprintf("a string of %d characters", utf8.RuneCountInString(s))
	case isNumberStart(raw[0]):
		if len(raw) <= 12 && digitCount(string(raw)) < 7 { // not a phone number
			return "the number " + string(raw)
		}
		return "a number"
	}
	return kindOf(raw)
}

func digitCount(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			n++
		}
	}
	return n
}

func kindOf(raw []byte) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func isNumberStart(c byte) bool { return c == '-' || isDigit(c) }

// sizeText is a byte count for a message: whole MiB when it is, else
// bytes.
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// ---- a scanner over valid JSON ----

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the end of the JSON value starting at b[i] (b valid).
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i) + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j)
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[j])) {
		j++
	}
	return j
}

// members calls fn for each member of the object at b[i]: its key (quoted)
// and its value's span, until fn returns false.
func members(b []byte, i int, fn func(key []byte, keyOff, vs, ve int) bool) {
	i = skipWS(b, i+1)
	for i < len(b) && b[i] != '}' {
		ke := stringEnd(b, i) + 1
		key := b[i:ke]
		vs := skipWS(b, skipWS(b, ke)+1) // past ':'
		ve := valueEnd(b, vs)
		if !fn(key, i, vs, ve) {
			return
		}
		i = skipWS(b, ve)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
}

// elements calls fn for each element of the list at b[i] until it returns
// false.
func elements(b []byte, i int, fn func(s, e int) bool) {
	i = skipWS(b, i+1)
	for i < len(b) && b[i] != ']' {
		e := valueEnd(b, i)
		if !fn(i, e) {
			return
		}
		i = skipWS(b, e)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
}

// objectOf is the members of the (valid) object raw by key, their values
// slices of raw; a repeated key's last value wins, as encoding/json has it.
func objectOf(raw []byte) map[string]json.RawMessage {
	obj := map[string]json.RawMessage{}
	members(raw, 0, func(key []byte, _, vs, ve int) bool {
		obj[unquote(key)] = raw[vs:ve:ve]
		return true
	})
	return obj
}

// keyIs reports whether the quoted JSON key equals s.
func keyIs(key []byte, s string) bool {
	body := key[1 : len(key)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body) == s
	}
	return unquote(key) == s
}

// lookup follows a dotted path from the value at b[i]: start and end of
// the value found, start -1 when a part is missing, and an error when the
// path goes through something that is neither an object nor (for a
// number) a list.
func lookup(b []byte, i int, parts []string) (int, int, *lineErr) {
	for k, part := range parts {
		found, end := -1, 0
		switch b[i] {
		case '{':
			members(b, i, func(key []byte, _, vs, ve int) bool {
				if keyIs(key, part) {
					found, end = vs, ve
					return false
				}
				return true
			})
		case '[':
			n, err := strconv.Atoi(part)
			if err != nil || n < 0 {
				return 0, 0, &lineErr{off: i, msg: fmt.Sprintf("%s is a list, so the path's next part must be a number, not %s", orLine(parts[:k]), strconv.Quote(part))}
			}
			idx := 0
			elements(b, i, func(s, e int) bool {
				if idx == n {
					found, end = s, e
					return false
				}
				idx++
				return true
			})
		default:
			return 0, 0, &lineErr{off: i, msg: fmt.Sprintf("%s is %s, so it has no field %s", orLine(parts[:k]), kindOf(b[i:]), strconv.Quote(part))}
		}
		if found < 0 {
			return -1, -1, nil
		}
		i = found
		if k == len(parts)-1 {
			return found, end, nil
		}
	}
	return -1, -1, nil
}

func orLine(parts []string) string {
	if len(parts) == 0 {
		return "the line"
	}
	return strconv.Quote(strings.Join(parts, "."))
}

// repeatedKey finds a key repeated in the line's object (an ambiguous
// line: which value is meant?).
func repeatedKey(b []byte, root int) *lineErr {
	seen := map[string]bool{}
	var e *lineErr
	members(b, root, func(key []byte, keyOff, _, _ int) bool {
		k := unquote(key)
		if seen[k] {
			e = &lineErr{off: keyOff, msg: fmt.Sprintf("the key %s is repeated", describeKey(k)), hint: "each key once per line"}
			return false
		}
		seen[k] = true
		return true
	})
	return e
}

func describeKey(k string) string {
	if len(k) <= 40 && !spec.LooksLikeSecret(k) {
		return strconv.Quote(k)
	}
	return fmt.Sprintf("(%d characters)", len(k))
}
