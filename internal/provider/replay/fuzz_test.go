package replay

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzBuildIndex: any file either indexes or fails with line-numbered
// problems, never panics; every indexed entry points at a line that parses
// back to a record whose join value hashes to the entry's key, at the right
// line number.
func FuzzBuildIndex(f *testing.F) {
	for _, s := range []string{
		"{\"q\": \"a\", \"m\": {\"out\": \"A\"}}\n{\"q\": 2, \"m\": {\"out\": {\"x\": 1}}}\n",
		"\xef\xbb\xbf{\"q\": \"a\", \"m\": {\"out\": \"A\"}}\r\n\r\n",
		"{\"q\": \"a\", \"m\": {\"out\": \"A\"}}\n{\"q\": \"a\", \"m\": {\"out\": \"B\"}}",
		"{\"q\": null}\n[1]\nnull\n\"s\"\n",
		"{\"q\": 1e400, \"m\": {\"out\": \"A\", \"usage\": {\"input\": 1}}}",
		"{\"q\": \"b\", \"m\": [\"out\"], \"latency_ms\": -0}",
		"",
		"\n\n\n",
		"{\"q\": \"t\", \"m\": {\"tool_calls\": [{\"name\": \"f\", \"arguments\": {\"a\": 1}}]}}\n{\"q\": \"u\", \"m\": {\"out\": \"x\"}, \"tool_calls\": [{\"name\": \"g\", \"arguments\": \"{\", \"id\": \"c\"}]}",
		"{\"q\": \"t\", \"m\": {\"out\": \"\", \"tool_calls\": [{\"arguments\": 1}]}}",
		"{\"q\": \"t\", \"tool_calls\": {}}",
	} {
		f.Add([]byte(s))
	}
	cfg := recordConfig{join: []string{"q"}, joinName: "q", output: []string{"m", "out"}, outputName: "m.out"}
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := buildIndex(bytes.NewReader(data), "f.jsonl", cfg, 1<<10)
		if err != nil {
			if !strings.Contains(err.Error(), "f.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if idx == nil || len(idx.entries) == 0 {
			t.Fatal("success with no records")
		}
		if idx.missing >= len(idx.entries) {
			t.Fatalf("success although no record has the output (%d of %d missing)", idx.missing, len(idx.entries))
		}
		for k, e := range idx.entries {
			end := e.off + int64(e.n)
			if e.off < 0 || end > int64(len(data)) {
				t.Fatalf("entry %+v outside the %d-byte file", e, len(data))
			}
			if line := bytes.Count(data[:e.off], []byte("\n")) + 1; line != int(e.line) {
				t.Fatalf("entry at offset %d says line %d; it is on line %d", e.off, e.line, line)
			}
			rec, err := parseRecord(data[e.off:end], cfg)
			if err != nil {
				t.Fatalf("indexed line %d does not parse back: %v", e.line, err)
			}
			for _, c := range rec.toolCalls {
				if c.Name == "" {
					t.Fatalf("line %d: a recorded call without a name", e.line)
				}
			}
			s, err := recordKey(rec.join)
			if err != nil || hashKey(s) != k {
				t.Fatalf("line %d's join value %q does not hash to its key", e.line, s)
			}
		}
	})
}

// FuzzJoinKeys: a number joins the same whether the record spells it in JSON
// and the case holds a float64, a json.Number or its text.
func FuzzJoinKeys(f *testing.F) {
	for _, v := range []float64{0, math.Copysign(0, -1), 1, 42, 0.1, 1e20, 1e-7, -3.5, 9007199254740993, math.MaxFloat64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		want, err := caseKey(v)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(v)
		spellings := []string{string(raw), strconv.FormatFloat(v, 'e', -1, 64), strconv.FormatFloat(v, 'g', -1, 64)}
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			spellings = append(spellings, strconv.FormatFloat(v, 'f', 1, 64)) // 42.0
		}
		for _, s := range spellings {
			got, err := recordKey(json.RawMessage(s))
			if err != nil {
				t.Fatalf("recordKey(%s): %v", s, err)
			}
			if got != want {
				t.Errorf("record %s joins as %q; case %v joins as %q", s, got, v, want)
			}
			if n, _ := caseKey(json.Number(s)); n != want {
				t.Errorf("json.Number(%s) joins as %q; float64 %v as %q", s, n, v, want)
			}
		}
	})
}
