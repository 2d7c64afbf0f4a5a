package dataset_test

// Benchmarks of the dataset health check (validate --deep): exact and
// near-duplicate search over realistic word problems. Figures are recorded
// in bench/RESULTS.md; run them with
//
//	go test -run='^$' -bench=Health -benchtime=3x ./internal/dataset/

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/spec"
)

// benchQuestions returns n questions shaped like GSM8K's (46 words on
// average, sd 18, 15 to 164 words): words drawn from a Zipf law over a
// 30,000-word vocabulary, one word in seven a number. About 1% of the
// questions copy an earlier one with 1 to 8 words replaced (near
// duplicates, token-set Jaccard about 0.7 to 0.96 at 46 words), and 0.5% copy one with
// its case and punctuation changed (exact duplicates once normalised).
func benchQuestions(n int) []string {
	rng := rand.New(rand.NewPCG(7, 11))
	const vocab = 30_000
	syll := []string{"ba", "ko", "ri", "mu", "te", "sa", "lo", "ven", "dor", "pi", "ka", "nel", "tu", "gra", "shi", "mo"}
	words := make([]string, vocab)
	for i := range words {
		var b strings.Builder
		for x := i + 1; x > 0; x /= len(syll) {
			b.WriteString(syll[x%len(syll)])
		}
		words[i] = b.String()
	}
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 5)), 1.1, 1, vocab-1)
	word := func() string {
		if rng.IntN(7) == 0 {
			return strconv.Itoa(rng.IntN(1000))
		}
		return words[zipf.Uint64()]
	}
	out := make([]string, 0, n)
	for i := range n {
		switch r := rng.Float64(); {
		case i > 100 && r < 0.01:
			toks := strings.Fields(out[rng.IntN(i)])
			for range 1 + rng.IntN(8) {
				toks[rng.IntN(len(toks))] = word()
			}
			out = append(out, strings.Join(toks, " "))
			continue
		case i > 100 && r < 0.015:
			q := out[rng.IntN(i)]
			out = append(out, strings.ToUpper(q[:1])+q[1:]+"!!")
			continue
		}
		length := int(math.Round(46 + 18*rng.NormFloat64()))
		length = min(max(length, 15), 164)
		toks := make([]string, length)
		for j := range toks {
			toks[j] = word()
		}
		out = append(out, strings.Join(toks, " ")+"?")
	}
	return out
}

// healthBenchSpec writes n cases and a spec over them; the prompt uses the
// question, so that is the text compared.
func healthBenchSpec(b *testing.B, n int) *spec.Spec {
	b.Helper()
	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	enc := json.NewEncoder(f)
	buckets := []string{"common", "edge", "hostile", "should-refuse"}
	for i, q := range benchQuestions(n) {
		rec := map[string]any{"id": fmt.Sprintf("q%d", i+1), "question": q, "answer": strconv.Itoa(i % 500),
			"bucket": buckets[i%4], "tier": strconv.Itoa(i % 9)}
		if err := enc.Encode(rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	src := `dataset: {path: cases.jsonl, id: id, expected: answer, tags: {bucket: bucket, tier: tier}}
prompt: {user: "Q: {{.question}}"}
targets: [{name: a, provider: exec, command: [x]}]
`
	sp, err := spec.Parse(filepath.Join(dir, "assay.yaml"), []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	return sp
}

// BenchmarkHealth runs the whole health check (reading the file included)
// at 10,000 and 50,000 cases, at the default threshold 0.9 and at 0.8.
// compared/case is how many candidate pairs the prefix filter let through
// to a full comparison, per case.
func BenchmarkHealth(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		sp := healthBenchSpec(b, n)
		for _, t := range []float64{0.9, 0.8} {
			b.Run(fmt.Sprintf("cases=%d/threshold=%.1f", n, t), func(b *testing.B) {
				b.ReportAllocs()
				var h *dataset.Health
				for b.Loop() {
					var err error
					h, err = dataset.CheckHealth(sp, dataset.HealthOptions{TextFields: []string{"question"}, DupThreshold: t})
					if err != nil {
						b.Fatal(err)
					}
					if h.Cases != n || h.Exact.Groups == 0 || h.Near.Pairs == 0 {
						b.Fatalf("%d cases, %d exact groups, %d near pairs: the planted duplicates were not found", h.Cases, h.Exact.Groups, h.Near.Pairs)
					}
				}
				b.ReportMetric(float64(h.Near.Compared)/float64(n), "compared/case")
				b.ReportMetric(float64(h.Near.Pairs), "near-pairs")
			})
		}
	}
}

// BenchmarkScan reads a whole dataset as `assay run` and `validate` do
// (dataset.Scan: every case built, the file and content hashed) at 50,000
// GSM8K-shaped cases, JSONL and CSV. MB/s is over the file's bytes.
//
//	go test -run='^$' -bench=Scan -benchtime=5x ./internal/dataset/
func BenchmarkScan(b *testing.B) {
	const n = 50_000
	for _, format := range []string{"jsonl", "csv"} {
		b.Run("format="+format, func(b *testing.B) {
			sp := healthBenchSpec(b, n)
			if format == "csv" {
				sp = csvBenchSpec(b, sp)
			}
			st, err := os.Stat(sp.Resolve(sp.Dataset.Path))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				info, err := dataset.Scan(sp)
				if err != nil {
					b.Fatal(err)
				}
				if info.Cases != n {
					b.Fatalf("%d cases, want %d", info.Cases, n)
				}
			}
		})
	}
}

// BenchmarkEach is the streaming read a run makes once per target
// (dataset.Each): beside BenchmarkScan it shows what hashing costs, as
// Each hashes nothing.
func BenchmarkEach(b *testing.B) {
	const n = 50_000
	for _, format := range []string{"jsonl", "csv"} {
		b.Run("format="+format, func(b *testing.B) {
			sp := healthBenchSpec(b, n)
			if format == "csv" {
				sp = csvBenchSpec(b, sp)
			}
			st, err := os.Stat(sp.Resolve(sp.Dataset.Path))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				got := 0
				if err := dataset.Each(sp, func(*dataset.Case) error { got++; return nil }); err != nil {
					b.Fatal(err)
				}
				if got != n {
					b.Fatalf("%d cases, want %d", got, n)
				}
			}
		})
	}
}

// csvBenchSpec rewrites the JSONL cases of sp as CSV beside them and
// returns a spec over the CSV file.
func csvBenchSpec(b *testing.B, sp *spec.Spec) *spec.Spec {
	b.Helper()
	dir := filepath.Dir(sp.Resolve(sp.Dataset.Path))
	in, err := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("id,question,answer,bucket,tier\n")
	for _, line := range strings.Split(strings.TrimSpace(string(in)), "\n") {
		var rec map[string]string
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&sb, "%s,%q,%s,%s,%s\n", rec["id"], rec["question"], rec["answer"], rec["bucket"], rec["tier"])
	}
	if err := os.WriteFile(filepath.Join(dir, "cases.csv"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	src := `dataset: {path: cases.csv, format: csv, id: id, expected: answer, tags: {bucket: bucket, tier: tier}}
prompt: {user: "Q: {{.question}}"}
targets: [{name: a, provider: exec, command: [x]}]
`
	out, err := spec.Parse(filepath.Join(dir, "assay.yaml"), []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	return out
}
