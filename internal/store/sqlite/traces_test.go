package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// TestPutTracesRollsBackMidway makes the database refuse the third trace
// of a batch (a trigger stands in for a full disk or a constraint): the
// two before it, already inserted in the transaction, are not kept.
func TestPutTracesRollsBackMidway(t *testing.T) {
	d := openTemp(t)
	ctx := context.Background()
	if _, err := d.w.ExecContext(ctx, `CREATE TRIGGER poison BEFORE INSERT ON traces WHEN new.id = 'poison'
		BEGIN SELECT RAISE(ABORT, 'poisoned trace'); END`); err != nil {
		t.Fatal(err)
	}
	ts := benchTraces(0, 5)
	ts[2].ID = "poison"
	n, err := d.PutTraces(ctx, ts)
	if err == nil || !strings.Contains(err.Error(), `trace "poison"`) || !strings.Contains(err.Error(), "poisoned trace") {
		t.Errorf("PutTraces with a refused trace: %d, %v; want an error naming the trace and the reason", n, err)
	}
	if c, err := d.CountTraces(ctx, store.TraceFilter{}); err != nil || c != 0 {
		t.Errorf("after a failed PutTraces, %d traces are stored (%v); want none", c, err)
	}
	// The store is usable afterwards, and the same batch without the
	// poisoned trace stores whole.
	ts = append(ts[:2], ts[3:]...)
	if n, err := d.PutTraces(ctx, ts); err != nil || n != 4 {
		t.Errorf("PutTraces after the failure = %d, %v; want 4", n, err)
	}
}

// TestPutTracesRefusesNaN: SQLite cannot store a NaN; the error names the
// field and the trace, and nothing is stored.
func TestPutTracesRefusesNaN(t *testing.T) {
	d := openTemp(t)
	ts := benchTraces(0, 3)
	ts[1].CostUSD = nan()
	_, err := d.PutTraces(context.Background(), ts)
	if err == nil || !strings.Contains(err.Error(), "cost_usd is NaN") || !strings.Contains(err.Error(), ts[1].ID) {
		t.Errorf("PutTraces with a NaN cost: %v; want an error naming the trace and cost_usd", err)
	}
	if c, _ := d.CountTraces(context.Background(), store.TraceFilter{}); c != 0 {
		t.Errorf("%d traces stored", c)
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}

// TestCorruptStoredMessages: a conversation column that is not JSON (an
// edited file, a bug) is an error naming the trace, not a trace with no
// messages.
func TestCorruptStoredMessages(t *testing.T) {
	d := openTemp(t)
	ctx := context.Background()
	ts := benchTraces(0, 2)
	if _, err := d.PutTraces(ctx, ts); err != nil {
		t.Fatal(err)
	}
	if _, err := d.w.ExecContext(ctx, `UPDATE traces SET output = '[{"role": "assistant", "content": ' WHERE id = ?`, ts[1].ID); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("trace %q: output: the stored messages are not a JSON array of messages", ts[1].ID)
	if _, err := d.Trace(ctx, ts[1].ID); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Trace of a corrupt row: %v; want an error containing %q", err, want)
	}
	n := 0
	err := d.Traces(ctx, store.TraceFilter{}, func(*record.Trace) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), want) || n != 1 {
		t.Errorf("Traces over a corrupt row: %v after %d traces; want an error containing %q after 1", err, n, want)
	}
}

// TestTraceQueriesUseIndexes: streaming traces walks traces_by_time in
// order, so memory stays flat however many traces there are; only an IDs
// filter sorts, and then only the traces it names.
func TestTraceQueriesUseIndexes(t *testing.T) {
	d := openTemp(t)
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		f        store.TraceFilter
		mayOrder bool
	}{
		{"all", store.TraceFilter{}, false},
		{"window", store.TraceFilter{Since: at, Until: at.Add(time.Hour)}, false},
		{"since", store.TraceFilter{Since: at}, false},
		{"model", store.TraceFilter{Model: "m"}, false},
		{"model in window", store.TraceFilter{Model: "m", Since: at, Until: at.Add(time.Hour)}, false},
		{"IDs", store.TraceFilter{IDs: []string{"a", "b"}}, true},
	} {
		where, args, err := traceWhere(tc.f)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := d.r.Query("EXPLAIN QUERY PLAN "+tracesQuery(where), args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			if strings.Contains(step, "TEMP B-TREE") && !tc.mayOrder ||
				strings.HasPrefix(step, "SCAN traces") && !strings.Contains(step, "INDEX") {
				t.Errorf("%s: the plan sorts or scans the whole table (%q); plan: %q", tc.name, step, plan)
			}
			if tc.mayOrder && strings.HasPrefix(step, "SCAN traces") {
				t.Errorf("%s: the plan scans the table instead of looking the IDs up; plan: %q", tc.name, plan)
			}
		}
	}
}
