package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

// hashCases are written below as CSV and JSONL in several ways. Every
// value is a string (as CSV cells are), so the two formats hold the same
// cases; the question has a comma, a quote and a line break, which CSV
// must quote.
var hashCases = []map[string]string{
	{"id": "r1", "question": "Refund my order, please", "answer": "refund", "bucket": "billing", "w": "2"},
	{"id": "r2", "question": `The "premium" plan:` + "\n" + "cancel it", "answer": "cancel", "bucket": "account", "w": "1"},
	{"id": "r3", "question": "¿Dónde está mi pedido?", "answer": "where", "bucket": "shipping", "w": "0.5"},
}

var hashColumns = []string{"id", "question", "answer", "bucket", "w"}

const hashDatasetYAML = "  id: id\n  expected: answer\n  weight: w\n  tags: {bucket: bucket}\n"

// csvText writes hashCases as CSV: quoting only where needed, or every
// cell (header included) when quoteAll.
func csvText(quoteAll bool) string {
	cell := func(s string) string {
		if quoteAll || strings.ContainsAny(s, ",\"\n\r") {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
		return s
	}
	var b strings.Builder
	row := func(vals []string) {
		for i, v := range vals {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(cell(v))
		}
		b.WriteByte('\n')
	}
	row(hashColumns)
	for _, c := range hashCases {
		var vals []string
		for _, k := range hashColumns {
			vals = append(vals, c[k])
		}
		row(vals)
	}
	return b.String()
}

// jsonlText writes hashCases as JSONL with the keys in the order given;
// asciiEscape writes non-ASCII characters as \uXXXX escapes.
func jsonlText(keys []string, asciiEscape bool) string {
	var b strings.Builder
	for _, c := range hashCases {
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			v, _ := json.Marshal(c[k])
			s := string(v)
			if asciiEscape {
				var e strings.Builder
				for _, r := range s {
					if r > 127 {
						fmt.Fprintf(&e, `\u%04x`, r)
					} else {
						e.WriteRune(r)
					}
				}
				s = e.String()
			}
			fmt.Fprintf(&b, "%q: %s", k, s)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

const bom = "\xef\xbb\xbf"

// TestContentHashIgnoresEncoding: the same cases saved as CSV (LF, CRLF,
// with a byte-order mark, every cell quoted) and as JSONL (keys in
// another order, CRLF, a BOM, non-ASCII escaped) are one dataset version,
// while each file's byte hash is its own.
func TestContentHashIgnoresEncoding(t *testing.T) {
	reordered := []string{"w", "bucket", "answer", "question", "id"}
	files := []struct{ name, file, data string }{
		{"csv LF", "d.csv", csvText(false)},
		{"csv CRLF", "d.csv", crlf(csvText(false))},
		{"csv BOM", "d.csv", bom + csvText(false)},
		{"csv quoted", "d.csv", csvText(true)},
		{"csv BOM CRLF quoted", "d.csv", bom + crlf(csvText(true))},
		{"jsonl LF", "d.jsonl", jsonlText(hashColumns, false)},
		{"jsonl reordered", "d.jsonl", jsonlText(reordered, false)},
		{"jsonl CRLF", "d.jsonl", crlf(jsonlText(hashColumns, false))},
		{"jsonl BOM CRLF reordered escaped", "d.jsonl", bom + crlf(jsonlText(reordered, true))},
	}
	hashes := map[string][]string{}
	fileHashes := map[string]string{}
	for _, f := range files {
		sp := specFor(t, f.file, f.data, hashDatasetYAML)
		info, err := Scan(sp)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if info.Cases != len(hashCases) {
			t.Fatalf("%s: %d cases, want %d", f.name, info.Cases, len(hashCases))
		}
		hashes[info.Hash] = append(hashes[info.Hash], f.name)
		if other, dup := fileHashes[info.FileHash]; dup {
			t.Fatalf("%s and %s have one byte hash: the variants are not different files", f.name, other)
		}
		fileHashes[info.FileHash] = f.name
	}
	if len(hashes) != 1 {
		t.Errorf("the same cases have %d dataset hashes: %v", len(hashes), hashes)
	}
}

// TestCSVWithBOMAndQuotedHeader: a byte-order mark before a quoted header
// cell (a spreadsheet's "CSV UTF-8" export) is not a bare quote.
func TestCSVWithBOMAndQuotedHeader(t *testing.T) {
	sp := specFor(t, "d.csv", bom+"\"id\",\"q\"\n\"1\",\"a\"\n", "  id: id\n")
	cs := collect(t, sp)
	if len(cs) != 1 || cs[0].ID != "1" || cs[0].Vars["q"] != "a" {
		t.Fatalf("cases %+v", cs)
	}
}

// TestContentHashChangesWithCases: any change to what a case is — a
// value, a number's written form, a key, an ID, the order, or what the
// spec reads as expected, tags and weight — is a new version.
func TestContentHashChangesWithCases(t *testing.T) {
	base := `{"id": "a", "q": "x", "n": 1.50, "ans": "y", "t": "k", "w": 2}` + "\n" + `{"id": "b", "q": "z", "n": 2, "ans": "y", "t": "k", "w": 1}` + "\n"
	baseYAML := "  id: id\n  expected: ans\n  weight: w\n  tags: {t: t}\n"
	hashOf := func(t *testing.T, data, yaml string) string {
		t.Helper()
		info, err := Scan(specFor(t, "d.jsonl", data, yaml))
		if err != nil {
			t.Fatalf("%v", err)
		}
		return info.Hash
	}
	want := hashOf(t, base, baseYAML)
	for _, c := range []struct{ name, data, yaml string }{
		{"a value", strings.Replace(base, `"q": "x"`, `"q": "x "`, 1), baseYAML},
		{"a number as written", strings.Replace(base, `1.50`, `1.5`, 1), baseYAML},
		{"a number made a string", strings.Replace(base, `"n": 2`, `"n": "2"`, 1), baseYAML},
		{"a key added", strings.Replace(base, `"q": "x"`, `"q": "x", "extra": null`, 1), baseYAML},
		{"an ID", strings.Replace(base, `"id": "b"`, `"id": "c"`, 1), baseYAML},
		{"the order", strings.Join([]string{strings.Split(base, "\n")[1], strings.Split(base, "\n")[0], ""}, "\n"), baseYAML},
		{"a case removed", strings.Split(base, "\n")[0] + "\n", baseYAML},
		{"the expected field", base, "  id: id\n  expected: q\n  weight: w\n  tags: {t: t}\n"},
		{"the tags", base, "  id: id\n  expected: ans\n  weight: w\n  tags: {t: t, q: q}\n"},
		{"the weight", base, "  id: id\n  expected: ans\n  tags: {t: t}\n"},
		// A value that holds what looks like the encoding's separators is
		// not confused with two fields.
		{"an injected key", strings.Replace(base, `"q": "x"`, `"q": "x\",\"r\":\"s"`, 1), baseYAML},
	} {
		if got := hashOf(t, c.data, c.yaml); got == want {
			t.Errorf("%s: the hash did not change", c.name)
		}
	}
}

// TestCSVAndJSONLNumbersDiffer: CSV cells are strings, JSON numbers are
// numbers, so the same table with a number column hashes differently in
// the two formats (docs/versioning.md says so).
func TestCSVAndJSONLNumbersDiffer(t *testing.T) {
	a, err := Scan(specFor(t, "d.csv", "id,n\n1,5\n", "  id: id\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Scan(specFor(t, "d.jsonl", `{"id": "1", "n": 5}`+"\n", "  id: id\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Scan(specFor(t, "d.jsonl", `{"id": "1", "n": "5"}`+"\n", "  id: id\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash == b.Hash {
		t.Errorf("CSV cell \"5\" and JSON number 5 hash equal")
	}
	if a.Hash != c.Hash {
		t.Errorf("CSV cell \"5\" and JSON string \"5\" hash differently: %s vs %s", a.Hash, c.Hash)
	}
}

// TestContentHashStreams: the hash is made one case at a time — reading
// through Next gives Scan's hash, and the encoding buffer does not keep a
// huge row.
func TestContentHashStreams(t *testing.T) {
	big := `{"id": "big", "q": "` + strings.Repeat("a", 2<<20) + `"}` + "\n"
	data := big + `{"id": "small", "q": "b"}` + "\n"
	sp := specFor(t, "d.jsonl", data, "  id: id\n")
	info, err := Scan(sp)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		_, err := r.Next()
		if err != nil {
			break
		}
		n++
		if cap(r.enc) > 1<<20 {
			t.Fatalf("after case %d the encoding buffer holds %d bytes", n, cap(r.enc))
		}
	}
	if r.Hash() != info.Hash || r.FileHash() != info.FileHash {
		t.Errorf("Next gives %s/%s, Scan %s/%s", r.Hash(), r.FileHash(), info.Hash, info.FileHash)
	}
}

// FuzzContentHashLineEnds: whatever a valid JSONL or CSV file holds, the
// same file with CRLF line ends or a byte-order mark is the same dataset
// version (files with a carriage return already in them are skipped: CSV
// reads one inside a quoted cell as part of the value).
func FuzzContentHashLineEnds(f *testing.F) {
	f.Add([]byte(`{"id": "a", "answer": "x\n#### 4", "w": 2, "k": "v"}`+"\n"+`{"id": "b", "answer": "#### 1.50"}`+"\n"), false)
	f.Add([]byte("id,answer,w,k\na,\"x\n#### 4\",2,v\n\"b\",\"q \"\"z\"\" #### 7\",,\n"), true)
	f.Add([]byte("\"id\",\"answer\"\n\"1\",\"#### 2\"\n"), true)
	f.Add([]byte(`{"k": "t", "id": 12345678901234567890, "answer": "#### 3", "nested": {"b": [1, {"z": null, "a": true}]}}`+"\n\n"), false)
	f.Fuzz(func(t *testing.T, src []byte, isCSV bool) {
		if len(src) > 1<<14 || bytes.ContainsRune(src, '\r') || bytes.HasPrefix(src, []byte(bom)) {
			return
		}
		format := "jsonl"
		if isCSV {
			format = "csv"
		}
		scan := func(b []byte) (*Info, error) {
			sp := fuzzSpec(format)
			r, probs, err := newReader(sp, sp.Dataset.Path, bytes.NewReader(b))
			if err != nil {
				return nil, err
			}
			return r.scan(&Info{}, probs)
		}
		want, err := scan(src)
		if err != nil || want.Cases == 0 {
			return
		}
		for name, b := range map[string][]byte{
			"CRLF": bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n")),
			"BOM":  append([]byte(bom), src...),
		} {
			got, err := scan(b)
			var ps spec.Problems
			if errors.As(err, &ps) {
				t.Fatalf("%s: the file read before but not now: %v", name, ps)
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got.Hash != want.Hash {
				t.Fatalf("%s: dataset hash %s, want %s", name, got.Hash, want.Hash)
			}
		}
	})
}

// BenchmarkCaseHash is the content hash's own cost per case (encoding and
// SHA-256), on a case shaped like BenchmarkScan's: a 46-word question, an
// answer, two tags. Compare with BenchmarkScan's time per case.
//
//	go test -run='^$' -bench=CaseHash ./internal/dataset/
func BenchmarkCaseHash(b *testing.B) {
	q := strings.TrimSpace(strings.Repeat("kobari tesa 417 venmo dorpi ", 9)) + "?"
	c := &Case{ID: "q12345", Vars: map[string]any{"id": "q12345", "question": q, "answer": "417", "bucket": "edge", "tier": "3"},
		Expected: "417", Tags: map[string]string{"bucket": "edge", "tier": "3"}}
	r := &Reader{ch: sha256.New()}
	b.ReportAllocs()
	for b.Loop() {
		r.enc = appendCase(r.enc[:0], c)
		r.ch.Write(r.enc)
	}
}
