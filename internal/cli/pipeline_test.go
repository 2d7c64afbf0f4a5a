package cli

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
)

// A re-run of the same spec is served from the response cache: it pays for
// nothing, and its results are the same. --no-cache calls again.
func TestRerunDoesNotPayTwice(t *testing.T) {
	t.Parallel()
	srv, url := startMock(t, mock.Options{})
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	path := echoTask(t, dir, 30, fmt.Sprintf(`  - {name: oa, provider: openai, model: m, base_url: %s/v1, price: {input_per_mtok: 1, output_per_mtok: 1}}`, url))
	e := cliEnv{}
	first := runJSON(t, e, "run", path, "--db", db)
	if n := srv.Stats().Requests; n != 30 || first.SpendUSD <= 0 {
		t.Fatalf("first run: %d requests, spend %v", n, first.SpendUSD)
	}
	second := runJSON(t, e, "run", path, "--db", db)
	if n := srv.Stats().Requests; n != 30 {
		t.Errorf("the re-run made %d new requests; the cache should have answered all", n-30)
	}
	if second.SpendUSD != 0 {
		t.Errorf("the re-run spent $%v on cached replies", second.SpendUSD)
	}
	a, b := readRun(t, db, first.RunID), readRun(t, db, second.RunID)
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%v: first %+v, cached %+v", k, v, b[k])
		}
	}
	// A second epoch samples the model again instead of repeating epoch 1.
	runJSON(t, e, "run", path, "--db", db, "--epochs", "2")
	if n := srv.Stats().Requests; n != 60 {
		t.Errorf("%d requests after a 2-epoch run, want 60 (epoch 2 is never served from the cache)", n)
	}
	runJSON(t, e, "run", path, "--db", db, "--no-cache", "--limit", "5")
	if n := srv.Stats().Requests; n != 65 {
		t.Errorf("%d requests after --no-cache --limit 5, want 65", n)
	}
}

// A whole pipeline, the user's own program, is evaluated through exec: it
// gets the case on stdin and its reply is parsed and scored like a model's.
func TestExecPipelineEndToEnd(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 for the example pipeline")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pipeline.py"), `import json, sys
req = json.load(sys.stdin)
q = req["vars"]["say"]
if q.endswith("-13"):
    print("boom", file=sys.stderr); sys.exit(3)
print(json.dumps({"output": "A: " + q.upper(), "usage": {"input": 7, "output": 2}}))
`)
	targets := fmt.Sprintf(`  - {name: rag, provider: exec, command: [%q, pipeline.py], limits: {concurrency: 4}}`, py)
	path := echoTask(t, dir, 20, targets)
	// Expect upper-case answers after "A: ".
	b := strings.Replace(readFileT(t, path), "scorers:", "output: {extract: 'A:\\s*(.+)$'}\nscorers:", 1)
	b = strings.Replace(b, "normalize: [trim]", "normalize: [trim, lower]", 1)
	writeFile(t, path, b)
	db := filepath.Join(dir, "assay.db")
	s := runJSON(t, cliEnv{}, "run", path, "--db", db)
	if s.Status != "complete" || s.Stored != 20 || s.Errors != 1 {
		t.Fatalf("summary %+v: want 20 results, 1 error (case 13 exits 3)", s)
	}
	got := readRun(t, db, s.RunID)
	passes := 0
	for k, v := range got {
		if k.CaseID == "c13" {
			if v.kind != "exec_error" || v.pass {
				t.Errorf("c13: %+v, want a loud exec_error", v)
			}
			continue
		}
		if v.pass {
			passes++
		}
	}
	// 20 cases, every third expects "other" (6), and c13 failed: 13 pass.
	if passes != 13 {
		t.Errorf("%d passes, want 13", passes)
	}
}
