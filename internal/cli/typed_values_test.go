package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// typedCases are issue 10's values: each recorded answer is written
// differently from, or is a float64 neighbour of, the expected value.
var typedCases = []struct {
	id, answer, expected string
	pass                 bool
}{
	{"whole", "12442.0", "12442", true},
	{"fraction", "1.50", "1.5", true},
	{"beyond-2^53", "9007199254740993", "9007199254740993", true},
	{"beyond-int64", "12345678901234567891", "12345678901234567891", true},
	{"neighbour", "9007199254740992", "9007199254740993", false}, // the same float64
}

// writeTypedTask writes the dataset and the replay records beside a spec
// made from body (which names them data.jsonl and recorded.jsonl).
func writeTypedTask(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	var data, rec strings.Builder
	for _, c := range typedCases {
		fmt.Fprintf(&data, `{"id": %q, "q": "total of invoice %s?", "answer": %s, "expected": {"total": %s}}`+"\n", c.id, c.id, c.expected, c.expected)
		fenced, _ := json.Marshal("Here it is:\n```json\n{\"total\": " + c.answer + "}\n```")
		fmt.Fprintf(&rec, `{"q": "total of invoice %s?", "text": %s, "object": {"total": %s}, "fenced": %s}`+"\n", c.id, c.answer, c.answer, fenced)
	}
	writeFile(t, filepath.Join(dir, "data.jsonl"), data.String())
	writeFile(t, filepath.Join(dir, "recorded.jsonl"), rec.String())
	path := filepath.Join(dir, "assay.yaml")
	writeFile(t, path, body)
	return path
}

// scoresOf reads a run's first scoring: case → scorer → score.
func scoresOf(t *testing.T, db, runID string) map[string]map[string]record.Score {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := map[string]map[string]record.Score{}
	err = st.Scores(ctx, runID, 1, func(s record.Score) error {
		k := s.Target + "/" + s.CaseID
		if out[k] == nil {
			out[k] = map[string]record.Score{}
		}
		out[k][s.Scorer] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// End to end through `assay run` on replay targets: the recorded answers
// 12442.0, 1.50, 9007199254740993 and 12345678901234567891 pass against
// 12442, 1.5, 9007199254740993 and 12345678901234567891 under equals,
// field_equals and CEL, as text and as JSON, and the neighbour
// 9007199254740992 fails under each. The target that wrapped its JSON in a
// fence is counted in the report's parse_tolerated, and fails every case
// under output.strict.
func TestTypedValuesEndToEnd(t *testing.T) {
	t.Parallel()
	e := cliEnv{env: map[string]string{}}
	db := filepath.Join(t.TempDir(), "assay.db")

	jsonSpec := writeTypedTask(t, `name: typed-json
dataset: {path: data.jsonl, id: id, expected: expected}
prompt: {user: "{{.q}}"}
targets:
  - {name: clean, provider: replay, replay: {path: recorded.jsonl, join: q, output: object}}
  - {name: chatty, provider: replay, replay: {path: recorded.jsonl, join: q, output: fenced}}
output: {format: json}
scorers:
  - {name: equals, type: equals, primary: true}
  - {name: field, type: field_equals, field: total}
  - {name: cel, type: cel, expr: 'output.total == expected.total'}
  - {name: cel_whole, type: cel, expr: 'output == expected'}
`)
	textSpec := writeTypedTask(t, `name: typed-text
dataset: {path: data.jsonl, id: id, expected: answer}
prompt: {user: "{{.q}}"}
targets:
  - {name: clean, provider: replay, replay: {path: recorded.jsonl, join: q, output: text}}
scorers:
  - {name: equals, type: equals, primary: true}
`)

	sum := runJSON(t, e, "run", jsonSpec, "--db", db)
	got := scoresOf(t, db, sum.RunID)
	for _, target := range []string{"clean", "chatty"} {
		for _, c := range typedCases {
			ss := got[target+"/"+c.id]
			for _, scorer := range []string{"equals", "field", "cel", "cel_whole"} {
				s, ok := ss[scorer]
				if !ok {
					t.Errorf("%s %s: no %s score", target, c.id, scorer)
					continue
				}
				if s.Pass != c.pass {
					t.Errorf("%s %s (answer %s, expected %s): %s pass %v (%s), want %v", target, c.id, c.answer, c.expected, scorer, s.Pass, s.Reason, c.pass)
				}
				wantNote := ""
				if target == "chatty" {
					wantNote = "fenced"
				}
				if s.ParseNote != wantNote {
					t.Errorf("%s %s: %s parse note %q, want %q", target, c.id, scorer, s.ParseNote, wantNote)
				}
			}
			if f := ss["field"]; !c.pass && (len(f.Fields) != 1 || f.Fields[0] != (record.FieldVerdict{Field: "total", Status: "wrong"})) {
				t.Errorf("%s %s: field verdicts %v, want total wrong", target, c.id, f.Fields)
			}
			if e := ss["equals"]; !c.pass && !strings.Contains(e.Reason, "got 9007199254740992, expected 9007199254740993") {
				t.Errorf("%s %s: reason %q does not show both numbers as written", target, c.id, e.Reason)
			}
		}
	}

	inv := runCLI(t, e, "report", sum.RunID, "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("report: exit %d %s", inv.code, inv.stderr)
	}
	var rep struct {
		Targets []struct {
			Name           string `json:"name"`
			ParseTolerated *int   `json:"parse_tolerated"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	tolerated := map[string]int{}
	for _, tg := range rep.Targets {
		if tg.ParseTolerated == nil {
			t.Fatalf("target %s has no parse_tolerated in the JSON report", tg.Name)
		}
		tolerated[tg.Name] = *tg.ParseTolerated
	}
	if tolerated["clean"] != 0 || tolerated["chatty"] != len(typedCases) {
		t.Errorf("parse_tolerated %v, want clean 0, chatty %d", tolerated, len(typedCases))
	}

	// The text answers, compared with the dataset's numbers.
	sum = runJSON(t, e, "run", textSpec, "--db", db)
	got = scoresOf(t, db, sum.RunID)
	for _, c := range typedCases {
		if s := got["clean/"+c.id]["equals"]; s.Pass != c.pass {
			t.Errorf("text %s (answer %s, expected %s): equals pass %v (%s), want %v", c.id, c.answer, c.expected, s.Pass, s.Reason, c.pass)
		}
	}

	// output.strict: the fenced target fails loudly, saying why.
	strictSpec := strings.Replace(readFileT(t, jsonSpec), "output: {format: json}", "output: {format: json, strict: true}", 1)
	writeFile(t, jsonSpec, strictSpec)
	sum = runJSON(t, e, "run", jsonSpec, "--db", db)
	got = scoresOf(t, db, sum.RunID)
	for _, c := range typedCases {
		if s := got["chatty/"+c.id]["equals"]; s.Pass || s.Kind != "unparseable" || !strings.Contains(s.Reason, "fence") || !strings.Contains(s.Reason, "output.strict") {
			t.Errorf("strict, fenced %s: pass %v kind %s (%s); want loud unparseable naming the fence and output.strict", c.id, s.Pass, s.Kind, s.Reason)
		}
		if s := got["clean/"+c.id]["equals"]; s.Pass != c.pass || s.ParseNote != "" {
			t.Errorf("strict, bare %s: pass %v note %q (%s), want %v", c.id, s.Pass, s.ParseNote, s.Reason, c.pass)
		}
	}
}
