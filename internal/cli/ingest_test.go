package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
	"github.com/assay-eval/assay/internal/traces"
)

const ingestSpec = `name: traffic
dataset: {path: cases.jsonl, expected: answer}
prompt: {user: "{{.question}}"}
targets:
  - {name: alpha, provider: replay, replay: {path: cases.jsonl, join: question, output: answer}}
scorers:
  - {name: exact, type: equals}
traces:
  input: request.messages
  output: response.text
  model: request.model
  time: ts
  input_tokens: usage.in
  output_tokens: usage.out
  prices:
    gpt-4o: {input_per_mtok: 2.5, output_per_mtok: 10}
`

// Private values planted in the log: none may reach the store's files.
const (
	plantedEmail = "jane.roe@example.org"
	plantedCard  = "4111 1111 1111 1111"
)

var ingestLines = []string{
	`{"ts":"2026-11-23T10:00:00Z","request":{"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Mail ` + plantedEmail + ` my receipt"}]},"response":{"text":"Done."},"usage":{"in":1000,"out":200},"route":"/mail"}`,
	`{"ts":"2026-11-23T10:01:00Z","request":{"model":"gpt-4o","messages":[{"role":"user","content":"Charge card ` + plantedCard + `"}]},"response":{"text":"Charged."},"usage":{"in":10,"out":2}}`,
	`{"ts":1795428180,"request":{"model":"local-llama","messages":"hello"},"response":{"text":"hi"}}`,
}

func ingestSetup(t *testing.T) (dir, specPath, db, logPath string) {
	t.Helper()
	dir = t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), `{"question":"q","answer":"a"}`+"\n")
	specPath = filepath.Join(dir, "assay.yaml")
	writeFile(t, specPath, ingestSpec)
	logPath = filepath.Join(dir, "logs", "app.jsonl")
	writeFile(t, logPath, strings.Join(ingestLines, "\n")+"\n")
	return dir, specPath, filepath.Join(dir, "store", "assay.db"), logPath
}

func countStored(t *testing.T, db string) int64 {
	t.Helper()
	st, err := sqlite.OpenExisting(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := st.CountTraces(context.Background(), store.TraceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func ingestJSON(t *testing.T, args ...string) traces.IngestResult {
	t.Helper()
	inv := runCLI(t, cliEnv{}, append([]string{"ingest"}, append(args, "--format", "json")...)...)
	if inv.code != 0 {
		t.Fatalf("ingest %v: exit %d\n%s", args, inv.code, inv.stderr)
	}
	var r traces.IngestResult
	if err := json.Unmarshal([]byte(inv.stdout), &r); err != nil {
		t.Fatalf("%v: %s", err, inv.stdout)
	}
	return r
}

// Ingesting a file again stores nothing twice (counted in the store, not
// from the output); a log that grew stores only its new lines.
func TestIngestTwiceStoresOnce(t *testing.T) {
	t.Parallel()
	_, specPath, db, logPath := ingestSetup(t)
	r := ingestJSON(t, specPath, logPath, "--db", db)
	if got := countStored(t, db); got != 3 {
		t.Fatalf("first ingest stored %d traces, want 3", got)
	}
	f := r.Files[0]
	if f.Lines != 3 || f.Stored != 3 || f.Duplicates != 0 || f.Redactions != 2 || f.Unpriced != 1 || f.Bad != 0 {
		t.Errorf("first summary %+v", f)
	}
	r = ingestJSON(t, specPath, logPath, "--db", db)
	if got := countStored(t, db); got != 3 {
		t.Errorf("the second ingest of the same file left %d traces, want 3", got)
	}
	if f := r.Files[0]; f.Stored != 0 || f.Duplicates != 3 {
		t.Errorf("second summary %+v", f)
	}
	// The log grows by one line: only it is new.
	grown := strings.Join(ingestLines, "\n") + "\n" + `{"request":{"model":"gpt-4o","messages":"more"},"response":{"text":"ok"}}` + "\n"
	if err := os.WriteFile(logPath, []byte(grown), 0o644); err != nil {
		t.Fatal(err)
	}
	r = ingestJSON(t, specPath, logPath, "--db", db)
	if got := countStored(t, db); got != 4 {
		t.Errorf("after the log grew: %d traces, want 4", got)
	}
	if f := r.Files[0]; f.Stored != 1 || f.Duplicates != 3 {
		t.Errorf("grown summary %+v", f)
	}
	// The text summary names the file and says what was redacted.
	inv := runCLI(t, cliEnv{}, "ingest", specPath, logPath, "--db", db)
	if inv.code != 0 || !strings.Contains(inv.stdout, logPath) || !strings.Contains(inv.stdout, "2 private values replaced by [REDACTED:<name>]") {
		t.Errorf("text summary: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
}

// The redaction happens before storage: the planted email and card number
// appear in no file of the store, and the stored trace holds the
// replacements, priced by its model.
func TestIngestRedactsBeforeStoring(t *testing.T) {
	t.Parallel()
	_, specPath, db, logPath := ingestSetup(t)
	ingestJSON(t, specPath, logPath, "--db", db)

	st, err := sqlite.OpenExisting(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	err = st.Traces(context.Background(), store.TraceFilter{}, func(tr *record.Trace) error {
		texts = append(texts, tr.System+"|"+tr.Input[len(tr.Input)-1].Content)
		if tr.Model == "gpt-4o" && (!tr.Priced || tr.CostUSD <= 0) {
			t.Errorf("trace %s of gpt-4o unpriced: %v %v", tr.ID, tr.Priced, tr.CostUSD)
		}
		if tr.Model == "local-llama" && tr.Priced {
			t.Errorf("local-llama priced")
		}
		return nil
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Be brief.|Mail [REDACTED:email] my receipt", "|Charge card [REDACTED:card]", "|hello"}
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("stored texts:\n%s\nwant:\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
	files, _ := filepath.Glob(db + "*") // the database, its WAL and shared memory
	if len(files) == 0 {
		t.Fatal("no store files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{plantedEmail, plantedCard, "4111111111111111"} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds %q", f, secret)
			}
		}
	}
}

// A bad line refuses the whole command before anything is stored (not
// even the store is created), every problem at FILE:LINE:COL; --skip-bad
// stores the good lines and counts the bad.
func TestIngestBadLines(t *testing.T) {
	t.Parallel()
	dir, specPath, db, logPath := ingestSetup(t)
	bad := filepath.Join(dir, "logs", "bad.jsonl")
	writeFile(t, bad, ingestLines[0]+"\n"+`{"request":{"messages":"hi"}}`+"\n\n"+`{"request":{"messages":7},"response":{"text":"x"}}`+"\n"+ingestLines[2]+"\n")

	inv := runCLI(t, cliEnv{}, "ingest", specPath, logPath, bad, "--db", db)
	if inv.code != ExitInvalid {
		t.Errorf("exit %d, want %d", inv.code, ExitInvalid)
	}
	wantErr := bad + `:2:1: the line has no "response.text" (traces.output) (every line needs the fields that traces.input and traces.output name)
` + bad + `:4:24: traces.input ("request.messages"): must be a string, a message or a list of messages, got the number 7 (a string, {"role": "user", "content": "..."}, or a list of such messages)
assay: ingest: 2 bad line(s); nothing was stored (fix them, or pass --skip-bad to store the good lines and count the bad)
`
	if inv.stderr != wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", inv.stderr, wantErr)
	}
	if _, err := os.Stat(filepath.Dir(db)); !os.IsNotExist(err) {
		t.Errorf("a refused ingest created the store's directory (%v)", err)
	}

	r := ingestJSON(t, specPath, logPath, bad, "--db", db, "--skip-bad")
	if got := countStored(t, db); got != 3 {
		t.Errorf("--skip-bad stored %d traces, want 3 (the good file's 3; the bad file's 2 good lines are the same lines)", got)
	}
	f := r.Files[1]
	if f.Lines != 4 || f.Bad != 2 || f.Stored != 0 || f.Duplicates != 2 || len(f.Problems) != 2 || f.Problems[1].Line != 4 || f.Problems[1].Col != 24 {
		t.Errorf("bad file's summary %+v", f)
	}
}

// The Markdown summary escapes a file name (it is the user's, but it lands
// in a page) and lists the bad lines skipped as items.
func TestIngestMarkdown(t *testing.T) {
	t.Parallel()
	dir, specPath, db, _ := ingestSetup(t)
	odd := filepath.Join(dir, "a<b>|c.jsonl")
	writeFile(t, odd, ingestLines[2]+"\n[1]\n")
	inv := runCLI(t, cliEnv{}, "ingest", specPath, odd, "--db", db, "--skip-bad", "--format", "markdown")
	if inv.code != 0 {
		t.Fatalf("exit %d: %s", inv.code, inv.stderr)
	}
	if strings.Contains(inv.stdout, "<b>") || strings.Contains(inv.stdout, "a<b>|c") {
		t.Errorf("the file name is not escaped:\n%s", inv.stdout)
	}
	if !strings.Contains(inv.stdout, "| 2 | 1 | 0 | 1 | 0 | 1 |") || !strings.Contains(inv.stdout, ".jsonl:2:1: the line is a list, not a JSON object") ||
		!strings.Contains(inv.stdout, "\n- ") {
		t.Errorf("markdown:\n%s", inv.stdout)
	}
}

// Ctrl-C stops an ingest (exit 130): while checking, nothing is stored;
// while storing, the batches stored stay and the same command stores the
// rest.
func TestIngestInterrupted(t *testing.T) {
	t.Parallel()
	dir, specPath, db, _ := ingestSetup(t)
	big := filepath.Join(dir, "big.jsonl")
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, `{"n":%d,"request":{"model":"gpt-4o","messages":"question %d"},"response":{"text":"answer"}}`+"\n", i, i)
	}
	writeFile(t, big, b.String())
	for _, skip := range []bool{false, true} {
		args := []string{"ingest", specPath, big, "--db", db}
		if skip {
			args = append(args, "--skip-bad") // no check pass: straight to storing
		}
		stop := make(chan os.Signal, 1)
		stop <- os.Interrupt
		inv := runCLI(t, cliEnv{interrupts: stop}, args...)
		if inv.code != ExitInterrupted || !strings.Contains(inv.stderr, "interrupted") {
			t.Errorf("--skip-bad %v: exit %d, stderr %q", skip, inv.code, inv.stderr)
		}
		if !skip {
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("interrupted while checking, the store was created (%v)", err)
			}
		} else if _, err := os.Stat(db); err == nil {
			// Interrupted before its first batch, it may not have made the
			// store at all; when it did, it stopped short of the end.
			if n := countStored(t, db); n >= 20000 {
				t.Errorf("interrupted, yet all %d traces stored", n)
			}
		}
	}
	ingestJSON(t, specPath, big, "--db", db)
	if n := countStored(t, db); n != 20000 {
		t.Errorf("after the interrupted ingests, the same command left %d traces, want 20000", n)
	}
}

func TestIngestRefusals(t *testing.T) {
	t.Parallel()
	dir, specPath, db, logPath := ingestSetup(t)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file", []string{"ingest", specPath}, ExitUsage, "ingest takes the spec and at least one JSONL file"},
		{"missing file", []string{"ingest", specPath, filepath.Join(dir, "nope.jsonl")}, ExitErr, "nope.jsonl: no such file"},
		{"bad format", []string{"ingest", specPath, logPath, "--format", "xml"}, ExitUsage, `--format "xml": formats are`},
	} {
		inv := runCLI(t, cliEnv{}, append(c.args, "--db", db)...)
		if inv.code != c.code || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", c.name, inv.code, inv.stderr, c.code, c.want)
		}
	}
	// A spec without a traces: section cannot map a line.
	plain := filepath.Join(dir, "plain.yaml")
	writeFile(t, plain, ingestSpec[:strings.Index(ingestSpec, "traces:")])
	inv := runCLI(t, cliEnv{}, "ingest", plain, logPath, "--db", db)
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, plain+":1:1: the spec has no traces: section, so assay ingest cannot map a log line") {
		t.Errorf("no traces section: exit %d\n%s", inv.code, inv.stderr)
	}
}
