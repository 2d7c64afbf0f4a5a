package toolrun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/lines"
)

// A replay handler answers calls from a JSONL file of recorded results,
// one line per call:
//
//	{"tool": "lookup_order", "arguments": {"id": 42}, "result": "shipped on May 2"}
//	{"tool": "lookup_order", "arguments": {"id": 42}, "result": "cancelled", "case_id": "17"}
//
// "arguments" is a JSON object (or a string holding one, as a model writes
// it); "result" is the text sent back to the model (a string as is, any
// other JSON value as its compact text); "case_id" (a string or a number)
// makes a line answer only that case's call. A call is answered by the
// line with its tool and JSON-equal arguments (key order, spacing and
// escapes aside; numbers by exact value, so 42, 42.0 and 4.2e1 are equal)
// that names its case, or else by the one that names no case; with
// neither the call fails with KindNoRecord. Lines of other tools are
// checked and skipped, so several handlers may share one file.
//
// The file is read once when the handler is made: every problem is
// reported with its line number, and only a 128-bit hash of each line's
// key, its byte offset and its line number are kept, so memory grows with
// the number of lines, not their size; each call reads its line back.

// maxLineBytes bounds one line of a replay file.
const maxLineBytes = 64 << 20

// maxProblems is how many problems a file's check lists before summarising the rest.
const maxProblems = 20

// key is the hash of a line's tool, case and canonical arguments.
type key [16]byte

// entry locates one line in the file.
type entry struct {
	off  int64
	n    uint32
	line uint32
}

type replayHandler struct {
	tool    string
	path    string // the file, absolute
	display string // the file as the spec names it
	entries map[key]entry
}

func newReplay(tool, rel, dir string) (*replayHandler, error) {
	path := rel
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening recorded tool results: %w (replay is relative to the spec's directory)", err)
	}
	defer f.Close()
	entries, err := buildIndex(f, rel, tool, maxLineBytes)
	if err != nil {
		return nil, err
	}
	return &replayHandler{tool: tool, path: path, display: rel, entries: entries}, nil
}

// record is one parsed line.
type record struct {
	tool    string
	args    string // canonical
	result  string
	caseID  string
	hasCase bool
}

func (r *record) key() key { return hashKey(r.tool, r.hasCase, r.caseID, r.args) }

func hashKey(tool string, hasCase bool, caseID, args string) key {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s", len(tool), tool)
	if hasCase {
		fmt.Fprintf(h, "c%d:%s", len(caseID), caseID)
	} else {
		h.Write([]byte("-"))
	}
	h.Write([]byte(args))
	var k key
	copy(k[:], h.Sum(nil))
	return k
}

// buildIndex reads a replay file once, checks every line and indexes the
// lines of tool. It reports every problem (up to maxProblems) with its
// line number; name is the file as the user wrote it.
func buildIndex(r io.Reader, name, tool string, maxLine int) (map[key]entry, error) {
	entries := map[key]entry{}
	var (
		problems []string
		dropped  int
		others   []string // other tools' names seen, for the message when none is tool's
	)
	problem := func(line int, format string, args ...any) {
		if len(problems) >= maxProblems {
			dropped++
			return
		}
		problems = append(problems, fmt.Sprintf("%s:%d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	err := lines.Each(r, name, maxLine, func(l lines.Line) error {
		switch {
		case l.TooLong:
			problem(l.No, "the line is longer than %d MiB", maxLine>>20)
		case len(bytes.TrimSpace(l.Body)) == 0:
		case l.No > 1<<32-1:
			problem(l.No, "more than %d lines", uint32(1<<32-1))
		default:
			rec, err := parseRecord(l.Body)
			if err != nil {
				problem(l.No, "%v", err)
				break
			}
			if rec.tool != tool {
				if len(others) < 10 && !slices.Contains(others, rec.tool) {
					others = append(others, rec.tool)
				}
				break
			}
			k := rec.key()
			if prev, dup := entries[k]; dup {
				problem(l.No, "the same tool, arguments and case_id as line %d; keep one line per call", prev.line)
				break
			}
			entries[k] = entry{off: l.Off, n: uint32(len(l.Body)), line: uint32(l.No)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(problems) == 0 && len(entries) == 0 {
		seen := ""
		if len(others) > 0 {
			seen = " (it has lines for " + strings.Join(quoteAll(others), ", ") + ")"
		}
		problems = append(problems, fmt.Sprintf("%s has no line for tool %q%s; want one JSON object per line such as {\"tool\": %q, \"arguments\": {...}, \"result\": \"...\"}",
			name, tool, seen, tool))
	}
	if len(problems) > 0 {
		if dropped > 0 {
			problems = append(problems, fmt.Sprintf("... and %d more problems", dropped))
		}
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return entries, nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

const lineHint = `want {"tool": "NAME", "arguments": {...}, "result": "the text sent back"} with an optional "case_id"`

// parseRecord reads one line of a replay file.
func parseRecord(body []byte) (*record, error) {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("not a JSON object; %s", lineHint)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v; %s", err, lineHint)
	}
	rec := &record{}
	var err error
	raw, ok := fields["tool"]
	if !ok {
		return nil, fmt.Errorf(`no "tool"; %s`, lineHint)
	}
	if err := json.Unmarshal(raw, &rec.tool); err != nil || rec.tool == "" {
		return nil, fmt.Errorf(`"tool" is %s; want the tool's name as a string`, quoteHead(raw, 40))
	}
	raw, ok = fields["arguments"]
	if !ok {
		return nil, fmt.Errorf(`no "arguments"; %s ({} for a call without arguments)`, lineHint)
	}
	args := []byte(raw)
	if bytes.HasPrefix(args, []byte(`"`)) {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf(`"arguments": %v`, err)
		}
		args = []byte(s)
	}
	if rec.args, err = canonicalObject(args); err != nil {
		return nil, fmt.Errorf(`"arguments" %v; want a JSON object such as {"id": 42}`, err)
	}
	raw, ok = fields["result"]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return nil, fmt.Errorf(`no "result"; %s`, lineHint)
	}
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &rec.result); err != nil {
			return nil, fmt.Errorf(`"result": %v`, err)
		}
	} else {
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return nil, fmt.Errorf(`"result": %v`, err)
		}
		rec.result = c.String()
	}
	if raw, ok = fields["case_id"]; ok && !bytes.Equal(raw, []byte("null")) {
		rec.hasCase = true
		switch {
		case raw[0] == '"':
			if err := json.Unmarshal(raw, &rec.caseID); err != nil {
				return nil, fmt.Errorf(`"case_id": %v`, err)
			}
		case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
			rec.caseID = string(raw) // a number, as written
		default:
			return nil, fmt.Errorf(`"case_id" is %s; want the case's ID as a string`, quoteHead(raw, 40))
		}
	}
	return rec, nil
}

// Call answers c from the line recorded for it.
func (r *replayHandler) Call(ctx context.Context, c Call) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	argText := strings.TrimSpace(c.Arguments)
	if argText == "" {
		argText = "{}"
	}
	args, err := canonicalObject([]byte(argText))
	if err != nil {
		return "", &Error{Kind: KindFailed, Tool: r.tool, Msg: fmt.Sprintf("the call's arguments %v, so no recorded line can match", err)}
	}
	keys := []key{hashKey(r.tool, false, "", args)}
	if c.CaseID != "" {
		keys = []key{hashKey(r.tool, true, c.CaseID, args), keys[0]}
	}
	for _, k := range keys {
		e, ok := r.entries[k]
		if !ok {
			continue
		}
		return r.read(e, k)
	}
	return "", &Error{Kind: KindNoRecord, Tool: r.tool,
		Msg: fmt.Sprintf("no line of %s records tool %q with arguments %s for case %q or for every case", r.display, r.tool, quoteHead([]byte(args), 200), c.CaseID)}
}

// read reads back the line e and checks that it still holds key k.
func (r *replayHandler) read(e entry, k key) (string, error) {
	changed := func(format string, args ...any) error {
		return &Error{Kind: KindFailed, Tool: r.tool, Msg: fmt.Sprintf("%s:%d: ", r.display, e.line) + fmt.Sprintf(format, args...) + " (the file changed after it was read?)"}
	}
	f, err := os.Open(r.path)
	if err != nil {
		return "", changed("%v", err)
	}
	defer f.Close()
	line := make([]byte, e.n)
	if n, err := f.ReadAt(line, e.off); n < len(line) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return "", changed("%v", err)
	}
	rec, err := parseRecord(line)
	if err != nil {
		return "", changed("%v", err)
	}
	if rec.key() != k {
		return "", changed("the line no longer records this call")
	}
	return rec.result, nil
}

// canonicalObject returns the canonical text of a JSON object: keys sorted,
// no spaces, strings re-escaped the one way encoding/json writes them,
// numbers by exact value (canonicalNumber). Two JSON-equal objects have the
// same canonical text, which is itself JSON.
func canonicalObject(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("are not JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", errors.New("hold more than one JSON value")
	}
	if _, ok := v.(map[string]any); !ok {
		return "", errors.New("are not a JSON object")
	}
	var out strings.Builder
	writeCanonical(&out, v)
	return out.String(), nil
}

func writeCanonical(w *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		w.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				w.WriteByte(',')
			}
			writeString(w, k)
			w.WriteByte(':')
			writeCanonical(w, v[k])
		}
		w.WriteByte('}')
	case []any:
		w.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				w.WriteByte(',')
			}
			writeCanonical(w, e)
		}
		w.WriteByte(']')
	case string:
		writeString(w, v)
	case json.Number:
		w.WriteString(canonicalNumber(string(v)))
	case bool:
		w.WriteString(strconv.FormatBool(v))
	default: // nil
		w.WriteString("null")
	}
}

func writeString(w *strings.Builder, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// canonicalNumber writes a JSON number literal by its exact value: the
// significant digits without leading or trailing zeros and a decimal
// exponent ("42", "42.0" and "4.2e1" are all "42"; "0.50" is "5e-1"; "-0"
// is "0"). An exponent too large to add to is kept as written.
func canonicalNumber(lit string) string {
	s := lit
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expText, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	var exp int64
	if hasExp {
		if len(strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(expText, "+"), "-"), "0")) > 15 {
			return lit
		}
		var err error
		if exp, err = strconv.ParseInt(strings.TrimPrefix(expText, "+"), 10, 64); err != nil {
			return lit
		}
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= int64(len(frac))
	if digits == "" {
		return "0"
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	out := trimmed
	if exp != 0 {
		out += "e" + strconv.FormatInt(exp, 10)
	}
	if neg {
		out = "-" + out
	}
	return out
}
