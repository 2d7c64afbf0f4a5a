package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/spec"
)

// fuzzSpec is a spec built in code that exercises ids, expected
// extraction, weights and both kinds of tag.
func fuzzSpec(format string) *spec.Spec {
	return &spec.Spec{File: "f.yaml", Dataset: spec.Dataset{
		Path: "f." + format, Format: format, ID: "id", Expected: "answer",
		ExpectedExtract: `####\s*(.+)$`, Weight: "w",
		Tags: []spec.Tag{{Key: "k", Expr: "k"}, {Key: "len", Expr: `string(size(string(case.answer)))`},
			{Key: "amp", Expr: `string(case.answer).replace("", string(case.answer)).size() > 9 ? "long" : "short"`}},
	}}
}

// checkScan runs a full scan over src: it must not panic, must end in
// bounded time, and every problem must be positioned in the file.
func checkScan(t *testing.T, format string, src []byte) {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			panic(fmt.Sprintf("scan did not finish in 10s on %q", src))
		}
	}()
	sp := fuzzSpec(format)
	r, probs, err := newReader(sp, sp.Dataset.Path, bytes.NewReader(src))
	if err != nil {
		return // e.g. an I/O error: none can happen on a bytes.Reader except through csv
	}
	info, err := r.scan(&Info{}, probs)
	var ps spec.Problems
	if err != nil && !errors.As(err, &ps) {
		t.Fatalf("scan: %v", err)
	}
	if len(ps) > MaxProblems+1+8 {
		t.Fatalf("%d problems: the cap is not applied", len(ps))
	}
	for _, p := range ps {
		if p.Line < 1 || p.Col < 1 || p.Msg == "" {
			t.Fatalf("bad problem %#v", p)
		}
	}
	if info.Cases > info.Rows || info.Hash == "" {
		t.Fatalf("info %+v", info)
	}
}

func FuzzJSONL(f *testing.F) {
	f.Add([]byte(`{"id": "a", "answer": "x\n#### 4", "w": 2, "k": "v"}` + "\n"))
	f.Add([]byte(`{"id": 1}` + "\n" + `{"id": 1}` + "\n\n"))
	f.Add([]byte(`[1,2]` + "\n" + `{"id": "a"} x` + "\n" + `{"id": ` + "\n"))
	f.Add([]byte(`{"id": {"a": 1}, "w": "NaN", "answer": null}`))
	f.Add([]byte(`{"id": "a", "answer": 1, "answer": 2}` + "\n" + `{"id": "b", "x": {"k": 1, "\u006b": 2}}` + "\n"))
	f.Add([]byte("\xef\xbb\xbf{\"id\": \"\xff\"}\r\n"))
	f.Add([]byte(`{"id": "big", "answer": "` + strings.Repeat("a", 6000) + `"}` + "\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		checkScan(t, "jsonl", src)
	})
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte("id,answer,w,k\na,\"x\n#### 4\",2,v\n"))
	f.Add([]byte("id,answer\n1,a\n1,b,c\n\"unclosed,x\n"))
	f.Add([]byte("id,,id\na\"b,c\n"))
	f.Add([]byte(""))
	f.Add([]byte("\xef\xbb\xbfid\r\n\"\"\"\"\r\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		checkScan(t, "csv", src)
	})
}

// FuzzDuplicateKey checks DuplicateKey against a token-by-token decoder that
// records each object's keys: on valid JSON they find the same first
// repeated key, and neither panics on anything.
func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{`{"a": 1, "a": 2}`, `[{"x": {"k": 1}}, {"k": 1, "k": [1]}]`, `{"a\u0062": 1, "ab": 2}`,
		`{"s": "\"a\": 1, \"a\": 2"}`, `"x"`, `{}`, `[[],{"":1,"":2}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		key, off, _, found := DuplicateKey(b)
		if !json.Valid(b) {
			return
		}
		wantKey, wantFound := referenceDuplicate(b)
		if found != wantFound || key != wantKey {
			t.Fatalf("DuplicateKey(%q) = %q %v, reference %q %v", b, key, found, wantKey, wantFound)
		}
		if found && (off < 0 || off >= len(b) || b[off] != '"') {
			t.Fatalf("DuplicateKey(%q): offset %d is not a key's quote", b, off)
		}
	})
}

// referenceDuplicate finds the first repeated key with json.Decoder.Token.
func referenceDuplicate(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj       bool
		expectKey bool
		seen      map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.expectKey {
			if k, ok := tok.(string); ok {
				if top.seen[k] {
					return k, true
				}
				top.seen[k] = true
				top.expectKey = false
				continue
			}
		}
		if top != nil && top.obj {
			top.expectKey = true // the value is read; a key comes next
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.obj {
				top.expectKey = false
			}
			stack = append(stack, &frame{obj: true, expectKey: true, seen: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].obj {
				stack[len(stack)-1].expectKey = true
			}
		}
	}
}
