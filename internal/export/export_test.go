package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// fixture stores a run of two cases × two targets with scorers exact and
// judge (the judge scored only some results), and writes its dataset.
func fixture(t *testing.T) (store.Store, *record.Run) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "cases.jsonl")
	if err := os.WriteFile(data, []byte("{\"id\":\"a\",\"q\":\"2+2?\",\"answer\":4}\n{\"id\":\"b\",\"q\":\"say \\\"hi\\\"\",\"answer\":\"hi\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := fileHash(data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := `{"name":"t","dataset":{"path":"cases.jsonl","format":"jsonl","id":"id","expected":"answer"}}`
	run := &record.Run{ID: "run1", Spec: "t", SpecPath: filepath.Join(dir, "assay.yaml"), DatasetHash: h,
		Targets: []string{"m1", "m2"}, Cases: 2, Epochs: 1, Status: record.StatusComplete, Started: time.Now(), Config: []byte(cfg)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := st.PutCases(ctx, []record.Case{
		{RunID: "run1", ID: "a", Line: 1, Expected: []byte(`4`), Tags: map[string]string{"bucket": "common"}},
		{RunID: "run1", ID: "b", Line: 2, Expected: []byte(`"hi"`)},
	}); err != nil {
		t.Fatal(err)
	}
	var rs []record.Result
	var ss []record.Score
	for _, c := range []string{"a", "b"} {
		for _, tg := range []string{"m1", "m2"} {
			r := record.Result{RunID: "run1", CaseID: c, Target: tg, Epoch: 1, Raw: "A: 4,\n\"quoted\"\r\n=cmd()", Parsed: `"4"`,
				InputTokens: 10, OutputTokens: 3, CostUSD: 0.001, LatencyMS: 12.5, Attempts: 1}
			pass := c == "a"
			if c == "b" && tg == "m2" {
				r.Raw, r.Parsed, r.ErrorKind, r.Error, r.Attempts = "", "", "rate_limited", "rate_limited (HTTP 429)", 6
			}
			if c == "a" && tg == "m1" {
				// Tool calls, the second's arguments not valid JSON.
				r.ToolCalls = []record.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"q": "2+2"}`}, {Name: "calc", Arguments: `{"expr": "2+`}}
				// An agent loop's two turns: the calls answered, then the
				// answer.
				r.Turns = []record.Turn{
					{ToolCalls: r.ToolCalls, Results: []record.ToolResult{{CallID: "c1", Name: "lookup", Content: "4", LatencyMS: 3}, {CallID: "call_1_2", Name: "calc", Content: "error: the arguments are not a JSON object"}}, InputTokens: 10, OutputTokens: 5, LatencyMS: 20},
					{Text: "4", FinishReason: "stop", InputTokens: 30, OutputTokens: 1, CostUSD: 0.001, LatencyMS: 15},
				}
			}
			if c == "b" && tg == "m1" {
				// Served from the cache: nothing paid, its price saved.
				r.FromCache, r.CostUSD, r.SavedUSD = true, 0, 0.001
			}
			rs = append(rs, r)
			s := record.Score{RunID: "run1", Scoring: 1, CaseID: c, Target: tg, Epoch: 1, Scorer: "exact", Primary: true, Pass: pass, Shape: "pass"}
			if pass {
				s.Value = 1
			} else {
				s.Shape, s.Kind, s.Reason = "silent", "wrong", "expected hi, got 4"
				s.ParseNote = "fenced"
				s.Fields = []record.FieldVerdict{{Field: "a.b", Status: "ok"}, {Field: "say \"x\"", Status: "wrong"}}
			}
			ss = append(ss, s)
			if tg == "m1" {
				ss = append(ss, record.Score{RunID: "run1", Scoring: 1, CaseID: c, Target: tg, Epoch: 1, Scorer: "judge", Pass: true, Value: 0.75, Shape: "pass"})
			}
		}
	}
	if err := st.PutResults(ctx, rs, ss); err != nil {
		t.Fatal(err)
	}
	return st, run
}

func export(t *testing.T, st store.Store, run *record.Run, format string, inputs bool) string {
	t.Helper()
	names, err := st.ScorerNames(context.Background(), run.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	cols := Columns{Scorers: names, Inputs: inputs}
	src := Source{Store: st, Run: run, Scoring: 1, Columns: cols}
	if inputs {
		in, err := OpenInputs(run)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		src.Inputs = in
	}
	out := filepath.Join(t.TempDir(), "export."+format)
	err = WriteFile(out, format, cols, func(w Writer) error {
		return Rows(context.Background(), src, w.Write)
	})
	if err != nil {
		t.Fatalf("export %s: %v", format, err)
	}
	return out
}

// The three formats hold the same rows: one per case × target × epoch, with
// the case's fields, expected value, raw output byte for byte, each
// scorer's verdict (null where a scorer did not score), and the error.
func TestExportFormatsAgree(t *testing.T) {
	st, run := fixture(t)
	var all [][]map[string]any
	for _, format := range Formats {
		path := export(t, st, run, format, true)
		rows := readBack(t, path, format)
		if len(rows) != 4 {
			t.Fatalf("%s: %d rows, want 4", format, len(rows))
		}
		all = append(all, rows)
		// Row 3 is case b on m1: wrong, judged; row 4 is b on m2: a
		// rate-limited call the judge never saw.
		r := rows[0]
		if r["case_id"] != "a" || r["target"] != "m1" || r["raw"] != "A: 4,\n\"quoted\"\r\n=cmd()" {
			t.Errorf("%s: first row %v", format, r)
		}
		var in map[string]any
		if err := json.Unmarshal([]byte(r["inputs"].(string)), &in); err != nil || in["q"] != "2+2?" {
			t.Errorf("%s: inputs %v (%v); want the case's fields", format, r["inputs"], err)
		}
		if r["expected"] != "4" || r["tags"] != `{"bucket":"common"}` {
			t.Errorf("%s: expected %v, tags %v", format, r["expected"], r["tags"])
		}
		if r["pass"] != "true" || r["score.exact.pass"] != "true" || r["score.judge.value"] != "0.75" || r["scorer"] != "exact" {
			t.Errorf("%s: verdicts %v %v %v", format, r["pass"], r["score.exact.pass"], r["score.judge.value"])
		}
		b := rows[2]
		if b["case_id"] != "b" || b["pass"] != "false" || b["kind"] != "wrong" || b["score.exact.reason"] != "expected hi, got 4" {
			t.Errorf("%s: wrong row %v", format, b)
		}
		if b["parse_note"] != "fenced" || b["score.exact.fields"] != `{"a.b":"ok","say \"x\"":"wrong"}` || r["score.exact.fields"] != nil || r["parse_note"] != nil {
			t.Errorf("%s: parse note %v and per-field verdicts %v (first row %v, %v); want fenced, the fields in order as a JSON object, and nothing on a row without them", format, b["parse_note"], b["score.exact.fields"], r["parse_note"], r["score.exact.fields"])
		}
		if b["from_cache"] != "true" || b["cost_usd"] != "0" || b["saved_usd"] != "0.001" || r["saved_usd"] != "0" {
			t.Errorf("%s: cached row cost %v saved %v (from_cache %v), uncached row saved %v; want 0, 0.001, true, 0", format, b["cost_usd"], b["saved_usd"], b["from_cache"], r["saved_usd"])
		}
		e := rows[3]
		if e["error_kind"] != "rate_limited" || e["attempts"] != "6" || e["score.judge.pass"] != nil || e["parsed"] != nil {
			t.Errorf("%s: failed row %v; want the error, 6 attempts, null judge verdict and parsed", format, e)
		}
		if e["expected"] != `"hi"` {
			t.Errorf("%s: expected %v, want the JSON string \"hi\"", format, e["expected"])
		}
	}
	for i := 1; i < len(all); i++ {
		for j := range all[0] {
			for k, v := range all[0][j] {
				if all[i][j][k] != v {
					t.Errorf("row %d column %s: %s has %v, %s has %v", j, k, Formats[0], v, Formats[i], all[i][j][k])
				}
			}
			if len(all[i][j]) != len(all[0][j]) {
				t.Errorf("row %d: %s has %d columns, %s %d", j, Formats[0], len(all[0][j]), Formats[i], len(all[i][j]))
			}
		}
	}
}

// A dataset edited after the run would give other cases' inputs: the
// export refuses and says so.
func TestExportRefusesChangedDataset(t *testing.T) {
	st, run := fixture(t)
	data := filepath.Join(filepath.Dir(run.SpecPath), "cases.jsonl")
	if err := os.WriteFile(data, []byte("{\"id\":\"a\",\"q\":\"3+3?\",\"answer\":6}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenInputs(run)
	if !errors.Is(err, ErrDatasetChanged) || !strings.Contains(err.Error(), "cases.jsonl") {
		t.Fatalf("OpenInputs after the dataset changed: %v; want ErrDatasetChanged naming the file", err)
	}
	// Without inputs the export still works.
	rows := readBack(t, export(t, st, run, "csv", false), "csv")
	if len(rows) != 4 {
		t.Fatalf("%d rows without inputs", len(rows))
	}
	if _, ok := rows[0]["inputs"]; ok {
		t.Errorf("an export without inputs has an inputs column")
	}
}

// A failing export leaves no file behind, and an existing file as it was.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFile(out, "csv", Columns{}, func(w Writer) error {
		if err := w.Write(&Row{CaseID: "x"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteFile = %v, want boom", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Errorf("the existing file became %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
	if err := WriteFile(out, "xlsx", Columns{}, func(Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "jsonl, csv, parquet") {
		t.Errorf("unknown format: %v; want the formats listed", err)
	}
}

// readBack reads an export as rows of column → value, every value as the
// text a CSV cell holds ("" reads as nil), so the formats compare.
func readBack(t *testing.T, path, format string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	switch format {
	case "csv":
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs[1:] {
			m := map[string]any{}
			for i, v := range rec {
				if v == "" {
					m[recs[0][i]] = nil
				} else {
					m[recs[0][i]] = v
				}
			}
			rows = append(rows, m)
		}
		// Go's CSV reader drops the \r of a \r\n inside a quoted field;
		// put back what the writer wrote (Python's csv keeps it).
		for _, m := range rows {
			if s, ok := m["raw"].(string); ok {
				m["raw"] = strings.ReplaceAll(s, "\"\n=", "\"\r\n=")
			}
		}
	case "jsonl":
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			m := map[string]any{}
			for k, v := range raw {
				var s string
				switch {
				case string(v) == "null":
					m[k] = nil
				case json.Unmarshal(v, &s) == nil && k != "expected" && k != "parsed":
					m[k] = s
				default:
					var c bytes.Buffer
					_ = json.Compact(&c, v)
					m[k] = c.String()
				}
				if s, ok := m[k].(string); ok && s == "" {
					m[k] = nil
				}
			}
			rows = append(rows, m)
		}
	case "parquet":
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, _ := f.Stat()
		err = ReadParquet(f, fi.Size(), func(m map[string]any) error {
			for k, v := range m {
				if v != nil {
					m[k] = text(v)
				}
				if m[k] == "" {
					m[k] = nil
				}
			}
			rows = append(rows, m)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

// A run that recorded its dataset's content hash reads its inputs from
// the same cases saved another way (CRLF line ends, keys reordered, a
// byte-order mark); a changed case is still refused.
func TestExportInputsByContent(t *testing.T) {
	_, run := fixture(t)
	data := filepath.Join(filepath.Dir(run.SpecPath), "cases.jsonl")
	// The fixture's dataset hashes, as a run records them now.
	info := scanFixture(t, run)
	run.DatasetHash, run.FileHash = info.Hash, info.FileHash
	if err := os.WriteFile(data, []byte("\xef\xbb\xbf{\"answer\":4,\"q\":\"2+2?\",\"id\":\"a\"}\r\n{\"answer\":\"hi\",\"id\":\"b\",\"q\":\"say \\\"hi\\\"\"}\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := OpenInputs(run)
	if err != nil {
		t.Fatalf("OpenInputs on the same cases re-saved: %v", err)
	}
	f, err := in.Fields("b")
	in.Close()
	if err != nil || !strings.Contains(string(f), `"q":"say \"hi\""`) {
		t.Fatalf("fields of b: %s %v", f, err)
	}
	if err := os.WriteFile(data, []byte("{\"answer\":4,\"q\":\"2+2?\",\"id\":\"a\"}\r\n{\"answer\":\"hi\",\"id\":\"b\",\"q\":\"say hi\"}\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenInputs(run); !errors.Is(err, ErrDatasetChanged) {
		t.Fatalf("OpenInputs after a case changed: %v; want ErrDatasetChanged", err)
	}
	// A run recorded before content hashes (the byte hash only) needs
	// the same bytes.
	run.DatasetHash, run.FileHash = info.FileHash, ""
	if _, err := OpenInputs(run); !errors.Is(err, ErrDatasetChanged) || !strings.Contains(err.Error(), "only the file's byte hash") {
		t.Fatalf("OpenInputs for an old run after the bytes changed: %v", err)
	}
}

// scanFixture reads the run's dataset as `assay run` does.
func scanFixture(t *testing.T, run *record.Run) *dataset.Info {
	t.Helper()
	var sp spec.Spec
	if err := json.Unmarshal(run.Config, &sp); err != nil {
		t.Fatal(err)
	}
	sp.File, sp.Dir = run.SpecPath, filepath.Dir(run.SpecPath)
	info, err := dataset.Scan(&sp)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// A result's tool calls are one JSON column in every format: a nested list
// in JSONL, its text in CSV and Parquet, null for a result without calls;
// arguments are the text the model wrote, invalid JSON included.
func TestExportToolCalls(t *testing.T) {
	st, run := fixture(t)
	want := `[{"id":"c1","name":"lookup","arguments":"{\"q\": \"2+2\"}"},{"name":"calc","arguments":"{\"expr\": \"2+"}]`
	for _, format := range Formats {
		rows := readBack(t, export(t, st, run, format, false), format)
		if got := rows[0]["tool_calls"]; got != want {
			t.Errorf("%s: tool_calls %v\nwant %s", format, got, want)
		}
		if v, ok := rows[1]["tool_calls"]; !ok || v != nil {
			t.Errorf("%s: a result without calls has tool_calls %v (present %v), want null", format, v, ok)
		}
	}
}

// An agent loop's trajectory is one JSON column, turns, in every format:
// each turn's text, calls and tool results as stored; null for a result
// of a single call.
func TestExportTurns(t *testing.T) {
	st, run := fixture(t)
	want := `[{"text":"","tool_calls":[{"id":"c1","name":"lookup","arguments":"{\"q\": \"2+2\"}"},{"name":"calc","arguments":"{\"expr\": \"2+"}],` +
		`"results":[{"call_id":"c1","name":"lookup","content":"4","latency_ms":3},{"call_id":"call_1_2","name":"calc","content":"error: the arguments are not a JSON object","latency_ms":0}],` +
		`"input_tokens":10,"output_tokens":5,"cost_usd":0,"latency_ms":20},` +
		`{"text":"4","finish_reason":"stop","input_tokens":30,"output_tokens":1,"cost_usd":0.001,"latency_ms":15}]`
	for _, format := range Formats {
		rows := readBack(t, export(t, st, run, format, false), format)
		if got := rows[0]["turns"]; got != want {
			t.Errorf("%s: turns %v\nwant %s", format, got, want)
		}
		if v, ok := rows[1]["turns"]; !ok || v != nil {
			t.Errorf("%s: a single call has turns %v (present %v), want null", format, v, ok)
		}
	}
}
