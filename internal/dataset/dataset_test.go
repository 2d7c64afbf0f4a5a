package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/longtest"

	"github.com/assay-eval/assay/internal/spec"
)

// specFor writes data to a temp file and returns a loaded spec over it.
func specFor(t *testing.T, name, data, datasetYAML string) *spec.Spec {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "dataset:\n  path: " + name + "\n" + datasetYAML +
		"prompt: {user: \"x\"}\ntargets: [{name: a, provider: exec, command: [x]}]\n"
	sp, err := spec.Parse(filepath.Join(dir, "s.yaml"), []byte(src))
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	return sp
}

func collect(t *testing.T, sp *spec.Spec) []*Case {
	t.Helper()
	var out []*Case
	if err := Each(sp, func(c *Case) error { out = append(out, c); return nil }); err != nil {
		t.Fatalf("Each: %v", err)
	}
	return out
}

func problems(t *testing.T, sp *spec.Spec) []string {
	t.Helper()
	_, err := Scan(sp)
	var ps spec.Problems
	if err != nil && !errors.As(err, &ps) {
		t.Fatalf("Scan: %v", err)
	}
	var out []string
	for _, p := range ps {
		s := p.String()
		if i := strings.LastIndex(s, string(filepath.Separator)); i >= 0 && strings.HasPrefix(s, p.File) {
			s = filepath.Base(p.File) + s[len(p.File):]
		}
		out = append(out, s)
	}
	return out
}

func TestJSONLValues(t *testing.T) {
	data := `{"id": 12345678901234567890, "q": "a", "n": 3, "x": 0.5, "ok": true, "obj": {"k": [1, "two"]}, "e": {"team": "billing"}}
{"id": "b", "q": "b", "n": 4, "e": null}
`
	sp := specFor(t, "d.jsonl", data, "  id: id\n  expected: e\n  tags: {n: n, obj: obj, both: 'string(case.n) + \"-\" + case.q'}\n")
	cs := collect(t, sp)
	if len(cs) != 2 {
		t.Fatalf("%d cases", len(cs))
	}
	c := cs[0]
	if c.ID != "12345678901234567890" {
		t.Errorf("a numeric id keeps its written digits, got %q", c.ID)
	}
	if c.Vars["n"] != json.Number("3") || c.Vars["x"] != json.Number("0.5") || c.Vars["ok"] != true {
		t.Errorf("JSON numbers keep their written form as json.Number: %#v", c.Vars)
	}
	if !reflect.DeepEqual(c.Expected, map[string]any{"team": "billing"}) {
		t.Errorf("expected keeps any JSON value: %#v", c.Expected)
	}
	if !reflect.DeepEqual(c.Tags, map[string]string{"n": "3", "obj": `{"k":[1,"two"]}`, "both": "3-a"}) {
		t.Errorf("tags = %#v", c.Tags)
	}
	if cs[1].Expected != nil {
		t.Errorf("a null expected is nil, got %#v", cs[1].Expected)
	}
}

func TestJSONLBlankLinesAndLineIDs(t *testing.T) {
	data := "\xef\xbb\xbf{\"q\": \"a\"}\r\n\n   \n{\"q\": \"b\"}\n\n"
	sp := specFor(t, "d.jsonl", data, "")
	cs := collect(t, sp)
	if len(cs) != 2 || cs[0].ID != "1" || cs[1].ID != "4" || cs[1].Line != 4 {
		t.Fatalf("blank lines are skipped and ids are physical line numbers: %+v", cs)
	}
	info, err := Scan(sp)
	if err != nil || info.Rows != 2 || info.Count != 2 {
		t.Errorf("Scan = %+v, %v", info, err)
	}
}

func TestJSONLNoTrailingNewline(t *testing.T) {
	sp := specFor(t, "d.jsonl", `{"q": "a"}`+"\n"+`{"q": "b"}`, "")
	if cs := collect(t, sp); len(cs) != 2 {
		t.Errorf("the last line needs no newline: %d cases", len(cs))
	}
}

func TestLimit(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "{\"q\": \"%d\"}\n", i)
	}
	sp := specFor(t, "d.jsonl", b.String(), "  limit: 3\n")
	if cs := collect(t, sp); len(cs) != 3 || cs[2].Vars["q"] != "2" {
		t.Errorf("limit 3 gives %d cases", len(cs))
	}
	info, err := Scan(sp)
	if err != nil || info.Count != 3 || info.Cases != 10 {
		t.Errorf("Scan with limit: %+v %v", info, err)
	}
}

func TestHashIsFileContent(t *testing.T) {
	a := specFor(t, "d.jsonl", "{\"q\": 1}\n", "")
	b := specFor(t, "other.jsonl", "{\"q\": 1}\n", "")
	c := specFor(t, "d.jsonl", "{\"q\": 1} \n", "")
	d := specFor(t, "d.jsonl", "{\"q\": 2}\n", "")
	ia, _ := Scan(a)
	ib, _ := Scan(b)
	ic, _ := Scan(c)
	id, _ := Scan(d)
	// sha256 of the bytes `{"q": 1}\n`, computed independently with sha256sum.
	const wantFile = "sha256:727c16eb1b22614dc12c8605f65c1e40cf47b493998dff6537dd099b5b1b58d6"
	// sha256 of the canonical encoding (canonical.go), written by hand and
	// hashed with sha256sum:
	//	printf 'assay dataset cases v1\n{"id":"1","fields":{"q":1},"expected":null,"tags":{},"weight":null}\n'
	const want = "sha256:2b5ac471a507b47c3367f36fbf30b25ee11d2bd13ae07e16d2c6318ea9431a8e"
	if ia.FileHash != wantFile {
		t.Errorf("file hash = %s, want %s", ia.FileHash, wantFile)
	}
	if ia.Hash != want {
		t.Errorf("hash = %s, want %s", ia.Hash, want)
	}
	if ia.Hash != ib.Hash || ia.FileHash != ib.FileHash {
		t.Errorf("hash must follow content, not name: %s %s", ia.Hash, ib.Hash)
	}
	// A trailing space changes the bytes, not the case.
	if ic.Hash != ia.Hash || ic.FileHash == ia.FileHash {
		t.Errorf("trailing space: hash %s (want %s), file hash %s (want other than %s)", ic.Hash, ia.Hash, ic.FileHash, ia.FileHash)
	}
	if id.Hash == ia.Hash {
		t.Errorf("a changed value kept the hash %s", id.Hash)
	}
}

func TestCSV(t *testing.T) {
	data := "id,question,answer\r\n" +
		"a,\"multi\nline, with comma\",1\r\n" +
		"b,\"say \"\"hi\"\"\",\r\n"
	sp := specFor(t, "d.csv", data, "  id: id\n  expected: answer\n")
	cs := collect(t, sp)
	if len(cs) != 2 {
		t.Fatalf("%d cases", len(cs))
	}
	if cs[0].ID != "a" || cs[0].Line != 2 || cs[0].Vars["question"] != "multi\nline, with comma" || cs[0].Expected != "1" {
		t.Errorf("case a = %+v", cs[0])
	}
	if cs[1].Line != 4 || cs[1].Vars["question"] != `say "hi"` || cs[1].Expected != "" {
		t.Errorf("case b = %+v", cs[1])
	}
	sp = specFor(t, "d.csv", data, "")
	if cs := collect(t, sp); cs[0].ID != "1" || cs[1].ID != "2" {
		t.Errorf("CSV ids by line are row numbers: %s %s", cs[0].ID, cs[1].ID)
	}
}

func TestProblemsAreCapped(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 120; i++ {
		b.WriteString("not json\n")
	}
	sp := specFor(t, "d.jsonl", b.String(), "")
	ps := problems(t, sp)
	if len(ps) != MaxProblems+1 {
		t.Fatalf("%d problems, want %d", len(ps), MaxProblems+1)
	}
	// "not json" fails at its second character (the 'o' after an 'n').
	if want := "d.jsonl:51:2: … and 70 more problems"; ps[MaxProblems] != want {
		t.Errorf("last = %q, want %q", ps[MaxProblems], want)
	}
}

func TestMissingIDEverywhereIsOneSpecProblem(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "{\"q\": %d}\n", i)
	}
	sp := specFor(t, "d.jsonl", b.String(), "  id: qid\n")
	ps := problems(t, sp)
	if len(ps) != 1 || !strings.Contains(ps[0], `s.yaml:3:7: dataset.id names field "qid" that the dataset lacks (fields: q) (did you mean "q"?)`) {
		t.Errorf("problems = %v", ps)
	}
}

func TestNextSkipsBadRows(t *testing.T) {
	sp := specFor(t, "d.jsonl", "{\"q\": 1}\nnope\n{\"q\": 3}\n", "")
	r, err := Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ids []string
	var bad int
	for {
		c, err := r.Next()
		if err == io.EOF {
			break
		}
		var ps spec.Problems
		if errors.As(err, &ps) {
			bad++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	if bad != 1 || strings.Join(ids, ",") != "1,3" {
		t.Errorf("ids %v bad %d", ids, bad)
	}
	if err := Each(sp, func(*Case) error { return nil }); err == nil {
		t.Error("Each stops with the problem of a malformed row")
	}
}

func TestEachStopsOnCallbackError(t *testing.T) {
	sp := specFor(t, "d.jsonl", "{\"q\": 1}\n{\"q\": 2}\n", "")
	stop := errors.New("stop")
	n := 0
	err := Each(sp, func(*Case) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("Each = %v after %d cases", err, n)
	}
}

func TestCELTagCostIsBounded(t *testing.T) {
	sp := specFor(t, "d.jsonl", "{\"q\": \"x\"}\n", "  tags: {t: 'lists.range(10000).map(i, lists.range(10000).map(j, i*j)).size() > 0 ? \"a\" : \"b\"'}\n")
	ps := problems(t, sp)
	if len(ps) != 1 || !strings.Contains(ps[0], "d.jsonl:1:1: tag \"t\": ") || !strings.Contains(ps[0], "cost") {
		t.Errorf("problems = %v", ps)
	}
}

// TestCELTagAmplificationIsBounded: a tag expression that would build a
// string far longer than the row (10 GB from a 100 KB field) is a problem
// at the row, raised before the string is built.
func TestCELTagAmplificationIsBounded(t *testing.T) {
	row := "{\"q\": \"" + strings.Repeat("a", 100_000) + "\"}\n"
	sp := specFor(t, "d.jsonl", row, "  tags: {t: 'case.q.replace(\"a\", case.q)'}\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ps := problems(t, sp)
	runtime.ReadMemStats(&after)
	want := `d.jsonl:1:1: tag "t": replace would build at least`
	if len(ps) != 1 || !strings.HasPrefix(ps[0], want) || !strings.Contains(ps[0], "at most 16777216 are allowed") {
		t.Errorf("problems = %v", ps)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("the tag allocated %d MiB", alloc>>20)
	}
}

// TestMemoryDoesNotGrowWithCases streams a large file and checks that the
// heap in use stays far below the file's size.
func TestMemoryDoesNotGrowWithCases(t *testing.T) {
	longtest.Skip(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 300)
	for i := 0; i < 120000; i++ {
		fmt.Fprintf(f, "{\"q\": \"%d %s\", \"answer\": \"#### %d\"}\n", i, pad, i)
	}
	f.Close()
	st, _ := os.Stat(path)
	src := "dataset: {path: big.jsonl, expected: answer, expected_extract: '####\\s*(.+)$', tags: {t: 'string(size(case.q) % 7)'}}\nprompt: {user: x}\ntargets: [{name: a, provider: exec, command: [x]}]\n"
	sp, err := spec.Parse(filepath.Join(dir, "s.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	var ms runtime.MemStats
	n := 0
	err = Each(sp, func(c *Case) error {
		n++
		if n%20000 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak {
				peak = ms.HeapInuse
			}
		}
		return nil
	})
	if err != nil || n != 120000 {
		t.Fatalf("Each: %v after %d", err, n)
	}
	if peak > uint64(st.Size())/3 {
		t.Errorf("heap in use reached %d bytes for a %d-byte file", peak, st.Size())
	}
	info, err := Scan(sp)
	if err != nil || info.Count != 120000 {
		t.Fatalf("Scan: %v", err)
	}
}

// repeatReader yields b n times.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := len(p)
	if k > r.n {
		k = r.n
	}
	for i := 0; i < k; i++ {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}

func TestOverlongRowsAreBounded(t *testing.T) {
	longtest.Skip(t)
	// JSONL: the long line is reported and skipped; the next line still reads.
	sp := &spec.Spec{Dataset: spec.Dataset{Path: "d.jsonl", Format: "jsonl", ID: "line"}}
	in := io.MultiReader(strings.NewReader(`{"q": "`), &repeatReader{'x', MaxRowBytes}, strings.NewReader("\"}\n{\"q\": \"ok\"}\n"))
	r, probs, err := newReader(sp, "d.jsonl", in)
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	info, err := r.scan(&Info{}, nil)
	var ps spec.Problems
	if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Line != 1 || !strings.Contains(ps[0].Msg, "longer than 64 MiB") || info.Cases != 1 {
		t.Errorf("jsonl: %v, %+v", err, info)
	}

	// CSV: a quote that never closes stops reading at the bound.
	sp = &spec.Spec{Dataset: spec.Dataset{Path: "d.csv", Format: "csv", ID: "line"}}
	in = io.MultiReader(strings.NewReader("q\nok\n\""), &repeatReader{'x', MaxRowBytes + 1<<20})
	r, probs, err = newReader(sp, "d.csv", in)
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	info, err = r.scan(&Info{}, nil)
	if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Line != 2 || !strings.Contains(ps[0].Msg, "longer than 64 MiB") || info.Cases != 1 {
		t.Errorf("csv: %v, %+v", err, info)
	}
}

// A JSONL line whose object repeats a key is a problem at the repeated
// key, naming it and the object that holds it; the lines around it are
// still cases.
func TestJSONLDuplicateKeys(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "bad", "duplicate_keys.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	col := func(line int, key string) int { return strings.LastIndex(lines[line-1], key) + 1 }
	sp := specFor(t, "d.jsonl", string(data), "  id: id\n")
	want := []string{
		fmt.Sprintf(`d.jsonl:2:%d: duplicate key "total"`, col(2, `"total"`)),
		fmt.Sprintf(`d.jsonl:3:%d: duplicate key "sku" in the object at inv.items[1]`, col(3, `"sku"`)),
		fmt.Sprintf(`d.jsonl:4:%d: duplicate key "total"`, col(4, `"total"`)), // "\u0074otal" is "total"
	}
	got := problems(t, sp)
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]+":") {
			t.Errorf("problem %q, want it to start %q", got[i], want[i])
		}
	}
	var ids []string
	r, err := Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		c, err := r.Next()
		if err == io.EOF {
			break
		}
		if c != nil {
			ids = append(ids, c.ID)
		}
	}
	if strings.Join(ids, ",") != "a" {
		t.Errorf("cases %v, want only a (the others repeat a key)", ids)
	}
}

// Numbers reach Expected and Vars as written, so 9007199254740993 (which
// float64 rounds to …992) is still itself; CEL tags read them as numbers.
func TestJSONLNumbersStayExact(t *testing.T) {
	data := `{"id": 1, "answer": 9007199254740993, "big": 12345678901234567891, "x": 1.50}` + "\n"
	sp := specFor(t, "d.jsonl", data, "  id: id\n  expected: answer\n  tags: {odd: 'case.answer % 2 == 1 ? \"odd\" : \"even\"', big: 'string(case.big)', x: 'case.x > 1.4 ? \"hi\" : \"lo\"'}\n")
	cs := collect(t, sp)
	if len(cs) != 1 {
		t.Fatalf("%d cases", len(cs))
	}
	c := cs[0]
	if c.Expected != json.Number("9007199254740993") || c.Vars["big"] != json.Number("12345678901234567891") || c.Vars["x"] != json.Number("1.50") {
		t.Errorf("expected %#v, vars %#v", c.Expected, c.Vars)
	}
	if want := map[string]string{"odd": "odd", "big": "12345678901234567891", "x": "hi"}; !reflect.DeepEqual(c.Tags, want) {
		t.Errorf("tags %v, want %v", c.Tags, want)
	}
}

// DuplicateKey agrees with a decoder that records every key it sees.
func TestDuplicateKey(t *testing.T) {
	for _, c := range []struct {
		in, key, path string
	}{
		{`{"a": 1, "b": {"a": 2}}`, "", ""},
		{`{"a": "b", "b": 1}`, "", ""},
		{`{"a": 1, "a": 2}`, "a", ""},
		{`[{"x": [{"k": 1, "k": 2}]}]`, "k", "[0].x[0]"},
		{`{"a\"b": 1, "a\u0022b": 2}`, `a"b`, ""},
		{`{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"3":0}`, "3", ""},
		{`{"s": "{\"a\": 1, \"a\": 2}"}`, "", ""},
	} {
		key, _, path, found := DuplicateKey([]byte(c.in))
		if found != (c.key != "") || key != c.key || path != c.path {
			t.Errorf("DuplicateKey(%s) = %q at %q (found %v), want %q at %q", c.in, key, path, found, c.key, c.path)
		}
	}
}

// A tag naming a field no case has is a problem in the spec, unless it is
// the spec's difficulty tag: a rating people give in assay serve, which no
// case has before the first rating (the cases then have no such tag).
func TestUnratedDifficultyTagIsNoProblem(t *testing.T) {
	data := "{\"id\": \"a\", \"q\": 1}\n{\"id\": \"b\", \"q\": 2}\n"
	tags := "  id: id\n  tags: {tier: tier}\n"
	sp := specFor(t, "d.jsonl", data, tags)
	if ps := problems(t, sp); len(ps) != 1 || !strings.Contains(ps[0], `tag "tier" names field "tier" that the dataset lacks`) {
		t.Errorf("problems = %v, want the tag's missing field", ps)
	}
	sp = specFor(t, "d.jsonl", data, tags+"difficulty: {tag: tier, levels: [easy, hard]}\n")
	if ps := problems(t, sp); len(ps) != 0 {
		t.Errorf("problems = %v, want none: the difficulty tag is rated later", ps)
	}
	for _, c := range collect(t, sp) {
		if v, ok := c.Tags["tier"]; ok {
			t.Errorf("case %s has tier %q before any rating", c.ID, v)
		}
	}
}
