package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/longtest"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// Rows stream: exporting 20,000 results of 4 KB each (80 MB of output)
// keeps the heap far below the run's size in every format.
func TestExportMemoryIsFlat(t *testing.T) {
	longtest.Skip(t)
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 20000
	run := &record.Run{ID: "big", Targets: []string{"t"}, Cases: n, Epochs: 1, Status: record.StatusComplete, Started: time.Now()}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	raw := strings.Repeat("x", 4096)
	for from := 0; from < n; from += 2000 {
		var cs []record.Case
		var rs []record.Result
		var ss []record.Score
		for i := from; i < from+2000; i++ {
			id := fmt.Sprintf("c%06d", i)
			cs = append(cs, record.Case{RunID: "big", ID: id, Line: i + 1, Expected: []byte(`"x"`)})
			rs = append(rs, record.Result{RunID: "big", CaseID: id, Target: "t", Epoch: 1, Raw: raw + id, Attempts: 1})
			ss = append(ss, record.Score{RunID: "big", Scoring: 1, CaseID: id, Target: "t", Epoch: 1, Scorer: "ok", Primary: true, Pass: i%2 == 0, Shape: "pass"})
		}
		if err := st.PutCases(ctx, cs); err != nil {
			t.Fatal(err)
		}
		if err := st.PutResults(ctx, rs, ss); err != nil {
			t.Fatal(err)
		}
	}
	for _, format := range Formats {
		runtime.GC()
		var peak atomic.Uint64
		done := make(chan struct{})
		go func() {
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		out := filepath.Join(dir, "out."+format)
		cols := Columns{Scorers: []string{"ok"}}
		rows := 0
		err := WriteFile(out, format, cols, func(w Writer) error {
			return Rows(ctx, Source{Store: st, Run: run, Scoring: 1, Columns: cols}, func(r *Row) error {
				rows++
				return w.Write(r)
			})
		})
		close(done)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(out)
		t.Logf("%s: %d rows, %d MB file, peak heap %d MB", format, rows, fi.Size()>>20, peak.Load()>>20)
		if rows != n {
			t.Errorf("%s: %d rows, want %d", format, rows, n)
		}
		if peak.Load() > 48<<20 {
			t.Errorf("%s: heap peaked at %d MB exporting %d MB of outputs; rows must stream", format, peak.Load()>>20, n*4096>>20)
		}
	}
}
