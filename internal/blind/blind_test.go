package blind

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// testCases are cases whose rendered prompts say which case they are by
// content only (the secret word), never by ID.
func testCases(n int) []Case {
	var cs []Case
	for i := range n {
		cs = append(cs, Case{ID: fmt.Sprintf("CASE-%03d", i), Messages: []record.Message{
			{Role: "system", Content: "You answer tickets."},
			{Role: "user", Content: fmt.Sprintf("Ticket about the word w%03d", i)},
		}})
	}
	return cs
}

// export writes a sample of cs in dir with a seeded source of randomness.
func export(t *testing.T, dir string, cs []Case, o ExportOptions) (*ExportResult, *Key) {
	t.Helper()
	if o.Sample == "" {
		o.Sample = filepath.Join(dir, "sample.jsonl")
	}
	if o.Key == "" {
		o.Key = o.Sample + ".key"
	}
	if o.Random == nil {
		o.Random = rand.NewChaCha8([32]byte{1})
	}
	o.Spec, o.SpecPath, o.SpecHash, o.DatasetHash, o.PromptHash = "s", "s.yaml", "sha256:spec", "sha256:data", "sha256:prompt"
	o.Now = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	res, err := Export(cs, o)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ReadKey(res.Key)
	if err != nil {
		t.Fatal(err)
	}
	return res, k
}

// readSample reads the sample's lines.
func readSample(t *testing.T, path string) []Item {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var items []Item
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var it Item
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	return items
}

// vendor answers every line of a sample: the answer names the word its
// prompt holds, so where an answer lands can be checked by content.
func vendor(items []Item) []string {
	var out []string
	for _, it := range items {
		word := strings.TrimPrefix(it.Messages[len(it.Messages)-1].Content, "Ticket about the word ")
		b, _ := json.Marshal(map[string]string{"id": it.ID, "output": "answer for " + word})
		out = append(out, string(b))
	}
	return out
}

func TestExportIsBlindAndImportMapsBack(t *testing.T) {
	dir := t.TempDir()
	cs := testCases(30)
	res, k := export(t, dir, cs, ExportOptions{Cases: 12, Seed: 7, SeedSet: true})
	if res.Cases != 12 || res.Population != 30 || len(k.Items) != 12 || k.Seed != 7 {
		t.Fatalf("result %+v, key items %d", res, len(k.Items))
	}
	raw, _ := os.ReadFile(res.Sample)
	if bytes.Contains(raw, []byte("CASE-")) {
		t.Errorf("the sample holds a case ID:\n%s", raw)
	}
	if fi, err := os.Stat(res.Key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	items := readSample(t, res.Sample)
	byID := map[string]Case{}
	for _, c := range cs {
		byID[c.ID] = c
	}
	inOrder := true
	for i, it := range items {
		c := byID[k.Items[i].Case]
		if it.ID != k.Items[i].ID || it.Messages[1].Content != c.Messages[1].Content {
			t.Errorf("sample line %d: id %s with %q; key says %s for case %s", i+1, it.ID, it.Messages[1].Content, k.Items[i].ID, k.Items[i].Case)
		}
		if i > 0 && k.Items[i].Case < k.Items[i-1].Case {
			inOrder = false
		}
	}
	if inOrder {
		t.Error("the sample is in case order: not shuffled")
	}
	// The same seed draws the same cases in the same order; the IDs are
	// fresh.
	_, k2 := export(t, t.TempDir(), cs, ExportOptions{Cases: 12, Seed: 7, SeedSet: true, Random: rand.NewChaCha8([32]byte{2})})
	for i := range k.Items {
		if k2.Items[i].Case != k.Items[i].Case || k2.Items[i].ID == k.Items[i].ID {
			t.Fatalf("seed 7 again: item %d %+v, first %+v", i, k2.Items[i], k.Items[i])
		}
	}

	answers, err := ReadResponses(strings.NewReader(strings.Join(vendor(items), "\n")+"\n"), "answers.jsonl", k)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range answers {
		word := strings.TrimPrefix(byID[a.Case].Messages[1].Content, "Ticket about the word ")
		if a.Output != "answer for "+word {
			t.Errorf("case %s got %q", a.Case, a.Output)
		}
	}

	// An existing key is kept unless --force.
	_, err = Export(cs, ExportOptions{Sample: res.Sample, Key: res.Key, Random: rand.NewChaCha8([32]byte{3})})
	if !errors.Is(err, ErrKeyExists) {
		t.Errorf("second export over the key: %v, want ErrKeyExists", err)
	}
	if k3, err := ReadKey(res.Key); err != nil || k3.Seal != k.Seal {
		t.Errorf("the refused export changed the key: %v", err)
	}
	if _, err := Export(cs, ExportOptions{Sample: res.Sample, Key: res.Key, Force: true, Random: rand.NewChaCha8([32]byte{3})}); err != nil {
		t.Errorf("--force: %v", err)
	}
	if fi, _ := os.Stat(res.Key); fi.Mode().Perm() != 0o600 {
		t.Errorf("a replaced key has mode %v", fi.Mode().Perm())
	}
}

// A key edited by hand, or damaged, is refused: its seal no longer
// matches.
func TestTamperedKeyRefused(t *testing.T) {
	dir := t.TempDir()
	res, _ := export(t, dir, testCases(5), ExportOptions{})
	b, _ := os.ReadFile(res.Key)
	var k Key
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	k.Items[0].Case, k.Items[1].Case = k.Items[1].Case, k.Items[0].Case // answers would swap cases
	tampered, _ := json.MarshalIndent(&k, "", "  ")
	if err := os.WriteFile(res.Key, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadKey(res.Key)
	if !errors.Is(err, ErrSeal) || !strings.Contains(err.Error(), "edited or damaged") {
		t.Errorf("tampered key: %v", err)
	}
	// Re-indenting the same content is no tampering.
	k.Items[0].Case, k.Items[1].Case = k.Items[1].Case, k.Items[0].Case
	same, _ := json.Marshal(&k)
	os.WriteFile(res.Key, same, 0o600)
	if _, err := ReadKey(res.Key); err != nil {
		t.Errorf("the same key re-indented: %v", err)
	}
}

// Every way a responses file can fail to answer the sample is refused
// with FILE:LINE:COL and what is wrong.
func TestResponsesRefused(t *testing.T) {
	k := &Key{Sample: "sample.jsonl", Items: []KeyItem{{"a1", "c1"}, {"b2", "c2"}, {"c3", "c3"}, {"d4", "c4"}, {"e5", "c5"}, {"f6", "c6"}, {"g7", "c7"}}}
	line := func(id string) string { return fmt.Sprintf(`{"id":%q,"output":"x"}`, id) }
	all := []string{line("a1"), line("b2"), line("c3"), line("d4"), line("e5"), line("f6"), line("g7")}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"shuffled", []string{line("a1"), line("d4"), line("b2"), line("c3"), line("e5"), line("f6"), line("g7")}, []string{
			`r.jsonl:3:1: the answers are not in the sample's order (1 line(s) out of order): id "b2" is the sample's line 2 but comes after the sample's line 4 (line 2 here); import refuses a shuffled file so that no answer can land on another case: write one answer per sample line, in the sample's order`}},
		{"truncated", all[:4], []string{
			`r.jsonl:5:1: 3 of the sample's 7 ids have no answer (the file is truncated or lines were dropped): "e5" (sample line 5), "f6" (sample line 6), "g7" (sample line 7); every line of the sample needs its answer`}},
		{"empty", nil, []string{
			`r.jsonl:1:1: 7 of the sample's 7 ids have no answer (the file is empty): "a1" (sample line 1), "b2" (sample line 2), "c3" (sample line 3), "d4" (sample line 4), "e5" (sample line 5) and 2 more; every line of the sample needs its answer`}},
		{"duplicated", append(append([]string{}, all[:3]...), append([]string{line("b2")}, all[3:]...)...), []string{
			`r.jsonl:4:1: id "b2" is answered twice: line 2 answered it first; keep one answer per id`}},
		{"unknown id", append(append([]string{}, all...), line("zz")), []string{
			`r.jsonl:8:1: id "zz" is not in the sample this key was made for (sample.jsonl, 7 lines); answer the sample's IDs as sent`}},
		{"bad lines", append([]string{`{"id":"a1","output":"x"`, `["a1"]`, `{"id":"b2","text":"x"}`, `{"id":"c3"}`, `{"output":"x"}`, `{"id":"d4","output":3}`, `{"id":"e5","tool_calls":[{"arguments":{}}]}`}, all[5:]...), []string{
			`r.jsonl:1:24: the line is not JSON: unexpected end of JSON input`,
			`r.jsonl:2:1: the line is not a JSON object: want {"id": "…", "output": "…"}`,
			`r.jsonl:3:1: unknown field(s) "text": a line has id, output, tool_calls`,
			`r.jsonl:4:1: id "c3" has no output: give "output" (a string, "" for an empty answer) or "tool_calls"`,
			`r.jsonl:5:1: the line has no id: each answer carries the id of the sample line it answers`,
			`r.jsonl:6:1: a field has the wrong type: id and output are strings, tool_calls a list of {"name", "arguments", "id"?}: json: cannot unmarshal number into Go struct field response.output of type string`,
			`r.jsonl:7:1: id "e5": tool_calls[0]: the call has no name`,
			`r.jsonl:10:1: 5 of the sample's 7 ids have no answer (the file is truncated or lines were dropped): "a1" (sample line 1), "b2" (sample line 2), "c3" (sample line 3), "d4" (sample line 4), "e5" (sample line 5); every line of the sample needs its answer`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadResponses(strings.NewReader(strings.Join(tt.lines, "\n")), "r.jsonl", k)
			var ps spec.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("err %v, want problems", err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	// Tool calls answer too, their arguments kept as text.
	ls := append([]string{`{"id":"a1","tool_calls":[{"name":"lookup","arguments":{"q": 1},"id":"c"}]}`}, all[1:]...)
	as, err := ReadResponses(strings.NewReader(strings.Join(ls, "\r\n")), "r.jsonl", k)
	if err != nil {
		t.Fatal(err)
	}
	if c := as[0].ToolCalls; len(c) != 1 || c[0].Name != "lookup" || c[0].Arguments != `{"q":1}` || as[0].Output != "" || as[6].Case != "c7" {
		t.Errorf("answers %+v", as)
	}
}

func FuzzReadResponses(f *testing.F) {
	k := &Key{Sample: "s", Items: []KeyItem{{"a", "c1"}, {"b", "c2"}, {"c", "c3"}}}
	f.Add([]byte("{\"id\":\"a\",\"output\":\"x\"}\n{\"id\":\"b\",\"output\":\"y\"}\n{\"id\":\"c\",\"tool_calls\":[{\"name\":\"n\",\"arguments\":\"{}\"}]}\n"))
	f.Add([]byte("{\"id\":\"b\",\"output\":\"y\"}\n{\"id\":\"a\",\"output\":\"x\"}\n"))
	f.Add([]byte("\xff\n[1]\nnull\n{\"id\":1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		as, err := ReadResponses(bytes.NewReader(data), "f", k)
		if err != nil {
			var ps spec.Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("not problems: %v", err)
			}
			for _, p := range ps {
				if p.File != "f" || p.Line < 1 || p.Col < 1 {
					t.Fatalf("unlocated problem %+v", p)
				}
			}
			return
		}
		// Accepted: every sample line answered, each on its own case.
		if len(as) != len(k.Items) {
			t.Fatalf("%d answers", len(as))
		}
		last := 0
		for i, a := range as {
			if a.ID != k.Items[i].ID || a.Case != k.Items[i].Case || a.Line <= last {
				t.Fatalf("answer %d: %+v", i, a)
			}
			last = a.Line
		}
	})
}

// A file that is not a key is refused saying what it is not.
func TestReadKeyBadFiles(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, data, want string }{
		{"sample", `{"id":"ab","messages":[]}`, `not a key written by assay export --blind: json: unknown field "id"`},
		{"text", "hello", `not a key written by assay export --blind: invalid character 'h' looking for beginning of value`},
		{"other", `{"format":"assay-blind-key/9"}`, `format "assay-blind-key/9": want "assay-blind-key/1" (a key written by assay export --blind)`},
		{"unsealed", `{"format":"assay-blind-key/1","secret":"00"}`, `the key's seal does not match its contents: the key's secret is not 16 or more bytes of hex`},
	} {
		p := filepath.Join(dir, tt.name)
		os.WriteFile(p, []byte(tt.data), 0o600)
		_, err := ReadKey(p)
		if err == nil || err.Error() != p+": "+tt.want {
			t.Errorf("%s: %v\nwant %s: %s", tt.name, err, p, tt.want)
		}
	}
	if _, err := ReadKey(filepath.Join(dir, "absent")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent key: %v", err)
	}
}

// A sample that cannot be written leaves no key behind, and the key may
// not be the sample.
func TestExportLeavesNoHalf(t *testing.T) {
	dir := t.TempDir()
	cs := testCases(3)
	o := ExportOptions{Sample: filepath.Join(dir, "no-such-dir", "s.jsonl"), Key: filepath.Join(dir, "s.key"), Random: rand.NewChaCha8([32]byte{})}
	if _, err := Export(cs, o); err == nil {
		t.Fatal("a sample in a missing directory was written")
	}
	if _, err := os.Stat(o.Key); !os.IsNotExist(err) {
		t.Errorf("the key of an unwritten sample is left: %v", err)
	}
	o.Sample = filepath.Join(dir, "s.jsonl")
	o.Key = o.Sample
	if _, err := Export(cs, o); err == nil || !strings.Contains(err.Error(), "the key and the sample are one file") {
		t.Errorf("key = sample: %v", err)
	}
}
