package selftest_test

// Benchmarks of selftest.Run. Figures are recorded in bench/RESULTS.md; run
// them with
//
//	go test -run='^$' -bench=. -benchtime=3x ./internal/selftest/
//
// The GSM8K benchmark needs ../shared/data (skipped elsewhere, failed under
// CI=true when missing).

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/selftest"
	"github.com/assay-eval/assay/internal/shareddata"
	"github.com/assay-eval/assay/internal/task"
)

var benchWords = strings.Fields(`the a of to and in is was for on that with as by at from has had have
she he they her his their each every more than less how many much total left after before
apples pencils dollars hours minutes miles books students cookies tickets boxes eggs cars
buys sells gives spends earns reads walks bakes plants saves shares splits doubles costs`)

// writeSyntheticSpec writes a GSM8K-like spec over n synthetic cases: a
// ~250-character word problem, a worked answer ending "#### N" (extracted
// as the expected value), an "A: N" output extract, and three scorers:
// equality (primary), a number within 1%, and a length check.
func writeSyntheticSpec(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	f, err := os.Create(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for i := 1; i <= n; i++ {
		var q strings.Builder
		for q.Len() < 250 {
			w := benchWords[rng.IntN(len(benchWords))]
			if rng.IntN(6) == 0 {
				w = fmt.Sprint(rng.IntN(500))
			}
			q.WriteString(w + " ")
		}
		q.WriteString("How many are left?")
		ans := rng.IntN(2000)
		rec := map[string]string{"id": fmt.Sprintf("q%d", i), "question": q.String(),
			"answer": fmt.Sprintf("She has %d <<%d-%d=%d>> left.\n#### %d", ans, ans+3, 3, ans, ans)}
		if err := enc.Encode(rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	spec := `name: synthetic-math
dataset:
  path: cases.jsonl
  id: id
  expected: answer
  expected_extract: '####\s*(.+)$'
prompt:
  system: "Solve the problem. End with a line A: N"
  user: "Q: {{.question}}"
targets:
  - {name: m, provider: openai, model: m, base_url: "http://127.0.0.1:9/v1"}
output:
  extract: 'A:\s*(.+)$'
scorers:
  - {name: correct, type: equals, normalize: [trim, no_commas], primary: true}
  - {name: close, type: number, tolerance: 0.01}
  - {name: short, type: max_length, max: 2000}
`
	path := filepath.Join(dir, "assay.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// writeGSM8KSpec writes the recorded-GSM8K spec of the selftest tests (an
// `A: N` extract, normalised equality) over the shared data's 1,319 cases.
func writeGSM8KSpec(b *testing.B) string {
	b.Helper()
	data := shareddata.Path(b, "gsm8k/example_model_solutions.jsonl")
	path := filepath.Join(b.TempDir(), "gsm8k.yaml")
	spec := fmt.Sprintf(`name: gsm8k-recorded
dataset:
  path: %q
  id: line
  expected: ground_truth
  expected_extract: 'A:\s*(.+)$'
prompt:
  user: "Q: {{.question}}"
targets:
  - {name: m, provider: replay, replay: {path: %q, join: question, output: 175b_verification.solution}}
output:
  extract: 'A:\s*(.+)$'
scorers:
  - {name: correct, type: equals, normalize: [trim, no_commas], primary: true}
`, data, data)
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

func benchRun(b *testing.B, path string, cases int) {
	tk, err := task.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rep, err := selftest.Run(context.Background(), tk, selftest.Options{Examples: 3, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Cases != cases || rep.Verdict != selftest.VerdictSound {
			b.Fatalf("%d cases, verdict %s; findings %+v", rep.Cases, rep.Verdict, rep.Findings)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(cases), "µs/case")
}

// BenchmarkRun attacks a synthetic 10,000-case spec and the recorded GSM8K
// spec (1,319 cases) with every null model, raw and parsed.
func BenchmarkRun(b *testing.B) {
	b.Run("synthetic/cases=10000", func(b *testing.B) { benchRun(b, writeSyntheticSpec(b, 10_000), 10_000) })
	b.Run("gsm8k/cases=1319", func(b *testing.B) { benchRun(b, writeGSM8KSpec(b), 1319) })
}
