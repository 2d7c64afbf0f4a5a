package toolrun

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzReplayIndex: any replay file either indexes or fails with problems
// naming the file and a line, never panics; every indexed entry points at
// the line it says, which parses back to a record of the handler's tool
// whose key is the entry's; every record's canonical arguments are a JSON
// object whose canonical form is itself, and a call with those arguments
// (and the record's case) finds that very line.
func FuzzReplayIndex(f *testing.F) {
	for _, s := range []string{
		recorded,
		`{"tool": "t", "arguments": {"id": 42}, "result": "a"}` + "\n" + `{"tool": "t", "arguments": {"id": 42.0}, "result": "b", "case_id": "1"}`,
		"\xef\xbb\xbf" + `{"tool": "t", "arguments": "{\"a\": [1, 2e3, -0.0]}", "result": {"x": null}}` + "\r\n\r\n",
		`{"tool": "t", "arguments": {"a": 1}, "result": "x"}` + "\n" + `{"tool": "t", "arguments": {"a": 1e0}, "result": "y"}`,
		`{"tool": "t", "arguments": {"a": 1e99999999999999999999}, "result": "x", "case_id": -1.5}`,
		`{"tool": "t", "arguments": {"\u00e9": "\u2028<>&"}, "result": ""}`,
		`{"tool": "t", "arguments": {}, "result": 1, "case_id": null}`,
		"{\"tool\": \"t\"}\n[1]\nnull\n\"s\"\n",
		"",
		"\n\n\n",
		`{"tool": "u", "arguments": {}, "result": "x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := buildIndex(bytes.NewReader(data), "f.jsonl", "t", 1<<10)
		if err != nil {
			if !strings.Contains(err.Error(), "f.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(entries) == 0 {
			t.Fatal("success with no line for the tool")
		}
		h := &replayHandler{tool: "t", display: "f.jsonl", entries: entries}
		for k, e := range entries {
			end := e.off + int64(e.n)
			if e.off < 0 || end > int64(len(data)) {
				t.Fatalf("entry %+v outside the %d-byte file", e, len(data))
			}
			if line := bytes.Count(data[:e.off], []byte("\n")) + 1; line != int(e.line) {
				t.Fatalf("entry at offset %d says line %d; it is on line %d", e.off, e.line, line)
			}
			rec, err := parseRecord(data[e.off:end])
			if err != nil {
				t.Fatalf("indexed line %d does not parse back: %v", e.line, err)
			}
			if rec.tool != "t" || rec.key() != k {
				t.Fatalf("line %d is indexed under another key (tool %q)", e.line, rec.tool)
			}
			var obj map[string]any
			dec := json.NewDecoder(strings.NewReader(rec.args))
			dec.UseNumber()
			if err := dec.Decode(&obj); err != nil {
				t.Fatalf("line %d: canonical arguments %s are not a JSON object: %v", e.line, rec.args, err)
			}
			again, err := canonicalObject([]byte(rec.args))
			if err != nil || again != rec.args {
				t.Fatalf("line %d: canonical arguments %s are not their own canonical form (%s, %v)", e.line, rec.args, again, err)
			}
			// The lookup a call with these arguments makes lands on this line.
			keys := []key{hashKey("t", false, "", rec.args)}
			if rec.hasCase {
				keys = []key{hashKey("t", true, rec.caseID, rec.args)}
			}
			if got, ok := h.entries[keys[0]]; !ok || got != e {
				t.Fatalf("line %d is not found by its own call", e.line)
			}
		}
	})
}

// FuzzCanonicalObject: canonical text is JSON, idempotent, and the same
// for an object re-encoded by encoding/json (key order and spacing aside).
func FuzzCanonicalObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"b": 1, "a": [1.50, "x", null, true, {"z": -0}]}`, `{"a": 1e400}`, `{"\u00e9": "\ud800"}`, `{"a":1,"a":2}`, `[]`, `{"a": 0.1e-7}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := canonicalObject(data)
		if err != nil {
			return
		}
		if !json.Valid([]byte(c)) {
			t.Fatalf("canonical %s of %q is not JSON", c, data)
		}
		if again, err := canonicalObject([]byte(c)); err != nil || again != c {
			t.Fatalf("canonical %s of %q is not its own canonical form: %s, %v", c, data, again, err)
		}
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%q has a canonical form but does not decode: %v", data, err)
		}
		re, err := json.Marshal(v)
		if err != nil {
			return
		}
		if c2, err := canonicalObject(re); err != nil || c2 != c {
			t.Fatalf("re-encoded %s canonicalises to %s; the original to %s (%v)", re, c2, c, err)
		}
	})
}
