package probe

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

// FuzzTwinFile feeds arbitrary bytes to the twin-file join, as JSONL and
// as CSV. It must never panic, and either every problem is located in the
// twin file (line ≥ 1) or every twin joins a case of the dataset, once,
// with the fields the prompt uses.
func FuzzTwinFile(f *testing.F) {
	for _, name := range []string{"good.jsonl", "good.csv", "bad_json.jsonl", "duplicate.jsonl", "missing_field.jsonl", "no_answer.jsonl", "unknown_id.jsonl", "no_id_field.jsonl"} {
		b, err := os.ReadFile(filepath.Join(twinDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, strings.HasSuffix(name, ".csv"))
	}
	f.Add([]byte("\xef\xbb\xbf{\"id\":\"a\",\"question\":\"q\",\"unit\":\"u\",\"answer\":\"#### 1\"}\r\n"), false)
	f.Add([]byte("id,question,unit,answer\r\na,\"q\"\"x\",u,#### 2\r\n"), true)
	sp, isCase, ids := fixtureSpec(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, csv bool) {
		name := "twins.jsonl"
		if csv {
			name = "twins.csv"
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := ReadFile(sp, FileOptions{Path: path, Needs: promptFields}, isCase, ids)
		if err != nil {
			var ps spec.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("not problems: %v", err)
			}
			for _, p := range ps {
				if p.File != path || p.Line < 1 || p.Col < 1 || p.Msg == "" {
					t.Fatalf("problem not located in the twin file: %+v", p)
				}
			}
			return
		}
		for id, tw := range file.Twins {
			if !isCase(id) || tw.CaseID != id {
				t.Fatalf("twin %q joins no case", id)
			}
			for _, f := range promptFields {
				if _, ok := tw.Vars[f]; !ok {
					t.Fatalf("twin %q lacks %s", id, f)
				}
			}
			if !tw.OwnExpected {
				t.Fatalf("twin %q has no expected value of its own", id)
			}
		}
	})
}
