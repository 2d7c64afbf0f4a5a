package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// Model output is hostile: whatever a model wrote (quotes, separators,
// newlines, a forged header line, bytes that are not UTF-8) comes back from
// the CSV and JSONL exports as one cell of one row, and from Parquet byte
// for byte.
func FuzzWriters(f *testing.F) {
	for _, s := range []string{"", "a,b", "\"", "x\ny", "x\r\ny", "run_id,case_id\n", "\x00\xff", "{\"raw\":1}", "=HYPERLINK()", "\u2028"} {
		f.Add(s, "judge")
	}
	f.Fuzz(func(t *testing.T, raw, scorer string) {
		if scorer == "" || strings.ContainsAny(scorer, "\x00") {
			return
		}
		cols := Columns{Scorers: []string{scorer}}
		row := &Row{RunID: "r", CaseID: raw, Raw: raw, Scores: []*Verdict{{Reason: raw}}}
		for _, format := range Formats {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, format, cols)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := w.Write(row); err != nil {
					t.Fatalf("%s: %v", format, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			want := raw
			switch format {
			case "csv":
				recs, err := csv.NewReader(&buf).ReadAll()
				if err != nil {
					t.Fatalf("csv does not read back: %v", err)
				}
				if len(recs) != 3 {
					t.Fatalf("csv: %d records, want a header and 2 rows", len(recs))
				}
				want = strings.ReplaceAll(raw, "\r\n", "\n") // Go's reader drops that \r
				if i := index(recs[0], "raw"); recs[1][i] != want || recs[2][i] != want {
					t.Errorf("csv raw %q, want %q", recs[1][i], want)
				}
				if i := index(recs[0], "score."+scorer+".reason"); i < 0 || recs[1][i] != want {
					t.Errorf("csv reason column missing or wrong")
				}
			case "jsonl":
				lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
				if len(lines) != 2 {
					t.Fatalf("jsonl: %d lines, want 2", len(lines))
				}
				var m map[string]any
				if err := json.Unmarshal(lines[0], &m); err != nil {
					t.Fatalf("jsonl line does not parse: %v", err)
				}
				if utf8.ValidString(raw) && m["raw"] != raw {
					t.Errorf("jsonl raw %q, want %q", m["raw"], raw)
				}
			case "parquet":
				var got []map[string]any
				b := buf.Bytes()
				if err := ReadParquet(bytes.NewReader(b), int64(len(b)), func(m map[string]any) error {
					got = append(got, m)
					return nil
				}); err != nil {
					t.Fatalf("parquet does not read back: %v", err)
				}
				if len(got) != 2 || got[0]["raw"] != raw {
					t.Errorf("parquet: %d rows, raw %q", len(got), got[0]["raw"])
				}
			}
		}
	})
}

func index(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	return -1
}
