package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// blindSpec writes a spec whose cases carry IDs, expected values and tags
// that are easy to find in bytes (CASE-, EXPECTED-, TAG-), a prompt that
// uses only the question, and a replay target answering every case.
func blindSpec(t *testing.T, dir string, n int) string {
	t.Helper()
	writeCodeWords(t, dir, n, true, map[string]func(int) bool{"out": func(i int) bool { return i%4 == 0 }})
	spec := `name: blind-test
experiment: vendors
dataset: {path: cases.jsonl, id: id, expected: answer, tags: {bucket: bucket}}
prompt:
  system: "Answer with the code word."
  user: "Question: {{.question}}"
targets:
  - name: model-a
    provider: replay
    replay: {path: recorded.jsonl, join: question, output: out}
scorers:
  - {name: correct, type: equals, primary: true}
`
	p := filepath.Join(dir, "assay.yaml")
	writeFile(t, p, spec)
	return p
}

// writeCodeWords writes cases.jsonl, n cases (CASE-000 …) asking for code
// word number i with EXPECTED-i the answer (and tag bucket TAG-i%3 when
// tagged), and recorded.jsonl, a replay file joined by question whose
// column k answers EXPECTED-i, or "no idea" when wrong[k](i).
func writeCodeWords(t *testing.T, dir string, n int, tagged bool, wrong map[string]func(int) bool) {
	t.Helper()
	var data, rec strings.Builder
	for i := range n {
		q := fmt.Sprintf("What is the code word number %d?", i)
		c := map[string]string{"id": fmt.Sprintf("CASE-%03d", i), "question": q, "answer": fmt.Sprintf("EXPECTED-%03d", i)}
		if tagged {
			c["bucket"] = fmt.Sprintf("TAG-%d", i%3)
		}
		r := map[string]string{"question": q}
		for k, w := range wrong {
			r[k] = fmt.Sprintf("EXPECTED-%03d", i)
			if w(i) {
				r[k] = "no idea"
			}
		}
		for _, l := range []struct {
			b *strings.Builder
			m map[string]string
		}{{&data, c}, {&rec, r}} {
			j, _ := json.Marshal(l.m) // a map of strings always marshals
			l.b.Write(append(j, '\n'))
		}
	}
	writeFile(t, filepath.Join(dir, "cases.jsonl"), data.String())
	writeFile(t, filepath.Join(dir, "recorded.jsonl"), rec.String())
}

// sampleLines reads a blinded sample.
func sampleLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

// simulateVendor answers every line of a sample as a vendor's model would:
// from the prompt alone. Its answer repeats the question it was asked, so
// where each answer lands can be checked by content; it knows the code
// word of the even questions.
func simulateVendor(t *testing.T, sample string) []string {
	t.Helper()
	var out []string
	for _, m := range sampleLines(t, sample) {
		msgs := m["messages"].([]any)
		user := msgs[len(msgs)-1].(map[string]any)["content"].(string)
		var n int
		if _, err := fmt.Sscanf(user, "Question: What is the code word number %d?", &n); err != nil {
			t.Fatalf("the sample's prompt %q is not the spec's", user)
		}
		answer := "I do not know (" + user + ")"
		if n%2 == 0 {
			answer = fmt.Sprintf("EXPECTED-%03d", n)
		}
		b, _ := json.Marshal(map[string]string{"id": m["id"].(string), "output": answer})
		out = append(out, string(b))
	}
	return out
}

// The must-show: blind export → simulated vendor answers → import →
// report. The sample holds no ID, expected value or tag; each answer lands
// on its own case; the vendor's run is scored like any candidate and sits
// beside the spec's own run of the same dataset version.
func TestBlindExportImportReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := blindSpec(t, dir, 24)
	db := filepath.Join(dir, "assay.db")
	sample := filepath.Join(dir, "out", "sample.jsonl")
	os.MkdirAll(filepath.Dir(sample), 0o755)

	inv := runCLI(t, cliEnv{}, "export", "--blind", spec, "-o", sample, "--seed", "11", "--format", "json")
	if inv.code != 0 {
		t.Fatalf("export --blind: exit %d\n%s", inv.code, inv.stderr)
	}
	var ex struct {
		Key   string `json:"key"`
		Cases int    `json:"cases"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &ex); err != nil || ex.Cases != 24 || ex.Key != sample+".key" {
		t.Fatalf("export summary %q: %v", inv.stdout, err)
	}
	raw := readFileT(t, sample)
	for _, leak := range []string{"CASE-", "EXPECTED-", "TAG-", "bucket", "answer", `"line"`, "case"} {
		if strings.Contains(raw, leak) {
			t.Errorf("the sample holds %q:\n%s", leak, raw)
		}
	}
	lines := sampleLines(t, sample)
	var firstQ []string
	for _, m := range lines[:5] {
		msgs := m["messages"].([]any)
		firstQ = append(firstQ, msgs[1].(map[string]any)["content"].(string))
	}
	if slices.IsSorted(firstQ) {
		t.Errorf("the sample's first questions are in dataset order: %q", firstQ)
	}
	for _, m := range lines {
		if len(m) != 2 || len(m["id"].(string)) != 16 {
			t.Fatalf("a sample line has more than id and messages, or a guessable id: %v", m)
		}
	}

	// The spec's own candidate, for the report to set the vendor beside.
	if inv := runCLI(t, cliEnv{}, "run", spec, "--db", db); inv.code != 0 {
		t.Fatalf("run: %s", inv.stderr)
	}
	answers := filepath.Join(dir, "answers.jsonl")
	writeFile(t, answers, strings.Join(simulateVendor(t, sample), "\n")+"\n")
	inv = runCLI(t, cliEnv{}, "import", answers, "--key", ex.Key, "--as", "vendor-x", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("import: exit %d\n%s", inv.code, inv.stderr)
	}
	var im struct {
		RunID  string `json:"run_id"`
		Cases  int    `json:"cases"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &im); err != nil || im.Cases != 24 || im.Status != "complete" {
		t.Fatalf("import summary %q: %v", inv.stdout, err)
	}

	// Each answer is on its own case: the vendor's words name the question
	// of the case the row is.
	rows := filepath.Join(dir, "rows.jsonl")
	if inv := runCLI(t, cliEnv{}, "export", im.RunID, "-o", rows, "--db", db); inv.code != 0 {
		t.Fatalf("export rows: %s", inv.stderr)
	}
	seen := 0
	for _, r := range sampleLines(t, rows) {
		seen++
		var n int
		fmt.Sscanf(r["case_id"].(string), "CASE-%d", &n)
		q := r["inputs"].(map[string]any)["question"].(string)
		want := "I do not know (Question: " + q + ")"
		if n%2 == 0 {
			want = fmt.Sprintf("EXPECTED-%03d", n)
		}
		if r["raw"] != want || r["target"] != "vendor-x" {
			t.Errorf("case %s (%q): target %v answered %q, want %q", r["case_id"], q, r["target"], r["raw"], want)
		}
		if pass := r["pass"].(bool); pass != (n%2 == 0) {
			t.Errorf("case %s scored pass=%v", r["case_id"], pass)
		}
	}
	if seen != 24 {
		t.Errorf("%d rows, want 24", seen)
	}

	// The report scores the vendor like a candidate: 12 of 24 right.
	inv = runCLI(t, cliEnv{}, "report", im.RunID, "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("report: %s", inv.stderr)
	}
	var rep struct {
		Targets []struct {
			Name    string `json:"name"`
			Primary struct {
				Passed int `json:"passed"`
				N      int `json:"n"`
			} `json:"primary"`
		} `json:"targets"`
		Ledger struct {
			Chosen struct {
				VsReference struct {
					A     string  `json:"a"`
					B     string  `json:"b"`
					N     int     `json:"n"`
					Delta float64 `json:"delta"`
				} `json:"vs_reference"`
			} `json:"chosen"`
		} `json:"ledger"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	// The experiment's ledger pairs the vendor with the spec's own
	// candidate case by case: 12/24 against model-a's 18/24.
	vs := rep.Ledger.Chosen.VsReference
	if !strings.HasPrefix(vs.A, "vendor-x@") || !strings.HasPrefix(vs.B, "model-a@") || vs.N != 24 || vs.Delta != -0.25 {
		t.Errorf("the report's ledger does not pair the vendor with model-a: %+v", vs)
	}
	if len(rep.Targets) != 1 || rep.Targets[0].Name != "vendor-x" || rep.Targets[0].Primary.Passed != 12 || rep.Targets[0].Primary.N != 24 {
		t.Errorf("report targets %+v", rep.Targets)
	}
	// Same dataset version as the spec's own run, so they pair.
	var runs []struct {
		ID          string `json:"id"`
		DatasetHash string `json:"dataset_hash"`
	}
	inv = runCLI(t, cliEnv{}, "runs", "--db", db, "--json")
	if err := json.Unmarshal([]byte(inv.stdout), &runs); err != nil || len(runs) != 2 || runs[0].DatasetHash != runs[1].DatasetHash {
		t.Errorf("runs %s: %v", inv.stdout, err)
	}
	// Importing the same answers again under the same name pairs with
	// the first import case by case.
	inv = runCLI(t, cliEnv{}, "import", answers, "--key", ex.Key, "--as", "vendor-x", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("second import: %s", inv.stderr)
	}
	var im2 struct {
		RunID string `json:"run_id"`
	}
	json.Unmarshal([]byte(inv.stdout), &im2)
	inv = runCLI(t, cliEnv{}, "compare", im.RunID, im2.RunID, "--db", db, "--format", "json")
	var cmp struct {
		Comparisons []struct {
			A     string  `json:"a"`
			N     int     `json:"n"`
			Delta float64 `json:"delta"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &cmp); inv.code != 0 || err != nil || len(cmp.Comparisons) != 1 ||
		cmp.Comparisons[0].N != 24 || cmp.Comparisons[0].Delta != 0 || !strings.HasPrefix(cmp.Comparisons[0].A, "vendor-x@") {
		t.Errorf("compare of two imports: exit %d, %v\n%s\n%s", inv.code, err, inv.stdout, inv.stderr)
	}
}

// What import refuses, loudly and storing nothing: a shuffled, truncated
// or duplicated responses file, a tampered key, a changed dataset; and an
// export over an existing key.
func TestBlindImportRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := blindSpec(t, dir, 8)
	db := filepath.Join(dir, "assay.db")
	sample := filepath.Join(dir, "sample.jsonl")
	if inv := runCLI(t, cliEnv{}, "export", "--blind", spec, "-o", sample, "--cases", "6"); inv.code != 0 {
		t.Fatalf("export --blind: %s", inv.stderr)
	}
	key := sample + ".key"
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key: %v", err)
	}
	inv := runCLI(t, cliEnv{}, "export", "--blind", spec, "-o", sample)
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, "the key file already exists") || !strings.Contains(inv.stderr, "--force") {
		t.Errorf("export over an existing key: exit %d, %s", inv.code, inv.stderr)
	}
	good := simulateVendor(t, sample)
	if len(good) != 6 {
		t.Fatalf("%d sample lines, want --cases 6", len(good))
	}
	files := map[string][]string{
		"shuffled":   {good[1], good[0], good[2], good[3], good[4], good[5]},
		"truncated":  good[:4],
		"duplicated": {good[0], good[1], good[1], good[2], good[3], good[4], good[5]},
	}
	wants := map[string]string{
		"shuffled":   ":2:1: the answers are not in the sample's order",
		"truncated":  ":5:1: 2 of the sample's 6 ids have no answer (the file is truncated or lines were dropped)",
		"duplicated": ":3:1: id ",
	}
	for name, ls := range files {
		p := filepath.Join(dir, name+".jsonl")
		writeFile(t, p, strings.Join(ls, "\n")+"\n")
		inv := runCLI(t, cliEnv{}, "import", p, "--key", key, "--as", "vendor", "--db", db)
		if inv.code != ExitInvalid || !strings.Contains(inv.stderr, p+wants[name]) || !strings.Contains(inv.stderr, "nothing was run") {
			t.Errorf("%s: exit %d\n%s\nwant exit 4 with %q", name, inv.code, inv.stderr, p+wants[name])
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused import made the store")
	}

	// A key edited so that two cases swap answers.
	var k map[string]any
	if err := json.Unmarshal([]byte(readFileT(t, key)), &k); err != nil {
		t.Fatal(err)
	}
	items := k["items"].([]any)
	a, b := items[0].(map[string]any), items[1].(map[string]any)
	a["case"], b["case"] = b["case"], a["case"]
	edited, _ := json.Marshal(k)
	tampered := filepath.Join(dir, "tampered.key")
	os.WriteFile(tampered, edited, 0o600)
	answers := filepath.Join(dir, "answers.jsonl")
	writeFile(t, answers, strings.Join(good, "\n")+"\n")
	inv = runCLI(t, cliEnv{}, "import", answers, "--key", tampered, "--as", "vendor", "--db", db)
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, "seal does not match") {
		t.Errorf("tampered key: exit %d, %s", inv.code, inv.stderr)
	}
	// A dataset changed since the sample was made.
	data := filepath.Join(dir, "cases.jsonl")
	writeFile(t, data, readFileT(t, data)+`{"id":"CASE-new","question":"Another?","answer":"x","bucket":"TAG-0"}`+"\n")
	inv = runCLI(t, cliEnv{}, "import", answers, "--key", key, "--as", "vendor", "--db", db)
	if inv.code != ExitInvalid || !strings.Contains(inv.stderr, "the dataset changed since the sample was made") {
		t.Errorf("changed dataset: exit %d, %s", inv.code, inv.stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused import made the store")
	}
	// A name the spec's targets use.
	inv = runCLI(t, cliEnv{}, "import", answers, "--key", key, "--as", "model-a", "--db", db)
	if inv.code != ExitUsage && inv.code != ExitInvalid {
		t.Errorf("--as model-a: exit %d, %s", inv.code, inv.stderr)
	}
}

// The tools a spec offers go with every line of the sample, and a
// vendor's tool calls are stored as the answer's, scored by the spec's
// tool-call scorers like a candidate's.
func TestBlindToolCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cases.jsonl"), `{"id":"k1","city":"Oslo"}`+"\n"+`{"id":"k2","city":"Rome"}`+"\n")
	spec := filepath.Join(dir, "assay.yaml")
	writeFile(t, spec, `name: trips
dataset: {path: cases.jsonl, id: id}
prompt: {user: "Book {{.city}}"}
tools:
  - name: book
    description: Book a trip.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
tool_choice: required
targets:
  - {name: a, provider: replay, replay: {path: cases.jsonl, join: city, output: city}}
scorers:
  - {name: calls, type: tool_call, tool: book, primary: true}
`)
	sample := filepath.Join(dir, "s.jsonl")
	if inv := runCLI(t, cliEnv{}, "export", "--blind", spec, "-o", sample, "--seed", "1"); inv.code != 0 {
		t.Fatalf("export --blind: %s", inv.stderr)
	}
	var answers []string
	for _, m := range sampleLines(t, sample) {
		tools, _ := m["tools"].([]any)
		if len(tools) != 1 || tools[0].(map[string]any)["name"] != "book" || m["tool_choice"] != "required" {
			t.Fatalf("a sample line without the spec's tools: %v", m)
		}
		user := m["messages"].([]any)[0].(map[string]any)["content"].(string)
		city := strings.TrimPrefix(user, "Book ")
		answers = append(answers, fmt.Sprintf(`{"id":%q,"output":"","tool_calls":[{"name":"book","arguments":{"city":%q}}]}`, m["id"], city))
	}
	resp := filepath.Join(dir, "answers.jsonl")
	writeFile(t, resp, strings.Join(answers, "\n")+"\n")
	db := filepath.Join(dir, "assay.db")
	inv := runCLI(t, cliEnv{}, "import", resp, "--key", sample+".key", "--as", "vendor", "--db", db, "--format", "json")
	if inv.code != 0 {
		t.Fatalf("import: %s", inv.stderr)
	}
	var im struct {
		RunID string `json:"run_id"`
	}
	json.Unmarshal([]byte(inv.stdout), &im)
	rows := filepath.Join(dir, "rows.jsonl")
	if inv := runCLI(t, cliEnv{}, "export", im.RunID, "-o", rows, "--db", db); inv.code != 0 {
		t.Fatalf("export rows: %s", inv.stderr)
	}
	for _, r := range sampleLines(t, rows) {
		city := r["inputs"].(map[string]any)["city"].(string)
		calls, _ := r["tool_calls"].([]any)
		if len(calls) != 1 || calls[0].(map[string]any)["arguments"] != fmt.Sprintf(`{"city":%q}`, city) || r["pass"] != true {
			t.Errorf("case %s: tool calls %v, pass %v", r["case_id"], r["tool_calls"], r["pass"])
		}
	}
}

// export's --blind flags without --blind are a usage error, not ignored.
func TestBlindFlagsNeedBlind(t *testing.T) {
	t.Parallel()
	inv := runCLI(t, cliEnv{}, "export", "latest", "-o", filepath.Join(t.TempDir(), "x.jsonl"), "--cases", "5")
	if inv.code != ExitUsage || !strings.Contains(inv.stderr, "--cases goes with --blind") {
		t.Errorf("exit %d, %s", inv.code, inv.stderr)
	}
}
