package probe

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/spec"
)

const twinDir = "testdata/twins"

// fixtureSpec loads the fixture spec and the IDs of its dataset.
func fixtureSpec(t testing.TB) (*spec.Spec, func(string) bool, []string) {
	t.Helper()
	sp, err := spec.Load(filepath.Join(twinDir, "assay.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var list []string
	if err := dataset.Each(sp, func(c *dataset.Case) error { ids[c.ID] = true; list = append(list, c.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	return sp, func(id string) bool { return ids[id] }, list
}

var promptFields = []string{"question", "unit"}

func TestReadTwinFileJSONL(t *testing.T) {
	sp, isCase, ids := fixtureSpec(t)
	f, err := ReadFile(sp, FileOptions{Path: filepath.Join(twinDir, "good.jsonl"), Needs: promptFields}, isCase, ids)
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != "jsonl" || f.IDField != "id" || !strings.HasPrefix(f.Hash, "sha256:") {
		t.Errorf("file %+v", f)
	}
	if len(f.Twins) != 2 || f.Twins["b"] != nil {
		t.Fatalf("twins %v, want a and c (b has none)", f.Twins)
	}
	a, c := f.Twins["a"], f.Twins["c"]
	// The twins' own answers, read with the spec's expected_extract.
	if a.Expected != "20" || c.Expected != "21" || !a.OwnExpected {
		t.Errorf("expected values %v, %v (own %v), want 20 and 21 from the twins", a.Expected, c.Expected, a.OwnExpected)
	}
	if a.Line != 1 || c.Line != 3 || a.Vars["question"] != "How many legs do 5 dogs have?" {
		t.Errorf("twin a %+v, c %+v", a, c)
	}
}

// A CSV twin file with a quoted field spanning lines, joined by a field of
// its own (--twin-id case).
func TestReadTwinFileCSVWithOwnIDField(t *testing.T) {
	sp, isCase, ids := fixtureSpec(t)
	f, err := ReadFile(sp, FileOptions{Path: filepath.Join(twinDir, "good.csv"), IDField: "case", Needs: promptFields}, isCase, ids)
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Twins["a"], f.Twins["b"]
	if a == nil || b == nil || a.Vars["question"] != "How many legs\ndo 5 dogs have?" || a.Expected != "20" || b.Line != 4 {
		t.Errorf("twins %+v, %+v", a, b)
	}
}

// Every bad twin file gives every problem, located FILE:LINE:COL in the
// twin file, with what would be valid. The expectations were written by
// reading the fixtures.
func TestBadTwinFiles(t *testing.T) {
	sp, isCase, ids := fixtureSpec(t)
	p := func(name string) string { return filepath.Join(twinDir, name) }
	tests := []struct {
		file, idField string
		want          []string
	}{
		{"bad_json.jsonl", "", []string{
			p("bad_json.jsonl") + `:2:61: invalid JSON: invalid character 'u' after object key:value pair (each line must be one JSON object, like {"question": "…", "answer": "…"})`,
			p("bad_json.jsonl") + `:3:1: line holds an array, not a JSON object (each line must be one JSON object, like {"question": "…", "answer": "…"})`,
		}},
		{"duplicate.jsonl", "", []string{
			p("duplicate.jsonl") + `:3:2: duplicate case id "a" at line 3 (first at line 1) (case ids must be unique)`,
		}},
		{"missing_field.jsonl", "", []string{
			p("missing_field.jsonl") + `:2:1: twin lacks field "unit" that the prompt uses (1 of 3 twins lack it) (every twin needs each field the prompt uses and its own expected value)`,
			p("missing_field.jsonl") + `:3:1: twin lacks field "question" that the prompt uses (1 of 3 twins lack it) (every twin needs each field the prompt uses and its own expected value)`,
		}},
		{"no_answer.jsonl", "", []string{
			p("no_answer.jsonl") + `:2:1: twin lacks field "answer" that holds the expected value (dataset.expected) (1 of 3 twins lack it) (every twin needs each field the prompt uses and its own expected value)`,
			p("no_answer.jsonl") + `:3:74: expected field "answer" does not match dataset.expected_extract (the value is "twenty-one")`,
		}},
		{"unknown_id.jsonl", "", []string{
			p("unknown_id.jsonl") + `:2:1: twin ID "zz" matches no case of the dataset (twins join the cases by ID (dataset.id, or --twin-id FIELD); the dataset's IDs look like: a, b, c)`,
			p("unknown_id.jsonl") + `:3:1: twin ID "7" matches no case of the dataset (twins join the cases by ID (dataset.id, or --twin-id FIELD); the dataset's IDs look like: a, b, c)`,
		}},
		{"no_id_field.jsonl", "", []string{
			p("no_id_field.jsonl") + `:1:1: the twin file has no ID field "id" (fields: answer, case, question, unit) (twins join the cases by ID: name the twin file's ID field with --twin-id)`,
		}},
		{"good.csv", "cases", []string{
			p("good.csv") + `:1:1: the twin file has no ID field "cases" (fields: answer, case, question, unit) (did you mean --twin-id case?)`,
		}},
		{"good.jsonl", "nope", []string{
			p("good.jsonl") + `:1:1: the twin file has no ID field "nope" (fields: answer, id, question, unit) (twins join the cases by ID: name the twin file's ID field with --twin-id)`,
		}},
		{"empty.jsonl", "", []string{
			p("empty.jsonl") + `:1:1: the dataset has no cases (write one case per line in JSONL, or one per row under a header in CSV)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.idField, func(t *testing.T) {
			_, err := ReadFile(sp, FileOptions{Path: p(tt.file), IDField: tt.idField, Needs: promptFields}, isCase, ids)
			var ps spec.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("err = %v, want problems", err)
			}
			var got []string
			for _, pr := range ps {
				got = append(got, pr.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestTwinFileThatCannotBeRead(t *testing.T) {
	sp, isCase, ids := fixtureSpec(t)
	for _, tt := range []struct{ path, format, want string }{
		{filepath.Join(twinDir, "absent.jsonl"), "", "twin file testdata/twins/absent.jsonl: no such file"},
		{twinDir + ".jsonl", "", "no such file"},
		{filepath.Join(twinDir, "twins.txt"), "", `cannot tell the format of twin file "twins.txt" from its name (name it .jsonl or .csv, or say --twins-format jsonl|csv)`},
		{filepath.Join(twinDir, "twins.txt"), "xml", `unknown twin file format "xml" (supported formats are: jsonl, csv)`},
	} {
		_, err := ReadFile(sp, FileOptions{Path: tt.path, Format: tt.format, Needs: promptFields}, isCase, ids)
		var ps spec.Problems
		if err == nil || errors.As(err, &ps) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want an error saying %q", tt.path, err, tt.want)
		}
	}
	// A directory is named as one.
	if err := func() error {
		_, err := ReadFile(sp, FileOptions{Path: twinDir, Format: "jsonl"}, isCase, ids)
		return err
	}(); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("a directory: %v", err)
	}
	// --twins-format csv reads a .txt file as CSV.
	if _, err := ReadFile(sp, FileOptions{Path: filepath.Join(twinDir, "twins.txt"), Format: "csv", Needs: []string{"question"}}, isCase, ids); err == nil || !strings.Contains(err.Error(), "no cases") {
		t.Errorf("header-only CSV: %v", err)
	}
}

// The set ID of a twin file changes with anything that changes the twins
// (the dataset, the file's bytes, the join field, the expected value's
// reading) and with nothing else.
func TestFileSetID(t *testing.T) {
	ds := spec.Dataset{Expected: "answer", ExpectedExtract: "(.*)"}
	base := FileSetID("sha256:d", "sha256:f", "id", ds)
	if !strings.HasPrefix(base, "sha256:") || len(base) != 71 {
		t.Fatalf("set ID %q", base)
	}
	other := ds
	other.ExpectedExtract = "(x)"
	for name, id := range map[string]string{
		"dataset":  FileSetID("sha256:e", "sha256:f", "id", ds),
		"file":     FileSetID("sha256:d", "sha256:g", "id", ds),
		"id field": FileSetID("sha256:d", "sha256:f", "line", ds),
		"extract":  FileSetID("sha256:d", "sha256:f", "id", other),
	} {
		if id == base {
			t.Errorf("changing the %s keeps the set ID", name)
		}
	}
	same := ds
	same.Path, same.Limit, same.Tags = "elsewhere.jsonl", 5, []spec.Tag{{Key: "k", Expr: "v"}}
	if FileSetID("sha256:d", "sha256:f", "id", same) != base {
		t.Error("the dataset's path, limit or tags changed the set ID")
	}
}
